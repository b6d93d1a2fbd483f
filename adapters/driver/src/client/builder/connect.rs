//! How a [`ClientBuilder`] starts a connection: the transport (a configured server, a child
//! process, HTTP, a caller's byte stream), the connection type of the core for it, and the
//! driver task that runs them, up to the end of the handshake.

use std::io;
use std::sync::Arc;
use std::time::Duration;

use mcp_manager::config::{ServerConfig, TransportConfig};
use mcp_proto::framing::lines::LineDecoder;
use mcp_proto::session::{ProtocolVersion, SessionConfig};
use mcp_proto::stdio::StdioConnection;
use tracing::Instrument as _;

use super::ClientBuilder;
#[cfg(unix)]
use super::IntoStdioCommand;
use crate::client::{Client, Inner, ServerInfo, closed_error};
use crate::driver::{
    BoxRead, BoxWrite, ByteStream, Driver, DriverOptions, LinesIo, StreamIo, TransportIo,
};
use crate::error::Error;
#[cfg(unix)]
use crate::process::{StdioChild, StdioCommand};
use crate::runtime::Runtime;
use crate::shared::{Core, Phase, Shared};

/// Extra time `close()` allows beyond the configured graces.
const CLOSE_MARGIN: Duration = Duration::from_secs(2);

impl<R: Runtime> ClientBuilder<R> {
    /// Connects to a configured server (from `mcpServers` JSON, say). The config's
    /// `startupTimeout` and `timeout` apply unless set on the builder; an HTTP config's `type`
    /// chooses the transport and its `headers` are sent (see [`header`](Self::header)).
    ///
    /// # Errors
    ///
    /// [`Error::Spawn`], [`Error::Handshake`], [`Error::Exited`], [`Error::Config`],
    /// [`Error::Unsupported`] (an HTTP server in a build without the `http` feature).
    pub async fn connect(mut self, config: ServerConfig) -> Result<Client<R>, Error> {
        if self.name.is_none() {
            self.name = Some(config.name.as_str().into());
        }
        if self.handshake_timeout.is_none()
            && let Some(t) = config.timeouts.startup
        {
            self.handshake_timeout = Some(Some(t));
        }
        if self.request_timeout.is_none()
            && let Some(t) = config.timeouts.request
        {
            self.request_timeout = Some(Some(t));
        }
        match config.transport {
            #[cfg(unix)]
            TransportConfig::Stdio(s) => {
                let spec = StdioCommand {
                    command: s.command,
                    args: s.args,
                    env: s.env,
                    clear_env: s.clear_env,
                    cwd: s.cwd.map(Into::into),
                };
                self.stdio(spec).await
            }
            #[cfg(feature = "http")]
            TransportConfig::Http(h) => {
                use mcp_manager::config::HttpTransport;
                use mcp_proto::http::TransportMode;
                self.http.mode = match h.transport {
                    HttpTransport::Streamable => TransportMode::Streamable,
                    HttpTransport::Legacy => TransportMode::Legacy,
                    _ => TransportMode::Auto,
                };
                self.http.headers.extend(h.headers);
                self.http(&h.url).await
            }
            _ => Err(Error::Unsupported {
                server: self.server_name("server"),
                what: "this transport (enable the `http` feature for HTTP)".into(),
            }),
        }
    }

    /// Starts `command` as a stdio server (in its own process group, stderr captured) and
    /// runs the handshake.
    ///
    /// # Errors
    ///
    /// [`Error::Spawn`], [`Error::Handshake`], [`Error::Exited`].
    #[cfg(unix)]
    pub async fn stdio(self, command: impl IntoStdioCommand) -> Result<Client<R>, Error> {
        let mut spec = command.into_stdio_command().map_err(|e| Error::Spawn {
            server: self.server_name("stdio"),
            command: String::new(),
            source: io::Error::new(io::ErrorKind::InvalidInput, e),
        })?;
        spec.clear_env |= self.clear_env;
        let name = self.server_name(&super::label::command_line(&spec.command, &spec.args));
        let runtime = self.resolve_runtime(&name)?;
        let (child, pipes) = StdioChild::spawn(&runtime, &spec, name.clone(), self.stderr_tail)
            .map_err(|source| Error::Spawn {
                server: name.clone(),
                command: spec.command.clone(),
                source,
            })?;
        let io = LinesIo::new(ByteStream::Stdio(Box::new(crate::driver::StdioIo {
            child,
            reader: Some(pipes.stdout),
            writer: Some(pipes.stdin),
            unread: pipes.unread,
            status: None,
            schedule: None,
            spec,
            tail: self.stderr_tail,
        })));
        let bound = self.shutdown.stdin_grace + self.shutdown.term_grace;
        let core = self.lines_core(&runtime);
        self.start(
            runtime,
            name,
            core,
            io,
            bound,
            #[cfg(feature = "http")]
            None,
        )
        .await
    }

    /// Connects to the MCP server at `url` over HTTP (Streamable HTTP, or legacy HTTP+SSE as
    /// [`http_transport`](Self::http_transport) says) and runs the handshake. Needs a runtime
    /// with an HTTP client ([`Runtime::http_client`]).
    ///
    /// # Errors
    ///
    /// [`Error::Config`] for a URL that is not `http(s)://` or a bad root certificate,
    /// [`Error::Unsupported`] for a runtime without HTTP, [`Error::Handshake`] (a 401 carries
    /// the challenge: see [`Error::http_status`]).
    #[cfg(feature = "http")]
    pub async fn http(self, url: &str) -> Result<Client<R>, Error> {
        use mcp_proto::http::headers::AUTHORIZATION;
        use mcp_proto::http::{Connection, ConnectionConfig};
        let parsed = url::Url::parse(url);
        let fallback = parsed
            .as_ref()
            .map_or_else(|_| "http".to_owned(), super::label::url_label);
        let name = self.server_name(&fallback);
        let config_error = |message: String| Error::Config {
            server: name.clone(),
            message,
        };
        let url = parsed.map_err(|e| config_error(format!("invalid URL: {e}")))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(config_error(format!(
                "the URL must be http:// or https://, not {}://",
                url.scheme()
            )));
        }
        let runtime = self.resolve_runtime(&name)?;
        let mut client_config = self.http.client.clone();
        if client_config.user_agent.is_none() {
            client_config.user_agent = Some(format!(
                "{}/{}",
                self.client_info.name, self.client_info.version
            ));
        }
        let client = runtime
            .http_client(&client_config)
            .map_err(|e| match e.kind() {
                io::ErrorKind::Unsupported => Error::Unsupported {
                    server: name.clone(),
                    what: "HTTP on this runtime".into(),
                },
                _ => config_error(e.to_string()),
            })?;
        let auth = self.http.auth.clone().map(|p| {
            Arc::new(crate::auth::AuthSession::new(
                p,
                client.clone(),
                url.clone(),
                runtime.clone(),
            ))
        });
        let mut authorization = match &auth {
            Some(a) => a.initial_header().await,
            None => None,
        };
        // The second attempt runs only after an authorization produced a new token.
        for attempt in 0..2 {
            let mut config = ConnectionConfig::new(url.clone());
            config.mode = self.http.mode;
            for (n, v) in &self.http.headers {
                config.extra_headers.append(n.clone(), v.clone());
            }
            if let Some(h) = &authorization {
                config.extra_headers.insert(AUTHORIZATION, h.clone());
            }
            if let Some(t) = self.http.close_timeout {
                config.close_timeout = t;
            }
            config.await_listener = self.http.await_listener;
            if let Some(n) = self.max_message {
                config.max_body = n;
                config.max_event = n;
            }
            let bound = config.close_timeout;
            let conn = Connection::new(config, self.session_config(), runtime.now());
            let io = crate::driver::HttpIo::new(
                client.clone(),
                self.wire.clone(),
                self.http_trace.clone(),
            );
            let result = self
                .start(runtime.clone(), name.clone(), conn, io, bound, auth.clone())
                .await;
            let (Err(e), Some(a), 0) = (&result, &auth, attempt) else {
                return result;
            };
            let Some(status) = e.http_status().filter(|s| matches!(s.status, 401 | 403)) else {
                return result;
            };
            match a.recover(status, authorization.as_deref()).await {
                Ok(Some(h)) => authorization = Some(h),
                Ok(None) => return result,
                Err(message) => {
                    return Err(Error::Auth {
                        server: name,
                        message,
                    });
                }
            }
        }
        unreachable!("the loop returns on its second attempt")
    }

    /// Runs the protocol over any byte stream: `reader` is what the server writes, `writer`
    /// what it reads (an in-process server, a socket, an SSH channel).
    ///
    /// # Errors
    ///
    /// [`Error::Handshake`], [`Error::Unsupported`] without a runtime.
    pub async fn over(
        self,
        reader: impl futures_io::AsyncRead + Send + 'static,
        writer: impl futures_io::AsyncWrite + Send + 'static,
    ) -> Result<Client<R>, Error> {
        let name = self.server_name("stream");
        let runtime = self.resolve_runtime(&name)?;
        let reader: BoxRead = Box::pin(reader);
        let writer: BoxWrite = Box::pin(writer);
        let io = LinesIo::new(ByteStream::Stream(StreamIo {
            reader: Some(reader),
            writer: Some(writer),
        }));
        let core = self.lines_core(&runtime);
        self.start(
            runtime,
            name,
            core,
            io,
            Duration::ZERO,
            #[cfg(feature = "http")]
            None,
        )
        .await
    }

    fn server_name(&self, fallback: &str) -> Arc<str> {
        self.name.clone().unwrap_or_else(|| fallback.into())
    }

    fn resolve_runtime(&self, name: &Arc<str>) -> Result<R, Error> {
        self.runtime
            .clone()
            .or_else(R::try_current)
            .ok_or_else(|| Error::Unsupported {
                server: name.clone(),
                what: "connecting outside a runtime (pass one with ClientBuilder::runtime)".into(),
            })
    }

    fn session_config(&self) -> SessionConfig {
        let mut config = SessionConfig::new(self.client_info.clone())
            .with_capabilities(
                self.capabilities
                    .clone()
                    .unwrap_or_else(|| self.handlers.capabilities()),
            )
            .with_wall_clock(wall_clock())
            .with_host_running_tasks(self.handlers.task_queries.is_some());
        if let Some(t) = self.handshake_timeout {
            config = config.with_handshake_timeout(t);
        }
        if let Some(t) = self.request_timeout {
            config = config.with_request_timeout(t);
        }
        if let Some(v) = self.protocol_version {
            config = config.with_protocol_version(v);
        }
        if let Some(policy) = self.era_policy {
            config = config.with_era_policy(policy);
        }
        if let Some(policy) = self.task_receiver_policy {
            config = config.with_task_receiver(policy);
        }
        if let Some(bytes) = self.max_outbound {
            config = config.with_max_outbound_bytes(bytes);
        }
        if let Some(t) = self.stall_timeout {
            config = config.with_stall_timeout(t);
        }
        if let Some((in_flight, held)) = self.in_flight {
            config = config.with_max_in_flight(in_flight, held);
        }
        config
    }

    fn lines_core(&self, runtime: &R) -> StdioConnection {
        let decoder = match self.max_message {
            Some(n) => LineDecoder::with_max_line_len(n),
            None => LineDecoder::new(),
        };
        StdioConnection::with_decoder(self.session_config(), decoder, runtime.now())
    }

    /// Spawns the driver of `core` over `io` and waits for the handshake.
    async fn start<T: TransportIo<R>>(
        &self,
        runtime: R,
        name: Arc<str>,
        core: T::Conn,
        io: T,
        graces: Duration,
        #[cfg(feature = "http")] auth: Option<Arc<crate::auth::AuthSession<R>>>,
    ) -> Result<Client<R>, Error>
    where
        T::Conn: Core,
    {
        let driven = Shared::new(name.clone(), core, self.notification_capacity);
        // The handles' view of the same state: the connection as `dyn Core`.
        let shared: Arc<Shared> = driven.clone();
        let mut phase = shared.phase.subscribe();
        if let Some(slot) = &self.phase_slot {
            *slot
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) =
                Some(shared.phase.subscribe());
        }
        let options = DriverOptions {
            handlers: self.handlers.clone(),
            #[cfg(unix)]
            shutdown: self.shutdown,
            stderr_lines: self.stderr_lines,
            wire: self.wire.clone(),
        };
        let driver = Driver::new(driven, runtime.clone(), io, options);
        let span = tracing::info_span!("mcp_connection", server = &*name);
        runtime.spawn(Box::pin(driver.instrument(span)));
        // Dropping this future during the handshake must not leave the server running until
        // the handshake timeout (the reference manager leaked such processes).
        let mut abandon = CloseOnDrop {
            shared: shared.clone(),
            runtime: runtime.clone(),
            armed: true,
        };

        let ready = phase
            .wait_for(|p| !matches!(p, Phase::Handshaking))
            .await
            .map(|p| p.clone());
        match ready {
            Ok(Phase::Ready) => {}
            Ok(p) => {
                let reason = p
                    .reason()
                    .cloned()
                    .unwrap_or(mcp_proto::session::CloseReason::Local);
                return Err(match closed_error(&shared, reason) {
                    Error::Closed { server, reason } => Error::Handshake { server, reason },
                    other => other,
                });
            }
            Err(_) => {
                return Err(Error::Handshake {
                    server: name,
                    reason: mcp_proto::session::CloseReason::TransportClosed {
                        detail: Some("the connection's task was stopped".into()),
                    },
                });
            }
        }
        let server = {
            let state = shared.lock();
            let session = state.core.session();
            ServerInfo {
                info: session.server_info().cloned().unwrap_or_default(),
                capabilities: session.server_capabilities().cloned().unwrap_or_default(),
                instructions: session.instructions().map(str::to_owned),
                version: session
                    .protocol_version()
                    .unwrap_or(ProtocolVersion::LATEST_INITIALIZE),
            }
        };
        abandon.armed = false;
        tracing::debug!(server = &*name, version = %server.version, server_name = server.info.name, "connected");
        Ok(Client {
            inner: Arc::new(Inner {
                shared,
                runtime,
                server,
                close_bound: graces + crate::driver::FLUSH_GRACE * 2 + CLOSE_MARGIN,
                handlers: self.handlers.clone(),
                list_budget: self.list_budget,
                validate_output: self.validate_output,
                task_support: crate::client::tasks::TaskSupportCache::default(),
                #[cfg(feature = "http")]
                auth,
            }),
        })
    }
}

/// Closes a connection whose handshake future was dropped before it finished; the driver then
/// shuts the transport down (for a stdio server: its shutdown schedule).
struct CloseOnDrop<R: Runtime> {
    shared: Arc<Shared>,
    runtime: R,
    armed: bool,
}

impl<R: Runtime> Drop for CloseOnDrop<R> {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let now = self.runtime.now();
        let mut state = self.shared.lock();
        if !state.core.session().is_closed() {
            state.core.session_mut().close(now);
        }
        state.wake_driver();
    }
}

#[cfg(unix)]
/// A reading of the wall clock with its instant, for the timestamps of the client's tasks.
fn wall_clock() -> mcp_proto::task::receiver::WallClock {
    let unix = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
    mcp_proto::task::receiver::WallClock::new(std::time::Instant::now(), unix)
}
