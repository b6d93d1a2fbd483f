//! Fuzz bodies with their invariants, shared by the cargo-fuzz targets in `fuzz/` and the
//! property tests that run on stable with plain `cargo test`.
//!
//! Compiled for tests and under `--cfg fuzzing` (cargo-fuzz sets it). Each function takes the
//! fuzzer's bytes, runs the component under test and panics when an invariant breaks; a
//! panic is the finding. Not a stable API.

mod http;
mod http_server;
mod ops;
mod server;
mod session;
mod session_tasks;
mod sse;

pub use http::http;
pub use http_server::http_server_ops;
pub use server::server_ops;
pub use session::session_ops;
pub use sse::sse;

use crate::framing::lines::{Line, LineDecoder};
use crate::session::{Event, SessionConfig};
use crate::stdio::StdioConnection;
use crate::time::Instant;
use crate::types::Implementation;

/// Events of a stdio connection fed `input` in chunks of the given sizes (cycled), as
/// comparable strings.
fn stdio_events(input: &[u8], chunk_sizes: &[usize]) -> Vec<String> {
    let now = Instant::now();
    let mut conn = StdioConnection::with_decoder(
        SessionConfig::new(Implementation::new("fuzz", "0")),
        LineDecoder::with_max_line_len(1024),
        now,
    );
    let mut sink = Vec::new();
    while conn.poll_transmit(&mut sink).is_some() {}
    let mut events = Vec::new();
    let mut rest = input;
    let mut i = 0;
    while !rest.is_empty() {
        let size = chunk_sizes
            .get(i % chunk_sizes.len().max(1))
            .copied()
            .unwrap_or(rest.len())
            .clamp(1, rest.len());
        let (chunk, tail) = rest.split_at(size);
        conn.handle_bytes(now, chunk);
        rest = tail;
        i += 1;
        while conn.poll_transmit(&mut sink).is_some() {}
        drain_events(&mut conn, &mut events);
    }
    conn.handle_eof(now, None);
    drain_events(&mut conn, &mut events);
    events
}

/// Describes every event of the connection, the session's and its own, in order.
fn drain_events(conn: &mut StdioConnection, events: &mut Vec<String>) {
    while let Some(e) = conn.poll_event() {
        events.push(match e {
            crate::connection::Event::Session(e) => describe(&e),
            crate::connection::Event::Transport(t) => format!("stdio {t:?}"),
        });
    }
}

fn describe(e: &Event) -> String {
    format!("{e:?}")
}

/// Chunking invariance of the whole stdio path (framing + session): the same bytes in one
/// chunk, byte by byte, and in fuzzer-chosen chunks give the same events.
pub fn stdio_chunking(data: &[u8]) {
    let (sizes, input) = data.split_at(data.len().min(8));
    let sizes: Vec<usize> = sizes.iter().map(|&b| usize::from(b) + 1).collect();
    let whole = stdio_events(input, &[usize::MAX]);
    assert_eq!(
        whole,
        stdio_events(input, &[1]),
        "one chunk vs byte by byte"
    );
    assert_eq!(
        whole,
        stdio_events(input, &sizes),
        "one chunk vs random chunks"
    );
}

/// The line decoder alone: chunking invariance and bounded buffering on arbitrary bytes.
pub fn lines(data: &[u8]) {
    fn run(input: &[u8], size: usize) -> Vec<String> {
        let mut d = LineDecoder::with_max_line_len(256);
        let mut out = Vec::new();
        for chunk in input.chunks(size.max(1)) {
            d.decode(chunk, |l| out.push(format!("{l:?}")));
            assert!(d.buffered_len() <= 257, "buffer bounded by the limit");
        }
        d.finish(|l| {
            if let Line::Message(m) = l {
                assert!(m.len() <= 256);
            }
            out.push(format!("{l:?}"));
        });
        out
    }
    let split = data.first().map_or(1, |&b| usize::from(b) + 1);
    let whole = run(data, usize::MAX);
    assert_eq!(whole, run(data, 1));
    assert_eq!(whole, run(data, split));
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    /// Realistic server lines to mix into random input.
    const LINES: &[&str] = &[
        r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"hi"}}"#,
        r#"{"jsonrpc":"2.0","id":"x","method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
        r#"[{"jsonrpc":"2.0","id":2,"result":{}},{"jsonrpc":"2.0","method":"m"}]"#,
        "Server listening on stdio",
        "\r",
        "",
    ];

    fn realistic_input() -> impl Strategy<Value = Vec<u8>> {
        prop::collection::vec(
            prop_oneof![
                prop::sample::select(LINES).prop_map(|l| format!("{l}\n").into_bytes()),
                prop::collection::vec(any::<u8>(), 0..40),
            ],
            0..12,
        )
        .prop_map(|parts| parts.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn session_ops_hold_their_invariants(data in prop::collection::vec(any::<u8>(), 0..600)) {
            super::session_ops(&data);
        }

        #[test]
        fn stdio_events_do_not_depend_on_chunking(
            sizes in prop::collection::vec(any::<u8>(), 8),
            input in realistic_input(),
        ) {
            let mut data = sizes;
            data.extend_from_slice(&input);
            super::stdio_chunking(&data);
        }

        #[test]
        fn server_ops_hold_their_invariants(data in prop::collection::vec(any::<u8>(), 0..800)) {
            super::server_ops(&data);
        }

        #[test]
        fn http_response_sequences_hold_their_invariants(data in prop::collection::vec(any::<u8>(), 0..800)) {
            super::http(&data);
        }

        #[test]
        fn http_server_ops_hold_their_invariants(data in prop::collection::vec(any::<u8>(), 0..800)) {
            super::http_server_ops(&data);
        }

        #[test]
        fn line_decoder_is_chunking_invariant(data in prop::collection::vec(any::<u8>(), 0..2000)) {
            super::lines(&data);
        }
    }

    /// A server of 2025-11-25 with tasks; a task-augmented `tools/call` answered with a
    /// `CreateTaskResult`; the clock; a poll answered `completed`; `tasks/result` answered; a
    /// late status notification; close. (Also the seed `fuzz/seeds/session/task_happy_path`.)
    pub(super) const TASK_HAPPY_PATH: [u8; 44] = [
        1, 0, 15, 0, 0, 100, 0, 14, 0, 0, 0, 4, 16, 0, 3, 0, 200, 0, 11, 0, 250, 0, 17, 0, 0, 2, 0,
        0, 0, 17, 0, 2, 0, 0, 0, 0, 16, 2, 0, 0, 0, 0, 12, 0,
    ];

    #[test]
    fn a_scripted_task_sequence_follows_a_task_to_its_end() {
        super::session_ops(&TASK_HAPPY_PATH);
    }

    #[test]
    fn a_scripted_op_sequence_exercises_the_happy_path() {
        // init ok, send 3 requests, answer one, progress, advance, server request, close.
        let ops = [
            0u8, 0, 0, 1, 0x04, 2, 0x00, 1, 0x12, 0, 100, 3, 0, 0, 5, 1, 7, 11, 0, 200, 1, 7, 0, 0,
            8, 0, 12,
        ];
        super::session_ops(&ops);
    }

    /// A client that initializes, gets a `roots/list` and answers it, calls a tool (cut in
    /// 4-byte chunks) that the host answers, reads, and the host closes.
    const SERVER_HAPPY_PATH: [u8; 29] = [
        0, 0, 0, 255, 0, 2, 0, 255, 5, 1, 50, 10, 0, 0, 9, 1, 255, 0, 4, 3, 4, 3, 0, 10, 0, 12, 0,
        10, 0,
    ];

    /// Stateful: initialize (POST, no session id), `notifications/initialized`, the host
    /// sends `roots/list` (on the GET stream, opened next), the client answers it by POST, a
    /// tool call the host answers, then the end. (Also the seed `fuzz/seeds/http_server/happy_path`.)
    pub(super) const HTTP_SERVER_HAPPY_PATH: [u8; 29] = [
        0, // stateful
        0, 0, 0, 0, 0, // POST initialize, both accepted, no session id
        0, 2, 0, 1, 2, // POST initialized in the session (the third id known)
        4, 2, 0, // GET in the session
        7, 1, 200, // roots/list to the session
        0, 6, 1, 1, 2, // the client's answer (id 1)
        0, 3, 2, 1, 2, // a tool call (id 2)
        6, 0, // the host answers it
    ];

    #[test]
    fn a_scripted_http_server_sequence_reaches_a_session() {
        assert_eq!(super::http_server::run(&HTTP_SERVER_HAPPY_PATH).answered, 1);
    }

    /// The happy path with the deferred `initialize`: the host accepts the held `initialize`
    /// (op 12) before the session is used. (Also the seed
    /// `fuzz/seeds/http_server/deferred_happy_path`.)
    pub(super) const HTTP_SERVER_DEFERRED_PATH: [u8; 31] = [
        2, // stateful, deferred initialize
        0, 0, 0, 0, 0, // POST initialize, both accepted, no session id
        12, 0, // the host accepts it (the version negotiated)
        0, 2, 0, 1, 2, // POST initialized in the session (the third id known)
        4, 2, 0, // GET in the session
        7, 1, 200, // roots/list to the session
        0, 6, 1, 1, 2, // the client's answer (id 1)
        0, 3, 2, 1, 2, // a tool call (id 2)
        6, 0, // the host answers it
    ];

    #[test]
    fn a_scripted_http_server_sequence_takes_the_deferred_initialize() {
        assert_eq!(
            super::http_server::run(&HTTP_SERVER_DEFERRED_PATH).answered,
            1
        );
    }

    /// 2026-07-28 over HTTP: a listen POST (id 1, both accepted), the host's
    /// `list_changed` delivered on it and the listen closed by the host (op 11), a second
    /// listen (id 2) whose stream the client closes (op 10), the end. (Also the seed
    /// `fuzz/seeds/http_server/listen_path`.)
    pub(super) const HTTP_SERVER_LISTEN_PATH: [u8; 19] = [
        0, // stateful (2026 requests get sessions of their own either way)
        0, 11, 1, 0, 0, // POST listen (id 1)
        11, 3, // the host notifies and closes the first listen
        0, 11, 2, 0, 0, // POST listen (id 2)
        10, 0, // the client closes a live response
        9, 1, // time passes
        11, 1, // the host notifies what is left
    ];

    #[test]
    fn a_scripted_http_server_sequence_opens_and_ends_listens() {
        assert_eq!(super::http_server::run(&HTTP_SERVER_LISTEN_PATH).listens, 2);
    }

    #[test]
    fn a_scripted_server_sequence_runs_the_happy_path() {
        super::server_ops(&SERVER_HAPPY_PATH);
    }

    /// Protocol 2026-07-28: `server/discover`, a tool call with the envelope (cut in 7-byte
    /// chunks), progress and a log entry on it, the host's answer, an enveloped `tools/list`
    /// answered, a `ping` with the envelope, `initialize` after the era was chosen, a read.
    /// (Also the seed `fuzz/seeds/server/modern_path`.)
    const SERVER_MODERN_PATH: [u8; 30] = [
        0, 15, 3, 200, 0, 16, 5, 7, 8, 0, 9, 3, 0, 0, 17, 6, 255, 3, 0, 0, 21, 1, 9, 0, 0, 0, 50,
        10, 0, 10,
    ];

    #[test]
    fn a_scripted_server_sequence_reaches_the_2026_era() {
        assert_eq!(super::server::run(&SERVER_MODERN_PATH).modern_requests, 2);
    }

    /// Protocol 2026-07-28 listens: a listen (id 1) opened, a notification delivered to it, a
    /// read, the client's cancel; a second listen (id 2) closed by the host; the session's
    /// close at the end. (Also the seed `fuzz/seeds/server/listen_path`.)
    const SERVER_LISTEN_PATH: [u8; 20] = [
        0, 23, 1, 4, 9, 0, 10, 0, 0, 26, 1, 255, 0, 23, 2, 255, 9, 1, 10, 0,
    ];

    #[test]
    fn a_scripted_server_sequence_opens_and_ends_listens() {
        assert_eq!(super::server::run(&SERVER_LISTEN_PATH).listens, 2);
    }
}
