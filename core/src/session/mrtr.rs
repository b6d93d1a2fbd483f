//! Multi-round requests (2026-07-28 `input_required`) and the `resultType` rules.
//!
//! A result is read by its `resultType`: absent or `"complete"` completes the request;
//! `"task"` completes it when the tasks extension was negotiated; `"input_required"` (only for
//! `tools/call`, `prompts/get` and `resources/read`) starts a round; anything else completes
//! it with [`RequestError::InvalidResult`].
//!
//! A round: every entry of `inputRequests` goes to the host as an [`Event::ServerRequest`]
//! (the same event and [`Session::respond`] path as an initialize-era server request, so host
//! handlers are shared), each answer fills its slot, and when all are in, the original
//! request is sent again under the same handle with a fresh wire id, `inputResponses` (the
//! bare results, keys in the server's order) and `requestState` exactly as received (absent
//! when the server sent none). A result with only `requestState` (load shedding) is retried at
//! once. Rounds are capped by [`SessionConfig::max_input_rounds`](super::SessionConfig).

use std::collections::HashMap;

use serde_json::value::RawValue;

use super::inbound::Reply;
use super::pending::Stage;
use super::server_requests;
use super::{Event, InboundRequestId, Queued, RequestError, RequestHandle, Session};
use crate::jsonrpc::{self, ErrorObject};
use crate::types::v2026::{self, InputRequiredResult, ResultType};

/// Methods whose results may be `input_required`.
const MULTI_ROUND: [&str; 3] = ["tools/call", "prompts/get", "resources/read"];

/// The multi-round state of one request.
#[derive(Debug, Default)]
pub(crate) struct Round {
    /// Rounds so far.
    number: u32,
    /// `requestState` of the last result, raw.
    state: Option<Box<RawValue>>,
    /// `inputResponses` slots, in the server's key order.
    answers: Vec<(String, Option<Box<RawValue>>)>,
    /// Host requests still open for this round.
    open: Vec<InboundRequestId>,
    /// Whether the next transmit is a retry carrying the round's fields.
    retry: bool,
}

/// Per-request state of the discover era, cleaned when the request completes.
#[derive(Debug, Default)]
pub(crate) struct ModernRequests {
    pub(crate) rounds: HashMap<RequestHandle, Round>,
    /// -32022 retries so far.
    pub(crate) version_retries: HashMap<RequestHandle, u8>,
}

impl Session {
    /// A discover-era answer to a pending request.
    pub(super) fn modern_answer(
        &mut self,
        handle: RequestHandle,
        answer: Result<Box<RawValue>, ErrorObject>,
    ) {
        let raw = match answer {
            Ok(raw) => raw,
            Err(e) if e.code == v2026::UNSUPPORTED_PROTOCOL_VERSION => {
                return self.version_retry(handle, e);
            }
            Err(e) => return self.complete(handle, Err(RequestError::Remote(e))),
        };
        match ResultType::of(&raw) {
            ResultType::Complete => {
                // Never a multi-round retry's result (the spec forbids caching those).
                if self.config.result_cache
                    && !self.modern.rounds.contains_key(&handle)
                    && let Some(p) = self.pending.get(handle)
                    && let Some(key) = super::cache::key_of(
                        &p.method,
                        p.params.as_ref().map(super::RawParams::get),
                    )
                {
                    self.cache.store(key, self.clock_now, &raw);
                }
                self.complete(handle, Ok(raw.into()));
            }
            ResultType::Task if self.tasks_negotiated() => self.complete(handle, Ok(raw.into())),
            ResultType::InputRequired
                if self
                    .pending
                    .get(handle)
                    .is_some_and(|p| MULTI_ROUND.contains(&&*p.method)) =>
            {
                self.start_round(handle, &raw);
            }
            other => {
                let detail = match other {
                    ResultType::Unknown(t) => format!("unknown resultType {t:?}"),
                    ResultType::Task => "resultType \"task\" without the tasks extension".into(),
                    _ => "resultType \"input_required\" for a method that has no rounds".into(),
                };
                self.complete(handle, Err(RequestError::InvalidResult(detail)));
            }
        }
    }

    /// -32022 to a request: switch to another modern version the server lists and send it
    /// again (once per request); otherwise the error completes it.
    fn version_retry(&mut self, handle: RequestHandle, e: ErrorObject) {
        let supported = super::handshake::supported_in(&e);
        let current = self.envelope_version();
        let next = crate::session::ProtocolVersion::DISCOVER_ERA
            .into_iter()
            .rev()
            .find(|v| {
                *v != current
                    && self.config.supported_versions.contains(v)
                    && supported.iter().any(|s| s == v.as_str())
            });
        let retries = self.modern.version_retries.entry(handle).or_default();
        match next {
            Some(v) if *retries == 0 => {
                *retries += 1;
                self.handshake.set_envelope_version(v);
                if let Some(s) = &mut self.server {
                    s.version = v;
                }
                self.resend_now(handle);
            }
            _ => self.complete(handle, Err(RequestError::Remote(e))),
        }
    }

    /// Puts a request that was answered back in the queue with a fresh wire id; its deadline
    /// is unchanged.
    fn resend_now(&mut self, handle: RequestHandle) {
        let wire = self.next_id;
        let Some(p) = self.pending.get_mut(handle) else {
            return;
        };
        p.stage = Stage::Queued;
        self.next_id += 1;
        self.pending.rewire(handle, wire);
        self.outbound.push_back(Queued::Request(handle));
    }

    fn start_round(&mut self, handle: RequestHandle, raw: &RawValue) {
        let result = match serde_json::from_str::<InputRequiredResult>(raw.get()) {
            Ok(r) if r.input_requests.is_some() || r.request_state.is_some() => r,
            Ok(_) => {
                let detail = "input_required with neither inputRequests nor requestState";
                return self.complete(handle, Err(RequestError::InvalidResult(detail.into())));
            }
            Err(e) => {
                let detail = format!("invalid input_required result: {e}");
                return self.complete(handle, Err(RequestError::InvalidResult(detail)));
            }
        };
        let number = self.modern.rounds.get(&handle).map_or(0, |r| r.number) + 1;
        if number > self.config.max_input_rounds {
            let rounds = self.config.max_input_rounds;
            return self.complete(handle, Err(RequestError::TooManyInputRounds { rounds }));
        }
        let requests = result.input_requests.unwrap_or_default();
        // Only what a descriptor allows as an input request, and only when declared.
        let refused = requests.iter().find(|(_, r)| {
            !server_requests::kind_of(&r.method)
                .is_some_and(|k| k.input_request && (k.declared)(&self.config.capabilities))
        });
        if let Some((key, r)) = refused {
            let detail = format!(
                "the server asked for {} ({key}) without the client's capability",
                r.method
            );
            return self.complete(handle, Err(RequestError::InvalidResult(detail)));
        }
        if self.inbound.len() + requests.len() > self.config.max_server_requests {
            let detail = format!("{} input requests exceed the open limit", requests.len());
            return self.complete(handle, Err(RequestError::InvalidResult(detail)));
        }
        // The server is done with this exchange: a cancel now needs no notice.
        if let Some(p) = self.pending.get_mut(handle) {
            p.stage = Stage::Waiting;
        }
        let mut round = Round {
            number,
            state: result.request_state,
            answers: Vec::with_capacity(requests.len()),
            open: Vec::with_capacity(requests.len()),
            retry: false,
        };
        let mut events = Vec::with_capacity(requests.len());
        for (index, (key, request)) in requests.into_iter().enumerate() {
            let pauses = server_requests::pauses_deadlines(&request.method);
            if pauses {
                self.clock.pause(self.clock_now);
            }
            let id = self
                .inbound
                .insert_reply(Reply::Input { handle, index }, pauses);
            round.answers.push((key, None));
            round.open.push(id);
            events.push(Event::ServerRequest {
                id,
                method: request.method,
                params: request.params,
            });
        }
        let ready = round.open.is_empty();
        self.modern.rounds.insert(handle, round);
        self.events.extend(events);
        if ready {
            self.retry_round(handle);
        }
    }

    /// The host answered one input request of a round.
    pub(super) fn answer_input(
        &mut self,
        id: InboundRequestId,
        handle: RequestHandle,
        index: usize,
        result: Result<Box<RawValue>, ErrorObject>,
    ) {
        let Some(round) = self.modern.rounds.get_mut(&handle) else {
            return;
        };
        round.open.retain(|o| *o != id);
        let method_of = |round: &Round| round.answers.get(index).map(|(k, _)| k.clone());
        match result {
            Ok(raw) => {
                if let Some(slot) = round.answers.get_mut(index) {
                    slot.1 = Some(raw);
                }
                if round.open.is_empty() {
                    self.retry_round(handle);
                }
            }
            Err(error) => {
                let key = method_of(round).unwrap_or_default();
                self.complete(handle, Err(RequestError::InputFailed { key, error }));
            }
        }
    }

    fn retry_round(&mut self, handle: RequestHandle) {
        if let Some(round) = self.modern.rounds.get_mut(&handle) {
            round.retry = true;
        }
        self.resend_now(handle);
    }

    /// The params of a request as sent now: the round's fields on a retry, then the envelope.
    pub(super) fn modern_params(
        &self,
        handle: RequestHandle,
        params: Option<&str>,
    ) -> Result<Box<RawValue>, String> {
        let Some(round) = self.modern.rounds.get(&handle).filter(|r| r.retry) else {
            // The round fields of a multi-round method go only on its retry; other methods
            // (`tasks/update`, whose own payload is `inputResponses`) keep their params.
            let multi_round = self
                .pending
                .get(handle)
                .is_some_and(|p| MULTI_ROUND.contains(&&*p.method));
            let strip: &[(&str, Option<&RawValue>)] = if multi_round {
                &[("inputResponses", None), ("requestState", None)]
            } else {
                &[]
            };
            return self.envelope_with(params, strip);
        };
        let mut responses = String::from("{");
        for (i, (key, value)) in round.answers.iter().enumerate() {
            if i > 0 {
                responses.push(',');
            }
            // Invariant: a `&str` always serializes as a JSON string.
            responses.push_str(&serde_json::to_string(key).expect("a string serializes"));
            responses.push(':');
            responses.push_str(value.as_deref().map_or("null", RawValue::get));
        }
        responses.push('}');
        let responses = RawValue::from_string(responses).map_err(|e| e.to_string())?;
        let responses = (!round.answers.is_empty()).then_some(&*responses);
        self.envelope_with(
            params,
            &[
                ("inputResponses", responses),
                ("requestState", round.state.as_deref()),
            ],
        )
    }

    /// A request completed: drop its rounds and tell the host to stop on open input requests.
    // Inlined into each completion: the check that both maps are empty is all it costs then.
    #[inline(always)]
    pub(super) fn forget_modern(&mut self, handle: RequestHandle) {
        // Both maps are empty unless a discover-era request is mid-round or retried: skip
        // hashing the handle twice per completion.
        if self.modern.rounds.is_empty() && self.modern.version_retries.is_empty() {
            return;
        }
        self.forget_rounds(handle);
    }

    /// [`forget_modern`](Self::forget_modern) when some request is mid-round or retried.
    fn forget_rounds(&mut self, handle: RequestHandle) {
        self.modern.version_retries.remove(&handle);
        let Some(round) = self.modern.rounds.remove(&handle) else {
            return;
        };
        for id in round.open {
            if let Some(inbound) = self.inbound.remove(id) {
                if inbound.pauses {
                    self.clock.resume(self.clock_now);
                }
                self.events.push_back(Event::ServerRequestCancelled {
                    id,
                    reason: Some("the request it belongs to finished".into()),
                });
            }
        }
    }
}

/// An encoded request whose params could not take the envelope (cannot happen for params
/// checked at send time; kept as an error rather than a panic).
pub(super) fn envelope_error(detail: String) -> RequestError {
    RequestError::Remote(ErrorObject::new(
        jsonrpc::ErrorObject::INVALID_PARAMS,
        detail,
    ))
}
