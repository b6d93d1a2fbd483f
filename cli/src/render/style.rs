//! Colour, used with restraint: table headers and tool names on stdout, the `error:`,
//! `warning:` and `hint:` labels on stderr. Nothing else is painted, and never the server's
//! own text.
//!
//! Whether each stream gets colour is decided once at startup by [`init`] (`--color
//! auto|always|never`; under `auto`, `NO_COLOR`, `CLICOLOR_FORCE`, `TERM=dumb` and whether
//! the stream is a terminal, as `anstream` reads them) and kept in two process-wide flags, so
//! the renderers stay plain functions of their input: with colour off (the default, and
//! in every unit test) they give exactly the same text as before.

use std::sync::atomic::{AtomicBool, Ordering};

use anstyle::{AnsiColor, Style};

static STDOUT: AtomicBool = AtomicBool::new(false);
static STDERR: AtomicBool = AtomicBool::new(false);

const HEADER: Style = Style::new().bold();
const TOOL: Style = Style::new()
    .bold()
    .fg_color(Some(anstyle::Color::Ansi(AnsiColor::Cyan)));
const ERROR: Style = Style::new()
    .bold()
    .fg_color(Some(anstyle::Color::Ansi(AnsiColor::Red)));
const WARNING: Style = Style::new()
    .bold()
    .fg_color(Some(anstyle::Color::Ansi(AnsiColor::Yellow)));
const HINT: Style = Style::new()
    .bold()
    .fg_color(Some(anstyle::Color::Ansi(AnsiColor::Green)));

/// When to use colour (`--color`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum When {
    /// On a terminal, unless `NO_COLOR` is set (or `CLICOLOR_FORCE` asks for it anyway).
    #[default]
    Auto,
    /// Always, even in a pipe and with `NO_COLOR`.
    Always,
    /// Never.
    Never,
}

/// Decides, once at startup and before anything is printed, whether stdout and stderr get
/// colour. `stdout_to_file` (`--output FILE`): results do not go to the terminal, so `auto`
/// gives them no colour.
pub fn init(when: When, stdout_to_file: bool) {
    let choice = match when {
        When::Auto => anstream::ColorChoice::Auto,
        When::Always => anstream::ColorChoice::Always,
        When::Never => anstream::ColorChoice::Never,
    };
    choice.write_global();
    let on = |c| c != anstream::ColorChoice::Never;
    let stdout = on(anstream::AutoStream::choice(&std::io::stdout()));
    STDOUT.store(
        stdout && (when == When::Always || !stdout_to_file),
        Ordering::Relaxed,
    );
    STDERR.store(
        on(anstream::AutoStream::choice(&std::io::stderr())),
        Ordering::Relaxed,
    );
}

/// Whether stdout gets colour.
pub fn stdout_color() -> bool {
    STDOUT.load(Ordering::Relaxed)
}

/// Whether stderr gets colour.
pub fn stderr_color() -> bool {
    STDERR.load(Ordering::Relaxed)
}

fn paint(style: Style, text: &str, on: bool) -> String {
    if on && !text.is_empty() {
        format!("{style}{text}{style:#}")
    } else {
        text.to_owned()
    }
}

/// A table's header line, for stdout.
pub fn header(line: &str) -> String {
    paint(HEADER, line, stdout_color())
}

/// A tool's name as a heading, for stdout.
pub fn tool(name: &str) -> String {
    paint(TOOL, name, stdout_color())
}

/// `text` for stderr with each line's leading `error:`, `warning:` or `hint:` label painted.
pub fn labels(text: &str) -> String {
    labels_if(text, stderr_color())
}

/// [`labels`] with the decision given (for tests).
pub fn labels_if(text: &str, on: bool) -> String {
    if !on {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len() + 16);
    for line in text.split_inclusive('\n') {
        let style = [("error:", ERROR), ("warning:", WARNING), ("hint:", HINT)]
            .into_iter()
            .find(|(label, _)| line.starts_with(label));
        match style {
            Some((label, style)) => {
                out.push_str(&paint(style, label, true));
                out.push_str(&line[label.len()..]);
            }
            None => out.push_str(line),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_painted_only_when_on() {
        let report = "error: it broke\n  details: error: nested\nhint: try again\n";
        assert_eq!(labels_if(report, false), report);
        let painted = labels_if(report, true);
        assert_eq!(
            painted,
            format!(
                "{ERROR}error:{ERROR:#} it broke\n  details: error: nested\n{HINT}hint:{HINT:#} try again\n"
            )
        );
        assert!(painted.contains("\x1b["));
        // Colour is off until init says otherwise: renderers give plain text.
        assert_eq!(header("NAME  DESCRIPTION"), "NAME  DESCRIPTION");
    }
}
