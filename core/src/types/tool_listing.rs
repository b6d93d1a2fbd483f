//! `tools/list` read entry by entry: one malformed tool (no `inputSchema`, a name that is not
//! a string, …) is dropped and reported, the rest of the listing stays usable.
//!
//! A client that decoded the page whole ([`ListTools`](super::ListTools)) would lose every tool
//! to one server mistake; this is what a client should use to list tools for a person or a
//! model: [`ListToolsTolerant`] decodes each page into a [`TolerantToolsPage`], and
//! [`TolerantToolsPage::split`] gives the valid tools and a [`MalformedTool`] for each entry
//! that is not one.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{Cursor, PaginatedParams, Request, Tool};

/// `tools/list`, each entry of a page decoded on its own ([`TolerantToolsPage`]).
#[non_exhaustive]
pub enum ListToolsTolerant {}

impl Request for ListToolsTolerant {
    const METHOD: &'static str = "tools/list";
    type Params = Option<PaginatedParams>;
    type Result = TolerantToolsPage;
}

/// One page of `tools/list` with its entries still undecoded.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TolerantToolsPage {
    /// The entries, as sent.
    pub tools: Vec<Value>,
    /// Where the next page starts; `None` on the last page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<Cursor>,
    /// Result metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// A `tools/list` entry that is not a valid [`Tool`]: dropped from the listing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MalformedTool {
    /// Its `name`, when it has a string one.
    pub name: Option<String>,
    /// Its position in the whole listing (0-based, across pages).
    pub index: usize,
    /// Why it is not a tool (the decoder's words: ``missing field `inputSchema` ``).
    pub reason: String,
}

impl MalformedTool {
    /// How to name it to a person: `` `stats` `` or `the tool at index 3`.
    #[must_use]
    pub fn label(&self) -> String {
        match &self.name {
            Some(name) => format!("`{name}`"),
            None => format!("the tool at index {}", self.index),
        }
    }
}

impl TolerantToolsPage {
    /// Decodes each entry: the valid tools in order, and a [`MalformedTool`] for each entry
    /// that is not one. `first_index` is the position of this page's first entry in the
    /// whole listing (the entries of the pages before it).
    #[must_use]
    pub fn split(entries: Vec<Value>, first_index: usize) -> (Vec<Tool>, Vec<MalformedTool>) {
        let mut tools = Vec::with_capacity(entries.len());
        let mut malformed = Vec::new();
        for (i, entry) in entries.into_iter().enumerate() {
            let name = entry.get("name").and_then(Value::as_str).map(str::to_owned);
            match serde_json::from_value::<Tool>(entry) {
                Ok(tool) => tools.push(tool),
                Err(e) => malformed.push(MalformedTool {
                    name,
                    index: first_index + i,
                    reason: e.to_string(),
                }),
            }
        }
        (tools, malformed)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_malformed_entry_is_dropped_and_named_the_rest_kept() {
        let page: TolerantToolsPage = serde_json::from_value(json!({
            "tools": [
                { "name": "echo", "inputSchema": { "type": "object" } },
                { "name": "stats", "description": "no schema" },
                { "inputSchema": { "type": "object" } },
                "not an object",
                { "name": "add", "inputSchema": { "type": "object" } }
            ],
            "nextCursor": "c2"
        }))
        .expect("a page whatever its entries");
        assert_eq!(page.next_cursor.as_deref(), Some("c2"));
        let (tools, malformed) = TolerantToolsPage::split(page.tools, 10);
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["echo", "add"]);
        assert_eq!(malformed.len(), 3);
        assert_eq!(malformed[0].name.as_deref(), Some("stats"));
        assert_eq!(malformed[0].index, 11);
        assert!(malformed[0].reason.contains("inputSchema"), "{malformed:?}");
        assert_eq!(malformed[0].label(), "`stats`");
        assert_eq!(malformed[1].name, None);
        assert_eq!(malformed[1].label(), "the tool at index 12");
        assert!(malformed[1].reason.contains("name"), "{malformed:?}");
        assert_eq!(malformed[2].label(), "the tool at index 13");
    }

    #[test]
    fn a_page_without_a_tools_array_is_still_an_error() {
        assert!(serde_json::from_value::<TolerantToolsPage>(json!({})).is_err());
        assert!(serde_json::from_value::<TolerantToolsPage>(json!({ "tools": {} })).is_err());
    }
}
