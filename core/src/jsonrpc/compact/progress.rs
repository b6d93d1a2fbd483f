//! The params of a progress notification written compactly, read by hand in the envelope's
//! pass: the form every SDK writes, `{"progressToken":..,"progress":..,"total":..,
//! "message":".."}` (members in any order, `total` and `message` optional), with an id
//! token, integer numbers and a message without escapes. Anything else (whitespace, another
//! member, a member twice, a fraction, an escape, `null`) is left to serde's typed parse,
//! having decided nothing.
//!
//! Each part is read as serde's parse reads it: the token as [`compact::id`](super::id)
//! reads an id (what `Id`'s `Deserialize` gives), a number written as an unsigned integer
//! that fits a `u64` as that `u64` cast to `f64` (serde's parse visits such a number as a
//! `u64`, and `f64`'s `Deserialize` casts it), the message as its text. The differential
//! test below holds the reader equal to serde's typed parse.

use super::{Input, ReadInPass, plain_str, unsigned};
use crate::rpc::notifications::ProgressParams;

impl ReadInPass for ProgressParams {
    const METHOD: &'static str = "notifications/progress";

    fn read_compact(input: Input<'_>, start: usize) -> Option<(Self, usize)> {
        let bytes = input.bytes();
        if bytes.get(start) != Some(&b'{') {
            return None;
        }
        let mut at = start + 1;
        let (mut token, mut progress, mut total, mut message) = (None, None, None, None);
        loop {
            let member = Member::at(bytes.get(at..)?)?;
            at += member.name_len();
            match member {
                Member::ProgressToken if token.is_none() => {
                    let (id, len) = super::id(input, at)?;
                    token = Some(id);
                    at += len;
                }
                Member::Progress if progress.is_none() => {
                    let (n, len) = unsigned(bytes, at)?;
                    // As serde's parse gives it: the number visited as a `u64`, cast.
                    progress = Some(n as f64);
                    at += len;
                }
                Member::Total if total.is_none() => {
                    let (n, len) = unsigned(bytes, at)?;
                    total = Some(n as f64);
                    at += len;
                }
                Member::Message if message.is_none() => {
                    let text = plain_str(input, at)?;
                    message = Some(text.to_owned());
                    at += text.len() + 2;
                }
                // A member twice: serde's parse refuses it.
                _ => return None,
            }
            match bytes.get(at)? {
                b',' => at += 1,
                b'}' => break,
                _ => return None,
            }
        }
        let params = ProgressParams {
            progress_token: token?,
            progress: progress?,
            total,
            message,
        };
        Some((params, at + 1 - start))
    }
}

/// A member of progress params, by its name.
#[derive(Clone, Copy)]
enum Member {
    ProgressToken,
    Progress,
    Total,
    Message,
}

impl Member {
    /// The member whose name (`"name":`, written without escapes) opens `rest`, if one.
    fn at(rest: &[u8]) -> Option<Member> {
        // Each name compared as a literal of known length (inline compares, no call).
        let (member, matches) = match rest.get(1..3)? {
            b"pr" if rest.get(9) == Some(&b'T') => (
                Member::ProgressToken,
                rest.starts_with(br#""progressToken":"#),
            ),
            b"pr" => (Member::Progress, rest.starts_with(br#""progress":"#)),
            b"to" => (Member::Total, rest.starts_with(br#""total":"#)),
            b"me" => (Member::Message, rest.starts_with(br#""message":"#)),
            _ => return None,
        };
        matches.then_some(member)
    }

    /// The length of the name, quotes and colon included.
    fn name_len(self) -> usize {
        match self {
            Member::ProgressToken => r#""progressToken":"#.len(),
            Member::Progress => r#""progress":"#.len(),
            Member::Total => r#""total":"#.len(),
            Member::Message => r#""message":"#.len(),
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// Params in the forms the reader knows and near them: members in any order, missing or
    /// twice, numbers and tokens of every kind, messages with and without escapes,
    /// whitespace.
    fn params_text() -> impl Strategy<Value = String> {
        let number = prop_oneof![
            3 => (0u64..200).prop_map(|n| n.to_string()),
            1 => any::<u64>().prop_map(|n| n.to_string()),
            1 => Just("18446744073709551616".to_owned()),
            1 => any::<f64>().prop_map(|n| serde_json::to_string(&n).unwrap()),
            1 => prop_oneof![Just("01"), Just("-1"), Just("1.0"), Just("1e2"), Just("null"), Just("\"1\""), Just("1x")]
                .prop_map(str::to_owned),
        ];
        let token = prop_oneof![
            3 => any::<u64>().prop_map(|n| n.to_string()),
            2 => "[a-z0-9/é-]{0,8}".prop_map(|s| format!("\"{s}\"")),
            1 => r#"[a\\"\n]{0,4}"#.prop_map(|s| serde_json::to_string(&s).unwrap()),
            1 => prop_oneof![Just("-3"), Just("1.5"), Just("null"), Just("{}")].prop_map(str::to_owned),
        ];
        let message = prop_oneof![
            3 => "[a-z é日]{0,12}".prop_map(|s| format!("\"{s}\"")),
            1 => r#"[a\\"\n\t}]{0,6}"#.prop_map(|s| serde_json::to_string(&s).unwrap()),
            1 => prop_oneof![Just("null"), Just("5"), Just("\"a"), Just("\"\\u0041\"")].prop_map(str::to_owned),
        ];
        let member = prop_oneof![
            3 => token.prop_map(|t| format!(r#""progressToken":{t}"#)),
            3 => number.clone().prop_map(|n| format!(r#""progress":{n}"#)),
            2 => number.prop_map(|n| format!(r#""total":{n}"#)),
            2 => message.prop_map(|m| format!(r#""message":{m}"#)),
            1 => prop_oneof![Just(r#""_meta":{}"#), Just(r#""progres":1"#), Just(r#""progress" :1"#), Just(r#" "total":1"#)]
                .prop_map(str::to_owned),
        ];
        (prop::collection::vec(member, 0..6), any::<bool>()).prop_map(|(members, close)| {
            format!("{{{}{}", members.join(","), if close { "}" } else { "" })
        })
    }

    /// The hand reader against serde's typed parse: where it reads, serde's parse of the
    /// extent gives an equal value and the extent is one JSON value (serde's parse of the
    /// text after it starts there); from bytes and from text alike.
    fn assert_reads_as_serde(text: &str, after: &str) -> Result<(), TestCaseError> {
        let whole = format!("{text}{after}");
        let by_text = ProgressParams::read_compact(Input::Text(&whole), 0);
        let by_bytes = ProgressParams::read_compact(Input::Bytes(whole.as_bytes()), 0);
        prop_assert_eq!(&by_text, &by_bytes);
        let Some((read, len)) = by_text else {
            return Ok(());
        };
        let serde: ProgressParams = serde_json::from_str(&whole[..len])
            .map_err(|e| TestCaseError::fail(format!("{} read, serde: {e}", &whole[..len])))?;
        prop_assert_eq!(read, serde);
        prop_assert_eq!(
            crate::jsonrpc::raw_json::locate(whole.as_bytes()),
            Some(len)
        );
        Ok(())
    }

    proptest! {
        #[test]
        fn reads_what_serde_reads(text in params_text(), after in prop_oneof![Just(""), Just("}"), Just(",\"jsonrpc\":\"2.0\"}")]) {
            assert_reads_as_serde(&text, after)?;
        }
    }

    /// The reader does read the forms the SDKs write (so the property compares two readers).
    #[test]
    fn reads_the_sdks_forms() {
        let read = |t: &str| ProgressParams::read_compact(Input::Text(t), 0);
        let params =
            r#"{"progressToken":7,"progress":3,"total":100,"message":"Processed 3 of 100 items"}"#;
        let (p, len) = read(&format!("{params}}}")).unwrap();
        assert_eq!(len, params.len());
        assert_eq!((p.progress, p.total), (3.0, Some(100.0)));
        assert_eq!(p.message.as_deref(), Some("Processed 3 of 100 items"));
        assert_eq!(p.progress_token, crate::jsonrpc::Id::from(7));
        assert!(read(r#"{"progress":1,"progressToken":"abc-1"}"#).is_some());
        for other in [
            r#"{"progressToken":7,"progress":0.5}"#,
            r#"{"progressToken":7,"progress":1,"progress":2}"#,
            r#"{"progressToken":7}"#,
            r#"{"progressToken":7, "progress":1}"#,
            r#"{"progressToken":7,"progress":1,"message":"a\"b"}"#,
            r#"{"progressToken":7,"progress":1,"total":null}"#,
            r#"{"progressToken":7,"progress":1,"_meta":{}}"#,
            r#"{"progressToken":7,"progress":1"#,
            r#"{}"#,
        ] {
            assert!(read(other).is_none(), "{other}");
        }
    }
}
