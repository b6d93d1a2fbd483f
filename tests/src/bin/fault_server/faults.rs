//! The faults of the stdio server: raw bytes written around or instead of the answers the
//! server session produced, and the process-level misdeeds (closing stdout, a grandchild,
//! flooding stderr, ignoring SIGTERM, crashing).
//!
//! Everything here is hand-written on purpose: it is what a valid server never does. The
//! session's answers reach stdout only through [`Wire::write_answer`], which applies the
//! answer's [`Shape`]; the caller handles `silent` (drop) and `slow` (delay) before it.

use std::fs::File;
use std::io::{self, Write};
use std::process::{Command, Stdio};
use std::thread;
use std::time::Duration;

use mcp_proto::jsonrpc::{self, DecodedRef, ErrorObject, Id, MessageRef};

use crate::log::Log;
use crate::options::Mode;

/// How one answer leaves the server: the fault applied to it, if any.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Shape {
    /// Dropped: never written.
    pub(crate) silent: bool,
    /// Written this long after the session produced it (other answers are not held up).
    pub(crate) delay: Duration,
    /// Written twice.
    pub(crate) twice: bool,
    /// Garbage lines before and after it.
    pub(crate) garbage: bool,
    /// A result and an error for ids nobody sent, before it.
    pub(crate) unknown_ids: bool,
    /// Instead of it: an undecodable one, or an error with `"id": null`.
    pub(crate) broken: Option<Broken>,
}

/// How `bad_utf8`, `bad_json` and `null_id_error` break an answer.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Broken {
    Utf8,
    Json,
    NullIdError,
}

impl Shape {
    /// The shape every answer gets in the whole-process `mode` (after the handshake).
    pub(crate) fn of_mode(mode: Mode) -> Self {
        let mut s = Shape::default();
        match mode {
            Mode::Silent => s.silent = true,
            Mode::Slow(ms) => s.delay = Duration::from_millis(ms),
            Mode::Twice => s.twice = true,
            Mode::Garbage => s.garbage = true,
            Mode::UnknownIds => s.unknown_ids = true,
            Mode::BadUtf8 => s.broken = Some(Broken::Utf8),
            Mode::BadJson => s.broken = Some(Broken::Json),
            Mode::NullIdError => s.broken = Some(Broken::NullIdError),
            _ => {}
        }
        s
    }
}

/// The server's stdout, and the faults that write to it or to the process around it. Only
/// the main loop writes (a `ping_flood` or a huge line blocks it, as a busy server would be).
pub(crate) struct Wire {
    log: Log,
    /// Numbers the `unknown_ids` answers: `990000+n` and `"nobody-n"`.
    unknown_counter: u64,
}

impl Wire {
    pub(crate) fn new(log: Log) -> Self {
        Wire {
            log,
            unknown_counter: 0,
        }
    }

    /// Writes whole lines to stdout and flushes; a failed write is logged (a closed stdout
    /// is one of the faults, so it is not an error here).
    pub(crate) fn write_raw(&self, bytes: &[u8]) {
        let mut out = io::stdout().lock();
        if out.write_all(bytes).and_then(|()| out.flush()).is_err() {
            drop(out);
            self.log.event("stdout write failed");
        }
    }

    /// Writes the session's answer `line` (one line, newline included) as `shape` says:
    /// garbage around it, unknown ids before it, broken instead of it, twice.
    pub(crate) fn write_answer(&mut self, line: &[u8], shape: Shape) {
        for _ in 0..if shape.twice { 2 } else { 1 } {
            if shape.garbage {
                self.garbage();
            }
            if shape.unknown_ids {
                self.unknown_ids();
            }
            match shape.broken {
                Some(broken) => self.write_broken(line, broken),
                None => self.write_raw(line),
            }
            if shape.garbage {
                self.garbage();
            }
        }
    }

    /// `bad_utf8`, `bad_json`, `null_id_error`: the answer replaced by a broken one that
    /// names the same request (its id read back from the session's own line).
    fn write_broken(&self, line: &[u8], broken: Broken) {
        let id = match jsonrpc::decode(line.trim_ascii_end()) {
            Ok(DecodedRef::Single(MessageRef::Response { id, .. }))
            | Ok(DecodedRef::Single(MessageRef::Error { id: Some(id), .. })) => id,
            // Not an answer to a request: nothing to break, written as it is.
            _ => return self.write_raw(line),
        };
        match broken {
            Broken::Utf8 => self.answer_bad_utf8(&id),
            Broken::Json => self.answer_bad_json(&id),
            Broken::NullIdError => self.answer_null_id_error(),
        }
    }

    /// `garbage`: lines a client must survive (banner text, truncated JSON, invalid UTF-8,
    /// JSON that is not JSON-RPC, a batch of numbers, blank and CRLF-only lines).
    pub(crate) fn garbage(&self) {
        self.write_raw(
            b"Server listening on stdio\n\
              {\"jsonrpc\":\"2.0\",\"id\":\n\
              \xff\xfe not utf-8 \xc3\x28\n\
              {\"hello\":\"not json-rpc\"}\n\
              \n\
              [1,2,3]\n\
              \r\n",
        );
    }

    /// `unknown_ids`: a result for `990000+n` and an error for `"nobody-n"`.
    fn unknown_ids(&mut self) {
        self.unknown_counter += 1;
        let n = self.unknown_counter;
        let mut out = Vec::new();
        // Invariant: a literal JSON object is valid JSON.
        let result = jsonrpc::to_raw(&serde_json::json!({"unknown": true})).expect("valid JSON");
        jsonrpc::encode_response(&mut out, &Id::from(990_000 + n), &result);
        out.push(b'\n');
        let nobody = Id::from(format!("nobody-{n}").as_str());
        jsonrpc::encode_error(
            &mut out,
            Some(&nobody),
            &ErrorObject::new(-32000, "for nobody"),
        );
        out.push(b'\n');
        self.write_raw(&out);
    }

    /// `huge_line`: one line of `mib` MiB (a JSON-looking prefix and `a`s) without its end
    /// for 300 ms, then `"}` and the newline.
    pub(crate) fn huge_line(&self, mib: usize) {
        let mut out = io::stdout().lock();
        let chunk = vec![b'a'; 1 << 20];
        let mut ok = out
            .write_all(br#"{"jsonrpc":"2.0","method":"huge","params":""#)
            .is_ok();
        for _ in 0..mib {
            ok = ok && out.write_all(&chunk).is_ok();
        }
        ok = ok && out.flush().is_ok();
        thread::sleep(Duration::from_millis(300));
        ok = ok && out.write_all(b"\"}\n").and_then(|()| out.flush()).is_ok();
        drop(out);
        self.log
            .event(&format!("huge line of {mib} MiB written: {ok}"));
    }

    /// `close_stdout`: fd 1 becomes `/dev/null`, so the pipe's write end closes while the
    /// process keeps running.
    pub(crate) fn close_stdout(&self) {
        let null = match File::options().write(true).open("/dev/null") {
            Ok(f) => f,
            Err(e) => {
                self.log.event(&format!("close_stdout: /dev/null: {e}"));
                return;
            }
        };
        let _guard = io::stdout().lock();
        // SAFETY: dup2 on two valid descriptors; fd 1 is replaced atomically (so it is never
        // free for reuse), and the pipe's write end, held by nobody else, closes.
        let rc = unsafe { libc::dup2(std::os::fd::AsRawFd::as_raw_fd(&null), 1) };
        self.log.event(&format!("stdout closed: {}", rc == 1));
    }

    /// `grandchild`: spawns `sleep 300` holding our stdout and stderr, and leaves it.
    pub(crate) fn grandchild(&self) {
        match Command::new("sleep")
            .arg("300")
            .stdin(Stdio::null())
            .stdout(Stdio::inherit())
            .stderr(Stdio::inherit())
            .spawn()
        {
            Ok(child) => {
                eprintln!("# grandchild {}", child.id());
                self.log.event(&format!("grandchild {}", child.id()));
                // Not waited for on purpose: it must outlive us.
                std::mem::forget(child);
            }
            Err(e) => self.log.event(&format!("grandchild spawn failed: {e}")),
        }
    }

    /// `stderr_flood`: `mib` MiB of lines to stderr, blocking while nobody reads them.
    pub(crate) fn stderr_flood(&self, mib: usize) {
        let line = format!("fault_server: stderr flood {}\n", "x".repeat(90));
        let mut err = io::stderr().lock();
        let mut written = 0;
        while written < mib << 20 {
            if err.write_all(line.as_bytes()).is_err() {
                break;
            }
            written += line.len();
        }
        let _ = writeln!(err, "fault_server: stderr flood done ({written} bytes)");
        drop(err);
        self.log
            .event(&format!("stderr flood done: {written} bytes"));
    }

    /// `ignore_sigterm`: SIGTERM is ignored from now on.
    pub(crate) fn ignore_sigterm(&self) {
        // SAFETY: installing SIG_IGN runs no handler code, so there is no async-signal-safety
        // concern; libc::signal with a valid signal number has no other precondition.
        let prev = unsafe { libc::signal(libc::SIGTERM, libc::SIG_IGN) };
        self.log
            .event(&format!("SIGTERM ignored: {}", prev != libc::SIG_ERR));
    }

    /// `crash_mid_request`: a last stderr line naming the request, then exit 3 unanswered.
    pub(crate) fn crash(&self, id: &Id) -> ! {
        self.log.event(&format!("crashing on request {id}"));
        eprintln!(
            "fault_server: crash_mid_request: exiting with status 3 while handling request {id}"
        );
        std::process::exit(3);
    }

    /// `strict_handshake`: `method` came before `initialize`; exits 1 unanswered.
    pub(crate) fn strict_handshake(&self, method: &str) -> ! {
        self.log
            .event(&format!("strict_handshake: {method} before initialize"));
        eprintln!(
            "fault_server: strict_handshake: {method} before initialize, exiting with status 1"
        );
        std::process::exit(1);
    }

    pub(crate) fn log(&self) -> &Log {
        &self.log
    }
}
