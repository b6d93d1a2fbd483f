//! The doc examples a user of `mcp-tokio` reads, the driver's included (this crate shows
//! them as `mcp_tokio::driver`), name only what this crate exports: pasted into a project
//! that depends on `mcp-tokio` alone, their visible lines compile. The driver's doctests
//! compile and run them (`cargo test --doc -p mcp-driver --features testing`); this test
//! keeps a new example from naming `mcp_driver::` / `mcp_proto::` / a generic runtime `R`
//! again.

use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("a source directory") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The visible lines of the Rust code blocks in the doc comments of `text`, with their line
/// numbers.
fn visible_example_lines(text: &str) -> Vec<(usize, String)> {
    /// Where a doc comment is.
    enum Block {
        Prose,
        Rust,
        /// A `text`, `json`, `sh` ... block: not compiled.
        Other,
    }
    let mut lines = Vec::new();
    let mut block = Block::Prose;
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        let Some(doc) = trimmed
            .strip_prefix("///")
            .or_else(|| trimmed.strip_prefix("//!"))
        else {
            block = Block::Prose;
            continue;
        };
        let doc = doc.strip_prefix(' ').unwrap_or(doc);
        if let Some(info) = doc.trim_start().strip_prefix("```") {
            block = match block {
                Block::Prose if is_rust(info) => Block::Rust,
                Block::Prose => Block::Other,
                Block::Rust | Block::Other => Block::Prose,
            };
            continue;
        }
        let hidden = doc.trim_start().starts_with("# ") || doc.trim() == "#";
        if matches!(block, Block::Rust) && !hidden {
            lines.push((i + 1, doc.to_owned()));
        }
    }
    lines
}

/// Whether a fence's info string makes a Rust doctest (rustdoc's default is Rust).
fn is_rust(info: &str) -> bool {
    info.split(',').all(|w| {
        matches!(
            w.trim(),
            "" | "rust" | "no_run" | "ignore" | "should_panic" | "compile_fail"
        )
    })
}

#[test]
fn examples_name_only_what_mcp_tokio_exports() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    sources(&root.join("../driver/src"), &mut files);
    sources(&root.join("src"), &mut files);
    files.sort();
    assert!(files.len() > 20, "the driver's sources were found");
    let mut offending = Vec::new();
    let mut seen = 0;
    for file in &files {
        let text = std::fs::read_to_string(file).expect("a readable source file");
        for (line, code) in visible_example_lines(&text) {
            seen += 1;
            let generic_runtime = code.contains("<R>") || code.contains("<R:");
            let foreign_crate = code.contains("mcp_driver::")
                || code
                    .replace("mcp_tokio::mcp_proto::", "")
                    .contains("mcp_proto::");
            if foreign_crate || generic_runtime {
                offending.push(format!("{}:{line}: {code}", file.display()));
            }
        }
    }
    assert!(seen > 50, "the examples were read ({seen} lines)");
    assert!(
        offending.is_empty(),
        "doc examples a mcp-tokio user cannot paste:\n{}",
        offending.join("\n")
    );
}
