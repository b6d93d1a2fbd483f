//! Whether a request's params can hold a `_meta` member, told without parsing them.
//!
//! Every request's params are read for `_meta` (its progress token, the 2026-07-28
//! envelope); most carry none, and a JSON parse that finds nothing still walks every
//! argument. [`may_hold_meta`] skips that walk when the text cannot name the member; the
//! parse stays the reference, and the tests hold the two equal.

/// `false` only when no member of the JSON text `params` can be named `_meta`: the text
/// holds neither `_meta` nor a `\u` escape (the one way a member name spells a letter
/// without writing it). `true` says nothing: parse to know.
pub(super) fn may_hold_meta(params: &str) -> bool {
    params.contains("_meta") || params.contains("\\u")
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde::Deserialize;
    use serde::de::IgnoredAny;

    use super::may_hold_meta;

    /// The reference: what the session's parse finds.
    fn parse_finds_meta(text: &str) -> bool {
        #[derive(Deserialize)]
        struct Probe {
            #[serde(rename = "_meta", default)]
            meta: Option<IgnoredAny>,
        }
        serde_json::from_str::<Probe>(text).is_ok_and(|p| p.meta.is_some())
    }

    #[test]
    fn a_meta_member_however_spelled_is_never_missed() {
        for text in [
            r#"{"_meta":{"progressToken":1}}"#,
            r#"{"name":"x","_meta":{}}"#,
            r#"{"\u005fmeta":{"progressToken":1}}"#,
            r#"{"_m\u0065ta":{}}"#,
            r#"{ "_meta" : null }"#,
        ] {
            assert!(may_hold_meta(text), "{text}");
        }
        assert!(
            parse_finds_meta(r#"{"\u005fmeta":{}}"#),
            "serde decodes the escape"
        );
    }

    #[test]
    fn params_without_the_name_are_skipped() {
        for text in [
            r#"{"name":"echo","arguments":{"message":"hello"}}"#,
            r#"{"meta":{}}"#,
            "[]",
            "null",
        ] {
            assert!(!may_hold_meta(text), "{text}");
        }
    }

    fn member_name() -> impl Strategy<Value = &'static str> {
        prop::sample::select(vec![
            "_meta",
            r"\u005fmeta",
            r"_m\u0065ta",
            r"\u005F\u006d\u0065\u0074\u0061",
            "meta",
            "_met",
            "name",
            r"\u00e9",
            "arguments",
        ])
    }

    fn value() -> impl Strategy<Value = String> {
        let leaf = prop::sample::select(vec![
            "1".to_owned(),
            "null".to_owned(),
            r#""_meta""#.to_owned(),
            r#""text""#.to_owned(),
            "{}".to_owned(),
        ]);
        leaf.prop_recursive(3, 16, 4, |inner| {
            prop::collection::vec((member_name(), inner), 0..4).prop_map(|members| {
                let body: Vec<String> = members
                    .iter()
                    .map(|(k, v)| format!("\"{k}\":{v}"))
                    .collect();
                format!("{{{}}}", body.join(","))
            })
        })
    }

    proptest! {
        /// Whenever the parse finds `_meta`, the check says it may be there.
        #[test]
        fn the_check_never_hides_what_the_parse_finds(text in value()) {
            if parse_finds_meta(&text) {
                prop_assert!(may_hold_meta(&text), "{}", text);
            }
        }
    }
}
