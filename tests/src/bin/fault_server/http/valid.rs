//! The valid server over HTTP: mcp-proto's sans-IO [`HttpServer`] (sessions and their ids,
//! JSON or SSE answers, 202, 404 for an unknown session, 405 for GET, DELETE, the checks of
//! the head) with the tools of [`crate::tools`], answered at once. Each exchange is fed whole
//! and its response collected whole, as the scripted HTTP layer writes one reply per
//! connection.

use std::time::Instant;

use mcp_driver::testing::http_server::{RecordedRequest, ScriptedReply};
use mcp_proto::framing::sse::{SseDecoder, SseItem};
use mcp_proto::http::headers::{HeaderList, MCP_SESSION_ID};
use mcp_proto::jsonrpc::ErrorObject;
use mcp_proto::server::http::{
    HttpEvent, HttpServer, HttpServerConfig, Output, Refusal, RequestHead, ResponseId, SessionKey,
};
use mcp_proto::server::{ClientRequestId, Event};
use mcp_proto::types::{CallToolParams, ListToolsResult};
use serde_json::value::RawValue;

use crate::log::Log;
use crate::tools::{
    Answer, PROGRESS_STEPS, add, arg_u64, decode_params, echo, progress_done, progress_numbers,
    to_result, valid_tools,
};

/// One response as the core wrote it.
#[derive(Debug, Default)]
pub(super) struct Collected {
    pub(super) status: u16,
    pub(super) headers: HeaderList,
    pub(super) body: Vec<u8>,
}

impl Collected {
    /// The reply the scripted HTTP layer writes for it.
    pub(super) fn into_reply(self) -> ScriptedReply {
        let mut reply = ScriptedReply::status(self.status);
        for (name, value) in self.headers.iter() {
            reply = reply.with_header(name, value);
        }
        reply.with_body(self.body)
    }

    /// The JSON-RPC messages it carries: the JSON body, or the data of each SSE event (a
    /// priming event has none).
    pub(super) fn messages(&self) -> Vec<String> {
        let sse = self
            .headers
            .get("content-type")
            .is_some_and(|t| t.starts_with("text/event-stream"));
        if !sse {
            return vec![String::from_utf8_lossy(&self.body).into_owned()];
        }
        let mut messages = Vec::new();
        let mut decoder = SseDecoder::new();
        let mut keep = |item: SseItem<'_>| {
            if let SseItem::Event(e) = item {
                messages.push(e.data.to_owned());
            }
        };
        decoder.decode(&self.body, &mut keep);
        decoder.finish(&mut keep);
        messages
    }
}

/// The core server and the host's part of it.
pub(super) struct Valid {
    server: HttpServer,
    log: Log,
    /// The number of the next session id, `fault-<n>`.
    next_session: u32,
}

impl Valid {
    pub(super) fn new(log: Log) -> Self {
        let config = HttpServerConfig::new(crate::tools::server_config())
            // No listener stream: a GET without `Last-Event-ID` gets 405.
            .with_get_stream(false)
            // The process lives as long as its test: sessions end by DELETE or a fault.
            .with_idle_timeout(None);
        Valid {
            server: HttpServer::new(config, Instant::now()),
            log,
            next_session: 1,
        }
    }

    /// The live session named `wire_id`.
    pub(super) fn session_named(&self, wire_id: &str) -> Option<SessionKey> {
        self.server
            .sessions()
            .find(|key| self.server.session_id(*key) == Some(wire_id))
    }

    /// Ends a session at once (its id gets 404 from now on).
    pub(super) fn forget(&mut self, key: SessionKey) {
        self.server.close_session(Instant::now(), key);
        self.drain_unrelated();
    }

    /// Serves one exchange: the request goes to the core, the requests it hands over are
    /// answered, and the response is collected whole.
    pub(super) fn exchange(&mut self, r: &RecordedRequest) -> Collected {
        let now = Instant::now();
        let headers: HeaderList = r
            .headers
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_str()))
            .collect();
        let head = RequestHead::new(r.method.as_str(), headers);
        let next = &mut self.next_session;
        let response = self
            .server
            .handle_request_with_session_id(now, &head, &r.body, || {
                let id = format!("fault-{next}");
                *next += 1;
                id
            });
        let mut collected = Collected::default();
        let mut ended = false;
        // The drain rule: outputs, then events (whose answers make more outputs), until quiet.
        loop {
            while let Some(out) = self.server.poll_output() {
                ended |= collect(&mut collected, response, out);
            }
            let mut events = Vec::new();
            while let Some(event) = self.server.poll_event() {
                events.push(event);
            }
            if events.is_empty() {
                break;
            }
            for event in events {
                self.handle_event(now, r, event);
            }
        }
        if !ended {
            // Every request is answered at once, so this does not happen; if it did, the
            // client would get what there is, and the core must not keep the stream.
            self.log
                .event(&format!("response {} left open", response.get()));
            self.server.handle_response_closed(now, response);
            self.drain_unrelated();
        }
        collected
    }

    fn handle_event(&mut self, now: Instant, r: &RecordedRequest, event: HttpEvent) {
        match event {
            HttpEvent::Session {
                session,
                event: Event::Request {
                    id, method, params, ..
                },
            } => self.serve(now, session, id, &method, params.as_deref()),
            HttpEvent::Refused {
                refusal: Refusal::UnknownSession,
                ..
            } => self.log.event(&format!(
                "404 unknown session {}",
                r.header(MCP_SESSION_ID).unwrap_or("-")
            )),
            _ => {}
        }
    }

    /// Answers one request of `session` at once.
    fn serve(
        &mut self,
        now: Instant,
        session: SessionKey,
        id: ClientRequestId,
        method: &str,
        params: Option<&RawValue>,
    ) {
        let answer = match method {
            "tools/list" => to_result(&ListToolsResult {
                tools: valid_tools(),
                ..ListToolsResult::default()
            }),
            "tools/call" => match decode_params::<CallToolParams>(params) {
                Ok(call) => self.call_tool(now, session, id, &call),
                Err(error) => Err(error),
            },
            other => Err(ErrorObject::method_not_found(other)),
        };
        let Some(s) = self.server.session_mut(session) else {
            return;
        };
        let sent = match answer {
            Ok(result) => s.respond(now, id, result),
            Err(error) => s.respond_error(now, id, error),
        };
        if let Err(e) = sent {
            self.log.event(&format!("{id} not answered: {e}"));
        }
    }

    /// `echo`, `add`, and `progress`, whose steps go on the request's own stream (so the
    /// answer comes as SSE).
    fn call_tool(
        &mut self,
        now: Instant,
        session: SessionKey,
        id: ClientRequestId,
        call: &CallToolParams,
    ) -> Answer {
        let args = call.arguments.clone().unwrap_or_default();
        match call.name.as_str() {
            "echo" => echo(&args),
            "add" => add(&args),
            "progress" => {
                let steps = arg_u64(&args, "steps", PROGRESS_STEPS);
                for step in 1..=steps {
                    let (progress, total) = progress_numbers(step, steps);
                    let message = format!("step {step}");
                    let sent = self.server.related(session, id, |s| {
                        s.notify_progress(now, id, progress, Some(total), Some(&message))
                    });
                    // No progress token (or no session): the answer alone.
                    if !matches!(sent, Some(Ok(()))) {
                        break;
                    }
                }
                progress_done(steps)
            }
            other => Err(ErrorObject::new(
                ErrorObject::INVALID_PARAMS,
                format!("unknown tool {other:?}"),
            )),
        }
    }

    /// Drops outputs and events that belong to no exchange in progress (a forgotten
    /// session's end).
    fn drain_unrelated(&mut self) {
        while self.server.poll_output().is_some() {}
        while self.server.poll_event().is_some() {}
    }
}

/// Adds `out` to `collected` when it is `response`'s; whether it was its end.
fn collect(collected: &mut Collected, response: ResponseId, out: Output) -> bool {
    match out {
        Output::Head {
            response: r,
            status,
            headers,
        } if r == response => {
            collected.status = status;
            collected.headers = headers;
            false
        }
        Output::Body { response: r, bytes } if r == response => {
            collected.body.extend_from_slice(&bytes);
            false
        }
        Output::End { response: r } => r == response,
        // Another response's: with every answer given at once, there is none open.
        _ => false,
    }
}
