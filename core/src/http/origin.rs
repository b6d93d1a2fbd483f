//! Origin rules: the legacy `endpoint` event and redirects.
//!
//! Credentials (an `Authorization` header, a session id) belong to one origin (RFC 6454: scheme,
//! host and port). Whatever a server sends, the client never carries them to another one: a
//! legacy HTTP+SSE server cannot point its POST endpoint elsewhere, and a redirect to another
//! origin is refused instead of followed.

use url::Url;

/// Whether `a` and `b` have the same origin (scheme, host and port, with default ports filled
/// in). URLs with opaque origins (neither http nor https nor another special scheme) are never
/// the same origin, not even as themselves.
pub fn same_origin(a: &Url, b: &Url) -> bool {
    // The same http(s) URL is on one origin: known without building both origins (a host
    // string each), as every exchange to the configured URL asks. Other schemes' origins may
    // be opaque, never equal even to themselves, so they take the general path.
    if is_http(a) && a == b {
        return true;
    }
    a.origin() == b.origin()
}

fn is_http(url: &Url) -> bool {
    matches!(url.scheme(), "http" | "https")
}

/// Why the data of a legacy `endpoint` event was refused by [`resolve_endpoint`].
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EndpointError {
    /// The event data is empty (or only whitespace).
    #[error("the endpoint event has no URL")]
    Empty,
    /// The event data is not a URL, even relative to the SSE URL.
    #[error("the endpoint event is not a valid URL: {0}")]
    Invalid(url::ParseError),
    /// The endpoint uses a scheme other than http or https.
    #[error("the endpoint URL uses the unsupported scheme {scheme:?}")]
    UnsupportedScheme {
        /// The scheme.
        scheme: String,
    },
    /// The endpoint is on another origin than the SSE stream.
    #[error("the endpoint origin {endpoint} differs from the SSE origin {sse}")]
    CrossOrigin {
        /// The endpoint's origin, serialised (no path, query or credentials).
        endpoint: String,
        /// The SSE URL's origin, serialised.
        sse: String,
    },
}

/// Resolves the data of a legacy HTTP+SSE (2024-11-05) `endpoint` event against the SSE URL it
/// arrived on: where to POST messages from now on.
///
/// The data may be absolute or relative (`/messages?sessionId=...` is typical); surrounding
/// whitespace is ignored. The result must be http(s) and on the same origin as `base_sse_url`,
/// so a server (or whatever sits in the middle) cannot steer the client's requests, and the
/// credentials on them, to another host.
pub fn resolve_endpoint(
    base_sse_url: &Url,
    endpoint_event_data: &str,
) -> Result<Url, EndpointError> {
    let data = endpoint_event_data.trim();
    if data.is_empty() {
        return Err(EndpointError::Empty);
    }
    let url = base_sse_url.join(data).map_err(EndpointError::Invalid)?;
    if !is_http(&url) {
        return Err(EndpointError::UnsupportedScheme {
            scheme: url.scheme().to_owned(),
        });
    }
    if !same_origin(&url, base_sse_url) {
        return Err(EndpointError::CrossOrigin {
            endpoint: url.origin().ascii_serialization(),
            sse: base_sse_url.origin().ascii_serialization(),
        });
    }
    Ok(url)
}

/// What to do with a 3xx response, decided by [`decide_redirect`].
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RedirectDecision {
    /// Repeat the same request (same method, body and headers) at this URL.
    Follow(Url),
    /// Do not follow; treat the response as the request's failure.
    Refuse(RedirectRefusal),
}

/// Why a redirect is not followed.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RedirectRefusal {
    /// The status is not one of the redirects 301, 302, 303, 307, 308 (300 and 304 need a
    /// choice or a cache, neither of which applies).
    #[error("HTTP {status} is not a redirect the client follows")]
    NotARedirect {
        /// The response status.
        status: u16,
    },
    /// A 301, 302 or 303 in answer to a POST: clients turn those into a GET, which would drop
    /// the JSON-RPC message. Servers must use 307 or 308 to move an MCP endpoint.
    #[error("HTTP {status} would turn the POST into a GET; only 307 and 308 keep the method")]
    WouldChangeMethod {
        /// The response status.
        status: u16,
    },
    /// No `Location` header.
    #[error("the redirect has no Location header")]
    MissingLocation,
    /// `Location` is not a URL, even relative to the request URL.
    #[error("the redirect Location is not a valid URL: {0}")]
    InvalidLocation(url::ParseError),
    /// `Location` uses a scheme other than http or https.
    #[error("the redirect Location uses the unsupported scheme {scheme:?}")]
    UnsupportedScheme {
        /// The scheme.
        scheme: String,
    },
    /// `Location` is on another origin (including an https to http downgrade): following it
    /// would hand this origin's credentials to another one.
    #[error("the redirect goes from origin {from} to origin {to}; credentials never cross origins")]
    CrossOrigin {
        /// The request's origin, serialised.
        from: String,
        /// The target's origin, serialised.
        to: String,
    },
}

/// Decides whether to follow a redirect: only to the same origin, only over http(s), and only
/// with a status that keeps the method for a POST (307, 308).
///
/// `location` is the response's `Location` header, resolved against `request_url`. Pass
/// `method_is_post = true` for every request whose method a 301/302/303 would change (POST and
/// DELETE: a 303 turns anything but GET and HEAD into GET); for a GET, 301, 302 and 303 are
/// followed too. Counting hops (and stopping a loop) is the caller's job.
pub fn decide_redirect(
    request_url: &Url,
    status: u16,
    location: Option<&str>,
    method_is_post: bool,
) -> RedirectDecision {
    match decide(request_url, status, location, method_is_post) {
        Ok(url) => RedirectDecision::Follow(url),
        Err(refusal) => RedirectDecision::Refuse(refusal),
    }
}

fn decide(
    request_url: &Url,
    status: u16,
    location: Option<&str>,
    method_is_post: bool,
) -> Result<Url, RedirectRefusal> {
    match status {
        307 | 308 => {}
        301..=303 if method_is_post => return Err(RedirectRefusal::WouldChangeMethod { status }),
        301..=303 => {}
        _ => return Err(RedirectRefusal::NotARedirect { status }),
    }
    let location = location
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .ok_or(RedirectRefusal::MissingLocation)?;
    let url = request_url
        .join(location)
        .map_err(RedirectRefusal::InvalidLocation)?;
    if !is_http(&url) {
        return Err(RedirectRefusal::UnsupportedScheme {
            scheme: url.scheme().to_owned(),
        });
    }
    if !same_origin(request_url, &url) {
        return Err(RedirectRefusal::CrossOrigin {
            from: request_url.origin().ascii_serialization(),
            to: url.origin().ascii_serialization(),
        });
    }
    Ok(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn same_origin_rules() {
        assert!(same_origin(
            &u("http://a.test/x"),
            &u("http://a.test:80/y?q")
        ));
        assert!(same_origin(
            &u("https://A.test/"),
            &u("https://a.test:443/")
        ));
        assert!(same_origin(&u("http://u:p@a.test/"), &u("http://a.test/")));
        assert!(!same_origin(&u("http://a.test/"), &u("https://a.test/")));
        assert!(!same_origin(
            &u("http://a.test/"),
            &u("http://a.test:8080/")
        ));
        assert!(!same_origin(&u("http://a.test/"), &u("http://b.a.test/")));
        let data = u("data:text/plain,x");
        assert!(!same_origin(&data, &data));
        let url = u("http://a.test:8080/mcp?k=v");
        assert!(same_origin(&url, &url.clone()));
    }

    #[test]
    fn endpoint_relative_and_absolute() {
        let sse = u("http://127.0.0.1:3000/sse");
        assert_eq!(
            resolve_endpoint(&sse, "/messages?sessionId=abc"),
            Ok(u("http://127.0.0.1:3000/messages?sessionId=abc"))
        );
        assert_eq!(
            resolve_endpoint(&sse, " messages?sessionId=1\n"),
            Ok(u("http://127.0.0.1:3000/messages?sessionId=1"))
        );
        assert_eq!(
            resolve_endpoint(&sse, "http://127.0.0.1:3000/m"),
            Ok(u("http://127.0.0.1:3000/m"))
        );
    }

    #[test]
    fn endpoint_refusals() {
        let sse = u("http://127.0.0.1:3000/sse");
        assert_eq!(resolve_endpoint(&sse, "  "), Err(EndpointError::Empty));
        assert_eq!(
            resolve_endpoint(&sse, "http://evil.test/m"),
            Err(EndpointError::CrossOrigin {
                endpoint: "http://evil.test".into(),
                sse: "http://127.0.0.1:3000".into()
            })
        );
        assert!(matches!(
            resolve_endpoint(&sse, "//evil.test/m"),
            Err(EndpointError::CrossOrigin { .. })
        ));
        assert!(matches!(
            resolve_endpoint(&sse, "https://127.0.0.1:3000/m"),
            Err(EndpointError::CrossOrigin { .. })
        ));
        assert_eq!(
            resolve_endpoint(&sse, "file:///etc/passwd"),
            Err(EndpointError::UnsupportedScheme {
                scheme: "file".into()
            })
        );
        assert!(matches!(
            resolve_endpoint(&sse, "http://[::1"),
            Err(EndpointError::Invalid(_))
        ));
    }

    #[test]
    fn redirect_307_308_same_origin_followed() {
        let req = u("https://mcp.test/mcp");
        for status in [307, 308] {
            assert_eq!(
                decide_redirect(&req, status, Some("/v2/mcp"), true),
                RedirectDecision::Follow(u("https://mcp.test/v2/mcp"))
            );
        }
    }

    #[test]
    fn redirect_301_302_303_refused_for_post_followed_for_get() {
        let req = u("https://mcp.test/mcp");
        for status in [301, 302, 303] {
            assert_eq!(
                decide_redirect(&req, status, Some("/v2"), true),
                RedirectDecision::Refuse(RedirectRefusal::WouldChangeMethod { status })
            );
            assert_eq!(
                decide_redirect(&req, status, Some("/v2"), false),
                RedirectDecision::Follow(u("https://mcp.test/v2"))
            );
        }
    }

    #[test]
    fn redirect_refusals() {
        let req = u("https://mcp.test/mcp");
        let refuse = |status, loc, post| match decide_redirect(&req, status, loc, post) {
            RedirectDecision::Refuse(r) => r,
            other => panic!("followed: {other:?}"),
        };
        assert_eq!(
            refuse(308, Some("https://other.test/mcp"), true),
            RedirectRefusal::CrossOrigin {
                from: "https://mcp.test".into(),
                to: "https://other.test".into()
            }
        );
        assert!(matches!(
            refuse(307, Some("http://mcp.test/mcp"), false),
            RedirectRefusal::CrossOrigin { .. }
        ));
        assert_eq!(refuse(307, None, true), RedirectRefusal::MissingLocation);
        assert_eq!(
            refuse(307, Some(" "), true),
            RedirectRefusal::MissingLocation
        );
        assert_eq!(
            refuse(308, Some("ftp://mcp.test/x"), true),
            RedirectRefusal::UnsupportedScheme {
                scheme: "ftp".into()
            }
        );
        assert!(matches!(
            refuse(308, Some("https://[::1"), true),
            RedirectRefusal::InvalidLocation(_)
        ));
        for status in [200, 300, 304, 305, 306, 309, 404] {
            assert_eq!(
                refuse(status, Some("/x"), false),
                RedirectRefusal::NotARedirect { status }
            );
        }
    }

    #[test]
    fn refusal_reasons_read_clearly() {
        let r = RedirectRefusal::WouldChangeMethod { status: 302 };
        assert_eq!(
            r.to_string(),
            "HTTP 302 would turn the POST into a GET; only 307 and 308 keep the method"
        );
    }
}
