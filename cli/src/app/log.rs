//! The client library's own diagnostics on stderr: what the driver and the core notice about a
//! server that the command's output does not show (a line that is not JSON-RPC, an answer to
//! no request, a tool dropped for a broken schema, a session reset, a process group that could
//! not be killed).
//!
//! [`install`] routes the `tracing` events of the `mcp_*` crates to [`Ui::note`], one line
//! each, labelled like the command's own lines (`warning: demo: ...`), masked like every other
//! stderr line and drawn around the progress bar. Warnings and errors always show (`-q`
//! included: they are problems); `-v` adds informational events, `-vv` debug ones.

use std::fmt::Write as _;

use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt as _};

use super::ui::Ui;

/// Installs the stderr diagnostics for this process, at the level `-v` asks for. Call once,
/// after the [`Ui`] exists; a second call (a subscriber already set) changes nothing.
pub fn install(ui: &Ui, verbose: u8) {
    let max = match verbose {
        0 => Level::WARN,
        1 => Level::INFO,
        _ => Level::DEBUG,
    };
    let subscriber = tracing_subscriber::registry().with(StderrLines {
        ui: ui.clone(),
        max,
    });
    // Fails only when a subscriber is already set (tests that call `run` twice): keep it.
    let _ = tracing::subscriber::set_global_default(subscriber);
}

/// Writes each enabled event as one labelled line through the [`Ui`].
struct StderrLines {
    ui: Ui,
    max: Level,
}

impl<S: Subscriber> Layer<S> for StderrLines {
    fn enabled(&self, metadata: &tracing::Metadata<'_>, _: Context<'_, S>) -> bool {
        // `Level` orders by verbosity: TRACE > DEBUG > INFO > WARN > ERROR.
        *metadata.level() <= self.max && metadata.target().starts_with("mcp_")
    }

    fn on_event(&self, event: &Event<'_>, _: Context<'_, S>) {
        let level = *event.metadata().level();
        let line = render(event);
        if level <= Level::WARN {
            self.ui.note(&line);
        } else {
            self.ui.info(&line);
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
