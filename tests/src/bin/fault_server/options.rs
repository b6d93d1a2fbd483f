//! The command line: the modes, their arguments, and `--help`.

use crate::http;

pub(crate) const HELP: &str = "\
fault_server: an MCP server that misbehaves on command (for tests), over stdio or HTTP.

USAGE:
    fault_server [--stay] [--log PATH] <MODE> [ARG]
    fault_server --http [--log PATH] <HTTP MODE> [ARG]
    fault_server --help

The handshake (initialize / notifications/initialized, with version negotiation) is always
answered normally; the mode applies to what comes after it. Every mode also serves the tools below, and every mode name is
also a tool: `tools/call` with that name applies the fault to that one request (arguments in
braces).

MODES:
    echo                   A well-behaved server (the default).
    crash_mid_request      On the first tools/call: write a last line to stderr, exit(3) without
                           answering. Other requests are answered. Tool: same.
    garbage                Print a banner at start, and garbage lines (banner text, broken JSON,
                           invalid UTF-8, JSON that is not JSON-RPC, blank lines) before and
                           after every response. Tool: garbage around this answer.
    huge_line <MiB>        Right after the initialize answer, print one line of MiB mebibytes
                           (default 64) without its newline, pause 300 ms, then the newline; then
                           answer normally. Tool {mib}: the same line, then this answer.
    silent                 Answer nothing after initialize (stdin is still read and logged).
                           Tool: this request is never answered.
    slow <ms>              Answer every request after a delay of ms (default 1000); requests are
                           handled concurrently. Tool {ms}: this answer is delayed.
    twice                  Answer every request twice. Tool: this answer twice.
    unknown_ids            Before each answer, send a result and an error for ids nobody sent
                           (990000+n and \"nobody-n\"), then the right answer. Tool: for this one.
    close_stdout           Right after the initialize answer, close stdout (fd 1 becomes
                           /dev/null) but keep running and reading stdin. Tool: close it now.
    grandchild [exit|stay] Right after the initialize answer, spawn `sleep 300` inheriting stdout
                           and stderr (its pid goes to stderr and the log as `# grandchild PID`);
                           then exit(0) (`exit`, default) or keep serving (`stay`).
                           Tool {stay}: the same, after answering.
    ignore_sigterm         Set SIGTERM to SIG_IGN at start, and keep running after stdin EOF
                           (implies --stay). Tool: ignore SIGTERM from now on.
    strict_handshake       Like the oldest servers: any request before initialize makes it
                           write a last stderr line and exit(1) without answering.
    stderr_flood <MiB>     Right after the initialize answer, write MiB mebibytes (default 8) of
                           lines to stderr, blocking while nobody reads them, then answer
                           normally. Tool {mib}: the same, then this answer.
    endless_pages <N>      tools/list answers every page with N tools (default 100) of about
                           1 KiB each and a new nextCursor: the list never ends.
    ping_flood <count>     Right after the initialize answer, stop reading stdin for good and
                           write count ping requests (default 4000000) to stdout.
                           Tool {count}: the same, after answering.
    bad_utf8               Every answer has bytes that are not UTF-8 inside a string.
                           Tool: this answer.
    bad_json               Every answer is cut off in the middle (invalid JSON, right id).
                           Tool: this answer.
    null_id_error          Every request gets an error with \"id\": null instead of its answer.
                           Tool: this request.

TOOLS (every mode):
    echo {message}         Returns the message as text.
    add {a, b}             Returns a + b as text.
    sleep {ms}             Answers after ms; not at all if notifications/cancelled arrives first.
    progress {steps}       Sends `steps` notifications/progress (when the request has a
                           progressToken), 10 ms apart, then answers.

OPTIONS:
    --stay                 Do not exit at stdin EOF: sleep until killed.
    --log PATH             Append every line received on stdin to PATH (verbatim, one per line),
                           plus server events as lines starting with `# `. Also FAULT_LOG=PATH.

Requests other than initialize, ping, tools/list and tools/call get a -32601 error; before
initialize, requests other than ping get a -32600 error. At stdin EOF the server exits 0 (unless --stay or ignore_sigterm).

";

/// The whole-process fault, from the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    Echo,
    CrashMidRequest,
    Garbage,
    HugeLine(usize),
    Silent,
    Slow(u64),
    Twice,
    UnknownIds,
    CloseStdout,
    Grandchild { stay: bool },
    IgnoreSigterm,
    StderrFlood(usize),
    StrictHandshake,
    EndlessPages(usize),
    PingFlood(u64),
    BadUtf8,
    BadJson,
    NullIdError,
}

/// What the command line asked for.
pub(crate) struct Options {
    /// The stdio mode (`Echo` with `--http`).
    pub(crate) mode: Mode,
    /// Keep running after stdin EOF (`--stay`, implied by `ignore_sigterm`).
    pub(crate) stay: bool,
    /// `--log PATH` or `FAULT_LOG`.
    pub(crate) log: Option<String>,
    /// `--http`: the HTTP mode to serve instead.
    pub(crate) http: Option<http::HttpMode>,
}

/// Reads the command line; `--help` prints the reference and exits 0.
pub(crate) fn parse_args() -> Result<Options, String> {
    let mut args = std::env::args().skip(1);
    let mut stay = false;
    let mut http = false;
    let mut log = std::env::var("FAULT_LOG").ok();
    let mut positional = Vec::new();
    while let Some(a) = args.next() {
        match a.as_str() {
            "--help" | "-h" => {
                print!("{HELP}{}", http::HELP_HTTP);
                std::process::exit(0);
            }
            "--stay" => stay = true,
            "--http" => http = true,
            "--log" => log = Some(args.next().ok_or("--log needs a path")?),
            _ => positional.push(a),
        }
    }
    let name = positional.first().map_or("echo", String::as_str);
    let arg = positional.get(1).map(String::as_str);
    if http {
        return Ok(Options {
            mode: Mode::Echo,
            stay: false,
            log,
            http: Some(http::HttpMode::parse(name, arg)?),
        });
    }
    let num = |default: u64| -> Result<u64, String> {
        arg.map_or(Ok(default), |a| {
            a.parse().map_err(|_| format!("{name}: not a number: {a}"))
        })
    };
    let mode = match name {
        "echo" => Mode::Echo,
        "crash_mid_request" => Mode::CrashMidRequest,
        "garbage" => Mode::Garbage,
        "huge_line" => Mode::HugeLine(usize::try_from(num(64)?).map_err(|e| e.to_string())?),
        "silent" => Mode::Silent,
        "slow" => Mode::Slow(num(1000)?),
        "twice" => Mode::Twice,
        "unknown_ids" => Mode::UnknownIds,
        "close_stdout" => Mode::CloseStdout,
        "grandchild" => Mode::Grandchild {
            stay: match arg {
                None | Some("exit") => false,
                Some("stay") => true,
                Some(other) => return Err(format!("grandchild: exit or stay, not {other}")),
            },
        },
        "ignore_sigterm" => Mode::IgnoreSigterm,
        "strict_handshake" => Mode::StrictHandshake,
        "stderr_flood" => Mode::StderrFlood(usize::try_from(num(8)?).map_err(|e| e.to_string())?),
        "endless_pages" => {
            Mode::EndlessPages(usize::try_from(num(100)?).map_err(|e| e.to_string())?)
        }
        "ping_flood" => Mode::PingFlood(num(4_000_000)?),
        "bad_utf8" => Mode::BadUtf8,
        "bad_json" => Mode::BadJson,
        "null_id_error" => Mode::NullIdError,
        other => return Err(format!("unknown mode {other:?} (see --help)")),
    };
    Ok(Options {
        mode,
        stay: stay || mode == Mode::IgnoreSigterm,
        log,
        http: None,
    })
}
