//! The Streamable HTTP server's response streams, one scenario per test: JSON or SSE per
//! POST, the GET stream, resumption, cancellation.

use serde_json::{Value, json};

use super::harness::config;
use super::http::call;
use super::http_harness::{ACCEPT_BOTH, Http, JSON};
use crate::jsonrpc::to_raw;
use crate::server::Event;
use crate::server::http::{HttpEvent, HttpServerConfig};
use crate::time::Duration;

#[test]
fn a_request_answered_alone_gets_one_json_body() {
    let mut h = Http::new();
    let (sid, key) = h.initialize("2025-11-25", json!({}));
    let r = h.post(Some(&sid), &call(7, "echo"));
    assert_eq!(h.seen(r).status, None, "nothing until the host answers");
    let [(k, id, ref method)] = h.host_requests()[..] else {
        panic!()
    };
    assert_eq!((k, method.as_str()), (key, "tools/call"));
    h.answer_empty(key, id);
    let seen = h.seen(r);
    assert_eq!(seen.status, Some(200));
    assert_eq!(seen.header("content-type"), Some("application/json"));
    assert_eq!(seen.header("mcp-session-id"), Some(sid.as_str()));
    assert_eq!(
        seen.json(),
        json!({"jsonrpc": "2.0", "id": 7, "result": {"content": []}})
    );
    assert!(seen.ended);
}

#[test]
fn a_server_request_related_to_a_call_switches_the_post_to_sse() {
    let mut h = Http::new();
    let (sid, key) = h.initialize("2025-11-25", json!({"sampling": {}}));
    let r = h.post(Some(&sid), &call(3, "ask"));
    let [(_, id, _)] = h.host_requests()[..] else {
        panic!()
    };
    let handle = h.ask_sampling(key, id);
    let seen = h.seen(r);
    assert_eq!(seen.status, Some(200));
    assert_eq!(seen.header("content-type"), Some("text/event-stream"));
    let events = seen.events();
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0].1["method"], "sampling/createMessage");
    assert!(!seen.ended);
    // The client answers with a POST of its own: 202, and the host sees the completion.
    let wire = events[0].1["id"].clone();
    let a = h.post(Some(&sid), &json!({"jsonrpc": "2.0", "id": wire, "result": {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"}}));
    assert_eq!(h.status(a), 202);
    assert!(h.events.iter().any(|e| matches!(e, HttpEvent::Session { event: Event::Completed { handle: done, result: Ok(_) }, .. } if *done == handle)));
    h.answer_empty(key, id);
    let seen = h.seen(r);
    let events = seen.events();
    assert_eq!(events.last().unwrap().1["id"], 3);
    assert!(seen.ended, "the stream ends after the answer");
}

#[test]
fn progress_of_a_call_goes_on_its_post_stream() {
    let mut h = Http::new();
    let (sid, key) = h.initialize("2025-11-25", json!({}));
    let r = h.post(
        Some(&sid),
        &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "slow", "_meta": {"progressToken": "p"}}}),
    );
    let [(_, id, _)] = h.host_requests()[..] else {
        panic!()
    };
    let get = h.send("GET", &[ACCEPT_BOTH, ("mcp-session-id", &sid)], b"");
    let now = h.now;
    let s = h.server.session_mut(key).unwrap();
    s.notify_progress(now, id, 1.0, Some(2.0), None).unwrap();
    s.respond(now, id, to_raw(&json!({"content": []})).unwrap())
        .unwrap();
    h.drain();
    let events = h.seen(r).events();
    assert_eq!(events[0].1["method"], "notifications/progress");
    assert_eq!(events[1].1["id"], 1);
    assert!(h.seen(r).ended);
    assert!(h.seen(get).events().is_empty(), "nothing on the GET stream");
}

#[test]
fn a_json_only_client_gets_related_messages_on_the_get_stream() {
    let mut h = Http::new();
    let (sid, key) = h.initialize("2025-11-25", json!({"sampling": {}}));
    let r = h.post_accepting(&sid, "application/json", &call(1, "ask"));
    let [(_, id, _)] = h.host_requests()[..] else {
        panic!()
    };
    let get = h.get_stream(&sid);
    h.ask_sampling(key, id);
    assert_eq!(h.seen(r).status, None, "still waiting for its JSON answer");
    assert_eq!(
        h.seen(get).events()[0].1["method"],
        "sampling/createMessage"
    );
}

#[test]
fn unrelated_messages_go_to_the_get_stream_and_wait_for_it() {
    let mut h = Http::new();
    let (sid, key) = h.initialize("2025-11-25", json!({}));
    let now = h.now;
    h.server
        .session_mut(key)
        .unwrap()
        .notify(now, "notifications/tools/list_changed", None)
        .unwrap();
    h.drain();
    let get = h.get_stream(&sid);
    let seen = h.seen(get);
    assert_eq!(seen.status, Some(200));
    assert_eq!(seen.header("content-type"), Some("text/event-stream"));
    assert_eq!(seen.header("mcp-session-id"), Some(sid.as_str()));
    let events = seen.events();
    assert_eq!(events.len(), 1, "the backlog comes first: {events:?}");
    assert_eq!(events[0].1["method"], "notifications/tools/list_changed");
    h.server
        .session_mut(key)
        .unwrap()
        .notify(now, "notifications/resources/list_changed", None)
        .unwrap();
    h.drain();
    assert_eq!(h.seen(get).events().len(), 2, "live after that");
    let second = h.get_stream(&sid);
    assert_eq!(h.status(second), 409, "one GET stream per session");
}

#[test]
fn get_is_405_when_disabled_and_406_without_sse() {
    let mut h = Http::with_config(HttpServerConfig::new(config()).with_get_stream(false));
    let (sid, _) = h.initialize("2025-11-25", json!({}));
    let r = h.get_stream(&sid);
    assert_eq!(h.status(r), 405);
    assert_eq!(h.seen(r).header("allow"), Some("POST, DELETE"));
    let mut h = Http::new();
    let (sid, _) = h.initialize("2025-11-25", json!({}));
    let r = h.send(
        "GET",
        &[("accept", "application/json"), ("mcp-session-id", &sid)],
        b"",
    );
    assert_eq!(h.status(r), 406);
}

#[test]
fn last_event_id_replays_the_rest_of_a_dropped_post_stream() {
    let mut h = Http::new();
    let (sid, key) = h.initialize("2025-11-25", json!({}));
    let r = h.post(
        Some(&sid),
        &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "slow", "_meta": {"progressToken": 9}}}),
    );
    let [(_, id, _)] = h.host_requests()[..] else {
        panic!()
    };
    let now = h.now;
    h.server
        .session_mut(key)
        .unwrap()
        .notify_progress(now, id, 1.0, None, None)
        .unwrap();
    h.drain();
    let first = h.seen(r).events();
    let last_id = first[0].0.clone();
    // The client's connection drops; the work goes on.
    h.server.handle_response_closed(now, r);
    let s = h.server.session_mut(key).unwrap();
    s.notify_progress(now, id, 2.0, None, None).unwrap();
    s.respond(now, id, to_raw(&json!({"content": []})).unwrap())
        .unwrap();
    h.drain();
    let resumed = h.resume(&sid, &last_id);
    let seen = h.seen(resumed);
    assert_eq!(seen.status, Some(200));
    let events = seen.events();
    assert_eq!(events.len(), 2, "{events:?}");
    assert_eq!(events[0].1["params"]["progress"], 2.0);
    assert_eq!(events[1].1["id"], 1);
    assert!(seen.ended, "the stream had ended: the replay ends too");
    assert_ne!(events[0].0, last_id, "event ids are unique");
}

#[test]
fn a_bogus_last_event_id_is_400() {
    let mut h = Http::new();
    let (sid, _) = h.initialize("2025-11-25", json!({}));
    for bogus in ["x", "99-1", "0-99", "-", "1-1-1"] {
        let r = h.resume(&sid, bogus);
        assert_eq!(h.status(r), 400, "{bogus}");
    }
}

#[test]
fn a_batch_is_answered_as_one_json_array() {
    let mut h = Http::new();
    let (sid, key) = h.initialize("2025-03-26", json!({}));
    let r = h.post_accepting(
        &sid,
        "application/json",
        &json!([call(1, "a"), {"jsonrpc": "2.0", "id": 2, "method": "ping"}]),
    );
    let [(_, id, _)] = h.host_requests()[..] else {
        panic!()
    };
    assert_eq!(
        h.seen(r).status,
        None,
        "the ping is answered, the call not yet"
    );
    h.answer_empty(key, id);
    let body = h.seen(r).json();
    let ids: Vec<&Value> = body.as_array().unwrap().iter().map(|m| &m["id"]).collect();
    assert_eq!(ids, [&json!(2), &json!(1)]);
}

#[test]
fn a_cancelled_call_ends_its_post_without_an_answer() {
    let mut h = Http::new();
    let (sid, key) = h.initialize("2025-11-25", json!({}));
    let r = h.post(Some(&sid), &call(5, "slow"));
    let [(_, id, _)] = h.host_requests()[..] else {
        panic!()
    };
    let c = h.post(
        Some(&sid),
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 5}}),
    );
    assert_eq!(h.status(c), 202);
    let seen = h.seen(r);
    assert!(
        seen.ended,
        "the POST does not wait for an answer that will not come"
    );
    assert!(seen.events().is_empty());
    let now = h.now;
    let late = h
        .server
        .session_mut(key)
        .unwrap()
        .respond(now, id, to_raw(&json!({})).unwrap());
    assert!(late.is_err(), "the late answer is dropped");
    h.drain();
    assert!(h.seen(r).events().is_empty());
}

#[test]
fn a_client_that_accepts_only_sse_gets_its_answer_as_an_event() {
    let mut h = Http::new();
    let (sid, key) = h.initialize("2025-11-25", json!({}));
    let r = h.post_accepting(&sid, "text/event-stream", &call(2, "echo"));
    let [(_, id, _)] = h.host_requests()[..] else {
        panic!()
    };
    h.answer_empty(key, id);
    let seen = h.seen(r);
    assert_eq!(seen.header("content-type"), Some("text/event-stream"));
    let events = seen.events();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].1["id"], 2);
    assert!(seen.ended);
}

#[test]
fn the_get_stream_resumes_after_its_last_event_id() {
    let mut h = Http::new();
    let (sid, key) = h.initialize("2025-11-25", json!({}));
    let get = h.get_stream(&sid);
    let now = h.now;
    for list in ["tools", "resources"] {
        let method = format!("notifications/{list}/list_changed");
        h.server
            .session_mut(key)
            .unwrap()
            .notify(now, method, None)
            .unwrap();
    }
    h.drain();
    let first = h.seen(get).events();
    assert_eq!(first.len(), 2);
    h.server.handle_response_closed(now, get);
    h.server
        .session_mut(key)
        .unwrap()
        .notify(now, "notifications/prompts/list_changed", None)
        .unwrap();
    h.drain();
    let again = h.send(
        "GET",
        &[
            ("accept", "text/event-stream"),
            ("mcp-session-id", &sid),
            ("last-event-id", &first[0].0),
        ],
        b"",
    );
    let seen = h.seen(again);
    assert_eq!(seen.status, Some(200));
    let methods: Vec<Value> = seen
        .events()
        .into_iter()
        .map(|(_, m)| m["method"].clone())
        .collect();
    assert_eq!(
        methods,
        [
            json!("notifications/resources/list_changed"),
            json!("notifications/prompts/list_changed")
        ]
    );
    assert!(!seen.ended, "the GET stream stays open");
    h.server
        .session_mut(key)
        .unwrap()
        .notify(now, "notifications/tools/list_changed", None)
        .unwrap();
    h.drain();
    assert_eq!(h.seen(again).events().len(), 3, "and live again");
}

#[test]
fn a_request_id_still_open_is_refused_on_the_new_post_and_the_first_keeps_its_answer() {
    let mut h = Http::new();
    let (sid, key) = h.initialize("2025-11-25", json!({}));
    let first = h.post(Some(&sid), &call(9, "slow"));
    let [(_, id, _)] = h.host_requests()[..] else {
        panic!()
    };
    let again = h.post(Some(&sid), &call(9, "slow"));
    let seen = h.seen(again);
    assert_eq!(seen.status, Some(200));
    let refusal = seen.json();
    assert_eq!(refusal["id"], 9);
    assert!(refusal["error"]["code"].is_i64(), "{refusal}");
    assert_eq!(h.seen(first).status, None, "the first still waits");
    h.answer_empty(key, id);
    assert_eq!(h.seen(first).json()["result"], json!({"content": []}));
}

#[test]
fn a_request_stream_closed_by_the_server_is_resumed_with_its_answer() {
    let config = HttpServerConfig::new(config()).with_retry(Some(Duration::from_millis(500)));
    let mut h = Http::with_config(config);
    let (sid, key) = h.initialize("2025-11-25", json!({}));
    let r = h.post(
        Some(&sid),
        &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "poll"}}),
    );
    let [(_, id, _)] = h.host_requests()[..] else {
        panic!()
    };
    assert!(h.server.close_request_stream(key, id));
    h.drain();
    let seen = h.seen(r);
    assert_eq!(seen.status, Some(200));
    assert_eq!(seen.header("content-type"), Some("text/event-stream"));
    assert_eq!(seen.header("mcp-session-id"), Some(sid.as_str()));
    assert!(seen.ended, "the connection is closed");
    let body = String::from_utf8(seen.body.clone()).unwrap();
    // Only the priming event: an id, the retry delay, empty data.
    let priming_id = body
        .strip_prefix("id: ")
        .and_then(|rest| rest.strip_suffix("\nretry: 500\ndata: \n\n"))
        .unwrap_or_else(|| panic!("a priming event with retry, got {body:?}"))
        .to_owned();
    // Closing again: the connection is gone already, the stream still waits.
    assert!(h.server.close_request_stream(key, id));
    h.drain();
    h.answer_empty(key, id);
    let resumed = h.resume(&sid, &priming_id);
    let seen = h.seen(resumed);
    assert_eq!(seen.status, Some(200));
    let events = seen.events();
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0].1["id"], 1);
    assert_eq!(events[0].1["result"], json!({"content": []}));
    assert!(seen.ended, "the answer ends the resumed stream");
    // Answered: nothing left to close.
    assert!(!h.server.close_request_stream(key, id));
}

#[test]
fn a_request_stream_is_not_closed_before_2025_11_25_or_for_a_json_only_client() {
    let mut h = Http::new();
    let (sid, key) = h.initialize("2025-06-18", json!({}));
    let r = h.post(
        Some(&sid),
        &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "poll"}}),
    );
    let [(_, id, _)] = h.host_requests()[..] else {
        panic!()
    };
    // No priming event, so no event id a client could resume from.
    assert!(!h.server.close_request_stream(key, id));
    h.drain();
    assert_eq!(h.seen(r).status, None, "still open, undecided");
    h.answer_empty(key, id);
    assert_eq!(h.seen(r).json()["id"], 1);

    let mut h = Http::new();
    let (sid, key) = h.initialize("2025-11-25", json!({}));
    let r = h.send(
        "POST",
        &[
            ("accept", "application/json"),
            JSON,
            ("mcp-session-id", &sid),
        ],
        br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"poll"}}"#,
    );
    let [(_, id, _)] = h.host_requests()[..] else {
        panic!()
    };
    assert!(!h.server.close_request_stream(key, id), "no SSE accepted");
    h.drain();
    assert!(!h.seen(r).ended);
}
