//! Arbitrary response sequences: no panic, every request completes exactly once after close,
//! bounded buffers, and `poll_timeout` after `handle_timeout(now)` is later than `now`.

use std::collections::HashMap;

use proptest::prelude::*;

use super::*;

#[derive(Debug, Clone)]
enum Op {
    Send,
    Notify,
    Head {
        pick: usize,
        status: u16,
        ct: u8,
        sid: bool,
        extra: u8,
    },
    Body {
        pick: usize,
        kind: u8,
        n: u16,
    },
    End {
        pick: usize,
    },
    Fail {
        pick: usize,
    },
    Tick {
        ms: u32,
    },
}

fn op() -> impl Strategy<Value = Op> {
    let status = prop_oneof![
        Just(200u16),
        Just(202),
        Just(307),
        Just(308),
        Just(400),
        Just(401),
        Just(404),
        Just(405),
        Just(429),
        Just(500),
        Just(503),
        100u16..600
    ];
    prop_oneof![
        2 => Just(Op::Send),
        1 => Just(Op::Notify),
        4 => (any::<usize>(), status, 0u8..4, any::<bool>(), 0u8..4)
            .prop_map(|(pick, status, ct, sid, extra)| Op::Head { pick, status, ct, sid, extra }),
        5 => (any::<usize>(), 0u8..8, 0u16..3000).prop_map(|(pick, kind, n)| Op::Body { pick, kind, n }),
        3 => any::<usize>().prop_map(|pick| Op::End { pick }),
        1 => any::<usize>().prop_map(|pick| Op::Fail { pick }),
        2 => (0u32..70_000).prop_map(|ms| Op::Tick { ms }),
    ]
}

struct Run {
    h: H,
    known: Vec<HttpRequest>,
    handles: Vec<RequestHandle>,
}

impl Run {
    fn collect(&mut self) {
        self.h.drain();
        self.known.extend(self.h.out.drain(..));
        if self.known.len() > 64 {
            self.known.drain(..self.known.len() - 64);
        }
    }

    fn pick(&self, pick: usize) -> Option<HttpRequest> {
        (!self.known.is_empty()).then(|| self.known[pick % self.known.len()].clone())
    }

    fn body_for(x: &HttpRequest, kind: u8, n: u16) -> Vec<u8> {
        let id = serde_json::from_slice::<serde_json::Value>(&x.body)
            .ok()
            .and_then(|v| v.get("id").cloned())
            .unwrap_or(serde_json::Value::from(n));
        let answer = if x.purpose == Purpose::Initialize {
            serde_json::json!({"jsonrpc": "2.0", "id": id, "result": init_result("2025-11-25")})
        } else {
            serde_json::json!({"jsonrpc": "2.0", "id": id, "result": {}})
        };
        match kind {
            0 => answer.to_string().into_bytes(),
            1 => format!("id: {n}\ndata: {answer}\n\n").into_bytes(),
            2 => format!("id: {n}\nretry: {n}\ndata: \n\n").into_bytes(),
            3 => b"event: endpoint\ndata: /message?x=1\n\n".to_vec(),
            4 => vec![b'x'; usize::from(n) * 10],
            5 => format!("data: {{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{{\"level\":\"info\",\"data\":{n}}}}}\n\n").into_bytes(),
            6 => b"data: {\"jsonrpc\":\"2.0\",\"id\":\"s1\",\"method\":\"ping\"}\n\n".to_vec(),
            _ => format!("event: message\ndata: {answer}").into_bytes(), // unterminated
        }
    }

    fn apply(&mut self, op: Op) {
        let now = self.h.now;
        match op {
            Op::Send => {
                if let Ok(hd) = self.h.conn.session_mut().send_request(
                    now,
                    "tools/list",
                    None,
                    RequestOptions::new(),
                ) {
                    self.handles.push(hd);
                }
            }
            Op::Notify => {
                let _ =
                    self.h
                        .conn
                        .session_mut()
                        .notify(now, "notifications/roots/list_changed", None);
            }
            Op::Head {
                pick,
                status,
                ct,
                sid,
                extra,
            } => {
                let Some(x) = self.pick(pick) else { return };
                let mut headers = HeaderList::new();
                match ct {
                    0 => headers.insert("content-type", "application/json"),
                    1 => headers.insert("content-type", "text/event-stream"),
                    2 => headers.insert("content-type", "text/plain"),
                    _ => {}
                }
                if sid {
                    headers.insert("mcp-session-id", "sess");
                }
                match extra {
                    0 => headers.insert("location", "/other"),
                    1 => headers.insert("location", "http://elsewhere.example/"),
                    2 => headers.insert("retry-after", "1"),
                    _ => headers.insert("www-authenticate", "Bearer scope=\"a\""),
                }
                self.h.conn.handle_response_head(now, x.id, status, headers);
            }
            Op::Body { pick, kind, n } => {
                let Some(x) = self.pick(pick) else { return };
                let b = Self::body_for(&x, kind, n);
                self.h.conn.handle_body(now, x.id, &b);
            }
            Op::End { pick } => {
                let Some(x) = self.pick(pick) else { return };
                self.h.conn.handle_body_end(now, x.id);
            }
            Op::Fail { pick } => {
                let Some(x) = self.pick(pick) else { return };
                self.h.conn.handle_failure(
                    now,
                    x.id,
                    ExchangeFailure::new(FailureKind::Reset, "reset"),
                );
            }
            Op::Tick { ms } => {
                self.h.now += Duration::from_millis(u64::from(ms));
                self.h.conn.handle_timeout(self.h.now);
                if let Some(t) = self.h.conn.poll_timeout() {
                    assert!(t > self.h.now, "poll_timeout not after now");
                }
            }
        }
        self.collect();
        // Bounded: the excerpt limit per exchange plus one body / event limit per stream.
        let limit = 64 * crate::http::error::MAX_BODY_EXCERPT + 64 * 70_000 + 4 * 1024 * 1024;
        assert!(self.h.conn.buffered_len() <= limit);
        assert!(self.h.conn.open_exchanges() <= 64 + 16 + 2);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_responses_never_panic_and_every_request_completes_once(
        mode in prop_oneof![Just(TransportMode::Auto), Just(TransportMode::Streamable), Just(TransportMode::Legacy)],
        ops in proptest::collection::vec(op(), 0..60),
    ) {
        let mut config = ConnectionConfig::new(url());
        config.mode = mode;
        config.max_event = 64 * 1024;
        let mut run = Run { h: H::with(config), known: Vec::new(), handles: Vec::new() };
        run.collect();
        for op in ops {
            run.apply(op);
        }
        run.h.conn.close(run.h.now);
        run.collect();
        // Finish: the DELETE is bounded by the close deadline.
        run.h.now += Duration::from_secs(6);
        run.h.conn.handle_timeout(run.h.now);
        run.collect();
        prop_assert!(run.h.conn.is_finished());
        prop_assert_eq!(run.h.conn.poll_timeout(), None);
        let mut counts: HashMap<RequestHandle, usize> = HashMap::new();
        for e in &run.h.events {
            if let Event::Session(session::Event::Completed { handle, .. }) = e {
                *counts.entry(*handle).or_default() += 1;
            }
        }
        for hd in &run.handles {
            prop_assert_eq!(counts.get(hd).copied(), Some(1), "handle {} completions", hd);
        }
        let finished = run.h.events.iter().filter(|e| matches!(e, Event::Transport(HttpEvent::Finished))).count();
        prop_assert_eq!(finished, 1);
    }
}
