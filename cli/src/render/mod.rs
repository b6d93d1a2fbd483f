//! Human output under a given terminal width: text wrapping and truncation, tables, tool input
//! schemas, content blocks, the progress line and log lines. Also the `--raw` extraction.
//!
//! Every function takes the width as a parameter (the binary detects it at runtime), so the
//! output is a pure function of its input and can be snapshot-tested. Widths are display
//! columns (East Asian wide characters count two). Nothing here prints.

mod content;
mod log;
mod progress;
mod raw;
mod schema;
pub mod style;
mod table;

#[cfg(test)]
mod tests;

pub use content::{
    Verbatim, content_blocks, human_bytes, resource_contents, verbatim_blocks, verbatim_contents,
};
pub use log::log_line;
pub use progress::progress_line;
pub use raw::{Raw, RawError, raw_resource, raw_tool_result};
pub use schema::schema_lines;
pub use table::{Align, Column, Table};

use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// The width used for a terminal whose size cannot be asked.
pub const DEFAULT_WIDTH: usize = 80;

/// The width output is rendered for when it goes to a pipe or a file: wide enough that no
/// table cell is cut and no line is wrapped (a script must see every name and URI whole),
/// small enough that width arithmetic cannot overflow.
pub const UNLIMITED_WIDTH: usize = 1 << 20;

/// The narrowest width the renderers honour; below it they behave as at this width.
pub const MIN_WIDTH: usize = 20;

/// The display width of `text` in terminal columns.
pub fn display_width(text: &str) -> usize {
    UnicodeWidthStr::width(text)
}

/// Cuts `text` to at most `width` columns, ending in `…` when anything was cut.
pub fn truncate(text: &str, width: usize) -> String {
    if display_width(text) <= width {
        return text.to_owned();
    }
    if width == 0 {
        return String::new();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = c.width().unwrap_or(0);
        if used + w > width - 1 {
            break;
        }
        out.push(c);
        used += w;
    }
    out.push('…');
    out
}

/// Pads `text` with spaces on the right to `width` columns (no cut when it is wider).
pub fn pad(text: &str, width: usize) -> String {
    let w = display_width(text);
    let mut out = text.to_owned();
    out.extend(std::iter::repeat_n(' ', width.saturating_sub(w)));
    out
}

/// Wraps `text` at word boundaries into lines of at most `width` columns.
///
/// Existing line breaks are kept, runs of spaces collapse to one, and a word longer than the
/// width is split. An empty text gives one empty line, so callers can rely on `[0]`.
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut lines = Vec::new();
    for paragraph in text.split('\n') {
        let paragraph = paragraph.trim_end_matches('\r');
        let mut line = String::new();
        let mut used = 0;
        for word in paragraph.split_whitespace() {
            let mut word = word;
            loop {
                let w = display_width(word);
                let gap = usize::from(used > 0);
                if used + gap + w <= width {
                    if gap == 1 {
                        line.push(' ');
                    }
                    line.push_str(word);
                    used += gap + w;
                    break;
                }
                if used > 0 {
                    lines.push(std::mem::take(&mut line));
                    used = 0;
                    continue;
                }
                // A word wider than a whole line: split it at the width.
                let (head, tail) = split_at_width(word, width);
                lines.push(head.to_owned());
                word = tail;
                if word.is_empty() {
                    break;
                }
            }
        }
        lines.push(line);
    }
    lines
}

/// Wraps a server's text for a terminal without rewriting it: every line keeps its leading
/// indentation and its runs of spaces; only a line wider than `width` is broken, at its last
/// space that fits (or at the width, inside a long word), and its continuation lines get the
/// same indentation. Blank lines stay. Used for text content, where indentation may be code
/// or JSON (prose in table cells uses [`wrap`]).
pub fn wrap_keeping_layout(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut lines = Vec::new();
    for line in text.split('\n') {
        let line = line.trim_end_matches('\r').trim_end();
        if display_width(line) <= width {
            lines.push(line.to_owned());
            continue;
        }
        let body = line.trim_start();
        let indent_str = &line[..line.len() - body.len()];
        // Tabs count as one column here; an indent of more than half the width is capped so
        // that every continuation line still carries text.
        let indent = display_width(indent_str)
            .max(indent_str.len())
            .min(width / 2);
        let mut first = true;
        let mut rest = body;
        while !rest.is_empty() {
            let (prefix, room) = if first {
                (
                    indent_str.to_owned(),
                    width.saturating_sub(display_width(indent_str)).max(1),
                )
            } else {
                (" ".repeat(indent), width - indent)
            };
            let (head, tail) = if display_width(rest) <= room {
                (rest, "")
            } else {
                let (fits, _) = split_at_width(rest, room);
                match fits
                    .rfind(' ')
                    .filter(|&i| !fits[..i].trim_end().is_empty())
                {
                    // Break at the last space that fits; the spaces there are the break.
                    Some(i) => (fits[..i].trim_end(), rest[i..].trim_start()),
                    None => split_at_width(rest, room),
                }
            };
            lines.push(format!("{prefix}{head}"));
            rest = tail;
            first = false;
        }
    }
    lines
}

fn split_at_width(text: &str, width: usize) -> (&str, &str) {
    let mut used = 0;
    for (i, c) in text.char_indices() {
        let w = c.width().unwrap_or(0);
        if used + w > width && i > 0 {
            return text.split_at(i);
        }
        used += w;
    }
    (text, "")
}

/// Wraps `text` into lines of at most `width` columns where every line after the first starts
/// with `hang` spaces (a hanging indent). Line breaks in `text` are treated as spaces.
pub fn wrap_hanging(text: &str, width: usize, hang: usize) -> Vec<String> {
    let width = width.max(1);
    // A hang that leaves less than a few columns would loop on splitting; cap it.
    let hang = hang.min(width.saturating_sub(4));
    let mut lines = Vec::new();
    let mut line = String::new();
    let mut used = 0;
    let mut fresh = true;
    for word in text.split_whitespace() {
        let mut word = word;
        loop {
            let w = display_width(word);
            let gap = usize::from(!fresh);
            if used + gap + w <= width {
                if gap == 1 {
                    line.push(' ');
                }
                line.push_str(word);
                used += gap + w;
                fresh = false;
                break;
            }
            if !fresh {
                lines.push(std::mem::take(&mut line));
                line = " ".repeat(hang);
                used = hang;
                fresh = true;
                continue;
            }
            let (head, tail) = split_at_width(word, width - used);
            line.push_str(head);
            lines.push(std::mem::take(&mut line));
            line = " ".repeat(hang);
            used = hang;
            word = tail;
            if word.is_empty() {
                break;
            }
        }
    }
    if !fresh || lines.is_empty() {
        lines.push(line);
    }
    lines.into_iter().map(|l| l.trim_end().to_owned()).collect()
}
