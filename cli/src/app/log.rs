//! The client library's own diagnostics on stderr: what the driver and the core notice about a
//! server that the command's output does not show (a line that is not JSON-RPC, an answer to
//! no request, a tool dropped for a broken schema, a session reset, a process group that could
//! not be killed).
//!
//! [`install`] routes the `tracing` events of the `mcp_*` crates to [`Ui::note`], one line
//! each, labelled like the command's own lines (`warning: demo: ...`), masked like every other
//! stderr line and drawn around the progress bar. Warnings and errors always show (`-q`
//! included: they are problems); `-v` adds informational events, `-vv` debug ones.
//!
//! A server that keeps sending the same kind of garbage does not flood the terminal: of each
//! kind of line (server and message up to its first `:`), the first [`REPEATS_SHOWN`] show, then
//! one line says the rest are not shown; `-vv` shows them all.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::Mutex;

use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt as _};

use mcp_tokio::mcp_driver::process::SERVER_STDERR_TARGET;

use super::ui::Ui;

/// How a stdio server's own stderr lines are passed through to ours as they arrive (`mcp
/// bridge`: a host logs its server's stderr, and the real server is behind the bridge).
#[derive(Debug, Clone, Copy)]
pub struct ServerStderr {
    /// Prefix each line with `[NAME] ` (several servers of a --config share our stderr).
    pub prefixed: bool,
}

/// Installs the stderr diagnostics for this process, at the level `-v` asks for, and with
/// `passthrough` the servers' stderr lines verbatim. Call once, after the [`Ui`] exists; a
/// second call (a subscriber already set) changes nothing.
pub fn install(ui: &Ui, verbose: u8, passthrough: Option<ServerStderr>) {
    let max = match verbose {
        0 => Level::WARN,
        1 => Level::INFO,
        _ => Level::DEBUG,
    };
    let subscriber = tracing_subscriber::registry().with(StderrLines {
        ui: ui.clone(),
        max,
        repeats: (verbose < 2).then(|| Mutex::new(Repeats::default())),
        passthrough,
    });
    // Fails only when a subscriber is already set (tests that call `run` twice): keep it.
    let _ = tracing::subscriber::set_global_default(subscriber);
}

/// How many lines of one kind show before the rest are held back (without `-vv`).
pub const REPEATS_SHOWN: u32 = 5;

/// The kinds of line seen so far and how often; bounded: past [`MAX_KINDS`] kinds, new kinds
/// are not counted (and always show).
#[derive(Default)]
struct Repeats {
    seen: HashMap<String, u32>,
}

/// The most kinds of line counted.
const MAX_KINDS: usize = 256;

impl Repeats {
    /// Whether a line of `kind` shows, and whether it is the last one that does (the caller
    /// then says the rest are held back).
    fn admit(&mut self, kind: &str) -> (bool, bool) {
        if !self.seen.contains_key(kind) && self.seen.len() >= MAX_KINDS {
            return (true, false);
        }
        let n = self.seen.entry(kind.to_owned()).or_insert(0);
        *n = n.saturating_add(1);
        (*n <= REPEATS_SHOWN, *n == REPEATS_SHOWN)
    }
}

/// Writes each enabled event as one labelled line through the [`Ui`].
struct StderrLines {
    ui: Ui,
    max: Level,
    /// `None` with `-vv`: every line shows.
    repeats: Option<Mutex<Repeats>>,
    /// Servers' stderr lines shown verbatim, whatever the level.
    passthrough: Option<ServerStderr>,
}

impl StderrLines {
    /// Writes a server's stderr line as it came, `[NAME] `-prefixed if asked.
    fn pass_through(&self, event: &Event<'_>, how: ServerStderr) {
        use std::io::Write as _;
        let mut fields = Fields::default();
        event.record(&mut fields);
        let line = match (&fields.server, how.prefixed) {
            (Some(server), true) => format!("[{server}] {}\n", fields.message),
            _ => format!("{}\n", fields.message),
        };
        // A closed stderr must not end the bridge: the line is simply lost.
        let _ = std::io::stderr().lock().write_all(line.as_bytes());
    }
}

impl<S: Subscriber> Layer<S> for StderrLines {
    fn enabled(&self, metadata: &tracing::Metadata<'_>, _: Context<'_, S>) -> bool {
        if self.passthrough.is_some() && metadata.target() == SERVER_STDERR_TARGET {
            return true;
        }
        // `Level` orders by verbosity: TRACE > DEBUG > INFO > WARN > ERROR.
        *metadata.level() <= self.max && metadata.target().starts_with("mcp_")
    }

    fn on_event(&self, event: &Event<'_>, _: Context<'_, S>) {
        if let Some(how) = self.passthrough
            && event.metadata().target() == SERVER_STDERR_TARGET
        {
            self.pass_through(event, how);
            return;
        }
        let level = *event.metadata().level();
        let line = render(event);
        let (show, last) = match &self.repeats {
            Some(repeats) => {
                // The kind: label, server and message up to the first `:` after them.
                let head = line.splitn(3, ": ").take(2).collect::<Vec<_>>().join(": ");
                let rest = &line[head.len().min(line.len())..];
                let kind = format!("{head}{}", rest.split(':').next().unwrap_or_default());
                // A poisoned lock only means a panic on another print; the counts still hold.
                repeats
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .admit(&kind)
            }
            None => (true, false),
        };
        if !show {
            return;
        }
        let print = |line: &str| {
            if level <= Level::WARN {
                self.ui.note(line);
            } else {
                self.ui.info(line);
            }
        };
        print(&line);
        if last {
            print(&format!(
                "{}: further lines like this are not shown (-vv shows them all)",
                line.split(':').next().unwrap_or("warning")
            ));
        }
    }
}

/// `warning: SERVER: MESSAGE (field=value, ...)`: the label of the level, the `server` field
/// first when there is one, the other fields after the message.
fn render(event: &Event<'_>) -> String {
    let mut fields = Fields::default();
    event.record(&mut fields);
    let label = match *event.metadata().level() {
        Level::ERROR => "error",
        Level::WARN => "warning",
        Level::INFO => "info",
        Level::DEBUG => "debug",
        Level::TRACE => "trace",
    };
    let mut line = format!("{label}: ");
    if let Some(server) = &fields.server {
        let _ = write!(line, "{server}: ");
    }
    line.push_str(&fields.message);
    if !fields.rest.is_empty() {
        let _ = write!(line, " ({})", fields.rest.join(", "));
    }
    line
}

/// An event's fields, as [`render`] lays them out.
#[derive(Default)]
struct Fields {
    message: String,
    server: Option<String>,
    rest: Vec<String>,
}

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        match field.name() {
            "message" => self.message = value.to_owned(),
            "server" => self.server = Some(value.to_owned()),
            name => self.rest.push(format!("{name}={value}")),
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        match field.name() {
            // `format_args!` messages arrive here; their Debug is the text itself.
            "message" => self.message = format!("{value:?}"),
            "server" => self.server = Some(format!("{value:?}").trim_matches('"').to_owned()),
            name => self.rest.push(format!("{name}={value:?}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kind_of_line_shows_a_few_times_then_once_more_to_say_the_rest_are_held() {
        let mut r = Repeats::default();
        let shown: Vec<(bool, bool)> = (0..7).map(|_| r.admit("warning: sh: skipped")).collect();
        assert_eq!(shown.iter().filter(|(show, _)| *show).count(), 5);
        assert_eq!(shown[4], (true, true));
        assert_eq!(shown[5], (false, false));
        // Another kind is counted on its own.
        assert_eq!(r.admit("warning: sh: ignored a response"), (true, false));
    }
    use std::sync::{Arc, Mutex};

    /// Records what [`render`] makes of each event.
    struct Rendered(Arc<Mutex<Vec<String>>>);

    impl<S: Subscriber> Layer<S> for Rendered {
        fn on_event(&self, event: &Event<'_>, _: Context<'_, S>) {
            self.0.lock().unwrap().push(render(event));
        }
    }

    #[test]
    fn events_read_as_labelled_lines_with_the_server_first() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let subscriber = tracing_subscriber::registry().with(Rendered(seen.clone()));
        tracing::subscriber::with_default(subscriber, || {
            let name = "demo";
            tracing::warn!(server = name, "the server sent a line that is not JSON");
            tracing::info!(server = name, reinitializing = true, "the session expired");
            tracing::error!(error = %"boom", "could not kill process group");
        });
        assert_eq!(
            *seen.lock().unwrap(),
            [
                "warning: demo: the server sent a line that is not JSON",
                "info: demo: the session expired (reinitializing=true)",
                "error: could not kill process group (error=boom)",
            ]
        );
    }
}
