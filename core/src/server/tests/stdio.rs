//! The line framing around the server session.

use crate::framing::lines::LineDecoder;
use crate::jsonrpc::ErrorObject;
use crate::server::stdio::StdioServerConnection;
use crate::server::{Diagnostic, Event, ServerState};
use crate::session::CloseReason;
use crate::time::Instant;

const INIT: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#;

fn conn(limit: usize) -> (StdioServerConnection, Instant) {
    let now = Instant::now();
    let decoder = LineDecoder::with_max_line_len(limit);
    (
        StdioServerConnection::with_decoder(super::harness::config(), decoder, now),
        now,
    )
}

fn output(c: &mut StdioServerConnection) -> Vec<u8> {
    let mut out = Vec::new();
    while c.poll_transmit(&mut out).is_some() {}
    out
}

#[test]
fn output_does_not_depend_on_how_the_input_is_cut() {
    let input =
        format!("{INIT}\r\n\n{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}}\nnot json\n");
    let (mut whole, now) = conn(1 << 16);
    whole.handle_bytes(now, input.as_bytes());
    let expected = output(&mut whole);
    let (mut bytewise, now) = conn(1 << 16);
    for b in input.as_bytes() {
        bytewise.handle_bytes(now, std::slice::from_ref(b));
    }
    assert_eq!(output(&mut bytewise), expected);
    let lines: Vec<&[u8]> = expected
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .collect();
    assert_eq!(
        lines.len(),
        3,
        "initialize, pong, parse error: one line each"
    );
    assert!(expected.ends_with(b"\n"));
}

#[test]
fn an_over_long_line_is_reported_and_the_next_line_still_works() {
    let (mut c, now) = conn(256);
    let long = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{{\"x\":\"{}\"}}}}\n",
        "a".repeat(400)
    );
    c.handle_bytes(now, long.as_bytes());
    c.handle_bytes(now, b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\n");
    let events: Vec<_> = std::iter::from_fn(|| c.poll_event()).collect();
    assert!(matches!(
        &events[..],
        [Event::Diagnostic(Diagnostic::LineTooLong {
            limit: 256,
            ..
        })]
    ));
    assert_eq!(
        output(&mut c),
        b"{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n"
    );
    assert!(c.buffered_len() <= 257);
}

#[test]
fn a_line_that_is_not_utf8_is_answered_as_a_parse_error() {
    let (mut c, now) = conn(1024);
    c.handle_bytes(now, b"{\"id\":\xff}\n");
    let out: serde_json::Value = serde_json::from_slice(&output(&mut c)).unwrap();
    assert_eq!(out["error"]["code"], ErrorObject::PARSE_ERROR);
    assert_eq!(out["id"], serde_json::Value::Null);
}

#[test]
fn eof_delivers_a_final_unterminated_line_then_closes() {
    let (mut c, now) = conn(1 << 16);
    c.handle_bytes(now, INIT.as_bytes());
    c.handle_eof(now, Some("stdin closed".into()));
    assert_eq!(c.session().state(), ServerState::Closed);
    let events: Vec<_> = std::iter::from_fn(|| c.poll_event()).collect();
    assert!(matches!(events[0], Event::InitializeAnswered { .. }));
    assert!(
        matches!(&events[1], Event::Closed { reason: CloseReason::TransportClosed { detail: Some(d) } } if d == "stdin closed")
    );
    assert!(
        output(&mut c).is_empty(),
        "the closed transport gets nothing"
    );
}
