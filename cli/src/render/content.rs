//! Content blocks (tool results, prompt messages) and resource contents for people.

use mcp_proto::types::{ContentBlock, MediaContent, ResourceContents};

use super::{MIN_WIDTH, wrap};

/// `1023 B`, `1.2 KiB`, `3.4 MiB`, `1.0 GiB`.
pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut value = n as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

/// The decoded length of base64 `data`, without decoding it.
pub(crate) fn base64_len(data: &str) -> u64 {
    let significant = data
        .bytes()
        .filter(|b| !b.is_ascii_whitespace() && *b != b'=')
        .count() as u64;
    significant * 3 / 4
}

fn media(kind: &str, m: &MediaContent) -> String {
    let mime = if m.mime_type.is_empty() {
        kind
    } else {
        &m.mime_type
    };
    format!("[{mime}, {}]", human_bytes(base64_len(&m.data)))
}

fn contents_header(c: &ResourceContents) -> String {
    let (uri, mime) = match c {
        ResourceContents::Text(t) => (&t.uri, t.mime_type.as_deref()),
        ResourceContents::Blob(b) => (&b.uri, b.mime_type.as_deref()),
        _ => return "[resource]".to_owned(),
    };
    let size = match c {
        ResourceContents::Blob(b) => format!(", {}", human_bytes(base64_len(&b.blob))),
        _ => String::new(),
    };
    match mime {
        Some(mime) => format!("[resource {uri} ({mime}{size})]"),
        None if size.is_empty() => format!("[resource {uri}]"),
        None => format!("[resource {uri} ({})]", &size[2..]),
    }
}

/// Renders content blocks, one after the other, each line ending in `\n`.
///
/// Text keeps its layout (indentation, runs of spaces, blank lines) and only lines wider
/// than `width` are broken ([`super::wrap_keeping_layout`]); images and audio are summarized as `[image image/png, 88 B]`;
/// a resource link shows its name, URI and type; an embedded resource shows a header and its
/// text indented (or its size when it is binary). Unknown block types are named, not dropped.
pub fn content_blocks(blocks: &[ContentBlock], width: usize) -> String {
    let width = width.max(MIN_WIDTH);
    let mut lines: Vec<String> = Vec::new();
    for block in blocks {
        match block {
            ContentBlock::Text(t) => lines.extend(super::wrap_keeping_layout(&t.text, width)),
            ContentBlock::Image(m) => lines.push(media("image", m)),
            ContentBlock::Audio(m) => lines.push(media("audio", m)),
            ContentBlock::ResourceLink(r) => {
                let mut line = format!("[link] {} <{}>", r.name, r.uri);
                let details: Vec<String> = r
                    .mime_type
                    .iter()
                    .cloned()
                    .chain(r.size.map(human_bytes))
                    .collect();
                if !details.is_empty() {
                    line.push_str(&format!(" ({})", details.join(", ")));
                }
                lines.extend(super::wrap_hanging(&line, width, 7));
                if let Some(d) = &r.description {
                    lines.extend(
                        wrap(d, width - 7)
                            .into_iter()
                            .map(|l| format!("       {l}")),
                    );
                }
            }
            ContentBlock::Resource(e) => {
                lines.extend(super::wrap_hanging(&contents_header(&e.resource), width, 2));
                if let ResourceContents::Text(t) = &e.resource {
                    lines.extend(
                        super::wrap_keeping_layout(&t.text, width - 2)
                            .into_iter()
                            .map(|l| format!("  {l}")),
                    );
                }
            }
            ContentBlock::ToolUse(t) => lines.push(format!(
                "[tool_use {} {}]",
                t.name,
                serde_json::Value::Object(t.input.clone())
            )),
            ContentBlock::ToolResult(r) => {
                lines.push(format!("[tool_result for {}]", r.tool_use_id));
                let inner = content_blocks(&r.content, width - 2);
                lines.extend(inner.lines().map(|l| format!("  {l}")));
            }
            other => lines.push(format!("[{} content]", other.kind().unwrap_or("untyped"))),
        }
    }
    let mut out = String::new();
    for line in lines {
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// Renders the contents of `resources/read` for a terminal `width` columns wide: text with
/// its layout kept (it may be code: only a line wider than the terminal is broken, its
/// continuation indented like it; [`super::wrap_keeping_layout`]), binary contents as a size
/// summary. With more than one item, each gets a header.
pub fn resource_contents(contents: &[ResourceContents], width: usize) -> String {
    let mut out = String::new();
    let many = contents.len() > 1;
    for c in contents {
        match c {
            ResourceContents::Text(t) => {
                if many {
                    out.push_str(&contents_header(c));
                    out.push('\n');
                }
                let text = t.text.strip_suffix('\n').unwrap_or(&t.text);
                for line in super::wrap_keeping_layout(text, width) {
                    out.push_str(&line);
                    out.push('\n');
                }
            }
            _ => {
                out.push_str(&contents_header(c));
                out.push('\n');
            }
        }
    }
    out
}

/// Output for a pipe or a file: the server's text exactly as sent, and what is not text as
/// notes for stderr.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Verbatim {
    /// For stdout: every text item byte for byte (no wrapping, no re-indenting, no newline
    /// added at the end). Items follow each other; a `\n` goes between two of them only
    /// when the first does not already end in one.
    pub text: String,
    /// For stderr: one line per item that is not text (images, audio, links, binary
    /// resources), in the order met, saying what it was and how to get it.
    pub notes: Vec<String>,
}

impl Verbatim {
    fn push_text(&mut self, text: &str) {
        if !self.text.is_empty() && !self.text.ends_with('\n') {
            self.text.push('\n');
        }
        self.text.push_str(text);
    }

    fn note(&mut self, line: String) {
        self.notes.push(line);
    }
}

/// The [`Verbatim`] output of content blocks (a tool result, a prompt message): text blocks
/// and the text of embedded resources on stdout as sent; a summary of anything else (the
/// same one a terminal shows) as a note.
pub fn verbatim_blocks(blocks: &[ContentBlock]) -> Verbatim {
    let mut out = Verbatim::default();
    for block in blocks {
        match block {
            ContentBlock::Text(t) => out.push_text(&t.text),
            ContentBlock::Resource(e) => match &e.resource {
                ResourceContents::Text(t) => out.push_text(&t.text),
                other => out.note(format!(
                    "{} (use --raw to write it)",
                    contents_header(other)
                )),
            },
            ContentBlock::Image(m) => {
                out.note(format!("{} (use --raw to write it)", media("image", m)))
            }
            ContentBlock::Audio(m) => {
                out.note(format!("{} (use --raw to write it)", media("audio", m)))
            }
            ContentBlock::ToolResult(r) => {
                let inner = verbatim_blocks(&r.content);
                out.push_text(&inner.text);
                out.notes.extend(inner.notes);
            }
            other => {
                // Links, tool uses and unknown kinds: their one-line summary.
                for line in
                    content_blocks(std::slice::from_ref(other), super::UNLIMITED_WIDTH).lines()
                {
                    out.note(line.to_owned());
                }
            }
        }
    }
    out
}

/// The [`Verbatim`] output of `resources/read` contents: text as sent; binary contents (and,
/// with several items, the header of each) as notes.
pub fn verbatim_contents(contents: &[ResourceContents]) -> Verbatim {
    let mut out = Verbatim::default();
    let many = contents.len() > 1;
    for c in contents {
        match c {
            ResourceContents::Text(t) => {
                if many {
                    out.note(contents_header(c));
                }
                out.push_text(&t.text);
            }
            _ => out.note(format!("{} (use --raw to write it)", contents_header(c))),
        }
    }
    out
}
