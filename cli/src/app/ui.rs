//! Where output goes: stdout for results, stderr for everything else (progress bar, log
//! messages, the wire trace), painted so that a progress bar and other lines never mix.

use std::io::{IsTerminal, Write};
use std::sync::{Arc, Mutex};

use crate::args::Cli;
use crate::render::progress_line;

/// How to print, decided once from the options and the terminal.
#[derive(Debug, Clone)]
pub struct Ui {
    /// `--json`: results as JSON on stdout.
    pub json: bool,
    /// `-q`: no progress, no log messages.
    pub quiet: bool,
    /// `-v` count: 1 = wire trace.
    pub verbose: u8,
    /// The width to render stdout for: `$COLUMNS`, else the terminal's, else (a pipe or a
    /// file) unlimited, so that nothing a script reads is cut ([`crate::output_width`]).
    pub width: usize,
    /// The width of the terminal on stderr, for the progress bar ([`crate::terminal_width`]).
    pub err_width: usize,
    /// Whether stdout is a terminal: human renderings (wrapped text, headings) only then;
    /// a pipe gets the server's text as sent.
    pub stdout_tty: bool,
    /// Whether stderr is a terminal (the progress bar is redrawn in place only then).
    pub stderr_tty: bool,
    /// Whether stdin is a terminal (elicitations are asked only then).
    pub stdin_tty: bool,
    painter: Arc<Painter>,
    /// Put before each stderr line ([`with_prefix`](Self::with_prefix)).
    prefix: Option<Arc<str>>,
}

impl Ui {
    /// The UI for these options and the real terminal.
    pub fn new(cli: &Cli) -> Self {
        // Credentials handed over on the command line are masked wherever they show up
        // (an error quoting a header, a server echoing its environment).
        for (name, value) in cli.connection.headers.iter().chain(&cli.connection.env) {
            if crate::redact::is_secret_name(name) {
                crate::redact::register(value);
            }
        }
        let stdout_tty = std::io::stdout().is_terminal();
        Ui {
            json: cli.output.json,
            quiet: cli.output.quiet,
            verbose: cli.output.verbose,
            // `--output FILE` is not the terminal: a file gets the unlimited width of a pipe.
            width: crate::output_width(stdout_tty && cli.output.output.is_none()),
            err_width: crate::terminal_width(),
            stdout_tty,
            stderr_tty: std::io::stderr().is_terminal(),
            stdin_tty: std::io::stdin().is_terminal(),
            painter: Arc::new(Painter::default()),
            prefix: None,
        }
    }

    /// The same UI with each stderr line starting `[name] `: the trace of one server among
    /// many (`--config` with `tools --all` or `call server__tool`).
    #[must_use]
    pub fn with_prefix(&self, name: &str) -> Self {
        Ui {
            prefix: Some(format!("[{name}] ").into()),
            ..self.clone()
        }
    }

    /// Prints one line on stderr (clearing and redrawing a progress bar around it), secrets
    /// masked ([`crate::redact::text`]): every stderr line goes through here.
    pub fn note(&self, line: &str) {
        let masked = crate::redact::text(line);
        match &self.prefix {
            Some(prefix) => self
                .painter
                .line(&format!("{prefix}{masked}"), self.stderr_tty),
            None => self.painter.line(&masked, self.stderr_tty),
        }
    }

    /// Prints one line on stderr unless `-q`.
    pub fn info(&self, line: &str) {
        if !self.quiet {
            self.note(line);
        }
    }

    /// Shows a progress update: redrawn in place on a terminal, a plain line with `-v`
    /// otherwise, nothing with `-q`.
    pub fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        if self.quiet {
            return;
        }
        let line = progress_line(progress, total, message, self.err_width);
        let line = crate::redact::text(&line).into_owned();
        if self.stderr_tty {
            self.painter.bar(Some(line));
        } else if self.verbose > 0 {
            self.painter.line(&line, false);
        }
    }

    /// Shows a task's status where the progress bar goes (`task working: Analyzing...`): on
    /// a terminal as the bar, else as a line with `-v`. Never with `-q`.
    pub fn task_status(&self, status: &str, message: Option<&str>) {
        if self.quiet {
            return;
        }
        let line = match message {
            Some(m) => format!("task {status}: {m}"),
            None => format!("task {status}"),
        };
        let line: String = line.chars().take(self.err_width.max(1)).collect();
        let line = crate::redact::text(&line).into_owned();
        if self.stderr_tty {
            self.painter.bar(Some(line));
        } else if self.verbose > 0 {
            self.painter.line(&line, false);
        }
    }

    /// Says which task the server made of a call (unless `-q`): a line that stays on a
    /// terminal, with `-v` otherwise, so the id is there for `mcp tasks get|result|cancel`.
    pub fn task_created(&self, id: &str) {
        if self.quiet || !(self.stderr_tty || self.verbose > 0) {
            return;
        }
        self.note(&format!("task {id} created"));
    }

    /// Removes the progress bar, if one is drawn.
    pub fn clear_progress(&self) {
        if self.stderr_tty {
            self.painter.bar(None);
        }
    }
}

/// The stderr painter: remembers the progress bar so that other lines are printed above it.
#[derive(Debug, Default)]
struct Painter {
    bar: Mutex<Option<String>>,
}

impl Painter {
    fn line(&self, line: &str, tty: bool) {
        // A poisoned lock only means another thread panicked mid-print; keep printing.
        let bar = self.bar.lock().unwrap_or_else(|e| e.into_inner());
        let mut err = std::io::stderr().lock();
        let _ = if tty && bar.is_some() {
            write!(
                err,
                "\r\x1b[K{line}\n{}",
                bar.as_deref().unwrap_or_default()
            )
        } else {
            writeln!(err, "{line}")
        };
        let _ = err.flush();
    }

    fn bar(&self, new: Option<String>) {
        let mut bar = self.bar.lock().unwrap_or_else(|e| e.into_inner());
        let mut err = std::io::stderr().lock();
        let _ = match &new {
            Some(line) => write!(err, "\r\x1b[K{line}"),
            None if bar.is_some() => write!(err, "\r\x1b[K"),
            None => Ok(()),
        };
        let _ = err.flush();
        *bar = new;
    }
}
