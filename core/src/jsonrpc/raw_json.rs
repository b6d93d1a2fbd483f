//! [`RawJson`]: a payload of a decoded message, located in the input but not yet validated,
//! and the string-aware scan that locates it.

use std::fmt;

use serde::Deserialize;
use serde_json::value::RawValue;

/// The text of one JSON value's extent in a decoded input: a message's `params` or `result`.
///
/// **Located, not validated**: reading it as a type validates it in the same pass. The
/// extent was found either by `serde_json` (the general parse: the text is then valid JSON)
/// or by a string-aware scan of the compact shortcut (strings with their escapes skipped,
/// brackets nested; not a validation). Whichever found it, the text is the one serde's parse
/// of the whole message would have given for that member when the message is valid JSON;
/// when it is not, [`check`](Self::check) and every typed read fail, as serde's parse of the
/// message would have.
///
/// So read it once, as the type you need ([`decode`](Self::decode)), or take the checked
/// view ([`check`](Self::check)) before keeping it as a [`RawValue`]. [`get`](Self::get)
/// hands out the text unchecked: forward it only where its reader checks it.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct RawJson<'a>(&'a str);

impl<'a> RawJson<'a> {
    /// A payload located by the compact scan (see [`locate`]).
    pub(crate) fn located(text: &'a str) -> Self {
        RawJson(text)
    }

    /// The text as it stands in the input, unchecked.
    #[must_use]
    pub fn get(self) -> &'a str {
        self.0
    }

    /// The checked view: the text as a [`RawValue`], validated.
    ///
    /// # Errors
    ///
    /// The text is not exactly one JSON value (the message was not valid JSON).
    pub fn check(self) -> Result<&'a RawValue, serde_json::Error> {
        serde_json::from_str(self.0)
    }

    /// Reads the payload as `T`, validating the text in the same pass.
    ///
    /// # Errors
    ///
    /// The text is not one JSON value, or not the shape `T` expects. To tell the two apart,
    /// [`check`](Self::check) after a failure.
    pub fn decode<T: Deserialize<'a>>(self) -> Result<T, serde_json::Error> {
        serde_json::from_str(self.0)
    }
}

impl<'a> From<&'a RawValue> for RawJson<'a> {
    /// A value `serde_json` read, valid already.
    fn from(raw: &'a RawValue) -> Self {
        RawJson(raw.get())
    }
}

impl fmt::Debug for RawJson<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("RawJson").field(&self.0).finish()
    }
}

/// The length of the extent of the JSON value that starts exactly at `bytes[0]`, as serde's
/// parse would end it when the value is valid: an object or array up to the bracket that
/// closes the one at byte 0 (strings skipped, brackets of either kind nested); a string up to
/// its closing quote; anything else (numbers, `true`, `false`, `null`) up to the next `,`,
/// `}`, `]` or whitespace. `None` when there is no such extent (a bracket or string that
/// never closes, an empty scalar). Exact for valid JSON, not a validation.
pub(super) fn locate(bytes: &[u8]) -> Option<usize> {
    match *bytes.first()? {
        b'{' | b'[' => container_end(bytes),
        b'"' => string_end(bytes, 1).map(|end| end + 1),
        _ => {
            let len = bytes
                .iter()
                .position(|b| matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r'))
                .unwrap_or(bytes.len());
            (len > 0).then_some(len)
        }
    }
}

/// A byte between strings that the scan passes over.
const OTHER: u8 = 0;
/// `{` or `[`.
const OPEN: u8 = 1;
/// `}` or `]`.
const CLOSE: u8 = 2;
/// `"` (the last class: the scan's match takes it as any other).
const QUOTE: u8 = 3;

/// The class of each byte for [`container_end`]: one load tells the scan what a byte does.
static BYTE_CLASS: [u8; 256] = {
    let mut class = [OTHER; 256];
    class[b'{' as usize] = OPEN;
    class[b'[' as usize] = OPEN;
    class[b'}' as usize] = CLOSE;
    class[b']' as usize] = CLOSE;
    class[b'"' as usize] = QUOTE;
    class
};

/// Where the object or array that opens `bytes` ends: the index just past the bracket that
/// closes the one at byte 0, strings skipped; `None` if the bracket never closes. Byte by
/// byte between strings: in payloads a quote or bracket comes every few bytes, too often for
/// a word-at-a-time skip to pay.
// Not inlined: inlined into its caller, its walk of a long result compiled into a slower loop.
#[inline(never)]
fn container_end(bytes: &[u8]) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        match BYTE_CLASS[usize::from(b)] {
            OTHER => {}
            OPEN => depth += 1,
            CLOSE => {
                depth -= 1;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            // QUOTE
            _ => {
                i = match short_string_end(bytes, i) {
                    Ok(quote) => quote,
                    Err(resume) => string_end_from(bytes, i + 1, resume)?,
                }
            }
        }
        i += 1;
    }
    None
}

/// The index of the quote that closes the string opening at `bytes[open]` when it is within
/// the next sixteen bytes and not escaped (most keys and short values); else `Err` with the
/// index from which [`string_end_from`] looks for it (past those sixteen bytes when they hold
/// no quote at all). Inlined into the scan: a call per string cost more than the walk of such
/// strings.
#[inline(always)]
fn short_string_end(bytes: &[u8], open: usize) -> Result<usize, usize> {
    let Some(block) = bytes.get(open + 1..).and_then(<[u8]>::first_chunk::<16>) else {
        return Err(open + 1);
    };
    let v = u128::from_le_bytes(*block);
    // Truncation intended: the low and the high eight bytes.
    let (low, high) = (swar::quotes(v as u64), swar::quotes((v >> 64) as u64));
    let at = if low != 0 {
        swar::first(low)
    } else if high != 0 {
        8 + swar::first(high)
    } else {
        // No quote in the block (`quotes` finds one in a word whenever there is one).
        return Err(open + 17);
    };
    let quote = open + 1 + at;
    // Not escaped when the byte before it is no backslash (the opening quote, at least).
    if bytes[quote - 1] == b'\\' {
        Err(open + 1)
    } else {
        Ok(quote)
    }
}

/// The index of the quote that closes a string whose text starts at `from`, if any: the
/// first quote after an even run of backslashes (none included). Sixteen bytes a step while
/// they hold no quote (two words through the bit trick that finds a zero byte; its lowest
/// hit is exact); at a quote, the backslashes just before it are counted.
/// Backslashes alone never stop the walk, so escaped text costs nothing of its own (a call
/// to `memchr` per string cost more than this walk for the short keys and values of most
/// payloads).
fn string_end(bytes: &[u8], from: usize) -> Option<usize> {
    string_end_from(bytes, from, from)
}

/// [`string_end`] of the string whose text starts at `from`, looked for from `at` on: the
/// caller knows `bytes[from..at]` holds no quote.
fn string_end_from(bytes: &[u8], from: usize, mut at: usize) -> Option<usize> {
    loop {
        let rest = bytes.get(at..)?;
        let quote = if let Some(block) = rest.first_chunk::<16>() {
            let v = u128::from_le_bytes(*block);
            // Truncation intended: the low and the high eight bytes.
            let (low, high) = (swar::quotes(v as u64), swar::quotes((v >> 64) as u64));
            if low | high == 0 {
                at += 16;
                continue;
            }
            if low != 0 {
                swar::first(low)
            } else {
                8 + swar::first(high)
            }
        } else {
            rest.iter().position(|&b| b == b'"')?
        };
        let quote = at + quote;
        // The string's own backslashes only: the byte before `from` is its opening quote.
        // (Invariant: `from <= at <= quote < bytes.len()`, `quote` found in `bytes[at..]`.)
        let before = &bytes[from..quote];
        match before {
            [.., b'\\', b'\\'] => {
                if before.iter().rev().take_while(|&&b| b == b'\\').count() % 2 == 0 {
                    return Some(quote);
                }
            }
            // One backslash: escaped (the common `\"` of text).
            [.., b'\\'] => {}
            _ => return Some(quote),
        }
        // An escaped quote: on after it.
        at = quote + 1;
    }
}

/// The length of the text that opens `rest` up to its first quote, backslash or control
/// character (the end of a string's content when it has no escape), if there is one.
pub(super) fn plain_prefix_len(rest: &[u8]) -> Option<usize> {
    let mut at = 0;
    while let Some(word) = rest.get(at..).and_then(<[u8]>::first_chunk::<8>) {
        let hits = swar::string_stops(u64::from_le_bytes(*word));
        if hits != 0 {
            return Some(at + swar::first(hits));
        }
        at += 8;
    }
    let tail = rest.get(at..)?;
    let len = tail
        .iter()
        .position(|&b| b == b'"' || b == b'\\' || b < 0x20)?;
    Some(at + len)
}

/// Eight bytes at a time (a `u64`, little-endian): masks with the high bit of each byte that
/// is one of the bytes looked for.
mod swar {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const LOWS: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    const HIGHS: u64 = 0x8080_8080_8080_8080;

    /// The high bit of each byte of `x` that is zero, and of no other (no borrow between
    /// bytes: `(b & 0x7f) + 0x7f` never carries out of its byte).
    fn zero_bytes(x: u64) -> u64 {
        !(((x & LOWS) + LOWS) | x | LOWS)
    }

    /// Each byte equal to `b`, exactly.
    fn equal(x: u64, b: u8) -> u64 {
        zero_bytes(x ^ (ONES * u64::from(b)))
    }

    /// Each quote, and maybe bytes above one (a borrow): the lowest hit is always exact.
    /// Cheaper than [`equal`], for the long runs of string text.
    pub(super) fn quotes(x: u64) -> u64 {
        let v = x ^ (ONES * u64::from(b'"'));
        v.wrapping_sub(ONES) & !v & HIGHS
    }

    /// Each quote, backslash or control character (below 0x20), exactly.
    pub(super) fn string_stops(x: u64) -> u64 {
        equal(x, b'"') | equal(x, b'\\') | zero_bytes(x & (ONES * 0xe0))
    }

    /// The index of the byte of the lowest hit of a mask that is not zero.
    pub(super) fn first(hits: u64) -> usize {
        (hits.trailing_zeros() / 8) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// `string_end` without the word-at-a-time walk.
    fn string_end_bytewise(bytes: &[u8], mut from: usize) -> Option<usize> {
        while let Some(&b) = bytes.get(from) {
            match b {
                b'\\' => from += 2,
                b'"' => return Some(from),
                _ => from += 1,
            }
        }
        None
    }

    /// `container_end` without the word-at-a-time steps.
    fn container_end_bytewise(bytes: &[u8]) -> Option<usize> {
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
                b'"' => i = string_end_bytewise(bytes, i + 1)?,
                _ => {}
            }
            i += 1;
        }
        None
    }

    proptest! {
        #[test]
        fn container_end_agrees_with_a_walk_one_byte_at_a_time(
            tail in proptest::collection::vec(
                prop_oneof![
                    Just(b'"'), Just(b'\\'), Just(b'{'), Just(b'}'), Just(b'['), Just(b']'),
                    Just(b'a'), any::<u8>(),
                ],
                0..80,
            ),
            open in prop_oneof![Just(b'{'), Just(b'[')],
        ) {
            let mut bytes = vec![open];
            bytes.extend(tail);
            prop_assert_eq!(container_end(&bytes), container_end_bytewise(&bytes));
        }

        #[test]
        fn plain_prefix_len_agrees_with_a_walk_one_byte_at_a_time(
            bytes in proptest::collection::vec(
                prop_oneof![Just(b'"'), Just(b'\\'), Just(0x1f_u8), Just(b'a'), any::<u8>()],
                0..40,
            ),
        ) {
            let bytewise = bytes.iter().position(|&b| b == b'"' || b == b'\\' || b < 0x20);
            prop_assert_eq!(plain_prefix_len(&bytes), bytewise);
        }

        #[test]
        fn string_end_agrees_with_a_walk_one_byte_at_a_time(
            bytes in proptest::collection::vec(
                prop_oneof![Just(b'"'), Just(b'\\'), Just(b'a'), any::<u8>()], 0..80),
            from in 0usize..8,
        ) {
            prop_assert_eq!(string_end(&bytes, from), string_end_bytewise(&bytes, from));
        }

        /// On valid JSON, the scan ends a value where serde's parse ends it.
        #[test]
        fn locate_is_exact_on_valid_json(value in crate::jsonrpc::tests::shortcut_equals_general_parse::json_value()) {
            let text = serde_json::to_string(&value).unwrap();
            let followed = format!("{text},\"x\":1}}");
            prop_assert_eq!(locate(followed.as_bytes()), Some(text.len()));
            prop_assert_eq!(locate(text.as_bytes()), Some(text.len()));
        }
    }

    #[test]
    fn extents_of_edge_cases() {
        let at = |s: &str| locate(s.as_bytes());
        assert_eq!(at(r#"{"a":"}\"]"}}"#), Some(12));
        assert_eq!(at(r#"["\\",1]"#), Some(8));
        assert_eq!(at("12,"), Some(2));
        assert_eq!(at("true}"), Some(4));
        assert_eq!(at("-1.5e3 "), Some(6));
        assert_eq!(at(r#""a\"b","#), Some(6));
        assert_eq!(at("{\"a\":1"), None);
        assert_eq!(at("\"abc"), None);
        assert_eq!(at(",1"), None);
        assert_eq!(at(""), None);
    }
}
