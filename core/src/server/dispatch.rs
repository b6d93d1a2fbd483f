//! Routing of decoded client messages: requests answered by the session (`initialize`,
//! `server/discover`, `ping`, `logging/setLevel`, refusals) or handed to the host, answers to the server's own
//! requests, and the notifications the session reads (`initialized`, `cancelled`,
//! `progress`), and the entry of client input (`handle_message`), which decodes it once.

use serde::Deserialize;
use serde_json::value::RawValue;

use super::outgoing::Queued;
use super::{Diagnostic, Event, ServerSession, ServerState};
use crate::jsonrpc::{self, DecodeError, ErrorObject, Id, MessageRef, RawJson, empty_object};
use crate::rpc::RequestHandle;
use crate::rpc::clock::nanos;
use crate::rpc::notifications::{CancelledParams, ProgressParams, parse};
use crate::rpc::route::{self, InvalidPayload, Router};
use crate::session::RawResult;
use crate::session::RequestError;
use crate::time::Instant;
use crate::types::{ServerCapabilities, SetLevelParams};

/// `_meta.progressToken` of a request's params, when it is a string or an integer.
#[derive(Deserialize)]
struct WithMeta {
    #[serde(rename = "_meta", default)]
    meta: Option<Meta>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Meta {
    #[serde(default)]
    progress_token: Option<Id>,
}

/// The server's hooks of the shared routing: input that is not a message (a whole input or
/// a batch element) is reported and answered with a JSON-RPC error (`"id": null`).
impl Router for ServerSession {
    fn route(
        &mut self,
        now: Instant,
        msg: MessageRef<'_>,
        progress: Option<ProgressParams>,
    ) -> Result<(), InvalidPayload> {
        Ok(self.handle_decoded(now, msg, progress)?)
    }

    fn undecodable_input(&mut self, _input: jsonrpc::Input<'_>, e: DecodeError) {
        self.undecodable(e);
    }

    fn undecodable_element(&mut self, e: DecodeError) {
        self.undecodable(e);
    }

    fn closed(&self) -> bool {
        self.is_closed()
    }
}

impl ServerSession {
    /// Feeds one framed message from the client (a line, an HTTP body). A JSON array is a
    /// batch (2025-03-26), each element handled in order and answered on its own: the answers
    /// go out as separate messages, not as one array. Input that is not JSON-RPC is answered with a
    /// JSON-RPC error (`"id": null`) and reported as an [`Event::Diagnostic`]. Ignored once
    /// closed.
    pub fn handle_message(&mut self, now: Instant, bytes: &[u8]) {
        self.handle_input(now, jsonrpc::Input::Bytes(bytes));
    }

    /// [`handle_message`](Self::handle_message) for input already known to be UTF-8.
    pub fn handle_message_str(&mut self, now: Instant, text: &str) {
        self.handle_input(now, jsonrpc::Input::Text(text));
    }

    /// [`handle_message`](Self::handle_message) decoding with the general parse only: the
    /// reference the routing of compactly written input is held equal to.
    #[cfg(test)]
    pub(crate) fn handle_message_general(&mut self, now: Instant, bytes: &[u8]) {
        if self.is_closed() {
            return;
        }
        let input = jsonrpc::Input::Bytes(bytes);
        route::route_decoded(self, now, input, (jsonrpc::decode_general(input), None));
        self.track_backlog(now);
    }

    /// [`handle_message`](Self::handle_message) for input its caller decoded already (with
    /// [`jsonrpc::decode_reading_into`], as the session itself decodes), so that a POST body
    /// is decoded once: `input` is read again only when a located payload is not JSON.
    pub(crate) fn handle_decoded_input(
        &mut self,
        now: Instant,
        input: jsonrpc::Input<'_>,
        decoded: (
            Result<jsonrpc::DecodedRef<'_>, DecodeError>,
            Option<ProgressParams>,
        ),
    ) {
        if self.is_closed() {
            return;
        }
        route::route_decoded(self, now, input, decoded);
        self.track_backlog(now);
    }

    fn handle_input(&mut self, now: Instant, input: jsonrpc::Input<'_>) {
        if self.is_closed() {
            return;
        }
        // Progress params are read in the decoder's pass where it can, as the client session
        // reads them (they are read anyway).
        route::route_input(self, now, input);
        self.track_backlog(now);
    }

    /// Routes one message borrowed from the input: only what an event keeps is copied.
    ///
    /// Params are checked before anything is routed (see [`RawJson`]); an answer's result
    /// goes to its request located, checked when the host reads it
    /// ([`RawResult`]). Params that fail their check return `Err` having routed nothing: the
    /// input is not a message after all. `progress` is the params of a progress notification
    /// read already by the decoder ([`crate::jsonrpc::decode_reading_into`]): `msg` is then that
    /// notification, and its params are not read again.
    pub(super) fn handle_decoded(
        &mut self,
        now: Instant,
        msg: MessageRef<'_>,
        progress: Option<ProgressParams>,
    ) -> Result<(), serde_json::Error> {
        if let Some(p) = progress {
            // What `handle_notification` does with these params: progress is read in any state.
            self.handle_progress(now, p);
            return Ok(());
        }
        match msg {
            MessageRef::Request { id, method, params } => {
                let params = params.map(RawJson::check).transpose()?;
                self.handle_request(now, id, &method, params);
            }
            MessageRef::Notification { method, params } => {
                let params = params.map(RawJson::check).transpose()?;
                self.handle_notification(now, &method, params);
            }
            MessageRef::Response { id, result } => {
                self.handle_answer(id, Ok(RawResult::from(result)));
            }
            MessageRef::Error {
                id: Some(id),
                error,
            } => self.handle_answer(id, Err(RequestError::Remote(error))),
            MessageRef::Error { id: None, error } => {
                self.report(Diagnostic::UncorrelatedError(error));
            }
        }
        Ok(())
    }

    /// Input that is not a message: answered with a JSON-RPC error of unknown id (JSON-RPC
    /// 2.0 section 5), and reported.
    pub(super) fn undecodable(&mut self, e: DecodeError) {
        let code = match e {
            DecodeError::NotJson { .. } => ErrorObject::PARSE_ERROR,
            _ => ErrorObject::INVALID_REQUEST,
        };
        let message = match e {
            DecodeError::NotJson { .. } => "Parse error",
            _ => "Invalid Request",
        };
        self.report(Diagnostic::Undecodable(e));
        let error = ErrorObject::new(code, message);
        self.queue_own(Queued::UnidentifiedError(error), None);
    }

    pub(super) fn report(&mut self, diagnostic: Diagnostic) {
        self.events.push_back(Event::Diagnostic(diagnostic));
    }

    /// Queues an answer the session gives on its own; dropped (and reported) when the client
    /// is not reading, so a client that floods without reading cannot grow the queue.
    pub(super) fn answer_by_session(
        &mut self,
        id: Id,
        result: Result<Box<RawValue>, ErrorObject>,
        method: Option<&str>,
    ) {
        self.queue_own(Queued::Response { id, result }, method);
    }

    fn queue_own(&mut self, item: Queued, method: Option<&str>) {
        if self.outbound_full() {
            return self.report(Diagnostic::OutboundQueueFull {
                method: method.map(str::to_owned),
            });
        }
        self.outbound.push_back(item);
    }

    fn refuse(&mut self, id: Id, method: &str, code: i64, message: &str) {
        self.answer_by_session(id, Err(ErrorObject::new(code, message)), Some(method));
    }

    fn handle_request(&mut self, _now: Instant, id: Id, method: &str, params: Option<&RawValue>) {
        if self.outbound_full() {
            return self.report(Diagnostic::OutboundQueueFull {
                method: Some(method.to_owned()),
            });
        }
        let per_request = self.state == ServerState::PerRequest;
        match method {
            "ping" if !per_request => {
                return self.answer_by_session(id, Ok(empty_object()), None);
            }
            "initialize" if per_request => {
                self.report(Diagnostic::RepeatedInitialize);
                return self.refuse(
                    id,
                    method,
                    ErrorObject::INVALID_REQUEST,
                    "initialize is not part of protocol version 2026-07-28, which this session speaks",
                );
            }
            "initialize" => return self.handle_initialize(id, params),
            "server/discover" => return self.handle_discover(id, params),
            _ => {}
        }
        let envelope = match self.admit_envelope(method, params) {
            Ok(envelope) => envelope,
            Err(error) => return self.answer_by_session(id, Err(error), Some(method)),
        };
        if self.state == ServerState::AwaitingInitialize {
            self.report(Diagnostic::BeforeInitialize {
                method: method.to_owned(),
            });
            let message = if self.modern_versions().is_empty() {
                "the session is not initialized: send initialize first"
            } else {
                "the session is not initialized: send initialize first, or (protocol version 2026-07-28) put io.modelcontextprotocol/protocolVersion and clientCapabilities in params._meta"
            };
            return self.refuse(id, method, ErrorObject::INVALID_REQUEST, message);
        }
        if method == "logging/setLevel" {
            return self.handle_set_level(id, params);
        }
        if method == super::listen::LISTEN && !self.config.listens_by_host {
            return self.handle_listen(id, params, envelope.is_some());
        }
        if !offered(&self.config.capabilities, method) {
            let error = ErrorObject::method_not_found(method);
            return self.answer_by_session(id, Err(error), Some(method));
        }
        let reason = if self.client_requests.contains_wire(&id) || self.listens.contains_wire(&id) {
            Some("a request with this id is still open")
        } else if self.client_requests.len() >= self.config.max_open_client_requests {
            Some("too many concurrent requests")
        } else {
            None
        };
        if let Some(reason) = reason {
            self.report(Diagnostic::RequestRefused {
                method: method.to_owned(),
                reason,
            });
            return self.refuse(id, method, ErrorObject::INVALID_REQUEST, reason);
        }
        let progress_token = params
            .filter(|p| super::meta_presence::may_hold_meta(p.get()))
            .and_then(|p| serde_json::from_str::<WithMeta>(p.get()).ok())
            .and_then(|w| w.meta)
            .and_then(|m| m.progress_token);
        let modern = envelope
            .as_ref()
            .map(|e| (e.log_level, super::modern::cacheable(method)));
        let id = self
            .client_requests
            .insert(id, progress_token.clone(), modern);
        self.events.push_back(Event::Request {
            id,
            method: method.to_owned(),
            params: params.map(RawValue::to_owned),
            progress_token,
            envelope,
        });
    }

    /// `logging/setLevel`, answered by the session when the server declared `logging`.
    fn handle_set_level(&mut self, id: Id, params: Option<&RawValue>) {
        let method = "logging/setLevel";
        if self.config.capabilities.logging.is_none() {
            let error = ErrorObject::method_not_found(method);
            return self.answer_by_session(id, Err(error), Some(method));
        }
        match serde_json::from_str::<SetLevelParams>(params.map_or("null", RawValue::get)) {
            Ok(p) => {
                self.log_level = Some(p.level);
                self.events.push_back(Event::LogLevel { level: p.level });
                self.answer_by_session(id, Ok(empty_object()), Some(method));
            }
            Err(e) => {
                let error = ErrorObject::new(ErrorObject::INVALID_PARAMS, e.to_string());
                self.answer_by_session(id, Err(error), Some(method));
            }
        }
    }

    fn handle_notification(&mut self, now: Instant, method: &str, params: Option<&RawValue>) {
        match method {
            "notifications/initialized" => match self.state {
                ServerState::Initializing => {
                    self.state = ServerState::Ready;
                    self.events.push_back(Event::Ready);
                }
                ServerState::AwaitingInitialize => self.report(Diagnostic::BeforeInitialize {
                    method: method.to_owned(),
                }),
                // A repeat changes nothing.
                _ => {}
            },
            "notifications/cancelled" => match parse::<CancelledParams>(params) {
                // Unknown or finished ids are ignored, as the spec allows.
                Ok(p) => {
                    if let Some(id) = self.client_requests.remove_wire(&p.request_id) {
                        self.events.push_back(Event::RequestCancelled {
                            id,
                            reason: p.reason,
                        });
                    } else {
                        // A listen's id: the client ends its subscription.
                        self.cancel_listen(&p.request_id, p.reason);
                    }
                }
                Err(detail) => self.invalid_notification(method, detail),
            },
            "notifications/progress" => match parse::<ProgressParams>(params) {
                Ok(p) => self.handle_progress(now, p),
                Err(detail) => self.invalid_notification(method, detail),
            },
            _ if self.state == ServerState::AwaitingInitialize => {
                self.report(Diagnostic::BeforeInitialize {
                    method: method.to_owned(),
                });
            }
            _ => self.events.push_back(Event::Notification {
                method: method.to_owned(),
                params: params.map(RawValue::to_owned),
            }),
        }
    }

    fn invalid_notification(&mut self, method: &str, detail: String) {
        self.report(Diagnostic::InvalidNotification {
            method: method.to_owned(),
            detail,
        });
    }

    /// Progress on a server-to-client request that asked for it: an event, and its timeout
    /// restarted when it was sent with a maximum total time.
    fn handle_progress(&mut self, now: Instant, p: ProgressParams) {
        let handle = p.progress_token.as_u64().map(RequestHandle);
        let Some(handle) = handle.filter(|h| self.pending.get(h).is_some_and(|e| e.progress))
        else {
            return self.report(Diagnostic::UnknownProgress);
        };
        let active = nanos(self.clock.active(now));
        let rearm = self
            .pending
            .get(&handle)
            .filter(|e| e.max_total.is_some())
            .map(|e| e.deadline_after(active).map(|(at, _)| at));
        if let Some(deadline) = rearm {
            self.arm(handle, deadline);
        }
        self.events.push_back(Event::Progress {
            handle,
            progress: p.progress,
            total: p.total,
            message: p.message,
        });
    }

    /// An answer from the client: completes the request it names, else is reported.
    fn handle_answer(&mut self, id: Id, result: Result<RawResult, RequestError>) {
        let handle = id.as_u64().map(RequestHandle);
        match handle.filter(|h| self.pending.get(h).is_some_and(|p| p.sent)) {
            Some(handle) => self.finish(handle, result, None),
            None => self.report(Diagnostic::UnknownResponse { id }),
        }
    }
}

/// Whether the server's capabilities offer `method`: the tools, resources, prompts,
/// completion and task methods need their capability (`resources/subscribe` and
/// `resources/unsubscribe` need `resources.subscribe`), so that a client calling one the
/// server did not declare gets `-32601` from the session instead of reaching a host that has
/// no handler. Any other method goes to the host.
pub(super) fn offered(capabilities: &ServerCapabilities, method: &str) -> bool {
    let (group, _) = method.split_once('/').unwrap_or((method, ""));
    match (group, method) {
        (_, "resources/subscribe" | "resources/unsubscribe") => capabilities
            .resources
            .as_ref()
            .is_some_and(|r| r.subscribe == Some(true)),
        ("tools", _) => capabilities.tools.is_some(),
        ("resources", _) => capabilities.resources.is_some(),
        ("prompts", _) => capabilities.prompts.is_some(),
        ("completion", _) => capabilities.completions.is_some(),
        ("tasks", _) => capabilities.tasks.is_some(),
        _ => true,
    }
}
