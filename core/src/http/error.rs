//! The error for an HTTP response whose status the transport does not handle itself.

use crate::http::challenge::parse_challenges;
use crate::http::headers::{HeaderList, MCP_AUTH_SERVER};
pub use crate::transport_error::{HttpStatusError, reason_phrase};

/// The most body text an [`HttpStatusError`] keeps, in bytes.
pub const MAX_BODY_EXCERPT: usize = 2048;

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
