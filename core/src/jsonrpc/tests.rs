//! Decoding and encoding of JSON-RPC envelopes.

use super::*;

fn single(s: &str) -> Message {
    match decode_owned(s.as_bytes()).unwrap() {
        Decoded::Single(m) => m,
        other => panic!("expected single, got {other:?}"),
    }
}

#[test]
fn method_names_are_borrowed_unless_escaped() {
    let method_of = |s: &'static str| match decode(s).unwrap() {
        DecodedRef::Single(MessageRef::Request { method, .. }) => method,
        m => panic!("{m:?}"),
    };
    assert!(matches!(
        method_of(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#),
        Cow::Borrowed("ping")
    ));
    let escaped = method_of(r#"{"jsonrpc":"2\u002e0","id":1,"method":"p\u0069ng"}"#);
    assert!(
        matches!(escaped, Cow::Owned(ref m) if m == "ping"),
        "{escaped:?}"
    );
    assert!(decode(r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#).is_err());
    assert!(decode(r#"{"jsonrpc":2,"id":1,"method":"ping"}"#).is_err());
    assert!(decode(r#"{"jsonrpc":null,"id":1,"method":"ping"}"#).is_ok());
}

#[test]
fn method_names_are_written_as_serde_json_writes_them() {
    for s in [
        "tools/call",
        "",
        "a\"b",
        "back\\slash",
        "tab\tnew\nline\u{1}",
        "del\u{7f}",
        "é/日本/😀",
        "/",
    ] {
        let mut ours = Vec::new();
        write_json_str(&mut ours, s);
        assert_eq!(ours, serde_json::to_vec(s).unwrap(), "{s:?}");
    }
}

#[test]
fn classifies_each_shape() {
    match single(r#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#) {
        Message::Request { id, method, params } => {
            assert_eq!(id, Id::from(7));
            assert_eq!(method, "ping");
            assert!(params.is_none());
        }
        m => panic!("{m:?}"),
    }
    match single(r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"a":1}}"#) {
        Message::Notification { method, params } => {
            assert_eq!(method, "notifications/progress");
            assert_eq!(params.unwrap().get(), r#"{"a":1}"#);
        }
        m => panic!("{m:?}"),
    }
    match single(r#"{"jsonrpc":"2.0","id":"abc","result":{"x":[1,2]}}"#) {
        Message::Response { id, result } => {
            assert_eq!(id, Id::from("abc"));
            assert_eq!(result.get(), r#"{"x":[1,2]}"#);
        }
        m => panic!("{m:?}"),
    }
    match single(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad"}}"#) {
        Message::Error { id, error } => {
            assert!(id.is_none());
            assert_eq!(error.code, -32700);
        }
        m => panic!("{m:?}"),
    }
    match single(r#"{"jsonrpc":"2.0","error":{"code":1,"message":"m","data":{"k":true}}}"#) {
        Message::Error { id, error } => {
            assert!(id.is_none());
            assert_eq!(error.data.unwrap().get(), r#"{"k":true}"#);
        }
        m => panic!("{m:?}"),
    }
}

#[test]
fn null_result_is_still_a_response() {
    assert!(matches!(
        single(r#"{"jsonrpc":"2.0","id":1,"result":null}"#),
        Message::Response { .. }
    ));
}

#[test]
fn rejects_what_is_not_json_rpc() {
    assert!(matches!(
        decode(b"Server starting on stdio..."),
        Err(DecodeError::NotJson { .. })
    ));
    assert!(matches!(
        decode(br#"{"hello":"world"}"#),
        Err(DecodeError::NotJsonRpc { .. })
    ));
    assert!(matches!(
        decode(br#"{"jsonrpc":"1.0","id":1,"result":{}}"#),
        Err(DecodeError::NotJsonRpc { .. })
    ));
    assert!(matches!(
        decode(br#"{"jsonrpc":"2.0","id":null,"method":"x"}"#),
        Err(DecodeError::NotJsonRpc { .. })
    ));
    assert!(matches!(decode(b"[]"), Err(DecodeError::NotJsonRpc { .. })));
    assert!(matches!(decode(b"42"), Err(DecodeError::NotJsonRpc { .. })));
}

#[test]
fn batch_elements_decode_independently() {
    match decode_owned(
        br#"[{"jsonrpc":"2.0","id":1,"result":{}}, 5, {"jsonrpc":"2.0","method":"m"}]"#,
    )
    .unwrap()
    {
        Decoded::Batch(items) => {
            assert_eq!(items.len(), 3);
            assert!(matches!(items[0], Ok(Message::Response { .. })));
            assert!(items[1].is_err());
            assert!(matches!(items[2], Ok(Message::Notification { .. })));
        }
        d => panic!("{d:?}"),
    }
}

#[test]
fn peer_ids_round_trip_verbatim() {
    for raw in ["18446744073709551615", "-3", "\"x\\\"y\"", "1.5"] {
        let msg = format!(r#"{{"jsonrpc":"2.0","id":{raw},"method":"ping"}}"#);
        let Message::Request { id, .. } = single(&msg) else {
            panic!()
        };
        let mut out = Vec::new();
        encode_response(&mut out, &id, &empty_object());
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains(&format!(r#""id":{raw}"#)), "{text}");
    }
}

#[test]
fn encoders_produce_parseable_compact_json() {
    let params = to_raw(&serde_json::json!({"name": "a\nb"})).unwrap();
    let mut out = Vec::new();
    encode_request(&mut out, &Id::from(3), "tools/call", Some(&params));
    assert_eq!(
        String::from_utf8_lossy(&out),
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"a\nb"}}"#
    );
    out.clear();
    encode_notification(&mut out, "notifications/initialized", None);
    assert!(matches!(
        single(std::str::from_utf8(&out).unwrap()),
        Message::Notification { .. }
    ));
    out.clear();
    encode_error(&mut out, None, &ErrorObject::method_not_found("x/y"));
    assert!(matches!(
        single(std::str::from_utf8(&out).unwrap()),
        Message::Error { id: None, .. }
    ));
}

#[test]
fn ids_of_every_shape_and_nothing_else() {
    let id = |raw: &str| serde_json::from_str::<Id>(raw);
    assert_eq!(id("7").unwrap(), Id::from(7));
    assert_eq!(id("-3").unwrap().to_string(), "-3");
    assert_eq!(id("2.5").unwrap().to_string(), "2.5");
    assert_eq!(id(r#""a\"b""#).unwrap(), Id::from("a\"b"));
    for bad in ["true", "null", "{}", "[1]"] {
        assert!(id(bad).is_err(), "{bad}");
    }
    assert!(matches!(
        decode(br#"{"jsonrpc":"2.0","id":{"x":1},"result":{}}"#),
        Err(DecodeError::NotJsonRpc { .. })
    ));
}

#[test]
fn text_and_byte_decoding_agree() {
    let inputs: [&str; 7] = [
        r#"{"jsonrpc":"2.0","id":1,"result":{"t":"é\n"}}"#,
        r#"{"jsonrpc": "2.0", "id": 1, "result": {"t": "é"}}"#,
        r#"[{"jsonrpc":"2.0","method":"m"},{"jsonrpc":"2.0","id":"x","result":1}]"#,
        r#"{"hello":"world"}"#,
        "banner",
        "[]",
        r#"{"jsonrpc": "2.0", "id": 1, "result": {"a" 1}}"#,
    ];
    for input in inputs {
        assert_eq!(decode(input.as_bytes()), decode(input), "{input}");
        // Checked, as the shortcut's located payloads are before they are kept.
        let owned = |d: Result<Decoded, DecodeError>| format!("{d:?}");
        assert_eq!(
            owned(decode_owned(input)),
            owned(decode_general(input).and_then(general_owned)),
            "{input}"
        );
    }
}

/// A compact answer whose result is not JSON: located by the shortcut, refused by its check
/// (and by `decode_owned`) where serde's parse refuses the whole input.
#[test]
fn a_located_payload_that_is_not_json_fails_its_check() {
    let input = r#"{"jsonrpc":"2.0","id":1,"result":{"a" 1}}"#;
    let Ok(DecodedRef::Single(MessageRef::Response { result, .. })) = decode(input) else {
        panic!("the shortcut locates the result");
    };
    assert_eq!(result.get(), r#"{"a" 1}"#);
    let check = result.check().unwrap_err();
    assert!(matches!(
        decode_general(input),
        Err(DecodeError::NotJson { .. })
    ));
    assert_eq!(
        decode_owned(input).unwrap_err(),
        decode_general(input).unwrap_err()
    );
    assert_eq!(check.column(), 6, "{check}");
}

#[test]
fn excerpt_is_bounded() {
    let long = vec![b'a'; 10_000];
    assert!(excerpt(&long).len() <= EXCERPT_LEN + 3);
    assert_eq!(excerpt(b"\xff\xfe"), "\u{fffd}\u{fffd}");
}

/// The compact shortcut against serde's envelope parse (the reference): equal results, errors
/// included, on generated JSON-RPC messages, mutations of them and arbitrary bytes.
pub(super) mod shortcut_equals_general_parse {
    use proptest::prelude::*;
    use serde_json::Value;

    use super::super::{Input, ReadInPass, compact, decode_reading};
    use super::*;
    use crate::rpc::notifications::ProgressParams;

    /// Strings with the characters that matter to a scan: quotes, backslashes, brackets,
    /// braces, control characters (escaped when serialized) and non-ASCII.
    pub(in crate::jsonrpc) fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<f64>().prop_map(Value::from),
            r#"[a\\"{}\[\]:,\n\té/]{0,12}"#.prop_map(Value::from),
        ];
        leaf.prop_recursive(5, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::btree_map(r#"[a"\\}\]]{1,4}"#, inner, 0..4)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    /// A value as text: compact or pretty (whitespace inside the payload).
    fn value_text() -> impl Strategy<Value = String> {
        (json_value(), any::<bool>()).prop_map(|(v, pretty)| {
            if pretty {
                serde_json::to_string_pretty(&v).unwrap()
            } else {
                serde_json::to_string(&v).unwrap()
            }
        })
    }

    /// Ids of every kind, valid and not.
    fn id_text() -> impl Strategy<Value = String> {
        prop_oneof![
            4 => any::<u64>().prop_map(|n| n.to_string()),
            2 => (0u64..10).prop_map(|n| n.to_string()),
            1 => any::<i64>().prop_map(|n| n.to_string()),
            1 => Just("18446744073709551616".to_owned()),
            1 => Just("007".to_owned()),
            1 => prop_oneof![Just("1.0"), Just("1e3"), Just("-0"), Just("0")].prop_map(str::to_owned),
            2 => "[a-z0-9/é-]{0,8}".prop_map(|s| format!("\"{s}\"")),
            1 => r#"[a\\"\n]{0,4}"#.prop_map(|s| serde_json::to_string(&s).unwrap()),
            1 => Just(r#""\u0061""#.to_owned()),
            1 => Just("null".to_owned()),
            1 => value_text(),
        ]
    }

    fn method_text() -> impl Strategy<Value = String> {
        prop_oneof![
            3 => prop_oneof![
                Just("notifications/progress"),
                Just("tools/call"),
                Just("ping"),
                Just(""),
            ]
            .prop_map(|m| format!("\"{m}\"")),
            1 => Just(r#""p\u0069ng""#.to_owned()),
            1 => r#"[a/\\"\tö]{0,6}"#.prop_map(|s| serde_json::to_string(&s).unwrap()),
            1 => Just("null".to_owned()),
            1 => Just("7".to_owned()),
        ]
    }

    /// Params of `notifications/progress`: valid ones (members in any order, unknown ones,
    /// whitespace), and ones a typed read refuses (a member missing, twice, of the wrong
    /// type, not JSON after all).
    fn progress_params_text() -> impl Strategy<Value = String> {
        let number = prop_oneof![
            any::<f64>().prop_map(|n| serde_json::to_string(&n).unwrap()),
            (0u32..200).prop_map(|n| n.to_string()),
            Just("1e400".to_owned()),
            Just("\"x\"".to_owned()),
            Just("null".to_owned()),
        ];
        let member = prop_oneof![
            3 => id_text().prop_map(|t| format!(r#""progressToken":{t}"#)),
            3 => number.clone().prop_map(|n| format!(r#""progress":{n}"#)),
            2 => number.prop_map(|n| format!(r#""total":{n}"#)),
            2 => r#"[a\\"\n é}\]]{0,12}"#
                .prop_map(|m| format!(r#""message":{}"#, serde_json::to_string(&m).unwrap())),
            1 => Just(r#""message":"a\ud800b""#.to_owned()),
            1 => value_text().prop_map(|v| format!(r#""_meta":{v}"#)),
            1 => Just(r#""progress":1 , "x" :[1,{"a":"}"}]"#.to_owned()),
            1 => Just(r#""progress":[1"#.to_owned()),
        ];
        prop_oneof![
            4 => (id_text(), 0u32..100, prop::collection::vec(member.clone(), 0..3)).prop_map(
                |(token, progress, more)| {
                    let mut members =
                        vec![format!(r#""progressToken":{token}"#), format!(r#""progress":{progress}"#)];
                    members.extend(more);
                    format!("{{{}}}", members.join(","))
                }
            ),
            2 => prop::collection::vec(member, 0..5)
                .prop_map(|members| format!("{{{}}}", members.join(","))),
            1 => (id_text(), 0u32..100).prop_map(|(t, p)| format!("[{t},{p}]")),
            1 => (id_text(), 0u32..100).prop_map(|(t, p)| format!("{{ \"progressToken\" : {t},\n\"progress\": {p} }}")),
        ]
    }

    /// A payload: any value, or params a progress notification might carry.
    fn params_text() -> impl Strategy<Value = String> {
        prop_oneof![value_text(), progress_params_text()]
    }

    fn version_text() -> impl Strategy<Value = String> {
        prop_oneof![
            6 => Just(r#""2.0""#),
            1 => Just(r#""1.0""#),
            1 => Just(r#""2\u002e0""#),
            1 => Just("null"),
            1 => Just("2"),
        ]
        .prop_map(str::to_owned)
    }

    fn error_text() -> impl Strategy<Value = String> {
        prop_oneof![
            (any::<i32>(), "[a-z ]{0,8}")
                .prop_map(|(c, m)| format!(r#"{{"code":{c},"message":"{m}"}}"#)),
            Just("null".to_owned()),
            value_text(),
        ]
    }

    /// One member, its name sometimes escaped or unknown.
    fn member() -> impl Strategy<Value = (String, String)> {
        prop_oneof![
            4 => version_text().prop_map(|v| ("\"jsonrpc\"".to_owned(), v)),
            4 => id_text().prop_map(|v| ("\"id\"".to_owned(), v)),
            3 => method_text().prop_map(|v| ("\"method\"".to_owned(), v)),
            3 => params_text().prop_map(|v| ("\"params\"".to_owned(), v)),
            3 => value_text().prop_map(|v| ("\"result\"".to_owned(), v)),
            1 => error_text().prop_map(|v| ("\"error\"".to_owned(), v)),
            1 => value_text().prop_map(|v| ("\"x\"".to_owned(), v)),
            1 => value_text().prop_map(|v| (r#""\u0069d""#.to_owned(), v)),
        ]
    }

    /// The separators a writer may put around the punctuation of the envelope: before the
    /// object, after its `{`, before and after each colon, before and after each comma,
    /// before its `}`, after the object.
    fn spacing() -> impl Strategy<Value = [&'static str; 8]> {
        prop_oneof![
            12 => Just(["", "", "", "", "", "", "", ""]),
            2 => Just(["", "", "", " ", "", " ", "", ""]),
            1 => Just([" ", " ", " ", " ", " ", " ", " ", " "]),
            1 => Just(["", "\n  ", "", ": ", "", "\n  ", "\n", "\n"]),
            1 => Just(["\t", "", "\r", "", " ", "", "", "\r\n"]),
            // Not whitespace to JSON (the last three): refused alike.
            1 => prop::array::uniform8(prop::sample::select(
                &["", " ", "\t", "\n", "\r", "  ", "\u{b}", "\u{c}", "\u{a0}"][..]
            )),
        ]
    }

    /// A message from the grammar: well-formed shapes (the members a request, notification
    /// or response has, in any order), plus random member lists (duplicates, unknown
    /// members, missing ones), in any spacing.
    fn message() -> impl Strategy<Value = String> {
        let shaped = prop_oneof![
            (version_text(), id_text(), value_text()).prop_map(|(v, i, r)| vec![
                ("\"jsonrpc\"".to_owned(), v),
                ("\"id\"".to_owned(), i),
                ("\"result\"".to_owned(), r),
            ]),
            (version_text(), id_text(), method_text(), params_text()).prop_map(|(v, i, m, p)| {
                vec![
                    ("\"jsonrpc\"".to_owned(), v),
                    ("\"id\"".to_owned(), i),
                    ("\"method\"".to_owned(), m),
                    ("\"params\"".to_owned(), p),
                ]
            }),
            (version_text(), method_text(), params_text()).prop_map(|(v, m, p)| vec![
                ("\"jsonrpc\"".to_owned(), v),
                ("\"method\"".to_owned(), m),
                ("\"params\"".to_owned(), p),
            ]),
        ];
        let members = prop_oneof![
            3 => shaped.prop_shuffle(),
            2 => prop::collection::vec(member(), 0..6),
        ];
        (members, spacing()).prop_map(
            |(
                members,
                [
                    open,
                    after_open,
                    before_colon,
                    after_colon,
                    before_comma,
                    after_comma,
                    before_close,
                    close,
                ],
            )| {
                let body: Vec<String> = members
                    .iter()
                    .map(|(k, v)| format!("{k}{before_colon}:{after_colon}{v}"))
                    .collect();
                format!(
                    "{open}{{{after_open}{}{before_close}}}{close}",
                    body.join(&format!("{before_comma},{after_comma}")),
                )
            },
        )
    }

    /// A message changed a little: cut, a byte replaced, inserted or removed, wrapped in a
    /// batch.
    fn mutated() -> impl Strategy<Value = Vec<u8>> {
        (message(), any::<prop::sample::Index>(), any::<u8>(), 0..5u8).prop_map(
            |(text, at, byte, how)| {
                let mut bytes = text.into_bytes();
                let i = at.index(bytes.len() + 1);
                match how {
                    0 => bytes.truncate(i),
                    1 if i < bytes.len() => bytes[i] = byte,
                    2 => bytes.insert(i, byte),
                    3 if i < bytes.len() => {
                        bytes.remove(i);
                    }
                    _ => {
                        bytes.insert(0, b'[');
                        bytes.push(b']');
                    }
                }
                bytes
            },
        )
    }

    /// The byte offset in `text` of a `serde_json` error's line and column.
    fn offset(text: &[u8], e: &serde_json::Error) -> usize {
        let line_start: usize = text
            .split(|&b| b == b'\n')
            .take(e.line().saturating_sub(1))
            .map(|l| l.len() + 1)
            .sum();
        line_start + e.column()
    }

    /// The shortcut's result equals serde's parse once each payload is checked: where every
    /// payload checks, the two are equal; where one fails its check, serde's parse refuses
    /// the input as not JSON, at the same place (or, where the check ran out of payload,
    /// just after it, where serde's parse met the envelope's next byte).
    fn assert_same_after_check(input: Input<'_>) -> Result<(), TestCaseError> {
        let bytes = input.bytes();
        let fast = decode(input);
        let general = decode_general(input);
        let payload = match &fast {
            Ok(DecodedRef::Single(
                MessageRef::Request { params, .. } | MessageRef::Notification { params, .. },
            )) => *params,
            Ok(DecodedRef::Single(MessageRef::Response { result, .. })) => Some(*result),
            _ => None,
        };
        let failed = payload.and_then(|p| p.check().err().map(|e| (p, e)));
        let Some((payload, check)) = failed else {
            prop_assert_eq!(fast, general);
            return Ok(());
        };
        let Err(DecodeError::NotJson { detail, .. }) = &general else {
            return Err(TestCaseError::fail(format!(
                "{general:?} where {check} failed"
            )));
        };
        let start = payload.get().as_ptr() as usize - bytes.as_ptr() as usize;
        let at = start + offset(payload.get().as_bytes(), &check);
        let general_error = serde_json::from_slice::<serde::de::IgnoredAny>(bytes).unwrap_err();
        let general_at = offset(bytes, &general_error);
        let end = start + payload.get().len();
        prop_assert!(
            general_at == at || (check.is_eof() && (end..=end + 1).contains(&general_at)),
            "check {check} at {at}, serde's parse {detail} at {general_at}"
        );
        Ok(())
    }

    /// The progress read of `decode_reading` against its reference, `decode` and a typed read
    /// of the params: the same message, and a read only of a progress notification's params,
    /// equal to the typed read of them.
    fn assert_read_in_pass_as_after(input: Input<'_>) -> Result<(), TestCaseError> {
        let (decoded, read) = decode_reading::<ProgressParams>(input);
        let reference = decode(input);
        prop_assert_eq!(&decoded, &reference);
        let Some(read) = read else {
            return Ok(());
        };
        let Ok(DecodedRef::Single(MessageRef::Notification {
            method,
            params: Some(params),
        })) = reference
        else {
            return Err(TestCaseError::fail(format!(
                "{read:?} read from {reference:?}"
            )));
        };
        prop_assert_eq!(method, ProgressParams::METHOD);
        prop_assert_eq!(params.decode::<ProgressParams>().ok(), Some(read));
        Ok(())
    }

    /// The same result from both decoders (after checking), from bytes and (when UTF-8)
    /// from text, and the same again with progress params read in the decoder's pass.
    fn assert_same(bytes: &[u8]) -> Result<(), TestCaseError> {
        assert_same_after_check(Input::Bytes(bytes))?;
        assert_read_in_pass_as_after(Input::Bytes(bytes))?;
        if let Ok(text) = std::str::from_utf8(bytes) {
            assert_same_after_check(Input::Text(text))?;
            assert_read_in_pass_as_after(Input::Text(text))?;
            prop_assert_eq!(decode(text), decode(bytes));
        }
        Ok(())
    }

    proptest! {
        #[test]
        fn on_generated_messages(text in message()) {
            assert_same(text.as_bytes())?;
        }

        #[test]
        fn on_mutated_messages(bytes in mutated()) {
            assert_same(&bytes)?;
        }

        #[test]
        fn on_arbitrary_bytes(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
            assert_same(&bytes)?;
        }

        /// Bytes from the envelope's alphabet, so that many are nearly messages.
        #[test]
        fn on_bytes_from_the_envelope_alphabet(
            parts in prop::collection::vec(
                prop_oneof![
                    Just("{"), Just("}"), Just("["), Just("]"), Just(","), Just(":"),
                    Just("\""), Just("\\"), Just(" "), Just("1"), Just("0"), Just("\u{e9}"),
                    Just("\"jsonrpc\":\"2.0\""), Just("\"id\":"), Just("\"result\":"),
                    Just("\"method\":\"m\""), Just("\"params\":"), Just("null"),
                ],
                0..16,
            ),
            bad_utf8 in any::<bool>(),
        ) {
            let mut bytes = parts.concat().into_bytes();
            if bad_utf8 {
                let at = bytes.len() / 2;
                bytes.insert(at, 0xff);
            }
            assert_same(&bytes)?;
        }
    }

    /// The shortcut does read the forms the SDKs write (so the properties above compare two
    /// decoders, not one with itself), and leaves the rest to the general parse.
    #[test]
    fn the_shortcut_reads_compact_messages_only() {
        let read = |text: &str| compact::envelope(Input::Text(text)).is_some();
        for compact in [
            // Located, not validated: its check fails.
            r#"{"jsonrpc":"2.0","id":1,"result":{"a" 1}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"content":[]}}"#,
            r#"{"result":{"a":"}\""},"jsonrpc":"2.0","id":18446744073709551615}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}"#,
            r#"{"method":"notifications/progress","params":{},"jsonrpc":"2.0"}"#,
            r#"{"jsonrpc":"2.0","id":"s-1","method":"roots/list"}"#,
            r#"{"jsonrpc":"1.0","id":1,"result":5}"#,
            // Spaced as Python's `json.dumps` writes, or anyhow between tokens.
            r#"{"jsonrpc": "2.0", "id": 1, "result": {"a": [1, 2]}}"#,
            r#"{"jsonrpc": "2.0","id":1,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{}} "#,
            "\r\n\t { \"id\" : 7 ,\n\"result\"\t:\r5 , \"jsonrpc\" : \"2.0\" } \r\n",
        ] {
            assert!(read(compact), "{compact}");
            assert!(compact::envelope(Input::Bytes(compact.as_bytes())).is_some());
        }
        for other in [
            // Not whitespace to JSON.
            "{\"jsonrpc\":\u{b}\"2.0\",\"id\":1,\"result\":{}}",
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}\u{a0}}",
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\u{c}",
            r#"{"jsonrpc":"2.0","id":1,"id":2,"result":{}}"#,
            r#"{"jsonrpc":"2.0","method":"m","result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{},"params":{}}"#,
            r#"{"jsonrpc":"2.0","id":-1,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1.0,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":01,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":18446744073709551616,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":"a\"b","result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{},"x":1}"#,
            r#"{"jsonrpc":"2.0","method":"p\u0069ng"}"#,
            r#"[{"jsonrpc":"2.0","method":"ping"}]"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{}"#,
        ] {
            assert!(!read(other), "{other}");
        }
        assert!(
            compact::envelope(Input::Bytes(b"{\"jsonrpc\":\"2.0\",\"method\":\"\xff\"}")).is_none()
        );
    }

    /// The progress read happens for the forms the SDKs write (so the property above
    /// compares it with its reference, not two decoders that both read nothing), and only
    /// for a notification whose params a typed read takes.
    #[test]
    fn progress_params_are_read_in_the_pass_where_written_compactly() {
        let read = |text: &str| {
            let from_text = decode_reading::<ProgressParams>(Input::Text(text)).1;
            let from_bytes = decode_reading::<ProgressParams>(Input::Bytes(text.as_bytes())).1;
            assert_eq!(from_text, from_bytes, "{text}");
            from_text
        };
        let p = r#"{"progressToken":7,"progress":0.5,"total":2,"message":"a \"}\" b"}"#;
        for text in [
            format!(r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{p}}}"#),
            format!(r#"{{"method":"notifications/progress","params":{p},"jsonrpc":"2.0"}}"#),
            r#"{"method":"notifications/progress","params":{ "progressToken" : 7 ,"progress":1}}"#
                .to_owned(),
            r#"{"method":"notifications/progress","params":["t",1]}"#.to_owned(),
            format!(r#"{{"jsonrpc": "2.0","method":"notifications/progress","params":{p}}}"#),
            format!(r#"{{"jsonrpc": "2.0", "method": "notifications/progress", "params": {p}}}"#),
            format!("\n{{ \"method\" :\"notifications/progress\" ,\t\"params\"\r: {p} }}\n"),
        ] {
            let p = read(&text).unwrap_or_else(|| panic!("not read: {text}"));
            assert!(p.progress > 0.0, "{text}");
        }
        assert_eq!(
            read(&format!(
                r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{p}}}"#
            ))
            .and_then(|p| p.message),
            Some(r#"a "}" b"#.to_owned())
        );
        for text in [
            // Not a progress notification, or not (only) one.
            format!(r#"{{"jsonrpc":"2.0","method":"notifications/message","params":{p}}}"#),
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"notifications/progress","params":{p}}}"#),
            format!(r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{p},"id":1}}"#),
            format!(r#"{{"params":{p},"method":"notifications/progress"}}"#),
            format!(r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{p},"x":1}}"#),
            format!(r#"[{{"jsonrpc":"2.0","method":"notifications/progress","params":{p}}}]"#),
            // Params a typed read refuses: the reader of the located params fails as before.
            r#"{"method":"notifications/progress","params":{"progressToken":7}}"#.to_owned(),
            r#"{"method":"notifications/progress","params":{"progressToken":7,"progress":1,"progress":2}}"#.to_owned(),
            r#"{"method":"notifications/progress","params":{"progressToken":7,"progress":1,"x":[}}"#.to_owned(),
        ] {
            assert!(read(&text).is_none(), "{text}");
        }
        let not_utf8 = b"{\"method\":\"notifications/progress\",\"params\":{\"progressToken\":7,\"progress\":1,\"x\":\"\xff\"}}";
        let (decoded, read) = decode_reading::<ProgressParams>(Input::Bytes(not_utf8));
        assert!(read.is_none());
        assert_eq!(decoded, decode(not_utf8));
    }

    /// Payloads nested around `serde_json`'s limit of 128 levels (and far beyond): both
    /// decoders give the same message at every depth, in every spacing and member order, since
    /// neither counts the payload's nesting (only a typed read does, from the payload); and
    /// the typed read of a located payload counts from the payload, as it does on a message
    /// serde's parse decoded.
    #[test]
    fn payloads_nested_around_the_recursion_limit_decode_alike() {
        fn nested(depth: usize, leaf: &str) -> String {
            let mut text = String::new();
            for i in 0..depth {
                text.push_str(if i % 2 == 0 { "[" } else { "{\"a\":" });
            }
            text.push_str(leaf);
            for i in (0..depth).rev() {
                text.push(if i % 2 == 0 { ']' } else { '}' });
            }
            text
        }
        let progress = |depth: usize| {
            format!(
                r#"{{"progressToken":1,"progress":2,"_meta":{}}}"#,
                nested(depth, "1")
            )
        };
        let depths = [1, 2, 125, 126, 127, 128, 129, 130, 10_000];
        for depth in depths {
            let value = nested(depth, "1");
            for text in [
                format!(r#"{{"jsonrpc":"2.0","id":1,"result":{value}}}"#),
                format!(r#"{{"result":{value},"jsonrpc":"2.0","id":1}}"#),
                format!(r#"{{"jsonrpc": "2.0", "id": 1, "result": {value}}}"#),
                format!(r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{value}}}"#),
                format!(
                    r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{value}}}"#
                ),
                format!(
                    r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{}}}"#,
                    progress(depth - 1)
                ),
                format!(
                    r#"{{"jsonrpc": "2.0", "method": "notifications/progress", "params": {}}}"#,
                    progress(depth - 1)
                ),
                // Not a message (the version is nested): refused alike.
                format!(r#"{{"jsonrpc":{value},"id":1,"result":1}}"#),
                format!(r#"{{"jsonrpc":"2.0","id":{value},"result":1}}"#),
            ] {
                assert_same(text.as_bytes()).unwrap_or_else(|e| panic!("depth {depth}: {e}"));
                // Cut short: refused alike.
                assert_same(&text.as_bytes()[..text.len() - 2])
                    .unwrap_or_else(|e| panic!("depth {depth}, cut: {e}"));
            }
        }
        // A typed read of a payload counts the payload's own nesting, whichever decoder
        // located it: 127 levels read, 128 refused.
        for (depth, reads) in [(127, true), (128, false)] {
            let text = format!(
                r#"{{"jsonrpc":"2.0","id":1,"result":{}}}"#,
                nested(depth, "1")
            );
            for decoded in [decode(text.as_str()), decode_general(text.as_str())] {
                let Ok(DecodedRef::Single(MessageRef::Response { result, .. })) = decoded else {
                    panic!("depth {depth}: {decoded:?}");
                };
                assert!(result.check().is_ok());
                assert_eq!(result.decode::<Value>().is_ok(), reads, "depth {depth}");
            }
        }
    }
}
