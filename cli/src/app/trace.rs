//! The `-v` wire trace: every message on stderr, one line each, secrets masked.

use std::sync::{Arc, Mutex};

use mcp_tokio::mcp_driver::WireDirection;
use serde_json::Value;

use super::ui::Ui;

/// How many characters of one message the trace shows.
const MAX_SHOWN: usize = 4000;
/// A received line longer than this without a newline is shown truncated and dropped.
const MAX_PENDING: usize = 1 << 20;

/// What replaces a secret.
pub const MASK: &str = "***";

/// Whether a key names a secret (headers, tokens, passwords, API keys).
pub fn is_secret_key(key: &str) -> bool {
    let k = key.to_ascii_lowercase().replace(['-', '_'], "");
    // Protocol fields that merely contain the word: a progress token, token counts.
    if k == "progresstoken" || k.ends_with("tokens") {
        return false;
    }
    [
        "authorization",
        "token",
        "secret",
        "password",
        "passwd",
        "apikey",
        "cookie",
        "credential",
        "privatekey",
    ]
    .iter()
    .any(|s| k.contains(s))
}

/// Masks secret values in a JSON value: values under secret keys, and every value of an
/// `env` (or `headers`) object.
pub fn mask_value(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                let lower = key.to_ascii_lowercase();
                if is_secret_key(key) && !v.is_object() && !v.is_array() {
                    *v = Value::String(MASK.into());
                } else if (lower == "env" || lower == "headers")
                    && let Value::Object(inner) = v
                {
                    for (k, iv) in inner.iter_mut() {
                        if lower == "env" || is_secret_key(k) {
                            *iv = Value::String(MASK.into());
                        }
                    }
                } else {
                    mask_value(v);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(mask_value),
        Value::String(s) => {
            if let Some(masked) = mask_bearer(s) {
                *s = masked;
            }
        }
        _ => {}
    }
}

/// `Bearer abc…` anywhere in a string becomes `Bearer ***`.
fn mask_bearer(s: &str) -> Option<String> {
    let at = s.to_ascii_lowercase().find("bearer ")?;
    let start = at + "bearer ".len();
    let end = s[start..]
        .find(|c: char| c.is_whitespace() || c == '"')
        .map_or(s.len(), |i| start + i);
    Some(format!("{}{MASK}{}", &s[..start], &s[end..]))
}

/// One traced message as printed: `-> {…}` sent, `<- {…}` received, masked, shortened.
pub fn trace_line(direction: WireDirection, message: &[u8]) -> String {
    let arrow = match direction {
        WireDirection::Sent => "->",
        _ => "<-",
    };
    let text = String::from_utf8_lossy(message);
    let text = text.trim_end_matches(['\r', '\n']);
    let shown = match serde_json::from_str::<Value>(text) {
        Ok(mut value) => {
            mask_value(&mut value);
            value.to_string()
        }
        Err(_) => mask_bearer(text).unwrap_or_else(|| text.to_owned()),
    };
    if shown.chars().count() > MAX_SHOWN {
        let cut: String = shown.chars().take(MAX_SHOWN).collect();
        format!("{arrow} {cut}… ({} bytes)", message.len())
    } else {
        format!("{arrow} {shown}")
    }
}

/// Masks `KEY=VALUE` pairs for the trace of a server's start.
pub fn masked_pairs(pairs: &[(String, String)], sep: &str) -> String {
    pairs
        .iter()
        .map(|(k, _)| format!("{k}{sep}{MASK}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The tap handed to the client: sent bytes are whole messages, received bytes are split
/// into lines here.
pub fn tap(ui: &Ui) -> impl Fn(WireDirection, &[u8]) + Send + Sync + 'static {
    let ui = ui.clone();
    let pending = Arc::new(Mutex::new(Vec::<u8>::new()));
    move |direction, bytes| match direction {
        WireDirection::Sent => ui.note(&trace_line(direction, bytes)),
        _ => {
            let mut buf = pending.lock().unwrap_or_else(|e| e.into_inner());
            buf.extend_from_slice(bytes);
            while let Some(nl) = buf.iter().position(|&b| b == b'\n') {
                let line: Vec<u8> = buf.drain(..=nl).collect();
                if line.iter().any(|b| !b.is_ascii_whitespace()) {
                    ui.note(&trace_line(direction, &line));
                }
            }
            if buf.len() > MAX_PENDING {
                ui.note(&trace_line(direction, &buf));
                buf.clear();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn masks_secrets_but_keeps_the_rest() {
        let mut v = json!({
            "params": {
                "arguments": { "apiKey": "k-123", "text": "hello", "access_token": "t" },
                "env": { "HOME": "/root" },
                "headers": { "Authorization": "Bearer abc", "Accept": "text/plain" },
                "note": "use Bearer sekrit please"
            }
        });
        mask_value(&mut v);
        assert_eq!(
            v,
            json!({
                "params": {
                    "arguments": { "apiKey": MASK, "text": "hello", "access_token": MASK },
                    "env": { "HOME": MASK },
                    "headers": { "Authorization": MASK, "Accept": "text/plain" },
                    "note": "use Bearer *** please"
                }
            })
        );
    }

    #[test]
    fn trace_lines() {
        assert_eq!(
            trace_line(WireDirection::Sent, b"{\"id\":1,\"token\":\"x\"}\n"),
            r#"-> {"id":1,"token":"***"}"#
        );
        assert_eq!(
            trace_line(WireDirection::Received, b"not json Bearer zzz\n"),
            "<- not json Bearer ***"
        );
        let long = format!("\"{}\"", "a".repeat(5000));
        let line = trace_line(WireDirection::Received, long.as_bytes());
        assert!(line.ends_with("… (5002 bytes)"), "{line}");
        assert_eq!(masked_pairs(&[("A".into(), "1".into())], "="), "A=***");
        assert!(!is_secret_key("text"));
        assert!(!is_secret_key("progressToken"));
        assert!(!is_secret_key("maxTokens"));
        assert!(is_secret_key("X-Api-Key"));
    }
}
