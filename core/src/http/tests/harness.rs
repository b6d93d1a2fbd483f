//! A virtual clock and a scripted HTTP server around one [`Connection`].

use std::collections::VecDeque;

use serde_json::{Value, json};

use super::*;

pub(super) struct H {
    pub(super) conn: Connection,
    pub(super) t0: Instant,
    pub(super) now: Instant,
    pub(super) out: VecDeque<HttpRequest>,
    pub(super) aborts: Vec<ExchangeId>,
    pub(super) events: Vec<Event>,
}

pub(super) fn url() -> Url {
    Url::parse("http://127.0.0.1:8080/mcp").unwrap()
}

pub(super) fn session_config() -> SessionConfig {
    SessionConfig::new(Implementation::new("test-client", "1.0.0"))
        .with_request_timeout(Some(Duration::from_secs(60)))
}

pub(super) fn init_result(version: &str) -> Value {
    json!({
        "protocolVersion": version,
        "capabilities": {"logging": {}, "resources": {"subscribe": true}},
        "serverInfo": {"name": "fake", "version": "0.1"}
    })
}

pub(super) fn sse(events: &[(&str, Option<&str>, &Value)]) -> Vec<u8> {
    let mut s = String::new();
    for (kind, id, data) in events {
        if let Some(id) = id {
            s.push_str(&format!("id: {id}\n"));
        }
        if !kind.is_empty() {
            s.push_str(&format!("event: {kind}\n"));
        }
        s.push_str(&format!("data: {data}\n\n"));
    }
    s.into_bytes()
}

impl H {
    pub(super) fn with(config: ConnectionConfig) -> Self {
        let t0 = Instant::now();
        let mut h = H {
            conn: Connection::new(config, session_config(), t0),
            t0,
            now: t0,
            out: VecDeque::new(),
            aborts: Vec::new(),
            events: Vec::new(),
        };
        h.drain();
        h
    }

    pub(super) fn new() -> Self {
        Self::with(ConnectionConfig::new(url()))
    }

    /// Streamable, handshake done at `version` with `session_id`, listener refused (405);
    /// requests and events cleared.
    pub(super) fn ready(version: &str, session_id: Option<&str>) -> Self {
        let mut h = Self::new();
        h.handshake(version, session_id);
        h.events.clear();
        h.aborts.clear();
        h
    }

    pub(super) fn handshake(&mut self, version: &str, session_id: Option<&str>) {
        let listen = self.up_to_listener(version, session_id);
        self.reply(listen.id, 405, &[], b"");
    }

    /// Answers the `initialize` POST (at `version`, with `session_id`) and
    /// `notifications/initialized`; returns the listener's GET, not answered yet.
    pub(super) fn up_to_listener(
        &mut self,
        version: &str,
        session_id: Option<&str>,
    ) -> HttpRequest {
        let init = self.next();
        assert_eq!(init.method, Method::Post);
        assert_eq!(init.purpose, Purpose::Initialize);
        self.answer_initialize(&init, version, session_id);
        let initialized = self.next();
        assert_eq!(body_of(&initialized)["method"], "notifications/initialized");
        self.reply(initialized.id, 202, &[], b"");
        let listen = self.next();
        assert_eq!(listen.purpose, Purpose::Listen);
        listen
    }

    /// Answers the `initialize` POST `init` with a JSON result at `version`, and
    /// `session_id` as `Mcp-Session-Id`.
    pub(super) fn answer_initialize(
        &mut self,
        init: &HttpRequest,
        version: &str,
        session_id: Option<&str>,
    ) {
        let body = body(init);
        assert_eq!(body["method"], "initialize");
        let mut headers = vec![("content-type", "application/json")];
        if let Some(s) = session_id {
            headers.push(("mcp-session-id", s));
        }
        let reply = json!({"jsonrpc": "2.0", "id": body["id"], "result": init_result(version)});
        self.reply(init.id, 200, &headers, reply.to_string().as_bytes());
    }

    pub(super) fn drain(&mut self) {
        while let Some(x) = self.conn.poll_exchange(self.now) {
            self.out.push_back(x);
        }
        while let Some(a) = self.conn.poll_abort() {
            self.aborts.push(a);
        }
        while let Some(e) = self.conn.poll_event() {
            self.events.push(e);
        }
        while let Some(x) = self.conn.poll_exchange(self.now) {
            self.out.push_back(x);
        }
    }

    pub(super) fn next(&mut self) -> HttpRequest {
        self.drain();
        self.out
            .pop_front()
            .unwrap_or_else(|| panic!("an exchange was expected; events: {:?}", self.events))
    }

    pub(super) fn no_exchange(&mut self) {
        self.drain();
        assert!(self.out.is_empty(), "unexpected exchanges: {:?}", self.out);
    }

    pub(super) fn head(&mut self, id: ExchangeId, status: u16, headers: &[(&str, &str)]) {
        let headers: HeaderList = headers.iter().copied().collect();
        self.conn
            .handle_response_head(self.now, id, status, headers);
        self.drain();
    }

    pub(super) fn chunk(&mut self, id: ExchangeId, bytes: &[u8]) {
        self.conn.handle_body(self.now, id, bytes);
        self.drain();
    }

    pub(super) fn end(&mut self, id: ExchangeId) {
        self.conn.handle_body_end(self.now, id);
        self.drain();
    }

    pub(super) fn reply(
        &mut self,
        id: ExchangeId,
        status: u16,
        headers: &[(&str, &str)],
        body: &[u8],
    ) {
        self.head(id, status, headers);
        if !body.is_empty() {
            self.chunk(id, body);
        }
        self.end(id);
    }

    pub(super) fn reply_json(&mut self, id: ExchangeId, value: &Value) {
        self.reply(
            id,
            200,
            &[("content-type", "application/json")],
            value.to_string().as_bytes(),
        );
    }

    pub(super) fn advance(&mut self, d: Duration) {
        self.now += d;
        self.conn.handle_timeout(self.now);
        if let Some(t) = self.conn.poll_timeout() {
            assert!(t > self.now, "timeout {t:?} not after now");
        }
        self.drain();
    }

    pub(super) fn send(&mut self, method: &'static str, params: Value) -> RequestHandle {
        let raw = serde_json::value::to_raw_value(&params).unwrap();
        let h = self
            .conn
            .session_mut()
            .send_request(self.now, method, Some(raw.into()), RequestOptions::new())
            .unwrap();
        self.drain();
        h
    }

    pub(super) fn completions(
        &self,
        handle: RequestHandle,
    ) -> Vec<&Result<RawResult, RequestError>> {
        self.events
            .iter()
            .filter_map(|e| match e {
                Event::Session(session::Event::Completed { handle: h, result }) if *h == handle => {
                    Some(result)
                }
                _ => None,
            })
            .collect()
    }

    pub(super) fn result(&self, handle: RequestHandle) -> Value {
        let c = self.completions(handle);
        assert_eq!(c.len(), 1, "one completion for {handle}: {:?}", self.events);
        match c[0] {
            Ok(raw) => serde_json::from_str(raw.get()).unwrap(),
            Err(e) => panic!("{handle} failed: {e:?}"),
        }
    }

    pub(super) fn error(&self, handle: RequestHandle) -> RequestError {
        let c = self.completions(handle);
        assert_eq!(c.len(), 1, "one completion for {handle}: {:?}", self.events);
        c[0].clone().expect_err("request should fail")
    }

    pub(super) fn http_events(&self) -> Vec<&HttpEvent> {
        self.events
            .iter()
            .filter_map(|e| match e {
                Event::Transport(h) => Some(h),
                _ => None,
            })
            .collect()
    }

    pub(super) fn session_diagnostics(&self) -> Vec<&session::Diagnostic> {
        self.events
            .iter()
            .filter_map(|e| match e {
                Event::Session(session::Event::Diagnostic(d)) => Some(d),
                _ => None,
            })
            .collect()
    }

    pub(super) fn notifications(&self) -> Vec<String> {
        self.events
            .iter()
            .filter_map(|e| match e {
                Event::Session(session::Event::Notification(n)) => Some(n.method.clone()),
                _ => None,
            })
            .collect()
    }
}

pub(super) fn body(x: &HttpRequest) -> Value {
    serde_json::from_slice(&x.body).unwrap()
}

pub(super) fn body_of(x: &HttpRequest) -> Value {
    body(x)
}

pub(super) fn answer(x: &HttpRequest, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": body(x)["id"], "result": result})
}
