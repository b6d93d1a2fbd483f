//! `--raw`: the bytes of a result rather than a rendering of it.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use mcp_proto::types::{CallToolResult, ContentBlock, ResourceContents};

/// Why a result has no single raw form.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RawError {
    /// The result carries no text and no binary content.
    #[error("the result has no text or binary content to write (try --json)")]
    Empty,
    /// More than one binary item: which one to write is ambiguous.
    #[error("the result has {0} binary items; --raw writes one (use --json to see them all)")]
    Ambiguous(usize),
    /// A binary item's base64 does not decode.
    #[error("the server sent invalid base64: {0}")]
    BadBase64(String),
}

/// What `--raw` writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Raw {
    /// The bytes.
    pub bytes: Vec<u8>,
    /// Text items beside the one binary item, not written (the caller says so on stderr).
    pub texts_left_out: usize,
}

enum Piece<'a> {
    Text(&'a str),
    Base64(&'a str),
}

fn assemble(pieces: Vec<Piece<'_>>) -> Result<Raw, RawError> {
    let binaries: Vec<&str> = pieces
        .iter()
        .filter_map(|p| match p {
            Piece::Base64(b) => Some(*b),
            Piece::Text(_) => None,
        })
        .collect();
    match binaries.len() {
        0 => {}
        1 => {
            let compact: String = binaries[0].split_ascii_whitespace().collect();
            let bytes = STANDARD
                .decode(compact)
                .map_err(|e| RawError::BadBase64(e.to_string()))?;
            return Ok(Raw {
                bytes,
                texts_left_out: pieces.len() - 1,
            });
        }
        n => return Err(RawError::Ambiguous(n)),
    }
    let texts: Vec<&str> = pieces
        .iter()
        .filter_map(|p| match p {
            Piece::Text(t) => Some(*t),
            Piece::Base64(_) => None,
        })
        .collect();
    if texts.is_empty() {
        return Err(RawError::Empty);
    }
    Ok(Raw {
        bytes: texts.join("\n").into_bytes(),
        texts_left_out: 0,
    })
}

/// The raw bytes of a tool result: its one image / audio / blob decoded, or else its text
/// items joined by newlines (caption text next to a single binary item is left out and
/// counted in [`Raw::texts_left_out`]).
pub fn raw_tool_result(result: &CallToolResult) -> Result<Raw, RawError> {
    let pieces = result
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text(t) => Some(Piece::Text(&t.text)),
            ContentBlock::Image(m) | ContentBlock::Audio(m) => Some(Piece::Base64(&m.data)),
            ContentBlock::Resource(e) => contents_piece(&e.resource),
            _ => None,
        })
        .collect();
    assemble(pieces)
}

fn contents_piece(c: &ResourceContents) -> Option<Piece<'_>> {
    match c {
        ResourceContents::Text(t) => Some(Piece::Text(&t.text)),
        ResourceContents::Blob(b) => Some(Piece::Base64(&b.blob)),
        _ => None,
    }
}

/// The raw bytes of `resources/read` contents, by the same rule as [`raw_tool_result`].
pub fn raw_resource(contents: &[ResourceContents]) -> Result<Raw, RawError> {
    assemble(contents.iter().filter_map(contents_piece).collect())
}
