//! What to try next after each [`CliError`]: the `hint: …` line.

use mcp_proto::jsonrpc::ErrorObject;

use super::error::backticked;
use super::{CliError, Missing, NetworkFailure, Rejected};

impl CliError {
    /// What to try next, when there is something useful to say.
    pub fn hint(&self) -> Option<String> {
        Some(match self {
            CliError::Usage(_) => "see `mcp --help`, or `mcp <command> --help`".into(),
            CliError::CannotListen { kind, .. } => match kind {
                std::io::ErrorKind::AddrInUse => {
                    "another program listens on this port: pick another, or 127.0.0.1:0 for any free one"
                        .into()
                }
                std::io::ErrorKind::AddrNotAvailable => "that address is not this machine's: use \
                    127.0.0.1:PORT (0.0.0.0:PORT serves other machines too)"
                    .into(),
                std::io::ErrorKind::PermissionDenied => {
                    "ports below 1024 need privileges: pick one above 1023, or 127.0.0.1:0 for any free one"
                        .into()
                }
                _ => return None,
            },
            CliError::InvalidUrl {
                suggestion: Some(url),
                ..
            } => format!("did you mean --url {url} ?"),
            CliError::InvalidUrl { .. } => {
                "an MCP endpoint looks like http://127.0.0.1:3000/mcp or https://host/mcp".into()
            }
            CliError::InvalidArgument { suggestions, .. } => match suggestions.as_slice() {
                [] => "`mcp tools` shows each tool's input schema; --args '{…}' sends JSON as is"
                    .into(),
                names => format!(
                    "did you mean {}? `mcp tools` shows each tool's input schema",
                    or_list(names)
                ),
            },
            CliError::MissingArguments {
                tool, signature, ..
            } => format!("`{tool}` takes: {signature}"),
            CliError::Spawn {
                program,
                not_found: true,
                ..
            } => format!("is `{program}` installed and on PATH? Give its full path, or check the spelling"),
            CliError::Spawn { .. } => "check that the server command runs on its own in a shell".into(),
            CliError::Connect { .. } => {
                "is the server running and is the URL right (scheme, host, port, path such as /mcp)? \
                 Add -v to see the HTTP exchange"
                    .into()
            }
            CliError::Network { kind, .. } => network_hint(*kind).into(),
            CliError::Http {
                status, connecting, ..
            } => http_hint(*status, *connecting),
            CliError::Handshake(_) => {
                "run with -v to see what the server sent; for an older server try --era legacy, \
                 and check that a stdio server prints nothing but JSON-RPC on stdout"
                    .into()
            }
            CliError::Exited(_) => "the server may have crashed: its stderr is shown above; run with -v for the wire trace".into(),
            CliError::Closed(_) => "the connection ended before the answer came; run with -v for the wire trace".into(),
            // A task the server does not know, or one it will not cancel (already ended).
            CliError::Remote { method, error } if method.starts_with("tasks/") && error.code == ErrorObject::INVALID_PARAMS => {
                "`mcp tasks` lists the server's tasks with their ids and status".into()
            }
            // A task's state, not a crash: `tasks/result` of a cancelled or failed task.
            CliError::Remote { method, error }
                if method == "tasks/result" && error.code == ErrorObject::INTERNAL_ERROR =>
            {
                "the task may have ended without a result (cancelled or failed): `mcp tasks get ID` shows its status".into()
            }
            // Not the server's failure: the `mcp bridge` in between was stopped.
            CliError::Remote { error, .. }
                if error.message.starts_with(crate::app::bridge::stop::STOPPING) =>
            {
                "the bridge this URL serves was stopped while the request ran (it was cancelled \
                 upstream); run the command again once the bridge is back"
                    .into()
            }
            CliError::Remote { error, .. } => return remote_hint(error.code),
            CliError::NotFound { kind: Missing::Tool, server, suggestions, .. }
                if server.starts_with(super::ANY_SERVER_OF) =>
            {
                let file = &server[super::ANY_SERVER_OF.len()..];
                let lister = format!("`mcp --config {file} tools --all` lists every server's tools");
                match suggestions.as_slice() {
                    [] => lister,
                    names => format!("did you mean {}? {lister}", or_list(names)),
                }
            }
            CliError::NotFound {
                kind, suggestions, ..
            } => match suggestions.as_slice() {
                [] => kind.lister().to_owned(),
                names => format!("did you mean {}? {}", or_list(names), kind.lister()),
            },
            CliError::InvalidParams(rejected) => {
                let Rejected {
                    method,
                    name,
                    required,
                    signature,
                    ..
                } = rejected.as_ref();
                let listing = if method.starts_with("prompts/") {
                    "`mcp prompts` lists each prompt's arguments"
                } else {
                    "`mcp tools` shows its input schema"
                };
                match (required.as_slice(), signature.is_empty()) {
                    ([], true) => format!("`{name}` takes no arguments; {listing}"),
                    ([], false) => format!("`{name}` takes: {signature}; {listing}"),
                    (required, _) => format!(
                        "`{name}` requires {} (takes: {signature}); {listing}",
                        backticked(required)
                    ),
                }
            }
            CliError::Timeout {
                connecting: true, ..
            } => "raise --connect-timeout; a first `npx` run may need to download the server".into(),
            CliError::Timeout { total: true, .. } => {
                "the call kept reporting progress but ran past --max-time; raise --max-time".into()
            }
            CliError::Timeout { .. } => "raise --timeout, or watch progress with -v".into(),
            CliError::Interrupted | CliError::Stopped(_) => return None,
            CliError::ToolFailed(_) => "the tool ran and reported a failure in its own words; if it is about the arguments, `mcp tools` shows what the tool takes".into(),
            CliError::LintErrors(_) => "fix the errors listed above; warnings do not change the exit code".into(),
            CliError::File { .. } => "check the path and its permissions".into(),
            CliError::Config { hint, .. } => return hint.clone(),
            CliError::LoginRequired { refused: true, oauth: false, .. } => {
                "the server refused the token that was sent: check it (-H 'Authorization: \
                 Bearer ***', or the headers of the config entry)"
                    .into()
            }
            CliError::LoginRequired { refused: true, url, .. } if url.contains("://") => {
                format!("the server refused the token that was sent: check it, or log in again: mcp login --url {url}")
            }
            CliError::LoginRequired { oauth: false, .. } => {
                // Printed masked (crate::redact): `Bearer ***` is the one spelling left as is.
                "the server wants an access token and offers no OAuth login: send it with \
                 -H 'Authorization: Bearer ***' (*** = your token)"
                    .into()
            }
            CliError::LoginRequired { url, .. } if url.contains("://") => {
                format!("run: mcp login --url {url}")
            }
            CliError::LoginRequired { .. } => "run: mcp login --url <the server's URL>".into(),
            CliError::TokenRefused { .. } => {
                // Printed masked (crate::redact): `Bearer ***` is the one spelling left as is.
                "the server refused the token that was sent: check its value (-H \
                 'Authorization: Bearer ***', the headers of the config entry, or for `mcp \
                 bridge --listen` the value of its --bearer-token-env variable)"
                    .into()
            }
            CliError::BridgeUpstream {
                upstream, failure, ..
            } => bridge_upstream_hint(upstream, failure),
            CliError::NotMcp { .. } => "check the URL: an MCP endpoint is often /mcp (or /sse \
                 for an old server), on the port the MCP server listens on; add -v to see the \
                 HTTP exchange"
                .into(),
            // Each server's failure was printed above it (`mcp bridge` and `tools --all`
            // alike), so the hint does not send the user to a command that lists them again.
            CliError::NoServerUp(_) => "fix the entry of each server named above in the config \
                 file (or start the server it names), then run the command again"
                .into(),
            CliError::AuthFailed(_) => {
                "check the URL; without a browser on this machine use --no-browser and open the \
                 printed URL elsewhere (the redirect must reach this machine's 127.0.0.1)"
                    .into()
            }
            CliError::Invalid(_) => "the server may not follow the MCP spec; run with -v to see what it sent".into(),
            CliError::OutputSchema { tool, .. } => format!(
                "the server's result breaks the schema it declares for `{tool}` (a server bug); \
                 `mcp tools --json` shows the schema, --no-output-check shows the result anyway"
            ),
            CliError::NotOffered { reason, .. } if reason.contains("it speaks protocol 2026-07-28") => "if the server also speaks an older protocol, --era legacy connects with that one (`mcp --era legacy info` fails when it does not)".into(),
                        CliError::NotOffered { .. } => "`mcp info` shows which capabilities the server declares".into(),
            CliError::Unsupported(_) => "connect to a stdio server instead (`-- <command> [args]`), or use a build with HTTP support".into(),
        })
    }

    /// The full message for stderr: `error: …` and, when there is one, `hint: …`.
    pub fn report(&self) -> String {
        let mut out = format!("error: {self}\n");
        if let Some(hint) = self.hint() {
            out.push_str(&format!("hint: {hint}\n"));
        }
        out
    }

    /// [`report`](Self::report) as `mcp bridge` prints it: a usage error points at the
    /// bridge's own help (each mode with its options) rather than `mcp --help`.
    pub fn bridge_report(&self) -> String {
        match self {
            CliError::Usage(_) => format!("error: {self}\nhint: {BRIDGE_USAGE_HINT}\n"),
            _ => self.report(),
        }
    }
}

/// The hint of a usage error of `mcp bridge`.
pub const BRIDGE_USAGE_HINT: &str = "`mcp bridge --help` shows each mode with its options: \
     --url URL, -- <command>, or --config FILE; --listen ADDR (with --stateless, \
     --bearer-token-env, --allow-origin) to serve HTTP instead of stdio";

/// `` `a` ``, `` `a` or `b` ``, `` `a`, `b` or `c` ``.
fn or_list(names: &[String]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    match quoted.split_last() {
        None => String::new(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
    }
}

/// The hint for a bridge whose upstream `upstream` failed with the `--json` code `failure`:
/// the bridge's URL is right; what to do about the upstream.
fn bridge_upstream_hint(upstream: &str, failure: &str) -> String {
    let upstream = if upstream.is_empty() {
        "the bridge's upstream server".to_owned()
    } else {
        format!("`{upstream}`")
    };
    match failure {
        "spawn_failed" => format!(
            "the bridge could not start {upstream}: check the command after `--` of `mcp bridge` \
             (the bridge's log, where it runs, says more)"
        ),
        "server_exited" | "connection_closed" => format!(
            "the bridge's server process {upstream} ended, as said above (the bridge's log, \
             where it runs, has its last words); a new session (run the command again) starts \
             it again"
        ),
        "http_error" => format!(
            "the bridge works; {upstream} answered the bridge's request with an HTTP error (the \
             message above says which); the bridge's log, where it runs, says more"
        ),
        "server_not_running" => format!(
            "the bridge works; its server {upstream} (of the bridge's --config file) is not \
             running: fix that entry or the server it starts, then restart the bridge (the \
             bridge's log, where it runs, says more)"
        ),
        "login_required" | "auth_failed" => format!(
            "{upstream} wants authorization from the bridge: on the bridge's machine run \
             `mcp login --url` with that URL"
        ),
        _ => format!(
            "the bridge works; {upstream} is down or unreachable from it: start it, or fix \
             the bridge's --url (the bridge's log, where it runs, says more)"
        ),
    }
}

fn network_hint(kind: NetworkFailure) -> &'static str {
    match kind {
        NetworkFailure::Refused => {
            "is the server running, on that host and port? Add -v to see the HTTP exchange"
        }
        NetworkFailure::Dns => "check the host name in the URL",
        NetworkFailure::Unreachable => {
            "check the host and port in the URL, and that the network reaches it"
        }
        NetworkFailure::Reset => {
            "the server (or a proxy) dropped the connection: it may have crashed or restarted, \
             its own log may say why; add -v to see the HTTP exchange"
        }
        NetworkFailure::Timeout => {
            "the server did not answer in time; add -v to see the HTTP exchange"
        }
        NetworkFailure::Tls => {
            "check the scheme (http:// or https://) and the server's certificate"
        }
        NetworkFailure::Other => "add -v to see the HTTP exchange",
    }
}

fn http_hint(status: u16, connecting: bool) -> String {
    match status {
        403 => "the server refused access: check the token or --header values".into(),
        404 | 405 if connecting => {
            "is the URL's path right? MCP endpoints are often /mcp (or /sse for old servers)".into()
        }
        404 => "the server no longer knows this request or session; try again".into(),
        429 => "the server is rate-limiting: wait and try again".into(),
        // Not a failure: the server (a full `mcp bridge --listen`, one starting or stopping)
        // says it cannot take the request now; its error says why.
        503 => "the server cannot take the request now (HTTP 503: full, starting or stopping); \
                try again later; add -v to see the HTTP exchange"
            .into(),
        500..=599 => format!(
            "the server failed (HTTP {status}); its own log says why; add -v to see the HTTP exchange"
        ),
        _ => "the server refused the request; add -v to see the HTTP exchange".into(),
    }
}

fn remote_hint(code: i64) -> Option<String> {
    Some(
        match code {
            ErrorObject::METHOD_NOT_FOUND => {
                "the server does not implement this method; `mcp info` shows its capabilities"
            }
            ErrorObject::INVALID_PARAMS => {
                "the server rejected the arguments; `mcp tools` and `mcp prompts` show what each takes"
            }
            ErrorObject::RESOURCE_NOT_FOUND => "no such resource; `mcp resources` lists them",
            ErrorObject::PARSE_ERROR | ErrorObject::INVALID_REQUEST => {
                "the server could not read the request; run with -v to see the wire trace"
            }
            ErrorObject::INTERNAL_ERROR => {
                "the server failed internally; its log (stderr) may say why"
            }
            ErrorObject::URL_ELICITATION_REQUIRED => {
                "the server needs you to open a URL first; it is in the error data (see --json)"
            }
            _ => return None,
        }
        .to_owned(),
    )
}

#[cfg(test)]
mod tests {
    use super::http_hint;

    #[test]
    fn a_503_is_a_server_that_cannot_take_the_request_now_not_one_that_failed() {
        let busy = http_hint(503, false);
        assert!(busy.contains("cannot take the request now"), "{busy}");
        assert!(!busy.contains("failed"), "{busy}");
        assert!(http_hint(500, false).contains("the server failed (HTTP 500)"));
    }
}
