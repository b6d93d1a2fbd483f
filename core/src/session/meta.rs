//! Splicing `_meta` members into caller-supplied params.
//!
//! The merge rule: params must be a JSON object (or absent, which counts as `{}`); its members
//! are kept in order and untouched, except `_meta`, which must be an object too and gets the
//! session's `progressToken` (replacing one the caller put there: the session routes progress
//! by its own tokens). Only the top level and `_meta` are parsed, and only as raw members, so
//! large arguments are copied, never decoded.

use serde::Deserialize;
use serde::de::{MapAccess, Visitor};
use serde_json::value::RawValue;

use crate::jsonrpc;

struct Members<'a>(Vec<(String, &'a RawValue)>);

impl<'de> Deserialize<'de> for Members<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Members<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut members = Vec::new();
                while let Some((k, v)) = map.next_entry::<String, &'de RawValue>()? {
                    members.push((k, v));
                }
                Ok(Members(members))
            }
        }
        d.deserialize_map(V)
    }
}

fn write_key(out: &mut String, key: &str) {
    // Invariant: a `&str` always serializes as a JSON string.
    out.push_str(&serde_json::to_string(key).expect("a string serializes"));
    out.push(':');
}

/// Returns `params` with `_meta.progressToken` set to `token`.
pub(crate) fn with_progress_token(
    params: Option<&str>,
    token: u64,
) -> Result<Box<RawValue>, String> {
    let token = token.to_string();
    // Invariant: the decimal digits of an integer are a JSON number.
    let token = RawValue::from_string(token).expect("an integer is JSON");
    splice(params, &[], &[("progressToken", &token)])
        .map_err(|e| e.replace("to carry members", "to carry a progress token"))
}

/// The general merge rule behind every member the session adds to params.
///
/// `params` must be a JSON object (absent or `null` count as `{}`). Its members keep their
/// order and bytes, except:
/// - each key in `top` is removed and, when its value is `Some`, appended at the end (the
///   multi-round fields `inputResponses` and `requestState`);
/// - in `_meta` (created if absent; it must be an object), each key of `meta` is removed and
///   appended with the session's value (the envelope keys, `progressToken`): the session owns
///   those keys, the caller's other `_meta` members are kept.
///
/// Values are spliced as raw bytes: nothing is decoded below the top level and `_meta`.
pub(crate) fn splice(
    params: Option<&str>,
    top: &[(&str, Option<&RawValue>)],
    meta: &[(&str, &RawValue)],
) -> Result<Box<RawValue>, String> {
    let members = match params {
        None => Members(Vec::new()),
        Some("null") => Members(Vec::new()),
        Some(p) => serde_json::from_str::<Members<'_>>(p)
            .map_err(|_| "params must be a JSON object to carry members".to_owned())?,
    };
    let extra: usize = top
        .iter()
        .filter_map(|(k, v)| v.map(|v| k.len() + v.get().len() + 4))
        .chain(meta.iter().map(|(k, v)| k.len() + v.get().len() + 4))
        .sum();
    let mut out = String::with_capacity(params.map_or(0, str::len) + extra + 12);
    out.push('{');
    let mut first = true;
    let mut sep = |out: &mut String| {
        if !std::mem::take(&mut first) {
            out.push(',');
        }
    };
    let mut meta_written = meta.is_empty();
    for (key, value) in &members.0 {
        if top.iter().any(|(k, _)| k == key) {
            continue;
        }
        if key == "_meta" {
            if meta_written {
                // A duplicate `_meta` (or no change asked): keep the bytes as they are.
                if meta.is_empty() {
                    sep(&mut out);
                    write_key(&mut out, key);
                    out.push_str(value.get());
                }
                continue;
            }
            meta_written = true;
            let inner = serde_json::from_str::<Members<'_>>(value.get())
                .map_err(|_| "params._meta must be a JSON object".to_owned())?;
            sep(&mut out);
            write_key(&mut out, key);
            write_meta(&mut out, &inner.0, meta);
            continue;
        }
        sep(&mut out);
        write_key(&mut out, key);
        out.push_str(value.get());
    }
    if !meta_written {
        sep(&mut out);
        write_key(&mut out, "_meta");
        write_meta(&mut out, &[], meta);
    }
    for (key, value) in top {
        if let Some(value) = value {
            sep(&mut out);
            write_key(&mut out, key);
            out.push_str(value.get());
        }
    }
    out.push('}');
    RawValue::from_string(out).map_err(|e| format!("could not splice params: {e}"))
}

fn write_meta(out: &mut String, inner: &[(String, &RawValue)], meta: &[(&str, &RawValue)]) {
    out.push('{');
    let mut first = true;
    for (key, value) in inner
        .iter()
        .filter(|(k, _)| !meta.iter().any(|(m, _)| m == k))
    {
        if !std::mem::take(&mut first) {
            out.push(',');
        }
        write_key(out, key);
        out.push_str(value.get());
    }
    for (key, value) in meta {
        if !std::mem::take(&mut first) {
            out.push(',');
        }
        write_key(out, key);
        out.push_str(value.get());
    }
    out.push('}');
}

/// Which of `keys` the JSON object `object` has as top-level members; `None` when it is not
/// an object. Only the top level is read, as raw members.
pub(crate) fn has_members<const N: usize>(object: &str, keys: [&str; N]) -> Option<[bool; N]> {
    let members = serde_json::from_str::<Members<'_>>(object).ok()?;
    Some(keys.map(|key| members.0.iter().any(|(k, _)| k == key)))
}

pub(crate) fn cancelled_params(wire: u64, reason: Option<&str>) -> Box<RawValue> {
    #[derive(serde::Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Cancelled<'a> {
        request_id: u64,
        #[serde(skip_serializing_if = "Option::is_none")]
        reason: Option<&'a str>,
    }
    // Invariant: a struct of an integer and a string always serializes.
    jsonrpc::to_raw(&Cancelled {
        request_id: wire,
        reason,
    })
    .expect("cancelled params serialize")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(s: &str) -> Box<RawValue> {
        RawValue::from_string(s.to_owned()).unwrap()
    }

    #[test]
    fn adds_meta_to_absent_and_object_params() {
        assert_eq!(
            with_progress_token(None, 7).unwrap().get(),
            r#"{"_meta":{"progressToken":7}}"#
        );
        assert_eq!(
            with_progress_token(Some(r#"{"name":"x","arguments":{"a":[1]}}"#), 3)
                .unwrap()
                .get(),
            r#"{"name":"x","arguments":{"a":[1]},"_meta":{"progressToken":3}}"#
        );
    }

    #[test]
    fn merges_into_existing_meta_and_replaces_token() {
        let out = with_progress_token(
            Some(r#"{"_meta":{"progressToken":"theirs","trace":"t"},"b":2}"#),
            9,
        )
        .unwrap();
        assert_eq!(
            out.get(),
            r#"{"_meta":{"trace":"t","progressToken":9},"b":2}"#
        );
    }

    #[test]
    fn splices_top_members_and_meta_keys_by_the_merge_rule() {
        let v = raw(r#""2026-07-28""#);
        let state = raw(r#""abc\u0041""#);
        let out = splice(
            Some(r#"{"name":"t","requestState":"old","_meta":{"x":1,"io.modelcontextprotocol/protocolVersion":"bad"},"arguments":{}}"#),
            &[("requestState", Some(&state)), ("inputResponses", None)],
            &[("io.modelcontextprotocol/protocolVersion", &v)],
        )
        .unwrap();
        assert_eq!(
            out.get(),
            r#"{"name":"t","_meta":{"x":1,"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"arguments":{},"requestState":"abc\u0041"}"#
        );
        // No meta change asked: `_meta` bytes are kept, a removed top key disappears.
        let out = splice(
            Some(r#"{"requestState":"s","_meta":{"a" : 1}}"#),
            &[("requestState", None)],
            &[],
        )
        .unwrap();
        assert_eq!(out.get(), r#"{"_meta":{"a" : 1}}"#);
        assert_eq!(splice(None, &[], &[]).unwrap().get(), "{}");
    }

    #[test]
    fn refuses_non_objects() {
        assert!(with_progress_token(Some("[1,2]"), 1).is_err());
        assert!(with_progress_token(Some(r#"{"_meta":5}"#), 1).is_err());
    }
}
