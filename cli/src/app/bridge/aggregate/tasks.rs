//! Tasks (protocol 2025-11-25) of every server, for the host: a task-augmented `tools/call`
//! goes to the tool's server like any call, and the task it makes is followed through the
//! bridge by its host-visible id.
//!
//! # Task ids
//!
//! A server's task `ID` is shown to the host as `SERVER/ID`: the configured server name
//! percent-encoded as in resource URIs ([`uri::server_prefix`]: it holds no `/`), then `/`,
//! then the server's own id unchanged. Two servers that both number their tasks `1` give
//! `alpha/1` and `beta/1`. The mapping needs no table, so it costs no memory per task, and a
//! host may ask about a task by an id it kept across a restart of the bridge (the task lives
//! on its server). The id is rewritten wherever a task shows: the `CreateTaskResult` of the
//! call, the results of `tasks/get` and `tasks/cancel`, `tasks/list` pages, the related-task
//! `_meta` of a `tasks/result` and of a server's sampling or elicitation request made for a
//! task, and `notifications/tasks/status`. `tasks/get`,
//! `tasks/result` and `tasks/cancel` go to the server the id names, with the server's own id;
//! an id that names no server of the file is `-32602` `unknown task`.
//!
//! # `tasks/list`
//!
//! The servers that are ready and offer `tasks.list` are listed in the config file's order.
//! A host page holds whole pages of those servers, one page of each at most: it ends with a
//! server's page that has a `nextCursor`, else with the last server's (so servers that do
//! not paginate give one page of every task). The host's `nextCursor` names that server and
//! its own cursor (base64url JSON), so following it needs no memory of the bridge either and
//! survives its restart. A
//! server that is no longer ready when the host follows a cursor naming it is skipped
//! (logged), and so is one whose listing fails; the others are still listed.
//!
//! # With `--listen`
//!
//! The HTTP sessions share the servers, and a server cannot tell them apart: the bridge binds
//! each task to the session that made it ([`super::task_owners`]; not with `--stateless`,
//! where every POST is a session of its own). A task's sampling or elicitation goes to the
//! session with requests in flight to its server (the one waiting on its `tasks/result`), as
//! [`super::server_requests`] decides.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use mcp_proto::jsonrpc::{ErrorObject, to_raw};
use mcp_proto::types::RELATED_TASK_META;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::uri;

/// The host-visible id of `server`'s task `id`.
pub fn to_host(server: &str, id: &str) -> String {
    format!("{}{id}", uri::server_prefix(server))
}

/// The server and the server's own task id behind a host-visible `id`; `None` when it is not
/// one this bridge wrote.
pub fn from_host(id: &str) -> Option<(String, &str)> {
    uri::split_server_prefix(id)
}

/// The `-32602` answer to `tasks/get`, `tasks/result` or `tasks/cancel` of `host_id`, an id
/// that names no task this host may see. Only an id that is not of the `SERVER/ID` form is
/// told the form; one that is (a server the file does not have, a task its server does not
/// know, another HTTP session's task) gets no more than "unknown task", which a task that
/// does not exist gets too.
pub fn unknown(host_id: &str) -> ErrorObject {
    let message = match from_host(host_id) {
        Some(_) => format!("unknown task: {host_id}"),
        None => format!(
            "unknown task: {host_id} (this bridge's task ids are SERVER/ID, as its answers give them)"
        ),
    };
    ErrorObject::new(ErrorObject::INVALID_PARAMS, message)
}

/// Renames the `taskId` of a task object (a `Task`, a `tasks/get` result, the params of
/// `notifications/tasks/status`).
fn rename(server: &str, task: &mut Value) {
    if let Some(Value::String(id)) = task.get_mut("taskId") {
        *id = to_host(server, id);
    }
}

/// `raw` decoded, changed by `change`, encoded again.
fn rewrite(raw: &RawValue, change: impl FnOnce(&mut Value)) -> Result<Box<RawValue>, ErrorObject> {
    let mut value: Value = serde_json::from_str(raw.get()).map_err(|e| {
        ErrorObject::new(
            ErrorObject::INTERNAL_ERROR,
            format!("mcp bridge: the server's answer is not JSON: {e}"),
        )
    })?;
    change(&mut value);
    to_raw(&value).map_err(|e| ErrorObject::new(ErrorObject::INTERNAL_ERROR, e.to_string()))
}

/// The answer to a task-augmented `tools/call` (a `CreateTaskResult`) with its task's id
/// made host-visible; an answer without a task (the server ran the call at once) as it is.
pub fn created_to_host(server: &str, result: &RawValue) -> Result<Box<RawValue>, ErrorObject> {
    rewrite(result, |v| {
        if let Some(task) = v.get_mut("task") {
            rename(server, task);
        }
    })
}

/// A task object (the result of `tasks/get` or `tasks/cancel`, the params of
/// `notifications/tasks/status`) with its id made host-visible.
pub fn task_to_host(server: &str, task: &RawValue) -> Result<Box<RawValue>, ErrorObject> {
    rewrite(task, |v| rename(server, v))
}

/// The result of `tasks/result` (the original request's result) with the task id of its
/// related-task `_meta` made host-visible.
pub fn payload_to_host(server: &str, result: &RawValue) -> Result<Box<RawValue>, ErrorObject> {
    rewrite(result, |v| related_to_host(server, v))
}

/// Makes the task id of the related-task `_meta` of `message` (a result, or the params of a
/// server's sampling or elicitation request made for a task) host-visible.
pub fn related_to_host(server: &str, message: &mut Value) {
    if let Some(related) = message
        .get_mut("_meta")
        .and_then(|m| m.get_mut(RELATED_TASK_META))
    {
        rename(server, related);
    }
}

/// [`related_to_host`] for params as written: passed on unchanged when they name no related
/// task (the common case), else with that task's id renamed and nothing else changed (the
/// members keep their order, the numbers their spelling).
pub fn related_to_host_raw(
    server: &str,
    params: Option<Box<RawValue>>,
) -> Result<Option<Box<RawValue>>, ErrorObject> {
    let Some(params) = params else {
        return Ok(None);
    };
    let Some(id) = related_task_id(params.get()) else {
        return Ok(Some(params));
    };
    let internal = |e: serde_json::Error| {
        ErrorObject::new(
            ErrorObject::INTERNAL_ERROR,
            format!("mcp bridge: renaming the related task: {e}"),
        )
    };
    let host_id = to_raw(&to_host(server, &id)).map_err(internal)?;
    let path = ["_meta", RELATED_TASK_META, "taskId"];
    match mcp_proto::jsonrpc::with_member_at(params.get(), &path, &host_id).map_err(internal)? {
        Some(renamed) => RawValue::from_string(renamed).map(Some).map_err(internal),
        // Read just above: the path is there.
        None => Ok(Some(params)),
    }
}

/// The task id of the related-task `_meta` of `message` (an object's text), if it names one.
fn related_task_id(message: &str) -> Option<String> {
    use mcp_proto::jsonrpc::member;
    let meta = member(message, "_meta").ok()??;
    let related = member(meta.get(), RELATED_TASK_META).ok()??;
    let id = member(related.get(), "taskId").ok()??;
    serde_json::from_str(id.get()).ok()
}

/// Where a host's `tasks/list` goes on: a server, and that server's own cursor (`None`: its
/// first page).
#[derive(Debug, Serialize, Deserialize, PartialEq)]
struct PageCursor {
    server: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    cursor: Option<String>,
}

impl PageCursor {
    fn encode(&self) -> String {
        // A struct of two strings always serializes.
        let json = serde_json::to_vec(self).expect("a cursor serializes");
        URL_SAFE_NO_PAD.encode(json)
    }

    fn decode(text: &str) -> Option<Self> {
        let json = URL_SAFE_NO_PAD.decode(text).ok()?;
        serde_json::from_slice(&json).ok()
    }
}

/// One server's page of tasks (each a `Task` object, its server's own id) and its cursor.
pub type ServerPage = (Vec<Value>, Option<String>);

/// One host page of `tasks/list` (see the [module docs](self)): `servers` are every server
/// of the file in order, each with whether it can be listed now; `fetch` lists one page of a
/// server (its error is logged and the server skipped). `cursor` is the host's.
///
/// # Errors
///
/// `-32602` for a cursor this bridge did not write, or that names no server of the file.
pub async fn list_page<F, Fut>(
    servers: &[(String, bool)],
    cursor: Option<&str>,
    fetch: F,
) -> Result<Value, ErrorObject>
where
    F: Fn(String, Option<String>) -> Fut,
    Fut: Future<Output = Result<ServerPage, String>>,
{
    let invalid = || {
        ErrorObject::new(
            ErrorObject::INVALID_PARAMS,
            "invalid cursor: not one this bridge's tasks/list gave",
        )
    };
    let (mut index, mut server_cursor) = match cursor {
        None => (0, None),
        Some(text) => {
            let cursor = PageCursor::decode(text).ok_or_else(invalid)?;
            let index = servers
                .iter()
                .position(|(name, _)| *name == cursor.server)
                .ok_or_else(invalid)?;
            (index, cursor.cursor)
        }
    };
    let mut tasks = Vec::new();
    while let Some((server, listable)) = servers.get(index) {
        let start = server_cursor.take();
        index += 1;
        if !listable {
            if start.is_some() {
                tracing::warn!(
                    "bridge: server {server:?} is not ready: the rest of its tasks are not listed"
                );
            }
            continue;
        }
        match fetch(server.clone(), start).await {
            Ok((page, next)) => {
                tasks.extend(page.into_iter().map(|mut task| {
                    rename(server, &mut task);
                    task
                }));
                if let Some(next) = next {
                    let cursor = PageCursor {
                        server: server.clone(),
                        cursor: Some(next),
                    };
                    return Ok(page_value(tasks, Some(cursor)));
                }
            }
            Err(e) => tracing::warn!("bridge: listing the tasks of server {server:?} failed: {e}"),
        }
    }
    Ok(page_value(tasks, None))
}

/// A `ListTasksResult`.
fn page_value(tasks: Vec<Value>, next: Option<PageCursor>) -> Value {
    let mut page = Map::new();
    page.insert("tasks".into(), Value::Array(tasks));
    if let Some(next) = next {
        page.insert("nextCursor".into(), Value::String(next.encode()));
    }
    Value::Object(page)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::collections::HashMap;

    #[test]
    fn an_unknown_task_is_told_the_id_form_only_when_it_lacks_it() {
        let bare = unknown("abc");
        assert_eq!(bare.code, ErrorObject::INVALID_PARAMS);
        assert_eq!(
            bare.message,
            "unknown task: abc (this bridge's task ids are SERVER/ID, as its answers give them)"
        );
        // Already SERVER/ID: no advice to prefix it again.
        assert_eq!(unknown("gamma/abc").message, "unknown task: gamma/abc");
        assert_eq!(unknown("a%20b/7").message, "unknown task: a%20b/7");
    }

    fn raw(v: Value) -> Box<RawValue> {
        to_raw(&v).expect("encodes")
    }

    fn value(r: &RawValue) -> Value {
        serde_json::from_str(r.get()).expect("json")
    }

    #[test]
    fn the_same_id_of_two_servers_gives_two_host_ids_that_map_back() {
        let (a, b) = (to_host("alpha", "1"), to_host("beta", "1"));
        assert_ne!(a, b);
        assert_eq!(from_host(&a), Some(("alpha".to_owned(), "1")));
        assert_eq!(from_host(&b), Some(("beta".to_owned(), "1")));
        // Odd server names and ids with slashes of their own survive the round trip.
        for (server, id) in [("a/b", "x/y"), ("my server", ""), ("a__b", "日本")] {
            let host = to_host(server, id);
            assert_eq!(from_host(&host), Some((server.to_owned(), id)), "{host}");
        }
        assert_eq!(from_host("no-slash"), None);
        assert_eq!(from_host("/x"), None);
    }

    #[test]
    fn a_related_task_id_is_renamed_in_params_as_written_and_nothing_else() {
        let written = |s: &str| RawValue::from_string(s.to_owned()).expect("JSON");
        let params = r#"{"maxTokens":100,"t":0.50,"_meta":{"z":1,"io.modelcontextprotocol/related-task":{"taskId":"7"},"a":2.0}}"#;
        let renamed = related_to_host_raw("demo", Some(written(params)))
            .expect("renamed")
            .expect("params");
        assert_eq!(renamed.get(), params.replace(r#""7""#, r#""demo/7""#));
        // No related task (or no task id in it): the params themselves, spacing and all.
        for same in [
            r#"{ "b": 1.0, "a": 1 }"#,
            r#"{"_meta":{"io.modelcontextprotocol/related-task":{}}}"#,
            "[1]",
        ] {
            let passed = related_to_host_raw("demo", Some(written(same))).expect("passed");
            assert_eq!(passed.expect("params").get(), same);
        }
        assert!(related_to_host_raw("demo", None).expect("none").is_none());
    }

    #[test]
    fn ids_are_rewritten_wherever_a_task_shows() {
        let created = created_to_host(
            "demo",
            &raw(json!({"task": {"taskId": "7", "status": "working"}})),
        )
        .expect("rewrites");
        assert_eq!(value(&created)["task"]["taskId"], "demo/7");
        assert_eq!(value(&created)["task"]["status"], "working");
        let got = task_to_host("demo", &raw(json!({"taskId": "7", "ttl": null}))).expect("ok");
        assert_eq!(value(&got), json!({"taskId": "demo/7", "ttl": null}));
        let payload = payload_to_host(
            "demo",
            &raw(json!({"content": [], "_meta": {RELATED_TASK_META: {"taskId": "7"}}})),
        )
        .expect("ok");
        assert_eq!(
            value(&payload)["_meta"][RELATED_TASK_META]["taskId"],
            "demo/7"
        );
        let mut asked = json!({"message": "?", "_meta": {RELATED_TASK_META: {"taskId": "7"}}});
        related_to_host("demo", &mut asked);
        assert_eq!(asked["_meta"][RELATED_TASK_META]["taskId"], "demo/7");
        // A direct answer to a call that asked for a task is left as it is.
        let direct = created_to_host("demo", &raw(json!({"content": []}))).expect("ok");
        assert_eq!(value(&direct), json!({"content": []}));
    }

    /// Pages of fake servers: `a` has two pages, `b` none, `c` one, `down` is not ready.
    fn servers() -> Vec<(String, bool)> {
        [("a", true), ("b", true), ("down", false), ("c", true)]
            .iter()
            .map(|(s, l)| ((*s).to_owned(), *l))
            .collect()
    }

    async fn fetch(server: String, cursor: Option<String>) -> Result<ServerPage, String> {
        let task = |id: &str| json!({"taskId": id, "status": "working"});
        let pages: HashMap<(&str, Option<&str>), ServerPage> = HashMap::from([
            (("a", None), (vec![task("1")], Some("a-2".to_owned()))),
            (("a", Some("a-2")), (vec![task("2")], None)),
            (("b", None), (vec![], None)),
            (("c", None), (vec![task("1")], None)),
        ]);
        pages
            .get(&(server.as_str(), cursor.as_deref()))
            .cloned()
            .ok_or_else(|| format!("no page {server} {cursor:?}"))
    }

    async fn all_pages(servers: &[(String, bool)]) -> Vec<Vec<String>> {
        let mut pages = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let page = list_page(servers, cursor.as_deref(), fetch)
                .await
                .expect("a page");
            let ids = page["tasks"]
                .as_array()
                .expect("tasks")
                .iter()
                .map(|t| t["taskId"].as_str().expect("an id").to_owned())
                .collect();
            pages.push(ids);
            match page.get("nextCursor") {
                Some(Value::String(next)) => cursor = Some(next.clone()),
                _ => return pages,
            }
        }
    }

    #[tokio::test]
    async fn pages_follow_each_server_and_skip_the_empty_and_the_not_ready() {
        assert_eq!(
            all_pages(&servers()).await,
            [vec!["a/1"], vec!["a/2", "c/1"]]
        );
        // Nothing to list at all: one empty page, no cursor.
        let none = [("x".to_owned(), false)];
        assert_eq!(all_pages(&none).await, [Vec::<String>::new()]);
    }

    #[tokio::test]
    async fn a_cursor_survives_its_server_going_away_and_a_foreign_one_is_refused() {
        let first = list_page(&servers(), None, fetch).await.expect("a page");
        let cursor = first["nextCursor"].as_str().expect("a cursor").to_owned();
        // `a` is no longer ready when the host follows the cursor: the listing goes on after it.
        let mut later = servers();
        later[0].1 = false;
        let page = list_page(&later, Some(&cursor), fetch)
            .await
            .expect("a page");
        assert_eq!(page["tasks"][0]["taskId"], "c/1");
        assert!(page.get("nextCursor").is_none(), "{page}");
        for bad in [
            "not base64 !",
            "e30",
            &PageCursor {
                server: "gone".into(),
                cursor: None,
            }
            .encode(),
        ] {
            let e = list_page(&servers(), Some(bad), fetch)
                .await
                .expect_err("refused");
            assert_eq!(e.code, ErrorObject::INVALID_PARAMS, "{bad}");
        }
    }

    #[tokio::test]
    async fn a_failing_server_is_skipped() {
        let servers = vec![("broken".to_owned(), true), ("c".to_owned(), true)];
        assert_eq!(all_pages(&servers).await, [vec!["c/1"]]);
    }
}
