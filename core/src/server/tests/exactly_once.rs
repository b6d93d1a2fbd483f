//! Proptest: every server-to-client request completes exactly once, under any order of
//! client answers (results, errors, answers twice, answers to unknown ids), host
//! cancellations, client progress, clock steps past deadlines, and a close (by the host or by
//! the transport). Checked after every step:
//!
//! - no handle completes twice, and none that was not issued completes;
//! - a pending request always has something that will end it (an answer, its deadline, or
//!   the close): `in_flight` counts exactly the handles not yet completed;
//! - after `handle_timeout(now)`, `poll_timeout` is `None` or later than `now`;
//! - once closed, every handle issued has completed, and `Closed` came once, last.

use std::collections::BTreeMap;

use proptest::prelude::*;
use serde_json::json;

use super::harness::Client;
use crate::server::Event;
use crate::session::{CloseReason, RequestOptions};
use crate::time::Duration;

#[derive(Clone, Copy, Debug)]
enum Op {
    /// The host sends a request: `ping`, `roots/list` or `sampling/createMessage`, with a
    /// timeout of this many seconds (0: none), asking for progress or not.
    Send {
        kind: u8,
        timeout: u8,
        progress: bool,
    },
    /// The client answers the n-th request sent (mod the count) with a result.
    Answer(usize),
    /// ... with a JSON-RPC error.
    Fail(usize),
    /// ... with progress.
    Progress(usize),
    /// The host cancels the n-th request.
    Cancel(usize),
    /// An answer to an id the server never used.
    Stray(u16),
    /// The clock moves this many seconds.
    Advance(u8),
    /// The host closes.
    Close,
    /// The client's input ends.
    Eof,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0u8..3, 0u8..6, any::<bool>()).prop_map(|(kind, timeout, progress)| Op::Send { kind, timeout, progress }),
        3 => any::<usize>().prop_map(Op::Answer),
        1 => any::<usize>().prop_map(Op::Fail),
        1 => any::<usize>().prop_map(Op::Progress),
        1 => any::<usize>().prop_map(Op::Cancel),
        1 => any::<u16>().prop_map(Op::Stray),
        2 => (0u8..4).prop_map(Op::Advance),
        1 => Just(Op::Close),
        1 => Just(Op::Eof),
    ]
}

/// What the model knows: handles issued, in order, and whether each completed.
struct Model {
    c: Client,
    issued: Vec<crate::rpc::RequestHandle>,
    done: BTreeMap<u64, usize>,
    closed: usize,
}

impl Model {
    fn pick(&self, n: usize) -> Option<u64> {
        (!self.issued.is_empty()).then(|| self.issued[n % self.issued.len()].get())
    }

    fn drain(&mut self) {
        self.c.received();
        for event in self.c.events() {
            assert_eq!(self.closed, 0, "an event after Closed: {event:?}");
            match event {
                Event::Completed { handle, .. } => {
                    assert!(self.issued.contains(&handle), "{handle} was never issued");
                    *self.done.entry(handle.get()).or_default() += 1;
                    assert_eq!(self.done[&handle.get()], 1, "{handle} completed twice");
                }
                Event::Closed { reason } => {
                    assert!(matches!(
                        reason,
                        CloseReason::Local | CloseReason::TransportClosed { .. }
                    ));
                    self.closed += 1;
                }
                _ => {}
            }
        }
        let open = self.issued.len() - self.done.len();
        assert_eq!(
            self.c.server.in_flight(),
            open,
            "in_flight counts the handles not completed"
        );
    }

    fn step(&mut self, op: Op) {
        let picked = match op {
            Op::Answer(n) | Op::Fail(n) | Op::Progress(n) | Op::Cancel(n) => self.pick(n),
            _ => None,
        };
        let c = &mut self.c;
        match op {
            Op::Send {
                kind,
                timeout,
                progress,
            } => {
                let method = ["ping", "roots/list", "sampling/createMessage"][usize::from(kind)];
                let mut options = RequestOptions::new();
                options = if timeout == 0 {
                    options.no_timeout()
                } else {
                    options.timeout(Duration::from_secs(u64::from(timeout)))
                };
                if progress {
                    options = options.progress();
                }
                if let Ok(handle) = c.server.send_request(c.now, method, None, options) {
                    self.issued.push(handle);
                }
            }
            Op::Answer(_) | Op::Fail(_) | Op::Progress(_) => {
                let Some(id) = picked else { return };
                match op {
                    Op::Answer(_) => c.send(json!({"jsonrpc": "2.0", "id": id, "result": {}})),
                    Op::Fail(_) => c.send(
                        json!({"jsonrpc": "2.0", "id": id, "error": {"code": -1, "message": "no"}}),
                    ),
                    _ => c.notify(
                        "notifications/progress",
                        json!({"progressToken": id, "progress": 1}),
                    ),
                }
            }
            Op::Cancel(_) => {
                let Some(id) = picked else { return };
                let handle = crate::rpc::RequestHandle(id);
                let _ = c.server.cancel(c.now, handle, None);
            }
            Op::Stray(id) => {
                c.send(json!({"jsonrpc": "2.0", "id": 1000 + u64::from(id), "result": {}}))
            }
            Op::Advance(s) => {
                c.advance(Duration::from_secs(u64::from(s)));
                if let Some(next) = c.server.poll_timeout() {
                    assert!(next > c.now, "a deadline due at {next:?} was not fired");
                }
            }
            Op::Close => c.server.close(c.now),
            Op::Eof => c.server.handle_transport_closed(c.now, None),
        }
        self.drain();
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn every_server_request_completes_exactly_once(ops in prop::collection::vec(op(), 0..60)) {
        let mut model = Model {
            c: Client::ready(json!({"roots": {}, "sampling": {}})),
            issued: Vec::new(),
            done: BTreeMap::new(),
            closed: 0,
        };
        for op in ops {
            model.step(op);
        }
        model.step(Op::Close);
        prop_assert_eq!(model.closed, 1);
        prop_assert_eq!(model.done.len(), model.issued.len(), "every handle completed");
    }
}
