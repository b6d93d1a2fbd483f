//! Printing notifications in the shell without breaking what is on screen: above the prompt
//! while the editor waits for input (rustyline's external printer), through the command's
//! [`Ui`] while a command runs (so a progress bar is redrawn below the line).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc as std_mpsc;
use std::sync::{Arc, Mutex};

use super::input::PrintAbovePrompt;
use crate::app::ui::Ui;

/// Where a notification line goes right now.
#[derive(Debug)]
pub struct Route {
    /// Whether the editor's prompt is up (then lines go above it).
    prompt_up: bool,
    /// The UI of the running command, or the shell's own between commands.
    ui: Ui,
}

impl Route {
    /// A route that prints through `ui` until told otherwise.
    pub fn new(ui: Ui) -> Arc<Mutex<Route>> {
        Arc::new(Mutex::new(Route {
            prompt_up: false,
            ui,
        }))
    }

    /// The editor calls this around each `readline`.
    pub fn set_prompt_up(route: &Mutex<Route>, up: bool) {
        lock(route).prompt_up = up;
    }

    /// The shell calls this when a command starts (its UI) and ends (the shell's UI).
    pub fn set_ui(route: &Mutex<Route>, ui: Ui) {
        lock(route).ui = ui;
    }
}

fn lock(route: &Mutex<Route>) -> std::sync::MutexGuard<'_, Route> {
    // A poisoned lock only means a print panicked; the two fields are still consistent.
    route.lock().unwrap_or_else(|e| e.into_inner())
}

/// How many lines may wait for the terminal; beyond that they are counted, not kept.
const QUEUE: usize = 256;

/// Sends notification lines to a printing thread (rustyline's printer may block until the
/// editor takes the line, e.g. while it waits for a second Tab, which must never hold up the
/// runtime). The queue is bounded: lines that do not fit are dropped and reported as a count.
#[derive(Debug, Clone)]
pub struct Printer {
    lines: std_mpsc::SyncSender<String>,
    dropped: Arc<AtomicU64>,
}

impl Printer {
    /// Starts the printing thread; `above_prompt` is the editor's printer, if there is one.
    pub fn start(
        route: Arc<Mutex<Route>>,
        mut above_prompt: Option<Box<dyn PrintAbovePrompt>>,
    ) -> Printer {
        let (lines, rx) = std_mpsc::sync_channel::<String>(QUEUE);
        let dropped = Arc::new(AtomicU64::new(0));
        let missed = dropped.clone();
        let print = move |line: String| {
            let route = lock(&route);
            if route.ui.quiet {
                return;
            }
            match above_prompt.as_mut() {
                Some(printer) if route.prompt_up => {
                    // Release the route: the editor takes it when its readline returns.
                    drop(route);
                    printer.print_above(format!("{line}\n"));
                }
                _ => route.ui.note(&line),
            }
        };
        let spawned = std::thread::Builder::new()
            .name("mcp-shell-printer".into())
            .spawn(move || {
                let mut print = print;
                // Ends when every `Printer` is dropped.
                while let Ok(line) = rx.recv() {
                    print(line);
                    let n = missed.swap(0, Ordering::Relaxed);
                    if n > 0 {
                        print(format!(
                            "warning: {n} notifications were not shown (they came faster than the terminal took them)"
                        ));
                    }
                }
            });
        if let Err(e) = spawned {
            eprintln!("warning: notifications will not be shown: {e}");
        }
        Printer { lines, dropped }
    }

    /// Prints one line (no newline needed); never blocks.
    pub fn line(&self, line: String) {
        match self.lines.try_send(line) {
            Ok(()) => {}
            Err(std_mpsc::TrySendError::Full(_)) => {
                self.dropped.fetch_add(1, Ordering::Relaxed);
            }
            // The thread is gone only if it could not start; the warning was printed then.
            Err(std_mpsc::TrySendError::Disconnected(_)) => {}
        }
    }
}
