//! A scripted HTTP client for the [`HttpServer`]: requests in, responses collected per
//! [`ResponseId`], the host's part played by the test.

use std::collections::HashMap;

use serde_json::{Value, json};

use super::harness::config;
use crate::http::headers::HeaderList;
use crate::jsonrpc::to_raw;
use crate::server::http::{
    HttpEvent, HttpServer, HttpServerConfig, Output, Refusal, RequestHead, ResponseId, SessionKey,
};
use crate::server::{ClientRequestId, Event};
use crate::session::{RequestHandle, RequestOptions};
use crate::time::{Duration, Instant};

/// One response as the client saw it.
#[derive(Debug, Default)]
pub(super) struct Seen {
    pub(super) status: Option<u16>,
    pub(super) headers: HeaderList,
    pub(super) body: Vec<u8>,
    pub(super) heads: usize,
    pub(super) ended: bool,
}

impl Seen {
    pub(super) fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name)
    }

    /// The JSON body.
    pub(super) fn json(&self) -> Value {
        serde_json::from_slice(&self.body).expect("a JSON body")
    }

    /// The SSE events' (id, data) so far; the priming event's empty data is skipped.
    pub(super) fn events(&self) -> Vec<(String, Value)> {
        let text = std::str::from_utf8(&self.body).expect("UTF-8");
        text.split("\n\n")
            .filter_map(|block| {
                let mut id = None;
                let mut data = None;
                for line in block.lines() {
                    if let Some(v) = line.strip_prefix("id: ") {
                        id = Some(v.to_owned());
                    }
                    if let Some(v) = line.strip_prefix("data: ") {
                        data = Some(v.to_owned());
                    }
                }
                let data = data.filter(|d| !d.is_empty())?;
                Some((
                    id.unwrap_or_default(),
                    serde_json::from_str(&data).expect("JSON data"),
                ))
            })
            .collect()
    }
}

pub(super) struct Http {
    pub(super) server: HttpServer,
    pub(super) now: Instant,
    pub(super) seen: HashMap<ResponseId, Seen>,
    pub(super) events: Vec<HttpEvent>,
    entropy: u8,
}

pub(super) const ACCEPT_BOTH: (&str, &str) = ("accept", "application/json, text/event-stream");
pub(super) const JSON: (&str, &str) = ("content-type", "application/json");
pub(super) const SSE: (&str, &str) = ("accept", "text/event-stream");

impl Http {
    pub(super) fn new() -> Self {
        Self::with_config(HttpServerConfig::new(config()))
    }

    pub(super) fn with_config(config: HttpServerConfig) -> Self {
        let now = Instant::now();
        Http {
            server: HttpServer::new(config, now),
            now,
            seen: HashMap::new(),
            events: Vec::new(),
            entropy: 0,
        }
    }

    pub(super) fn send(
        &mut self,
        method: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> ResponseId {
        let mut list = HeaderList::new();
        for (n, v) in headers {
            list.append(*n, *v);
        }
        self.entropy = self.entropy.wrapping_add(1);
        let entropy = [self.entropy; 16];
        let id =
            self.server
                .handle_request(self.now, &RequestHead::new(method, list), body, entropy);
        self.seen.entry(id).or_default();
        self.drain();
        id
    }

    /// A POST of `body` with both media types accepted, in `session` if given.
    pub(super) fn post(&mut self, session: Option<&str>, body: &Value) -> ResponseId {
        let mut headers = vec![ACCEPT_BOTH, JSON];
        if let Some(s) = session {
            headers.push(("mcp-session-id", s));
        }
        self.send("POST", &headers, body.to_string().as_bytes())
    }

    /// A POST of `body` (JSON) with exactly `headers`.
    pub(super) fn post_with(&mut self, headers: &[(&str, &str)], body: &Value) -> ResponseId {
        self.send("POST", headers, body.to_string().as_bytes())
    }

    /// A POST of `body` (JSON) in session `sid` that accepts only `accept` (one media type).
    pub(super) fn post_accepting(&mut self, sid: &str, accept: &str, body: &Value) -> ResponseId {
        self.post_with(&[("accept", accept), JSON, ("mcp-session-id", sid)], body)
    }

    /// The GET stream of session `sid`.
    pub(super) fn get_stream(&mut self, sid: &str) -> ResponseId {
        self.send("GET", &[SSE, ("mcp-session-id", sid)], b"")
    }

    /// A GET of session `sid` resuming after event `last_event_id`.
    pub(super) fn resume(&mut self, sid: &str, last_event_id: &str) -> ResponseId {
        self.send(
            "GET",
            &[
                SSE,
                ("mcp-session-id", sid),
                ("last-event-id", last_event_id),
            ],
            b"",
        )
    }

    /// Sends `sampling/createMessage` (no messages, 5 tokens) related to host request `id` of
    /// session `key`, and drains the output; returns the request's handle.
    pub(super) fn ask_sampling(&mut self, key: SessionKey, id: ClientRequestId) -> RequestHandle {
        let now = self.now;
        let params = to_raw(&json!({"messages": [], "maxTokens": 5}))
            .unwrap()
            .into();
        let handle = self
            .server
            .related(key, id, |s| {
                s.send_request(
                    now,
                    "sampling/createMessage",
                    Some(params),
                    RequestOptions::default(),
                )
            })
            .expect("the session and request exist")
            .expect("the request is sent");
        self.drain();
        handle
    }

    /// The host answers request `id` of session `key` with an empty tool result
    /// (`{"content": []}`); the output is drained.
    pub(super) fn answer_empty(&mut self, key: SessionKey, id: ClientRequestId) {
        let now = self.now;
        self.server
            .session_mut(key)
            .expect("the session exists")
            .respond(now, id, to_raw(&json!({"content": []})).unwrap())
            .expect("the request is open");
        self.drain();
    }

    pub(super) fn drain(&mut self) {
        while let Some(out) = self.server.poll_output() {
            match out {
                Output::Head {
                    response,
                    status,
                    headers,
                } => {
                    let seen = self.seen.entry(response).or_default();
                    assert!(!seen.ended, "a head after the end");
                    seen.status = Some(status);
                    seen.headers = headers;
                    seen.heads += 1;
                }
                Output::Body { response, bytes } => {
                    let seen = self.seen.entry(response).or_default();
                    assert_eq!(seen.heads, 1, "a body without a head");
                    assert!(!seen.ended, "a body after the end");
                    seen.body.extend_from_slice(&bytes);
                }
                Output::End { response } => {
                    let seen = self.seen.entry(response).or_default();
                    assert_eq!(seen.heads, 1, "an end without a head");
                    assert!(!seen.ended, "two ends");
                    seen.ended = true;
                }
                #[allow(unreachable_patterns)]
                _ => {}
            }
        }
        while let Some(e) = self.server.poll_event() {
            self.events.push(e);
        }
    }

    pub(super) fn seen(&self, id: ResponseId) -> &Seen {
        self.seen.get(&id).expect("a response")
    }

    pub(super) fn status(&self, id: ResponseId) -> u16 {
        self.seen(id).status.expect("a status")
    }

    /// Every refusal the server reported, in order.
    pub(super) fn refusals(&self) -> Vec<Refusal> {
        self.events
            .iter()
            .filter_map(|e| match e {
                HttpEvent::Refused { refusal, .. } => Some(refusal.clone()),
                _ => None,
            })
            .collect()
    }

    /// Initializes a session at `version` with `capabilities`; returns its id and key.
    pub(super) fn initialize(
        &mut self,
        version: &str,
        capabilities: Value,
    ) -> (String, SessionKey) {
        let r = self.post(
            None,
            &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": version, "capabilities": capabilities,
                "clientInfo": {"name": "http-test", "version": "0"}}}),
        );
        assert_eq!(self.status(r), 200, "{:?}", self.seen(r));
        let id = self
            .seen(r)
            .header("mcp-session-id")
            .expect("a session id")
            .to_owned();
        let key = self
            .events
            .iter()
            .find_map(|e| match e {
                HttpEvent::SessionOpened { session } => Some(*session),
                _ => None,
            })
            .expect("SessionOpened");
        let n = self.post(
            Some(&id),
            &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        );
        assert_eq!(self.status(n), 202);
        self.events.clear();
        (id, key)
    }

    /// The host requests handed over since the last call, with their methods.
    pub(super) fn host_requests(&mut self) -> Vec<(SessionKey, ClientRequestId, String)> {
        let mut out = Vec::new();
        self.events.retain(|e| match e {
            HttpEvent::Session {
                session,
                event: Event::Request { id, method, .. },
            } => {
                out.push((*session, *id, method.clone()));
                false
            }
            _ => true,
        });
        out
    }

    pub(super) fn advance(&mut self, by: Duration) {
        self.now += by;
        self.server.handle_timeout(self.now);
        self.drain();
    }
}
