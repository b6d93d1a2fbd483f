//! `mcp bridge --config FILE --listen`: the servers' sampling and elicitation requests, each
//! passed to the one HTTP host session it can be attributed to.
//!
//! The servers start before any host exists and every HTTP session shares them, so a
//! server's request names no host. They are started declaring `sampling` and `elicitation`
//! (form and URL mode), each also as a task ([`super::session_tasks`]), as the bridge's own
//! client ([`client_builder`]), and a request of a
//! server is attributed by the requests in flight: made while exactly one host session has
//! requests in flight to that server, it goes to that session, on behalf of the latest of
//! them (over Streamable HTTP the host reads it on that request's own stream). The client
//! core does not tell which of the bridge's requests a server request came with (for an HTTP
//! server, on which POST's stream it arrived), so the requests in flight are the evidence.
//! When it cannot be attributed the server gets a JSON-RPC error saying why:
//!
//! - no host session has a request in flight to that server (a server asking on its own,
//!   between calls), or more than one has: `-32603`, naming which case and how many;
//! - the one session's client did not declare the capability (`sampling`, `elicitation`, or
//!   URL mode for a URL-mode elicitation): `-32601`, as that client would answer directly;
//! - with `--stateless` there are no sessions to send anything to: `-32603`, saying so.
//!
//! Each request in flight to that server learns of the refusal ([`CallGuard::refused`]):
//! the router appends the reason to a tool error it then gets ([`super::router::NOT_FORWARDED`]).
//!
//! # Roots
//!
//! The servers are not told of roots with `--listen`, and a server's `roots/list` gets
//! `-32601` from the client core. Roots describe one host's workspace, and a server keeps
//! the list it gets and applies it to every later call, whoever makes it: one session's
//! roots would bound the others' calls (or show them its directories). A server without
//! roots uses its own configuration (a filesystem server, its command-line directories);
//! the hosts' `notifications/roots/list_changed` are not passed on either.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use mcp_proto::jsonrpc::ErrorObject;
use mcp_proto::session::EraPolicy;
use mcp_proto::types::{
    ClientCapabilities, ElicitationCapability, Implementation, SamplingCapability,
    TaskRequestsCapability, TasksCapability,
};
use mcp_tokio::ClientBuilder;
use mcp_tokio::mcp_driver::{RawAnswer, RawHandler};
use mcp_tokio::server::RequestContext;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// The host requests in flight to each server, by server name.
#[derive(Default)]
pub struct SessionCalls {
    /// `--stateless`: no request is in a session that could be sent anything.
    stateless: bool,
    next_key: AtomicU64,
    calls: Mutex<HashMap<String, Vec<Call>>>,
}

/// One host request in flight to a server.
struct Call {
    key: u64,
    /// The host session it came in (a router's number).
    session: u64,
    context: RequestContext,
    /// Why a request of the server was refused while this one was in flight, if one was.
    refused: Arc<Mutex<Option<String>>>,
}

/// A host request registered as in flight to a server, until dropped.
pub struct CallGuard {
    calls: Arc<SessionCalls>,
    server: String,
    key: u64,
    refused: Arc<Mutex<Option<String>>>,
}

impl CallGuard {
    /// Why a request of the server was refused while this call was in flight (the last
    /// reason), if one was.
    pub fn refused(&self) -> Option<String> {
        lock(&self.refused).clone()
    }
}

impl Drop for CallGuard {
    fn drop(&mut self) {
        let mut calls = lock(&self.calls.calls);
        if let Some(list) = calls.get_mut(&self.server) {
            list.retain(|c| c.key != self.key);
            if list.is_empty() {
                calls.remove(&self.server);
            }
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Why a server request went to no host session.
#[derive(Debug, PartialEq)]
enum Refusal {
    /// No session, or more than one (how many), has requests in flight to the server.
    Sessions(usize),
    /// The one session's client did not declare what the request needs.
    Undeclared(&'static str),
    /// The request in flight is not in a session (`--stateless`: each POST on its own), so
    /// nothing can be sent to its client.
    Sessionless,
}

impl Refusal {
    fn reason(&self, server: &str, method: &str) -> String {
        match self {
            Refusal::Sessions(0) => format!(
                "no host session has a request in flight to server {server:?}, so its \
                 {method} cannot be attributed to one"
            ),
            Refusal::Sessions(n) => format!(
                "{n} host sessions have requests in flight to server {server:?}, so its \
                 {method} cannot be attributed to one"
            ),
            Refusal::Undeclared(what) => format!(
                "the host session with requests in flight to server {server:?} did not \
                 declare {what}"
            ),
            Refusal::Sessionless => format!(
                "with --stateless every POST is served on its own, so there is no host \
                 session to send server {server:?}'s {method} to"
            ),
        }
    }

    fn code(&self) -> i64 {
        match self {
            Refusal::Sessions(_) | Refusal::Sessionless => ErrorObject::INTERNAL_ERROR,
            Refusal::Undeclared(_) => ErrorObject::METHOD_NOT_FOUND,
        }
    }
}

/// The one session among `sessions` (of the calls in flight to a server), or how many there
/// are when not exactly one.
fn one_session(sessions: impl IntoIterator<Item = u64>) -> Result<u64, Refusal> {
    let mut distinct: Vec<u64> = sessions.into_iter().collect();
    distinct.sort_unstable();
    distinct.dedup();
    match distinct[..] {
        [one] => Ok(one),
        _ => Err(Refusal::Sessions(distinct.len())),
    }
}

/// Whether a client of `capabilities` takes `method` with `params`: what it lacks if not.
fn declared(
    capabilities: Option<&ClientCapabilities>,
    method: &str,
    params: &Value,
) -> Result<(), Refusal> {
    let caps = capabilities.cloned().unwrap_or_default();
    match method {
        "sampling/createMessage" if caps.sampling.is_none() => {
            Err(Refusal::Undeclared("the sampling capability"))
        }
        "elicitation/create" => {
            let Some(elicitation) = caps.elicitation else {
                return Err(Refusal::Undeclared("the elicitation capability"));
            };
            // An empty `elicitation` object means form mode only.
            let url_mode = params.get("mode").and_then(Value::as_str) == Some("url");
            if url_mode && elicitation.url.is_none() {
                Err(Refusal::Undeclared("URL-mode elicitation"))
            } else if !url_mode && elicitation.form.is_none() && elicitation.url.is_some() {
                Err(Refusal::Undeclared("form-mode elicitation"))
            } else {
                Ok(())
            }
        }
        _ => Ok(()),
    }
}

impl SessionCalls {
    /// The table of a `--listen` bridge; `stateless` with `--stateless`.
    pub fn new(stateless: bool) -> Self {
        SessionCalls {
            stateless,
            ..SessionCalls::default()
        }
    }

    /// Registers a request of host session `session` (its `context`) as in flight to
    /// `server` until the guard is dropped. Call before forwarding it.
    pub fn enter(
        self: &Arc<Self>,
        server: &str,
        session: u64,
        context: &RequestContext,
    ) -> CallGuard {
        let key = self.next_key.fetch_add(1, Ordering::Relaxed);
        let refused = Arc::new(Mutex::new(None));
        lock(&self.calls)
            .entry(server.to_owned())
            .or_default()
            .push(Call {
                key,
                session,
                context: context.clone(),
                refused: refused.clone(),
            });
        CallGuard {
            calls: self.clone(),
            server: server.to_owned(),
            key,
            refused,
        }
    }

    /// The host request on whose behalf `server`'s `method` goes to a host, or the error
    /// for the server (every call in flight to it told why).
    fn attribute(
        &self,
        server: &str,
        method: &str,
        params: &Value,
    ) -> Result<RequestContext, ErrorObject> {
        let calls = lock(&self.calls);
        let in_flight = calls.get(server).map(Vec::as_slice).unwrap_or_default();
        let sessions = if self.stateless {
            Err(Refusal::Sessionless)
        } else {
            one_session(in_flight.iter().map(|c| c.session))
        };
        let decided = sessions.and_then(|session| {
            // The latest of that session's requests: the most likely to be still running.
            let call = in_flight
                .iter()
                .rev()
                .find(|c| c.session == session)
                .expect("one_session chose a session of these calls");
            declared(call.context.client_capabilities().as_ref(), method, params)?;
            Ok(call.context.clone())
        });
        decided.map_err(|refusal| {
            let reason = refusal.reason(server, method);
            tracing::info!("bridge: {reason}");
            for call in in_flight {
                *lock(&call.refused) = Some(reason.clone());
            }
            ErrorObject::new(refusal.code(), format!("mcp bridge: {reason}"))
        })
    }

    /// Passes `server`'s `method` to the host session it is attributed to and gives the
    /// host's answer; the error for the server when it cannot be attributed or the host did
    /// not answer. No deadline of its own: the server times its request out (and cancels it,
    /// which drops this future and cancels the request at the host). A task-augmented
    /// request is already the bridge's task: its answer is asked for as
    /// [`super::session_tasks`] says.
    ///
    /// The params and the answer pass as written (members in order, numbers as spelled),
    /// but for a related task's id, renamed host-visible, and a task-augmented request, whose
    /// `task` the bridge reads and may remove.
    pub async fn ask(
        &self,
        server: &str,
        method: &'static str,
        params: Option<Box<RawValue>>,
    ) -> RawAnswer {
        // Read to decide; what goes on is `params` as written.
        let value: Value = params
            .as_deref()
            .and_then(|p| serde_json::from_str(p.get()).ok())
            .unwrap_or(Value::Null);
        let context = self.attribute(server, method, &value)?;
        let params = super::tasks::related_to_host_raw(server, params)?;
        if value.get("task").is_some_and(Value::is_object) {
            return super::session_tasks::ask_for_task(&context, method, params).await;
        }
        super::session_tasks::request_raw(&context, method, params.as_deref()).await
    }
}

/// The capabilities the servers are told of with `--listen`: sampling, and elicitation in
/// form and URL mode, each also as a task of the bridge's ([`super::session_tasks`]); not
/// roots (see the [module docs](self)).
fn declared_to_servers() -> ClientCapabilities {
    let method = |name: &str| {
        let mut m = Map::new();
        m.insert(name.into(), Value::Object(Map::new()));
        m
    };
    ClientCapabilities {
        sampling: Some(SamplingCapability::default()),
        elicitation: Some(ElicitationCapability {
            form: Some(Map::new()),
            url: Some(Map::new()),
            ..Default::default()
        }),
        tasks: Some(TasksCapability {
            list: Some(Map::new()),
            cancel: Some(Map::new()),
            requests: Some(TaskRequestsCapability {
                sampling: Some(method("createMessage")),
                elicitation: Some(method("create")),
                ..Default::default()
            }),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// The client of `server` with `--listen`: the bridge's own identity, the client's newest
/// protocol version of the initialize era, sampling and elicitation passed to the host
/// session they are attributed to in `calls`, results passed on as they are.
pub fn client_builder(calls: &Arc<SessionCalls>, server: &str) -> ClientBuilder {
    let (sampling, elicitation) = (calls.clone(), calls.clone());
    let (for_sampling, for_elicitation) = (server.to_owned(), server.to_owned());
    ClientBuilder::new()
        .client_info(Implementation::new("mcp-bridge", env!("CARGO_PKG_VERSION")))
        .client_capabilities(declared_to_servers())
        .era_policy(EraPolicy::Initialize)
        // The bridge's client core keeps the servers' tasks (see `declared_to_servers`).
        .task_receiver(true)
        .sampling_handler(RawHandler(move |params: Option<Box<RawValue>>| {
            let (calls, server) = (sampling.clone(), for_sampling.clone());
            async move { calls.ask(&server, "sampling/createMessage", params).await }
        }))
        .elicitation_handler(RawHandler(move |params: Option<Box<RawValue>>| {
            let (calls, server) = (elicitation.clone(), for_elicitation.clone());
            async move { calls.ask(&server, "elicitation/create", params).await }
        }))
        // The hosts check results themselves; the bridge forwards them as they are.
        .validate_output(false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn exactly_one_session_is_chosen() {
        assert_eq!(one_session([4, 4, 4]), Ok(4));
        assert_eq!(one_session([]), Err(Refusal::Sessions(0)));
        assert_eq!(one_session([1, 2, 1]), Err(Refusal::Sessions(2)));
    }

    #[test]
    fn the_reasons_say_why_and_the_codes_match() {
        let none = Refusal::Sessions(0);
        assert!(
            none.reason("alpha", "sampling/createMessage")
                .starts_with("no host session")
        );
        assert_eq!(none.code(), ErrorObject::INTERNAL_ERROR);
        let two = Refusal::Sessions(2).reason("alpha", "elicitation/create");
        assert!(
            two.starts_with("2 host sessions") && two.contains("elicitation/create"),
            "{two}"
        );
        let undeclared = Refusal::Undeclared("the sampling capability");
        assert!(
            undeclared
                .reason("alpha", "x")
                .ends_with("did not declare the sampling capability")
        );
        assert_eq!(undeclared.code(), ErrorObject::METHOD_NOT_FOUND);
    }

    #[test]
    fn the_session_must_have_declared_what_the_request_needs() {
        let caps = |v: Value| serde_json::from_value::<ClientCapabilities>(v).expect("caps");
        let form = json!({"mode": "form", "message": "?"});
        let url = json!({"mode": "url", "url": "https://example.com", "message": "?"});
        let none = caps(json!({}));
        assert!(declared(Some(&none), "sampling/createMessage", &json!({})).is_err());
        assert_eq!(
            declared(None, "elicitation/create", &form),
            Err(Refusal::Undeclared("the elicitation capability"))
        );
        assert!(
            Refusal::Sessionless
                .reason("alpha", "x")
                .contains("--stateless")
        );
        let sampling = caps(json!({"sampling": {}}));
        assert_eq!(
            declared(Some(&sampling), "sampling/createMessage", &json!({})),
            Ok(())
        );
        // `elicitation: {}` is form mode only.
        let form_only = caps(json!({"elicitation": {}}));
        assert_eq!(
            declared(Some(&form_only), "elicitation/create", &form),
            Ok(())
        );
        assert_eq!(
            declared(Some(&form_only), "elicitation/create", &json!({})),
            Ok(())
        );
        assert_eq!(
            declared(Some(&form_only), "elicitation/create", &url),
            Err(Refusal::Undeclared("URL-mode elicitation"))
        );
        let url_only = caps(json!({"elicitation": {"url": {}}}));
        assert_eq!(
            declared(Some(&url_only), "elicitation/create", &url),
            Ok(())
        );
        assert!(declared(Some(&url_only), "elicitation/create", &form).is_err());
    }

    #[test]
    fn the_servers_are_told_of_sampling_and_elicitation_also_as_tasks_not_roots() {
        let caps = declared_to_servers();
        assert!(caps.sampling.is_some() && caps.roots.is_none());
        let elicitation = caps.elicitation.clone().expect("declared");
        assert!(elicitation.form.is_some() && elicitation.url.is_some());
        let tasks = caps.tasks.clone().expect("tasks declared");
        assert!(tasks.list.is_some() && tasks.cancel.is_some());
        for method in ["sampling/createMessage", "elicitation/create"] {
            assert!(
                super::super::session_tasks::runs_as_task(Some(&caps), method),
                "{method}"
            );
        }
    }
}
