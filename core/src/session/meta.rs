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
    params: Option<&RawValue>,
    token: u64,
) -> Result<Box<RawValue>, String> {
    let members = match params {
        None => Members(Vec::new()),
        Some(p) if p.get() == "null" => Members(Vec::new()),
        Some(p) => serde_json::from_str::<Members<'_>>(p.get())
            .map_err(|_| "params must be a JSON object to carry a progress token".to_owned())?,
    };
    let mut out = String::with_capacity(params.map_or(0, |p| p.get().len()) + 40);
    out.push('{');
    let mut meta_written = false;
    for (i, (key, value)) in members.0.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_key(&mut out, key);
        if key == "_meta" && !meta_written {
            meta_written = true;
            let inner = serde_json::from_str::<Members<'_>>(value.get())
                .map_err(|_| "params._meta must be a JSON object".to_owned())?;
            out.push('{');
            for (key, value) in inner.0.iter().filter(|(k, _)| k != "progressToken") {
                write_key(&mut out, key);
                out.push_str(value.get());
                out.push(',');
            }
            out.push_str(&format!("\"progressToken\":{token}}}"));
        } else {
            out.push_str(value.get());
        }
    }
    if !meta_written {
        if !members.0.is_empty() {
            out.push(',');
        }
        out.push_str(&format!("\"_meta\":{{\"progressToken\":{token}}}"));
    }
    out.push('}');
    RawValue::from_string(out).map_err(|e| format!("could not add a progress token: {e}"))
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
            with_progress_token(Some(&raw(r#"{"name":"x","arguments":{"a":[1]}}"#)), 3)
                .unwrap()
                .get(),
            r#"{"name":"x","arguments":{"a":[1]},"_meta":{"progressToken":3}}"#
        );
    }

    #[test]
    fn merges_into_existing_meta_and_replaces_token() {
        let out = with_progress_token(
            Some(&raw(
                r#"{"_meta":{"progressToken":"theirs","trace":"t"},"b":2}"#,
            )),
            9,
        )
        .unwrap();
        assert_eq!(
            out.get(),
            r#"{"_meta":{"trace":"t","progressToken":9},"b":2}"#
        );
    }

    #[test]
    fn refuses_non_objects() {
        assert!(with_progress_token(Some(&raw("[1,2]")), 1).is_err());
        assert!(with_progress_token(Some(&raw(r#"{"_meta":5}"#)), 1).is_err());
    }
}
