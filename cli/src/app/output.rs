//! Writing results: to stdout or `--output FILE`, as text, JSON or raw bytes.
//!
//! A result goes to a terminal (rendered for people: wrapped to the width, headings) or to a
//! pipe or a file (written as the server sent it: text byte for byte, anything else
//! summarized on stderr). [`Out::terminal`] tells which.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use serde::Serialize;
use serde_json::Value;

use super::ui::Ui;
use crate::args::Cli;
use crate::exit::{CliError, Exit};
use crate::render::Verbatim;

/// Where and how results are written.
#[derive(Debug, Clone)]
pub struct Out {
    /// `--output FILE`.
    pub path: Option<PathBuf>,
    /// `--raw`.
    pub raw: bool,
    /// Whether results go to a terminal (no `--output` and stdout is a terminal): only then
    /// are they rendered for people rather than written as the server sent them.
    pub terminal: bool,
}

/// Serializes for `--json`; a value that cannot be serialized becomes `null`.
pub fn to_json<T: Serialize + ?Sized>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

impl Out {
    /// The output of these options.
    pub fn new(cli: &Cli) -> Self {
        Out {
            path: cli.output.output.clone(),
            raw: cli.output.raw,
            terminal: cli.output.output.is_none() && std::io::stdout().is_terminal(),
        }
    }

    /// Writes bytes as they are.
    pub fn bytes(&self, bytes: &[u8]) -> Result<(), CliError> {
        match &self.path {
            Some(path) => std::fs::write(path, bytes).map_err(|e| CliError::File {
                path: path.clone(),
                reason: e.to_string(),
            }),
            None => {
                let mut stdout = std::io::stdout().lock();
                // A closed pipe (`mcp … | head`) is not an error worth reporting.
                let _ = stdout.write_all(bytes).and_then(|()| stdout.flush());
                Ok(())
            }
        }
    }

    /// Writes text.
    pub fn text(&self, text: &str) -> Result<Exit, CliError> {
        self.bytes(text.as_bytes()).map(|()| Exit::Ok)
    }

    /// Writes the server's text as sent and its notes (what is not text) on stderr, first,
    /// unless `-q`.
    pub fn verbatim(&self, ui: &Ui, verbatim: &Verbatim) -> Result<Exit, CliError> {
        for note in &verbatim.notes {
            ui.info(note);
        }
        self.text(&verbatim.text)
    }

    /// Writes a value as pretty JSON and a newline.
    pub fn json<T: Serialize + ?Sized>(&self, value: &T) -> Result<Exit, CliError> {
        let mut s = serde_json::to_string_pretty(&to_json(value)).unwrap_or_else(|_| "null".into());
        s.push('\n');
        self.text(&s)
    }
}
