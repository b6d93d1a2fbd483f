//! `ConnectionConfig::await_listener`: `Ready` waits for the GET listener to settle.

use serde_json::json;

use super::*;

const WAIT: Duration = Duration::from_secs(2);

fn is_ready(e: &Event) -> bool {
    matches!(e, Event::Session(session::Event::Ready { .. }))
}

fn ready_count(h: &H) -> usize {
    h.events.iter().filter(|e| is_ready(e)).count()
}

fn waiting() -> H {
    let mut config = ConnectionConfig::new(url());
    config.await_listener = Some(WAIT);
    H::with(config)
}

#[test]
fn default_ready_comes_before_the_listener_answers() {
    let mut h = H::new();
    let _listen = h.up_to_listener("2025-11-25", Some("s"));
    assert_eq!(ready_count(&h), 1);
}

#[test]
fn ready_waits_for_the_listener_head_and_comes_before_its_messages() {
    let mut h = waiting();
    let listen = h.up_to_listener("2025-11-25", Some("s"));
    assert_eq!(ready_count(&h), 0, "Ready before the listener settled");
    h.advance(Duration::from_millis(500));
    assert_eq!(ready_count(&h), 0);
    h.head(listen.id, 200, &[("content-type", "text/event-stream")]);
    assert_eq!(ready_count(&h), 1);
    h.chunk(
        listen.id,
        &sse(&[(
            "",
            None,
            &json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}),
        )]),
    );
    let ready_at = h.events.iter().position(is_ready).unwrap();
    let opened_at = h
        .events
        .iter()
        .position(|e| matches!(e, Event::Transport(HttpEvent::ListenerOpened)))
        .unwrap();
    assert!(ready_at < opened_at, "{:?}", h.events);
    assert_eq!(h.notifications(), ["notifications/tools/list_changed"]);
    // The wait is over: no timer is left for it.
    h.advance(WAIT * 2);
    assert_eq!(ready_count(&h), 1);
}

#[test]
fn a_refused_listener_releases_ready() {
    for status in [405, 404, 400] {
        let mut h = waiting();
        let listen = h.up_to_listener("2025-11-25", Some("s"));
        assert_eq!(ready_count(&h), 0);
        h.reply(listen.id, status, &[], b"");
        assert_eq!(ready_count(&h), 1, "status {status}");
    }
}

#[test]
fn a_failed_listener_releases_ready() {
    let mut h = waiting();
    let listen = h.up_to_listener("2025-11-25", Some("s"));
    h.conn.handle_failure(
        h.now,
        listen.id,
        ExchangeFailure::new(FailureKind::Connect, "refused"),
    );
    h.drain();
    assert_eq!(ready_count(&h), 1, "{:?}", h.events);
}

#[test]
fn a_silent_listener_releases_ready_when_the_wait_ends() {
    let mut h = waiting();
    let _listen = h.up_to_listener("2025-11-25", Some("s"));
    let deadline = h.conn.poll_timeout().expect("a deadline for the wait");
    assert!(deadline <= h.now + WAIT, "{deadline:?}");
    h.advance(WAIT - Duration::from_millis(1));
    assert_eq!(ready_count(&h), 0);
    h.advance(Duration::from_millis(1));
    assert_eq!(ready_count(&h), 1);
    // Requests work while the listener is still pending.
    let t = h.send("tools/list", json!({}));
    let x = h.next();
    h.reply_json(
        x.id,
        &json!({"jsonrpc": "2.0", "id": body(&x)["id"], "result": {"tools": []}}),
    );
    assert_eq!(h.completions(t).len(), 1);
}

#[test]
fn without_a_listener_ready_is_not_held() {
    let mut config = ConnectionConfig::new(url());
    config.await_listener = Some(WAIT);
    config.listen = false;
    let mut h = H::with(config);
    let init = h.next();
    let b = body(&init);
    let reply = json!({"jsonrpc": "2.0", "id": b["id"], "result": init_result("2025-11-25")});
    h.reply_json(init.id, &reply);
    assert_eq!(ready_count(&h), 1);
}

#[test]
fn closing_while_held_delivers_ready_then_closed() {
    let mut h = waiting();
    let _listen = h.up_to_listener("2025-11-25", Some("s"));
    h.conn.close(h.now);
    h.drain();
    let ready_at = h.events.iter().position(is_ready);
    let closed_at = h
        .events
        .iter()
        .position(|e| matches!(e, Event::Session(session::Event::Closed { .. })));
    assert!(ready_at.is_some() && closed_at.is_some(), "{:?}", h.events);
    assert!(ready_at < closed_at);
}
