//! The bridge's upstream side: connecting to the remote server as the host would, and the
//! handlers that hand the server's own requests (sampling, elicitation, roots) to the host.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use mcp_manager::config::{ServerConfig, TransportConfig};
use mcp_proto::jsonrpc::ErrorObject;
use mcp_proto::session::{Era, EraPolicy, ProtocolVersion};
use mcp_proto::types::{InitializeParams, Root};
use mcp_tokio::mcp_driver::{HandlerFuture, RootsHandler};
use mcp_tokio::{Client, ClientBuilder};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

use crate::app::ui::Ui;
use crate::args::Cli;
use crate::exit::CliError;

/// A server-to-client request of the upstream server, or its withdrawal, for the host.
#[derive(Debug)]
pub enum ToHost {
    /// Forward `method` with `params` to the host and send its answer on `reply`.
    Request {
        /// The bridge's key for it (the host's request handle is only known once sent).
        key: u64,
        /// `sampling/createMessage`, `elicitation/create` or `roots/list`.
        method: &'static str,
        /// The server's params.
        params: Value,
        /// Where the host's answer goes.
        reply: oneshot::Sender<Result<Value, ErrorObject>>,
    },
    /// The upstream server cancelled request `key` (or its connection closed): cancel it at
    /// the host too.
    Withdrawn {
        /// The request's key.
        key: u64,
    },
}

/// Forwards one kind of server request to the bridge loop and waits for the host's answer.
#[derive(Clone)]
struct Forward {
    tx: mpsc::Sender<ToHost>,
    next_key: Arc<AtomicU64>,
}

/// Sends [`ToHost::Withdrawn`] when the handler's future is dropped before the host answered
/// (the driver drops it when the server cancels its request).
struct WithdrawOnDrop {
    key: u64,
    tx: mpsc::Sender<ToHost>,
    answered: bool,
}

impl Drop for WithdrawOnDrop {
    fn drop(&mut self) {
        if !self.answered {
            // A full or closed channel means the loop is gone or the host is not reading:
            // the session's close completes the request anyway.
            let _ = self.tx.try_send(ToHost::Withdrawn { key: self.key });
        }
    }
}

impl Forward {
    async fn ask(&self, method: &'static str, params: Value) -> Result<Value, ErrorObject> {
        let key = self.next_key.fetch_add(1, Ordering::Relaxed);
        let (reply, answer) = oneshot::channel();
        let gone = || ErrorObject::new(ErrorObject::INTERNAL_ERROR, "the bridge's host is gone");
        self.tx
            .send(ToHost::Request {
                key,
                method,
                params,
                reply,
            })
            .await
            .map_err(|_| gone())?;
        let mut guard = WithdrawOnDrop {
            key,
            tx: self.tx.clone(),
            answered: false,
        };
        let result = answer.await.map_err(|_| gone());
        guard.answered = true;
        result?
    }
}

impl RootsHandler for Forward {
    fn list_roots(&self) -> HandlerFuture<'_, Result<Vec<Root>, ErrorObject>> {
        Box::pin(async move {
            let value = self.ask("roots/list", Value::Null).await?;
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

/// Connects to the upstream server at `config` speaking as the host: its `clientInfo`, its
/// capabilities (so the server offers what it would offer the host directly), its protocol
/// version when this client speaks it, the `initialize` handshake only (the host spoke
/// `initialize`). The server's requests arrive on `to_host`.
pub async fn connect(
    cli: &Cli,
    ui: &Ui,
    config: ServerConfig,
    host: &InitializeParams,
    to_host: mpsc::Sender<ToHost>,
) -> Result<Client, CliError> {
    let auth = match &config.transport {
        TransportConfig::Http(h) => crate::app::auth::stored_provider(cli, &h.headers),
        _ => None,
    };
    let forward = Forward {
        tx: to_host,
        next_key: Arc::new(AtomicU64::new(1)),
    };
    let sampling = forward.clone();
    let elicitation = forward.clone();
    let mut builder = ClientBuilder::new()
        .client_info(host.client_info.clone())
        .client_capabilities(host.capabilities.clone())
        .era_policy(EraPolicy::Initialize)
        .roots_handler(forward)
        .sampling_handler(move |params: Value| {
            let f = sampling.clone();
            async move { f.ask("sampling/createMessage", params).await }
        })
        .elicitation_handler(move |params: Value| {
            let f = elicitation.clone();
            async move { f.ask("elicitation/create", params).await }
        })
        // The host checks results itself; the bridge forwards them as they are.
        .validate_output(false);
    if let Some(version) =
        ProtocolVersion::parse(&host.protocol_version).filter(|v| v.era() == Era::Initialize)
    {
        builder = builder.protocol_version(version);
    }
    crate::app::connect::connect_built(cli, ui, config, builder, auth).await
}
