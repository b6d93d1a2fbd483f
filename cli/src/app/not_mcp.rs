//! A URL that answers HTTP, but not as an MCP server (a web server's page, an API of
//! another kind, the wrong path of a server): said plainly, with what it answered, rather
//! than as the raw status of one attempt or the legacy fallback's words alone.

use mcp_proto::session::CloseReason;
use mcp_tokio::Error;

use crate::exit::CliError;

/// The longest part of what a server answered quoted in the message (its body's start can
/// be a whole error page).
const MAX_QUOTED: usize = 160;

/// The error for connecting to `url` that failed with `e`, when the failure says the URL
/// is no MCP server: both transports refused ([`CloseReason::NotMcp`]), or the initialize
/// POST got 501 Not Implemented (a server that does not take POST at all). `None` otherwise.
pub fn classify(e: &Error, url: &str) -> Option<CliError> {
    let Error::Handshake { reason, .. } = e else {
        return None;
    };
    let said = match reason {
        CloseReason::NotMcp { post, legacy } => format!(
            "the initialize POST got {}, and the legacy HTTP+SSE GET tried next failed: {}",
            quoted(&post.to_string()),
            quoted(legacy)
        ),
        CloseReason::Http(status) if status.status == 501 => format!(
            "it answered the initialize POST with {}",
            quoted(&status.to_string())
        ),
        _ => return None,
    };
    Some(CliError::NotMcp {
        url: url.to_owned(),
        said,
    })
}

/// `text`, cut at [`MAX_QUOTED`] characters with `…`.
fn quoted(text: &str) -> String {
    let mut cut: String = text.chars().take(MAX_QUOTED).collect();
    if cut.len() < text.len() {
        cut.push('…');
    }
    cut
}

#[cfg(test)]
mod tests {
    use mcp_proto::http::headers::HeaderList;
    use mcp_proto::transport_error::HttpStatusError;

    use super::*;

    fn handshake(reason: CloseReason) -> Error {
        Error::Handshake {
            server: "http://127.0.0.1:8000/mcp".into(),
            reason,
        }
    }

    #[test]
    fn both_attempts_are_said_in_one_message() {
        let post = HttpStatusError::from_response(404, &HeaderList::new(), b"");
        let e = handshake(CloseReason::NotMcp {
            post: Box::new(post),
            legacy: "HTTP 404 Not Found: Cannot GET /mcp".into(),
        });
        let error = classify(&e, "http://127.0.0.1:8000/mcp").expect("not MCP");
        assert_eq!(
            error.to_string(),
            "http://127.0.0.1:8000/mcp does not look like an MCP server: the initialize POST \
             got HTTP 404 Not Found, and the legacy HTTP+SSE GET tried next failed: HTTP 404 \
             Not Found: Cannot GET /mcp"
        );
        assert_eq!(error.code(), "not_mcp");
    }

    #[test]
    fn a_501_page_is_quoted_short() {
        let page = format!("Unsupported method ('POST'). {}", "x".repeat(400));
        let status = HttpStatusError::from_response(501, &HeaderList::new(), page.as_bytes());
        let error = classify(&handshake(CloseReason::Http(status)), "http://h/").expect("not MCP");
        let text = error.to_string();
        assert!(
            text.starts_with(
                "http://h/ does not look like an MCP server: it answered the initialize POST \
                 with HTTP 501 Not Implemented: Unsupported method ('POST')."
            ),
            "{text}"
        );
        assert!(text.ends_with('…') && text.len() < 300, "{text}");
    }

    #[test]
    fn a_server_error_is_not_called_another_kind_of_server() {
        let status = HttpStatusError::from_response(500, &HeaderList::new(), b"boom");
        assert!(classify(&handshake(CloseReason::Http(status)), "http://h/").is_none());
    }
}
