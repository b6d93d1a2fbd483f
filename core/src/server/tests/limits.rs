//! The session's limits in time (handshake deadline, stall close) and the protocol version
//! each server-to-client method needs.

use serde_json::json;

use super::harness::{Client, config};
use crate::jsonrpc::to_raw;
use crate::server::{Event, ServerState, UsageError};
use crate::session::{CloseReason, ProtocolVersion, RequestOptions};
use crate::time::Duration;

fn closed_reason(events: Vec<Event>) -> Option<CloseReason> {
    events.into_iter().find_map(|e| match e {
        Event::Closed { reason } => Some(reason),
        _ => None,
    })
}

#[test]
fn a_client_that_never_initializes_is_closed_at_the_handshake_deadline() {
    let mut c = Client::with_config(config().with_handshake_timeout(Some(Duration::from_secs(5))));
    let start = c.now;
    assert_eq!(
        c.server.poll_timeout(),
        Some(start + Duration::from_secs(5))
    );
    c.request(1, "ping", json!({}));
    c.received();
    c.advance(Duration::from_millis(4_999));
    assert!(!c.server.is_closed());
    c.advance(Duration::from_millis(1));
    assert_eq!(c.server.state(), ServerState::Closed);
    assert_eq!(
        closed_reason(c.events()),
        Some(CloseReason::InitializeNotReceived {
            after: Duration::from_secs(5)
        })
    );
    assert_eq!(c.server.poll_timeout(), None);
}

#[test]
fn initialize_in_time_disarms_the_handshake_deadline() {
    let mut c = Client::with_config(config().with_handshake_timeout(Some(Duration::from_secs(5))));
    c.advance(Duration::from_secs(4));
    c.initialize("2025-11-25", json!({}));
    assert_eq!(c.server.poll_timeout(), None);
    c.advance(Duration::from_secs(60));
    assert_eq!(c.server.state(), ServerState::Initializing);
    assert!(closed_reason(c.events()).is_none());
}

#[test]
fn no_handshake_timeout_waits_forever() {
    let mut c = Client::with_config(config().with_handshake_timeout(None));
    assert_eq!(c.server.poll_timeout(), None);
    c.advance(Duration::from_secs(3600));
    assert!(!c.server.is_closed());
}

/// A ready session whose queue holds 300 bytes and whose stall timeout is 5 s.
fn small_queue() -> Client {
    let mut c = Client::with_config(
        config()
            .with_limits(16, 16, 300)
            .with_stall_timeout(Some(Duration::from_secs(5))),
    );
    c.initialize("2025-11-25", json!({}));
    c.notify("notifications/initialized", json!({}));
    c.events();
    c
}

/// Fills the queue with notifications until the session refuses one.
fn fill(c: &mut Client) -> usize {
    let params = to_raw(&json!({"blob": "x".repeat(40)})).unwrap();
    let mut sent = 0;
    loop {
        match c
            .server
            .notify(c.now, "notifications/custom", Some(params.clone()))
        {
            Ok(()) => sent += 1,
            Err(UsageError::QueueFull { limit: 300 }) => return sent,
            Err(e) => panic!("unexpected {e}"),
        }
    }
}

#[test]
fn a_client_that_stops_reading_a_full_queue_is_closed_as_stalled() {
    let mut c = small_queue();
    assert_eq!(c.server.poll_timeout(), None, "not full: no stall deadline");
    let sent = fill(&mut c);
    assert!(sent >= 2, "{sent}");
    let full_at = c.now;
    assert_eq!(
        c.server.poll_timeout(),
        Some(full_at + Duration::from_secs(5))
    );
    c.advance(Duration::from_secs(5));
    assert!(c.server.is_closed());
    match closed_reason(c.events()) {
        Some(CloseReason::ClientStalled { after, queued }) => {
            assert_eq!(after, Duration::from_secs(5));
            assert!(queued >= 300, "{queued}");
        }
        other => panic!("{other:?}"),
    }
    assert!(
        c.received().is_empty(),
        "what could never be read is dropped"
    );
}

#[test]
fn a_slow_reader_is_not_stalled_and_draining_disarms_the_deadline() {
    let mut c = small_queue();
    c.request(1, "tools/call", json!({"name": "a"}));
    c.request(2, "tools/call", json!({"name": "b"}));
    let ids: Vec<_> = c
        .events()
        .into_iter()
        .filter_map(|e| match e {
            Event::Request { id, .. } => Some(id),
            _ => None,
        })
        .collect();
    fill(&mut c);
    // Answers are queued even when full: the queue is now well over its budget.
    let big = to_raw(&json!({"content": "y".repeat(200)})).unwrap();
    for id in ids {
        c.server.respond(c.now, id, big.clone()).unwrap();
    }
    let armed_at = c.now;
    c.advance(Duration::from_secs(4));
    // One message taken, still over the budget: the client reads, slowly.
    let mut buf = Vec::new();
    assert!(c.server.poll_transmit(&mut buf).is_some());
    c.advance(Duration::from_secs(1));
    assert!(
        !c.server.is_closed(),
        "it read since the deadline was armed"
    );
    assert_eq!(
        c.server.poll_timeout(),
        Some(armed_at + Duration::from_secs(10)),
        "re-armed for another stall timeout"
    );
    c.received();
    assert_eq!(c.server.poll_timeout(), None, "drained: no stall deadline");
    c.advance(Duration::from_secs(60));
    assert!(!c.server.is_closed());
}

#[test]
fn no_stall_timeout_never_closes_a_full_queue() {
    let mut c = Client::with_config(config().with_limits(16, 16, 300).with_stall_timeout(None));
    c.initialize("2025-11-25", json!({}));
    c.notify("notifications/initialized", json!({}));
    fill(&mut c);
    assert_eq!(c.server.poll_timeout(), None);
    c.advance(Duration::from_secs(3600));
    assert!(!c.server.is_closed());
}

fn ready_at(version: &str) -> Client {
    let mut c = Client::new();
    c.initialize(
        version,
        json!({"elicitation": {}, "sampling": {}, "tasks": {}}),
    );
    c.notify("notifications/initialized", json!({}));
    c.events();
    c
}

#[test]
fn elicitation_needs_2025_06_18() {
    let mut c = ready_at("2025-03-26");
    let params = to_raw(&json!({"message": "name?", "requestedSchema": {"type": "object"}}))
        .unwrap()
        .into();
    let err = c
        .server
        .send_request(
            c.now,
            "elicitation/create",
            Some(params),
            RequestOptions::default(),
        )
        .unwrap_err();
    assert_eq!(
        err,
        UsageError::VersionTooOld {
            method: "elicitation/create".into(),
            needs: ProtocolVersion::V2025_06_18,
            negotiated: ProtocolVersion::V2025_03_26,
        }
    );
    assert!(c.received().is_empty(), "nothing was sent");
    assert_eq!(c.server.in_flight(), 0);

    let mut c = ready_at("2025-06-18");
    let params = to_raw(&json!({"message": "name?", "requestedSchema": {"type": "object"}}))
        .unwrap()
        .into();
    c.server
        .send_request(
            c.now,
            "elicitation/create",
            Some(params),
            RequestOptions::default(),
        )
        .expect("2025-06-18 has elicitation");
    assert_eq!(c.one()["method"], "elicitation/create");
}

#[test]
fn task_requests_and_notifications_need_2025_11_25() {
    let mut c = ready_at("2025-06-18");
    let params = to_raw(&json!({"taskId": "t"})).unwrap();
    let err = c
        .server
        .send_request(
            c.now,
            "tasks/get",
            Some(params.clone().into()),
            RequestOptions::default(),
        )
        .unwrap_err();
    assert!(
        matches!(
            err,
            UsageError::VersionTooOld {
                needs: ProtocolVersion::V2025_11_25,
                ..
            }
        ),
        "{err:?}"
    );
    let err = c
        .server
        .notify(c.now, "notifications/tasks/status", Some(params.clone()))
        .unwrap_err();
    assert!(matches!(err, UsageError::VersionTooOld { .. }), "{err:?}");
    // Methods every version has are not refused.
    c.server
        .send_request(
            c.now,
            "sampling/createMessage",
            Some(
                to_raw(&json!({"messages": [], "maxTokens": 1}))
                    .unwrap()
                    .into(),
            ),
            RequestOptions::default(),
        )
        .expect("sampling is in every version");

    let mut c = ready_at("2025-11-25");
    c.server
        .send_request(
            c.now,
            "tasks/get",
            Some(params.into()),
            RequestOptions::default(),
        )
        .expect("2025-11-25 has tasks");
}
