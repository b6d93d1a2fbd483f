//! What the shell knows about the server for tab completion: tool, prompt and argument names,
//! resource URIs. Loaded once when the shell starts and again when the server says a list
//! changed. The tool listing is also kept whole for the session's `call`s ([`ToolCache`]).

use std::sync::{Arc, RwLock};

use mcp_proto::session::NotificationKind;
use mcp_proto::types::{Prompt, Tool};
use mcp_tokio::Client;

use crate::app::tool_cache::ToolCache;
use serde_json::Value;

/// A tool and the names of its arguments.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NamedArgs {
    /// The tool's or prompt's name.
    pub name: String,
    /// Its argument names: the `properties` of a tool's inputSchema, a prompt's arguments.
    pub args: Vec<String>,
}

/// The server's names, as last listed.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    /// Tools with their argument names.
    pub tools: Vec<NamedArgs>,
    /// Prompts with their argument names.
    pub prompts: Vec<NamedArgs>,
    /// Resource URIs.
    pub resources: Vec<String>,
    /// Resource URI templates (for `complete`).
    pub templates: Vec<String>,
}

/// The catalog as the completer (editor thread) and the refresher (runtime) share it.
pub type SharedCatalog = Arc<RwLock<Catalog>>;

impl NamedArgs {
    /// A tool's name and the property names of its inputSchema.
    pub fn of_tool(tool: &Tool) -> Self {
        let args = match tool.input_schema.get("properties") {
            Some(Value::Object(properties)) => properties.keys().cloned().collect(),
            _ => Vec::new(),
        };
        NamedArgs {
            name: tool.name.clone(),
            args,
        }
    }

    /// A prompt's name and argument names.
    pub fn of_prompt(prompt: &Prompt) -> Self {
        NamedArgs {
            name: prompt.name.clone(),
            args: prompt
                .arguments
                .iter()
                .flatten()
                .map(|a| a.name.clone())
                .collect(),
        }
    }
}

/// Which lists a notification makes stale.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum List {
    /// `tools/list`.
    Tools,
    /// `prompts/list`.
    Prompts,
    /// `resources/list` and `resources/templates/list`.
    Resources,
}

impl List {
    /// The list a `*/list_changed` notification is about.
    pub fn changed_by(kind: NotificationKind) -> Option<List> {
        match kind {
            NotificationKind::ToolsListChanged => Some(List::Tools),
            NotificationKind::PromptsListChanged => Some(List::Prompts),
            NotificationKind::ResourcesListChanged => Some(List::Resources),
            _ => None,
        }
    }
}

/// Lists everything the server declares (tools, prompts, resources) into `catalog` (and
/// the tools into `tool_cache`). A list that fails stays as it was: completion is a
/// convenience, never a reason to stop.
pub async fn load(client: &Client, catalog: &SharedCatalog, tool_cache: &ToolCache) {
    let caps = client.capabilities();
    if caps.tools.is_some() {
        refresh(client, catalog, tool_cache, List::Tools).await;
    }
    if caps.prompts.is_some() {
        refresh(client, catalog, tool_cache, List::Prompts).await;
    }
    if caps.resources.is_some() {
        refresh(client, catalog, tool_cache, List::Resources).await;
    }
}

/// Lists one kind again and replaces it in `catalog` (unchanged when the listing fails);
/// a tool listing also goes to `tool_cache`.
pub async fn refresh(client: &Client, catalog: &SharedCatalog, tool_cache: &ToolCache, list: List) {
    match list {
        List::Tools => {
            let generation = tool_cache.generation();
            if let Ok(tools) = client.list_tools().await {
                write(catalog).tools = tools.iter().map(NamedArgs::of_tool).collect();
                tool_cache.store(tools, generation);
            }
        }
        List::Prompts => {
            if let Ok(prompts) = client.list_prompts().await {
                write(catalog).prompts = prompts.iter().map(NamedArgs::of_prompt).collect();
            }
        }
        List::Resources => {
            if let Ok(resources) = client.list_resources().await {
                write(catalog).resources = resources.into_iter().map(|r| r.uri).collect();
            }
            if let Ok(templates) = client.list_resource_templates().await {
                write(catalog).templates = templates.into_iter().map(|t| t.uri_template).collect();
            }
        }
    }
}

fn write(catalog: &SharedCatalog) -> std::sync::RwLockWriteGuard<'_, Catalog> {
    // A poisoned lock only means a completer panicked mid-read; the data is still whole.
    catalog.write().unwrap_or_else(|e| e.into_inner())
}
