//! Typed server-request handlers: the structs of `mcp_proto::types` in and out, adapted to the
//! untyped handler traits that the connection dispatches to.

use std::future::Future;
use std::marker::PhantomData;

use mcp_proto::jsonrpc::ErrorObject;
use mcp_proto::types::{
    CreateMessage, CreateMessageParams, CreateMessageResult, Elicit, ElicitParams, ElicitResult,
    Request,
};
use serde_json::Value;

use super::{ElicitationHandler, HandlerFuture, Root, RootsHandler, SamplingHandler, StaticRoots};
use crate::client::ClientBuilder;
use crate::runtime::Runtime;

/// A typed function answering the server request `Q`: decodes the params into `Q::Params`
/// (answering -32602 when they do not decode, without calling `f`), encodes `Q::Result`.
struct Typed<Q, F> {
    f: F,
    // `fn() -> Q`: the handler is Send + Sync whatever `Q` is; `Q` is only a method marker.
    method: PhantomData<fn() -> Q>,
}

impl<Q, F, Fut> Typed<Q, F>
where
    Q: Request,
    F: Fn(Q::Params) -> Fut,
    Fut: Future<Output = Result<Q::Result, ErrorObject>> + Send + 'static,
{
    fn new(f: F) -> Self {
        Self {
            f,
            method: PhantomData,
        }
    }

    fn handle(&self, params: Value) -> HandlerFuture<'static, Result<Value, ErrorObject>> {
        match serde_json::from_value::<Q::Params>(params) {
            Ok(params) => {
                let answer = (self.f)(params);
                Box::pin(async move {
                    let result = answer.await?;
                    serde_json::to_value(result).map_err(|e| {
                        ErrorObject::new(
                            ErrorObject::INTERNAL_ERROR,
                            format!("the client's {} result does not encode: {e}", Q::METHOD),
                        )
                    })
                })
            }
            Err(e) => {
                let error = ErrorObject::new(
                    ErrorObject::INVALID_PARAMS,
                    format!("invalid {} params: {e}", Q::METHOD),
                );
                Box::pin(std::future::ready(Err(error)))
            }
        }
    }
}

impl<F, Fut> SamplingHandler for Typed<CreateMessage, F>
where
    F: Fn(CreateMessageParams) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<CreateMessageResult, ErrorObject>> + Send + 'static,
{
    fn create_message(&self, params: Value) -> HandlerFuture<'_, Result<Value, ErrorObject>> {
        self.handle(params)
    }
}

impl<F, Fut> ElicitationHandler for Typed<Elicit, F>
where
    F: Fn(ElicitParams) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<ElicitResult, ErrorObject>> + Send + 'static,
{
    fn elicit(&self, params: Value) -> HandlerFuture<'_, Result<Value, ErrorObject>> {
        self.handle(params)
    }
}

/// A function listing the roots each time the server asks.
struct RootsFn<F>(F);

impl<F, Fut> RootsHandler for RootsFn<F>
where
    F: Fn() -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Vec<Root>, ErrorObject>> + Send + 'static,
{
    fn list_roots(&self) -> HandlerFuture<'_, Result<Vec<Root>, ErrorObject>> {
        Box::pin((self.0)())
    }
}

/// Typed handlers for server-to-client requests.
impl<R: Runtime> ClientBuilder<R> {
    /// Answers `sampling/createMessage` with `f` and declares the `sampling` capability.
    ///
    /// `f` gets the decoded [`CreateMessageParams`] and returns the model's
    /// [`CreateMessageResult`] (see [`CreateMessageResult::text`]) or an [`ErrorObject`] the
    /// server receives as the request's error (a user who refuses: code -1 by convention).
    /// Params that do not decode are answered with -32602 without calling `f`. Each request
    /// runs on its own task; when the server cancels it, the future is dropped. Replaces any
    /// earlier sampling handler, typed or not.
    ///
    /// ```no_run
    /// # async fn f(builder: mcp_tokio::ClientBuilder) -> Result<(), mcp_tokio::Error> {
    /// use mcp_tokio::types::CreateMessageResult;
    ///
    /// let client = builder
    ///     .on_sampling(|params| async move {
    ///         let question = params.last_user_text().unwrap_or_default();
    ///         Ok(CreateMessageResult::text("echo-model", format!("You said: {question}")))
    ///     })
    ///     .stdio("mcp demo-server")
    ///     .await?;
    /// # Ok(()) }
    /// ```
    #[must_use]
    pub fn on_sampling<F, Fut>(self, f: F) -> Self
    where
        F: Fn(CreateMessageParams) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<CreateMessageResult, ErrorObject>> + Send + 'static,
    {
        self.sampling_handler(Typed::<CreateMessage, F>::new(f))
    }

    /// Answers `elicitation/create` with `f` and declares the `elicitation` capability.
    ///
    /// `f` gets the decoded [`ElicitParams`] (form mode: [`ElicitParams::requested_schema`],
    /// pre-fill from [`ElicitParams::default_content`]; URL mode: [`ElicitParams::url`]) and
    /// returns the user's [`ElicitResult`]: [`ElicitResult::accept`],
    /// [`ElicitResult::decline`] or [`ElicitResult::cancel`]. Request deadlines are paused while
    /// it runs (a person answers). Params that do not decode are answered with -32602 without
    /// calling `f`. Replaces any earlier elicitation handler, typed or not.
    ///
    /// ```no_run
    /// # async fn f(builder: mcp_tokio::ClientBuilder) -> Result<(), mcp_tokio::Error> {
    /// use mcp_tokio::types::ElicitResult;
    ///
    /// let client = builder
    ///     .on_elicitation(|params| async move {
    ///         // An unattended host: accept forms with their defaults, decline the rest.
    ///         let form = params.default_content();
    ///         Ok(if form.is_empty() { ElicitResult::decline() } else { ElicitResult::accept(form) })
    ///     })
    ///     .stdio("mcp demo-server")
    ///     .await?;
    /// # Ok(()) }
    /// ```
    #[must_use]
    pub fn on_elicitation<F, Fut>(self, f: F) -> Self
    where
        F: Fn(ElicitParams) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ElicitResult, ErrorObject>> + Send + 'static,
    {
        self.elicitation_handler(Typed::<Elicit, F>::new(f))
    }

    /// Answers `roots/list` with what `f` returns at the time of each request, and declares
    /// the `roots` capability. Replaces any earlier roots handler.
    ///
    /// ```no_run
    /// # async fn f(builder: mcp_tokio::ClientBuilder) -> Result<(), mcp_tokio::Error> {
    /// use mcp_tokio::Root;
    ///
    /// let client = builder
    ///     .on_roots(|| async {
    ///         let cwd = std::env::current_dir().unwrap_or_default();
    ///         Ok(vec![Root::new(format!("file://{}", cwd.display())).with_name("cwd")])
    ///     })
    ///     .stdio("mcp demo-server")
    ///     .await?;
    /// # Ok(()) }
    /// ```
    #[must_use]
    pub fn on_roots<F, Fut>(self, f: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<Root>, ErrorObject>> + Send + 'static,
    {
        self.roots_handler(RootsFn(f))
    }

    /// Answers `roots/list` with a fixed list and declares the `roots` capability (the same as
    /// `roots_handler(StaticRoots(..))`). Replaces any earlier roots handler.
    ///
    /// ```no_run
    /// # async fn f(builder: mcp_tokio::ClientBuilder) -> Result<(), mcp_tokio::Error> {
    /// use mcp_tokio::Root;
    ///
    /// let client = builder
    ///     .roots([Root::new("file:///home/me/project").with_name("project")])
    ///     .stdio("mcp demo-server")
    ///     .await?;
    /// # Ok(()) }
    /// ```
    #[must_use]
    pub fn roots(self, roots: impl IntoIterator<Item = Root>) -> Self {
        self.roots_handler(StaticRoots(roots.into_iter().collect()))
    }
}
