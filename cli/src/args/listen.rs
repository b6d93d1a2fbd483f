//! The options of the commands that serve Streamable HTTP instead of stdio: `mcp bridge` and
//! `mcp demo-server`. Declared once, flattened into both, so that both take, check and
//! describe them alike.

use std::time::Duration;

use clap::{Arg, Args};
use mcp_proto::server::http::HttpServerConfig;

use super::ArgError;
use super::values::{parse_duration, parse_listen_addr, parse_origin};

/// `--listen` and the options that only mean something with it.
#[derive(Debug, Clone, Default, Args)]
pub struct ListenArgs {
    /// Serve Streamable HTTP at the path /mcp on this address (`127.0.0.1:8080`; port 0 picks
    /// one) instead of stdio; the URL is the first line on stderr, printed once the port is
    /// bound. Each client gets a session of its own.
    #[arg(long, value_name = "ADDR", value_parser = parse_listen_addr)]
    pub listen: Option<std::net::SocketAddr>,
    /// With --listen: no sessions; each POST is served on its own (no GET stream, no requests
    /// to the client).
    #[arg(long, requires = "listen")]
    pub stateless: bool,
    /// With --listen: require `Authorization: Bearer <token>` of every request, the token read
    /// from the environment variable VAR (never from the command line).
    #[arg(long, value_name = "VAR", requires = "listen")]
    pub bearer_token_env: Option<String>,
    /// With --listen: an `Origin` allowed besides loopback ones, as a browser sends it:
    /// scheme, host and port unless default (`https://app.example.com`,
    /// `http://localhost:3000`; no path, no trailing slash). Repeatable; browsers on other
    /// origins get 403.
    #[arg(long = "allow-origin", value_name = "ORIGIN", requires = "listen", value_parser = parse_origin)]
    pub allow_origins: Vec<String>,
    /// With --listen: the most sessions open at once; past it a new client's `initialize`
    /// gets 503 with a JSON-RPC error saying so, and stderr says it was refused. A session
    /// ends with DELETE, or after --session-idle.
    #[arg(long, value_name = "N", default_value_t = 64, requires = "listen",
          value_parser = clap::value_parser!(u32).range(1..))]
    pub max_sessions: u32,
    /// With --listen: how long a session may go without a request and without an open
    /// stream before it ends, for clients that never send DELETE (`90s`, `10m`, `2h`).
    #[arg(long, value_name = "DURATION", default_value = "30m", requires = "listen",
          value_parser = parse_session_idle)]
    pub session_idle: Duration,
}

/// A `--session-idle` duration: one that is not zero (every session would end at once).
fn parse_session_idle(text: &str) -> Result<Duration, String> {
    match parse_duration(text)? {
        d if d.is_zero() => {
            Err("a session idle time of zero would end every session at once".into())
        }
        d => Ok(d),
    }
}

impl ListenArgs {
    /// `config` with the bounds these options set (`--max-sessions`, `--session-idle`).
    #[must_use]
    pub fn bounded(&self, mut config: HttpServerConfig) -> HttpServerConfig {
        config.max_sessions = usize::try_from(self.max_sessions).unwrap_or(usize::MAX);
        config.with_idle_timeout(Some(self.session_idle))
    }

    /// The bearer token every request must carry: the value of `--bearer-token-env VAR`'s
    /// variable, trimmed; `None` without the option. Call it before the port is bound, so that
    /// a server meant to be protected never starts open.
    ///
    /// # Errors
    ///
    /// The variable is unset or empty (or not Unicode).
    pub fn bearer_token(&self) -> Result<Option<String>, ArgError> {
        let Some(var) = &self.bearer_token_env else {
            return Ok(None);
        };
        match std::env::var(var) {
            Ok(token) if !token.trim().is_empty() => Ok(Some(token.trim().to_owned())),
            _ => Err(ArgError(format!(
                "--bearer-token-env {var}: the environment variable {var} is not set or empty"
            ))),
        }
    }
}

/// Appends `more` (as it is, from its own punctuation on) to the help of an option of
/// [`ListenArgs`]: what the option means for one command in particular, with
/// `#[command(mut_arg("listen", more_help(", …")))]` on that command's arguments, so that the
/// shared text stays true for every command.
pub fn more_help(more: &'static str) -> impl FnOnce(Arg) -> Arg {
    move |arg| {
        let shared = arg.get_help().map(ToString::to_string).unwrap_or_default();
        arg.help(format!("{shared}{more}"))
    }
}
