//! One-pass `Deserialize` for payload structs that keep unknown members in `extra`.
//!
//! `#[serde(flatten)]` makes serde's derive buffer every member of the object (strings copied,
//! nested arrays and objects as trees of its private `Content`) and then deserialize the
//! buffer a second time; for a `tools/call` result that was most of the cost of decoding it.
//! `deserialize_with_extra!` writes the visitor the derive would write without `flatten`:
//! known members go straight into their fields, every other member into `extra` as a `Value`.
//!
//! The behaviour matches the derive's (tested below against the derive): a missing required
//! member is `missing field`, a repeated known member is `duplicate field`, an explicit `null`
//! for an optional member is absent, and unknown members (even a repeated one: the last wins,
//! as in a `Map`) are kept.

/// Implements `Deserialize` for `$ty`: `required` fields must be present, `optional` fields
/// are `Option<_>` (absent or `null` is `None`), and the struct has an
/// `extra: Map<String, Value>` for everything else. Keys are the wire names. A required field
/// may name a `DeserializeSeed` to decode its value with (`content: "content" via BlockList`).
macro_rules! deserialize_with_extra {
    (
        $ty:ident, $expecting:literal,
        required { $($req:ident: $rkey:literal $(via $rseed:expr)?),* $(,)? }
        optional { $($opt:ident: $okey:literal),* $(,)? }
    ) => {
        impl<'de> ::serde::Deserialize<'de> for $ty {
            fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                use ::serde::de;

                /// A member name: one of the fields, or any other (kept for `extra`).
                #[allow(non_camel_case_types)]
                enum Key {
                    $($req,)*
                    $($opt,)*
                    Other(String),
                }

                struct KeyVisitor;

                impl de::Visitor<'_> for KeyVisitor {
                    type Value = Key;

                    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        f.write_str("a member name")
                    }

                    fn visit_str<E: de::Error>(self, v: &str) -> Result<Key, E> {
                        // Known names are matched without allocating; only others are copied.
                        Ok(match v {
                            $($rkey => Key::$req,)*
                            $($okey => Key::$opt,)*
                            _ => Key::Other(v.to_owned()),
                        })
                    }
                }

                impl<'de> ::serde::Deserialize<'de> for Key {
                    fn deserialize<D: ::serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                        d.deserialize_identifier(KeyVisitor)
                    }
                }

                struct StructVisitor;

                impl<'de> de::Visitor<'de> for StructVisitor {
                    type Value = $ty;

                    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        f.write_str($expecting)
                    }

                    fn visit_map<A: de::MapAccess<'de>>(self, mut access: A) -> Result<$ty, A::Error> {
                        $(let mut $req = None;)*
                        $(let mut $opt = None;)*
                        let mut extra = ::serde_json::Map::new();
                        while let Some(key) = access.next_key::<Key>()? {
                            match key {
                                $(Key::$req => {
                                    if $req.is_some() {
                                        return Err(de::Error::duplicate_field($rkey));
                                    }
                                    $req = Some(deserialize_with_extra!(@value access $($rseed)?));
                                })*
                                $(Key::$opt => {
                                    if $opt.is_some() {
                                        return Err(de::Error::duplicate_field($okey));
                                    }
                                    $opt = Some(access.next_value()?);
                                })*
                                Key::Other(name) => {
                                    extra.insert(name, access.next_value()?);
                                }
                            }
                        }
                        Ok($ty {
                            $($req: $req.ok_or_else(|| de::Error::missing_field($rkey))?,)*
                            $($opt: Option::flatten($opt),)*
                            extra,
                        })
                    }
                }

                deserializer.deserialize_map(StructVisitor)
            }
        }
    };
    (@value $access:ident) => { $access.next_value()? };
    (@value $access:ident $seed:expr) => { $access.next_value_seed($seed)? };
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;
    use serde_json::{Map, Value, json};

    use crate::types::{CallToolResult, ContentBlock, TextContent};

    /// What the derive with `#[serde(flatten)]` made of a `tools/call` result.
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct DerivedResult {
        content: Vec<ContentBlock>,
        structured_content: Option<Value>,
        is_error: Option<bool>,
        #[serde(rename = "_meta")]
        meta: Option<Map<String, Value>>,
        #[serde(flatten)]
        extra: Map<String, Value>,
    }

    /// The same for text content.
    #[derive(Deserialize)]
    struct DerivedText {
        text: String,
        annotations: Option<crate::types::Annotations>,
        #[serde(rename = "_meta")]
        meta: Option<Map<String, Value>>,
        #[serde(flatten)]
        extra: Map<String, Value>,
    }

    const RESULTS: &[&str] = &[
        r#"{"content":[{"type":"text","text":"hi"}]}"#,
        r#"{"content":[{"type":"text","text":"hi"}],"isError":false}"#,
        r#"{"isError":true,"content":[],"structuredContent":{"a":[1,2]},"_meta":{"k":"v"}}"#,
        r#"{"content":[],"isError":null,"structuredContent":null,"_meta":null}"#,
        r#"{"content":[],"x":1,"y":{"z":[true,null]},"x":2}"#,
        r#"{"cont\u0065nt":[{"type":"text","text":"escaped key"}]}"#,
        r#"{"content":[{"text":"type last","type":"text"},{"type":"widget","w":1}]}"#,
        r#"{"isError":false}"#,
        r#"{"content":[],"content":[]}"#,
        r#"{"content":[],"isError":false,"isError":true}"#,
        r#"{"content":{}}"#,
        r#"{"content":[],"isError":"no"}"#,
        r#"{"content":[],"_meta":[]}"#,
        r#"[]"#,
        r#"{"content":[{"type":"text"}]}"#,
    ];

    #[test]
    fn call_tool_result_decodes_as_the_derive_did() {
        for input in RESULTS {
            let ours = serde_json::from_str::<CallToolResult>(input);
            let derived = serde_json::from_str::<DerivedResult>(input);
            match (ours, derived) {
                (Ok(o), Ok(d)) => {
                    assert_eq!(o.content, d.content, "{input}");
                    assert_eq!(o.structured_content, d.structured_content, "{input}");
                    assert_eq!(o.is_error, d.is_error, "{input}");
                    assert_eq!(o.meta, d.meta, "{input}");
                    assert_eq!(o.extra, d.extra, "{input}");
                }
                (Err(_), Err(_)) => {}
                (o, d) => panic!("{input}: ours {o:?}, derived {:?}", d.map(|_| ())),
            }
            // The same through a `Value` (the path of a block whose `type` is not first).
            let value: Result<Value, _> = serde_json::from_str(input);
            if let Ok(value) = value {
                let ours = serde_json::from_value::<CallToolResult>(value.clone());
                let derived = serde_json::from_value::<DerivedResult>(value);
                assert_eq!(ours.is_ok(), derived.is_ok(), "{input} as a Value");
            }
        }
    }

    #[test]
    fn call_tool_result_errors_name_the_member() {
        let err = |s: &str| {
            serde_json::from_str::<CallToolResult>(s)
                .unwrap_err()
                .to_string()
        };
        assert!(err(r#"{"isError":false}"#).contains("missing field `content`"));
        assert!(err(r#"{"content":[],"content":[]}"#).contains("duplicate field `content`"));
        assert!(err(r#"{"content":[],"isError":1}"#).contains("expected a boolean"));
        assert!(err("[]").contains("a tools/call result"));
    }

    #[test]
    fn text_content_decodes_as_the_derive_did() {
        let inputs = [
            r#"{"text":"a"}"#,
            r#"{"text":"a","annotations":{"priority":0.5,"audience":["user"]},"_meta":{"k":1},"z":true}"#,
            r#"{"text":"a","annotations":null,"_meta":null,"type":"text"}"#,
            r#"{"annotations":{}}"#,
            r#"{"text":"a","text":"b"}"#,
            r#"{"text":7}"#,
        ];
        for input in inputs {
            let ours = serde_json::from_str::<TextContent>(input);
            let derived = serde_json::from_str::<DerivedText>(input);
            match (ours, derived) {
                (Ok(o), Ok(d)) => {
                    assert_eq!(o.text, d.text, "{input}");
                    assert_eq!(o.annotations, d.annotations, "{input}");
                    assert_eq!(o.meta, d.meta, "{input}");
                    assert_eq!(o.extra, d.extra, "{input}");
                }
                (Err(_), Err(_)) => {}
                (o, d) => panic!("{input}: ours {o:?}, derived {:?}", d.map(|_| ())),
            }
        }
    }

    /// What the derive made of progress params (an untagged token, `flatten` for the rest).
    #[derive(Deserialize, Debug, PartialEq)]
    #[serde(untagged)]
    enum DerivedToken {
        Number(i64),
        String(String),
    }

    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct DerivedProgress {
        progress_token: DerivedToken,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
        #[serde(rename = "_meta")]
        meta: Option<Map<String, Value>>,
        #[serde(flatten)]
        extra: Map<String, Value>,
    }

    #[test]
    fn progress_params_decode_as_the_derive_did() {
        use crate::types::{ProgressParams, ProgressToken};
        let inputs = [
            r#"{"progressToken":1,"progress":0.5}"#,
            r#"{"progressToken":"t-1","progress":2,"total":10,"message":"half","_meta":{"k":1}}"#,
            r#"{"progress":1,"progressToken":-7,"x":[1],"total":null,"message":null}"#,
            r#"{"progressToken":9223372036854775807,"progress":1}"#,
            r#"{"progressToken":9223372036854775808,"progress":1}"#,
            r#"{"progressToken":1.5,"progress":1}"#,
            r#"{"progressToken":null,"progress":1}"#,
            r#"{"progressToken":[1],"progress":1}"#,
            r#"{"progressToken":"a\u00e9","progress":1}"#,
            r#"{"progressToken":1}"#,
            r#"{"progress":1}"#,
            r#"{"progressToken":1,"progress":"1"}"#,
            r#"{"progressToken":1,"progressToken":2,"progress":1}"#,
            r#"{"progressToken":1,"progress":1,"message":3}"#,
            r#"[1,1]"#,
        ];
        for input in inputs {
            let ours = serde_json::from_str::<ProgressParams>(input);
            let derived = serde_json::from_str::<DerivedProgress>(input);
            match (ours, derived) {
                (Ok(o), Ok(d)) => {
                    let token = match o.progress_token {
                        ProgressToken::Number(n) => DerivedToken::Number(n),
                        ProgressToken::String(s) => DerivedToken::String(s),
                    };
                    assert_eq!(token, d.progress_token, "{input}");
                    assert_eq!(o.progress, d.progress, "{input}");
                    assert_eq!(o.total, d.total, "{input}");
                    assert_eq!(o.message, d.message, "{input}");
                    assert_eq!(o.meta, d.meta, "{input}");
                    assert_eq!(o.extra, d.extra, "{input}");
                }
                (Err(_), Err(_)) => {}
                (o, d) => panic!("{input}: ours {o:?}, derived {:?}", d.map(|_| ())),
            }
        }
    }

    #[test]
    fn blocks_keep_an_unknown_or_odd_type_whole() {
        let blocks: Vec<ContentBlock> = serde_json::from_value(json!([
            {"type": "text", "text": "t", "extra": 1},
            {"type": "widget", "w": 1},
            {"type": 5, "text": "number"},
            {"type": ["text"], "text": "array"},
            {"type": {"k": "text"}},
            {"type": null},
            {"text": "no type"},
        ]))
        .expect("every block decodes");
        match &blocks[0] {
            ContentBlock::Text(t) => {
                assert_eq!(t.text, "t");
                assert_eq!(t.extra.get("extra"), Some(&json!(1)));
            }
            other => panic!("{other:?}"),
        }
        let unknown = |b: &ContentBlock| match b {
            ContentBlock::Unknown(map) => Value::Object(map.clone()),
            other => panic!("expected an unknown block, got {other:?}"),
        };
        assert_eq!(unknown(&blocks[1]), json!({"type": "widget", "w": 1}));
        assert_eq!(unknown(&blocks[2]), json!({"type": 5, "text": "number"}));
        assert_eq!(
            unknown(&blocks[3]),
            json!({"type": ["text"], "text": "array"})
        );
        assert_eq!(unknown(&blocks[4]), json!({"type": {"k": "text"}}));
        assert_eq!(unknown(&blocks[5]), json!({"type": null}));
        assert_eq!(unknown(&blocks[6]), json!({"text": "no type"}));
        // A known type with a wrong shape is an error, wherever `type` stands.
        assert!(serde_json::from_str::<ContentBlock>(r#"{"type":"text"}"#).is_err());
        assert!(serde_json::from_str::<ContentBlock>(r#"{"text":1,"type":"text"}"#).is_err());
    }
}
