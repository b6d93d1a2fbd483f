//! The core's client [`Connection`] against the [`HttpServer`], in memory: the client's
//! exchanges become the server's requests, the server's outputs the client's responses.

use std::collections::HashMap;

use serde_json::json;

use super::harness::config;
use crate::http::{
    Connection, ConnectionConfig, Event as ClientEvent, ExchangeId, HttpEvent as ClientHttpEvent,
};
use crate::jsonrpc::to_raw;
use crate::server::http::{
    HttpEvent, HttpServer, HttpServerConfig, Output, RequestHead, ResponseId, SessionKey,
};
use crate::server::{ClientRequestId, Event};
use crate::session::{self, RequestHandle, RequestOptions, SessionConfig};
use crate::time::Instant;
use crate::types::{ClientCapabilities, Implementation, SamplingCapability};

struct Pair {
    client: Connection,
    server: HttpServer,
    now: Instant,
    exchanges: HashMap<ResponseId, ExchangeId>,
    by_exchange: HashMap<ExchangeId, ResponseId>,
    client_events: Vec<ClientEvent>,
    server_events: Vec<HttpEvent>,
    entropy: u8,
}

impl Pair {
    fn new() -> Self {
        Self::with_session(
            SessionConfig::new(Implementation::new("pair-client", "1")).with_capabilities(
                ClientCapabilities {
                    sampling: Some(SamplingCapability::default()),
                    ..ClientCapabilities::default()
                },
            ),
        )
    }

    /// The client calls tool `name` (no arguments) with `options`; its handle.
    fn call_tool(&mut self, name: &str, options: RequestOptions) -> RequestHandle {
        let params = to_raw(&json!({"name": name, "arguments": {}})).expect("JSON params");
        self.client
            .session_mut()
            .send_request(self.now, "tools/call", Some(params.into()), options)
            .expect("the session takes the call")
    }

    fn with_session(session: SessionConfig) -> Self {
        let now = Instant::now();
        let url = url::Url::parse("http://127.0.0.1:8080/mcp").expect("a URL");
        let mut pair = Pair {
            client: Connection::new(ConnectionConfig::new(url), session, now),
            server: HttpServer::new(HttpServerConfig::new(config()), now),
            now,
            exchanges: HashMap::new(),
            by_exchange: HashMap::new(),
            client_events: Vec::new(),
            server_events: Vec::new(),
            entropy: 0,
        };
        pair.pump();
        pair
    }

    /// Moves requests and responses until neither side has anything to say.
    fn pump(&mut self) {
        for _ in 0..1000 {
            let mut moved = false;
            while let Some(x) = self.client.poll_exchange(self.now) {
                moved = true;
                self.entropy += 1;
                let head = RequestHead::new(x.method.as_str(), x.headers.clone());
                let r = self
                    .server
                    .handle_request(self.now, &head, &x.body, [self.entropy; 16]);
                self.exchanges.insert(r, x.id);
                self.by_exchange.insert(x.id, r);
            }
            while let Some(a) = self.client.poll_abort() {
                moved = true;
                if let Some(r) = self.by_exchange.get(&a) {
                    self.server.handle_response_closed(self.now, *r);
                }
            }
            while let Some(out) = self.server.poll_output() {
                moved = true;
                match out {
                    Output::Head {
                        response,
                        status,
                        headers,
                    } => {
                        let x = self.exchanges[&response];
                        self.client
                            .handle_response_head(self.now, x, status, headers);
                    }
                    Output::Body { response, bytes } => {
                        let x = self.exchanges[&response];
                        self.client.handle_body(self.now, x, &bytes);
                    }
                    Output::End { response } => {
                        let x = self.exchanges[&response];
                        self.client.handle_body_end(self.now, x);
                    }
                }
            }
            while let Some(e) = self.client.poll_event() {
                moved = true;
                self.client_events.push(e);
            }
            while let Some(e) = self.server.poll_event() {
                moved = true;
                self.server_events.push(e);
            }
            if !moved {
                return;
            }
        }
        panic!("the pair never went quiet");
    }

    fn server_request(&mut self, wanted: &str) -> (SessionKey, ClientRequestId) {
        let at = self
            .server_events
            .iter()
            .position(|e| matches!(e, HttpEvent::Session { event: Event::Request { method, .. }, .. } if method == wanted))
            .unwrap_or_else(|| panic!("no {wanted}: {:?}", self.server_events));
        match self.server_events.remove(at) {
            HttpEvent::Session {
                session,
                event: Event::Request { id, .. },
            } => (session, id),
            _ => unreachable!("matched above"),
        }
    }
}

#[test]
fn the_core_client_runs_a_whole_session_against_the_http_server() {
    let mut p = Pair::new();
    assert!(
        p.client_events
            .iter()
            .any(|e| matches!(e, ClientEvent::Session(session::Event::Ready { .. }))),
        "{:?}",
        p.client_events
    );
    assert!(
        p.client_events
            .iter()
            .any(|e| matches!(e, ClientEvent::Transport(ClientHttpEvent::ListenerOpened))),
        "the GET stream is open"
    );
    let sid = p.client.session_id().expect("a session id").to_owned();
    assert_eq!(sid.len(), 32);

    // A tool call; while serving it, the server asks the client to sample (on the POST's SSE).
    let now = p.now;
    let call = p.call_tool("ask", RequestOptions::new());
    p.pump();
    let (key, id) = p.server_request("tools/call");
    let sampling = to_raw(&json!({"messages": [], "maxTokens": 8})).unwrap();
    let handle = p
        .server
        .related(key, id, |s| {
            s.send_request(
                now,
                "sampling/createMessage",
                Some(sampling.into()),
                RequestOptions::new(),
            )
        })
        .unwrap()
        .unwrap();
    p.pump();
    let inbound = p
        .client_events
        .iter()
        .find_map(|e| match e {
            ClientEvent::Session(session::Event::ServerRequest { id, method, .. })
                if method == "sampling/createMessage" =>
            {
                Some(*id)
            }
            _ => None,
        })
        .expect("the client got the sampling request");
    let answer = to_raw(
        &json!({"role": "assistant", "content": {"type": "text", "text": "4"}, "model": "m"}),
    )
    .unwrap();
    p.client
        .session_mut()
        .respond(now, inbound, Ok(answer))
        .unwrap();
    p.pump();
    assert!(p.server_events.iter().any(|e| matches!(e, HttpEvent::Session { event: Event::Completed { handle: h, result: Ok(r) }, .. } if *h == handle && r.get().contains("\"4\""))));
    p.server
        .session_mut(key)
        .unwrap()
        .respond(
            now,
            id,
            to_raw(&json!({"content": [{"type": "text", "text": "four"}]})).unwrap(),
        )
        .unwrap();
    p.pump();
    let result = p
        .client_events
        .iter()
        .find_map(|e| match e {
            ClientEvent::Session(session::Event::Completed { handle, result })
                if *handle == call =>
            {
                Some(result)
            }
            _ => None,
        })
        .expect("the call completed");
    assert!(result.as_ref().unwrap().get().contains("four"));

    // A notification unrelated to any request goes on the GET stream.
    p.server
        .session_mut(key)
        .unwrap()
        .notify_list_changed(now, crate::server::ListChanged::Tools)
        .unwrap();
    p.pump();
    assert!(p.client_events.iter().any(|e| matches!(e, ClientEvent::Session(session::Event::Notification(n)) if n.method == "notifications/tools/list_changed")));

    // The client closes: DELETE ends the server's session.
    p.client.close(now);
    p.pump();
    assert!(
        p.server_events
            .iter()
            .any(|e| matches!(e, HttpEvent::SessionEnded { session, .. } if *session == key)),
        "{:?}",
        p.server_events
    );
    assert!(
        p.client_events
            .iter()
            .any(|e| matches!(e, ClientEvent::Transport(ClientHttpEvent::Finished)))
    );
    assert_eq!(p.server.sessions().count(), 0);
}

/// Protocol 2026-07-28 over HTTP: the core's Discover client and the server, each request its
/// own POST with the 2026 headers, no session id; a tool call answered (with progress on its
/// stream), then a cancelled one (the client closes the stream).
#[test]
fn the_core_client_speaks_2026_to_the_http_server() {
    let mut p = Pair::with_session(
        SessionConfig::new(Implementation::new("modern-client", "1"))
            .with_era_policy(session::EraPolicy::Discover),
    );
    assert!(
        p.client_events.iter().any(|e| matches!(
            e,
            ClientEvent::Session(session::Event::Ready {
                era: session::Era::Discover,
                ..
            })
        )),
        "{:?}",
        p.client_events
    );
    assert!(p.client.session_id().is_none(), "no session in 2026");
    let now = p.now;
    let call = p.call_tool("echo", RequestOptions::new().progress());
    p.pump();
    let at = p
        .server_events
        .iter()
        .position(|e| {
            matches!(
                e,
                HttpEvent::Session {
                    event: Event::Request {
                        envelope: Some(_),
                        ..
                    },
                    ..
                }
            )
        })
        .expect("the call reached the host with its envelope");
    let HttpEvent::Session {
        session: key,
        event: Event::Request { id, .. },
    } = p.server_events.remove(at)
    else {
        unreachable!("matched above")
    };
    p.server
        .related(key, id, |s| s.notify_progress(now, id, 1.0, None, None))
        .unwrap()
        .unwrap();
    p.server
        .session_mut(key)
        .unwrap()
        .respond(now, id, to_raw(&json!({"content": []})).unwrap())
        .unwrap();
    p.pump();
    assert!(p.client_events.iter().any(|e| matches!(
        e,
        ClientEvent::Session(session::Event::Progress { handle, .. }) if *handle == call
    )));
    let done = p.client_events.iter().find_map(|e| match e {
        ClientEvent::Session(session::Event::Completed { handle, result }) if *handle == call => {
            Some(result)
        }
        _ => None,
    });
    assert!(done.expect("the call completed").is_ok());
    // The request's session ended with its answer.
    assert!(
        p.server_events
            .iter()
            .any(|e| matches!(e, HttpEvent::SessionEnded { session, .. } if *session == key))
    );

    // A call the client cancels: its stream closes, and the request's session ends.
    let slow = p.call_tool("slow", RequestOptions::new());
    p.pump();
    let (key, id) = p.server_request("tools/call");
    p.client.session_mut().cancel(now, slow, None).unwrap();
    p.pump();
    assert!(
        p.server_events
            .iter()
            .any(|e| matches!(e, HttpEvent::SessionEnded { session, .. } if *session == key)),
        "{:?}",
        p.server_events
    );
    assert!(p.server.session_mut(key).is_none());
    let _ = id;
    assert_eq!(p.server.sessions().count(), 0);
}
