//! Host-visible resource URIs: which server a resource belongs to, written into its URI.
//!
//! A server's resource `URI` is shown to the host as `mcp-bridge://SERVER/URI`: the
//! configured server name, percent-encoded (every byte outside `A-Z a-z 0-9 - . _ ~`), then
//! `/`, then the server's own URI unchanged. The mapping is reversible without a table (a
//! host may read a URI it never listed, or expand a template), and a resource template maps
//! the same way: `demo://notes/{name}` becomes `mcp-bridge://demo/demo://notes/{name}`, and
//! whatever the host fills in stays in the part that goes back to the server.

use mcp_proto::jsonrpc::to_raw;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};
use serde_json::Value;
use serde_json::value::RawValue;

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
    format!("{SCHEME}{}{uri}", server_prefix(server))
}

/// `server` percent-encoded (it then holds no `/`), then `/`: the prefix that names a
/// server in host-visible URIs and task ids.
pub fn server_prefix(server: &str) -> String {
    format!("{}/", utf8_percent_encode(server, SERVER_PART))
}

/// The server and the rest of `text`, which starts with a [`server_prefix`]; `None` when
/// it does not.
pub fn split_server_prefix(text: &str) -> Option<(String, &str)> {
    let (server, rest) = text.split_once('/')?;
    let server = percent_decode_str(server).decode_utf8().ok()?;
    (!server.is_empty()).then(|| (server.into_owned(), rest))
}

/// The server and the server's own URI behind a host-visible `uri`; `None` when it is not
/// one this bridge wrote.
pub fn from_host(uri: &str) -> Option<(String, &str)> {
    split_server_prefix(uri.strip_prefix(SCHEME)?)
}

/// `server`'s result with every resource URI in it made host-visible: the `contents` of
/// `resources/read`, and the `resource_link` and embedded `resource` items of a `tools/call`
/// result's `content` and of `prompts/get` messages, so that the host can read what it is
/// pointed at through the bridge. A result with no `"uri"` in it is passed on as it came
/// (not even parsed); one that is not JSON too.
pub fn result_to_host(server: &str, result: &RawValue) -> Result<Box<RawValue>, serde_json::Error> {
    if !result.get().contains("\"uri\"") {
        return Ok(result.to_owned());
    }
    let Ok(mut value) = serde_json::from_str::<Value>(result.get()) else {
        return Ok(result.to_owned());
    };
    let mut rewrite = |uri: Option<&mut Value>| {
        if let Some(Value::String(u)) = uri {
            *u = to_host(server, u);
        }
    };
    if let Some(contents) = value.get_mut("contents").and_then(Value::as_array_mut) {
        for content in contents {
            rewrite(content.get_mut("uri"));
        }
    }
    let mut items: Vec<&mut Value> = Vec::new();
    if let Some(content) = value.get_mut("content").and_then(Value::as_array_mut) {
        items.extend(content.iter_mut());
    }
    for item in items {
        content_item(item, &mut rewrite);
    }
    if let Some(messages) = value.get_mut("messages").and_then(Value::as_array_mut) {
        for message in messages {
            if let Some(item) = message.get_mut("content") {
                content_item(item, &mut rewrite);
            }
        }
    }
    to_raw(&value)
}

/// Rewrites the URI of one content item: a `resource_link`'s own, an embedded `resource`'s.
fn content_item(item: &mut Value, rewrite: &mut impl FnMut(Option<&mut Value>)) {
    match item.get("type").and_then(Value::as_str) {
        Some("resource_link") => rewrite(item.get_mut("uri")),
        Some("resource") => rewrite(item.get_mut("resource").and_then(|r| r.get_mut("uri"))),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rewritten(result: Value) -> Value {
        let raw = to_raw(&result).expect("encodes");
        serde_json::from_str(result_to_host("demo", &raw).expect("rewrites").get()).expect("json")
    }

    #[test]
    fn read_results_carry_host_visible_uris() {
        let out = rewritten(json!({"contents": [
            {"uri": "demo://readme", "text": "hi"},
            {"uri": "demo://other", "blob": "AA=="},
        ]}));
        assert_eq!(out["contents"][0]["uri"], "mcp-bridge://demo/demo://readme");
        assert_eq!(out["contents"][1]["uri"], "mcp-bridge://demo/demo://other");
        assert_eq!(out["contents"][0]["text"], "hi");
    }

    #[test]
    fn links_and_embedded_resources_in_tool_results_and_prompts_are_rewritten() {
        let out = rewritten(json!({"content": [
            {"type": "text", "text": "see the uri"},
            {"type": "resource_link", "uri": "file:///a.txt", "name": "a"},
            {"type": "resource", "resource": {"uri": "demo://readme", "text": "x"}},
        ], "structuredContent": {"uri": "left as it is"}}));
        assert_eq!(out["content"][1]["uri"], "mcp-bridge://demo/file:///a.txt");
        assert_eq!(
            out["content"][2]["resource"]["uri"],
            "mcp-bridge://demo/demo://readme"
        );
        assert_eq!(out["content"][0]["text"], "see the uri");
        assert_eq!(out["structuredContent"]["uri"], "left as it is");
        let prompt = rewritten(json!({"messages": [
            {"role": "user", "content": {"type": "resource", "resource": {"uri": "demo://readme", "text": "x"}}},
            {"role": "user", "content": {"type": "text", "text": "no uri"}},
        ]}));
        assert_eq!(
            prompt["messages"][0]["content"]["resource"]["uri"],
            "mcp-bridge://demo/demo://readme"
        );
    }

    #[test]
    fn a_result_without_uris_passes_untouched() {
        let raw = RawValue::from_string(r#"{"content":[ {"type":"text","text":"x"} ]}"#.into())
            .expect("json");
        assert_eq!(result_to_host("demo", &raw).expect("ok").get(), raw.get());
    }

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
