//! The envelope of a message written plainly (compact or spaced), read without serde's
//! derived visitor.
//!
//! Most peers (every official SDK) write each message as one plain object: member names
//! without escapes, a method name and a string id without escapes, an integer id; compact
//! (no whitespace), or spaced as Python's `json.dumps` writes (`": "`, `", "`). For such a
//! frame [`envelope`] walks the members by hand, whitespace between tokens skipped as serde's
//! parse skips it (the compact form costs no check of its own beyond one per member), and
//! returns the same [`Envelope`] the derived `Deserialize` would build, except that payloads
//! (`params`, `result`) are only located, by a string-aware scan ([`raw_json::locate`]), and
//! left unvalidated ([`RawJson`]): whoever reads one as a type validates it in that pass.
//!
//! **Guarantee.** `envelope` returns `Some` only for input whose envelope, once each located
//! payload passes [`RawJson::check`], the general parse reads into an equal envelope; and
//! where a payload fails its check, the general parse refuses the input (serde's value parse
//! starting where the payload starts would end where the scan ends, were it valid). It
//! returns `None`, having decided nothing, for anything else: a member other than
//! `jsonrpc`, `id`, `method`, `params`, `result`, a member twice, an escape in a name or
//! string, an `error` member, an id that is not an unsigned integer or a plain string, a
//! payload the message's kind does not carry (`result` beside a `method`, `params` without
//! one), a payload with no extent (a bracket or string that never closes), a payload that is
//! not UTF-8, trailing bytes other than whitespace. Those go the general way, so the routing of a message never
//! depends on which decoder read it. The differential property test in `jsonrpc::tests`
//! holds this on generated, mutated and arbitrary input.
//!
//! [`envelope_reading`] walks the same way and, for a notification of the one method whose
//! params the caller reads next ([`ReadInPass`]: progress), reads those params as their type
//! in the walk's pass instead of scanning them: by hand for the form the SDKs write
//! ([`progress`]), else by serde's typed parse started at the value. The envelope it returns
//! is [`envelope`]'s for any input.

use std::borrow::Cow;

use serde::Deserialize;

use super::raw_json::{self, RawJson};
use super::{Envelope, Id, Input, ReadInPass};

mod progress;

/// The params type of the plain [`envelope`], which reads none.
#[derive(Deserialize)]
struct NoneRead;

impl ReadInPass for NoneRead {
    // Never compared: `envelope` names no method to read.
    const METHOD: &'static str = "";
}

/// The envelope of `input` when it is written plainly (see the module guarantee), else
/// `None`.
// Inlined into the decoder: the envelope is built in place rather than moved.
#[inline(always)]
pub(super) fn envelope(input: Input<'_>) -> Option<Envelope<'_>> {
    envelope_reading::<NoneRead>(input, None, &mut None)
}

/// [`envelope`], and, when `read_params_of` names the method written before `params` and no
/// `id` came before them either, those params read as `P` in the pass that locates them and
/// put in `read` (an out-parameter: the envelope is returned without moving them with it); a
/// typed parse started at the value reads exactly one value, and where it ends is where the
/// walk goes on (members after `params` are still read, so the envelope is the one
/// [`envelope`] returns). That typed read is the one a reader of the located params makes
/// ([`RawJson::decode`]); where it fails (the params are not JSON, or not a `P`), the params
/// are located by the scan instead and nothing is read, so that reader fails as before.
///
/// Guarantee, beside the module's: the envelope is exactly [`envelope`]'s for any input, and
/// a `P` put in `read` is what `params.decode::<P>()` gives for the located params. `read`
/// means nothing where the envelope is `None` (the caller clears it).
// Inlined into the decoder: the envelope is built in place rather than moved.
#[inline(always)]
pub(super) fn envelope_reading<'a, P: ReadInPass>(
    input: Input<'a>,
    read_params_of: Option<&'static str>,
    read: &mut Option<P>,
) -> Option<Envelope<'a>> {
    // Whether the method is `read_params_of`.
    let mut method_is_read = false;
    let bytes = input.bytes();
    let start = match bytes.first() {
        Some(b'{') => 0,
        _ => skip_whitespace(bytes, 0),
    };
    if bytes.get(start) != Some(&b'{') {
        return None;
    }
    // The version member first, as most peers write it, matched whole with its comma (an
    // array compare: a few wide loads, where a byte pattern is compared byte by byte).
    let version_first = bytes
        .get(start..)?
        .first_chunk::<17>()
        .is_some_and(|head| head == br#"{"jsonrpc":"2.0","#);
    let (mut at, jsonrpc) = if version_first {
        (start + 17, Some(Cow::Borrowed("2.0")))
    } else {
        (start + 1, None)
    };
    let mut env = Envelope {
        jsonrpc,
        id: None,
        method: None,
        params: None,
        result: None,
        error: None,
    };
    loop {
        let (member, len) = member_name(bytes, at)?;
        // The name, its colon, and any whitespace around the colon.
        at += len;
        // A member twice is refused (serde's derived visitor fails on it).
        match member {
            Member::Jsonrpc if env.jsonrpc.is_none() => {
                // The version every peer writes, matched whole; anything else read as a string.
                let plain = bytes
                    .get(at..)
                    .and_then(<[u8]>::first_chunk::<5>)
                    .is_some_and(|version| version == b"\"2.0\"");
                let text = if plain { "2.0" } else { plain_str(input, at)? };
                at += text.len() + 2;
                env.jsonrpc = Some(Cow::Borrowed(text));
            }
            Member::Method if env.method.is_none() => {
                // The method whose params are read, matched whole; any other read as a string.
                let text = match read_params_of {
                    Some(of) if is_quoted(bytes, at, of) => {
                        method_is_read = true;
                        of
                    }
                    _ => plain_str(input, at)?,
                };
                at += text.len() + 2;
                env.method = Some(Cow::Borrowed(text));
            }
            Member::Id if env.id.is_none() => {
                let (id, len) = id(input, at)?;
                at += len;
                env.id = Some(Some(id));
            }
            Member::Params if env.params.is_none() => {
                // Read as `P` only for a notification of that method so far: an `id` or the
                // method after the params would be met too late to choose.
                let typed = if method_is_read && env.id.is_none() {
                    typed_at::<P>(input, at)
                } else {
                    None
                };
                let value = match typed {
                    Some((params, value)) => {
                        *read = Some(params);
                        value
                    }
                    None => value_at(input, at)?,
                };
                at += value.get().len();
                env.params = Some(value);
            }
            Member::Result if env.result.is_none() => {
                let value = value_at(input, at)?;
                at += value.get().len();
                env.result = Some(value);
            }
            _ => return None,
        }
        // The comma or the closing brace, whitespace before it skipped.
        let mut next = *bytes.get(at)?;
        // Every byte that is JSON whitespace is at most a space (others are refused below).
        if next <= b' ' {
            at = skip_whitespace(bytes, at);
            next = *bytes.get(at)?;
        }
        match next {
            b',' => at += 1,
            // The last byte, or whitespace only after it.
            b'}' if at + 1 == bytes.len() || skip_whitespace(bytes, at + 1) == bytes.len() => {
                return carries_every_payload(&env).then_some(env);
            }
            _ => return None,
        }
    }
}

/// Whether `b` is whitespace to JSON (what serde's parse skips between tokens).
fn is_whitespace(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// The index of the first byte at or after `at` that is not JSON whitespace (`bytes.len()`
/// when there is none).
fn skip_whitespace(bytes: &[u8], mut at: usize) -> usize {
    while bytes.get(at).copied().is_some_and(is_whitespace) {
        at += 1;
    }
    at
}

/// One of the five members the walk reads.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Member {
    Jsonrpc,
    Id,
    Method,
    Params,
    Result,
}

impl Member {
    /// The member whose name starts with `initial` (the five names start with five letters).
    fn by_initial(initial: u8) -> Option<Member> {
        Some(match initial {
            b'j' => Member::Jsonrpc,
            b'i' => Member::Id,
            b'm' => Member::Method,
            b'p' => Member::Params,
            b'r' => Member::Result,
            _ => return None,
        })
    }

    /// The name as JSON writes it between its quotes.
    fn name(self) -> &'static [u8] {
        match self {
            Member::Jsonrpc => b"jsonrpc",
            Member::Id => b"id",
            Member::Method => b"method",
            Member::Params => b"params",
            Member::Result => b"result",
        }
    }
}

/// The member whose name opens `bytes[at..]`, possibly after whitespace, when it is one of
/// the five the envelope reads, written without escapes; and how many bytes it takes up to
/// its value (whitespace before the name, the name, its colon, whitespace around the colon).
/// `None` for any other name (an unknown or escaped name goes the general way).
// Inlined into the walk: the compact case is a literal compare.
#[inline(always)]
fn member_name(bytes: &[u8], at: usize) -> Option<(Member, usize)> {
    let rest = bytes.get(at..)?;
    // Each name compared as a literal of known length (inline compares, no call), with its
    // colon as compact writers write it; the length taken with it is the literal's.
    let (member, compact) = match rest.get(1)? {
        b'j' if rest.starts_with(br#""jsonrpc":"#) => (Member::Jsonrpc, 10),
        b'i' if rest.starts_with(br#""id":"#) => (Member::Id, 5),
        b'm' if rest.starts_with(br#""method":"#) => (Member::Method, 9),
        b'p' if rest.starts_with(br#""params":"#) => (Member::Params, 9),
        b'r' if rest.starts_with(br#""result":"#) => (Member::Result, 9),
        _ => return spaced_member_name(bytes, at),
    };
    // Every byte that is JSON whitespace is at most a space, and no value starts with one.
    match bytes.get(at + compact) {
        Some(&b) if b <= b' ' => Some((member, skip_whitespace(bytes, at + compact) - at)),
        _ => Some((member, compact)),
    }
}

/// [`member_name`] where whitespace comes before the name or around its colon.
#[cold]
fn spaced_member_name(bytes: &[u8], at: usize) -> Option<(Member, usize)> {
    let start = skip_whitespace(bytes, at);
    let rest = bytes.get(start..)?;
    let member = Member::by_initial(*rest.get(1)?)?;
    let name = member.name();
    if rest.first() != Some(&b'"')
        || rest.get(1..=name.len()) != Some(name)
        || rest.get(name.len() + 1) != Some(&b'"')
    {
        return None;
    }
    let colon = skip_whitespace(bytes, start + name.len() + 2);
    if bytes.get(colon) != Some(&b':') {
        return None;
    }
    Some((member, skip_whitespace(bytes, colon + 1) - at))
}

/// Whether the message that `env` classifies as keeps every payload located in it: a
/// `result` beside a `method` (a request or notification) or `params` without one (a
/// response) would be dropped unchecked, so serde's parse decides those (it refuses the
/// input where the dropped payload is not JSON).
fn carries_every_payload(env: &Envelope<'_>) -> bool {
    match env.method {
        Some(_) => env.result.is_none(),
        None => env.params.is_none(),
    }
}

/// The content of the string that opens at `bytes[at]` when it holds no escape and no control
/// character (so that its content is its value), else `None`. Not checked to be UTF-8.
fn plain_string(bytes: &[u8], at: usize) -> Option<&[u8]> {
    let rest = bytes.get(at..)?.strip_prefix(b"\"")?;
    let len = raw_json::plain_prefix_len(rest)?;
    (rest[len] == b'"').then_some(&rest[..len])
}

/// Whether the string that opens at `bytes[at]` is `text` (written without escapes: `text`
/// holds no quote, backslash or control character), so that [`plain_str`] would return it.
fn is_quoted(bytes: &[u8], at: usize, text: &str) -> bool {
    let end = at + 1 + text.len();
    bytes.get(at) == Some(&b'"')
        && bytes.get(at + 1..end) == Some(text.as_bytes())
        && bytes.get(end) == Some(&b'"')
}

/// [`plain_string`] as text, checked to be UTF-8 unless the input is text already.
fn plain_str(input: Input<'_>, at: usize) -> Option<&str> {
    match input {
        Input::Text(text) => {
            let len = plain_string(text.as_bytes(), at)?.len();
            // The quotes around `at + 1 .. at + 1 + len` are ASCII: char boundaries.
            text.get(at + 1..at + 1 + len)
        }
        Input::Bytes(bytes) => std::str::from_utf8(plain_string(bytes, at)?).ok(),
    }
}

/// The id at `at` and how many bytes it takes: an unsigned integer that fits a `u64`, written
/// as JSON writes one (no sign, fraction, exponent or leading zero), or a plain string.
// Inlined into the walk: the id is built in place rather than returned through memory.
#[inline(always)]
fn id(input: Input<'_>, at: usize) -> Option<(Id, usize)> {
    let bytes = input.bytes();
    if bytes.get(at) == Some(&b'"') {
        let text = plain_str(input, at)?;
        return Some((Id::String(text.to_owned()), text.len() + 2));
    }
    let (n, len) = unsigned(bytes, at)?;
    Some((Id::from(n), len))
}

/// The unsigned integer at `at` and how many bytes it takes, when it fits a `u64` and is
/// written as JSON writes one (no sign, fraction, exponent or leading zero): serde's parse
/// reads such a number as that `u64`.
// Inlined into the walk (ids are read on every answer).
#[inline(always)]
fn unsigned(bytes: &[u8], at: usize) -> Option<(u64, usize)> {
    let rest = bytes.get(at..)?;
    // Digits read and summed in one walk; nineteen digits always fit a `u64`.
    let mut n = 0u64;
    let mut len = 0;
    while let Some(&b) = rest.get(len) {
        let digit = b.wrapping_sub(b'0');
        if digit > 9 {
            break;
        }
        n = if len < 19 {
            n * 10 + u64::from(digit)
        } else {
            // Overflow refused (the general path reads a number too big for a `u64` as a
            // float).
            n.checked_mul(10)?.checked_add(u64::from(digit))?
        };
        len += 1;
    }
    if len == 0 || (len > 1 && rest[0] == b'0') {
        return None;
    }
    // A fraction or an exponent would follow the digits: refused (the general path reads a
    // float).
    if matches!(rest.get(len), Some(b'.' | b'e' | b'E')) {
        return None;
    }
    Some((n, len))
}

/// The extent of the JSON value that starts exactly at `at` (no whitespace before it),
/// located by the scan and not validated; UTF-8 (checked unless the input is text already).
/// Where it ends is for the caller to judge.
fn value_at(input: Input<'_>, at: usize) -> Option<RawJson<'_>> {
    let len = raw_json::locate(input.bytes().get(at..)?)?;
    let text = match input {
        // `at` follows an ASCII `:` or whitespace and the extent ends before an ASCII
        // delimiter or at the end: char boundaries.
        Input::Text(text) => text.get(at..at + len)?,
        Input::Bytes(bytes) => std::str::from_utf8(&bytes[at..at + len]).ok()?,
    };
    Some(RawJson::located(text))
}

/// The value that starts exactly at `at` read as `P`, with its extent; `None` when that read
/// fails or the value is no object or array (left to the scan, which then locates what a
/// reader of the params fails on as before).
///
/// A successful read parsed the whole value (serde's typed parse checks what it skips, and
/// fails on a member twice), so the value is valid JSON, and on valid JSON the scan ends a
/// value exactly where serde's parse ends it: the extent is the one [`value_at`] gives.
fn typed_at<P: ReadInPass>(input: Input<'_>, at: usize) -> Option<(P, RawJson<'_>)> {
    // Only a value with a closing bracket: a number's read would stop before what follows
    // it is judged.
    if !matches!(input.bytes().get(at), Some(b'{' | b'[')) {
        return None;
    }
    let by_hand = P::read_compact(input, at);
    let (read, len) = match (by_hand, input) {
        (Some(read), _) => read,
        (None, Input::Text(text)) => {
            let mut values = serde_json::Deserializer::from_str(text.get(at..)?).into_iter::<P>();
            (values.next()?.ok()?, values.byte_offset())
        }
        (None, Input::Bytes(bytes)) => {
            let mut values = serde_json::Deserializer::from_slice(&bytes[at..]).into_iter::<P>();
            (values.next()?.ok()?, values.byte_offset())
        }
    };
    let text = match input {
        // `at` is a bracket and the value ends at its closing bracket: char boundaries.
        Input::Text(text) => text.get(at..at + len)?,
        // The typed read did not check the UTF-8 of what it skipped.
        Input::Bytes(bytes) => std::str::from_utf8(bytes.get(at..at + len)?).ok()?,
    };
    Some((read, RawJson::located(text)))
}
