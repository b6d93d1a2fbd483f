//! The error for an HTTP response whose status the transport does not handle itself.

use std::fmt;

use crate::http::challenge::{BearerChallenge, Challenge, find_bearer, parse_challenges};
use crate::http::headers::{HeaderList, MCP_AUTH_SERVER};

/// The most body text an [`HttpStatusError`] keeps, in bytes.
pub const MAX_BODY_EXCERPT: usize = 2048;

/// An HTTP response that failed a request (or the connection): its status, the start of its body
/// for the user to read, and the parts the authorization flow acts on.
///
/// Build it with [`HttpStatusError::from_response`]. Displays as
/// `HTTP 401 Unauthorized: <excerpt>` (no colon when the body is empty); an HTML error page
/// (a proxy's or a web framework's 404) shows as its text, without markup or `<head>`, on one
/// line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpStatusError {
    /// The response status.
    pub status: u16,
    /// The first [`MAX_BODY_EXCERPT`] bytes of the body at most, decoded lossily, cut at a char
    /// boundary and trimmed of surrounding whitespace. Peer text: show it, never act on it.
    pub body_excerpt: String,
    /// Every `WWW-Authenticate` challenge of the response, in order.
    pub challenges: Vec<Challenge>,
    /// The `Mcp-Auth-Server` header, trimmed, when present and non-empty.
    pub auth_server: Option<String>,
}

impl HttpStatusError {
    /// Collects what matters from a response. Reads at most [`MAX_BODY_EXCERPT`] bytes of
    /// `body`, so the caller may pass a larger buffer as is.
    pub fn from_response(status: u16, headers: &HeaderList, body: &[u8]) -> Self {
        Self {
            status,
            body_excerpt: excerpt(body),
            challenges: parse_challenges(headers),
            auth_server: headers
                .get(MCP_AUTH_SERVER)
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned),
        }
    }

    /// The first Bearer challenge, if the response had one.
    pub fn bearer(&self) -> Option<BearerChallenge<'_>> {
        find_bearer(&self.challenges)
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

fn excerpt(body: &[u8]) -> String {
    let head = &body[..body.len().min(MAX_BODY_EXCERPT)];
    let mut text = String::from_utf8_lossy(head).into_owned();
    // Lossy decoding can grow the text (one bad byte becomes three), so cut again, at a char
    // boundary; index 0 is always one, so the search always succeeds.
    if text.len() > MAX_BODY_EXCERPT {
        let cut = (0..=MAX_BODY_EXCERPT)
            .rev()
            .find(|&i| text.is_char_boundary(i))
            .unwrap_or(0);
        text.truncate(cut);
    }
    // A multi-byte character cut by the byte limit shows up as a trailing U+FFFD: drop it.
    if body.len() > MAX_BODY_EXCERPT && text.ends_with('\u{FFFD}') {
        text.pop();
    }
    text.trim().to_owned()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn from_401_with_challenge_and_auth_server() {
        let h: HeaderList = [
            (
                "WWW-Authenticate",
                r#"Bearer resource_metadata="https://mcp.test/.well-known/oauth-protected-resource""#,
            ),
            ("Mcp-Auth-Server", " https://auth.test "),
        ]
        .into_iter()
        .collect();
        let e = HttpStatusError::from_response(401, &h, b"  {\"error\":\"unauthorized\"}\n");
        assert_eq!(
            e.to_string(),
            r#"HTTP 401 Unauthorized: {"error":"unauthorized"}"#
        );
        assert_eq!(
            e.bearer().unwrap().resource_metadata(),
            Some("https://mcp.test/.well-known/oauth-protected-resource")
        );
        assert_eq!(e.auth_server.as_deref(), Some("https://auth.test"));
    }

    #[test]
    fn display_without_body_or_known_reason() {
        let e = HttpStatusError::from_response(404, &HeaderList::new(), b"");
        assert_eq!(e.to_string(), "HTTP 404 Not Found");
        assert!(e.challenges.is_empty() && e.auth_server.is_none());
        let e = HttpStatusError::from_response(499, &HeaderList::new(), b"x");
        assert_eq!(e.to_string(), "HTTP 499: x");
    }

    #[test]
    fn an_html_error_page_reads_as_its_text() {
        let page = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>Error</title>\n</head>\n<body>\n<pre>Cannot GET /nope</pre>\n</body>\n</html>\n";
        let e = HttpStatusError::from_response(404, &HeaderList::new(), page.as_bytes());
        assert_eq!(e.to_string(), "HTTP 404 Not Found: Cannot GET /nope");
        // The excerpt itself stays as sent; plain text and JSON are shown unchanged.
        assert!(e.body_excerpt.starts_with("<!DOCTYPE html>"));
        let e = HttpStatusError::from_response(400, &HeaderList::new(), b"{\"error\":\"<bad>\"}");
        assert_eq!(e.to_string(), "HTTP 400 Bad Request: {\"error\":\"<bad>\"}");
        // Cut inside a tag: what came before it.
        let e = HttpStatusError::from_response(
            502,
            &HeaderList::new(),
            b"<html><body>Bad gateway<a hr",
        );
        assert_eq!(e.to_string(), "HTTP 502 Bad Gateway: Bad gateway");
    }

    #[test]
    fn excerpt_bounded_and_cut_at_char_boundary() {
        // 'é' is 2 bytes; 1025 of them put a character across the 2048-byte limit.
        let body = "é".repeat(1025);
        let e = HttpStatusError::from_response(500, &HeaderList::new(), body.as_bytes());
        assert_eq!(e.body_excerpt, "é".repeat(1024));
        // Invalid bytes expand when decoded; the excerpt still stays within the limit.
        let e = HttpStatusError::from_response(500, &HeaderList::new(), &[0xFF; 5000]);
        assert!(e.body_excerpt.len() <= MAX_BODY_EXCERPT);
        assert!(e.body_excerpt.chars().all(|c| c == '\u{FFFD}'));
        let e = HttpStatusError::from_response(500, &HeaderList::new(), &[b'a'; 10_000]);
        assert_eq!(e.body_excerpt.len(), MAX_BODY_EXCERPT);
    }
}
