//! A request's result as [`Event::Completed`](super::Event::Completed) hands it over.

use std::fmt;

use serde::Deserialize;
use serde_json::value::RawValue;

/// A request's result: the JSON text of the answer's `result` member, as the server wrote it.
///
/// **When it is checked.** An answer written the way the SDKs write it (the members
/// `jsonrpc`, `id` and `result` in any order, nothing between them, the result an object or
/// array) is not parsed on arrival: the session locates the result by its brackets and the
/// text is checked when it is read. Checking it on arrival scanned every byte of it once more
/// just before the caller's typed decode scanned it again (about 1k of the 11k instructions
/// a `tools/call` cost in the client). Every other answer was parsed whole on arrival, so
/// its text is known to be one JSON value.
///
/// **Guarantees.** [`decode`](Self::decode), [`to_raw`](Self::to_raw) and
/// [`into_raw`](Self::into_raw) fail, with serde_json's error, on text that is not exactly one
/// JSON value (an answer with a member after `result`, say); nothing hands out unchecked text
/// as a [`RawValue`]. [`get`](Self::get) is the text as received.
#[derive(Clone)]
pub struct RawResult(Box<str>);

impl RawResult {
    /// Text the session located but did not parse.
    pub(crate) fn unchecked(text: &str) -> Self {
        Self(text.into())
    }

    /// Decodes the result into `T`, checking the text as it goes (trailing text after the
    /// value is an error, as for [`serde_json::from_str`]).
    ///
    /// # Errors
    ///
    /// The text is not one JSON value, or not the shape `T` expects.
    pub fn decode<'a, T: Deserialize<'a>>(&'a self) -> Result<T, serde_json::Error> {
        serde_json::from_str(&self.0)
    }

    /// The result as a borrowed [`RawValue`], checked.
    ///
    /// # Errors
    ///
    /// The text is not exactly one JSON value.
    pub fn to_raw(&self) -> Result<&RawValue, serde_json::Error> {
        serde_json::from_str(&self.0)
    }

    /// The result as an owned [`RawValue`], checked (without a copy when the text has no
    /// surrounding whitespace).
    ///
    /// # Errors
    ///
    /// The text is not exactly one JSON value.
    pub fn into_raw(self) -> Result<Box<RawValue>, serde_json::Error> {
        RawValue::from_string(self.0.into())
    }

    /// The text as received: on the fast path described at the type, not yet known to be
    /// valid JSON.
    #[must_use]
    pub fn get(&self) -> &str {
        &self.0
    }
}

impl From<Box<RawValue>> for RawResult {
    fn from(raw: Box<RawValue>) -> Self {
        Self(raw.into())
    }
}

impl From<&RawValue> for RawResult {
    fn from(raw: &RawValue) -> Self {
        Self(raw.get().into())
    }
}

impl fmt::Debug for RawResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("RawResult").field(&&*self.0).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checked_reads_refuse_text_that_is_not_one_value() {
        for bad in ["", "{", r#"{"a":1},"error":{}"#, "1 2", "nul"] {
            let r = RawResult::unchecked(bad);
            assert!(r.decode::<serde_json::Value>().is_err(), "{bad:?}");
            assert!(r.to_raw().is_err(), "{bad:?}");
            assert!(r.clone().into_raw().is_err(), "{bad:?}");
            assert_eq!(r.get(), bad);
        }
    }

    #[test]
    fn checked_reads_accept_one_value() {
        let r = RawResult::unchecked(r#"{"content":[{"type":"text","text":"hi"}]} "#);
        let v: serde_json::Value = r.decode().unwrap();
        assert_eq!(v["content"][0]["text"], "hi");
        assert_eq!(
            r.to_raw().unwrap().get(),
            r#"{"content":[{"type":"text","text":"hi"}]}"#
        );
        assert_eq!(
            r.into_raw().unwrap().get(),
            r#"{"content":[{"type":"text","text":"hi"}]}"#
        );
        // Borrowing from the text works as with `serde_json::from_str`.
        let r = RawResult::unchecked(r#""text""#);
        let s: &str = r.decode().unwrap();
        assert_eq!(s, "text");
    }

    #[test]
    fn from_raw_value_keeps_the_text() {
        let raw = RawValue::from_string("[1,2]".to_owned()).unwrap();
        assert_eq!(RawResult::from(&*raw).get(), "[1,2]");
        assert_eq!(RawResult::from(raw).into_raw().unwrap().get(), "[1,2]");
    }
}
