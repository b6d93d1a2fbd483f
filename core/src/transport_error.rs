//! What a transport reports about a failure, as plain data the session carries in its events
//! ([`RequestError::Http`](crate::session::RequestError::Http),
//! [`CloseReason::Http`](crate::session::CloseReason::Http),
//! [`Diagnostic::InvalidSessionId`](crate::session::Diagnostic::InvalidSessionId)).
//!
//! The types live here, below both the session and the HTTP layer, so that the session does
//! not depend on a transport: the HTTP layer builds them
//! ([`HttpStatusError::from_response`],
//! [`parse_challenges`](crate::http::challenge::parse_challenges),
//! [`validate_session_id`](crate::http::headers::validate_session_id)) and re-exports them
//! where they always were (`http::error`, `http::challenge`, `http::headers`).

use std::fmt;

/// An HTTP response that failed a request (or the connection): its status, the start of its body
/// for the user to read, and the parts the authorization flow acts on.
///
/// Build it with [`HttpStatusError::from_response`] (in [`http::error`](crate::http::error)).
/// Displays as `HTTP 401 Unauthorized: <excerpt>` (no colon when the body is empty); an HTML
/// error page (a proxy's or a web framework's 404) shows as its text, without markup or
/// `<head>`, on one line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpStatusError {
    /// The response status.
    pub status: u16,
    /// The first [`MAX_BODY_EXCERPT`](crate::http::error::MAX_BODY_EXCERPT) bytes of the body
    /// at most, decoded lossily, cut at a char boundary and trimmed of surrounding whitespace.
    /// Peer text: show it, never act on it.
    pub body_excerpt: String,
    /// Every `WWW-Authenticate` challenge of the response, in order.
    pub challenges: Vec<Challenge>,
    /// The `Mcp-Auth-Server` header, trimmed, when present and non-empty.
    pub auth_server: Option<String>,
}

impl HttpStatusError {
    /// The first Bearer challenge, if the response had one.
    pub fn bearer(&self) -> Option<BearerChallenge<'_>> {
        self.challenges.iter().find_map(Challenge::bearer)
    }
}

impl fmt::Display for HttpStatusError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "HTTP {}", self.status)?;
        if let Some(reason) = reason_phrase(self.status) {
            write!(f, " {reason}")?;
        }
        let text = readable(&self.body_excerpt);
        if !text.is_empty() {
            write!(f, ": {text}")?;
        }
        Ok(())
    }
}

impl std::error::Error for HttpStatusError {}

/// `excerpt` for a message: an HTML page reduced to its text (tags and `<head>` dropped,
/// whitespace collapsed), anything else as it is.
fn readable(excerpt: &str) -> std::borrow::Cow<'_, str> {
    let start = excerpt
        .trim_start()
        .get(..9)
        .unwrap_or_default()
        .to_ascii_lowercase();
    if !(start.starts_with("<!doctype") || start.starts_with("<html")) {
        return excerpt.into();
    }
    let mut text = String::new();
    let mut rest = excerpt;
    while let Some(open) = rest.find('<') {
        text.push_str(&rest[..open]);
        text.push(' ');
        let tag = &rest[open..];
        // `<head>` holds the title, styles and scripts, none of it the message.
        let skip_to = if tag
            .get(..5)
            .is_some_and(|t| t.eq_ignore_ascii_case("<head"))
        {
            tag.to_ascii_lowercase()
                .find("</head>")
                .map(|i| i + "</head>".len())
        } else {
            tag.find('>').map(|i| i + 1)
        };
        match skip_to {
            Some(n) => rest = &tag[n..],
            // Cut inside a tag (the excerpt is bounded): nothing readable after it.
            None => {
                rest = "";
                break;
            }
        }
    }
    text.push_str(rest);
    text.split_whitespace().collect::<Vec<_>>().join(" ").into()
}

/// The standard reason phrase of the statuses an MCP client is likely to meet, for messages.
pub fn reason_phrase(status: u16) -> Option<&'static str> {
    Some(match status {
        400 => "Bad Request",
        401 => "Unauthorized",
        402 => "Payment Required",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        406 => "Not Acceptable",
        408 => "Request Timeout",
        409 => "Conflict",
        410 => "Gone",
        413 => "Content Too Large",
        415 => "Unsupported Media Type",
        422 => "Unprocessable Content",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        300 => "Multiple Choices",
        301 => "Moved Permanently",
        302 => "Found",
        303 => "See Other",
        304 => "Not Modified",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        _ => return None,
    })
}

/// One authentication challenge: a scheme with either a token68 or a list of parameters.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Challenge {
    /// The scheme as the server wrote it (compare case-insensitively, or use
    /// [`Challenge::is_scheme`]).
    pub scheme: String,
    /// The token68 form (`Basic dXNlcg==`), when the challenge used it.
    pub token68: Option<String>,
    /// The auth-params in order, names as written, values unquoted and unescaped.
    pub params: Vec<(String, String)>,
}

impl Challenge {
    /// Whether the scheme is `scheme`, ignoring case.
    pub fn is_scheme(&self, scheme: &str) -> bool {
        self.scheme.eq_ignore_ascii_case(scheme)
    }

    /// The value of the first parameter called `name` (any case).
    pub fn param(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// This challenge seen as a Bearer challenge (RFC 6750 §3, RFC 9728 §5.1), if its scheme is
    /// `Bearer`.
    pub fn bearer(&self) -> Option<BearerChallenge<'_>> {
        self.is_scheme("bearer")
            .then_some(BearerChallenge { challenge: self })
    }
}

/// The parameters of a `Bearer` challenge that an MCP client acts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BearerChallenge<'a> {
    challenge: &'a Challenge,
}

impl<'a> BearerChallenge<'a> {
    /// The challenge this view reads.
    pub fn challenge(&self) -> &'a Challenge {
        self.challenge
    }

    /// `resource_metadata`: the URL of the protected resource metadata (RFC 9728), the first
    /// place to discover the authorization server.
    pub fn resource_metadata(&self) -> Option<&'a str> {
        self.challenge.param("resource_metadata")
    }

    /// `scope`: the scopes the resource asks for, split on whitespace. `None` when the parameter
    /// is absent (then the client picks scopes another way); `Some` of an empty list when it is
    /// present but empty.
    pub fn scope(&self) -> Option<Vec<&'a str>> {
        self.challenge
            .param("scope")
            .map(|s| s.split_ascii_whitespace().collect())
    }

    /// `error`: `invalid_request`, `invalid_token`, `insufficient_scope`, or another code.
    pub fn error(&self) -> Option<&'a str> {
        self.challenge.param("error")
    }

    /// `error_description`: human-readable text from the server; show it, never act on it.
    pub fn error_description(&self) -> Option<&'a str> {
        self.challenge.param("error_description")
    }

    /// `realm`.
    pub fn realm(&self) -> Option<&'a str> {
        self.challenge.param("realm")
    }
}

/// Why a server's `Mcp-Session-Id` was refused by
/// [`validate_session_id`](crate::http::headers::validate_session_id).
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InvalidSessionId {
    /// The value is empty.
    #[error("the session id is empty")]
    Empty,
    /// The value is longer than [`MAX_SESSION_ID_LEN`](crate::http::headers::MAX_SESSION_ID_LEN).
    #[error("the session id is {len} bytes long, more than the {max} allowed")]
    TooLong {
        /// Its length in bytes.
        len: usize,
        /// The maximum, [`MAX_SESSION_ID_LEN`](crate::http::headers::MAX_SESSION_ID_LEN).
        max: usize,
    },
    /// The value has a byte outside visible ASCII (0x21 to 0x7E).
    #[error("the session id has byte 0x{byte:02x} at offset {offset}, outside visible ASCII")]
    InvalidByte {
        /// The offending byte (the first byte of a non-ASCII character).
        byte: u8,
        /// Its offset in the value.
        offset: usize,
    },
}
