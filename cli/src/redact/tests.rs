use serde_json::json;

use super::*;

const CANARY: &str = "canary-5ecr3t-value";

fn masked(input: &str) -> String {
    let out = text(input).into_owned();
    assert!(!out.contains(CANARY), "{input:?} → {out:?}");
    out
}

#[test]
fn urls_lose_userinfo_and_secret_query_values() {
    assert_eq!(
        masked(&format!(
            "https://alice:{CANARY}@example.com/mcp?token={CANARY}&page=2"
        )),
        "https://***@example.com/mcp?token=***&page=2"
    );
    assert_eq!(
        masked(&format!(
            "cannot reach http://h:1/mcp?api_key={CANARY}: refused"
        )),
        "cannot reach http://h:1/mcp?api_key=***: refused"
    );
    assert_eq!(
        masked(&format!("http://h/cb#access_token={CANARY}&state=s")),
        "http://h/cb#access_token=***&state=s"
    );
    // Nothing secret: borrowed, unchanged.
    assert!(matches!(
        text("http://127.0.0.1:8080/mcp?page=2"),
        Cow::Borrowed(_)
    ));
}

#[test]
fn json_members_are_masked_in_any_framing() {
    for key in [
        "access_token",
        "refresh_token",
        "password",
        "apiKey",
        "token",
        "secret",
        "client_secret",
        "authorization",
        "X-Api-Key",
    ] {
        let plain = format!(r#"{{"jsonrpc":"2.0","result":{{"{key}": "{CANARY}","n":1}}}}"#);
        assert_eq!(
            masked(&plain),
            format!(r#"{{"jsonrpc":"2.0","result":{{"{key}": "***","n":1}}}}"#)
        );
        // As an SSE data line, in an error message, escaped inside a JSON string.
        masked(&format!("data: {plain}"));
        masked(&format!("error: the server said {plain} (code 3)"));
        let escaped = serde_json::to_string(&plain).unwrap();
        masked(&format!(r#"{{"text": {escaped}}}"#));
    }
    // A number or boolean under a secret name.
    assert_eq!(
        masked(r#"{"pin":1,"password":12345}"#),
        r#"{"pin":1,"password":***}"#
    );
    // Protocol fields that contain the word are kept.
    let kept = r#"{"progressToken":"p-1","maxTokens":100,"nextCursor":"c2"}"#;
    assert_eq!(text(kept), kept);
}

#[test]
fn credentials_pairs_and_header_lines() {
    assert_eq!(
        masked(&format!("Authorization: Bearer {CANARY}")),
        "Authorization: ***"
    );
    assert_eq!(
        masked(&format!("sent Bearer {CANARY} and basic {CANARY}x")),
        "sent Bearer *** and basic ***"
    );
    assert_eq!(
        masked(&format!(
            "> x-api-key: {CANARY}\n< set-cookie: sid={CANARY}\n< content-type: text/plain"
        )),
        "> x-api-key: ***\n< set-cookie: ***\n< content-type: text/plain"
    );
    assert_eq!(
        masked(&format!(
            "grant_type=refresh_token&refresh_token={CANARY}&client_id=c"
        )),
        "grant_type=refresh_token&refresh_token=***&client_id=c"
    );
    // Words that only look alike.
    assert_eq!(text("unbearable: yes"), "unbearable: yes");
    assert_eq!(text("mcp-session-id: s-1"), "mcp-session-id: s-1");
    // An error message labelled `OAuth:` keeps its text; only the secrets in it go.
    assert_eq!(
        masked(&format!(
            "OAuth: authorization failed: no authorization redirect reached \
             http://127.0.0.1:1/callback?code={CANARY} within 2s"
        )),
        "OAuth: authorization failed: no authorization redirect reached \
         http://127.0.0.1:1/callback?code=*** within 2s"
    );
}

#[test]
fn registered_values_are_masked_anywhere() {
    let lookup = registering_lookup(|name| match name {
        "MY_API_KEY" => Some("k-registered-0001".to_owned()),
        "HOME" => Some("/home/someone".to_owned()),
        _ => None,
    });
    assert_eq!(lookup("MY_API_KEY").as_deref(), Some("k-registered-0001"));
    assert_eq!(lookup("HOME").as_deref(), Some("/home/someone"));
    assert_eq!(
        text("GET https://h/k-registered-0001/mcp failed"),
        "GET https://h/***/mcp failed"
    );
    // A variable with an ordinary name is not a secret.
    assert_eq!(text("in /home/someone"), "in /home/someone");
}

#[test]
fn headers_and_json_values() {
    assert_eq!(header("Authorization", "Bearer x"), MASK);
    assert_eq!(header("Cookie", "a=b"), MASK);
    assert_eq!(header("Set-Cookie", "a=b"), MASK);
    assert_eq!(header("X-Goog-Api-Key", "k"), MASK);
    assert_eq!(header("X-Auth-Token", "k"), MASK);
    assert_eq!(header("Mcp-Session-Id", "s-1"), "s-1");
    assert_eq!(
        header("Content-Type", "application/json"),
        "application/json"
    );

    let mut v = json!({
        "params": {
            "arguments": { "apiKey": "k-123", "text": "hello", "access_token": "t" },
            "env": { "HOME": "/root" },
            "headers": { "Authorization": "Bearer abc", "Accept": "text/plain" },
            "note": "use Bearer sekrit please",
            "url": format!("https://u:{CANARY}@h/?token={CANARY}"),
        }
    });
    json(&mut v);
    assert_eq!(
        v,
        json!({
            "params": {
                "arguments": { "apiKey": MASK, "text": "hello", "access_token": MASK },
                "env": { "HOME": MASK },
                "headers": { "Authorization": MASK, "Accept": "text/plain" },
                "note": "use Bearer *** please",
                "url": "https://***@h/?token=***",
            }
        })
    );
}

#[test]
fn secret_names() {
    assert!(!is_secret_key("text"));
    assert!(!is_secret_key("progressToken"));
    assert!(!is_secret_key("maxTokens"));
    assert!(is_secret_key("X-Api-Key"));
    assert!(is_secret_name("KEY"));
    assert!(is_secret_name("GITHUB_TOKEN"));
    assert!(!is_secret_name("PATH"));
    assert!(!is_secret_name("Mcp-Session-Id"));
}

#[test]
fn quoted_urls_and_sentences_are_not_member_names() {
    let quoted = r#"server "http://***@h:1/mcp?token=***": HTTP configuration: invalid URL"#;
    assert_eq!(text(quoted), quoted);
    // The usage placeholder is not a secret.
    let usage = r#"error: expected key=value, got "hello"; Usage: mcp call <TOOL> [KEY=VALUE]... -e KEY=VALUE"#;
    assert_eq!(text(usage), usage);
    assert_eq!(text("key=sekrit"), "key=***");
    // A quoted secret-looking name followed by prose, not a JSON value: the config error
    // that names the missing variable stays readable.
    let prose = r#"server "gh": field "env.TOKEN": undefined variable GH_TOKEN"#;
    assert_eq!(text(prose), prose);
    // Styled text (a usage error painted by clap): the escape codes survive.
    assert_eq!(
        text("invalid value '\x1b[33mAuthorization Bearer sekrit\x1b[0m'"),
        "invalid value '\x1b[33mAuthorization Bearer ***\x1b[0m'"
    );
}

#[test]
fn never_panics_on_any_text() {
    // Multi-byte characters next to every character the rules look at, cut at every byte
    // boundary that is a char boundary.
    let pieces = [
        "\"", "\\", "\\\"", ":", "=", "@", "://", " ", "token", "Bearer ", "é", "–", "🎉", "{",
        "\n", "\x1b[0m", "&", "?", "#", "password", "a",
    ];
    let mut n = 0u64;
    for a in pieces {
        for b in pieces {
            for c in pieces {
                for d in ["\"", "é", "🎉\\", ":\""] {
                    let s = format!("{a}{b}{c}{d}{a}{c}");
                    for end in (0..=s.len()).filter(|&i| s.is_char_boundary(i)) {
                        let _ = text(&s[..end]);
                        n += 1;
                    }
                }
            }
        }
    }
    assert!(n > 10_000);
    let instructions = "# Server – instructions 🎉\n\"token\": \"x\" \\é \"password\":\"y🎉\"";
    assert!(!text(instructions).contains("y🎉"));
}

proptest::proptest! {
    #[test]
    fn any_text_is_masked_without_panicking_and_masking_is_stable(s in "\\PC{0,200}") {
        let once = text(&s).into_owned();
        let twice = text(&once).into_owned();
        proptest::prop_assert_eq!(once, twice);
    }

    #[test]
    fn json_like_text_never_panics(s in r#"[a-z"\\:=@/ ?&é🎉{}\[\],_-]{0,120}"#) {
        let _ = text(&s);
        let _ = text(&format!("{{\"token\": \"{s}\", \"x\": \"{s}\"}}"));
    }
}
