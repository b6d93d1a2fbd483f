//! Client progress read in the decoder's pass (`jsonrpc::decode_reading`, as the client
//! session reads server progress): the events are those of serde's typed parse, whatever the
//! spelling of the notification.

use super::harness::Client;
use crate::progress_spellings::progress_spellings;
use crate::server::{Diagnostic, Event};
use crate::session::RequestHandle;
use crate::time::Duration;

/// The events of one notification (`{token}` stands for the request's progress token).
fn events_of(line: &str) -> (Vec<Event>, RequestHandle) {
    let (mut c, handle) = Client::with_sampling_out();
    let line = line.replace("{token}", &handle.get().to_string());
    c.server.handle_message(c.now, line.as_bytes());
    (c.events(), handle)
}

#[test]
fn compact_and_spaced_progress_give_the_same_event() {
    // Compact (read in the decoder's pass) first, then forms that only serde's parse reads.
    let forms = [
        r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":{token},"progress":3,"total":4,"message":"three"}}"#,
        r#"{"method":"notifications/progress","params":{"message":"three","total":4,"progress":3,"progressToken":{token}},"jsonrpc":"2.0"}"#,
        r#"{ "jsonrpc": "2.0", "method": "notifications/progress", "params": { "progressToken": {token}, "progress": 3, "total": 4, "message": "three" } }"#,
        r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":{token},"progress":3.0,"total":4.0,"message":"thr\u0065e"}}"#,
    ];
    for form in forms {
        let (events, handle) = events_of(form);
        assert!(
            matches!(
                &events[..],
                [Event::Progress { handle: h, progress, total: Some(t), message: Some(m) }]
                    if *h == handle && *progress == 3.0 && *t == 4.0 && m == "three"
            ),
            "{form}: {events:?}"
        );
    }
}

#[test]
fn progress_with_unreadable_params_is_a_diagnostic_on_every_path() {
    let forms = [
        r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":{token}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":{token},"progress":"3"}}"#,
        r#"{ "jsonrpc": "2.0", "method": "notifications/progress", "params": { "progress": 3 } }"#,
    ];
    for form in forms {
        let (events, _) = events_of(form);
        assert!(
            matches!(
                &events[..],
                [Event::Diagnostic(Diagnostic::InvalidNotification { method, .. })]
                    if method == "notifications/progress"
            ),
            "{form}: {events:?}"
        );
    }
}

#[test]
fn progress_with_an_id_is_a_request_not_progress() {
    // The pass reads the params before it sees the id: the message is still a request.
    let (events, _) = events_of(
        r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":{token},"progress":1},"id":9}"#,
    );
    assert!(
        !events.iter().any(|e| matches!(e, Event::Progress { .. })),
        "{events:?}"
    );
}

/// Progress inputs built from the token of one sampling request that asked for progress,
/// through `handle_message` (which reads compact progress in the decoder's pass) or the
/// general parse only: input by input, the events and what the session sent; then the same
/// after the request's deadline.
fn progress_run(fast: bool, inputs: &dyn Fn(u64) -> Vec<String>) -> String {
    let (mut c, handle) = Client::with_sampling_out();
    let mut log = Vec::new();
    for text in inputs(handle.get()) {
        c.now += Duration::from_secs(1);
        if fast {
            c.server.handle_message(c.now, text.as_bytes());
        } else {
            c.server.handle_message_general(c.now, text.as_bytes());
        }
        log.push(format!("{:?} {:?}", c.events(), c.received()));
    }
    // The timeout the progress re-armed (or not) fires alike.
    c.now += Duration::from_secs(30);
    c.server.handle_timeout(c.now);
    log.push(format!("{:?} {:?}", c.events(), c.received()));
    log.join("\n")
}

#[test]
fn progress_routes_as_the_general_parse_does_whatever_its_spelling() {
    let inputs = |token: u64| progress_spellings(&token);
    let (fast, general) = (progress_run(true, &inputs), progress_run(false, &inputs));
    assert_eq!(fast, general);
    assert!(fast.matches("Progress {").count() >= 5, "{fast}");
}
