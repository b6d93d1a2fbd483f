//! Routing of decoded peer messages: responses to pending requests, server requests to the
//! host (or refused), notifications to events.

use std::borrow::Cow;
use std::sync::LazyLock;

use memchr::memmem;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::{
    Diagnostic, Event, Queued, RawResult, RequestError, ServerNotification, Session, SessionState,
};
use crate::jsonrpc::{ErrorObject, Id, MessageRef, empty_object};
use crate::time::Instant;
use crate::types::ClientCapabilities;

/// Server requests that a human answers: deadlines pause while one is open.
pub(super) fn pauses_deadlines(method: &str) -> bool {
    matches!(method, "elicitation/create" | "sampling/createMessage")
}

/// Whether the host declared the capability a server request needs (`tasks/*` requests are
/// answered by the session itself when `tasks` is declared: see `task_receiver`).
pub(super) fn declared(capabilities: &ClientCapabilities, method: &str) -> bool {
    match method {
        "roots/list" => capabilities.roots.is_some(),
        "sampling/createMessage" => capabilities.sampling.is_some(),
        "elicitation/create" => capabilities.elicitation.is_some(),
        _ => false,
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ProgressParams {
    progress_token: Id,
    progress: f64,
    #[serde(default)]
    total: Option<f64>,
    #[serde(default)]
    message: Option<String>,
}

/// A progress notification in any member order and spacing, decoded in one pass (the
/// general path's shortcut, [`Session::any_order_progress`]). `id`, `result` and `error` are
/// only noted when present: a message with any of them is left to the general path.
#[derive(Deserialize)]
struct AnyOrderProgress<'a> {
    // Borrowed: a name or version with escapes fails here and takes the general path.
    #[serde(default)]
    jsonrpc: Option<&'a str>,
    method: &'a str,
    params: ProgressParams,
    #[serde(default, deserialize_with = "present")]
    id: bool,
    #[serde(default, deserialize_with = "present")]
    result: bool,
    #[serde(default, deserialize_with = "present")]
    error: bool,
}

/// Lines longer than this are not tried by the progress shortcut (they take the general path,
/// correctly, only without it): a progress notification is a few hundred bytes, and searching
/// every long result for the method name would cost more than the shortcut saves.
const PROGRESS_SHORTCUT_MAX: usize = 4096;

/// Whether `text` may be a progress notification worth the shortcut: short, not starting with
/// a member that only responses (and requests) have, and naming `"notifications/progress"`
/// (a vectorized search). The gate of [`Session::any_order_progress`], so that responses pay
/// almost nothing for it.
pub(super) fn mentions_progress(text: &str) -> bool {
    static FINDER: LazyLock<memmem::Finder<'static>> =
        LazyLock::new(|| memmem::Finder::new(br#""notifications/progress""#));
    if text.len() > PROGRESS_SHORTCUT_MAX {
        return false;
    }
    // The first member's name, past JSON whitespace (the one-byte test first: compact lines).
    let bytes = text.as_bytes();
    let name = match bytes {
        [b'{', b'"', rest @ ..] => rest,
        _ => {
            let json_ws = |b: &u8| matches!(b, b' ' | b'\t' | b'\n' | b'\r');
            let at = bytes
                .iter()
                .position(|b| !json_ws(b))
                .unwrap_or(bytes.len());
            let rest = bytes[at..].strip_prefix(b"{").unwrap_or_default();
            let at = rest.iter().position(|b| !json_ws(b)).unwrap_or(rest.len());
            rest[at..].strip_prefix(b"\"").unwrap_or_default()
        }
    };
    if name.starts_with(b"id\"") || name.starts_with(b"result\"") || name.starts_with(b"error\"") {
        return false;
    }
    FINDER.find(bytes).is_some()
}

fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    serde::de::IgnoredAny::deserialize(d).map(|_| true)
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct CancelledParams {
    request_id: Id,
    #[serde(default)]
    reason: Option<String>,
}

impl Session {
    /// Routes one message borrowed from the input: only what an event keeps is copied.
    pub(super) fn handle_decoded(&mut self, now: Instant, msg: MessageRef<'_>) {
        match msg {
            MessageRef::Response { id, result } => self.handle_answer(now, id, Ok(result)),
            MessageRef::Error {
                id: Some(id),
                error,
            } => self.handle_answer(now, id, Err(error)),
            MessageRef::Error { id: None, error } => self.handle_uncorrelated_error(now, error),
            MessageRef::Request { id, method, params } => {
                self.handle_server_request(now, id, method.into_owned(), params.map(to_owned));
            }
            MessageRef::Notification { method, params } => {
                self.handle_notification(now, method, params);
            }
        }
    }

    pub(super) fn handle_answer(
        &mut self,
        now: Instant,
        id: Id,
        answer: Result<&RawValue, ErrorObject>,
    ) {
        let wire = id.as_u64();
        if wire.is_some_and(|w| self.is_handshake_answer(w)) {
            let answer = answer.map(to_owned);
            return if self.discover_mode() {
                self.finish_discover(now, answer)
            } else {
                self.finish_handshake(now, answer)
            };
        }
        let handle = wire.and_then(|w| self.pending.by_wire(w));
        match handle {
            Some(handle) if self.discover_mode() => {
                self.modern_answer(handle, answer.map(to_owned));
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
    }

    /// Whether an answer with wire id `wire` is the handshake's (read by the session itself).
    fn is_handshake_answer(&self, wire: u64) -> bool {
        self.state == SessionState::Handshaking && wire == self.handshake_wire
    }

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
        if method == "ping" {
            self.outbound.push_back(Queued::Response {
                id,
                result: Ok(empty_object()),
            });
            return;
        }
        if self.handle_tasks_request(now, id.clone(), &method, params.as_deref()) {
            return;
        }
        if !declared(&self.config.capabilities, &method) {
            self.outbound.push_back(Queued::Response {
                id,
                result: Err(ErrorObject::method_not_found(&method)),
            });
            self.report(Diagnostic::RefusedServerRequest { method });
            return;
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
        let info = super::task_receiver::TaskInfo::of(&method, params.as_deref());
        if let Some(ttl) = info.augmented
            && self.accepts_task(&method)
        {
            self.accept_task(now, id, method, params, ttl);
            return;
        }
        let pauses = pauses_deadlines(&method);
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
        params: Option<&RawValue>,
    ) {
        match &*method {
            // Parsed from the borrowed params: no copy of them, no owned method.
            "notifications/progress" => match parse::<ProgressParams>(params) {
                Ok(p) => self.handle_progress(now, p),
                Err(detail) => self.report(Diagnostic::InvalidNotification {
                    method: method.into_owned(),
                    detail,
                }),
            },
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
    }

    /// The fast path for a progress notification in one of the compact forms the SDKs write:
    /// `{"jsonrpc":"2.0","method":"notifications/progress","params":{..}}` (canonical) or
    /// `{"method":"notifications/progress","params":{..},"jsonrpc":"2.0"}` (the TypeScript
    /// SDK's), members in that order, no whitespace: the params are parsed straight into
    /// their fields and the envelope is not parsed at all. Returns `false`, having done
    /// nothing, for any other input, including params that do not parse: the general path
    /// then handles it exactly as it would have (the same event or diagnostic).
    ///
    /// Why this is the same message: the prefix is a valid start of an object whose only
    /// members so far are those before `params`; `from_str` succeeds only if what sits
    /// between it and the suffix is exactly one JSON value (whitespace around it allowed);
    /// the suffix closes the object, with `jsonrpc` in the second form. So the text is an
    /// object with exactly the members `jsonrpc`, `method` and `params`: a notification.
    pub(super) fn canonical_progress(&mut self, now: Instant, text: &str) -> bool {
        const FORMS: [(&str, &str); 2] = [
            (
                r#"{"jsonrpc":"2.0","method":"notifications/progress","params":"#,
                "}",
            ),
            (
                r#"{"method":"notifications/progress","params":"#,
                r#","jsonrpc":"2.0"}"#,
            ),
        ];
        let Some(params) = FORMS
            .iter()
            .find_map(|(prefix, suffix)| text.strip_prefix(prefix)?.strip_suffix(suffix))
        else {
            return false;
        };
        match serde_json::from_str::<ProgressParams>(params) {
            Ok(p) => {
                self.clock_now = self.clock_now.max(now);
                self.handle_progress(now, p);
                true
            }
            Err(_) => false,
        }
    }

    /// The general path's shortcut for a progress notification in another member order or
    /// with whitespace: the line is decoded in one pass into the notification with typed
    /// params, where the general path skips the params as a raw value and then parses them
    /// again. Returns `false`, having done nothing, unless the line is exactly what the general
    /// path would route as progress (`jsonrpc` absent or "2.0", `method`
    /// "notifications/progress", no `id`, `result` or `error`, params that parse): anything
    /// else, including a params error to report, goes the general way.
    pub(super) fn any_order_progress(&mut self, now: Instant, text: &str) -> bool {
        match serde_json::from_str::<AnyOrderProgress<'_>>(text) {
            Ok(n)
                if n.jsonrpc.is_none_or(|v| v == "2.0")
                    && n.method == "notifications/progress"
                    && !(n.id || n.result || n.error) =>
            {
                self.clock_now = self.clock_now.max(now);
                self.handle_progress(now, n.params);
                true
            }
            _ => false,
        }
    }

    /// The fast path for a response in compact form: members exactly `"jsonrpc":"2.0"`,
    /// `"id":<integer>` and `"result":<object or array>`, in any order (the SDKs write
    /// `jsonrpc, id, result`; the TypeScript SDK `result, jsonrpc, id`), nothing between
    /// them. The envelope is not parsed: the members are matched as text, the result's end
    /// found by its brackets, and the answer routed as [`handle_answer`](Self::handle_answer)
    /// would route it (see [`located_answer`](Self::located_answer)). Returns `false`,
    /// having done nothing, for anything else (whitespace, another member, a member twice, a
    /// string, negative, fractional or over-long id, a scalar result): the general path then
    /// handles it exactly as before.
    pub(super) fn compact_response(&mut self, now: Instant, text: &str) -> bool {
        match compact_response_parts(text) {
            Some((id, result)) => self.located_answer(now, id, result),
            None => false,
        }
    }

    /// Routes the answer to the request with wire id `id` whose result is the text `result`
    /// of the fast path, an object or array whose brackets close at its end. An ordinary
    /// request's answer goes out as located, checked when the caller reads it (see
    /// `RawResult`): where the text is not JSON after all, the request completes and that
    /// read fails (the general path would report the line as not JSON and leave the request
    /// to its timeout). The handshake's and the discover era's answers are read at once: one
    /// JSON value and nothing else (the envelope parse would have checked the same). Returns
    /// `false`, having done nothing, where the general path must decide.
    fn located_answer(&mut self, now: Instant, id: u64, result: &str) -> bool {
        if !self.is_handshake_answer(id) && !self.discover_mode() {
            let Some(handle) = self.pending.by_wire(id) else {
                return false;
            };
            self.clock_now = self.clock_now.max(now);
            self.complete(handle, Ok(RawResult::unchecked(result)));
            return true;
        }
        let Ok(result) = serde_json::from_str::<&RawValue>(result) else {
            return false;
        };
        self.clock_now = self.clock_now.max(now);
        self.handle_answer(now, Id::from(id), Ok(result));
        true
    }

    fn handle_progress(&mut self, now: Instant, p: ProgressParams) {
        let handle = p.progress_token.as_u64().map(super::RequestHandle);
        let Some(handle) = handle.filter(|h| self.pending.get(*h).is_some_and(|e| e.progress))
        else {
            return self.report(Diagnostic::UnknownProgress);
        };
        // Invariant: the filter above saw the entry.
        let entry = self.pending.get(handle).expect("entry checked above");
        if entry.total.is_some() && entry.stage == super::Stage::Sent {
            let active = super::clock::nanos(self.clock.active(now));
            let deadline = super::deadline_for(entry, active);
            self.rearm(handle, deadline);
        }
        self.events.push_back(Event::Progress {
            handle,
            progress: p.progress,
            total: p.total,
            message: p.message,
        });
    }
}

/// The wire id and the result's text of a compact response (see
/// [`Session::compact_response`]), or `None`.
fn compact_response_parts(text: &str) -> Option<(u64, &str)> {
    let mut rest = text.strip_prefix('{')?;
    let (mut version, mut id, mut result) = (false, None, None);
    loop {
        if let Some(after) = rest.strip_prefix(r#""jsonrpc":"2.0""#) {
            if std::mem::replace(&mut version, true) {
                return None;
            }
            rest = after;
        } else if let Some(after) = rest.strip_prefix(r#""id":"#) {
            let digits = after.bytes().take_while(u8::is_ascii_digit).count();
            let (digits, after) = after.split_at(digits);
            if id.replace(integer_id(digits)?).is_some() {
                return None;
            }
            rest = after;
        } else if let Some(after) = rest.strip_prefix(r#""result":"#) {
            // `end` follows an ASCII bracket: a character boundary.
            let (value, after) = after.split_at(container_end(after)?);
            if result.replace(value).is_some() {
                return None;
            }
            rest = after;
        } else {
            return None;
        }
        match rest.as_bytes() {
            [b',', ..] => rest = &rest[1..],
            b"}" => break,
            _ => return None,
        }
    }
    version.then_some((id?, result?))
}

/// Where the object or array that opens `text` ends: the index just past the bracket that
/// closes the one at byte 0, strings skipped; `None` if `text` opens with no bracket or the
/// bracket never closes. Exact for valid JSON, not a validation.
// Not inlined: inlined into `compact_response_parts`, its walk of a long result was compiled
// into a loop 7% slower (instruction counts of a 256 KiB result).
#[inline(never)]
fn container_end(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    if !matches!(bytes.first(), Some(b'{' | b'[')) {
        return None;
    }
    let mut depth = 0usize;
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            b'"' => i = string_end(bytes, i + 1)?,
            _ => {}
        }
        i += 1;
    }
    None
}

/// A JSON-RPC id written as a JSON integer that fits a `u64`: digits only, no leading zero.
fn integer_id(digits: &str) -> Option<u64> {
    let plain = !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && (digits.len() == 1 || !digits.starts_with('0'));
    // `parse` refuses overflow (and would take a sign, refused above).
    plain.then(|| digits.parse().ok()).flatten()
}

/// The index of the quote that closes a string whose text starts at `from`, if any: the
/// first quote after an even run of backslashes (none included). Sixteen bytes a step while
/// they hold no quote (two words through the bit trick that finds a zero byte; its lowest
/// hit is exact); at a quote, the backslashes just before it are counted. Backslashes alone
/// never stop the walk, so the escaped newlines of a file read back cost nothing of their
/// own (a call to `memchr` per string cost more than the walk for the short keys and values
/// of most results).
fn string_end(bytes: &[u8], from: usize) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    // The high bit of each byte of `x` that is a quote, and maybe of bytes above one (a
    // borrow): the lowest bit set is always exact.
    let quotes = |x: u64| {
        let v = x ^ (ONES * 0x22);
        v.wrapping_sub(ONES) & !v & HIGHS
    };
    let mut at = from;
    loop {
        let rest = bytes.get(at..)?;
        let quote = if let Some(block) = rest.first_chunk::<16>() {
            let v = u128::from_le_bytes(*block);
            // Truncation intended: the low and the high eight bytes.
            let (low, high) = (quotes(v as u64), quotes((v >> 64) as u64));
            if low | high == 0 {
                at += 16;
                continue;
            }
            if low != 0 {
                (low.trailing_zeros() / 8) as usize
            } else {
                8 + (high.trailing_zeros() / 8) as usize
            }
        } else {
            rest.iter().position(|&b| b == b'"')?
        };
        let quote = at + quote;
        // The string's own backslashes only: the byte before `from` is its opening quote.
        // (Invariant: `from <= at <= quote < bytes.len()`, `quote` found in `bytes[at..]`.)
        let before = &bytes[from..quote];
        if before.last() != Some(&b'\\')
            || before.iter().rev().take_while(|&&b| b == b'\\').count() % 2 == 0
        {
            return Some(quote);
        }
        // An escaped quote: on after it.
        at = quote + 1;
    }
}

fn to_owned(raw: &RawValue) -> Box<RawValue> {
    raw.to_owned()
}

fn parse<T: for<'de> Deserialize<'de>>(params: Option<&RawValue>) -> Result<T, String> {
    let raw = params.map_or("null", RawValue::get);
    serde_json::from_str(raw).map_err(|e| e.to_string())
}

#[cfg(test)]
pub(super) mod tests {
    use proptest::prelude::*;
    use serde_json::Value;

    use super::{container_end, string_end};

    /// Whether `text` is one object or array from its first byte to its last: the bracket
    /// that opens it closes at the end. Not a validation (`{"a" 1}` passes).
    fn container_spans(text: &str) -> bool {
        container_end(text) == Some(text.len())
    }

    /// Values whose strings hold the characters the result scan must skip: quotes,
    /// backslashes, brackets, braces, control characters (escaped by serde_json) and
    /// non-ASCII. Also used by the fast path's property tests.
    pub(in crate::session) fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            r#"[a\\"{}\[\]:,\n\té]{0,40}"#.prop_map(Value::from),
        ];
        leaf.prop_recursive(4, 32, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::btree_map(r#"[a"\\}\]]{1,4}"#, inner, 0..4)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    /// `string_end` one byte at a time: what the word-at-a-time walk must agree with.
    fn string_end_bytewise(bytes: &[u8], mut from: usize) -> Option<usize> {
        loop {
            match *bytes.get(from)? {
                b'"' => return Some(from),
                b'\\' => from += 2,
                _ => from += 1,
            }
        }
    }

    proptest! {
        /// Any bytes, any start: quotes and backslashes at every offset of a sixteen-byte
        /// step, runs of backslashes, a backslash last, non-ASCII.
        #[test]
        fn string_end_agrees_with_a_walk_one_byte_at_a_time(
            bytes in prop::collection::vec(
                prop_oneof![6 => Just(b'a'), 2 => Just(b'"'), 4 => Just(b'\\'), 1 => Just(0xc3u8)],
                0..100,
            ),
            from in 0usize..110,
        ) {
            prop_assert_eq!(string_end(&bytes, from), string_end_bytewise(&bytes, from));
        }

        /// One serialized object or array spans its text; the same followed by more members
        /// (the envelope's, when the result is not last) does not; a scalar never does.
        #[test]
        fn container_spans_tells_a_whole_value_from_one_followed_by_more(
            v in json_value(),
            pretty in any::<bool>(),
            tail in r#"[,"x:1\]}\\ ]{1,6}"#,
        ) {
            let text = if pretty {
                serde_json::to_string_pretty(&v).unwrap()
            } else {
                serde_json::to_string(&v).unwrap()
            };
            let container = v.is_object() || v.is_array();
            prop_assert_eq!(container_spans(&text), container);
            let followed = format!("{text}{tail}");
            prop_assert!(!container_spans(&followed), "{}", followed);
            // Every cut of it is refused too, and nothing panics.
            for cut in (0..text.len()).filter(|&i| text.is_char_boundary(i)) {
                prop_assert!(!container_spans(&text[..cut]), "{}", &text[..cut]);
            }
        }
    }

    #[test]
    fn container_spans_edge_cases() {
        for (text, spans) in [
            ("{}", true),
            ("[]", true),
            (r#"{"a":"\\"}"#, true),
            (r#"{"a":"\"}"}"#, true),
            (r#"{"a":"\"#, false),
            (r#"{"a":"\\"#, false),
            ("{} ", false),
            (" {}", false),
            ("{}}", false),
            ("", false),
            ("null", false),
            (r#""{}""#, false),
            // Escapes on either side of an eight-byte step's end.
            (r#"{"a":"aaaaaaaaaaaaaaa\"b}bbbbbbbbbbbbbbbbbbb"}"#, true),
            (r#"{"a":"aaaaaaaaaaaaaaaa\"b}bbbbbbbbbbbbbbbbbbb"}"#, true),
            (r#"{"a":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"#, false),
        ] {
            assert_eq!(container_spans(text), spans, "{text}");
        }
    }
}
