//! A request's result as [`Event::Completed`](super::Event::Completed) hands it over.

use std::fmt;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::jsonrpc::RawJson;

/// A request's result: the JSON text of the answer's `result` member, as the server wrote it.
///
/// **Located, not validated**: reading it as a type validates it in the same pass. The
/// session finds where the result starts and ends without validating it (see
/// [`RawJson`](crate::jsonrpc::RawJson)), so that the one parse of a result is the caller's
/// typed read. [`decode`](Self::decode), [`to_raw`](Self::to_raw) and
/// [`into_raw`](Self::into_raw) all check the text: they fail when it is not one JSON value
/// (the server sent an answer that is not valid JSON) or, for `decode`, not the shape `T`
/// expects; [`is_json`](Self::is_json) tells the two apart after a failed `decode`.
/// [`get`](Self::get) is the text as received, unchecked.
#[derive(Clone)]
pub struct RawResult(Box<str>);

impl RawResult {
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

    /// The text as received (unchecked: see the type's docs).
    #[must_use]
    pub fn get(&self) -> &str {
        &self.0
    }

    /// Whether the text is exactly one JSON value. A failed [`decode`](Self::decode) of a
    /// result that is not JSON means the server's answer was unreadable, not of the wrong
    /// shape: the error a client reports for that is an invalid response.
    #[must_use]
    pub fn is_json(&self) -> bool {
        self.to_raw().is_ok()
    }
}

impl From<RawJson<'_>> for RawResult {
    /// Copies the located text (unchecked).
    fn from(raw: RawJson<'_>) -> Self {
        Self(raw.get().into())
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
    fn checked_reads_accept_one_value() {
        let raw = RawValue::from_string(r#"{"content":[{"type":"text","text":"hi"}]}"#.to_owned());
        let r = RawResult::from(raw.unwrap());
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
        let r = RawResult::from(RawValue::from_string(r#""text""#.to_owned()).unwrap());
        let s: &str = r.decode().unwrap();
        assert_eq!(s, "text");
    }

    #[test]
    fn located_text_is_checked_when_read() {
        let r = RawResult::from(RawJson::located(r#"{"content" []}"#));
        assert_eq!(r.get(), r#"{"content" []}"#);
        assert!(!r.is_json());
        assert!(r.decode::<serde_json::Value>().is_err());
        assert!(r.to_raw().is_err());
        assert!(r.into_raw().is_err());
        let r = RawResult::from(RawJson::located("[1,2]"));
        assert!(r.is_json());
        assert_eq!(r.decode::<Vec<u8>>().unwrap(), [1, 2]);
    }

    #[test]
    fn from_raw_value_keeps_the_text() {
        let raw = RawValue::from_string("[1,2]".to_owned()).unwrap();
        assert_eq!(RawResult::from(&*raw).get(), "[1,2]");
        assert_eq!(RawResult::from(raw).into_raw().unwrap().get(), "[1,2]");
    }
}
