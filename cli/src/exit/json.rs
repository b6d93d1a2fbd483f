//! The `--json` error object and its stable codes (the table is in the [`exit`](super)
//! module's docs).

use std::io::Write as _;

use mcp_proto::jsonrpc::ErrorObject;
use serde_json::{Map, Value, json};

use super::{CliError, Missing, NetworkFailure};

impl CliError {
    /// The stable `code` of the `--json` error object (see the table in [`crate::exit`]).
    pub fn code(&self) -> &'static str {
        match self {
            CliError::Usage(_) => "usage",
            CliError::CannotListen { .. } => "cannot_listen",
            CliError::InvalidUrl { .. } => "invalid_url",
            CliError::InvalidArgument { .. } => "invalid_argument",
            CliError::MissingArguments { .. } => "missing_argument",
            CliError::File { .. } => "file_error",
            CliError::Config { .. } => "config_error",
            CliError::Spawn { .. } => "spawn_failed",
            CliError::Network { kind, .. } => match kind {
                NetworkFailure::Refused => "connection_refused",
                NetworkFailure::Reset => "connection_reset",
                NetworkFailure::Dns => "dns_failed",
                NetworkFailure::Tls => "tls_failed",
                NetworkFailure::Timeout => "timeout",
                NetworkFailure::Unreachable | NetworkFailure::Other => "network_error",
            },
            CliError::Connect { .. } => "connect_failed",
            CliError::Http { .. } => "http_error",
            CliError::Handshake(_) => "handshake_failed",
            CliError::Exited(_) => "server_exited",
            CliError::Closed(_) => "connection_closed",
            CliError::LoginRequired { refused: true, .. } => "auth_failed",
            CliError::LoginRequired { .. } => "login_required",
            CliError::TokenRefused { .. } => "auth_failed",
            CliError::BridgeUpstream { .. } => "upstream_failed",
            CliError::NoServerUp(_) => "no_server_up",
            CliError::NotMcp { .. } => "not_mcp",
            CliError::AuthFailed(_) => "auth_failed",
            CliError::Unsupported(_) => "unsupported",
            CliError::NotOffered { .. } => "not_offered",
            CliError::NotFound { kind, .. } => match kind {
                Missing::Tool => "tool_not_found",
                Missing::Prompt => "prompt_not_found",
                Missing::Resource => "resource_not_found",
            },
            CliError::InvalidParams(_) => "invalid_params",
            CliError::Remote { error, .. } => match error.code {
                ErrorObject::METHOD_NOT_FOUND => "method_not_found",
                ErrorObject::INVALID_PARAMS => "invalid_params",
                ErrorObject::RESOURCE_NOT_FOUND => "resource_not_found",
                _ => "server_error",
            },
            CliError::Invalid(_) => "invalid_response",
            CliError::OutputSchema { .. } => "output_schema_mismatch",
            CliError::Timeout {
                connecting: true, ..
            } => "connect_timeout",
            CliError::Timeout { .. } => "timeout",
            CliError::Interrupted => "interrupted",
            CliError::Stopped(_) => "stopped",
            CliError::ToolFailed(_) => "tool_error",
            CliError::LintErrors(_) => "lint_errors",
        }
    }

    /// The `--json` error object, `{"error": {"code": …, "exit": …, "message": …, …}}`; `None`
    /// for `tool_error` and `lint_errors`, whose result is the JSON output already.
    pub fn json_object(&self) -> Option<Value> {
        if matches!(self, CliError::ToolFailed(_) | CliError::LintErrors(_)) {
            return None;
        }
        let mut error = Map::new();
        error.insert("code".into(), self.code().into());
        error.insert("exit".into(), self.exit().code().into());
        error.insert("message".into(), self.to_string().into());
        if let Some(hint) = self.hint() {
            error.insert("hint".into(), hint.into());
        }
        self.details(&mut error);
        Some(json!({ "error": error }))
    }

    /// The members that only some codes have.
    fn details(&self, error: &mut Map<String, Value>) {
        let names = |list: &[String]| Value::from(list.to_vec());
        match self {
            CliError::NotFound {
                suggestions, said, ..
            } => {
                error.insert("didYouMean".into(), names(suggestions));
                if let Some(said) = said {
                    error.insert("serverMessage".into(), said.clone().into());
                }
            }
            CliError::InvalidArgument { suggestions, .. } => {
                error.insert("didYouMean".into(), names(suggestions));
            }
            CliError::Config { did_you_mean, .. } => {
                let meant: Vec<String> = did_you_mean.iter().cloned().collect();
                error.insert("didYouMean".into(), names(&meant));
            }
            CliError::InvalidUrl { suggestion, .. } => {
                error.insert(
                    "didYouMean".into(),
                    Value::from(suggestion.iter().cloned().collect::<Vec<_>>()),
                );
            }
            CliError::MissingArguments {
                missing, required, ..
            } => {
                error.insert("missing".into(), names(missing));
                error.insert("required".into(), names(required));
            }
            CliError::InvalidParams(rejected) => {
                error.insert("method".into(), rejected.method.clone().into());
                error.insert("rpcCode".into(), ErrorObject::INVALID_PARAMS.into());
                error.insert("required".into(), names(&rejected.required));
                if let Some(data) = &rejected.data {
                    error.insert("data".into(), data.clone());
                }
            }
            CliError::NotOffered { method, .. } => {
                error.insert("method".into(), method.clone().into());
            }
            CliError::Remote {
                method,
                error: remote,
            } => {
                error.insert("method".into(), method.clone().into());
                error.insert("rpcCode".into(), remote.code.into());
                if let Some(data) = remote
                    .data
                    .as_ref()
                    .and_then(|d| serde_json::from_str::<Value>(d.get()).ok())
                {
                    error.insert("data".into(), data);
                }
            }
            CliError::OutputSchema {
                tool,
                violations,
                total,
            } => {
                error.insert("tool".into(), tool.clone().into());
                let violations = violations
                    .iter()
                    .map(|(pointer, message)| json!({"pointer": pointer, "message": message}));
                error.insert("violations".into(), violations.collect());
                error.insert("violationCount".into(), (*total).into());
            }
            CliError::BridgeUpstream {
                method,
                upstream,
                failure,
                ..
            } => {
                error.insert("method".into(), method.clone().into());
                error.insert("upstream".into(), upstream.clone().into());
                if !failure.is_empty() {
                    error.insert("upstreamCode".into(), failure.clone().into());
                }
            }
            CliError::NoServerUp(failures) => {
                let servers = failures
                    .iter()
                    .map(|(name, why)| json!({"name": name, "reason": why}));
                error.insert("servers".into(), servers.collect());
            }
            CliError::Http { status, what, .. } => {
                error.insert("httpStatus".into(), (*status).into());
                error.insert("method".into(), what.clone().into());
            }
            _ => {}
        }
    }
}

/// Reports an error: `error: …` and `hint: …` on stderr and, with `--json`, the error object
/// on stdout (see [`CliError::json_object`]).
pub fn print_error(error: &CliError, json: bool) {
    print_report(&error.report());
    // One JSON document on stdout: when the command already wrote its own (a `tools --all`
    // listing before it found that no server came up, `watch`'s lines before Ctrl-C), the
    // error is told on stderr and by the exit code only.
    let written = crate::app::output::stdout_state() != crate::app::output::StdoutState::Nothing;
    if json
        && !written
        && let Some(mut object) = error.json_object()
    {
        crate::redact::json(&mut object);
        let mut text = serde_json::to_string_pretty(&object).unwrap_or_default();
        text.push('\n');
        let mut stdout = std::io::stdout().lock();
        // A closed pipe (`mcp … | head`) leaves nobody to tell.
        let _ = stdout
            .write_all(text.as_bytes())
            .and_then(|()| stdout.flush());
    }
}

/// Prints the error of `mcp bridge` on stderr ([`CliError::bridge_report`]): never on
/// stdout, the host's protocol channel.
pub fn print_bridge_error(error: &CliError) {
    print_report(&error.bridge_report());
}

/// Writes `report` (an error and its hint) on stderr, secrets masked, labels styled.
fn print_report(report: &str) {
    let report = crate::redact::text(report).into_owned();
    let report = crate::render::style::labels(&report);
    // Not `eprint!`: after SIGHUP the terminal is gone, and a failed write must not turn the
    // exit status into a panic's.
    let _ = std::io::stderr().write_all(report.as_bytes());
}
