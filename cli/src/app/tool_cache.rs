//! The server's tool listing as `call` and `load` use it: for typing arguments from each
//! tool's input schema and for "did you mean" when a name is wrong.
//!
//! A one-shot command lists the tools once. `mcp shell` keeps one [`ToolCache`] for its
//! session, so a `call` does not list every page again: the listing is dropped when the
//! server says its tools changed (`notifications/tools/list_changed`), and fetched again
//! when a call names a tool the listing does not have (the server may have added it
//! without saying so).

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use mcp_proto::types::{MalformedTool, Tool};
use mcp_tokio::Client;

/// The last tool listing of one session, shared by the commands run on it.
#[derive(Debug, Default)]
pub struct ToolCache {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// The listing, `None` until fetched and after [`ToolCache::forget`].
    tools: Option<Arc<Vec<Tool>>>,
    /// The entries of the last listing dropped as malformed.
    malformed: Vec<MalformedTool>,
    /// Why the last listing failed, if it did.
    failed: Option<String>,
    /// Bumped by [`ToolCache::forget`]: a listing fetched across it may be stale and is not
    /// kept.
    generation: u64,
}

impl ToolCache {
    /// The tools of the server, listed now unless the cache has them; `None` when the server
    /// has no tools capability or listing failed (a call then goes ahead untyped, and its
    /// own error says what is wrong).
    pub async fn tools(&self, client: &Client) -> Option<Arc<Vec<Tool>>> {
        if let Some(tools) = self.lock().tools.clone() {
            return Some(tools);
        }
        self.fetch(client).await
    }

    /// Like [`tools`](Self::tools), but lists again when the cached listing has no tool
    /// named `name`.
    pub async fn tools_naming(&self, client: &Client, name: &str) -> Option<Arc<Vec<Tool>>> {
        let cached = self.lock().tools.clone();
        match cached {
            Some(tools) if tools.iter().any(|t| t.name == name) => Some(tools),
            _ => self.fetch(client).await,
        }
    }

    /// Keeps `tools` as the listing (a listing made elsewhere, e.g. for completion), unless
    /// the cache was told to forget since `generation` was read.
    pub fn store(&self, tools: Vec<Tool>, generation: u64) {
        let mut state = self.lock();
        if state.generation == generation {
            state.tools = Some(Arc::new(tools));
        }
    }

    /// The generation to hand to [`store`](Self::store) for a listing started now.
    pub fn generation(&self) -> u64 {
        self.lock().generation
    }

    /// Drops the listing: the server's tools changed.
    pub fn forget(&self) {
        let mut state = self.lock();
        state.tools = None;
        state.generation += 1;
    }

    /// Why a call of `name` cannot be typed from its schema nor its result checked against
    /// its `outputSchema`, as of the last listing: its entry was malformed, or the listing
    /// failed. `None` when it was listed fine (or is simply not listed: "did you mean" says
    /// so).
    pub fn why_unchecked(&self, name: &str) -> Option<String> {
        let state = self.lock();
        if let Some(dropped) = state
            .malformed
            .iter()
            .find(|m| m.name.as_deref() == Some(name))
        {
            return Some(format!(
                "the server's tools/list entry of `{name}` is malformed ({})",
                dropped.reason
            ));
        }
        state
            .failed
            .as_ref()
            .map(|e| format!("the server's tools could not be listed ({e})"))
    }

    async fn fetch(&self, client: &Client) -> Option<Arc<Vec<Tool>>> {
        client.capabilities().tools.as_ref()?;
        let generation = self.generation();
        let listed = client.list_tools_checked().await;
        let mut state = self.lock();
        let (tools, malformed) = match listed {
            Ok(listed) => listed,
            Err(e) => {
                state.failed = Some(e.to_string());
                return None;
            }
        };
        let tools = Arc::new(tools);
        state.failed = None;
        state.malformed = malformed;
        if state.generation == generation {
            state.tools = Some(tools.clone());
        }
        Some(tools)
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A poisoned lock only means a panic elsewhere mid-update of two plain fields.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str) -> Tool {
        serde_json::from_value(serde_json::json!({
            "name": name,
            "inputSchema": { "type": "object" }
        }))
        .expect("a tool")
    }

    #[test]
    fn a_listing_across_a_forget_is_not_kept() {
        let cache = ToolCache::default();
        let before = cache.generation();
        cache.forget();
        cache.store(vec![tool("old")], before);
        assert!(cache.lock().tools.is_none());
        cache.store(vec![tool("new")], cache.generation());
        let kept = cache.lock().tools.clone().expect("kept");
        assert_eq!(kept[0].name, "new");
        cache.forget();
        assert!(cache.lock().tools.is_none());
    }
}
