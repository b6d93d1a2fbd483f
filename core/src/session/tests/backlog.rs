//! A peer that floods the client with requests and never reads: the outbound queue stays
//! bounded, its requests are dropped with a diagnostic, and the session is declared stalled
//! when nothing is pulled for the stall timeout; the caller's own notifications are refused
//! past the same budget.

use super::*;

const LIMIT: usize = 64 * 1024;
const STALL: Duration = Duration::from_secs(5);

/// A ready session whose transport pulls nothing unless told to.
fn stuck() -> (Session, Instant) {
    let t0 = Instant::now();
    let config = config()
        .with_max_outbound_bytes(LIMIT)
        .with_stall_timeout(Some(STALL));
    let mut s = Session::new(config, t0);
    let mut buf = Vec::new();
    while s.poll_transmit(&mut buf).is_some() {}
    let init = json!({"jsonrpc": "2.0", "id": 0, "result": init_result("2025-11-25")});
    s.handle_message(t0, init.to_string().as_bytes());
    while s.poll_transmit(&mut buf).is_some() {}
    while s.poll_event().is_some() {}
    (s, t0)
}

fn ping(n: u64) -> Vec<u8> {
    format!(r#"{{"jsonrpc":"2.0","id":"flood-{n}","method":"ping"}}"#).into_bytes()
}

fn events(s: &mut Session) -> Vec<Event> {
    std::iter::from_fn(|| s.poll_event()).collect()
}

#[test]
fn a_ping_flood_nobody_reads_stays_bounded_then_stalls() {
    let (mut s, t0) = stuck();
    let call = s
        .send_request(t0, "tools/call", None, RequestOptions::new().no_timeout())
        .unwrap();
    for n in 0..100_000 {
        s.handle_message(t0, &ping(n));
    }
    assert!(
        s.outbound.bytes() <= LIMIT + 256,
        "queued {} bytes",
        s.outbound.bytes()
    );
    let seen = events(&mut s);
    let full: Vec<_> = seen
        .iter()
        .filter(|e| matches!(e, Event::Diagnostic(Diagnostic::OutboundQueueFull { .. })))
        .collect();
    assert_eq!(
        full.len(),
        1,
        "one diagnostic for the whole flood: {full:?}"
    );
    assert_eq!(s.poll_timeout(), Some(t0 + STALL));
    // Nothing pulled until the deadline: stalled, and the pending call fails with the reason.
    s.handle_timeout(t0 + STALL);
    let seen = events(&mut s);
    let stalled = |r: &CloseReason| {
        matches!(r, CloseReason::Stalled { after, queued, dropped }
            if *after == STALL && *queued > LIMIT / 2 && *dropped > 90_000)
    };
    assert!(
        seen.iter().any(|e| matches!(e,
            Event::Completed { handle, result: Err(RequestError::Closed(r)) }
                if *handle == call && stalled(r))),
        "{seen:?}"
    );
    assert!(
        matches!(seen.last(), Some(Event::Closed { reason }) if stalled(reason)),
        "{seen:?}"
    );
    let mut buf = Vec::new();
    assert!(s.poll_transmit(&mut buf).is_none(), "nothing left to send");
}

#[test]
fn a_peer_that_reads_again_ends_the_drops_and_the_deadline() {
    let (mut s, t0) = stuck();
    for n in 0..10_000 {
        s.handle_message(t0, &ping(n));
    }
    assert!(s.poll_timeout().is_some());
    // Pulls before the deadline are progress: the deadline moves on instead of closing.
    let mut buf = Vec::new();
    for _ in 0..10 {
        let _ = s.poll_transmit(&mut buf);
    }
    s.handle_timeout(t0 + STALL);
    assert!(!s.is_closed());
    assert_eq!(s.poll_timeout(), Some(t0 + STALL + STALL));
    // Draining to half the limit ends the episode, with the count of dropped requests.
    while s.outbound.bytes() > LIMIT / 2 {
        let _ = s.poll_transmit(&mut buf);
    }
    let _ = s.poll_transmit(&mut buf);
    let seen = events(&mut s);
    let count = seen.iter().find_map(|e| match e {
        Event::Diagnostic(Diagnostic::ServerRequestsDropped { count }) => Some(*count),
        _ => None,
    });
    assert!(count.is_some_and(|c| c > 0), "{seen:?}");
    assert_eq!(s.poll_timeout(), None);
    // New pings are answered again.
    while s.poll_transmit(&mut buf).is_some() {}
    s.handle_message(t0, &ping(99_999));
    buf.clear();
    let out = s.poll_transmit(&mut buf).expect("the ping is answered");
    assert_eq!(out.kind, MessageKind::Response);
    assert!(String::from_utf8_lossy(&buf).contains("flood-99999"));
}

#[test]
fn notifications_the_peer_does_not_read_are_refused_past_the_budget_not_queued() {
    let (mut s, t0) = stuck();
    let params = RawValue::from_string(format!(r#"{{"pad":"{}"}}"#, "x".repeat(1000))).unwrap();
    let mut refused = 0;
    for _ in 0..1000 {
        match s.notify(t0, "notifications/roots/list_changed", Some(params.clone())) {
            Ok(()) => {}
            Err(UsageError::OutboundFull { limit }) => {
                assert_eq!(limit, LIMIT);
                refused += 1;
            }
            Err(other) => panic!("{other:?}"),
        }
    }
    assert!(refused > 900, "refused {refused} of 1000");
    assert!(
        s.outbound.bytes() <= LIMIT + 2048,
        "queued {} bytes",
        s.outbound.bytes()
    );
    // The peer reads a little: still refused until the queue drained to half the budget.
    let mut buf = Vec::new();
    while s.outbound.bytes() > LIMIT * 3 / 4 {
        assert!(s.poll_transmit(&mut buf).is_some());
    }
    assert_eq!(
        s.notify(t0, "notifications/roots/list_changed", Some(params.clone())),
        Err(UsageError::OutboundFull { limit: LIMIT })
    );
    // Once the peer read it down, notifications are taken again.
    while s.poll_transmit(&mut buf).is_some() {}
    assert_eq!(
        s.notify(t0, "notifications/roots/list_changed", Some(params)),
        Ok(())
    );
}
