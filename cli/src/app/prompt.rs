//! Asking the person at the terminal on behalf of the server (elicitation, sampling).
//!
//! [`at_terminal`] is the one way in: it removes the progress bar, takes the terminal for one
//! question at a time (two server requests arriving together are asked one after the other,
//! never interleaved), and reads stdin off the runtime's worker threads. The question itself
//! is a plain function of a [`BufRead`] and a [`Write`], so its logic is tested with scripted
//! input.

use std::io::{BufRead, Write};
use std::sync::{Mutex, PoisonError};

use super::answer::{Question, QuestionInput, QuestionOutput};
use super::ui::Ui;

/// Held while a question is on the terminal.
static TERMINAL: Mutex<()> = Mutex::new(());

/// Runs `ask` with stdin and stderr, after any question already on the terminal; `None` when
/// `ask` panicked (a bug, reported as a declined question rather than a crash).
pub async fn at_terminal<T, F>(ui: &Ui, ask: F) -> Option<T>
where
    T: Send + 'static,
    F: FnOnce(&mut dyn BufRead, &mut dyn Write) -> T + Send + 'static,
{
    ui.clear_progress();
    // Started now: a command cancelled while this question waits for the terminal (Ctrl-C in
    // `mcp shell`) abandons it too, and its reads never take lines meant for the prompt.
    let question = Question::start();
    // Reading stdin blocks: do it off the runtime's worker threads.
    tokio::task::spawn_blocking(move || {
        // A poisoned lock only means an earlier question panicked; the terminal is free.
        let _turn = TERMINAL.lock().unwrap_or_else(PoisonError::into_inner);
        let mut input = QuestionInput::new(question);
        // Not locked for the whole question: a writer elsewhere (a log line, the shell's
        // prompt after a Ctrl-C) must never wait for a person to answer. Once abandoned, the
        // question writes nothing more: the prompt is back on the terminal.
        let mut output = QuestionOutput::new(question);
        ask(&mut input, &mut output)
    })
    .await
    .ok()
}

/// Reads one line without its line ending; `None` at end of input (Ctrl-D), on a read error,
/// or when the question was abandoned.
pub fn read_line(input: &mut dyn BufRead) -> Option<String> {
    let mut line = String::new();
    match input.read_line(&mut line) {
        Ok(0) | Err(_) => None,
        Ok(_) => {
            let trimmed = line.trim_end_matches(['\n', '\r']).len();
            line.truncate(trimmed);
            Some(line)
        }
    }
}

/// Writes `text` and flushes, ignoring a closed stderr (the question still gets its answer).
pub fn say(output: &mut dyn Write, text: &str) {
    let _ = output.write_all(text.as_bytes());
    let _ = output.flush();
}
