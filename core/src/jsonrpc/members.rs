//! A JSON object rewritten member by member, the others kept as written: for passing a
//! peer's params on with one member changed (a bridge puts its host's `progressToken` in an
//! upstream server's progress), without decoding them into a map (which sorts the members)
//! or numbers into `f64` (which turns `1` into `1.0`).

use serde::Deserialize;
use serde_json::value::RawValue;

/// An object's members in their order, each value as written.
struct Members<'a>(Vec<(String, &'a RawValue)>);

impl<'de> Deserialize<'de> for Members<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        crate::types::v2026::ordered_map(d).map(|m| Members(m.unwrap_or_default()))
    }
}

/// `object` (a JSON object's text) with the value of member `key` replaced by `value` (JSON
/// text; appended as the last member when `key` is absent). Every other member keeps its
/// place and its value's text; keys are re-escaped the standard way and whitespace between
/// members is dropped.
///
/// # Errors
///
/// `object` is not a JSON object.
pub fn with_member(object: &str, key: &str, value: &RawValue) -> Result<String, serde_json::Error> {
    let Members(members) = serde_json::from_str(object)?;
    if members.is_empty() && object.trim() == "null" {
        return Err(serde::de::Error::custom("expected a JSON object, not null"));
    }
    let mut out = String::with_capacity(object.len() + value.get().len());
    out.push('{');
    let mut replaced = false;
    for (name, written) in &members {
        if out.len() > 1 {
            out.push(',');
        }
        out.push_str(&serde_json::to_string(name)?);
        out.push(':');
        if name == key {
            replaced = true;
            out.push_str(value.get());
        } else {
            out.push_str(written.get());
        }
    }
    if !replaced {
        if out.len() > 1 {
            out.push(',');
        }
        out.push_str(&serde_json::to_string(key)?);
        out.push(':');
        out.push_str(value.get());
    }
    out.push('}');
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(s: &str) -> Box<RawValue> {
        RawValue::from_string(s.to_owned()).unwrap()
    }

    #[test]
    fn one_member_changes_the_others_stay_as_written() {
        let written = r#"{"progress":1, "total":2.50,"progressToken":"p","z":{"b":1,"a":[1.0]}}"#;
        assert_eq!(
            with_member(written, "progressToken", &raw("7")).unwrap(),
            r#"{"progress":1,"total":2.50,"progressToken":7,"z":{"b":1,"a":[1.0]}}"#
        );
    }

    #[test]
    fn a_missing_member_is_appended_and_a_non_object_refused() {
        assert_eq!(
            with_member(r#"{"b":1}"#, "a", &raw(r#""x""#)).unwrap(),
            r#"{"b":1,"a":"x"}"#
        );
        assert_eq!(with_member("{}", "a", &raw("1")).unwrap(), r#"{"a":1}"#);
        for bad in ["null", "[1]", "3", "{", ""] {
            assert!(with_member(bad, "a", &raw("1")).is_err(), "{bad}");
        }
    }
}
