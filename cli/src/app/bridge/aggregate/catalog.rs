//! What the host is offered: every ready server's tools, prompts and resources under
//! host-visible names, and the way back from such a name to its server.
//!
//! - Tools carry the manager's namespaced names ([`Manager::tools`], the names `mcp tools
//!   --all --config FILE` shows), filtered by `--allow` / `--deny`; a server still coming up
//!   is offered from its tool cache once the start-up deadline has passed.
//! - Prompts are named `server__prompt` by the same rules, in a table of their own
//!   ([`ToolNamespace`]), filled as prompts are listed.
//! - Resources and resource templates get `mcp-bridge://SERVER/URI` ([`super::uri`]).
//!
//! Prompts and resources are listed from the servers that are ready when the host asks; one
//! server failing to list is logged and left out, the others are still offered.

use std::sync::{Mutex, PoisonError};

use futures_util::future::join_all;
use mcp_manager::naming::ToolNamespace;
use mcp_manager::reconnect::ServerStatus;
use mcp_proto::types::{Prompt, Resource, ResourceTemplate, Tool};
use mcp_tokio::{Client, Manager};

use super::filter::ToolFilter;
use super::uri;

/// The host-visible tools: each [`Tool`] as its server lists it, named by its namespaced
/// name, without those `--allow` / `--deny` keep from the host.
pub fn tools(manager: &Manager, filter: &ToolFilter) -> Vec<Tool> {
    manager
        .tools()
        .into_iter()
        .filter(|t| filter.offers(&t.name))
        .map(|t| Tool {
            name: t.name,
            ..t.tool
        })
        .collect()
}

/// Every ready server and its client, in the config file's order.
pub fn ready_clients(manager: &Manager) -> Vec<(String, Client)> {
    manager
        .status()
        .into_iter()
        .filter(|(_, status)| *status == ServerStatus::Ready)
        .filter_map(|(name, _)| manager.client(&name).map(|c| (name, c)))
        .collect()
}

/// Lists `what` on every ready server whose capabilities `offers`, at once; a server whose
/// listing fails is logged and left out.
async fn list_each<T, F, Fut>(
    manager: &Manager,
    what: &str,
    offers: impl Fn(&Client) -> bool,
    list: F,
) -> Vec<(String, Vec<T>)>
where
    F: Fn(Client) -> Fut,
    Fut: Future<Output = Result<Vec<T>, mcp_tokio::Error>>,
{
    let servers: Vec<_> = ready_clients(manager)
        .into_iter()
        .filter(|(_, c)| offers(c))
        .collect();
    let lists = join_all(servers.iter().map(|(_, c)| list(c.clone()))).await;
    servers
        .into_iter()
        .zip(lists)
        .filter_map(|((server, _), listed)| match listed {
            Ok(items) => Some((server, items)),
            Err(e) => {
                tracing::warn!("bridge: listing {what} of server {server:?} failed: {e}");
                None
            }
        })
        .collect()
}

/// The host-visible prompts, named `server__prompt`; their names go into `names`.
pub async fn prompts(manager: &Manager, names: &Mutex<ToolNamespace>) -> Vec<Prompt> {
    let lists = list_each(
        manager,
        "prompts",
        |c| c.capabilities().prompts.is_some(),
        |c| async move { c.list_prompts().await },
    )
    .await;
    let mut names = names.lock().unwrap_or_else(PoisonError::into_inner);
    let mut out = Vec::new();
    for (server, prompts) in lists {
        // The server's list is now the truth: names of prompts it dropped go.
        names.remove_server(&server);
        for prompt in prompts {
            let name = names.insert(&server, &prompt.name);
            out.push(Prompt { name, ..prompt });
        }
    }
    out
}

/// The host-visible resources, each under `mcp-bridge://SERVER/URI`.
pub async fn resources(manager: &Manager) -> Vec<Resource> {
    list_each(
        manager,
        "resources",
        |c| c.capabilities().resources.is_some(),
        |c| async move { c.list_resources().await },
    )
    .await
    .into_iter()
    .flat_map(|(server, list)| {
        list.into_iter().map(move |r| Resource {
            uri: uri::to_host(&server, &r.uri),
            ..r
        })
    })
    .collect()
}

/// The host-visible resource templates, each under `mcp-bridge://SERVER/TEMPLATE`.
pub async fn resource_templates(manager: &Manager) -> Vec<ResourceTemplate> {
    list_each(
        manager,
        "resource templates",
        |c| c.capabilities().resources.is_some(),
        |c| async move { c.list_resource_templates().await },
    )
    .await
    .into_iter()
    .flat_map(|(server, list)| {
        list.into_iter().map(move |t| ResourceTemplate {
            uri_template: uri::to_host(&server, &t.uri_template),
            ..t
        })
    })
    .collect()
}

/// The server and the server's own name behind a host-visible prompt name; the prompts are
/// listed again first when the name is not known yet (a host that asks for a prompt it
/// listed before the bridge restarted, or before its server came up).
pub async fn resolve_prompt(
    manager: &Manager,
    names: &Mutex<ToolNamespace>,
    name: &str,
) -> Option<(String, String)> {
    let lookup = || {
        names
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .resolve(name)
            .map(|(s, p)| (s.to_owned(), p.to_owned()))
    };
    if let Some(found) = lookup() {
        return Some(found);
    }
    prompts(manager, names).await;
    lookup()
}
