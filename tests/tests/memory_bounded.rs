//! Peak heap while a server sends a 64 MiB line, and 1 GiB of garbage lines, through
//! `StdioConnection::handle_bytes`: bounded by the line limit, and the connection survives.
//!
//! A test binary of its own: the counting allocator sees every allocation of the process, so
//! the tests here take a lock to run one at a time.

use std::sync::Mutex;
use std::time::Instant;

use mcp_proto::framing::lines::DEFAULT_MAX_LINE_LEN;
use mcp_proto::session::{Diagnostic, Event, RequestOptions, SessionConfig};
use mcp_proto::types::Implementation;
use mcp_proto::{RequestHandle, StdioConnection};
use mcp_tests::counting_alloc::CountingAlloc;

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc::new();

static SERIAL: Mutex<()> = Mutex::new(());

const MIB: usize = 1 << 20;
/// Headroom over the line limit for the session's own bookkeeping.
const MARGIN: usize = 4 * MIB;

/// Checks both peaks of the measurement that just ended, and prints them.
///
/// Live heap stays under the limit plus [`MARGIN`]. Counting a moving `realloc` as holding its
/// old and new block at once, the line buffer's last doubling (8 MiB to 16 MiB) briefly holds
/// 1.5 times the limit: that is the worst case under an allocator that copies.
fn check_peaks(what: &str) {
    let live = ALLOC.peak_above_baseline();
    let moves = ALLOC.peak_with_moves_above_baseline();
    let mib = |n: usize| n as f64 / MIB as f64;
    eprintln!(
        "{what}: peak heap {:.1} MiB live, {:.1} MiB counting realloc moves",
        mib(live),
        mib(moves)
    );
    assert!(
        live < DEFAULT_MAX_LINE_LEN + MARGIN,
        "{what}: peak live heap {:.1} MiB over the baseline, limit {} MiB",
        mib(live),
        DEFAULT_MAX_LINE_LEN / MIB
    );
    assert!(
        moves < DEFAULT_MAX_LINE_LEN * 3 / 2 + MARGIN,
        "{what}: peak heap counting realloc moves {:.1} MiB",
        mib(moves)
    );
}

/// What the drained events amounted to, counted rather than kept (keeping them would cost heap).
#[derive(Debug, Default)]
struct Seen {
    too_long: Vec<usize>,
    not_json: usize,
    completed: Vec<(RequestHandle, bool)>,
    notifications: usize,
}

struct Client {
    conn: StdioConnection,
    now: Instant,
    sink: Vec<u8>,
    seen: Seen,
}

impl Client {
    fn ready() -> Self {
        let now = Instant::now();
        let mut c = Client {
            conn: StdioConnection::new(SessionConfig::new(Implementation::new("mem", "1")), now),
            now,
            sink: Vec::with_capacity(64 * 1024),
            seen: Seen::default(),
        };
        c.drain();
        c.feed(
            br#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}
"#,
        );
        c
    }

    fn drain(&mut self) {
        while self.conn.poll_transmit(&mut self.sink).is_some() {}
        self.sink.clear();
        while let Some(e) = self.conn.session_mut().poll_event() {
            match e {
                Event::Diagnostic(Diagnostic::LineTooLong { discarded, .. }) => {
                    self.seen.too_long.push(discarded);
                }
                Event::Diagnostic(Diagnostic::NotJson { .. }) => self.seen.not_json += 1,
                Event::Completed { handle, result } => {
                    self.seen.completed.push((handle, result.is_ok()));
                }
                Event::Notification(_) => self.seen.notifications += 1,
                _ => {}
            }
        }
    }

    fn feed(&mut self, bytes: &[u8]) {
        self.conn.handle_bytes(self.now, bytes);
        self.drain();
    }

    /// Sends a request and returns its handle and the wire id it went out with.
    fn request(&mut self) -> (RequestHandle, u64) {
        let handle = self
            .conn
            .session_mut()
            .send_request(
                self.now,
                "tools/call",
                None,
                RequestOptions::new().no_timeout(),
            )
            .expect("ready session accepts a request");
        let mut line = Vec::new();
        while self.conn.poll_transmit(&mut line).is_some() {}
        let v: serde_json::Value = serde_json::from_slice(&line).expect("one JSON line");
        (handle, v["id"].as_u64().expect("numeric id"))
    }

    fn answer(&mut self, id: u64) {
        self.feed(format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{}}}}\n").as_bytes());
    }
}

#[test]
fn a_64_mib_line_is_dropped_with_heap_bounded_by_the_line_limit() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut c = Client::ready();
    let (handle, id) = c.request();
    let chunk = vec![b'a'; 64 * 1024];
    let head = format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":\"");

    ALLOC.reset_peak();
    c.feed(head.as_bytes());
    for _ in 0..(64 * MIB / chunk.len()) {
        c.feed(&chunk);
    }
    c.feed(b"\"}\n");
    check_peaks("64 MiB line");
    assert_eq!(
        c.seen.too_long,
        [head.len() + 64 * MIB + 2],
        "one diagnostic, exact size"
    );
    assert!(
        c.seen.completed.is_empty(),
        "the dropped line answered nothing"
    );
    // The connection survives: the real answer still lands.
    c.answer(id);
    assert_eq!(c.seen.completed, [(handle, true)]);
}

#[test]
fn a_1_gib_stream_of_garbage_lines_keeps_heap_bounded() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut c = Client::ready();
    let (handle, id) = c.request();
    // 1 MiB chunks of garbage: banner-like lines of 4 KiB, and every 64th chunk a run with no
    // newline that, with its neighbours, makes a 24 MiB over-long line.
    let mut lines = Vec::with_capacity(MIB);
    while lines.len() + 4096 <= MIB {
        lines.extend_from_slice(b"Server log: ");
        lines.resize(lines.len() + 4083, b'x');
        lines.push(b'\n');
    }
    lines.resize(MIB, b'y');
    let no_newline = vec![b'z'; MIB];

    ALLOC.reset_peak();
    let mut fed = 0;
    let mut i = 0;
    while fed < 1024 * MIB {
        let chunk = if i % 64 < 24 && i % 64 != 0 && (i / 64) % 4 == 1 {
            &no_newline
        } else {
            &lines
        };
        c.feed(chunk);
        fed += chunk.len();
        i += 1;
    }
    c.feed(b"\n");
    check_peaks("1 GiB of garbage lines");
    assert!(
        c.seen.not_json > 200_000,
        "garbage reported: {}",
        c.seen.not_json
    );
    assert!(!c.seen.too_long.is_empty(), "over-long runs were dropped");
    assert!(
        c.seen.too_long.iter().all(|&d| d > DEFAULT_MAX_LINE_LEN),
        "{:?}",
        c.seen.too_long
    );
    // Later valid lines still produce events.
    c.feed(br#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"after"}}
"#);
    assert_eq!(c.seen.notifications, 1);
    c.answer(id);
    assert_eq!(c.seen.completed, [(handle, true)]);
}
