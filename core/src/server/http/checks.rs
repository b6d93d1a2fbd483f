//! The checks made of a request's head before anything reaches a session: `Origin`, the
//! bearer token, `Accept`, `Content-Type` and `MCP-Protocol-Version`. Pure functions.

use subtle::ConstantTimeEq;

use super::OriginCheck;
use crate::http::headers::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, ContentType, HeaderList};
use crate::session::{Era, ProtocolVersion};

/// Whether `origin` (the `Origin` header, if any) may reach the server.
#[must_use]
pub(crate) fn origin_allowed(check: &OriginCheck, origin: Option<&str>) -> bool {
    let (OriginCheck::LoopbackOr(allowed), Some(origin)) = (check, origin) else {
        return true;
    };
    let origin = origin.trim().trim_end_matches('/');
    if allowed
        .iter()
        .any(|a| a.trim_end_matches('/').eq_ignore_ascii_case(origin))
    {
        return true;
    }
    // `null` (a sandboxed page, a file) and anything unparsable are not loopback.
    let Ok(url) = url::Url::parse(origin) else {
        return false;
    };
    match url.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

/// What a request's `Authorization` says about the bearer token a server requires.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BearerCheck {
    /// `Bearer <expected>`.
    Valid,
    /// No `Authorization: Bearer <token>` at all (no header, another scheme, no token).
    Missing,
    /// A bearer token that is not the expected one.
    Wrong,
}

/// Checks the request's `Authorization: Bearer <token>` against `expected`. The token is
/// compared in constant time (its length is not secret).
#[must_use]
pub(crate) fn bearer(headers: &HeaderList, expected: &str) -> BearerCheck {
    let Some(value) = headers.get(AUTHORIZATION) else {
        return BearerCheck::Missing;
    };
    let Some((scheme, token)) = value.trim().split_once(' ') else {
        return BearerCheck::Missing;
    };
    let token = token.trim();
    if !scheme.eq_ignore_ascii_case("bearer") || token.is_empty() {
        return BearerCheck::Missing;
    }
    if bool::from(token.as_bytes().ct_eq(expected.as_bytes())) {
        BearerCheck::Valid
    } else {
        BearerCheck::Wrong
    }
}

/// What a request's `Accept` lets the server answer with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Accepts {
    pub(crate) json: bool,
    pub(crate) sse: bool,
}

/// Reads `Accept`: media ranges without parameters, `*/*`, `application/*` and `text/*`
/// included. No `Accept` header accepts both (RFC 9110 §12.5.1).
#[must_use]
pub(crate) fn accepts(headers: &HeaderList) -> Accepts {
    read_accept(headers, true)
}

/// The `Accept` value the SDKs send on every POST: both, without parsing it.
const ACCEPT_BOTH: &str = "application/json, text/event-stream";

/// [`accepts`], with (`shortcut`) or without the shortcut for [`ACCEPT_BOTH`] (the plain
/// parse its property test compares it to).
fn read_accept(headers: &HeaderList, shortcut: bool) -> Accepts {
    let mut out = Accepts {
        json: false,
        sse: false,
    };
    let mut any = false;
    for value in headers.get_all(ACCEPT) {
        if shortcut && value == ACCEPT_BOTH {
            any = true;
            out.json = true;
            out.sse = true;
            continue;
        }
        for range in value.split(',') {
            any = true;
            let essence = range.split(';').next().unwrap_or_default().trim();
            // Compared in any case, without a lower-cased copy per range.
            let is = |name: &str| essence.eq_ignore_ascii_case(name);
            if is("*/*") {
                out.json = true;
                out.sse = true;
            } else if is("application/*") || is("application/json") {
                out.json = true;
            } else if is("text/*") || is("text/event-stream") {
                out.sse = true;
            }
        }
    }
    if !any {
        return Accepts {
            json: true,
            sse: true,
        };
    }
    out
}

/// Whether a POST body is declared JSON (or not declared at all).
#[must_use]
pub(crate) fn content_is_json(headers: &HeaderList) -> bool {
    headers
        .get(CONTENT_TYPE)
        .is_none_or(|v| ContentType::parse(v) == ContentType::Json)
}

/// The `MCP-Protocol-Version` of a request: `Ok(None)` without the header, `Err` with the
/// value for one this server does not speak (it must get 400). Initialize-era versions are
/// always read (the session negotiates them); 2026 ones when `speaks` lists them.
pub(crate) fn protocol_version(
    headers: &HeaderList,
    speaks: &[ProtocolVersion],
) -> Result<Option<ProtocolVersion>, String> {
    let Some(value) = headers.get(crate::http::headers::MCP_PROTOCOL_VERSION) else {
        return Ok(None);
    };
    let value = value.trim();
    match ProtocolVersion::parse(value) {
        Some(v) if v.era() == Era::Initialize || speaks.contains(&v) => Ok(Some(v)),
        _ => Err(value.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(fields: &[(&str, &str)]) -> HeaderList {
        let mut h = HeaderList::new();
        for (n, v) in fields {
            h.append(*n, *v);
        }
        h
    }

    #[test]
    fn loopback_origins_pass_others_need_the_list() {
        let check = OriginCheck::LoopbackOr(vec!["https://app.example.com".into()]);
        for ok in [
            None,
            Some("http://localhost:3000"),
            Some("http://127.0.0.1"),
            Some("http://127.5.6.7:80"),
            Some("http://[::1]:8080"),
            Some("HTTPS://APP.EXAMPLE.COM/"),
        ] {
            assert!(origin_allowed(&check, ok), "{ok:?}");
        }
        for bad in [
            "https://evil.example",
            "http://localhost.evil.example",
            "null",
            "http://10.0.0.1",
            "not a url",
            "",
        ] {
            assert!(!origin_allowed(&check, Some(bad)), "{bad}");
        }
        assert!(origin_allowed(
            &OriginCheck::Off,
            Some("https://evil.example")
        ));
    }

    #[test]
    fn bearer_needs_the_scheme_and_the_exact_token() {
        let check = |value: &str| bearer(&headers(&[("authorization", value)]), "s3cret");
        assert_eq!(check("Bearer s3cret"), BearerCheck::Valid);
        assert_eq!(
            bearer(&headers(&[("Authorization", "bearer  s3cret ")]), "s3cret"),
            BearerCheck::Valid
        );
        for wrong in ["Bearer s3cre", "Bearer s3cret2", "bearer other"] {
            assert_eq!(check(wrong), BearerCheck::Wrong, "{wrong}");
        }
        // No bearer token at all: no header, another scheme, a scheme without a token.
        for missing in ["Basic s3cret", "s3cret", "Bearer", "Bearer   "] {
            assert_eq!(check(missing), BearerCheck::Missing, "{missing}");
        }
        assert_eq!(bearer(&HeaderList::new(), "s3cret"), BearerCheck::Missing);
    }

    proptest::proptest! {
        /// The shortcut for the SDKs' `Accept` reads what the plain parse reads, for any
        /// list of `Accept` values made of it, its near misses and other ranges.
        #[test]
        fn the_accept_shortcut_reads_what_the_parse_reads(
            values in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::strategy::Just(ACCEPT_BOTH.to_owned()),
                    proptest::strategy::Just("application/json, text/event-stream ".to_owned()),
                    proptest::strategy::Just("Application/JSON,text/event-stream".to_owned()),
                    "(application/json|text/event-stream|text/html|\\*/\\*|text/\\*)(;q=0.[0-9])?( ?, ?(application/json|text/event-stream|text/plain))?",
                ],
                0..3,
            ),
        ) {
            let fields: Vec<(&str, &str)> = values.iter().map(|v| ("accept", v.as_str())).collect();
            let h = headers(&fields);
            proptest::prop_assert_eq!(read_accept(&h, true), read_accept(&h, false));
        }
    }

    #[test]
    fn accept_ranges() {
        let a = accepts(&headers(&[(
            "accept",
            "application/json, text/event-stream",
        )]));
        assert!(a.json && a.sse);
        let a = accepts(&headers(&[("accept", "text/event-stream;q=1")]));
        assert!(!a.json && a.sse);
        let a = accepts(&headers(&[("accept", "text/html")]));
        assert!(!a.json && !a.sse);
        let a = accepts(&headers(&[("accept", "*/*")]));
        assert!(a.json && a.sse);
        assert_eq!(
            accepts(&HeaderList::new()),
            Accepts {
                json: true,
                sse: true
            }
        );
    }

    #[test]
    fn protocol_version_header() {
        assert_eq!(protocol_version(&HeaderList::new(), &[]), Ok(None));
        let h = headers(&[("mcp-protocol-version", "2025-06-18")]);
        assert_eq!(
            protocol_version(&h, &[]),
            Ok(Some(ProtocolVersion::V2025_06_18))
        );
        let h = headers(&[("mcp-protocol-version", "1999-01-01")]);
        assert_eq!(protocol_version(&h, &[]), Err("1999-01-01".into()));
        let h = headers(&[("mcp-protocol-version", "2026-07-28")]);
        assert!(
            protocol_version(&h, &[]).is_err(),
            "not spoken by this server"
        );
        let speaks = [ProtocolVersion::V2026_07_28];
        assert_eq!(
            protocol_version(&h, &speaks),
            Ok(Some(ProtocolVersion::V2026_07_28))
        );
    }
}
