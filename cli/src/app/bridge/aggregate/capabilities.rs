//! What the aggregate server declares to the host, decided once at `initialize` (a
//! session's capabilities cannot change afterwards).
//!
//! - `tools` with `listChanged`, always: servers come and go, and the tool list with them.
//! - `prompts` and `resources` (with `listChanged`; `subscribe` too) when a ready server
//!   offers them, or when some server is not up yet (it may offer them once it is): their
//!   lists are then merely empty until it is.
//! - `completions` under the same rule; `logging` always (the host's level is set on every
//!   server, and servers' log messages reach the host).
//! - `tasks` (protocol 2025-11-25) when a ready server offers it, or some server is not up
//!   yet: `list`, `cancel` and task-augmented `tools/call` each when some such server offers
//!   it ([`super::tasks`] routes them).
//! - Nothing else: experimental capabilities are not passed on.

use mcp_proto::types::{
    PromptsCapability, ResourcesCapability, ServerCapabilities, TaskRequestsCapability,
    TasksCapability, ToolsCapability,
};
use serde_json::{Map, Value};

/// The host-facing capabilities, from the capabilities of the servers that are ready
/// (`ready`) and whether any other server may still come up (`some_coming_up`).
pub fn union(ready: &[&ServerCapabilities], some_coming_up: bool) -> ServerCapabilities {
    let any =
        |offers: fn(&ServerCapabilities) -> bool| some_coming_up || ready.iter().any(|c| offers(c));
    ServerCapabilities {
        tools: Some(ToolsCapability {
            list_changed: Some(true),
            ..Default::default()
        }),
        prompts: any(|c| c.prompts.is_some()).then(|| PromptsCapability {
            list_changed: Some(true),
            ..Default::default()
        }),
        resources: any(|c| c.resources.is_some()).then(|| ResourcesCapability {
            subscribe: Some(true),
            list_changed: Some(true),
            ..Default::default()
        }),
        completions: any(|c| c.completions.is_some()).then(Map::new),
        logging: Some(Map::new()),
        tasks: any(|c| c.tasks.is_some()).then(|| TasksCapability {
            list: any(|c| c.tasks.as_ref().is_some_and(|t| t.list.is_some())).then(Map::new),
            cancel: any(|c| c.tasks.as_ref().is_some_and(|t| t.cancel.is_some())).then(Map::new),
            requests: any(tool_calls_as_tasks).then(|| TaskRequestsCapability {
                tools: Some(Map::from_iter([(
                    "call".to_owned(),
                    Value::Object(Map::new()),
                )])),
                ..Default::default()
            }),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// Whether a server accepts task-augmented `tools/call` (`tasks.requests.tools.call`).
fn tool_calls_as_tasks(c: &ServerCapabilities) -> bool {
    c.tasks
        .as_ref()
        .and_then(|t| t.requests.as_ref())
        .and_then(|r| r.tools.as_ref())
        .is_some_and(|tools| tools.contains_key("call"))
}

/// The servers' instructions, each under its server's name, for the host's `initialize`
/// answer; `None` when no server has any.
pub fn instructions<'a>(servers: impl IntoIterator<Item = (&'a str, &'a str)>) -> Option<String> {
    let parts: Vec<String> = servers
        .into_iter()
        .filter(|(_, text)| !text.trim().is_empty())
        .map(|(server, text)| format!("## {server}\n\n{}", text.trim()))
        .collect();
    (!parts.is_empty()).then(|| parts.join("\n\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_prompts() -> ServerCapabilities {
        ServerCapabilities {
            prompts: Some(PromptsCapability::default()),
            ..Default::default()
        }
    }

    #[test]
    fn tools_and_logging_always() {
        let caps = union(&[], false);
        assert_eq!(caps.tools.and_then(|t| t.list_changed), Some(true));
        assert!(caps.logging.is_some());
        assert!(caps.prompts.is_none() && caps.resources.is_none() && caps.completions.is_none());
        assert!(caps.tasks.is_none());
    }

    #[test]
    fn tasks_are_declared_as_far_as_some_server_offers_them() {
        let listing = ServerCapabilities {
            tasks: Some(TasksCapability {
                list: Some(Map::new()),
                ..Default::default()
            }),
            ..Default::default()
        };
        let calling: ServerCapabilities = serde_json::from_value(serde_json::json!({
            "tasks": {"cancel": {}, "requests": {"tools": {"call": {}}}}
        }))
        .expect("capabilities");
        let tasks = union(&[&listing, &with_prompts()], false)
            .tasks
            .expect("declared");
        assert!(tasks.list.is_some() && tasks.cancel.is_none() && tasks.requests.is_none());
        let tasks = union(&[&listing, &calling], false).tasks.expect("declared");
        assert!(tasks.list.is_some() && tasks.cancel.is_some());
        assert!(
            tasks
                .requests
                .and_then(|r| r.tools)
                .is_some_and(|t| t.contains_key("call"))
        );
    }

    #[test]
    fn a_ready_servers_prompts_are_declared_with_list_changed() {
        let caps = union(&[&ServerCapabilities::default(), &with_prompts()], false);
        assert_eq!(caps.prompts.and_then(|p| p.list_changed), Some(true));
        assert!(caps.resources.is_none());
    }

    #[test]
    fn a_server_still_coming_up_may_offer_anything() {
        let caps = union(&[], true);
        let resources = caps.resources.expect("declared");
        assert_eq!(
            (resources.subscribe, resources.list_changed),
            (Some(true), Some(true))
        );
        assert!(caps.prompts.is_some() && caps.completions.is_some());
        let tasks = caps.tasks.expect("declared");
        assert!(tasks.list.is_some() && tasks.cancel.is_some() && tasks.requests.is_some());
    }

    #[test]
    fn instructions_are_headed_by_server() {
        assert_eq!(instructions([("a", " "), ("b", "")]), None);
        assert_eq!(
            instructions([("a", "Use a.\n"), ("b", ""), ("c", "Use c.")]).as_deref(),
            Some("## a\n\nUse a.\n\n## c\n\nUse c.")
        );
    }
}
