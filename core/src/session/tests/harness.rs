//! A virtual clock and a scripted fake server around one [`Session`].

use serde_json::{Value, json};

use super::*;

/// Drives a session the way a driver would, recording everything it sends and reports.
pub(super) struct Harness {
    pub(super) session: Session,
    pub(super) t0: Instant,
    pub(super) now: Instant,
    /// Every message the session sent, parsed, with its description.
    pub(super) sent: Vec<(Outgoing, Value)>,
    pub(super) events: Vec<Event>,
}

impl Harness {
    pub(super) fn new(config: SessionConfig) -> Self {
        let t0 = Instant::now();
        let mut h = Harness {
            session: Session::new(config, t0),
            t0,
            now: t0,
            sent: Vec::new(),
            events: Vec::new(),
        };
        h.drain();
        h
    }

    /// A session that finished the handshake at `version`; sent messages and events cleared.
    pub(super) fn ready(config: SessionConfig, version: &str) -> Self {
        let mut h = Harness::new(config);
        h.answer_initialize(version);
        assert!(
            matches!(h.events.last(), Some(Event::Ready { .. })),
            "{:?}",
            h.events
        );
        h.sent.clear();
        h.events.clear();
        h
    }

    pub(super) fn answer_initialize(&mut self, version: &str) {
        let id = self.sent[0].1["id"].clone();
        assert_eq!(self.sent[0].1["method"], "initialize");
        self.server(json!({"jsonrpc": "2.0", "id": id, "result": init_result(version)}));
    }

    /// The single-mutation invariant: drain transmits, then events, then check the deadline.
    pub(super) fn drain(&mut self) {
        loop {
            let mut buf = Vec::new();
            let Some(out) = self.session.poll_transmit(&mut buf) else {
                break;
            };
            let value: Value = serde_json::from_slice(&buf).expect("session sends valid JSON");
            assert!(!buf.contains(&b'\n'), "one message, one line");
            self.sent.push((out, value));
        }
        while let Some(e) = self.session.poll_event() {
            self.events.push(e);
        }
    }

    pub(super) fn server(&mut self, msg: Value) {
        let bytes = serde_json::to_vec(&msg).unwrap();
        self.server_bytes(&bytes);
    }

    pub(super) fn server_bytes(&mut self, bytes: &[u8]) {
        self.session.handle_message(self.now, bytes);
        self.drain();
    }

    /// Moves the clock forward and fires what is due.
    pub(super) fn advance(&mut self, d: Duration) {
        self.now += d;
        self.session.handle_timeout(self.now);
        if let Some(t) = self.session.poll_timeout() {
            assert!(t > self.now, "deadline {t:?} not after now {:?}", self.now);
        }
        self.drain();
    }

    pub(super) fn send(
        &mut self,
        method: &'static str,
        params: Value,
        opts: RequestOptions,
    ) -> RequestHandle {
        let raw = serde_json::value::to_raw_value(&params).unwrap();
        let h = self
            .session
            .send_request(self.now, method, Some(raw.into()), opts)
            .expect("send_request");
        self.drain();
        h
    }

    /// The wire id the session used for `handle`'s (latest) request.
    pub(super) fn wire_id(&self, handle: RequestHandle) -> Value {
        self.sent
            .iter()
            .rev()
            .find(|(o, _)| o.request == Some(handle))
            .map(|(_, v)| v["id"].clone())
            .expect("request was sent")
    }

    pub(super) fn respond_ok(&mut self, handle: RequestHandle, result: Value) {
        let id = self.wire_id(handle);
        self.server(json!({"jsonrpc": "2.0", "id": id, "result": result}));
    }

    /// Completions seen so far for `handle`.
    pub(super) fn completions(
        &self,
        handle: RequestHandle,
    ) -> Vec<&Result<RawResult, RequestError>> {
        self.events
            .iter()
            .filter_map(|e| match e {
                Event::Completed { handle: h, result } if *h == handle => Some(result),
                _ => None,
            })
            .collect()
    }

    pub(super) fn sent_methods(&self) -> Vec<String> {
        self.sent
            .iter()
            .map(|(_, v)| {
                v.get("method")
                    .and_then(Value::as_str)
                    .unwrap_or("<response>")
                    .to_owned()
            })
            .collect()
    }

    pub(super) fn diagnostics(&self) -> Vec<&Diagnostic> {
        self.events
            .iter()
            .filter_map(|e| match e {
                Event::Diagnostic(d) => Some(d),
                _ => None,
            })
            .collect()
    }
}

impl Harness {
    pub(super) fn send_raw(
        &mut self,
        method: &'static str,
        params: Option<Box<RawValue>>,
    ) -> RequestHandle {
        let h = self
            .session
            .send_request(
                self.now,
                method,
                params.map(Into::into),
                RequestOptions::new(),
            )
            .expect("send_request");
        self.drain();
        h
    }
}
