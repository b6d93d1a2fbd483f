//! A request's params as [`Session::send_request`](super::Session::send_request) takes them.

use std::fmt;

use serde::Serialize;
use serde_json::value::RawValue;

use super::UsageError;

/// A request's params: JSON text that is one JSON value by construction.
///
/// Made by serializing a value ([`encode`](Self::encode), [`tool_call`](Self::tool_call))
/// or from a [`RawValue`], which is checked already; nothing else makes one, so the session
/// writes the text into the request as it is.
///
/// Why not a `Box<RawValue>`: `serde_json` makes one only by serializing into a buffer and
/// then shrinking it (a `realloc` per request) or by parsing text again, and a `tools/call`'s
/// wrapper around the caller's arguments (`{"name":..,"arguments":..}`) went through
/// `serde_json`'s struct serializer, its string escaping three times. Here the text is
/// serialized into a reused per-thread buffer and copied into an allocation of its exact size.
#[derive(Clone, PartialEq, Eq)]
pub struct RawParams(Box<str>);

/// Room the per-thread serialization buffer keeps between uses: a larger one (a request with
/// a big payload) is given back after it.
const KEPT_SCRATCH: usize = 64 * 1024;

thread_local! {
    static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Runs `write` on an empty buffer and copies what it wrote into a `Box<str>` of that size.
/// The buffer is this thread's, reused; a nested use (a `Serialize` impl that makes params
/// itself) gets a fresh one.
fn exact<E>(write: impl FnOnce(&mut Vec<u8>) -> Result<(), E>) -> Result<Box<str>, E> {
    let finish = |buf: &mut Vec<u8>| {
        let text = std::str::from_utf8(buf)
            // Invariant: `write` puts only `serde_json`'s output and `write_json_str`'s in it,
            // both UTF-8 (checked again here rather than trusted with `unsafe`).
            .expect("serialized JSON is UTF-8");
        Box::<str>::from(text)
    };
    SCRATCH.with(|cell| match cell.try_borrow_mut() {
        Ok(mut buf) => {
            buf.clear();
            let result = write(&mut buf).map(|()| finish(&mut buf));
            if buf.capacity() > KEPT_SCRATCH {
                *buf = Vec::new();
            }
            result
        }
        Err(_) => {
            let mut buf = Vec::new();
            write(&mut buf).map(|()| finish(&mut buf))
        }
    })
}

impl RawParams {
    /// `value` serialized to JSON.
    ///
    /// # Errors
    ///
    /// `value`'s `Serialize` fails (a map with keys that are not strings, say).
    pub fn encode<T: Serialize + ?Sized>(value: &T) -> Result<Self, serde_json::Error> {
        exact(|buf| serde_json::to_writer(buf, value)).map(Self)
    }

    /// A request's params from typed ones: `None` when they serialize to `null` (`None`,
    /// `()`), which means the request has no `params` member.
    ///
    /// # Errors
    ///
    /// [`UsageError::InvalidParams`] when `params` do not serialize.
    pub fn for_request<T: Serialize + ?Sized>(params: &T) -> Result<Option<Self>, UsageError> {
        let raw = Self::encode(params).map_err(|e| UsageError::InvalidParams(e.to_string()))?;
        Ok((raw.get() != "null").then_some(raw))
    }

    /// The params of `tools/call`: `{"name":<name>,"arguments":<arguments>}`, the arguments
    /// serialized once, straight into place; no `arguments` member when they serialize to
    /// `null` (`None`, `()`).
    ///
    /// # Errors
    ///
    /// [`UsageError::InvalidParams`] when the arguments do not serialize, or serialize to
    /// something other than a JSON object or `null`.
    pub fn tool_call<T: Serialize + ?Sized>(name: &str, arguments: &T) -> Result<Self, UsageError> {
        const ARGUMENTS: &str = r#","arguments":"#;
        exact(|out| {
            out.extend_from_slice(br#"{"name":"#);
            crate::jsonrpc::write_json_str(out, name);
            out.extend_from_slice(ARGUMENTS.as_bytes());
            let at = out.len();
            serde_json::to_writer(&mut *out, arguments)
                .map_err(|e| UsageError::InvalidParams(e.to_string()))?;
            match out.get(at..) {
                Some([b'{', ..]) => {}
                Some(b"null") => out.truncate(at - ARGUMENTS.len()),
                _ => {
                    let detail = "tool arguments must be a JSON object".to_owned();
                    return Err(UsageError::InvalidParams(detail));
                }
            }
            out.push(b'}');
            Ok(())
        })
        .map(Self)
    }

    /// The JSON text.
    #[must_use]
    pub fn get(&self) -> &str {
        &self.0
    }
}

impl From<Box<RawValue>> for RawParams {
    fn from(raw: Box<RawValue>) -> Self {
        Self(raw.into())
    }
}

impl From<&RawValue> for RawParams {
    fn from(raw: &RawValue) -> Self {
        Self(raw.get().into())
    }
}

impl fmt::Debug for RawParams {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("RawParams").field(&self.0).finish()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn tool_call_params_are_the_wrapper_around_the_arguments() {
        let p = RawParams::tool_call("echo", &json!({"message": "hi \"there\""})).unwrap();
        assert_eq!(
            p.get(),
            r#"{"name":"echo","arguments":{"message":"hi \"there\""}}"#
        );
        let p = RawParams::tool_call("a\"b\u{1}é", &json!({})).unwrap();
        let v: serde_json::Value = serde_json::from_str(p.get()).unwrap();
        assert_eq!(v, json!({"name": "a\"b\u{1}é", "arguments": {}}));
    }

    #[test]
    fn tool_call_without_arguments_has_no_arguments_member() {
        assert_eq!(
            RawParams::tool_call("t", &None::<()>).unwrap().get(),
            r#"{"name":"t"}"#
        );
        assert_eq!(
            RawParams::tool_call("t", &()).unwrap().get(),
            r#"{"name":"t"}"#
        );
    }

    #[test]
    fn tool_call_refuses_arguments_that_are_not_an_object() {
        for bad in [json!([1]), json!("x"), json!(3)] {
            assert!(matches!(
                RawParams::tool_call("t", &bad),
                Err(UsageError::InvalidParams(_))
            ));
        }
        let unserializable: std::collections::HashMap<(u8, u8), u8> = [((1, 2), 3)].into();
        assert!(matches!(
            RawParams::tool_call("t", &unserializable),
            Err(UsageError::InvalidParams(_))
        ));
    }

    #[test]
    fn params_made_while_making_params_do_not_share_the_buffer() {
        struct Nested;
        impl Serialize for Nested {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let inner = RawParams::tool_call("inner", &json!({"k": 1})).unwrap();
                s.serialize_str(inner.get())
            }
        }
        // Serialized while `tool_call` holds the buffer (`json!` would serialize it before).
        let args: std::collections::BTreeMap<&str, Nested> = [("n", Nested)].into();
        let outer = RawParams::tool_call("outer", &args).unwrap();
        let v: serde_json::Value = serde_json::from_str(outer.get()).unwrap();
        assert_eq!(
            v["arguments"]["n"],
            r#"{"name":"inner","arguments":{"k":1}}"#
        );
        let big = "x".repeat(2 * KEPT_SCRATCH);
        assert_eq!(RawParams::encode(&big).unwrap().get().len(), big.len() + 2);
        assert!(SCRATCH.with(|c| c.borrow().capacity()) <= KEPT_SCRATCH);
    }

    #[test]
    fn from_a_raw_value_keeps_its_text() {
        let raw = RawValue::from_string(r#"{"a": [1, 2]}"#.to_owned()).unwrap();
        let p = RawParams::from(raw);
        assert_eq!(p.get(), r#"{"a": [1, 2]}"#);
        assert_eq!(RawParams::encode(&json!([1])).unwrap().get(), "[1]");
        assert_eq!(RawParams::for_request(&()).unwrap(), None);
        assert_eq!(
            RawParams::for_request(&json!({"a": 1}))
                .unwrap()
                .unwrap()
                .get(),
            r#"{"a":1}"#
        );
    }
}
