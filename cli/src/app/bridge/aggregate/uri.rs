//! Host-visible resource URIs: which server a resource belongs to, written into its URI.
//!
//! A server's resource `URI` is shown to the host as `mcp-bridge://SERVER/URI`: the
//! configured server name, percent-encoded (every byte outside `A-Z a-z 0-9 - . _ ~`), then
//! `/`, then the server's own URI unchanged. The mapping is reversible without a table (a
//! host may read a URI it never listed, or expand a template), and a resource template maps
//! the same way: `demo://notes/{name}` becomes `mcp-bridge://demo/demo://notes/{name}`, and
//! whatever the host fills in stays in the part that goes back to the server.

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};

/// The scheme of every host-visible resource URI.
pub const SCHEME: &str = "mcp-bridge://";

/// What is escaped in the server part: everything but RFC 3986's unreserved characters.
const SERVER_PART: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// The host-visible URI (or URI template) of `server`'s `uri`.
pub fn to_host(server: &str, uri: &str) -> String {
    format!("{SCHEME}{}/{uri}", utf8_percent_encode(server, SERVER_PART))
}

/// The server and the server's own URI behind a host-visible `uri`; `None` when it is not
/// one this bridge wrote.
pub fn from_host(uri: &str) -> Option<(String, &str)> {
    let rest = uri.strip_prefix(SCHEME)?;
    let (server, original) = rest.split_once('/')?;
    let server = percent_decode_str(server).decode_utf8().ok()?;
    (!server.is_empty()).then(|| (server.into_owned(), original))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_uri_goes_there_and_back() {
        let host = to_host("demo", "demo://readme");
        assert_eq!(host, "mcp-bridge://demo/demo://readme");
        assert_eq!(from_host(&host), Some(("demo".to_owned(), "demo://readme")));
    }

    #[test]
    fn odd_server_names_are_escaped_and_restored() {
        for name in ["a/b", "my server", "日本", "x%2Fy", "a__b"] {
            let host = to_host(name, "file:///tmp/a b");
            let (server, uri) = from_host(&host).expect("ours");
            assert_eq!((server.as_str(), uri), (name, "file:///tmp/a b"), "{host}");
            // The server part never holds a `/` of its own.
            assert!(
                !host[SCHEME.len()..]
                    .split_once('/')
                    .expect("a slash")
                    .0
                    .contains('/')
            );
        }
    }

    #[test]
    fn an_expanded_template_maps_back_to_the_servers_uri() {
        let template = to_host("demo", "demo://notes/{name}");
        let expanded = template.replace("{name}", "shopping");
        assert_eq!(
            from_host(&expanded),
            Some(("demo".to_owned(), "demo://notes/shopping"))
        );
    }

    #[test]
    fn foreign_uris_are_not_ours() {
        assert_eq!(from_host("demo://readme"), None);
        assert_eq!(from_host("mcp-bridge://"), None);
        assert_eq!(from_host("mcp-bridge:///x"), None);
        assert_eq!(from_host("mcp-bridge://demo"), None);
        assert_eq!(from_host("mcp-bridge://%FF/x"), None);
    }
}
