//! A JSON object read and rewritten member by member, the others kept as written: for
//! passing a peer's params on with one member changed or removed (a bridge puts its host's
//! `progressToken` in an upstream server's progress, renames a related task's id, drops a
//! `task` its host cannot take), without decoding them into a map (which sorts the members)
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
    let Members(members) = object_members(object)?;
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

/// The value of member `key` of `object` (a JSON object's text) as written; `None` when it
/// has no such member.
///
/// # Errors
///
/// `object` is not a JSON object.
pub fn member(object: &str, key: &str) -> Result<Option<Box<RawValue>>, serde_json::Error> {
    let Members(members) = object_members(object)?;
    Ok(members
        .into_iter()
        .find(|(name, _)| name == key)
        .map(|(_, written)| written.to_owned()))
}

/// `object` with the value of the member at `path` (a member of `object`, then of that
/// member's object, and so on) replaced by `value`, every other member as written (as
/// [`with_member`] writes each object on the way); `None` when a member on the way (before
/// the last) is absent or not an object.
///
/// # Errors
///
/// `object` is not a JSON object.
pub fn with_member_at(
    object: &str,
    path: &[&str],
    value: &RawValue,
) -> Result<Option<String>, serde_json::Error> {
    let Some((first, rest)) = path.split_first() else {
        return Ok(None);
    };
    if rest.is_empty() {
        return with_member(object, first, value).map(Some);
    }
    let Some(inner) = member(object, first)? else {
        return Ok(None);
    };
    let Ok(Some(changed)) = with_member_at(inner.get(), rest, value) else {
        // Not an object, or a member missing further in.
        return Ok(None);
    };
    let changed = RawValue::from_string(changed)?;
    with_member(object, first, &changed).map(Some)
}

/// `object` without member `key`, every other member as written (whitespace between members
/// dropped); `object` itself when it has no such member.
///
/// # Errors
///
/// `object` is not a JSON object.
pub fn without_member(object: &str, key: &str) -> Result<String, serde_json::Error> {
    let Members(members) = object_members(object)?;
    if !members.iter().any(|(name, _)| name == key) {
        return Ok(object.to_owned());
    }
    let mut out = String::with_capacity(object.len());
    out.push('{');
    for (name, written) in members.iter().filter(|(name, _)| name != key) {
        if out.len() > 1 {
            out.push(',');
        }
        out.push_str(&serde_json::to_string(name)?);
        out.push(':');
        out.push_str(written.get());
    }
    out.push('}');
    Ok(out)
}

/// The members of `object`, refusing what is not an object.
fn object_members(object: &str) -> Result<Members<'_>, serde_json::Error> {
    let members: Members<'_> = serde_json::from_str(object)?;
    if members.0.is_empty() && object.trim() == "null" {
        return Err(serde::de::Error::custom("expected a JSON object, not null"));
    }
    Ok(members)
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

    #[test]
    fn a_member_is_read_as_written() {
        let written = r#"{"b":1.50, "a":{"z":1,"y":2}}"#;
        assert_eq!(member(written, "b").unwrap().unwrap().get(), "1.50");
        assert_eq!(
            member(written, "a").unwrap().unwrap().get(),
            r#"{"z":1,"y":2}"#
        );
        assert!(member(written, "c").unwrap().is_none());
        for bad in ["null", "[1]", "{"] {
            assert!(member(bad, "a").is_err(), "{bad}");
        }
    }

    #[test]
    fn a_nested_member_changes_and_the_rest_stays_as_written() {
        let written =
            r#"{"n":1.0,"_meta":{"z":2,"io.x/related":{"taskId":"t1","w":1e3},"a":[]},"k":0}"#;
        let path = ["_meta", "io.x/related", "taskId"];
        assert_eq!(
            with_member_at(written, &path, &raw(r#""s/t1""#))
                .unwrap()
                .unwrap(),
            r#"{"n":1.0,"_meta":{"z":2,"io.x/related":{"taskId":"s/t1","w":1e3},"a":[]},"k":0}"#
        );
        // A member missing, or not an object, on the way.
        assert!(
            with_member_at(r#"{"_meta":{}}"#, &path, &raw("1"))
                .unwrap()
                .is_none()
        );
        assert!(
            with_member_at(r#"{"_meta":3}"#, &path, &raw("1"))
                .unwrap()
                .is_none()
        );
        assert!(with_member_at("{}", &[], &raw("1")).unwrap().is_none());
        assert!(with_member_at("[]", &path, &raw("1")).is_err());
    }

    #[test]
    fn a_member_is_removed_and_the_rest_stays_as_written() {
        assert_eq!(
            without_member(r#"{"task":{"ttl":60000},"b":2.0,"a":1}"#, "task").unwrap(),
            r#"{"b":2.0,"a":1}"#
        );
        assert_eq!(without_member(r#"{"task":{}}"#, "task").unwrap(), "{}");
        // Absent: the text itself, spacing and all.
        assert_eq!(
            without_member(r#"{ "b": 1 }"#, "task").unwrap(),
            r#"{ "b": 1 }"#
        );
        assert!(without_member("null", "task").is_err());
    }
}
