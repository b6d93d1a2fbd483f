//! The one redaction rule for everything `mcp` prints outside a result: error messages, hints,
//! warnings, server log lines and the `-v` / `-vv` trace.
//!
//! What is masked (replaced by [`MASK`]):
//!
//! - in URLs: the userinfo (`user:pass@` becomes `***@`) and the value of every query (or
//!   fragment) parameter whose name looks secret (`token`, `access_token`, `api_key`, `key`,
//!   `sig`, `code`, `password`, ...);
//! - headers whose name looks secret (`Authorization`, `Proxy-Authorization`, `Cookie`,
//!   `Set-Cookie`, any name with `token`, `key`, `secret`, `auth`, `password` in it);
//!   `Mcp-Session-Id` is kept (it identifies a session, it grants nothing on its own);
//! - JSON members whose name looks secret (`access_token`, `refresh_token`, `password`,
//!   `apiKey`, `token`, `secret`, `authorization`, `client_secret`, ...) inside any framing:
//!   a whole JSON value ([`json`]), or JSON found anywhere in a text ([`text`]), also when it
//!   is escaped inside a JSON string; every value of an `env` object and secret-named values
//!   of a `headers` object;
//! - `Bearer …` / `Basic …` credentials and `name=value` pairs with a secret name anywhere in
//!   a text;
//! - values registered as secret ([`register`]): the expansion of a `${VAR}` with a secret
//!   name in a config file, the value of a secret `--header`: masked wherever they appear.
//!
//! Names that merely contain a secret word but name protocol fields are kept:
//! `progressToken`, token counts (`maxTokens`, `*_tokens`), `nextCursor`.
//!
//! Results on stdout are never redacted: they are what the user asked the server for.

use std::borrow::Cow;
use std::sync::{Mutex, OnceLock};

use serde_json::Value;

/// What replaces a secret.
pub const MASK: &str = "***";

/// Registered secrets shorter than this are not masked as free text (they would mask digits
/// and short words everywhere); the rules by name still mask them.
const MIN_REGISTERED: usize = 4;

/// At most this many secrets are registered (a config file is small; this only bounds a
/// pathological one).
const MAX_REGISTERED: usize = 256;

fn registered() -> &'static Mutex<Vec<String>> {
    static SECRETS: OnceLock<Mutex<Vec<String>>> = OnceLock::new();
    SECRETS.get_or_init(|| Mutex::new(Vec::new()))
}

/// Remembers `value` as a secret: from now on [`text`] masks it wherever it appears. Call it
/// for every credential the user hands over indirectly (a `${VAR}` expanded into a config, a
/// header value), before anything that may quote it is printed.
pub fn register(value: &str) {
    let value = value.trim();
    if value.len() < MIN_REGISTERED {
        return;
    }
    // A poisoned lock only means a panic elsewhere mid-push; the list is still valid.
    let mut secrets = registered().lock().unwrap_or_else(|e| e.into_inner());
    if secrets.len() < MAX_REGISTERED && !secrets.iter().any(|s| s == value) {
        secrets.push(value.to_owned());
        // Longest first, so that a secret containing another is masked whole.
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
    }
}

/// Wraps the variable lookup of a config file's `${VAR}` expansion so that the value of every
/// variable with a secret-looking name ([`is_secret_name`]: `API_KEY`, `GITHUB_TOKEN`,
/// `DB_PASSWORD`, `KEY`, ...) is [`register`]ed as it is expanded.
pub fn registering_lookup(
    lookup: impl Fn(&str) -> Option<String>,
) -> impl Fn(&str) -> Option<String> {
    move |name| {
        let value = lookup(name)?;
        if is_secret_name(name) {
            register(&value);
        }
        Some(value)
    }
}

/// Whether a JSON member or environment variable name holds a secret.
pub fn is_secret_key(key: &str) -> bool {
    let k = key.to_ascii_lowercase().replace(['-', '_', '.'], "");
    // Protocol fields that merely contain the word: a progress token, token counts.
    if k == "progresstoken" || k.ends_with("tokens") || k == "nextcursor" {
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

/// Whether a header, query parameter or variable name holds a secret: [`is_secret_key`], or
/// any name with `key`, `auth`, `session` (except `Mcp-Session-Id`), a signature, or an
/// OAuth `code`.
pub fn is_secret_name(name: &str) -> bool {
    let k = name.to_ascii_lowercase().replace(['-', '_', '.'], "");
    if k == "mcpsessionid" || k == "keepalive" {
        return false;
    }
    is_secret_key(name)
        || k == "key"
        || k.ends_with("key")
        || k.contains("apikey")
        || k.contains("auth")
        || k.contains("session")
        || k == "sig"
        || k == "signature"
        || k == "code"
        || k == "pass"
        || k == "pwd"
}

/// A header value as it may be printed: masked when the name looks secret.
pub fn header<'a>(name: &str, value: &'a str) -> Cow<'a, str> {
    if is_secret_name(name) {
        Cow::Borrowed(MASK)
    } else {
        match text(value) {
            Cow::Borrowed(_) => Cow::Borrowed(value),
            Cow::Owned(s) => Cow::Owned(s),
        }
    }
}

/// Masks secret values in a JSON value: values under secret keys, every value of an `env`
/// object, secret-named values of a `headers` object, and [`text`] rules inside strings
/// (a URL with a token, an embedded JSON document).
pub fn json(value: &mut Value) {
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
                        if lower == "env" || is_secret_name(k) {
                            *iv = Value::String(MASK.into());
                        } else {
                            json(iv);
                        }
                    }
                } else {
                    json(v);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(json),
        Value::String(s) => {
            if let Cow::Owned(masked) = text(s) {
                *s = masked;
            }
        }
        _ => {}
    }
}

/// A URL as it may be printed: userinfo masked, secret query and fragment values masked,
/// registered values masked (the same rules as [`text`], owned for a format string).
pub fn url(raw: &str) -> String {
    text(raw).into_owned()
}

/// Masks every secret this module knows how to find in free text: URLs (userinfo), `name=value`
/// pairs with a secret name (query strings, form bodies), secret JSON members (plain or
/// escaped), `Bearer` / `Basic` credentials, `Authorization:`-style header lines and
/// registered values. Borrows when nothing was masked.
pub fn text(input: &str) -> Cow<'_, str> {
    let mut s = Cow::Borrowed(input);
    apply(&mut s, mask_registered);
    apply(&mut s, mask_userinfo);
    apply(&mut s, mask_json_members);
    apply(&mut s, mask_pairs);
    apply(&mut s, mask_schemes);
    apply(&mut s, mask_header_lines);
    s
}

/// Runs one masking pass, keeping the borrow when it changed nothing.
fn apply(s: &mut Cow<'_, str>, pass: fn(&str) -> Option<String>) {
    if let Some(changed) = pass(s) {
        *s = Cow::Owned(changed);
    }
}

/// Every [`register`]ed value → [`MASK`].
fn mask_registered(s: &str) -> Option<String> {
    let secrets = registered().lock().unwrap_or_else(|e| e.into_inner());
    let mut out: Option<String> = None;
    for secret in secrets.iter() {
        let current = out.as_deref().unwrap_or(s);
        if current.contains(secret.as_str()) {
            out = Some(current.replace(secret.as_str(), MASK));
        }
    }
    out
}

/// `scheme://user:pass@host` → `scheme://***@host`.
fn mask_userinfo(s: &str) -> Option<String> {
    let mut out = String::new();
    let mut rest = s;
    let mut changed = false;
    while let Some(at) = rest.find("://") {
        let start = at + 3;
        let authority_end = rest[start..]
            .find(|c: char| {
                matches!(c, '/' | '?' | '#') || c.is_whitespace() || "\"'<>`".contains(c)
            })
            .map_or(rest.len(), |i| start + i);
        out.push_str(&rest[..start]);
        let authority = &rest[start..authority_end];
        match authority.rfind('@') {
            Some(i) if authority[..i] != *MASK => {
                out.push_str(MASK);
                out.push_str(&authority[i..]);
                changed = true;
            }
            _ => out.push_str(authority),
        }
        rest = &rest[authority_end..];
    }
    out.push_str(rest);
    changed.then_some(out)
}

/// Finds the end of a quoted string that starts right after `open` (`"` or `\"`): the index
/// of the closing quote sequence.
fn string_end(s: &str, from: usize, quote: &str) -> Option<usize> {
    // Bytes, not chars: the quote and the backslash are ASCII, so every index returned is a
    // char boundary, and stepping over an escape never slices inside a character.
    let bytes = s.as_bytes();
    let quote = quote.as_bytes();
    let mut i = from;
    while i < bytes.len() {
        if bytes[i..].starts_with(quote) {
            return Some(i);
        }
        // Skip an escaped character (for a plain quote); inside an escaped string (`\"`),
        // an escaped backslash is `\\\\`.
        if bytes[i] == b'\\' && (quote == b"\"" || bytes[i..].starts_with(b"\\\\")) {
            i += 2;
            continue;
        }
        i += 1;
    }
    None
}

/// `"secretName": "value"` (or `\"secretName\": \"value\"` inside a JSON string, at any
/// depth) → `"secretName": "***"`; a non-string scalar value is replaced too.
fn mask_json_members(s: &str) -> Option<String> {
    if !s.contains('"') {
        return None;
    }
    let mut out = String::with_capacity(s.len());
    let mut copied = 0;
    let mut i = 0;
    let mut changed = false;
    while let Some(q) = s[i..].find('"').map(|q| i + q) {
        let escaped = q > 0 && s.as_bytes()[q - 1] == b'\\';
        let quote = if escaped { "\\\"" } else { "\"" };
        let Some(key_end) = string_end(s, q + 1, quote) else {
            break;
        };
        let key = &s[q + 1..key_end];
        let mut j = key_end + quote.len();
        i = j;
        // A member name: a short identifier (`access_token`, `X-Api-Key`, `$password`), not
        // a quoted URL or sentence that merely mentions a token.
        let name_like = !key.is_empty()
            && key.len() <= 64
            && key.bytes().all(|b| {
                b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b'$' | b'@')
            });
        if !(name_like && is_secret_key(key)) {
            // Not a secret member name (or a string value): JSON escaped inside it is
            // searched too; then carry on after it, so its text is not taken for keys.
            if !escaped
                && key.contains("\\\"")
                && let Some(inner) = mask_json_members(key)
            {
                out.push_str(&s[copied..q + 1]);
                out.push_str(&inner);
                copied = key_end;
                changed = true;
            }
            continue;
        }
        j += s[j..].len() - s[j..].trim_start().len();
        if !s[j..].starts_with(':') {
            continue;
        }
        j += 1;
        j += s[j..].len() - s[j..].trim_start().len();
        let rest = &s[j..];
        let (start, end) = if rest.starts_with(quote) {
            match string_end(s, j + quote.len(), quote) {
                Some(e) => (j + quote.len(), e),
                None => (j + quote.len(), s.len()),
            }
        } else if rest.starts_with('{') || rest.starts_with('[') || rest.is_empty() {
            continue;
        } else {
            let len = rest
                .find(|c: char| matches!(c, ',' | '}' | ']' | '\\') || c.is_whitespace())
                .unwrap_or(rest.len());
            // A bare JSON value is a number or a literal; anything else (`"field": undefined
            // variable X` in an error message) is prose, not a member.
            let bare = &rest[..len];
            let json_scalar = matches!(bare, "true" | "false" | "null")
                || bare.parse::<f64>().is_ok()
                    && bare.starts_with(|c: char| c == '-' || c.is_ascii_digit());
            if !json_scalar {
                continue;
            }
            (j, j + len)
        };
        if &s[start..end] != MASK {
            out.push_str(&s[copied..start]);
            out.push_str(MASK);
            copied = end;
            changed = true;
        }
        i = end
            + if end < s.len() && rest.starts_with(quote) {
                quote.len()
            } else {
                0
            };
    }
    changed.then(|| {
        out.push_str(&s[copied..]);
        out
    })
}

/// `secret_name=value` → `secret_name=***` (query strings, form bodies, `KEY=value`).
fn mask_pairs(s: &str) -> Option<String> {
    let mut out = String::with_capacity(s.len());
    let mut copied = 0;
    let mut changed = false;
    let bytes = s.as_bytes();
    for (eq, _) in s.match_indices('=') {
        let name_start = s[..eq]
            .char_indices()
            .rev()
            .find(|&(_, c)| {
                !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '[' | ']'))
            })
            // After that character (it may be several bytes long).
            .map_or(0, |(i, c)| i + c.len_utf8());
        // A long run before `=` is base64 padding or the like, not a parameter name.
        if name_start == eq || eq < copied || eq - name_start > 64 {
            continue;
        }
        let name = s[name_start..eq].trim_end_matches(['[', ']']);
        if !is_secret_name(name) {
            continue;
        }
        let mut value_end = s[eq + 1..]
            .find(|c: char| {
                matches!(
                    c,
                    '&' | '#' | ',' | ';' | '"' | '\'' | '`' | '<' | '>' | ')' | '\x1b'
                ) || c.is_whitespace()
            })
            .map_or(s.len(), |i| eq + 1 + i);
        // Punctuation that ends a sentence is not part of the value (`?token=x: refused`).
        while value_end > eq + 2 && s[..value_end].ends_with([':', '.', '!', '?']) {
            value_end -= 1;
        }
        if value_end == eq + 1 || &s[eq + 1..value_end] == MASK || bytes.get(eq + 1) == Some(&b'=')
        {
            continue;
        }
        // The usage placeholder `key=value` / `[KEY=VALUE]...` is text about arguments, not a
        // credential: masking it would rewrite the help and the errors that quote it.
        if s[eq + 1..value_end]
            .trim_end_matches(['.', ']'])
            .eq_ignore_ascii_case("value")
        {
            continue;
        }
        out.push_str(&s[copied..eq + 1]);
        out.push_str(MASK);
        copied = value_end;
        changed = true;
    }
    changed.then(|| {
        out.push_str(&s[copied..]);
        out
    })
}

/// `Bearer abc` / `Basic abc` (any case) → `Bearer ***`.
fn mask_schemes(s: &str) -> Option<String> {
    let lower = s.to_ascii_lowercase();
    let mut ranges: Vec<(usize, usize)> = Vec::new();
    for scheme in ["bearer ", "basic "] {
        for (at, _) in lower.match_indices(scheme) {
            // A word on its own: `Bearer`, not `unbearable`.
            if at > 0 && lower.as_bytes()[at - 1].is_ascii_alphanumeric() {
                continue;
            }
            let start = at + scheme.len();
            let end = s[start..]
                .find(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | ',' | '\\' | '\x1b'))
                .map_or(s.len(), |i| start + i);
            if end > start && &s[start..end] != MASK {
                ranges.push((start, end));
            }
        }
    }
    replace_ranges(s, ranges)
}

/// `s` with every range (sorted here; overlapping ones merged) replaced by [`MASK`].
fn replace_ranges(s: &str, mut ranges: Vec<(usize, usize)>) -> Option<String> {
    if ranges.is_empty() {
        return None;
    }
    ranges.sort_unstable();
    let mut out = String::with_capacity(s.len());
    let mut copied = 0;
    for (start, end) in ranges {
        if start < copied {
            copied = copied.max(end);
            continue;
        }
        out.push_str(&s[copied..start]);
        out.push_str(MASK);
        copied = end;
    }
    out.push_str(&s[copied..]);
    Some(out)
}

/// `Authorization: xyz`, `Cookie: …`, `X-Api-Key: …` lines (also after a trace's `> ` or
/// `< `) → value masked.
fn mask_header_lines(s: &str) -> Option<String> {
    let mut out = String::with_capacity(s.len());
    let mut changed = false;
    for line in s.split_inclusive('\n') {
        let body = line.trim_end_matches(['\n', '\r']);
        let ending = &line[body.len()..];
        let trimmed = body.trim_start();
        let indent = &body[..body.len() - trimmed.len()];
        // An optional trace prefix (`> ` / `< `) before the header.
        let (prefix, field) = match trimmed.split_once(' ') {
            Some((p, f)) if matches!(p, ">" | "<") => (&trimmed[..p.len() + 1], f),
            _ => ("", trimmed),
        };
        match field.split_once(':') {
            Some((name, value))
                if !name.is_empty()
                    && name
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
                    && is_secret_name(name)
                    // `OAuth: …` labels a message about the login (`OAuth: authorization
                    // failed: …`), it is no header; secrets inside it are masked by the
                    // other rules.
                    && !name.eq_ignore_ascii_case("oauth")
                    && value.trim() != MASK
                    && !value.trim().is_empty()
                    && !value.starts_with("//") =>
            {
                out.push_str(indent);
                out.push_str(prefix);
                out.push_str(name);
                out.push_str(": ");
                out.push_str(MASK);
                out.push_str(ending);
                changed = true;
            }
            _ => out.push_str(line),
        }
    }
    changed.then_some(out)
}

#[cfg(test)]
mod tests;
