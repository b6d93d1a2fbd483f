//! The spellings of `notifications/progress` that the decoder's pass must read as serde's
//! typed parse does, for the tests of both sessions: the client session reading a server's
//! progress and the server session reading a client's. Each test feeds the same table through
//! the pass and through the general parse only and compares what comes out.

use std::fmt::Display;

/// Progress inputs about `token` (a request's progress token) and about other tokens:
/// canonical and TypeScript-SDK member orders, bad values, repeated members, extra members,
/// trailing text, a batch and a request named like the notification. Enough of them are valid
/// progress of `token` for a test to see at least five progress events.
pub(crate) fn progress_spellings(token: &dyn Display) -> Vec<String> {
    let canonical = r#"{"jsonrpc":"2.0","method":"notifications/progress","params":"#;
    // The TypeScript SDK's order: `jsonrpc` last.
    let (ts, ts_end) = (
        r#"{"method":"notifications/progress","params":"#,
        r#","jsonrpc":"2.0"}"#,
    );
    vec![
        format!(r#"{canonical}{{"progressToken":{token},"progress":1,"total":2,"message":"m"}}}}"#),
        format!(r#"{canonical}{{"progressToken":{token},"progress":"x"}}}}"#),
        format!(r#"{canonical}{{"progressToken":{token},"progress":1,"progress":2}}}}"#),
        format!(r#"{canonical}{{"progressToken":{token},"progress":1}},"id":5}}"#),
        format!(r#"{canonical}{{"progressToken":{token},"progress":1}},"x":1}}"#),
        format!(r#"{canonical}{{"progressToken":{token},"progress":1}}}} "#),
        format!(r#"{canonical}{{"progressToken":"nope","progress":1}}}}"#),
        format!(r#"{canonical}5}}"#),
        format!(r#"{canonical}{{"progressToken":{token},"progress":1}}}}}}"#),
        format!(r#"{canonical}{{"progressToken":{token},"progress":3}}  }}"#),
        format!(r#"{canonical}{{"progressToken":{token},"progress":2.5,"message":"\u00e9"}}}}"#),
        format!(r#"{canonical}{{"progressToken":{token},"progress":18446744073709551615}}}}"#),
        format!(r#"{canonical}{{"progressToken":{token},"progress":-1}}}}"#),
        format!(r#"{canonical}{{"progressToken":{token},"progress":1,"total":null}}}}"#),
        format!(r#"{ts}{{"progressToken":{token},"progress":4,"total":5}}{ts_end}"#),
        format!(r#"{ts}{{"progressToken":{token},"progress":"x"}}{ts_end}"#),
        format!(r#"{ts}{{"progressToken":{token},"progress":5}},"id":5{ts_end}"#),
        format!(r#"{ts}{{"progressToken":{token},"progress":5}},"jsonrpc":"1.0"}}"#),
        format!(r#"{ts}{{"progressToken":{token},"progress":5}}{ts_end} "#),
        format!(r#"{ts}{{"progressToken":{token},"progress":6}} {ts_end}"#),
        format!(r#"{ts}{{"progressToken":"nope","progress":1}}{ts_end}"#),
        format!(r#"{ts}{ts_end}"#),
        // A batch of two, and a request named like the notification.
        format!(
            r#"[{canonical}{{"progressToken":{token},"progress":7}}}},{canonical}{{"progressToken":{token},"progress":8}}}}]"#
        ),
        format!(
            r#"{{"jsonrpc":"2.0","id":7,"method":"notifications/progress","params":{{"progressToken":{token},"progress":9}}}}"#
        ),
    ]
}
