//! Sessions in the Ready state with the pending requests a stream answers.

use mcp_proto::jsonrpc;
use mcp_proto::session::{Event, RequestOptions, Session, SessionConfig};
use mcp_proto::stdio::StdioConnection;
use mcp_proto::time::Instant;
use mcp_proto::types::Implementation;

use crate::workload::Stream;

/// The server's answer to `initialize` (id 0), as one message without a line ending.
pub const INIT_OK: &str = r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"bench","version":"1"}}}"#;

/// A session configuration that allows `max_in_flight` pending requests.
pub fn config(max_in_flight: usize) -> SessionConfig {
    let mut config = SessionConfig::new(Implementation::new("mcp-bench", "0.1"));
    config.max_in_flight = max_in_flight;
    config
}

/// Typical `tools/call` params (about 80 bytes).
pub fn call_params() -> Box<serde_json::value::RawValue> {
    jsonrpc::to_raw(&serde_json::json!({
        "name": "echo",
        "arguments": {"text": "hello from the benchmark", "count": 3}
    }))
    .expect("params serialize")
}

/// Drives a session through the handshake; returns it Ready with everything drained.
pub fn ready_session(now: Instant, max_in_flight: usize) -> Session {
    let mut s = Session::new(config(max_in_flight), now);
    let mut out = Vec::new();
    while s.poll_transmit(&mut out).is_some() {}
    s.handle_message(now, INIT_OK.as_bytes());
    while s.poll_transmit(&mut out).is_some() {}
    while let Some(e) = s.poll_event() {
        assert!(matches!(e, Event::Ready { .. }), "unexpected {e:?}");
    }
    s
}

/// A Ready stdio connection with the requests `stream` answers sent: ids `1..=responses`
/// plain, then `PROGRESS_REQUESTS` requests with progress (the tokens of its notifications).
pub fn ready_connection(now: Instant, stream: &Stream) -> StdioConnection {
    let total = (stream.responses + stream.progress_requests) as usize;
    let mut c = StdioConnection::new(config(total + 16), now);
    let mut out = Vec::new();
    while c.poll_transmit(&mut out).is_some() {}
    let mut init = INIT_OK.as_bytes().to_vec();
    init.push(b'\n');
    c.handle_bytes(now, &init);
    send_requests(c.session_mut(), now, stream);
    while c.poll_transmit(&mut out).is_some() {}
    while let Some(e) = c.poll_event() {
        assert!(
            matches!(
                e,
                mcp_proto::connection::Event::Session(Event::Ready { .. })
            ),
            "unexpected {e:?}"
        );
    }
    c
}

/// A Ready session with the requests `stream` answers sent (see [`ready_connection`]).
pub fn ready_session_for(now: Instant, stream: &Stream) -> Session {
    let total = (stream.responses + stream.progress_requests) as usize;
    let mut s = ready_session(now, total + 16);
    send_requests(&mut s, now, stream);
    let mut out = Vec::new();
    while s.poll_transmit(&mut out).is_some() {}
    s
}

fn send_requests(s: &mut Session, now: Instant, stream: &Stream) {
    let params = call_params();
    for _ in 0..stream.responses {
        s.send_request(
            now,
            "tools/call",
            Some(params.clone().into()),
            RequestOptions::new(),
        )
        .expect("room for every request");
    }
    for _ in 0..stream.progress_requests {
        s.send_request(
            now,
            "tools/call",
            Some(params.clone().into()),
            RequestOptions::new().progress(),
        )
        .expect("room for every request");
    }
}

/// Drains a session's events, checking that each is what the stream should produce; returns
/// the number of payload bytes seen (so the work cannot be optimised away).
pub fn drain_events(s: &mut Session) -> usize {
    let mut seen = 0;
    while let Some(e) = s.poll_event() {
        seen += match e {
            Event::Completed {
                result: Ok(raw), ..
            } => raw.get().len(),
            Event::Progress { progress, .. } => 1 + progress as usize,
            other => panic!("unexpected event in a benchmark stream: {other:?}"),
        };
    }
    seen
}
