//! Routing of decoded peer messages: responses to pending requests, server requests to the
//! host (or refused), notifications to events.

use std::borrow::Cow;

use serde_json::value::RawValue;

use super::server_requests::{self, Answerer};
use super::{Diagnostic, Event, Queued, RawResult, RequestError, ServerNotification, Session};
use crate::jsonrpc::{self, ErrorObject, Id, MessageRef, RawJson, empty_object};
use crate::rpc::notifications::{CancelledParams, ProgressParams, parse};
pub(super) use crate::rpc::route::InvalidPayload;
use crate::rpc::route::Router;
use crate::time::Instant;

/// The client's hooks of the shared routing: an input that is not a message is reported, and
/// the answer it carries, if its id can be read, completes that request at once (see
/// `salvage`).
impl Router for Session {
    fn route(
        &mut self,
        now: Instant,
        msg: MessageRef<'_>,
        progress: Option<ProgressParams>,
    ) -> Result<(), InvalidPayload> {
        self.handle_decoded(now, msg, progress)
    }

    fn undecodable_input(&mut self, input: jsonrpc::Input<'_>, e: jsonrpc::DecodeError) {
        Session::undecodable_input(self, input.bytes(), e);
    }

    fn undecodable_element(&mut self, e: jsonrpc::DecodeError) {
        self.report_decode_error(e);
    }

    fn closed(&self) -> bool {
        self.is_closed()
    }
}

impl Session {
    /// Routes one message borrowed from the input: only what an event keeps is copied.
    ///
    /// Payloads are read where they are needed, which validates them (see [`RawJson`]): an
    /// ordinary request's result goes out located, its reader's typed decode checks it
    /// ([`RawResult`]); progress params are read once, into their typed fields; every other
    /// payload the session reads or keeps is checked first. A payload that fails its check
    /// returns [`InvalidPayload`] having routed nothing. `progress` is the params of a
    /// progress notification read already by the decoder ([`crate::jsonrpc::decode_reading_into`]):
    /// `msg` is then that notification, and its params are not read again.
    pub(super) fn handle_decoded(
        &mut self,
        now: Instant,
        msg: MessageRef<'_>,
        progress: Option<ProgressParams>,
    ) -> Result<(), InvalidPayload> {
        if let Some(p) = progress {
            let written = match msg {
                MessageRef::Notification { params, .. } => params,
                _ => None,
            };
            self.handle_progress(now, p, written);
            return Ok(());
        }
        match msg {
            MessageRef::Response { id, result } => self.handle_answer(now, id, Ok(result))?,
            MessageRef::Error {
                id: Some(id),
                error,
            } => self.handle_answer(now, id, Err(error))?,
            MessageRef::Error { id: None, error } => self.handle_uncorrelated_error(now, error),
            MessageRef::Request { id, method, params } => {
                let params = params.map(RawJson::check).transpose()?;
                self.handle_server_request(now, id, method.into_owned(), params.map(to_owned));
            }
            MessageRef::Notification { method, params } => {
                self.handle_notification(now, method, params)?;
            }
        }
        Ok(())
    }

    /// Routes an answer. A result the session reads itself (the handshake's, the discover
    /// era's) is checked first; any other goes to its request located, unchecked
    /// ([`RawResult`] says so).
    pub(super) fn handle_answer(
        &mut self,
        now: Instant,
        id: Id,
        answer: Result<RawJson<'_>, ErrorObject>,
    ) -> Result<(), InvalidPayload> {
        let wire = id.as_u64();
        let checked = |answer: Result<RawJson<'_>, ErrorObject>| match answer {
            Ok(result) => result.check().map(|r| Ok(to_owned(r))),
            Err(error) => Ok(Err(error)),
        };
        if wire.is_some_and(|w| self.is_handshake_answer(w)) {
            let answer = checked(answer)?;
            if self.discover_mode() {
                self.finish_discover(now, answer);
            } else {
                self.finish_handshake(now, answer);
            }
            return Ok(());
        }
        let handle = wire.and_then(|w| self.pending.by_wire(w));
        match handle {
            Some(handle) if self.discover_mode() => {
                let answer = checked(answer)?;
                self.modern_answer(handle, answer);
            }
            // The one copy of the result: the event outlives the input.
            Some(handle) => self.complete(
                handle,
                answer.map(RawResult::from).map_err(RequestError::Remote),
            ),
            // Ids below the counter were ours: that request finished already.
            None if wire.is_some_and(|w| w < self.next_id) => {
                self.report(Diagnostic::StaleResponse { id });
            }
            None => self.report(Diagnostic::UnknownResponse { id }),
        }
        Ok(())
    }

    /// Whether an answer with wire id `wire` is the handshake's (read by the session itself).
    fn is_handshake_answer(&self, wire: u64) -> bool {
        self.handshake.awaits(wire)
    }

    /// Routes a server request by its descriptor (see [`server_requests`]): refused with
    /// -32601 when unknown or its capability is undeclared, answered by the session (`ping`,
    /// the task table), or handed to the host, as a task when it asks to run as one and the
    /// host accepts that. When the host runs tasks itself
    /// ([`SessionConfig::host_runs_tasks`](super::SessionConfig::host_runs_tasks)), the
    /// task-augmented requests and the task queries go to the host as they came.
    fn handle_server_request(
        &mut self,
        now: Instant,
        id: Id,
        method: String,
        params: Option<Box<RawValue>>,
    ) {
        // The peer is not reading what is queued for it: its requests get no answer (an
        // error would be queued too) until it reads.
        if self.outbound_full() {
            self.drop_server_request(now, &method);
            return;
        }
        let kind =
            server_requests::kind_of(&method).filter(|k| (k.declared)(&self.config.capabilities));
        let Some(kind) = kind else {
            self.outbound.push_back(Queued::Response {
                id,
                result: Err(ErrorObject::method_not_found(&method)),
            });
            self.report(Diagnostic::RefusedServerRequest { method });
            return;
        };
        match kind.answerer {
            Answerer::Pong => {
                return self.outbound.push_back(Queued::Response {
                    id,
                    result: Ok(empty_object()),
                });
            }
            Answerer::TaskTable(query) if !self.config.host_runs_tasks => {
                return self.handle_tasks_request(now, id, query, params.as_deref());
            }
            Answerer::TaskTable(_) | Answerer::Host => {}
        }
        if self.inbound.len() >= self.config.max_server_requests || self.inbound.contains_wire(&id)
        {
            let message = if self.inbound.contains_wire(&id) {
                "a request with this id is already open"
            } else {
                "too many concurrent requests"
            };
            self.outbound.push_back(Queued::Response {
                id,
                result: Err(ErrorObject::new(ErrorObject::INTERNAL_ERROR, message)),
            });
            self.report(Diagnostic::ServerRequestLimit { method });
            return;
        }
        let info = super::task_receiver::TaskInfo::of(kind, params.as_deref());
        if let Some(ttl) = info.augmented
            && !self.config.host_runs_tasks
            && kind.accepted_as_task(&self.config.capabilities)
        {
            self.accept_task(now, id, kind, params, ttl);
            return;
        }
        // A `tasks/result` the host answers waits for the same person or model as the
        // request its task runs.
        let pauses = kind.pauses_deadlines
            || (self.config.host_runs_tasks
                && kind.answerer == Answerer::TaskTable(server_requests::TaskQuery::Result));
        if pauses {
            self.clock.pause(now);
        }
        let id = self.inbound.insert(id, pauses);
        self.inbound.set_related_task(id, info.related);
        self.events
            .push_back(Event::ServerRequest { id, method, params });
    }

    fn handle_notification(
        &mut self,
        now: Instant,
        method: Cow<'_, str>,
        params: Option<RawJson<'_>>,
    ) -> Result<(), InvalidPayload> {
        if method == "notifications/progress" {
            // Read once, straight into the typed fields (which validates the text); only a
            // failed read asks whether the text was JSON at all.
            let read = params.map_or_else(
                || serde_json::from_str::<ProgressParams>("null"),
                RawJson::decode,
            );
            match read {
                Ok(p) => self.handle_progress(now, p, params),
                Err(e) => {
                    params.map(RawJson::check).transpose()?;
                    self.report(Diagnostic::InvalidNotification {
                        method: method.into_owned(),
                        detail: e.to_string(),
                    });
                }
            }
            return Ok(());
        }
        let params = params.map(RawJson::check).transpose()?;
        match &*method {
            "notifications/cancelled" => match parse::<CancelledParams>(params) {
                Ok(p) => {
                    // Unknown or finished ids are ignored, as the spec allows.
                    if let Some((id, inbound)) = self.inbound.remove_wire(&p.request_id) {
                        if inbound.pauses {
                            self.clock.resume(now);
                        }
                        self.events.push_back(Event::ServerRequestCancelled {
                            id,
                            reason: p.reason,
                        });
                    }
                }
                Err(detail) => self.report(Diagnostic::InvalidNotification {
                    method: method.into_owned(),
                    detail,
                }),
            },
            _ => {
                if self.discover_mode() {
                    self.cache.invalidate(&method, params);
                }
                let notification = ServerNotification {
                    method: method.into_owned(),
                    params: params.map(to_owned),
                };
                let listen = if self.discover_mode() {
                    self.listen_of(notification.params.as_deref())
                } else {
                    None
                };
                match listen {
                    Some(handle) => self.route_to_listen(handle, notification),
                    None => self.events.push_back(Event::Notification(notification)),
                }
            }
        }
        Ok(())
    }

    /// Routes progress `p` (read from `written`, the params as the server wrote them) to its
    /// request.
    fn handle_progress(&mut self, now: Instant, p: ProgressParams, written: Option<RawJson<'_>>) {
        let handle = p.progress_token.as_u64().map(super::RequestHandle);
        let Some(handle) = handle.filter(|h| self.pending.get(*h).is_some_and(|e| e.progress))
        else {
            return self.report(Diagnostic::UnknownProgress);
        };
        // Invariant: the filter above saw the entry.
        let entry = self.pending.get(handle).expect("entry checked above");
        if entry.total.is_some() && entry.stage == super::Stage::Sent {
            let active = crate::rpc::clock::nanos(self.clock.active(now));
            let deadline = super::deadline_for(entry, active);
            self.rearm(handle, deadline);
        }
        // `p` was read from the text, so the text is JSON; checking it again costs a pass
        // over a small object, and only for progress that has a request to go to.
        let params = written.and_then(|w| w.check().ok()).map(ToOwned::to_owned);
        self.events.push_back(Event::Progress {
            handle,
            progress: p.progress,
            total: p.total,
            message: p.message,
            params,
        });
    }
}

fn to_owned(raw: &RawValue) -> Box<RawValue> {
    raw.to_owned()
}
