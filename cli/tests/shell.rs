//! `mcp shell` against `mcp demo-server`, as the built binary: through a pseudo-terminal
//! (tmux: prompt, tab completion, Ctrl-C, history) and with commands piped to stdin.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const MCP: &str = env!("CARGO_BIN_EXE_mcp");

/// How long any one step may take before the test calls it a hang (never a measurement).
const GUARD: Duration = Duration::from_secs(30);

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mcp-cli-shell-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `mcp shell -- mcp demo-server` with `input` on stdin; returns (status, stdout, stderr).
fn piped(args: &[&str], input: &str) -> (Option<i32>, String, String) {
    let mut child = Command::new(MCP)
        .args(args)
        .args(["shell", "--", MCP, "demo-server"])
        .env("COLUMNS", "80")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run mcp shell");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn piped_commands_run_on_one_session_and_mistakes_do_not_end_it() {
    let input = "\
# a comment, then a blank line

tools --json
call add a=1 b=2
call echo text=\"hello world\"
frobnicate
call add a=1
read demo://readme
ping
";
    let (status, stdout, stderr) = piped(&[], input);
    // The last command succeeded: the shell's status is that of the last command.
    assert_eq!(status, Some(0), "{stderr}");
    assert!(stdout.contains("\"name\": \"slow\""), "{stdout}");
    assert!(stdout.contains("1 + 2 = 3"), "{stdout}");
    assert!(stdout.contains("hello world"), "{stdout}");
    assert!(stdout.contains("pong from mcp-demo"), "{stdout}");
    assert!(
        stderr.contains("unrecognized subcommand 'frobnicate'"),
        "{stderr}"
    );
    assert!(stderr.contains("Type `help` for the commands"), "{stderr}");
    // The tool's error for the missing argument, with its hint, then the shell goes on.
    assert!(stderr.contains("missing required argument `b`"), "{stderr}");
    assert!(stderr.contains("hint:"), "{stderr}");
    // One server process for the whole session: one handshake.
    let (_, _, trace) = piped(&["-v"], "ping\nping\n");
    assert_eq!(
        trace.matches("\"method\":\"initialize\"").count(),
        1,
        "{trace}"
    );
}

#[test]
fn piped_status_is_the_last_commands_and_help_goes_to_stdout() {
    let (status, stdout, stderr) = piped(&[], "ping\ncall fail message=boom\n");
    assert_eq!(status, Some(1), "{stdout}{stderr}");
    assert!(stderr.contains("boom"), "{stderr}");
    let (status, stdout, _) = piped(&[], "help\nhelp call\nexit\nping\n");
    assert_eq!(status, Some(0));
    assert!(
        stdout.contains("Commands (the subcommands of `mcp`"),
        "{stdout}"
    );
    assert!(stdout.contains("Usage: call [OPTIONS] <TOOL>"), "{stdout}");
    // `exit` ends the shell: the ping after it never runs.
    assert!(!stdout.contains("pong"), "{stdout}");
    let (status, _, stderr) = piped(&[], "call add 2 3\nping -- other-server\n");
    assert!(stderr.contains("expected key=value"), "{stderr}");
    assert!(
        stderr.contains("hint: `mcp tools` shows each tool's input schema"),
        "{stderr}"
    );
    assert_eq!(status, Some(2));
    assert!(stderr.contains("connected already"), "{stderr}");
}

#[test]
fn piped_help_shows_the_shells_own_forms() {
    let (status, stdout, stderr) = piped(&[], "help\nhelp tools\nhelp call\nhelp tasks\n");
    assert_eq!(status, Some(0), "{stderr}");
    assert!(
        stdout.contains("Call a tool: `call echo text=hi`"),
        "{stdout}"
    );
    assert!(stdout.contains("`tasks get ID`"), "{stdout}");
    // Nothing that only works as a one-shot command: `mcp …`, `-- server…`, `--all`.
    for one_shot in ["mcp call", "mcp tasks", "-- server", "--all", "--config"] {
        assert!(!stdout.contains(one_shot), "{one_shot:?} in:\n{stdout}");
    }
}

#[test]
fn piped_line_verbose_traces_that_line_only() {
    let (status, stdout, stderr) = piped(&[], "ping -v\nping\ncall echo text=z -vv\ntools\n");
    assert_eq!(status, Some(0), "{stderr}");
    assert_eq!(stdout.matches("pong from").count(), 2, "{stdout}");
    // The first ping's request and answer are traced, the second's are not.
    assert_eq!(sent_methods(&stderr), ["ping", "tools/call"], "{stderr}");
    let received = stderr.lines().filter(|l| l.starts_with("<- ")).count();
    assert_eq!(received, 2, "one answer per traced line:\n{stderr}");
    assert!(stderr.contains("\"text\":\"z\""), "{stderr}");
}

#[test]
fn piped_help_lists_only_what_runs_in_the_shell() {
    let (status, stdout, stderr) = piped(&[], "help\nbridge\n");
    assert_eq!(status, Some(2), "{stdout}{stderr}");
    let listed: Vec<&str> = stdout
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert!(listed.contains(&"call"), "{stdout}");
    for one_shot in ["bridge", "login", "demo-server", "completions"] {
        assert!(!listed.contains(&one_shot), "{one_shot} listed:\n{stdout}");
    }
    assert!(
        stderr.contains("`bridge` is not a shell command"),
        "{stderr}"
    );
}

/// The methods of the requests `mcp -v` shows it sending, in order.
fn sent_methods(trace: &str) -> Vec<String> {
    trace
        .lines()
        .filter_map(|l| l.strip_prefix("-> "))
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|m| m.get("id").is_some())
        .filter_map(|m| m["method"].as_str().map(str::to_owned))
        .collect()
}

#[test]
fn piped_calls_use_the_tool_listing_the_shell_has() {
    let input = "call echo text=a\ncall echo text=b\ncall add a=1 b=2\ncall nosuch\n";
    let (_, stdout, trace) = piped(&["-v"], input);
    assert!(stdout.contains("1 + 2 = 3"), "{stdout}");
    let sent = sent_methods(&trace);
    let calls: Vec<usize> = (0..sent.len())
        .filter(|&i| sent[i] == "tools/call")
        .collect();
    assert_eq!(calls.len(), 4, "{sent:?}");
    let listed = |from: usize, to: usize| sent[from..to].iter().any(|m| m == "tools/list");
    // Listed when the shell starts (for completion), before the first call; not again for
    // the calls of tools it lists; again for a tool it does not list (the server may have
    // added it).
    assert!(listed(0, calls[0]), "{sent:?}");
    assert!(!listed(calls[0], calls[2]), "{sent:?}");
    assert!(listed(calls[2], calls[3]), "{sent:?}");
}

/// Reads a child's stderr on a thread, so the test can wait for a line.
struct Lines {
    rx: mpsc::Receiver<String>,
    seen: String,
}

impl Lines {
    fn new(child: &mut Child) -> Self {
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Lines {
            rx,
            seen: String::new(),
        }
    }

    fn wait_for(&mut self, needle: &str) {
        let deadline = Instant::now() + GUARD;
        while !self.seen.contains(needle) {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.rx.recv_timeout(left) {
                Ok(line) => {
                    self.seen.push_str(&line);
                    self.seen.push('\n');
                }
                Err(_) => panic!("no {needle:?} on stderr; got:\n{}", self.seen),
            }
        }
    }
}

#[test]
fn piped_ctrl_c_cancels_the_running_call_at_the_server_and_the_shell_goes_on() {
    let mut child = Command::new(MCP)
        .args(["-v", "shell", "--", MCP, "demo-server"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run mcp shell");
    let mut stdin = child.stdin.take().unwrap();
    let mut stderr = Lines::new(&mut child);
    writeln!(stdin, "call slow steps=100 delay_ms=300").unwrap();
    stderr.wait_for("\"method\":\"notifications/progress\"");
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    stderr.wait_for("\"method\":\"notifications/cancelled\"");
    stderr.wait_for("cancelled");
    writeln!(stdin, "call add a=2 b=3").unwrap();
    drop(stdin);
    let mut stdout = String::new();
    std::io::Read::read_to_string(child.stdout.as_mut().unwrap(), &mut stdout).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "{}", stderr.seen);
    assert!(stdout.contains("2 + 3 = 5"), "{stdout}");
    assert!(!stdout.contains("finished 100 steps"), "{stdout}");
}

#[test]
fn piped_shell_ends_with_exit_3_when_the_server_dies_during_a_command() {
    if !Path::new("/proc/self/task").exists() {
        eprintln!("SKIPPED: needs /proc to find the server process");
        return;
    }
    let mut child = Command::new(MCP)
        .args(["-v", "shell", "--", MCP, "demo-server"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run mcp shell");
    let mut stdin = child.stdin.take().unwrap();
    let mut stderr = Lines::new(&mut child);
    writeln!(stdin, "call slow steps=100 delay_ms=300").unwrap();
    writeln!(stdin, "ping").unwrap();
    stderr.wait_for("\"method\":\"notifications/progress\"");
    let server = *children(child.id()).first().expect("demo server process");
    let killed = Command::new("kill")
        .args(["-KILL", &server.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    drop(stdin);
    let mut stdout = String::new();
    std::io::Read::read_to_string(child.stdout.as_mut().unwrap(), &mut stdout).unwrap();
    let status = child.wait().unwrap();
    stderr.wait_for(&format!(
        "the server `{MCP} demo-server` was killed by signal 9 (SIGKILL), sent by another process, not by mcp"
    ));
    assert_eq!(status.code(), Some(3), "{}", stderr.seen);
    // The shell ended: the line after the failed call never ran.
    assert!(!stdout.contains("pong"), "{stdout}");
}

/// A tmux server of this test's own (its own socket, no user config), killed on drop.
struct Tmux {
    socket: String,
}

impl Tmux {
    /// Starts `command` in a 100×40 terminal; `None` (and a note) when tmux is missing.
    fn start(name: &str, command: &str, env: &[(&str, &Path)]) -> Option<Tmux> {
        if Command::new("tmux").arg("-V").output().is_err() {
            eprintln!(
                "SKIPPED: tmux is not installed, so the terminal test of `mcp shell` cannot run"
            );
            return None;
        }
        let tmux = Tmux {
            socket: format!("mcp-shell-test-{}-{name}", std::process::id()),
        };
        let mut new = tmux.command();
        new.args(["new-session", "-d", "-x", "100", "-y", "40"]);
        for (key, value) in env {
            new.arg("-e").arg(format!("{key}={}", value.display()));
        }
        let status = new.arg(command).status().expect("start tmux");
        assert!(status.success(), "tmux new-session failed");
        Some(tmux)
    }

    fn command(&self) -> Command {
        let mut c = Command::new("tmux");
        c.args(["-L", &self.socket, "-f", "/dev/null"]);
        c
    }

    /// `tmux send-keys`: literal text with `-l`, else key names (`Tab`, `C-c`, `Enter`).
    fn keys(&self, keys: &[&str]) {
        let status = self.command().arg("send-keys").args(keys).status().unwrap();
        assert!(status.success());
    }

    fn text(&self, text: &str) {
        self.keys(&["-l", text]);
    }

    fn screen(&self) -> String {
        let out = self
            .command()
            .args(["capture-pane", "-p", "-J", "-S", "-200"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Waits until the screen satisfies `done` (anti-hang guard only).
    fn wait(&self, what: &str, done: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + GUARD;
        loop {
            let screen = self.screen();
            if done(&screen) {
                return screen;
            }
            assert!(
                Instant::now() < deadline,
                "waited for {what}; screen:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.command().arg("kill-server").status();
    }
}

/// The lines of the screen that show a prompt.
fn prompts(screen: &str) -> Vec<&str> {
    screen
        .lines()
        .filter(|l| l.starts_with("mcp-demo> "))
        .collect()
}

/// `mcp shell -- mcp demo-server` in tmux session `name`, its history under `state`
/// (`XDG_STATE_HOME`), waited for until its prompt; when it ends, its exit status is echoed
/// and `after` (shell commands, each ending in `;`) runs. `None` when tmux is missing.
fn shell_at_prompt(name: &str, state: &Path, after: &str) -> Option<Tmux> {
    let script = format!(
        "{MCP} shell -- {MCP} demo-server; echo \"shell exited with $?\"; {after}sleep 600"
    );
    let tmux = Tmux::start(name, &script, &[("XDG_STATE_HOME", state)])?;
    tmux.wait("the prompt", |s| s.contains("mcp-demo> "));
    Some(tmux)
}

#[test]
fn terminal_session_completes_calls_cancels_and_keeps_history() {
    let state = temp_dir("terminal");
    let Some(tmux) = shell_at_prompt("terminal", &state, "") else {
        return;
    };

    // Tab completes the tool name, then an argument name from its inputSchema.
    tmux.text("call sl");
    tmux.keys(&["Tab"]);
    tmux.wait("the tool name", |s| s.contains("mcp-demo> call slow"));
    tmux.text("st");
    tmux.keys(&["Tab"]);
    tmux.wait("the argument name", |s| {
        s.contains("mcp-demo> call slow steps=")
    });
    tmux.text("2 delay_ms=10");
    tmux.keys(&["Enter"]);
    tmux.wait("the result", |s| s.contains("finished 2 steps"));

    // Ctrl-C cancels a slow call and returns to the prompt.
    tmux.text("call slow steps=100 delay_ms=300");
    tmux.keys(&["Enter"]);
    tmux.wait("progress", |s| s.contains("of 100"));
    tmux.keys(&["C-c"]);
    let screen = tmux.wait("the prompt after Ctrl-C", |s| {
        s.contains("cancelled") && prompts(s).len() == 3
    });
    assert!(!screen.contains("finished 100 steps"), "{screen}");

    // The session goes on.
    tmux.text("call add a=2 b=3");
    tmux.keys(&["Enter"]);
    tmux.wait("the second call", |s| {
        s.contains("2 + 3 = 5") && prompts(s).len() == 4
    });

    // Server log messages are shown as they arrive, on lines of their own.
    tmux.text("log-level debug");
    tmux.keys(&["Enter"]);
    tmux.wait("the server's log message", |s| {
        s.contains("[info] demo: log level set to debug") && prompts(s).len() == 5
    });
    tmux.text("call echo text=again");
    tmux.keys(&["Enter"]);
    let screen = tmux.wait("a debug log of the call", |s| {
        s.contains("[debug] tools: tools/call echo") && prompts(s).len() == 6
    });
    for line in screen
        .lines()
        .filter(|l| l.contains("[debug]") || l.contains("[info]"))
    {
        assert!(
            line.starts_with('['),
            "a log line shares a line: {line:?}\n{screen}"
        );
    }

    // Ctrl-C at the prompt clears the line and does not leave.
    tmux.text("call ec");
    tmux.keys(&["C-c"]);
    tmux.wait("a fresh prompt", |s| prompts(s).len() == 7);
    tmux.text("exit");
    tmux.keys(&["Enter"]);
    tmux.wait("the shell to end", |s| s.contains("shell exited with 0"));

    let history = std::fs::read_to_string(state.join("mcp-rs/history")).expect("history file");
    assert!(history.contains("call add a=2 b=3"), "{history}");
    assert!(
        history.contains("call slow steps=2 delay_ms=10"),
        "{history}"
    );
}

#[test]
fn terminal_session_works_with_an_unwritable_history() {
    let dir = temp_dir("unwritable");
    // A file where the state directory should be: the history cannot be written.
    let blocker = dir.join("state");
    std::fs::write(&blocker, "not a directory").unwrap();
    let Some(tmux) = shell_at_prompt("unwritable", &blocker, "") else {
        return;
    };
    tmux.text("ping");
    tmux.keys(&["Enter"]);
    let screen = tmux.wait("pong", |s| s.contains("pong from mcp-demo"));
    assert!(screen.contains("cannot save the shell history"), "{screen}");
    tmux.text("ping");
    tmux.keys(&["Enter"]);
    tmux.wait("the second pong", |s| {
        s.matches("pong from mcp-demo").count() == 2
    });
    // Ctrl-D leaves with status 0.
    tmux.keys(&["C-d"]);
    tmux.wait("the shell to end", |s| s.contains("shell exited with 0"));
}

/// The children of process `pid` (Linux `/proc`).
fn children(pid: u32) -> Vec<u32> {
    // Every thread's children: servers are started from a spawner thread of their own (so
    // that their parent-death signal is tied to it), not from the main thread.
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task"))
        .map(|d| d.flatten().map(|e| e.path()).collect::<Vec<_>>())
        .unwrap_or_default();
    let mut found: Vec<u32> = tasks
        .iter()
        .flat_map(|task| {
            std::fs::read_to_string(task.join("children"))
                .unwrap_or_default()
                .split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect::<Vec<u32>>()
        })
        .collect();
    found.sort_unstable();
    found
}

#[test]
fn terminal_session_ends_with_exit_3_when_the_server_dies_at_the_prompt() {
    if !Path::new("/proc/self/task").exists() {
        eprintln!("SKIPPED: needs /proc to find the server process");
        return;
    }
    let dir = temp_dir("dies");
    let after = "stty -a | grep -o -- '-\\?icanon'; ";
    let Some(tmux) = shell_at_prompt("dies", &dir, after) else {
        return;
    };
    tmux.text("call e");
    tmux.wait("the typed text", |s| s.contains("mcp-demo> call e"));
    // pane shell -> mcp shell -> demo server
    let out = tmux
        .command()
        .args(["display-message", "-p", "#{pane_pid}"])
        .output()
        .unwrap();
    let pane: u32 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
    let shell = *children(pane).first().expect("mcp shell process");
    let server = *children(shell).first().expect("demo server process");
    let killed = Command::new("kill")
        .args(["-TERM", &server.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let screen = tmux.wait("the shell to end", |s| s.contains("shell exited with"));
    assert!(screen.contains("shell exited with 3"), "{screen}");
    // Named by its command, the signal by its name, and not sent by mcp.
    assert!(
        screen.contains("demo-server` was killed by signal 15 (SIGTERM)"),
        "{screen}"
    );
    // The terminal is back in its normal (canonical) mode.
    let screen = tmux.wait("the terminal mode", |s| {
        s.lines().any(|l| l.trim().ends_with("icanon"))
    });
    assert!(screen.lines().any(|l| l.trim() == "icanon"), "{screen}");
}

#[test]
fn terminal_ctrl_c_during_a_question_leaves_the_next_line_to_the_prompt() {
    let dir = temp_dir("question");
    let Some(tmux) = shell_at_prompt("question", &dir, "") else {
        return;
    };
    // The demo's `ask` tool asks through elicitation: answered at the terminal.
    tmux.text("call ask question=first");
    tmux.keys(&["Enter"]);
    tmux.wait("the question", |s| s.contains("Answer"));
    tmux.text("Ann");
    tmux.keys(&["Enter"]);
    tmux.wait("the answer", |s| s.contains("The user said: Ann"));
    // Ctrl-C while the question waits: the question is dropped with the call, and what is
    // typed next goes to the prompt (not to the abandoned question).
    tmux.text("call ask question=second");
    tmux.keys(&["Enter"]);
    tmux.wait("the second question", |s| s.matches("Answer").count() == 2);
    tmux.keys(&["C-c"]);
    tmux.wait("the prompt after Ctrl-C", |s| {
        s.contains("cancelled") && prompts(s).len() == 3
    });
    tmux.text("ping");
    tmux.keys(&["Enter"]);
    let screen = tmux.wait("pong", |s| s.contains("pong from mcp-demo"));
    assert!(screen.contains("mcp-demo> ping"), "{screen}");
    // The abandoned question has let go of the terminal: the next one is asked and answered.
    tmux.text("call ask question=third");
    tmux.keys(&["Enter"]);
    tmux.wait("the third question", |s| {
        s.contains("the server asks: third") && s.matches("Answer").count() == 3
    });
    tmux.text("Bob");
    tmux.keys(&["Enter"]);
    tmux.wait("the third answer", |s| {
        s.contains("The user said: Bob") && prompts(s).len() == 5
    });
}

#[test]
fn terminal_runs_every_line_of_a_paste_in_order() {
    let dir = temp_dir("paste");
    let Some(tmux) = shell_at_prompt("paste", &dir, "") else {
        return;
    };
    // One send-keys: the three lines reach the terminal together, as a paste does.
    tmux.keys(&[
        "call echo text=first",
        "Enter",
        "call echo text=second",
        "Enter",
        "call echo text=third",
        "Enter",
    ]);
    let screen = tmux.wait("the three results", |s| prompts(s).len() == 4);
    let results: Vec<&str> = screen
        .lines()
        .filter(|l| ["first", "second", "third"].contains(&l.trim()))
        .collect();
    assert_eq!(results, ["first", "second", "third"], "{screen}");
    for (i, word) in ["first", "second", "third"].iter().enumerate() {
        assert_eq!(
            prompts(&screen)[i],
            format!("mcp-demo> call echo text={word}"),
            "{screen}"
        );
    }
}
