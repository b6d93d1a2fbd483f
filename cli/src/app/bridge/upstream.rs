//! The bridge's upstream side: connecting to the remote server as the host would, and the
//! handlers that hand the server's own requests (sampling, elicitation, roots) to the host.

use std::borrow::Cow;
use std::sync::{Arc, OnceLock};

use mcp_manager::config::{ServerConfig, TransportConfig};
use mcp_proto::jsonrpc::ErrorObject;
use mcp_proto::session::{Era, EraPolicy, ProtocolVersion, RequestError, RequestOptions};
use mcp_proto::types::{InitializeParams, Root};
use mcp_tokio::mcp_driver::{
    ElicitationHandler, HandlerFuture, RawAnswer, RootsHandler, SamplingHandler, TaskQueryHandler,
};
use mcp_tokio::server::{ServerError, ServerHandle};
use mcp_tokio::{Client, ClientBuilder};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::app::ui::Ui;
use crate::args::Cli;
use crate::exit::CliError;

/// Where the upstream server's requests go: the host session's handle, set once the host
/// session is started (after the upstream connection, which needs the host's `initialize`).
pub type HostSlot = Arc<OnceLock<ServerHandle>>;

/// Forwards the server's requests (roots, sampling, elicitation, task queries) to the host
/// and its answers back, as JSON text passed on as written (the members of an elicitation's
/// form in the server's order, the numbers as spelled), in both directions.
#[derive(Clone)]
struct Forward {
    host: HostSlot,
}

impl Forward {
    /// The `Value` form of a request, for the handlers' decoded entry points (the driver
    /// calls the raw ones; these only keep the traits whole).
    async fn ask_value(&self, method: &'static str, params: Value) -> Result<Value, ErrorObject> {
        ask_host(&self.host, method, params).await
    }
}

/// Asks the host in `host` the server's request `method` with `params` as written, and gives
/// its answer as written (or the error for the server). The upstream server has its own
/// deadline and cancels when it passes (the driver then drops this future, which cancels the
/// request at the host); a person answering an elicitation must not be cut short here.
pub async fn ask_host_raw(
    host: &HostSlot,
    method: impl Into<Cow<'static, str>>,
    params: Option<Box<RawValue>>,
) -> RawAnswer {
    let internal = |m: String| ErrorObject::new(ErrorObject::INTERNAL_ERROR, m);
    let host = host
        .get()
        .ok_or_else(|| internal("the bridge's host is not connected yet".into()))?;
    let options = RequestOptions::new().no_timeout();
    match host.request_raw(method, params.as_deref(), options).await {
        Ok(raw) => raw
            .into_raw()
            .map_err(|e| internal(format!("the host's answer: {e}"))),
        Err(ServerError::Request(RequestError::Remote(error))) => Err(error),
        Err(e) => Err(internal(format!("the host did not answer: {e}"))),
    }
}

/// [`ask_host_raw`] with the params and the answer decoded, for a caller that reads or
/// changes them.
pub async fn ask_host(
    host: &HostSlot,
    method: impl Into<Cow<'static, str>>,
    params: Value,
) -> Result<Value, ErrorObject> {
    let internal = |m: String| ErrorObject::new(ErrorObject::INTERNAL_ERROR, m);
    let params = match params {
        Value::Null => None,
        p => Some(mcp_proto::jsonrpc::to_raw(&p).map_err(|e| internal(e.to_string()))?),
    };
    let raw = ask_host_raw(host, method, params).await?;
    serde_json::from_str(raw.get()).map_err(|e| internal(format!("the host's answer: {e}")))
}

impl RootsHandler for Forward {
    fn list_roots(&self) -> HandlerFuture<'_, Result<Vec<Root>, ErrorObject>> {
        Box::pin(async move {
            let value = self.ask_value("roots/list", Value::Null).await?;
            let roots = value.get("roots").cloned().unwrap_or(Value::Null);
            serde_json::from_value(roots).map_err(|e| {
                ErrorObject::new(
                    ErrorObject::INTERNAL_ERROR,
                    format!("the host's roots/list result is not a list of roots: {e}"),
                )
            })
        })
    }

    fn list_changed(&self) -> bool {
        // Only the capabilities given to the builder are declared (the host's own).
        false
    }

    fn list_roots_raw(&self) -> HandlerFuture<'_, RawAnswer> {
        Box::pin(ask_host_raw(&self.host, "roots/list", None))
    }
}

impl SamplingHandler for Forward {
    fn create_message(&self, params: Value) -> HandlerFuture<'_, Result<Value, ErrorObject>> {
        Box::pin(self.ask_value("sampling/createMessage", params))
    }

    fn create_message_raw(&self, params: Option<Box<RawValue>>) -> HandlerFuture<'_, RawAnswer> {
        Box::pin(ask_host_raw(&self.host, "sampling/createMessage", params))
    }
}

impl ElicitationHandler for Forward {
    fn elicit(&self, params: Value) -> HandlerFuture<'_, Result<Value, ErrorObject>> {
        Box::pin(self.ask_value("elicitation/create", params))
    }

    fn elicit_raw(&self, params: Option<Box<RawValue>>) -> HandlerFuture<'_, RawAnswer> {
        Box::pin(ask_host_raw(&self.host, "elicitation/create", params))
    }
}

impl TaskQueryHandler for Forward {
    fn query(
        &self,
        method: String,
        params: Value,
    ) -> HandlerFuture<'_, Result<Value, ErrorObject>> {
        Box::pin(ask_host(&self.host, method, params))
    }

    fn query_raw(
        &self,
        method: String,
        params: Option<Box<RawValue>>,
    ) -> HandlerFuture<'_, RawAnswer> {
        Box::pin(ask_host_raw(&self.host, method, params))
    }
}

/// Reads the host's `initialize` params; an error answer for the host when they are not
/// readable.
pub fn initialize_params(params: Option<&Value>) -> Result<InitializeParams, ErrorObject> {
    serde_json::from_value(params.cloned().unwrap_or(Value::Null)).map_err(|e| {
        ErrorObject::new(
            ErrorObject::INVALID_PARAMS,
            format!("invalid initialize params: {e}"),
        )
    })
}

/// Connects to the upstream server at `config` speaking as the host ([`as_host`]). The
/// server's requests go to the host in `to_host` once it is set.
pub async fn connect(
    cli: &Cli,
    ui: &Ui,
    config: ServerConfig,
    host: &InitializeParams,
    to_host: HostSlot,
) -> Result<Client, CliError> {
    let auth = match &config.transport {
        TransportConfig::Http(h) => crate::app::auth::stored_provider(cli, &h.headers),
        _ => None,
    };
    connect_with_auth(cli, ui, config, host, to_host, auth).await
}

/// [`connect`] with the given authorization provider (the browser login's, after a 401).
pub async fn connect_with_auth(
    cli: &Cli,
    ui: &Ui,
    config: ServerConfig,
    host: &InitializeParams,
    to_host: HostSlot,
    auth: Option<mcp_tokio::mcp_driver::auth::AuthProvider>,
) -> Result<Client, CliError> {
    let builder = as_host(ClientBuilder::new(), host, to_host);
    crate::app::connect::connect_built(cli, ui, config, builder, auth).await
}

/// `builder` speaking as the host: its `clientInfo`, its capabilities (so a server offers
/// what it would offer the host directly), its protocol version when this client speaks it,
/// the `initialize` handshake only (the host spoke `initialize`), results passed on as they
/// are; the server's requests (roots, sampling, elicitation) go to the host in `to_host` once
/// it is set.
///
/// Tasks pass through: a sampling or elicitation request the server sends as a task (the
/// host declared `tasks.requests`) goes to the host with its `task`, the host's
/// `CreateTaskResult` is the answer, and the server's `tasks/get`, `tasks/result`,
/// `tasks/list` and `tasks/cancel` go to the host too (its `notifications/tasks/status` come
/// back through the forwarder like any notification). The bridge makes no task of its own:
/// one would complete with the host's `CreateTaskResult` as its result, before anyone
/// answered.
pub fn as_host(
    builder: ClientBuilder,
    host: &InitializeParams,
    to_host: HostSlot,
) -> ClientBuilder {
    let forward = Forward { host: to_host };
    let mut builder = builder
        .client_info(host.client_info.clone())
        .client_capabilities(host.capabilities.clone())
        .era_policy(EraPolicy::Initialize)
        .roots_handler(forward.clone())
        .sampling_handler(forward.clone())
        .elicitation_handler(forward.clone())
        .host_task_queries(forward)
        // The host checks results itself; the bridge forwards them as they are.
        .validate_output(false);
    if let Some(version) =
        ProtocolVersion::parse(&host.protocol_version).filter(|v| v.era() == Era::Initialize)
    {
        builder = builder.protocol_version(version);
    }
    builder
}
