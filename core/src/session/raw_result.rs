//! A request's result as [`Event::Completed`](super::Event::Completed) hands it over.

use std::fmt;

use serde::Deserialize;
use serde_json::value::RawValue;

/// A request's result: the JSON text of the answer's `result` member, as the server wrote it.
///
/// **Guarantees.** The text is exactly one JSON value: the session decodes every answer before
/// routing it, and an answer whose body is not valid JSON completes its request with
/// [`RequestError::InvalidResponse`](super::RequestError::InvalidResponse) instead. So
/// [`decode`](Self::decode) fails only when the value is not the shape `T` expects, and
/// [`to_raw`](Self::to_raw) and [`into_raw`](Self::into_raw) do not fail (every `RawResult`
/// is made from a checked [`RawValue`]; they return a `Result` for the callers written when
/// results were checked only when read).
/// [`get`](Self::get) is the text as received.
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

    /// The text as received.
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
    fn from_raw_value_keeps_the_text() {
        let raw = RawValue::from_string("[1,2]".to_owned()).unwrap();
        assert_eq!(RawResult::from(&*raw).get(), "[1,2]");
        assert_eq!(RawResult::from(raw).into_raw().unwrap().get(), "[1,2]");
    }
}
