//! Where the shell's lines come from: a rustyline editor on a terminal (prompt, history, tab
//! completion), else stdin read line by line. Either runs on its own thread, since both
//! block; the runtime asks for one line at a time.

use std::io::{BufRead, IsTerminal};
use std::path::PathBuf;
use std::sync::mpsc as std_mpsc;
use std::sync::{Arc, Mutex};

use rustyline::completion::{Completer, Pair};
use rustyline::error::ReadlineError;
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::history::{DefaultHistory, History};
use rustyline::validate::Validator;
use rustyline::{Config, Context, Editor, Helper};
use tokio::sync::mpsc;

use super::catalog::SharedCatalog;
use super::complete::{Grammar, complete};
use super::printer::{Printer, Route};

/// What the user did at the prompt.
#[derive(Debug)]
pub enum Input {
    /// A line (without its newline).
    Line(String),
    /// Ctrl-C at the prompt.
    Interrupted,
    /// Ctrl-D at an empty prompt, or the end of stdin.
    Eof,
    /// The terminal or stdin failed.
    Failed(String),
}

/// Reads lines on a thread of its own; ask with [`LineReader::request`], then
/// [`LineReader::recv`].
#[derive(Debug)]
pub struct LineReader {
    /// Tells the editor thread to show the prompt again (`None` for stdin, read ahead).
    go: Option<std_mpsc::Sender<()>>,
    lines: mpsc::Receiver<Input>,
    /// The terminal mode before the editor touched it, to restore when the shell must end
    /// while the editor is waiting for a key.
    saved_mode: Option<rustix::termios::Termios>,
}

/// Everything the editor needs.
pub struct EditorSetup {
    /// The prompt, e.g. `mcp-demo> `.
    pub prompt: String,
    /// The history file (`None`: history only for this session).
    pub history: Option<PathBuf>,
    /// The server's names, for completion.
    pub catalog: SharedCatalog,
    /// Where notifications go; the editor says when its prompt is up.
    pub route: Arc<Mutex<Route>>,
}

impl LineReader {
    /// Whether the shell runs the line editor (stdin is a terminal) or reads stdin.
    pub fn interactive() -> bool {
        std::io::stdin().is_terminal()
    }

    /// Starts the line editor; the printer it returns writes above its prompt.
    pub fn editor(setup: EditorSetup) -> Result<(Self, Printer), String> {
        let config = Config::builder()
            .max_history_size(1000)
            .map_err(|e| e.to_string())?
            .history_ignore_dups(true)
            .map_err(|e| e.to_string())?
            // A line that starts with a space stays out of the history (for secrets).
            .history_ignore_space(true)
            .completion_type(rustyline::CompletionType::List)
            .build();
        let mut editor: Editor<ShellHelper, DefaultHistory> =
            Editor::with_config(config).map_err(|e| e.to_string())?;
        let grammar = Grammar::from_tree(&super::line::command_tree());
        editor.set_helper(Some(ShellHelper {
            grammar,
            catalog: setup.catalog,
        }));
        if let Some(path) = &setup.history {
            // A first run has no history yet; an unreadable file only costs the old lines.
            let _ = editor.load_history(path);
        }
        // Without it (stdout not a terminal, a dumb terminal) notifications are printed as
        // plain lines, which may land on the prompt line but lose nothing.
        let external = editor
            .create_external_printer()
            .ok()
            .map(|p| Box::new(p) as Box<dyn PrintAbovePrompt>);
        let printer = Printer::start(setup.route.clone(), external);
        let saved_mode = rustix::termios::tcgetattr(std::io::stdin()).ok();
        let (go, go_rx) = std_mpsc::channel::<()>();
        let (tx, lines) = mpsc::channel(1);
        let route = setup.route;
        let prompt = setup.prompt;
        let mut history = setup.history;
        std::thread::Builder::new()
            .name("mcp-shell-editor".into())
            .spawn(move || {
                // The runtime drops `go` when the shell ends: then the editor goes too.
                while go_rx.recv().is_ok() {
                    Route::set_prompt_up(&route, true);
                    let read = editor.readline(&prompt);
                    Route::set_prompt_up(&route, false);
                    let input = match read {
                        Ok(line) => {
                            if !line.trim().is_empty() {
                                let _ = editor.add_history_entry(line.as_str());
                                save_history(&mut editor, &mut history);
                            }
                            Input::Line(line)
                        }
                        Err(ReadlineError::Interrupted) => Input::Interrupted,
                        Err(ReadlineError::Eof) => Input::Eof,
                        Err(e) => Input::Failed(e.to_string()),
                    };
                    let last = matches!(input, Input::Eof | Input::Failed(_));
                    if tx.blocking_send(input).is_err() || last {
                        break;
                    }
                }
            })
            .map_err(|e| format!("cannot start the line editor: {e}"))?;
        Ok((
            LineReader {
                go: Some(go),
                lines,
                saved_mode,
            },
            printer,
        ))
    }

    /// Reads stdin line by line (no prompt, no history); with the printer for notifications.
    pub fn stdin(route: Arc<Mutex<Route>>) -> (Self, Printer) {
        let (tx, lines) = mpsc::channel(1);
        // Reading blocks; the thread ends at the end of stdin or when the shell is gone. If
        // it cannot start, the reader reports the end of input at once.
        let _ = std::thread::Builder::new()
            .name("mcp-shell-stdin".into())
            .spawn(move || {
                let stdin = std::io::stdin();
                let mut lock = stdin.lock();
                loop {
                    let mut line = String::new();
                    let input = match lock.read_line(&mut line) {
                        Ok(0) => Input::Eof,
                        Ok(_) => Input::Line(line.trim_end_matches(['\n', '\r']).to_owned()),
                        Err(e) => Input::Failed(format!("cannot read stdin: {e}")),
                    };
                    let last = matches!(input, Input::Eof | Input::Failed(_));
                    if tx.blocking_send(input).is_err() || last {
                        break;
                    }
                }
            });
        let reader = LineReader {
            go: None,
            lines,
            saved_mode: None,
        };
        (reader, Printer::start(route, None))
    }

    /// Asks for the next line: shows the prompt on a terminal. Call once per line, then
    /// [`recv`](Self::recv).
    pub fn request(&mut self) {
        if let Some(go) = &self.go {
            // The editor thread is gone only after Eof/Failed, which `recv` then reports.
            let _ = go.send(());
        }
    }

    /// The line asked for with [`request`](Self::request) (cancel-safe: a line that arrives
    /// after this future is dropped is kept for the next call). After `Eof` or `Failed` it
    /// keeps answering `Eof`.
    pub async fn recv(&mut self) -> Input {
        self.lines.recv().await.unwrap_or(Input::Eof)
    }

    /// Gives the terminal back while the editor still waits for a key (the shell is ending
    /// under it): the terminal mode as it was, and the cursor on a fresh line.
    pub fn abandon_prompt(&mut self) {
        self.go = None;
        if let Some(mode) = &self.saved_mode {
            let _ = rustix::termios::tcsetattr(
                std::io::stdin(),
                rustix::termios::OptionalActions::Now,
                mode,
            );
            eprintln!();
        }
    }
}

/// Appends the new history lines to the file; warns once and stops trying if it cannot.
fn save_history(editor: &mut Editor<ShellHelper, DefaultHistory>, path: &mut Option<PathBuf>) {
    let Some(file) = path.as_deref() else {
        return;
    };
    if let Some(dir) = file.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    if let Err(e) = editor.history_mut().append(file) {
        eprintln!(
            "warning: cannot save the shell history to {}: {e} (history is kept for this session only)",
            file.display()
        );
        *path = None;
    }
}

/// The default history file: `$XDG_STATE_HOME/mcp-rs/history`, else
/// `~/.local/state/mcp-rs/history`; `$MCP_HISTORY` overrides (empty: no file).
pub fn history_path() -> Option<PathBuf> {
    let env = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    if let Some(path) = std::env::var_os("MCP_HISTORY") {
        return (!path.is_empty()).then(|| PathBuf::from(path));
    }
    let state = env("XDG_STATE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| env("HOME").map(|home| PathBuf::from(home).join(".local/state")))?;
    Some(state.join("mcp-rs").join("history"))
}

/// The rustyline helper: completion only (no hints, no colouring, no multi-line input).
struct ShellHelper {
    grammar: Grammar,
    catalog: SharedCatalog,
}

impl Completer for ShellHelper {
    type Candidate = Pair;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _ctx: &Context<'_>,
    ) -> rustyline::Result<(usize, Vec<Pair>)> {
        // A poisoned lock only means a refresh panicked mid-write; complete from what is there.
        let catalog = self.catalog.read().unwrap_or_else(|e| e.into_inner());
        let (start, found) = complete(&self.grammar, &catalog, line, pos);
        let pairs = found
            .into_iter()
            .map(|c| Pair {
                display: c.display,
                replacement: c.replacement,
            })
            .collect();
        Ok((start, pairs))
    }
}

impl Hinter for ShellHelper {
    type Hint = String;
}

impl Highlighter for ShellHelper {}

impl Validator for ShellHelper {}

impl Helper for ShellHelper {}

/// Lets the printer thread own rustyline's printer behind a trait object.
pub trait PrintAbovePrompt: Send {
    /// Prints `text` (ending in a newline) above the prompt.
    fn print_above(&mut self, text: String);
}

impl<T: rustyline::ExternalPrinter + Send> PrintAbovePrompt for T {
    fn print_above(&mut self, text: String) {
        // Nothing sensible to do when the terminal refuses a line.
        let _ = self.print(text);
    }
}
