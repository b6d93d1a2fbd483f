//! Reading a `--config` file, and saying what is wrong with it: `FILE:LINE:COLUMN: <serde's
//! message>` for a file that is not JSON (the form editors jump to), a did-you-mean for a
//! misspelt server list key (`mcpServerz`, `mcp_servers`), the reason a file has no servers.
//!
//! Each is a [`CliError::Config`] with its own hint (or none), never the usage hint: the
//! command line was right, the file is not.

use std::path::Path;

use mcp_manager::config::{
    ConfigEntry, ConfigError, ConfigErrorKind, ConfigShape, ExpandError, parse_config_entries,
    stray_server_list,
};

use crate::exit::CliError;

/// Where each host keeps its servers: the hint of a file without a server list.
const LIST_KEYS: &str = "servers go under \"mcpServers\" (Claude Desktop, Cursor, Claude Code) \
or \"servers\" (VS Code's .vscode/mcp.json): {\"mcpServers\": {\"NAME\": {\"command\": \"…\"}}}";

/// Reads `file` entry by entry ([`parse_config_entries`]): a problem in one entry (an
/// undefined `${VAR}`) never hides the others. A file that cannot be used as a whole, or has
/// no servers at all, is a [`CliError::Config`] saying where and why.
pub fn entries(file: &Path) -> Result<Vec<ConfigEntry>, CliError> {
    let text = std::fs::read_to_string(file).map_err(|e| CliError::File {
        path: file.to_owned(),
        reason: e.to_string(),
    })?;
    // A secret-looking variable's value is registered for masking in everything printed.
    let vars = crate::redact::registering_lookup(|name| std::env::var(name).ok());
    let entries = parse_config_entries(
        Some(&file.display().to_string()),
        &text,
        &vars,
        &ConfigShape::Auto,
    )
    .map_err(|e| file_error(file, e))?;
    if entries.is_empty() {
        return Err(no_servers(file, &text));
    }
    Ok(entries)
}

/// The error of a file the manager could not read as a whole.
fn file_error(file: &Path, mut error: ConfigError) -> CliError {
    let name = file.display();
    match &error.kind {
        ConfigErrorKind::Json(json) => {
            if json.is_eof() && json.line() == 1 && json.column() == 0 {
                let message = format!("{name}: the file is empty");
                return config(message, Some(LIST_KEYS.to_owned()), None);
            }
            // The place says it all: no hint.
            let (line, column) = (json.line(), json.column());
            let message = format!("{name}:{line}:{column}: {}", serde_message(json));
            config(message, None, None)
        }
        ConfigErrorKind::UnknownShape { typo }
        | ConfigErrorKind::MissingMcpServers { typo }
        | ConfigErrorKind::MissingServers { typo } => {
            let hint = match typo {
                Some((key, meant)) => format!("rename {key:?} to \"{meant}\"; {LIST_KEYS}"),
                None => LIST_KEYS.to_owned(),
            };
            let meant = typo.as_ref().map(|(_, meant)| (*meant).to_owned());
            config(format!("{name}: {}", error.kind), Some(hint), meant)
        }
        // The top level or the server list is not an object, a server name is empty or
        // repeated: the message says which.
        _ => {
            let hint = error.server.is_none().then(|| LIST_KEYS.to_owned());
            // The file is named once, in front, as in every other message of this module.
            error.file = None;
            config(format!("{name}: {error}"), hint, None)
        }
    }
}

/// The error of one server entry that cannot be used (a missing `command`, an undefined
/// `${VAR}`), when that server was asked for: `FILE: server "NAME": field "F": …`.
pub fn entry_error(file: &Path, error: &ConfigError) -> CliError {
    if let ConfigErrorKind::Expand(ExpandError::Undefined { name: var }) = &error.kind {
        let entry = error
            .server
            .as_deref()
            .map(|s| format!("the config entry {s:?} of "))
            .unwrap_or_default();
        let field = error
            .field
            .as_deref()
            .map(|f| format!(" (in {f:?})"))
            .unwrap_or_default();
        return config(
            format!(
                "{entry}{} uses ${{{var}}}{field}, which is not set",
                file.display()
            ),
            Some(format!(
                "set it in the environment (`export {var}=…`, or `{var}=… mcp …`), or write \
                 ${{{var}:-default}} in the file"
            )),
            None,
        );
    }
    let hint = None;
    let mut message = file.display().to_string();
    if let Some(server) = &error.server {
        message.push_str(&format!(": server {server:?}"));
    }
    if let Some(field) = &error.field {
        message.push_str(&format!(": field {field:?}"));
    }
    config(format!("{message}: {}", error.kind), hint, None)
}

/// The error of a file whose server list is empty, naming a key beside it that looks meant
/// to hold the servers (`{"mcpServers": {}, "servers": {…}}`).
fn no_servers(file: &Path, text: &str) -> CliError {
    let name = file.display();
    match stray_server_list(text, &ConfigShape::Auto) {
        Some((key, read)) => config(
            format!(
                "{name} has no servers: {read:?} is empty, and the servers under {key:?} are not read"
            ),
            Some(format!(
                "rename {key:?} to \"{read}\", replacing the empty one (a file has one server list)"
            )),
            Some(read.to_owned()),
        ),
        None => config(
            format!("{name} has no servers"),
            Some(LIST_KEYS.to_owned()),
            None,
        ),
    }
}

/// serde_json's message without the ` at line L column C` it appends (the location is put
/// in front instead).
fn serde_message(error: &serde_json::Error) -> String {
    let text = error.to_string();
    let suffix = format!(" at line {} column {}", error.line(), error.column());
    match text.strip_suffix(&suffix) {
        Some(message) => message.to_owned(),
        None => text,
    }
}

fn config(message: String, hint: Option<String>, did_you_mean: Option<String>) -> CliError {
    CliError::Config {
        message,
        hint,
        did_you_mean,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json_error(text: &str) -> serde_json::Error {
        serde_json::from_str::<serde_json::Value>(text).unwrap_err()
    }

    #[test]
    fn serde_messages_lose_their_location_suffix_only() {
        assert_eq!(serde_message(&json_error("{\"a\": 1,}")), "trailing comma");
        assert_eq!(serde_message(&json_error("{\n  \"a\" 1}")), "expected `:`");
    }
}
