//! `subscriptions/listen` (2026-07-28): acknowledgement deadline, routing, cancel, era rules,
//! and the local filter of the initialize era.

use serde_json::{Value, json};

use super::era::{auto, discover_result};
use super::*;
use crate::types::v2026::ListenFilter;

const ACK: &str = "notifications/subscriptions/acknowledged";

fn tools_and(uri: &str) -> ListenFilter {
    ListenFilter {
        tools_list_changed: Some(true),
        resource_subscriptions: Some(vec![uri.to_owned()]),
        ..ListenFilter::default()
    }
}

impl Harness {
    fn listen(&mut self, filter: &ListenFilter, ack_timeout: Deadline) -> RequestHandle {
        let h = self
            .session
            .listen(self.now, filter, ack_timeout)
            .expect("listen");
        self.drain();
        h
    }

    /// A notification on listen `handle`'s stream (the wire id as the server echoes it).
    fn on_listen(&mut self, handle: RequestHandle, method: &str, mut params: Value) {
        params["_meta"] = json!({"io.modelcontextprotocol/subscriptionId": self.wire_id(handle)});
        self.server(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    fn acknowledgements(&self, handle: RequestHandle) -> Vec<&ListenFilter> {
        self.events
            .iter()
            .filter_map(|e| match e {
                Event::SubscriptionAcknowledged {
                    handle: h,
                    honoured,
                } if *h == handle => Some(honoured),
                _ => None,
            })
            .collect()
    }

    fn routed(&self, handle: RequestHandle) -> Vec<String> {
        self.events
            .iter()
            .filter_map(|e| match e {
                Event::Subscription {
                    handle: h,
                    notification,
                } if *h == handle => Some(notification.method.clone()),
                _ => None,
            })
            .collect()
    }

    fn unrouted(&self) -> Vec<String> {
        self.events
            .iter()
            .filter_map(|e| match e {
                Event::Notification(n) => Some(n.method.clone()),
                _ => None,
            })
            .collect()
    }
}

#[test]
fn listen_sends_the_filter_in_the_envelope_without_progress() {
    let mut h = Harness::modern(auto());
    let l = h.listen(&tools_and("file:///a"), Deadline::SessionDefault);
    let (out, sent) = h.sent.last().unwrap().clone();
    assert_eq!(out.request, Some(l));
    assert_eq!(sent["method"], "subscriptions/listen");
    assert_eq!(
        sent["params"]["notifications"],
        json!({"toolsListChanged": true, "resourceSubscriptions": ["file:///a"]})
    );
    let meta = &sent["params"]["_meta"];
    assert_eq!(
        meta["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
    assert!(meta.get("progressToken").is_none(), "{meta}");
}

#[test]
fn the_acknowledgement_disarms_the_deadline_for_good() {
    let mut h = Harness::modern(auto());
    let l = h.listen(
        &tools_and("file:///a"),
        Deadline::After(Duration::from_secs(2)),
    );
    assert!(
        h.session.poll_timeout().is_some(),
        "armed until acknowledged"
    );
    h.advance(Duration::from_secs(1));
    h.on_listen(
        l,
        ACK,
        json!({"notifications": {"resourceSubscriptions": ["file:///a"]}}),
    );
    assert_eq!(
        h.acknowledgements(l),
        [&ListenFilter {
            resource_subscriptions: Some(vec!["file:///a".into()]),
            ..ListenFilter::default()
        }]
    );
    assert_eq!(h.session.poll_timeout(), None);
    h.advance(Duration::from_secs(3600));
    assert!(
        h.completions(l).is_empty(),
        "an open subscription never times out"
    );
    h.on_listen(
        l,
        "notifications/resources/updated",
        json!({"uri": "file:///a"}),
    );
    assert_eq!(h.routed(l), ["notifications/resources/updated"]);
    assert!(h.unrouted().is_empty());
    // The server ends it cleanly: one completion, and later messages are not routed to it.
    h.respond_ok(
        l,
        json!({"resultType": "complete", "_meta": {"io.modelcontextprotocol/subscriptionId": h.wire_id(l)}}),
    );
    assert!(h.completions(l)[0].is_ok());
    h.on_listen(l, "notifications/tools/list_changed", json!({}));
    assert_eq!(h.routed(l).len(), 1);
    assert_eq!(h.unrouted(), ["notifications/tools/list_changed"]);
    assert_eq!(h.completions(l).len(), 1);
}

#[test]
fn no_acknowledgement_in_time_times_out_and_tells_the_server() {
    let mut h = Harness::modern(auto());
    let l = h.listen(
        &tools_and("file:///a"),
        Deadline::After(Duration::from_secs(2)),
    );
    let wire = h.wire_id(l);
    h.advance(Duration::from_secs(2));
    assert!(matches!(
        h.completions(l)[..],
        [Err(RequestError::Timeout { .. })]
    ));
    let (_, cancelled) = h.sent.last().unwrap();
    assert_eq!(cancelled["method"], "notifications/cancelled");
    assert_eq!(cancelled["params"]["requestId"], wire);
}

#[test]
fn cancel_ends_the_listen_once_with_a_notice() {
    let mut h = Harness::modern(auto());
    let l = h.listen(&tools_and("file:///a"), Deadline::Never);
    h.on_listen(l, ACK, json!({"notifications": {"toolsListChanged": true}}));
    h.session.cancel(h.now, l, Some("done".into())).unwrap();
    h.drain();
    assert!(matches!(
        h.completions(l)[..],
        [Err(RequestError::Cancelled { .. })]
    ));
    let (_, cancelled) = h.sent.last().unwrap();
    assert_eq!(cancelled["method"], "notifications/cancelled");
    assert_eq!(cancelled["params"]["requestId"], h.wire_id(l));
    // The server's closing result after the cancel is stale, not a second completion.
    h.respond_ok(l, json!({"resultType": "complete"}));
    assert_eq!(h.completions(l).len(), 1);
    assert!(matches!(
        h.diagnostics()[..],
        [Diagnostic::StaleResponse { .. }]
    ));
    assert_eq!(
        h.session.cancel(h.now, l, None),
        Err(UsageError::UnknownRequest(l))
    );
}

#[test]
fn several_listens_run_at_once_and_close_completes_each() {
    let mut h = Harness::modern(auto());
    let a = h.listen(&tools_and("file:///a"), Deadline::Never);
    let b = h.listen(&tools_and("file:///b"), Deadline::Never);
    h.on_listen(
        b,
        "notifications/resources/updated",
        json!({"uri": "file:///b"}),
    );
    h.on_listen(
        a,
        "notifications/resources/updated",
        json!({"uri": "file:///a"}),
    );
    assert_eq!(h.routed(a), ["notifications/resources/updated"]);
    assert_eq!(h.routed(b), ["notifications/resources/updated"]);
    h.session.close(h.now);
    h.drain();
    for l in [a, b] {
        assert!(matches!(
            h.completions(l)[..],
            [Err(RequestError::Closed(CloseReason::Local))]
        ));
    }
}

#[test]
fn a_subscription_id_naming_another_request_is_not_routed() {
    let mut h = Harness::modern(auto());
    let call = h.send("tools/call", json!({"name": "x"}), RequestOptions::new());
    let id = h.wire_id(call);
    h.server(
        json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed",
        "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": id}}}),
    );
    h.server(
        json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed",
        "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": "not-ours"}}}),
    );
    assert_eq!(h.unrouted().len(), 2);
    assert!(h.completions(call).is_empty());
}

#[test]
fn an_unreadable_acknowledgement_still_acknowledges_with_nothing_honoured() {
    let mut h = Harness::modern(auto());
    let l = h.listen(
        &tools_and("file:///a"),
        Deadline::After(Duration::from_secs(2)),
    );
    h.on_listen(l, ACK, json!({"notifications": 7}));
    assert_eq!(h.acknowledgements(l), [&ListenFilter::default()]);
    assert!(matches!(
        h.diagnostics()[..],
        [Diagnostic::InvalidNotification { .. }]
    ));
    h.advance(Duration::from_secs(5));
    assert!(h.completions(l).is_empty());
}

#[test]
fn the_initialize_era_refuses_listen() {
    let mut h = Harness::ready(config(), "2025-11-25");
    let filter = tools_and("file:///a");
    assert_eq!(
        h.session.listen(h.now, &filter, Deadline::Never),
        Err(UsageError::NotInEra {
            method: "subscriptions/listen".into(),
            era: Era::Initialize
        })
    );
    let raw = serde_json::value::to_raw_value(&json!({"notifications": {}})).unwrap();
    assert!(matches!(
        h.session.send_request(
            h.now,
            "subscriptions/listen",
            Some(raw.into()),
            RequestOptions::new()
        ),
        Err(UsageError::NotInEra { .. })
    ));
    // Before the handshake too, when the policy is the initialize era.
    let mut fresh = Harness::new(config());
    assert!(matches!(
        fresh.session.listen(fresh.now, &filter, Deadline::Never),
        Err(UsageError::NotInEra { .. })
    ));
    assert!(h.sent.is_empty());
}

#[test]
fn a_listen_waiting_for_an_auto_handshake_that_falls_back_completes_not_in_era() {
    let mut h = Harness::new(auto());
    let l = h.listen(&tools_and("file:///a"), Deadline::Never);
    h.answer_discover_error(json!({"code": -32601, "message": "Method not found"}));
    let (_, init) = h.sent.last().unwrap().clone();
    assert_eq!(init["method"], "initialize");
    h.server(
        json!({"jsonrpc": "2.0", "id": init["id"], "result": super::init_result("2025-11-25")}),
    );
    assert!(matches!(
        &h.completions(l)[..],
        [Err(RequestError::NotInEra { method })] if method == "subscriptions/listen"
    ));
    assert!(
        !h.sent_methods()
            .contains(&"subscriptions/listen".to_owned())
    );
}

#[test]
fn a_listen_waiting_for_an_auto_handshake_that_goes_modern_is_sent() {
    let mut h = Harness::new(auto());
    let l = h.listen(&tools_and("file:///a"), Deadline::Never);
    h.answer_discover(discover_result());
    assert_eq!(h.sent.last().unwrap().1["method"], "subscriptions/listen");
    assert_eq!(h.sent.last().unwrap().0.request, Some(l));
}

fn notification(method: &str, params: Value) -> ServerNotification {
    ServerNotification {
        method: method.into(),
        params: Some(serde_json::value::to_raw_value(&params).unwrap()),
    }
}

#[test]
fn the_local_filter_matches_what_a_listen_asks_for() {
    let filter = tools_and("file:///a");
    let updated = |uri: &str| notification("notifications/resources/updated", json!({"uri": uri}));
    assert!(updated("file:///a").matches(&filter));
    assert!(!updated("file:///b").matches(&filter));
    assert!(!notification("notifications/resources/updated", json!({"uri": 3})).matches(&filter));
    assert!(notification("notifications/tools/list_changed", json!({})).matches(&filter));
    assert!(!notification("notifications/prompts/list_changed", json!({})).matches(&filter));
    assert!(!notification("notifications/resources/list_changed", json!({})).matches(&filter));
    assert!(!notification("notifications/message", json!({"level": "info"})).matches(&filter));
    let off = ListenFilter {
        tools_list_changed: Some(false),
        ..ListenFilter::default()
    };
    assert!(!notification("notifications/tools/list_changed", json!({})).matches(&off));
    assert_eq!(
        updated("file:///a").resource_uri().as_deref(),
        Some("file:///a")
    );
}

mod props {
    use proptest::prelude::*;

    use super::*;

    /// One step of a script against up to three listens.
    #[derive(Clone, Debug)]
    enum Op {
        Listen(bool),
        Ack(u8),
        Notify(u8),
        End(u8),
        Fail(u8),
        Cancel(u8),
        Advance(u16),
        Close,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            any::<bool>().prop_map(Op::Listen),
            any::<u8>().prop_map(Op::Ack),
            any::<u8>().prop_map(Op::Notify),
            any::<u8>().prop_map(Op::End),
            any::<u8>().prop_map(Op::Fail),
            any::<u8>().prop_map(Op::Cancel),
            (0u16..5000).prop_map(Op::Advance),
            Just(Op::Close),
        ]
    }

    proptest! {
        /// Whatever the server and the caller do, in any order: every listen completes exactly
        /// once (by the close at the latest), nothing is routed to it after its completion,
        /// and an acknowledged listen never times out.
        #[test]
        fn every_listen_resolves_exactly_once(ops in proptest::collection::vec(op(), 1..40)) {
            let mut h = Harness::modern(auto());
            let mut listens: Vec<(RequestHandle, Value)> = Vec::new();
            let mut acked: Vec<RequestHandle> = Vec::new();
            let pick = |l: &[(RequestHandle, Value)], n: u8| {
                (!l.is_empty()).then(|| l[n as usize % l.len()].clone())
            };
            for op in ops {
                if h.session.is_closed() {
                    break;
                }
                match op {
                    Op::Listen(timed) => {
                        let deadline = if timed {
                            Deadline::After(Duration::from_secs(2))
                        } else {
                            Deadline::Never
                        };
                        let l = h.listen(&tools_and("file:///a"), deadline);
                        listens.push((l, h.wire_id(l)));
                    }
                    Op::Ack(n) => if let Some((l, id)) = pick(&listens, n) {
                        h.server(json!({"jsonrpc": "2.0", "method": ACK,
                            "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": id}, "notifications": {}}}));
                        if h.completions(l).is_empty() {
                            acked.push(l);
                        }
                    },
                    Op::Notify(n) => if let Some((_, id)) = pick(&listens, n) {
                        h.server(json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed",
                            "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": id}}}));
                    },
                    Op::End(n) => if let Some((_, id)) = pick(&listens, n) {
                        h.server(json!({"jsonrpc": "2.0", "id": id, "result": {"resultType": "complete"}}));
                    },
                    Op::Fail(n) => if let Some((_, id)) = pick(&listens, n) {
                        h.server(json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32603, "message": "x"}}));
                    },
                    Op::Cancel(n) => if let Some((l, _)) = pick(&listens, n) {
                        let _ = h.session.cancel(h.now, l, None);
                        h.drain();
                    },
                    Op::Advance(ms) => h.advance(Duration::from_millis(u64::from(ms))),
                    Op::Close => {
                        h.session.close(h.now);
                        h.drain();
                    }
                }
            }
            h.session.close(h.now);
            h.drain();
            for (l, _) in &listens {
                prop_assert_eq!(h.completions(*l).len(), 1, "listen {} completions", l);
                let done = h.events.iter().position(
                    |e| matches!(e, Event::Completed { handle, .. } if handle == l),
                );
                let last_routed = h.events.iter().rposition(|e| matches!(e,
                    Event::Subscription { handle, .. } | Event::SubscriptionAcknowledged { handle, .. }
                        if handle == l));
                if let (Some(done), Some(last)) = (done, last_routed) {
                    prop_assert!(last < done, "routed after completion");
                }
                if acked.contains(l) {
                    let timed_out = matches!(h.completions(*l)[0], Err(RequestError::Timeout { .. }));
                    prop_assert!(!timed_out, "an acknowledged listen timed out");
                }
            }
        }
    }
}
