//! Answering server-to-client requests: roots, sampling, elicitation.
//!
//! Two ways to register a handler on the [`ClientBuilder`](crate::ClientBuilder):
//!
//! - typed, with the structs of [`mcp_proto::types`] in and out:
//!   [`on_sampling`](crate::ClientBuilder::on_sampling) (`CreateMessageParams` to
//!   `CreateMessageResult`), [`on_elicitation`](crate::ClientBuilder::on_elicitation)
//!   (`ElicitParams` to `ElicitResult`), [`on_roots`](crate::ClientBuilder::on_roots) and
//!   [`roots`](crate::ClientBuilder::roots) ([`Root`]); params that do not decode are answered
//!   with -32602 before the handler runs;
//! - untyped, with raw JSON: [`sampling_handler`](crate::ClientBuilder::sampling_handler),
//!   [`elicitation_handler`](crate::ClientBuilder::elicitation_handler) and
//!   [`roots_handler`](crate::ClientBuilder::roots_handler) take implementations of
//!   [`SamplingHandler`], [`ElicitationHandler`] and [`RootsHandler`] (any
//!   `Fn(Value) -> impl Future<Output = Result<Value, ErrorObject>>` for the first two).
//!
//! Every handler also has a raw form (`list_roots_raw`, `create_message_raw`, `elicit_raw`,
//! `query_raw`): the params and the answer as JSON text. By default it decodes the params
//! into a `Value`, runs the handler and encodes its answer (which sorts an object's members
//! and writes numbers as `serde_json` does); a handler that passes the request on (a bridge
//! forwarding it to its host) overrides it to pass the text on as written: the members in
//! their order, the numbers as they were spelled.
//!
//! Exactly
//! the capabilities with a handler are declared in `initialize`; the core answers every other
//! server request with -32601 itself. Each request runs its handler on its own task, so a slow
//! handler (a human answering an elicitation) never blocks the connection; when the server
//! cancels its request, the handler's future is dropped.
//!
//! A request that a task of the server is waiting for (the task is `input_required`) comes
//! to the same handler; the typed params say which task it is
//! ([`ElicitParams::related_task`](mcp_proto::types::ElicitParams::related_task),
//! [`CreateMessageParams::related_task`](mcp_proto::types::CreateMessageParams::related_task))
//! and the answer carries the task's related-task `_meta` back. With
//! [`task_receiver`](crate::ClientBuilder::task_receiver), sampling and elicitation requests
//! may also arrive as tasks of the client's own: the same handlers run them. With a
//! [`TaskQueryHandler`] ([`host_task_queries`](crate::ClientBuilder::host_task_queries)),
//! the handlers make such tasks themselves (a bridge's host does): the request reaches them
//! with its `task`, and the server's `tasks/*` queries reach the query handler.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use mcp_proto::jsonrpc::ErrorObject;
pub use mcp_proto::types::Root;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

mod typed;

/// The future a handler returns: borrowed from the handler, sendable.
pub type HandlerFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A raw handler's answer: the result's JSON text as it goes to the server, or the error.
pub type RawAnswer = Result<Box<RawValue>, ErrorObject>;

/// The params of a server request as a `Value` (`Null` when there are none), for a handler
/// that takes one.
fn params_value(params: Option<&RawValue>) -> Value {
    params
        .and_then(|p| serde_json::from_str(p.get()).ok())
        .unwrap_or(Value::Null)
}

/// A handler's `Value` answer as JSON text.
fn encode_answer(answer: Result<Value, ErrorObject>) -> RawAnswer {
    answer.and_then(|v| mcp_proto::jsonrpc::to_raw(&v).map_err(internal))
}

/// Answers `roots/list`. Registering one declares the `roots` capability.
pub trait RootsHandler: Send + Sync + 'static {
    /// The current roots.
    fn list_roots(&self) -> HandlerFuture<'_, Result<Vec<Root>, ErrorObject>>;

    /// Whether the roots may change during a connection; `true` declares `roots.listChanged`,
    /// a promise to send `notifications/roots/list_changed` (with
    /// [`Client::notify`](crate::Client::notify)) whenever they do. Default: `false`.
    fn list_changed(&self) -> bool {
        false
    }

    /// The `roots/list` result as JSON text. By default `{"roots": [...]}` of
    /// [`list_roots`](Self::list_roots); override it to pass on an answer as written.
    fn list_roots_raw(&self) -> HandlerFuture<'_, RawAnswer> {
        Box::pin(async move {
            let roots = self.list_roots().await?;
            let mut result = Map::new();
            result.insert(
                "roots".into(),
                serde_json::to_value(roots).map_err(internal)?,
            );
            encode_answer(Ok(Value::Object(result)))
        })
    }
}

/// A fixed list of roots.
#[derive(Debug, Clone, Default)]
pub struct StaticRoots(pub Vec<Root>);

impl RootsHandler for StaticRoots {
    fn list_roots(&self) -> HandlerFuture<'_, Result<Vec<Root>, ErrorObject>> {
        let roots = self.0.clone();
        Box::pin(async move { Ok(roots) })
    }
}

/// Answers `sampling/createMessage`: `params` is the request's params, the result is the
/// `CreateMessageResult` object. Registering one declares the `sampling` capability.
///
/// Any `Fn(Value) -> impl Future<Output = Result<Value, ErrorObject>>` is a handler.
pub trait SamplingHandler: Send + Sync + 'static {
    /// Produces the model's message.
    fn create_message(&self, params: Value) -> HandlerFuture<'_, Result<Value, ErrorObject>>;

    /// [`create_message`](Self::create_message) with the params and the result as JSON text.
    /// By default it decodes the params into a `Value` and encodes the answer (members sorted,
    /// numbers as `serde_json` writes them); override it to pass them on as written.
    fn create_message_raw(&self, params: Option<Box<RawValue>>) -> HandlerFuture<'_, RawAnswer> {
        Box::pin(async move {
            encode_answer(self.create_message(params_value(params.as_deref())).await)
        })
    }
}

impl<F, Fut> SamplingHandler for F
where
    F: Fn(Value) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Value, ErrorObject>> + Send + 'static,
{
    fn create_message(&self, params: Value) -> HandlerFuture<'_, Result<Value, ErrorObject>> {
        Box::pin(self(params))
    }
}

/// Answers `elicitation/create`: `params` is the request's params, the result is the
/// `ElicitResult` object (`{"action": "accept", "content": {...}}`). Registering one declares
/// the `elicitation` capability. Request deadlines are paused while it runs (a human answers).
///
/// Any `Fn(Value) -> impl Future<Output = Result<Value, ErrorObject>>` is a handler.
pub trait ElicitationHandler: Send + Sync + 'static {
    /// Asks the user.
    fn elicit(&self, params: Value) -> HandlerFuture<'_, Result<Value, ErrorObject>>;

    /// [`elicit`](Self::elicit) with the params and the result as JSON text. By default it
    /// decodes the params into a `Value` and encodes the answer (members sorted); override it
    /// to pass them on as written (a form's fields in the order the server listed them).
    fn elicit_raw(&self, params: Option<Box<RawValue>>) -> HandlerFuture<'_, RawAnswer> {
        Box::pin(async move { encode_answer(self.elicit(params_value(params.as_deref())).await) })
    }
}

impl<F, Fut> ElicitationHandler for F
where
    F: Fn(Value) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Value, ErrorObject>> + Send + 'static,
{
    fn elicit(&self, params: Value) -> HandlerFuture<'_, Result<Value, ErrorObject>> {
        Box::pin(self(params))
    }
}

/// Answers the server's `tasks/get`, `tasks/result`, `tasks/list` and `tasks/cancel` about
/// the tasks the sampling and elicitation handlers made themselves (they got the request
/// with its `params.task` and answered with their own `CreateTaskResult`). `method` is the
/// query's method, `params` its params; the result is its answer as it goes to the server.
/// A `tasks/result` may take as long as the task's person or model (request deadlines are
/// paused meanwhile).
///
/// Any `Fn(String, Value) -> impl Future<Output = Result<Value, ErrorObject>>` is one.
pub trait TaskQueryHandler: Send + Sync + 'static {
    /// Answers one task query.
    fn query(&self, method: String, params: Value)
    -> HandlerFuture<'_, Result<Value, ErrorObject>>;

    /// [`query`](Self::query) with the params and the result as JSON text. By default it
    /// decodes the params into a `Value` and encodes the answer; override it to pass them on
    /// as written.
    fn query_raw(
        &self,
        method: String,
        params: Option<Box<RawValue>>,
    ) -> HandlerFuture<'_, RawAnswer> {
        Box::pin(
            async move { encode_answer(self.query(method, params_value(params.as_deref())).await) },
        )
    }
}

impl<F, Fut> TaskQueryHandler for F
where
    F: Fn(String, Value) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Value, ErrorObject>> + Send + 'static,
{
    fn query(
        &self,
        method: String,
        params: Value,
    ) -> HandlerFuture<'_, Result<Value, ErrorObject>> {
        Box::pin(self(method, params))
    }
}

/// A sampling or elicitation handler of JSON text: any
/// `Fn(Option<Box<RawValue>>) -> impl Future<Output = RawAnswer>` wrapped in it gets the
/// request's params as written and gives the result as it goes to the server, so a handler
/// that passes requests on keeps their members' order and their numbers' spelling:
/// `sampling_handler(RawHandler(|params| async move { ... }))`.
pub struct RawHandler<F>(pub F);

impl<F, Fut> RawHandler<F>
where
    F: Fn(Option<Box<RawValue>>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = RawAnswer> + Send + 'static,
{
    /// The `Value` form, through the text form.
    fn call_value(&self, params: Value) -> HandlerFuture<'_, Result<Value, ErrorObject>> {
        let params = match params {
            Value::Null => Ok(None),
            p => mcp_proto::jsonrpc::to_raw(&p).map(Some).map_err(internal),
        };
        Box::pin(async move {
            let answer = (self.0)(params?).await?;
            serde_json::from_str(answer.get()).map_err(internal)
        })
    }
}

impl<F, Fut> SamplingHandler for RawHandler<F>
where
    F: Fn(Option<Box<RawValue>>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = RawAnswer> + Send + 'static,
{
    fn create_message(&self, params: Value) -> HandlerFuture<'_, Result<Value, ErrorObject>> {
        self.call_value(params)
    }

    fn create_message_raw(&self, params: Option<Box<RawValue>>) -> HandlerFuture<'_, RawAnswer> {
        Box::pin((self.0)(params))
    }
}

impl<F, Fut> ElicitationHandler for RawHandler<F>
where
    F: Fn(Option<Box<RawValue>>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = RawAnswer> + Send + 'static,
{
    fn elicit(&self, params: Value) -> HandlerFuture<'_, Result<Value, ErrorObject>> {
        self.call_value(params)
    }

    fn elicit_raw(&self, params: Option<Box<RawValue>>) -> HandlerFuture<'_, RawAnswer> {
        Box::pin((self.0)(params))
    }
}

/// The registered handlers of a connection.
#[derive(Clone, Default)]
pub(crate) struct Handlers {
    pub(crate) roots: Option<Arc<dyn RootsHandler>>,
    pub(crate) sampling: Option<Arc<dyn SamplingHandler>>,
    pub(crate) elicitation: Option<Arc<dyn ElicitationHandler>>,
    /// Whether the tasks extension (2026-07-28) is declared.
    pub(crate) tasks: bool,
    /// Whether sampling and elicitation requests may come as tasks (2025-11-25).
    pub(crate) task_receiver: bool,
    /// The handlers make their tasks themselves; this answers the server's queries about them.
    pub(crate) task_queries: Option<Arc<dyn TaskQueryHandler>>,
}

impl Handlers {
    /// The capabilities to declare: exactly those with a handler.
    pub(crate) fn capabilities(&self) -> mcp_proto::types::ClientCapabilities {
        let mut caps = mcp_proto::types::ClientCapabilities::default();
        if let Some(roots) = &self.roots {
            caps.roots = Some(mcp_proto::types::RootsCapability {
                list_changed: roots.list_changed().then_some(true),
                ..Default::default()
            });
        }
        if self.sampling.is_some() {
            caps.sampling = Some(Default::default());
        }
        if self.elicitation.is_some() {
            caps.elicitation = Some(Default::default());
        }
        if self.task_receiver || self.task_queries.is_some() {
            caps.tasks = self.receiver_capability();
        }
        if self.tasks {
            let mut extensions = serde_json::Map::new();
            extensions.insert(
                mcp_proto::types::v2026::TASKS_EXTENSION.into(),
                Value::Object(Map::new()),
            );
            caps.extra
                .insert("extensions".into(), Value::Object(extensions));
        }
        caps
    }

    /// The `tasks` capability of a task receiver: the methods with a handler accept a task;
    /// `None` when there is none (nothing could run as a task).
    fn receiver_capability(&self) -> Option<mcp_proto::types::TasksCapability> {
        let method = |name: &str| {
            let mut m = Map::new();
            m.insert(name.into(), Value::Object(Map::new()));
            m
        };
        let requests = mcp_proto::types::TaskRequestsCapability {
            sampling: self.sampling.is_some().then(|| method("createMessage")),
            elicitation: self.elicitation.is_some().then(|| method("create")),
            ..Default::default()
        };
        if requests.sampling.is_none() && requests.elicitation.is_none() {
            return None;
        }
        Some(mcp_proto::types::TasksCapability {
            list: Some(Map::new()),
            cancel: Some(Map::new()),
            requests: Some(requests),
            ..Default::default()
        })
    }

    /// The future answering one server request (its raw `params`; the answer as JSON text),
    /// or `None` when no handler takes `method`.
    pub(crate) fn dispatch(
        &self,
        method: &str,
        params: Option<Box<RawValue>>,
    ) -> Option<HandlerFuture<'static, RawAnswer>> {
        match method {
            "roots/list" => {
                let h = self.roots.clone()?;
                Some(Box::pin(async move { h.list_roots_raw().await }))
            }
            "sampling/createMessage" => {
                let h = self.sampling.clone()?;
                Some(Box::pin(async move { h.create_message_raw(params).await }))
            }
            "elicitation/create" => {
                let h = self.elicitation.clone()?;
                Some(Box::pin(async move { h.elicit_raw(params).await }))
            }
            "tasks/get" | "tasks/result" | "tasks/list" | "tasks/cancel" => {
                let h = self.task_queries.clone()?;
                let method = method.to_owned();
                Some(Box::pin(async move { h.query_raw(method, params).await }))
            }
            _ => None,
        }
    }
}

fn internal(e: serde_json::Error) -> ErrorObject {
    ErrorObject::new(ErrorObject::INTERNAL_ERROR, e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Changing;

    impl RootsHandler for Changing {
        fn list_roots(&self) -> HandlerFuture<'_, Result<Vec<Root>, ErrorObject>> {
            Box::pin(async { Ok(Vec::new()) })
        }

        fn list_changed(&self) -> bool {
            true
        }
    }

    #[test]
    fn roots_list_changed_is_declared_only_when_the_handler_says_so() {
        let none = Handlers::default().capabilities();
        assert!(none.roots.is_none());
        let fixed = Handlers {
            roots: Some(Arc::new(StaticRoots::default())),
            ..Handlers::default()
        };
        assert_eq!(
            serde_json::to_value(fixed.capabilities().roots).unwrap(),
            serde_json::json!({})
        );
        let changing = Handlers {
            roots: Some(Arc::new(Changing)),
            ..Handlers::default()
        };
        assert_eq!(
            serde_json::to_value(changing.capabilities().roots).unwrap(),
            serde_json::json!({ "listChanged": true })
        );
    }

    /// Passes the params back as the answer, as written.
    struct Echo;

    impl ElicitationHandler for Echo {
        fn elicit(&self, _: Value) -> HandlerFuture<'_, Result<Value, ErrorObject>> {
            Box::pin(async { Err(ErrorObject::new(-1, "the raw form is used")) })
        }

        fn elicit_raw(&self, params: Option<Box<RawValue>>) -> HandlerFuture<'_, RawAnswer> {
            Box::pin(async move { params.ok_or_else(|| ErrorObject::new(-1, "no params")) })
        }
    }

    fn run(handlers: &Handlers, method: &str, params: &str) -> RawAnswer {
        let params = RawValue::from_string(params.to_owned()).unwrap();
        let fut = handlers.dispatch(method, Some(params)).expect("a handler");
        futures_util::FutureExt::now_or_never(fut).expect("ready")
    }

    #[test]
    fn a_raw_handler_gets_and_gives_the_text_as_written() {
        let handlers = Handlers {
            elicitation: Some(Arc::new(Echo)),
            ..Handlers::default()
        };
        let written = r#"{"zeta":1,"alpha":{"b":2.50,"a":1}}"#;
        let answer = run(&handlers, "elicitation/create", written).unwrap();
        assert_eq!(answer.get(), written);
    }

    #[test]
    fn a_value_handler_gets_the_params_decoded_and_its_answer_encoded() {
        let sample = |params: Value| async move { Ok(serde_json::json!({"got": params["n"]})) };
        let handlers = Handlers {
            sampling: Some(Arc::new(sample)),
            ..Handlers::default()
        };
        let answer = run(&handlers, "sampling/createMessage", r#"{"n":3}"#).unwrap();
        assert_eq!(answer.get(), r#"{"got":3}"#);
    }

    #[test]
    fn a_task_receiver_declares_tasks_for_the_methods_it_has_handlers_for() {
        let elicit = |_: Value| async { Ok(Value::Null) };
        let receiver = Handlers {
            elicitation: Some(Arc::new(elicit)),
            task_receiver: true,
            ..Handlers::default()
        };
        assert_eq!(
            serde_json::to_value(receiver.capabilities().tasks).unwrap(),
            serde_json::json!({"list": {}, "cancel": {}, "requests": {"elicitation": {"create": {}}}})
        );
        let no_handler = Handlers {
            task_receiver: true,
            ..Handlers::default()
        };
        assert!(no_handler.capabilities().tasks.is_none());
        let not_opted_in = Handlers {
            elicitation: Some(Arc::new(elicit)),
            ..Handlers::default()
        };
        assert!(not_opted_in.capabilities().tasks.is_none());
    }
}
