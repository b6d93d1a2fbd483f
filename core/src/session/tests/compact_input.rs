//! The compact shortcut of `jsonrpc::decode` as the session sees it: the same inputs through
//! `Session::handle_message_str` (which takes the shortcut where it applies: compact
//! responses and notifications in any member order) and through `handle_message_general`
//! (serde's envelope parse only) must give the same events, transmits and completions.

use serde_json::json;

use super::*;
use crate::progress_spellings::progress_spellings;

const S: Duration = Duration::from_secs(1);

/// Feeds `inputs` one at a time through the text path (which may take the shortcut) or the
/// general decoder (which never does), `step` apart, with a marker event after each so that the
/// events of both runs line up input by input.
fn feed(h: &mut Harness, inputs: &[String], fast: bool, step: Option<Duration>) {
    for (n, text) in inputs.iter().enumerate() {
        if let Some(step) = step {
            h.advance(step);
        }
        if fast {
            h.session.handle_message_str(h.now, text);
        } else {
            h.session.handle_message_general(h.now, text.as_bytes());
        }
        h.drain();
        h.events.push(Event::Diagnostic(Diagnostic::NotJson {
            excerpt: format!("marker {n}"),
        }));
    }
}

/// Progress inputs, built from the token of one long call that asked for progress, through
/// the text path (`fast`) or the byte path: the events, what was sent (a timeout's
/// cancellation) and how many times the call completed.
fn progress_run(
    fast: bool,
    inputs: impl Fn(&serde_json::Value) -> Vec<String>,
) -> (String, Vec<serde_json::Value>, usize) {
    let opts = RequestOptions::new()
        .timeout(10 * S)
        .reset_timeout_on_progress(25 * S);
    let mut h = Harness::ready(config(), "2025-11-25");
    let r = h.send("tools/call", json!({"name": "long"}), opts);
    let token = h.sent.last().unwrap().1["params"]["_meta"]["progressToken"].clone();
    feed(&mut h, &inputs(&token), fast, Some(S));
    h.advance(30 * S);
    let sent = h.sent.iter().map(|(_, v)| v.clone()).collect();
    (format!("{:?}", h.events), sent, h.completions(r).len())
}

#[test]
fn canonical_progress_routes_as_the_general_parse_does() {
    let inputs = |token: &serde_json::Value| progress_spellings(token);
    let (fast, general) = (progress_run(true, inputs), progress_run(false, inputs));
    assert_eq!(fast, general);
    assert!(fast.0.matches("Progress").count() >= 4, "{}", fast.0);
}

/// Four `tools/list` requests, then the answers `inputs` builds from their wire ids, through
/// the text path (`fast`, which may take the shortcut) or the general parse: the events.
fn answers_run(fast: bool, inputs: &dyn Fn(&[Value]) -> Vec<String>) -> String {
    let mut h = Harness::ready(config(), "2025-11-25");
    let handles: Vec<_> = (0..4)
        .map(|_| h.send("tools/list", json!({}), RequestOptions::new()))
        .collect();
    let ids: Vec<_> = handles.iter().map(|r| h.wire_id(*r)).collect();
    feed(&mut h, &inputs(&ids), fast, None);
    format!("{:?}", h.events)
}

/// Both paths give the same events for the answers; all four requests complete, one with
/// the result whose strings hold brackets and quotes.
fn assert_answers_route_alike(inputs: impl Fn(&[Value]) -> Vec<String>) {
    let (fast, general) = (answers_run(true, &inputs), answers_run(false, &inputs));
    assert_eq!(fast, general);
    assert_eq!(fast.matches("Completed").count(), 4, "{fast}");
    assert!(fast.contains(r#"RawResult("{\"s\":\"}\\\"{]\""#), "{fast}");
}

#[test]
fn canonical_response_routes_as_the_general_parse_does() {
    let head = r#"{"jsonrpc":"2.0","id":"#;
    assert_answers_route_alike(|ids| {
        vec![
            format!(r#"{head}0{},"result":{{}}}}"#, ids[1]),
            // Brackets and quotes inside strings; a member after the result; not JSON at all
            // (nothing the shortcut takes).
            format!(
                r#"{head}{},"result":{{"s":"}}\"{{]","t":[{{"u":"\\"}}]}},"x":[]}}"#,
                ids[0]
            ),
            format!(r#"{head}{},"result":[{{}}],"error":null}}"#, ids[0]),
            format!(r#"{head}{},"result":{{"s":"\"}}"#, ids[0]),
            format!(r#"{head}{},"result":{{"s":"\}}"#, ids[0]),
            format!(r#"{head}{},"result":{{"s":"}}"#, ids[0]),
            format!(r#"{head}{},"result":[[]]]}}"#, ids[0]),
            format!(
                r#"{head}{},"result":{{"s":"}}\"{{]","t":[{{"u":"\\"}}]}}}}"#,
                ids[0]
            ),
            format!(r#"{head}{},"result":{{}},"x":1}}"#, ids[1]),
            format!(r#"{head}{},"result":{{}}}}}}"#, ids[1]),
            format!(r#"{head}{},"result":{{}} }}"#, ids[1]),
            format!(r#"{head}{}.0,"result":{{}}}}"#, ids[1]),
            format!(r#"{head}{},"result":}}"#, ids[1]),
            format!(r#"{head}18446744073709551616,"result":{{}}}}"#),
            format!(r#"{head}-1,"result":{{}}}}"#),
            format!(r#"{head}"x","result":{{}}}}"#),
            format!(r#"{head}{},"result":null}}"#, ids[0]),
            format!(r#"{head}99999,"result":1}}"#),
            format!(r#"{head}{},"result":[1,2]}}"#, ids[2]),
            format!(r#"{head}{},"error":{{"code":1,"message":"m"}}}}"#, ids[3]),
        ]
    });
}

#[test]
fn result_first_response_routes_as_the_general_parse_does() {
    let tail = r#","jsonrpc":"2.0","id":"#;
    assert_answers_route_alike(|ids| {
        vec![
            // Odd ids, more members (left to the general parse), whitespace, scalars (read).
            format!(r#"{{"result":{{}}{tail}0{}}}"#, ids[1]),
            format!(r#"{{"result":{{}}{tail}+{}}}"#, ids[1]),
            format!(r#"{{"result":{{}}{tail}{}.0}}"#, ids[1]),
            format!(r#"{{"result":{{}}{tail}"{}"}}"#, ids[1]),
            format!(r#"{{"result":{{}}{tail}18446744073709551616}}"#),
            format!(r#"{{"result":{{}}{tail}{},"x":1}}"#, ids[1]),
            format!(r#"{{"result":{{}},"x":1{tail}{}}}"#, ids[1]),
            format!(r#"{{"result":{{}}{tail}{} }}"#, ids[1]),
            format!(r#"{{"result": {{}}{tail}{}}}"#, ids[1]),
            format!(r#"{{"result":{{}}{tail}}}"#),
            r#"{"result":{"s":"}"#.to_owned(),
            format!(r#"{{"result":null{tail}{}}}"#, ids[1]),
            format!(r#"{{"result":{{}},"error":null{tail}{}}}"#, ids[1]),
            format!(r#"{{"result":{{}},"jsonrpc":"1.0","id":{}}}"#, ids[1]),
            format!(r#"{{"result":{{}}{tail}99999}}"#),
            // Taken: brackets and quotes inside strings, an array result.
            format!(
                r#"{{"result":{{"s":"}}\"{{]","t":[{{"u":"\\"}}]}}{tail}{}}}"#,
                ids[0]
            ),
            format!(r#"{{"result":[1,{{"a":[]}}]{tail}{}}}"#, ids[2]),
            format!(r#"{{"result":{{"tools":[]}}{tail}{}}}"#, ids[3]),
            // Answered already: the general path's diagnostic.
            format!(r#"{{"result":{{}}{tail}{}}}"#, ids[3]),
        ]
    });
}

#[test]
fn other_member_orders_and_repeated_members_route_as_the_general_parse_does() {
    assert_answers_route_alike(|ids| {
        vec![
            // Not taken: a member twice, one missing, another member; whitespace (taken).
            format!(
                r#"{{"jsonrpc":"2.0","jsonrpc":"2.0","id":{},"result":{{}}}}"#,
                ids[1]
            ),
            format!(
                r#"{{"jsonrpc":"2.0","id":{},"id":{},"result":{{}}}}"#,
                ids[1], ids[2]
            ),
            format!(
                r#"{{"jsonrpc":"2.0","id":{},"result":{{}},"result":[]}}"#,
                ids[1]
            ),
            format!(r#"{{"id":{},"result":{{}}}}"#, ids[1]),
            format!(r#"{{"jsonrpc":"2.0","result":{{}}}}"#),
            format!(r#"{{"id":{},"result":{{}},"jsonrpc":"2.0",}}"#, ids[1]),
            format!(r#"{{"id":{},"result":{{}},"jsonrpc":"2.0"}} "#, ids[1]),
            format!(r#"{{"id":{},"result":{{}},"jsonrpc":"2.0""#, ids[1]),
            format!(r#"{{"id":{},"method":"x","jsonrpc":"2.0"}}"#, ids[1]),
            // Read by the shortcut: the other orders.
            format!(
                r#"{{"id":{},"result":{{"s":"}}\"{{]","t":[{{"u":"\\"}}]}},"jsonrpc":"2.0"}}"#,
                ids[0]
            ),
            format!(r#"{{"id":{},"jsonrpc":"2.0","result":[1]}}"#, ids[1]),
            format!(r#"{{"result":{{}},"id":{},"jsonrpc":"2.0"}}"#, ids[2]),
            format!(r#"{{"jsonrpc":"2.0","result":{{}},"id":{}}}"#, ids[3]),
        ]
    });
}

/// An answer whose id can be read but whose result is not valid JSON (in either member
/// order, with brackets that close where the scan expects) completes its request at once on
/// both paths, and either way its reader learns the answer was unreadable: serde's parse
/// refuses the line (reported as not JSON) and salvage fails the request with
/// [`RequestError::unreadable_answer`]; the shortcut locates the result, hands it over
/// unvalidated, and its check fails ([`RawResult::is_json`]), which a client reports as that
/// same error. The later lines for the finished request are reported: as not JSON by
/// serde's parse, as stale answers by the shortcut.
#[test]
fn answer_that_is_not_json_completes_its_request_at_once_on_both_paths() {
    for result_first in [false, true] {
        let run = |fast: bool| {
            let mut h = Harness::ready(config(), "2025-11-25");
            let r = h.send("tools/call", json!({"name": "t"}), RequestOptions::new());
            let id = h.wire_id(r);
            let lines: Vec<String> = ["{\"a\":[1,\"\n\"]}", r#"{"a" 1}"#, "[1,]"]
                .iter()
                .map(|result| {
                    if result_first {
                        format!(r#"{{"result":{result},"jsonrpc":"2.0","id":{id}}}"#)
                    } else {
                        format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#)
                    }
                })
                .collect();
            feed(&mut h, &lines, fast, None);
            let c = h.completions(r);
            assert_eq!(c.len(), 1, "{:?}", h.events);
            let not_json = h
                .events
                .iter()
                .filter(|e| matches!(e, Event::Diagnostic(Diagnostic::NotJson { excerpt }) if !excerpt.starts_with("marker")))
                .count();
            let unreadable = match &c[0] {
                Ok(raw) => !raw.is_json() && raw.decode::<serde_json::Value>().is_err(),
                Err(e) => *e == RequestError::unreadable_answer(),
            };
            assert!(unreadable, "{:?}", c[0]);
            (c[0].is_ok(), not_json)
        };
        // The shortcut hands the located result over; serde's parse refuses all three lines.
        assert_eq!(run(true), (true, 0));
        assert_eq!(run(false), (false, 3));
    }
}

#[test]
fn progress_in_any_order_and_spacing_routes_as_the_general_parse_does() {
    let inputs = |t: &serde_json::Value| {
        let p = format!(r#"{{"progressToken":{t},"progress":1,"total":2,"message":"m"}}"#);
        let long = "x".repeat(5000);
        vec![
            // Progress, in other member orders and spacings.
            format!(r#"{{"method":"notifications/progress","params":{p},"jsonrpc":"2.0"}}"#),
            format!(r#"{{"params":{p},"method":"notifications/progress","jsonrpc":"2.0"}}"#),
            format!(
                r#" {{ "jsonrpc" : "2.0" ,	"method": "notifications/progress", "params": {p} }} "#
            ),
            format!(r#"{{"method":"notifications/progress","params":{p}}}"#),
            format!(r#"{{"method":"notifications/progress","params":{p},"x":[1,{{}}]}}"#),
            format!(r#"{{"method":"notifications/progress","jsonrpc":null,"params":{p}}}"#),
            // Not progress (another member, a bad version or params), or not a message.
            format!(r#"{{"method":"notifications/progress","params":{p},"id":7}}"#),
            format!(r#"{{"id":7,"method":"notifications/progress","params":{p}}}"#),
            format!(r#"{{"method":"notifications/progress","params":{p},"result":{{}}}}"#),
            format!(r#"{{"method":"notifications/progress","params":{p},"error":5}}"#),
            format!(r#"{{"method":"notifications/progress","params":{p},"jsonrpc":"1.0"}}"#),
            format!(r#"{{"method":"notifications/progr\u0065ss","params":{p}}}"#),
            format!(r#"{{"method":"notifications/progress","params":{{"progressToken":{t}}}}}"#),
            format!(r#"{{"method":"notifications/progress","method":"x","params":{p}}}"#),
            r#"{"method":"notifications/progress","params":null}"#.to_owned(),
            format!(r#"{{"method":"notifications/progress","params":{p},"pad":"{long}"}}"#),
            r#"{"method":"notifications/message","params":{"level":"info","data":"\"notifications/progress\""}}"#.to_owned(),
            format!(r#"[{{"method":"notifications/progress","params":{p}}}]"#),
            format!(r#"{{"method":"notifications/progress","params":{p}"#),
        ]
    };
    let (fast, general) = (progress_run(true, inputs), progress_run(false, inputs));
    assert_eq!(fast, general);
    assert!(fast.0.matches("Progress").count() >= 6, "{}", fast.0);
}

mod properties {
    use proptest::prelude::*;
    use serde_json::{Value, json};

    use super::*;

    /// Values whose strings hold the characters a scan of the result would have to skip:
    /// quotes, backslashes, brackets, braces, control characters (escaped by serde_json) and
    /// non-ASCII.
    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            r#"[a\\"{}\[\]:,\n\té]{0,40}"#.prop_map(Value::from),
        ];
        leaf.prop_recursive(4, 32, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::btree_map(r#"[a"\\}\]]{1,4}"#, inner, 0..4)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        /// Any answer that is valid JSON, its three members in any order (the result any
        /// value, with or without a member after it), is routed by the text path exactly as
        /// by the byte path.
        #[test]
        fn valid_answers_in_any_member_order_route_as_the_general_path_does(
            result in json_value(),
            after in proptest::option::of(json_value()),
            pretty in any::<bool>(),
            order in Just([0usize, 1, 2]).prop_shuffle(),
        ) {
            let text = |v: &Value| if pretty {
                serde_json::to_string_pretty(v).unwrap()
            } else {
                serde_json::to_string(v).unwrap()
            };
            let run = |fast: bool| {
                let mut h = Harness::ready(config(), "2025-11-25");
                let r = h.send("tools/call", json!({"name": "t"}), RequestOptions::new());
                let id = h.wire_id(r);
                let after = after.as_ref().map(|a| format!(r#","x":{}"#, text(a)));
                let members = [
                    r#""jsonrpc":"2.0""#.to_owned(),
                    format!(r#""id":{id}"#),
                    format!(r#""result":{}{}"#, text(&result), after.as_deref().unwrap_or("")),
                ];
                let members: Vec<&str> = order.iter().map(|&i| members[i].as_str()).collect();
                let line = format!("{{{}}}", members.join(","));
                feed(&mut h, &[line], fast, None);
                let completed = h.completions(r).len();
                (format!("{:?}", h.events), completed)
            };
            let (fast, general) = (run(true), run(false));
            prop_assert_eq!(&fast, &general);
            prop_assert_eq!(fast.1, 1);
        }
    }
}

/// A progress event carries the notification's params as the server wrote them (member
/// order, `1` not `1.0`), whichever path read it.
#[test]
fn progress_keeps_its_params_as_written_on_both_paths() {
    for fast in [true, false] {
        let opts = RequestOptions::new().timeout(10 * S);
        let mut h = Harness::ready(config(), "2025-11-25");
        let _ = h.send("tools/call", json!({"name": "long"}), opts.progress());
        let token = h.sent.last().unwrap().1["params"]["_meta"]["progressToken"].clone();
        let canonical = format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"progressToken":{token},"progress":1,"total":2}}}}"#
        );
        let ts = format!(
            r#"{{"method":"notifications/progress","params":{{"progress":2,"total":2.50,"progressToken":{token}}},"jsonrpc":"2.0"}}"#
        );
        feed(&mut h, &[canonical, ts], fast, None);
        let written: Vec<String> = h
            .events
            .iter()
            .filter_map(|e| match e {
                crate::session::Event::Progress { params, .. } => {
                    params.as_ref().map(|p| p.get().to_owned())
                }
                _ => None,
            })
            .collect();
        assert_eq!(
            written,
            [
                format!(r#"{{"progressToken":{token},"progress":1,"total":2}}"#),
                format!(r#"{{"progress":2,"total":2.50,"progressToken":{token}}}"#),
            ],
            "fast: {fast}"
        );
    }
}
