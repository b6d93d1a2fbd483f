//! `WWW-Authenticate` challenges (RFC 9110 §11.6.1), and the Bearer view MCP authorization reads.
//!
//! ```text
//! WWW-Authenticate = #challenge
//! challenge        = auth-scheme [ 1*SP ( token68 / #auth-param ) ]
//! auth-param       = token BWS "=" BWS ( token / quoted-string )
//! token68          = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="
//! ```
//!
//! One header value may hold several challenges, and a response may have several headers; the
//! parser reads them all in order. It never panics: on the first thing that does not fit the
//! grammar it stops reading that header value and keeps what it had parsed before.

use crate::http::headers::{HeaderList, WWW_AUTHENTICATE};
pub use crate::transport_error::{BearerChallenge, Challenge};

/// The first Bearer challenge in `challenges`, if any.
pub fn find_bearer(challenges: &[Challenge]) -> Option<BearerChallenge<'_>> {
    challenges.iter().find_map(Challenge::bearer)
}

/// Parses every `WWW-Authenticate` field of `headers`, in order.
pub fn parse_challenges(headers: &HeaderList) -> Vec<Challenge> {
    let mut out = Vec::new();
    for value in headers.get_all(WWW_AUTHENTICATE) {
        parse_into(value, &mut out);
    }
    out
}

/// Parses one `WWW-Authenticate` field value into its challenges. On malformed input it returns
/// the challenges (and parameters) parsed before the first error.
pub fn parse_www_authenticate(value: &str) -> Vec<Challenge> {
    let mut out = Vec::new();
    parse_into(value, &mut out);
    out
}

fn parse_into(value: &str, out: &mut Vec<Challenge>) {
    let mut p = Parser {
        s: value.as_bytes(),
        pos: 0,
    };
    // `None` means a syntax error: stop, keeping what is in `out` already.
    let _ = p.challenges(out);
}

fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

fn is_token68_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"-._~+/".contains(&b)
}

struct Parser<'a> {
    s: &'a [u8],
    pos: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.pos).copied()
    }

    fn skip_ows(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.pos += 1;
        }
    }

    fn skip_ows_and_commas(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b',')) {
            self.pos += 1;
        }
    }

    /// Takes a (possibly empty) run of bytes matching `f`. The grammar only ever stops a run at
    /// an ASCII byte, so the slice boundaries are char boundaries.
    fn take_while(&mut self, f: impl Fn(u8) -> bool) -> &str {
        let start = self.pos;
        while self.peek().is_some_and(&f) {
            self.pos += 1;
        }
        // Runs contain only ASCII bytes, so this cannot fail; fall back to "" regardless.
        std::str::from_utf8(&self.s[start..self.pos]).unwrap_or_default()
    }

    fn at_end_or_comma(&self) -> bool {
        matches!(self.peek(), None | Some(b','))
    }

    fn challenges(&mut self, out: &mut Vec<Challenge>) -> Option<()> {
        loop {
            self.skip_ows_and_commas();
            if self.peek().is_none() {
                return Some(());
            }
            let scheme = self.take_while(is_tchar).to_owned();
            if scheme.is_empty() {
                return None;
            }
            out.push(Challenge {
                scheme,
                ..Challenge::default()
            });
            // `out` has at least the element just pushed.
            let current = out.last_mut()?;
            let spaces = self.pos;
            self.skip_ows();
            if self.at_end_or_comma() {
                continue;
            }
            if self.pos == spaces {
                // The scheme must be followed by a space before its token68 or params.
                return None;
            }
            if let Some(t) = self.token68() {
                current.token68 = Some(t);
                continue;
            }
            self.params(current)?;
        }
    }

    /// A token68 standing alone (followed by the end, or a comma); otherwise rewinds.
    fn token68(&mut self) -> Option<String> {
        let start = self.pos;
        let body = self.take_while(is_token68_char).len();
        self.take_while(|b| b == b'=');
        let end = self.pos;
        self.skip_ows();
        if body > 0 && self.at_end_or_comma() {
            // Only ASCII was taken, see `take_while`.
            return std::str::from_utf8(&self.s[start..end])
                .ok()
                .map(str::to_owned);
        }
        self.pos = start;
        None
    }

    /// Auth-params up to the next challenge or the end of the value.
    fn params(&mut self, current: &mut Challenge) -> Option<()> {
        loop {
            let name = self.take_while(is_tchar).to_owned();
            if name.is_empty() {
                return None;
            }
            self.skip_ows();
            if self.peek() != Some(b'=') {
                return None;
            }
            self.pos += 1;
            self.skip_ows();
            let value = if self.peek() == Some(b'"') {
                self.quoted_string()?
            } else {
                let v = self.take_while(is_tchar);
                if v.is_empty() {
                    return None;
                }
                v.to_owned()
            };
            current.params.push((name, value));
            self.skip_ows();
            if !self.at_end_or_comma() {
                return None;
            }
            // After commas, another `name=` continues this challenge; anything else starts the
            // next challenge (or is the end).
            let before = self.pos;
            self.skip_ows_and_commas();
            if !self.at_param_start() {
                self.pos = before;
                return Some(());
            }
        }
    }

    /// Whether a `token BWS "="` starts here (a parameter, not a new challenge's scheme).
    fn at_param_start(&mut self) -> bool {
        let start = self.pos;
        let name = self.take_while(is_tchar).len();
        self.skip_ows();
        let is_param = name > 0 && self.peek() == Some(b'=');
        self.pos = start;
        is_param
    }

    fn quoted_string(&mut self) -> Option<String> {
        self.pos += 1; // the opening quote
        let mut value = Vec::new();
        loop {
            match self.peek()? {
                b'"' => {
                    self.pos += 1;
                    // Bytes are copied in order (an escape drops only the backslash), so valid
                    // UTF-8 stays valid; lossy conversion only matters for broken input.
                    return Some(String::from_utf8_lossy(&value).into_owned());
                }
                b'\\' => {
                    self.pos += 1;
                    value.push(self.peek()?);
                    self.pos += 1;
                }
                b => {
                    value.push(b);
                    self.pos += 1;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ch(scheme: &str, token68: Option<&str>, params: &[(&str, &str)]) -> Challenge {
        Challenge {
            scheme: scheme.into(),
            token68: token68.map(Into::into),
            params: params
                .iter()
                .map(|(n, v)| ((*n).into(), (*v).into()))
                .collect(),
        }
    }

    #[test]
    fn bearer_with_quoted_params() {
        let c = parse_www_authenticate(
            r#"Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource", scope="files:read files:write""#,
        );
        assert_eq!(c.len(), 1);
        let b = c[0].bearer().unwrap();
        assert_eq!(
            b.resource_metadata(),
            Some("https://mcp.example.com/.well-known/oauth-protected-resource")
        );
        assert_eq!(b.scope(), Some(vec!["files:read", "files:write"]));
        assert_eq!(b.error(), None);
    }

    #[test]
    fn insufficient_scope_step_up() {
        let c = parse_www_authenticate(
            r#"Bearer error="insufficient_scope", scope="a b", error_description="needs \"b\"", realm=mcp"#,
        );
        let b = find_bearer(&c).unwrap();
        assert_eq!(b.error(), Some("insufficient_scope"));
        assert_eq!(b.error_description(), Some(r#"needs "b""#));
        assert_eq!(b.realm(), Some("mcp"));
        assert_eq!(b.scope(), Some(vec!["a", "b"]));
    }

    #[test]
    fn scheme_and_param_names_are_case_insensitive() {
        let c = parse_www_authenticate(r#"BEARER Realm="x""#);
        assert!(c[0].is_scheme("bearer"));
        assert_eq!(c[0].bearer().unwrap().realm(), Some("x"));
        assert_eq!(c[0].param("REALM"), Some("x"));
    }

    #[test]
    fn several_challenges_in_one_header() {
        let c = parse_www_authenticate(
            r#"Newauth realm="apps", type=1, title="Login to \"apps\"", Basic realm="simple", Negotiate abc123==, Bearer"#,
        );
        assert_eq!(
            c,
            vec![
                ch(
                    "Newauth",
                    None,
                    &[
                        ("realm", "apps"),
                        ("type", "1"),
                        ("title", r#"Login to "apps""#)
                    ]
                ),
                ch("Basic", None, &[("realm", "simple")]),
                ch("Negotiate", Some("abc123=="), &[]),
                ch("Bearer", None, &[]),
            ]
        );
    }

    #[test]
    fn token68_then_another_challenge() {
        let c = parse_www_authenticate("Basic dXNlcjpwYXNz , Bearer scope=x");
        assert_eq!(
            c,
            vec![
                ch("Basic", Some("dXNlcjpwYXNz"), &[]),
                ch("Bearer", None, &[("scope", "x")])
            ]
        );
        // `abc=` alone is a token68 (an auth-param value cannot be empty).
        assert_eq!(
            parse_www_authenticate("X abc="),
            vec![ch("X", Some("abc="), &[])]
        );
    }

    #[test]
    fn whitespace_and_empty_list_elements() {
        let c = parse_www_authenticate(" ,, Bearer  realm = \"a\" ,, scope=\"\" ,");
        assert_eq!(
            c,
            vec![ch("Bearer", None, &[("realm", "a"), ("scope", "")])]
        );
        assert_eq!(c[0].bearer().unwrap().scope(), Some(vec![]));
        assert_eq!(parse_www_authenticate(""), vec![]);
    }

    #[test]
    fn several_headers() {
        let h: HeaderList = [
            ("WWW-Authenticate", "Basic realm=a"),
            ("Content-Type", "text/plain"),
            (
                "www-authenticate",
                r#"Bearer resource_metadata="https://x/prm""#,
            ),
        ]
        .into_iter()
        .collect();
        let c = parse_challenges(&h);
        assert_eq!(c.len(), 2);
        assert_eq!(
            find_bearer(&c).unwrap().resource_metadata(),
            Some("https://x/prm")
        );
    }

    #[test]
    fn garbage_keeps_what_parsed() {
        // Unterminated quoted string: the broken param is dropped, earlier ones kept.
        let c = parse_www_authenticate(r#"Bearer realm="a", scope="oops"#);
        assert_eq!(c, vec![ch("Bearer", None, &[("realm", "a")])]);
        // Junk after a param.
        let c = parse_www_authenticate(r#"Bearer realm="a" junk, Basic x"#);
        assert_eq!(c, vec![ch("Bearer", None, &[("realm", "a")])]);
        // Garbage before any scheme.
        assert_eq!(parse_www_authenticate("\"Bearer\""), vec![]);
        // A scheme glued to a quote: the scheme is kept, the rest is not.
        assert_eq!(
            parse_www_authenticate("Bearer\"x\""),
            vec![ch("Bearer", None, &[])]
        );
        // A later bad header does not spoil an earlier good one.
        let h: HeaderList = [
            ("www-authenticate", "Bearer realm=a"),
            ("www-authenticate", "="),
        ]
        .into_iter()
        .collect();
        assert_eq!(
            parse_challenges(&h),
            vec![ch("Bearer", None, &[("realm", "a")])]
        );
    }

    #[test]
    fn non_ascii_in_quoted_value() {
        let c = parse_www_authenticate("Bearer error_description=\"caf\u{e9} \\\u{e9}\"");
        assert_eq!(c[0].param("error_description"), Some("caf\u{e9} \u{e9}"));
    }

    proptest! {
        #[test]
        fn never_panics(s in "[ -~\t\u{e9}]{0,60}") {
            let c = parse_www_authenticate(&s);
            for ch in &c {
                prop_assert!(!ch.scheme.is_empty());
            }
        }

        #[test]
        fn quoted_values_round_trip(v in "[ -~\u{e9}]{0,30}") {
            let quoted: String = v.chars().flat_map(|c| {
                if c == '"' || c == '\\' { vec!['\\', c] } else { vec![c] }
            }).collect();
            let c = parse_www_authenticate(&format!("Bearer realm=\"{quoted}\", scope=x"));
            prop_assert_eq!(c, vec![ch("Bearer", None, &[("realm", &v), ("scope", "x")])]);
        }
    }
}
