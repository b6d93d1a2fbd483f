//! Writing results: to stdout or `--output FILE`, as text, JSON or raw bytes.
//!
//! A result goes to a terminal (rendered for people: wrapped to the width, headings) or to a
//! pipe or a file (written as the server sent it: text byte for byte, anything else
//! summarized on stderr). [`Out::terminal`] tells which.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU8, Ordering};

use serde::Serialize;
use serde_json::Value;

use super::ui::Ui;
use crate::args::Cli;
use crate::exit::{CliError, Exit};
use crate::render::Verbatim;

/// What this process has written to stdout so far: nothing, text ending in a newline, or
/// text that does not (a server's text written as sent).
static STDOUT: AtomicU8 = AtomicU8::new(StdoutState::Nothing as u8);

/// What stdout has received so far (see [`record_stdout`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum StdoutState {
    /// Nothing was written.
    Nothing = 0,
    /// The last byte written was a newline.
    EndsWithNewline = 1,
    /// The last byte written was not a newline.
    OpenLine = 2,
}

/// Records that `bytes` went to stdout; every writer of results to stdout calls it, so that
/// an error can tell whether a `--json` document is already there, and `mcp shell` can end
/// a result that has no newline of its own before the next one.
pub fn record_stdout(bytes: &[u8]) {
    let state = match bytes.last() {
        None => return,
        Some(b'\n') => StdoutState::EndsWithNewline,
        Some(_) => StdoutState::OpenLine,
    };
    STDOUT.store(state as u8, Ordering::Relaxed);
}

/// What stdout has received so far.
pub fn stdout_state() -> StdoutState {
    match STDOUT.load(Ordering::Relaxed) {
        0 => StdoutState::Nothing,
        1 => StdoutState::EndsWithNewline,
        _ => StdoutState::OpenLine,
    }
}

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
                record_stdout(bytes);
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
