//! Requests past the in-flight cap wait their turn, in order, bounded by their own deadline.

use super::*;

/// A ready session with room for 4 requests in flight.
fn capped() -> Harness {
    Harness::ready(config().with_max_in_flight(4, 16), "2025-11-25")
}

fn tool_calls_sent(h: &Harness) -> Vec<RequestHandle> {
    h.sent
        .iter()
        .filter(|(o, v)| v["method"] == "tools/call" && o.request.is_some())
        .filter_map(|(o, _)| o.request)
        .collect()
}

#[test]
fn the_fifth_call_waits_and_is_sent_when_one_is_answered() {
    let mut h = capped();
    let first: Vec<_> = (0..4)
        .map(|_| h.send("tools/call", json!({}), RequestOptions::new()))
        .collect();
    let fifth = h.send("tools/call", json!({}), RequestOptions::new());
    assert_eq!(tool_calls_sent(&h), first, "the fifth is held, not sent");
    assert_eq!((h.session.in_flight(), h.session.held()), (5, 1));
    h.respond_ok(first[2], json!({"n": 2}));
    assert_eq!(h.completions(first[2]).len(), 1);
    assert_eq!(
        tool_calls_sent(&h).last(),
        Some(&fifth),
        "room made: the fifth is sent"
    );
    assert_eq!(h.session.held(), 0);
    h.respond_ok(fifth, json!({"n": 5}));
    match h.completions(fifth).as_slice() {
        [Ok(raw)] => assert_eq!(raw.get(), r#"{"n":5}"#),
        other => panic!("expected one result, got {other:?}"),
    }
}

#[test]
fn held_calls_are_sent_in_the_order_they_were_issued() {
    let mut h = capped();
    let first: Vec<_> = (0..4)
        .map(|_| h.send("tools/call", json!({}), RequestOptions::new()))
        .collect();
    let held: Vec<_> = (0..3)
        .map(|_| h.send("tools/call", json!({}), RequestOptions::new()))
        .collect();
    for (i, done) in first.iter().enumerate().take(3) {
        h.respond_ok(*done, json!({}));
        assert_eq!(tool_calls_sent(&h)[4..], held[..=i]);
    }
}

#[test]
fn a_held_call_times_out_like_any_call_and_is_never_sent() {
    let mut h = capped();
    for _ in 0..4 {
        h.send("tools/call", json!({}), RequestOptions::new().no_timeout());
    }
    let held = h.send(
        "tools/call",
        json!({}),
        RequestOptions::new().timeout(Duration::from_secs(5)),
    );
    h.advance(Duration::from_secs(4));
    assert!(h.completions(held).is_empty());
    h.advance(Duration::from_secs(1));
    match h.completions(held).as_slice() {
        [
            Err(RequestError::Timeout {
                after,
                total: false,
            }),
        ] => {
            assert_eq!(*after, Duration::from_secs(5));
        }
        other => panic!("expected a timeout, got {other:?}"),
    }
    assert!(!tool_calls_sent(&h).contains(&held));
    assert!(
        !h.sent_methods()
            .contains(&"notifications/cancelled".to_owned()),
        "the server never heard of it"
    );
    assert_eq!((h.session.in_flight(), h.session.held()), (4, 0));
}

#[test]
fn the_deadline_of_a_held_call_runs_from_its_issue() {
    let mut h = capped();
    let first: Vec<_> = (0..4)
        .map(|_| h.send("tools/call", json!({}), RequestOptions::new().no_timeout()))
        .collect();
    let held = h.send(
        "tools/call",
        json!({}),
        RequestOptions::new().timeout(Duration::from_secs(5)),
    );
    h.advance(Duration::from_secs(3));
    h.respond_ok(first[0], json!({}));
    assert_eq!(
        tool_calls_sent(&h).last(),
        Some(&held),
        "admitted after 3 s"
    );
    h.advance(Duration::from_secs(2));
    assert!(
        matches!(
            h.completions(held).as_slice(),
            [Err(RequestError::Timeout { .. })]
        ),
        "5 s after it was issued, the wait included"
    );
    assert!(
        h.sent_methods()
            .contains(&"notifications/cancelled".to_owned())
    );
}

#[test]
fn a_cancelled_held_call_leaves_no_trace_and_frees_its_place() {
    let mut h = capped();
    let first: Vec<_> = (0..4)
        .map(|_| h.send("tools/call", json!({}), RequestOptions::new()))
        .collect();
    let dropped = h.send("tools/call", json!({}), RequestOptions::new());
    let next = h.send("tools/call", json!({}), RequestOptions::new());
    h.session
        .cancel(h.now, dropped, Some("dropped".into()))
        .expect("pending");
    h.drain();
    assert!(matches!(
        h.completions(dropped).as_slice(),
        [Err(RequestError::Cancelled { .. })]
    ));
    assert_eq!((h.session.in_flight(), h.session.held()), (5, 1));
    h.respond_ok(first[0], json!({}));
    assert_eq!(
        tool_calls_sent(&h)[4..],
        [next],
        "the one behind it goes first"
    );
    assert!(
        !h.sent_methods()
            .contains(&"notifications/cancelled".to_owned())
    );
}

#[test]
fn many_dropped_held_calls_do_not_grow_the_queue() {
    let mut h = capped();
    for _ in 0..4 {
        h.send("tools/call", json!({}), RequestOptions::new());
    }
    for _ in 0..10_000 {
        let held = h.send("tools/call", json!({}), RequestOptions::new());
        h.session.cancel(h.now, held, None).expect("pending");
        h.drain();
    }
    assert_eq!((h.session.in_flight(), h.session.held()), (4, 0));
    assert!(h.session.held.queue_len() <= 64 + 1);
}

#[test]
fn past_the_held_limit_a_call_fails_at_once() {
    let mut h = Harness::ready(config().with_max_in_flight(2, 1), "2025-11-25");
    h.send("tools/call", json!({}), RequestOptions::new());
    h.send("tools/call", json!({}), RequestOptions::new());
    h.send("tools/call", json!({}), RequestOptions::new());
    assert_eq!(
        h.session
            .send_request(h.now, "tools/call", None, RequestOptions::new()),
        Err(UsageError::TooManyInFlight { limit: 3 })
    );
}

#[test]
fn calls_held_during_the_handshake_follow_it_and_close_completes_them() {
    let mut h = Harness::new(config().with_max_in_flight(1, 8));
    let a = h
        .session
        .send_request(h.now, "tools/list", None, RequestOptions::new())
        .expect("waits for the handshake");
    let b = h
        .session
        .send_request(h.now, "tools/list", None, RequestOptions::new())
        .expect("held");
    assert_eq!(h.session.held(), 1);
    h.answer_initialize("2025-11-25");
    h.drain();
    let sent: Vec<_> = h.sent.iter().filter_map(|(o, _)| o.request).collect();
    assert_eq!(sent, [a], "only the one in flight");
    h.session.close(h.now);
    h.drain();
    assert_eq!(h.completions(a).len(), 1);
    assert!(matches!(
        h.completions(b).as_slice(),
        [Err(RequestError::Closed(_))]
    ));
}
