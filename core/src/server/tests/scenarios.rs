//! One scenario per test, driven by a scripted client.

use serde_json::{Value, json};

use super::harness::Client;
use crate::jsonrpc::{ErrorObject, Id, to_raw};
use crate::server::{ClientRequestId, Diagnostic, Event, ListChanged, ServerState, UsageError};
use crate::session::{CloseReason, ProtocolVersion, RequestError, RequestOptions};
use crate::time::Duration;
use crate::types::LoggingLevel;

fn host_request(events: &[Event]) -> (ClientRequestId, String, Option<Id>) {
    events
        .iter()
        .find_map(|e| match e {
            Event::Request {
                id,
                method,
                progress_token,
                ..
            } => Some((*id, method.clone(), progress_token.clone())),
            _ => None,
        })
        .expect("a request for the host")
}

fn completed(events: Vec<Event>) -> Vec<(u64, Result<String, RequestError>)> {
    events
        .into_iter()
        .filter_map(|e| match e {
            Event::Completed { handle, result } => {
                Some((handle.get(), result.map(|r| r.get().to_owned())))
            }
            _ => None,
        })
        .collect()
}

#[test]
fn initialize_answers_each_supported_version_with_itself() {
    for version in ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"] {
        let mut c = Client::new();
        let answer = c.initialize(version, json!({}));
        assert_eq!(answer["id"], 0);
        let result = &answer["result"];
        assert_eq!(result["protocolVersion"], version);
        assert_eq!(result["serverInfo"]["name"], "test-server");
        assert_eq!(result["instructions"], "be kind");
        assert_eq!(result["capabilities"]["tools"]["listChanged"], true);
        assert_eq!(c.server.state(), ServerState::Initializing);
        assert_eq!(
            c.server.protocol_version().map(ProtocolVersion::as_str),
            Some(version)
        );
        assert_eq!(c.server.client_info().unwrap().name, "scripted");
        let events = c.events();
        assert!(
            matches!(&events[..], [Event::InitializeAnswered { version: v }] if v.as_str() == version)
        );
    }
}

#[test]
fn initialize_with_an_unknown_version_is_answered_with_the_latest() {
    for asked in ["2099-01-01", "2026-07-28", "1.0"] {
        let mut c = Client::new();
        let answer = c.initialize(asked, json!({}));
        assert_eq!(answer["result"]["protocolVersion"], "2025-11-25", "{asked}");
    }
}

#[test]
fn notifications_initialized_makes_the_session_ready() {
    let mut c = Client::new();
    c.initialize("2025-06-18", json!({}));
    c.events();
    c.notify("notifications/initialized", json!({}));
    assert!(matches!(&c.events()[..], [Event::Ready]));
    assert_eq!(c.server.state(), ServerState::Ready);
}

#[test]
fn a_request_before_initialize_is_refused_and_ping_is_answered() {
    let mut c = Client::new();
    c.request(1, "tools/list", json!({}));
    let answer = c.one();
    assert_eq!(answer["id"], 1);
    assert_eq!(answer["error"]["code"], ErrorObject::INVALID_REQUEST);
    assert!(
        matches!(&c.events()[..], [Event::Diagnostic(Diagnostic::BeforeInitialize { method })] if method == "tools/list")
    );
    c.request(2, "ping", json!({}));
    assert_eq!(c.one(), json!({"jsonrpc": "2.0", "id": 2, "result": {}}));
    assert_eq!(c.server.state(), ServerState::AwaitingInitialize);
}

#[test]
fn a_second_initialize_is_an_error_and_changes_nothing() {
    let mut c = Client::new();
    c.initialize("2025-03-26", json!({}));
    let again = c.initialize("2025-11-25", json!({}));
    assert_eq!(again["error"]["code"], ErrorObject::INVALID_REQUEST);
    assert_eq!(
        c.server.protocol_version(),
        Some(ProtocolVersion::V2025_03_26)
    );
}

#[test]
fn initialize_with_unreadable_params_is_invalid_params_and_can_be_retried() {
    let mut c = Client::new();
    c.request(0, "initialize", json!({"protocolVersion": 7}));
    assert_eq!(c.one()["error"]["code"], ErrorObject::INVALID_PARAMS);
    assert_eq!(c.server.state(), ServerState::AwaitingInitialize);
    assert_eq!(
        c.initialize("2025-11-25", json!({}))["result"]["protocolVersion"],
        "2025-11-25"
    );
}

#[test]
fn garbage_is_answered_with_a_parse_error_of_null_id() {
    let mut c = Client::new();
    c.server.handle_message(c.now, b"Hello, I am a banner");
    let answer = c.one();
    assert_eq!(answer["id"], Value::Null);
    assert_eq!(answer["error"]["code"], ErrorObject::PARSE_ERROR);
    c.server
        .handle_message(c.now, br#"{"jsonrpc":"2.0","id":null,"method":"x"}"#);
    assert_eq!(c.one()["error"]["code"], ErrorObject::INVALID_REQUEST);
    assert_eq!(c.events().len(), 2);
}

#[test]
fn a_request_goes_to_the_host_and_its_answer_to_the_client() {
    let mut c = Client::ready(json!({}));
    let line = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}"#;
    c.server.handle_message(c.now, line.as_bytes());
    assert!(c.received().is_empty());
    let events = c.events();
    let (id, method, token) = host_request(&events);
    assert_eq!(method, "tools/call");
    assert_eq!(token, None);
    let Event::Request { params, .. } = &events[0] else {
        panic!("{events:?}")
    };
    assert_eq!(
        params.as_ref().unwrap().get(),
        r#"{"name":"echo","arguments":{"text":"hi"}}"#
    );
    assert_eq!(c.server.open_client_requests(), 1);
    let result = to_raw(&json!({"content": [{"type": "text", "text": "hi"}]})).unwrap();
    c.server.respond(c.now, id, result).unwrap();
    let answer = c.one();
    assert_eq!(answer["id"], 7);
    assert_eq!(answer["result"]["content"][0]["text"], "hi");
    assert_eq!(c.server.open_client_requests(), 0);
}

#[test]
fn a_string_id_is_echoed_verbatim_and_an_error_answer_is_sent() {
    let mut c = Client::ready(json!({}));
    c.send(json!({"jsonrpc": "2.0", "id": "abc", "method": "tools/call", "params": {"name": "p"}}));
    let (id, ..) = host_request(&c.events());
    c.server
        .respond_error(
            c.now,
            id,
            ErrorObject::new(ErrorObject::INVALID_PARAMS, "no such prompt"),
        )
        .unwrap();
    let answer = c.one();
    assert_eq!(answer["id"], "abc");
    assert_eq!(answer["error"]["message"], "no such prompt");
}

#[test]
fn a_second_answer_is_a_usage_error_and_sends_nothing() {
    let mut c = Client::ready(json!({}));
    c.request(1, "tools/list", json!({}));
    let (id, ..) = host_request(&c.events());
    c.server
        .respond(c.now, id, crate::jsonrpc::empty_object())
        .unwrap();
    c.received();
    assert_eq!(
        c.server.respond(c.now, id, crate::jsonrpc::empty_object()),
        Err(UsageError::NotOpen(id))
    );
    assert_eq!(
        c.server
            .respond_error(c.now, ClientRequestId(99), ErrorObject::new(1, "x")),
        Err(UsageError::NotOpen(ClientRequestId(99)))
    );
    assert!(c.received().is_empty());
}

#[test]
fn a_duplicate_open_id_is_refused() {
    let mut c = Client::ready(json!({}));
    c.request(1, "tools/list", json!({}));
    c.request(1, "tools/list", json!({}));
    let answer = c.one();
    assert_eq!(answer["error"]["code"], ErrorObject::INVALID_REQUEST);
    assert_eq!(c.server.open_client_requests(), 1);
}

#[test]
fn open_client_requests_are_bounded() {
    let mut c = Client::with_config(super::harness::config().with_limits(2, 4, 1 << 20));
    c.initialize("2025-11-25", json!({}));
    for id in 1..=3 {
        c.request(id, "tools/list", json!({}));
    }
    let answer = c.one();
    assert_eq!(answer["id"], 3);
    assert_eq!(answer["error"]["message"], "too many concurrent requests");
    assert_eq!(c.server.open_client_requests(), 2);
}

#[test]
fn a_client_cancellation_reaches_the_host_and_the_late_answer_is_dropped() {
    let mut c = Client::ready(json!({}));
    c.request(5, "tools/call", json!({"name": "slow"}));
    let (id, ..) = host_request(&c.events());
    c.notify(
        "notifications/cancelled",
        json!({"requestId": 5, "reason": "user"}),
    );
    let events = c.events();
    assert!(
        matches!(&events[..], [Event::RequestCancelled { id: i, reason: Some(r) }] if *i == id && r == "user")
    );
    assert_eq!(
        c.server.respond(c.now, id, crate::jsonrpc::empty_object()),
        Err(UsageError::NotOpen(id))
    );
    assert!(
        c.received().is_empty(),
        "nothing is sent for a cancelled request"
    );
    // A cancellation of an unknown id is ignored.
    c.notify("notifications/cancelled", json!({"requestId": 77}));
    assert!(c.events().is_empty());
}

#[test]
fn progress_to_the_client_uses_its_token_and_must_increase() {
    let mut c = Client::ready(json!({}));
    c.request(
        3,
        "tools/call",
        json!({"name": "long", "_meta": {"progressToken": "tok"}}),
    );
    let (id, _, token) = host_request(&c.events());
    assert_eq!(token, Some(Id::from("tok")));
    c.server
        .notify_progress(c.now, id, 1.0, Some(4.0), Some("one"))
        .unwrap();
    let sent = c.one();
    assert_eq!(sent["method"], "notifications/progress");
    assert_eq!(
        sent["params"],
        json!({"progressToken": "tok", "progress": 1.0, "total": 4.0, "message": "one"})
    );
    assert_eq!(
        c.server.notify_progress(c.now, id, 1.0, None, None),
        Err(UsageError::ProgressNotIncreasing { progress: 1.0 })
    );
    c.server
        .notify_progress(c.now, id, 2.0, None, None)
        .unwrap();
    c.received();
    c.server
        .respond(c.now, id, crate::jsonrpc::empty_object())
        .unwrap();
    assert_eq!(
        c.server.notify_progress(c.now, id, 3.0, None, None),
        Err(UsageError::NotOpen(id))
    );
}

#[test]
fn progress_as_written_keeps_the_members_and_numbers_and_puts_in_the_clients_token() {
    let mut c = Client::ready(json!({}));
    c.request(
        3,
        "tools/call",
        json!({"name": "long", "_meta": {"progressToken": "tok"}}),
    );
    let (id, ..) = host_request(&c.events());
    let upstream = |text: &str| serde_json::value::RawValue::from_string(text.to_owned()).unwrap();
    c.server
        .notify_progress_as_written(
            c.now,
            id,
            &upstream(r#"{"progress":1,"total":2,"progressToken":99,"message":"one"}"#),
        )
        .unwrap();
    let sent = c.sent_text();
    assert!(
        sent.contains(r#""params":{"progress":1,"total":2,"progressToken":"tok","message":"one"}"#),
        "{sent}"
    );
    // The same rules as typed progress.
    assert_eq!(
        c.server.notify_progress_as_written(
            c.now,
            id,
            &upstream(r#"{"progress":1,"progressToken":9}"#)
        ),
        Err(UsageError::ProgressNotIncreasing { progress: 1.0 })
    );
    assert!(matches!(
        c.server
            .notify_progress_as_written(c.now, id, &upstream(r#"{"progressToken":9}"#)),
        Err(UsageError::InvalidParams(_))
    ));
}

#[test]
fn progress_without_a_token_is_a_usage_error() {
    let mut c = Client::ready(json!({}));
    c.request(3, "tools/call", json!({"name": "long"}));
    let (id, ..) = host_request(&c.events());
    assert_eq!(
        c.server.notify_progress(c.now, id, 1.0, None, None),
        Err(UsageError::NoProgressToken(id))
    );
}

#[test]
fn sampling_is_sent_when_declared_and_its_result_completes_the_handle() {
    let mut c = Client::ready(json!({"sampling": {}}));
    let params =
        crate::session::RawParams::encode(&json!({"messages": [], "maxTokens": 10})).unwrap();
    let handle = c
        .server
        .send_request(
            c.now,
            "sampling/createMessage",
            Some(params),
            RequestOptions::new(),
        )
        .unwrap();
    let sent = c.one();
    assert_eq!(sent["method"], "sampling/createMessage");
    assert_eq!(sent["id"], handle.get());
    c.send(json!({"jsonrpc": "2.0", "id": sent["id"], "result": {"role": "assistant", "content": {"type": "text", "text": "ok"}, "model": "m"}}));
    let done = completed(c.events());
    assert_eq!(done.len(), 1);
    assert!(done[0].1.as_ref().unwrap().contains("\"model\":\"m\""));
    assert_eq!(c.server.in_flight(), 0);
    assert!(c.server.poll_timeout().is_none());
}

#[test]
fn a_remote_error_completes_the_handle() {
    let mut c = Client::ready(json!({"roots": {}}));
    let handle = c
        .server
        .send_request(c.now, "roots/list", None, RequestOptions::new())
        .unwrap();
    c.received();
    c.send(json!({"jsonrpc": "2.0", "id": handle.get(), "error": {"code": -1, "message": "no"}}));
    let done = completed(c.events());
    assert!(matches!(&done[..], [(_, Err(RequestError::Remote(e)))] if e.message == "no"));
}

#[test]
fn a_request_needing_an_undeclared_capability_is_refused() {
    let mut c = Client::ready(json!({"roots": {}}));
    for method in ["sampling/createMessage", "elicitation/create", "tasks/list"] {
        assert_eq!(
            c.server
                .send_request(c.now, method, None, RequestOptions::new()),
            Err(UsageError::CapabilityNotDeclared {
                method: method.into()
            })
        );
    }
    assert!(
        c.server
            .send_request(c.now, "roots/list", None, RequestOptions::new())
            .is_ok()
    );
    assert!(
        c.server
            .send_request(c.now, "x/custom", None, RequestOptions::new())
            .is_ok()
    );
}

#[test]
fn requests_other_than_ping_wait_for_notifications_initialized() {
    let mut c = Client::new();
    c.initialize("2025-11-25", json!({"sampling": {}}));
    assert!(matches!(
        c.server
            .send_request(c.now, "sampling/createMessage", None, RequestOptions::new()),
        Err(UsageError::NotReady { .. })
    ));
    assert!(
        c.server
            .send_request(c.now, "ping", None, RequestOptions::new())
            .is_ok()
    );
}

#[test]
fn a_server_request_times_out_and_the_client_is_told() {
    let mut c = Client::ready(json!({"elicitation": {}}));
    let handle = c
        .server
        .send_request(
            c.now,
            "elicitation/create",
            None,
            RequestOptions::new().timeout(Duration::from_secs(5)),
        )
        .unwrap();
    c.received();
    assert_eq!(
        c.server.poll_timeout(),
        Some(c.now + Duration::from_secs(5))
    );
    c.advance(Duration::from_secs(4));
    assert!(completed(c.events()).is_empty(), "early timeout is a no-op");
    c.advance(Duration::from_secs(1));
    let done = completed(c.events());
    assert!(
        matches!(&done[..], [(h, Err(RequestError::Timeout { after, total: false }))] if *h == handle.get() && *after == Duration::from_secs(5))
    );
    let notice = c.one();
    assert_eq!(notice["method"], "notifications/cancelled");
    assert_eq!(notice["params"]["requestId"], handle.get());
    // The late answer is a diagnostic, not a second completion.
    c.send(json!({"jsonrpc": "2.0", "id": handle.get(), "result": {}}));
    assert!(matches!(
        &c.events()[..],
        [Event::Diagnostic(Diagnostic::UnknownResponse { .. })]
    ));
}

#[test]
fn the_host_cancels_a_server_request() {
    let mut c = Client::ready(json!({}));
    let handle = c
        .server
        .send_request(c.now, "ping", None, RequestOptions::new())
        .unwrap();
    c.received();
    c.server
        .cancel(c.now, handle, Some("enough".into()))
        .unwrap();
    let done = completed(c.events());
    assert!(
        matches!(&done[..], [(_, Err(RequestError::Cancelled { reason: Some(r) }))] if r == "enough")
    );
    assert_eq!(
        c.one()["params"],
        json!({"requestId": handle.get(), "reason": "enough"})
    );
    assert_eq!(
        c.server.cancel(c.now, handle, None),
        Err(UsageError::UnknownRequest(handle))
    );
}

#[test]
fn a_request_cancelled_before_it_was_sent_is_never_sent() {
    let mut c = Client::ready(json!({}));
    let handle = c
        .server
        .send_request(c.now, "ping", None, RequestOptions::new())
        .unwrap();
    c.server.cancel(c.now, handle, None).unwrap();
    assert!(c.received().is_empty());
    assert_eq!(completed(c.events()).len(), 1);
}

#[test]
fn client_progress_on_a_server_request_is_an_event_and_restarts_its_timeout() {
    let (mut c, handle) = Client::with_sampling_out();
    let token = handle.get();
    c.now += Duration::from_secs(8);
    c.notify(
        "notifications/progress",
        json!({"progressToken": token, "progress": 1, "total": 2}),
    );
    let events = c.events();
    assert!(
        matches!(&events[..], [Event::Progress { handle: h, progress, total: Some(t), .. }] if *h == handle && *progress == 1.0 && *t == 2.0)
    );
    let start = c.now - Duration::from_secs(8);
    assert_eq!(
        c.server.poll_timeout(),
        Some(start + Duration::from_secs(18))
    );
    c.now += Duration::from_secs(9);
    c.notify(
        "notifications/progress",
        json!({"progressToken": token, "progress": 2}),
    );
    c.events();
    // The next timeout would be at 27 s: the total limit (25 s) wins.
    assert_eq!(
        c.server.poll_timeout(),
        Some(start + Duration::from_secs(25))
    );
    c.now = start + Duration::from_secs(25);
    c.server.handle_timeout(c.now);
    let done = completed(c.events());
    assert!(matches!(
        &done[..],
        [(_, Err(RequestError::Timeout { total: true, .. }))]
    ));
}

#[test]
fn progress_for_an_unknown_token_is_a_diagnostic() {
    let mut c = Client::ready(json!({}));
    c.notify(
        "notifications/progress",
        json!({"progressToken": 42, "progress": 1}),
    );
    assert!(matches!(
        &c.events()[..],
        [Event::Diagnostic(Diagnostic::UnknownProgress)]
    ));
}

#[test]
fn close_completes_pending_requests_then_closes_once() {
    let mut c = Client::ready(json!({"roots": {}}));
    let a = c
        .server
        .send_request(c.now, "roots/list", None, RequestOptions::new())
        .unwrap();
    let b = c
        .server
        .send_request(c.now, "ping", None, RequestOptions::new())
        .unwrap();
    c.received();
    c.server.close(c.now);
    c.server.close(c.now);
    let events = c.events();
    assert_eq!(events.len(), 3, "{events:?}");
    for (event, handle) in events.iter().zip([a, b]) {
        assert!(
            matches!(event, Event::Completed { handle: h, result: Err(RequestError::Closed(CloseReason::Local)) } if *h == handle)
        );
    }
    assert!(matches!(
        events[2],
        Event::Closed {
            reason: CloseReason::Local
        }
    ));
    assert_eq!(
        c.server
            .send_request(c.now, "ping", None, RequestOptions::new()),
        Err(UsageError::Closed)
    );
    assert!(c.server.poll_timeout().is_none());
}

#[test]
fn the_transport_closing_ends_the_session_with_its_detail() {
    let mut c = Client::ready(json!({}));
    let handle = c
        .server
        .send_request(c.now, "ping", None, RequestOptions::new())
        .unwrap();
    c.server
        .handle_transport_closed(c.now, Some("stdin closed".into()));
    let events = c.events();
    assert!(
        matches!(&events[0], Event::Completed { handle: h, result: Err(RequestError::Closed(CloseReason::TransportClosed { .. })) } if *h == handle)
    );
    assert!(
        matches!(&events[1], Event::Closed { reason: CloseReason::TransportClosed { detail: Some(d) } } if d == "stdin closed")
    );
    assert!(
        c.received().is_empty(),
        "nothing is written to a closed transport"
    );
}

#[test]
fn notifications_to_the_client_follow_the_declared_capabilities() {
    let mut c = Client::new();
    assert_eq!(
        c.server.notify_list_changed(c.now, ListChanged::Tools),
        Err(UsageError::NotInitialized)
    );
    c.initialize("2025-11-25", json!({}));
    c.server
        .notify_list_changed(c.now, ListChanged::Tools)
        .unwrap();
    assert_eq!(c.one()["method"], "notifications/tools/list_changed");
    assert!(matches!(
        c.server.notify_list_changed(c.now, ListChanged::Prompts),
        Err(UsageError::CapabilityNotDeclared { .. })
    ));
    c.server
        .notify_resource_updated(c.now, "file:///a")
        .unwrap();
    assert_eq!(c.one()["params"], json!({"uri": "file:///a"}));
    assert_eq!(
        c.server.notify(c.now, "notifications/progress", None),
        Err(UsageError::ReservedMethod("notifications/progress".into()))
    );
    c.server
        .notify(c.now, "notifications/custom", None)
        .unwrap();
    assert_eq!(c.one()["method"], "notifications/custom");
}

#[test]
fn log_messages_honour_the_level_the_client_set() {
    let mut c = Client::ready(json!({}));
    let data = to_raw(&json!("disk almost full")).unwrap();
    assert_eq!(
        c.server.log(c.now, LoggingLevel::Debug, None, &data),
        Ok(true)
    );
    c.received();
    c.request(9, "logging/setLevel", json!({"level": "warning"}));
    assert_eq!(c.one(), json!({"jsonrpc": "2.0", "id": 9, "result": {}}));
    assert!(matches!(
        &c.events()[..],
        [Event::LogLevel {
            level: LoggingLevel::Warning
        }]
    ));
    assert_eq!(
        c.server.log(c.now, LoggingLevel::Info, None, &data),
        Ok(false)
    );
    assert!(c.received().is_empty());
    assert_eq!(
        c.server
            .log(c.now, LoggingLevel::Error, Some("disk"), &data),
        Ok(true)
    );
    assert_eq!(
        c.one()["params"],
        json!({"level": "error", "logger": "disk", "data": "disk almost full"})
    );
    c.request(10, "logging/setLevel", json!({"level": "loud"}));
    assert_eq!(c.one()["error"]["code"], ErrorObject::INVALID_PARAMS);
}

#[test]
fn a_client_that_does_not_read_cannot_grow_the_queue() {
    let mut c = Client::with_config(super::harness::config().with_limits(8, 8, 4096));
    c.initialize("2025-11-25", json!({}));
    for id in 1..10_000u64 {
        c.request(id, "ping", json!({}));
    }
    let events = c.events();
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::Diagnostic(Diagnostic::OutboundQueueFull { .. })))
    );
    let answers = c.received();
    assert!(answers.len() < 200, "{} answers queued", answers.len());
    assert_eq!(
        c.server.notify(c.now, "notifications/custom", None),
        Ok(()),
        "room again once the client read"
    );
}

#[test]
fn a_batch_is_handled_element_by_element() {
    let mut c = Client::new();
    c.server.handle_message(
        c.now,
        br#"[{"jsonrpc":"2.0","id":1,"method":"ping"},7,{"jsonrpc":"2.0","id":2,"method":"ping"}]"#,
    );
    let answers = c.received();
    assert_eq!(answers.len(), 3);
    assert_eq!(answers[0]["id"], 1);
    assert_eq!(answers[1]["error"]["code"], ErrorObject::INVALID_REQUEST);
    assert_eq!(answers[2]["id"], 2);
}

#[test]
fn a_method_of_an_undeclared_capability_is_method_not_found() {
    // The test server declares tools and resources (with subscribe), not prompts.
    let mut c = Client::ready(json!({}));
    c.request(1, "prompts/list", json!({}));
    assert_eq!(c.one()["error"]["code"], ErrorObject::METHOD_NOT_FOUND);
    c.request(2, "completion/complete", json!({}));
    assert_eq!(c.one()["error"]["code"], ErrorObject::METHOD_NOT_FOUND);
    c.request(3, "resources/subscribe", json!({"uri": "file:///a"}));
    c.request(4, "tools/list", json!({}));
    c.request(5, "vendor/thing", json!({}));
    assert!(c.received().is_empty());
    let methods: Vec<String> = c
        .events()
        .into_iter()
        .filter_map(|e| match e {
            Event::Request { method, .. } => Some(method),
            _ => None,
        })
        .collect();
    assert_eq!(
        methods,
        ["resources/subscribe", "tools/list", "vendor/thing"]
    );
}

#[test]
fn wire_id_names_an_open_request_as_the_client_sent_it_until_it_ends() {
    let mut c = Client::ready(json!({}));
    c.send(
        json!({"jsonrpc": "2.0", "id": "call-a", "method": "tools/call",
                  "params": {"name": "echo"}}),
    );
    let (answered, _, _) = host_request(&c.events());
    c.request(7, "tools/call", json!({"name": "echo"}));
    let (cancelled, _, _) = host_request(&c.events());
    assert_eq!(c.server.wire_id(answered), Some(&Id::from("call-a")));
    assert_eq!(c.server.wire_id(cancelled), Some(&Id::from(7)));

    let result = to_raw(&json!({"content": []})).unwrap();
    c.server.respond(c.now, answered, result).unwrap();
    assert_eq!(c.server.wire_id(answered), None, "answered");
    c.notify("notifications/cancelled", json!({"requestId": 7}));
    assert_eq!(c.server.wire_id(cancelled), None, "cancelled");
    assert_eq!(
        c.server.wire_id(ClientRequestId(99)),
        None,
        "never handed over"
    );
}
