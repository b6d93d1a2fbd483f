//! The method groups written on each connection type stay true to the code.
//!
//! Every connection type of the core (and the sessions they carry) documents its public
//! methods in four groups, as quinn-proto does: (A) getters, (B) inputs `handle_*`, (C)
//! commands, (D) outputs `poll_*`. This test reads the source (rustdoc JSON is not on stable):
//! for each type, the `pub fn`s with a `self` receiver in its inherent `impl` blocks, and the
//! `(Self::name)` links in the `- **(A)` ... `- **(D)` bullets of its doc comment. Every such
//! method must be listed in exactly one group, every listed name must be such a method, inputs
//! are exactly the `handle_*` methods and outputs exactly the `poll_*` ones. The crate docs'
//! table for the two client connection types must list the same methods under the same groups.
//! Associated functions without `self` (constructors) are not part of the groups.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// A type under test: its name, the file with its `pub struct`, and the directory (or file)
/// whose `impl` blocks are its own (another type of the same name lives elsewhere).
struct Subject {
    name: &'static str,
    defined_in: &'static str,
    impls_under: &'static str,
}

const SUBJECTS: &[Subject] = &[
    Subject {
        name: "StdioConnection",
        defined_in: "stdio/mod.rs",
        impls_under: "stdio",
    },
    Subject {
        name: "Connection",
        defined_in: "http/connection.rs",
        impls_under: "http",
    },
    Subject {
        name: "Session",
        defined_in: "session/mod.rs",
        impls_under: "session",
    },
    Subject {
        name: "ServerSession",
        defined_in: "server/mod.rs",
        impls_under: "server",
    },
    Subject {
        name: "StdioServerConnection",
        defined_in: "server/stdio.rs",
        impls_under: "server/stdio.rs",
    },
    Subject {
        name: "HttpServer",
        defined_in: "server/http/mod.rs",
        impls_under: "server/http",
    },
];

const GROUPS: [char; 4] = ['A', 'B', 'C', 'D'];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The `.rs` files under `path` (or `path` itself), test modules left out.
fn sources(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_file() {
        out.push(path.to_owned());
        return;
    }
    let mut entries: Vec<_> = fs::read_dir(path)
        .unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
        .map(|e| e.expect("a directory entry").path())
        .collect();
    entries.sort();
    for p in entries {
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        if name == "tests" || name.starts_with("tests") || name == "fuzzing" {
            continue;
        }
        if p.is_dir() {
            sources(&p, out);
        } else if name.ends_with(".rs") {
            out.push(p);
        }
    }
}

/// Whether `line` opens an inherent `impl` block of `name` (at column 0, any path prefix).
fn opens_impl(line: &str, name: &str) -> bool {
    let Some(rest) = line.strip_prefix("impl ") else {
        return false;
    };
    let Some(ty) = rest.strip_suffix(" {") else {
        return false;
    };
    !ty.contains(" for ") && (ty == name || ty.ends_with(&format!("::{name}")))
}

/// The public methods with a `self` receiver of `subject`, with the file each is in.
fn public_methods(subject: &Subject) -> BTreeMap<String, String> {
    let mut files = Vec::new();
    sources(&src().join(subject.impls_under), &mut files);
    let mut methods = BTreeMap::new();
    for file in files {
        let text = fs::read_to_string(&file).expect("a source file");
        let lines: Vec<&str> = text.lines().collect();
        let mut i = 0;
        while i < lines.len() {
            if !opens_impl(lines[i], subject.name) {
                i += 1;
                continue;
            }
            i += 1;
            while i < lines.len() && lines[i] != "}" {
                let line = lines[i];
                let name = line
                    .strip_prefix("    pub fn ")
                    .or_else(|| line.strip_prefix("    pub const fn "));
                if let Some(name) = name {
                    let name: String = name
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    // The signature runs to the line that opens the body.
                    let mut signature = String::new();
                    let mut j = i;
                    while j < lines.len() {
                        signature.push_str(lines[j]);
                        if lines[j].trim_end().ends_with('{') || lines[j].contains(") {") {
                            break;
                        }
                        j += 1;
                    }
                    let params = signature.split_once('(').map_or("", |(_, p)| p);
                    if params.trim_start().starts_with("&self")
                        || params.trim_start().starts_with("&mut self")
                        || params.trim_start().starts_with("self")
                        || params.trim_start().starts_with("mut self")
                    {
                        let rel = file.strip_prefix(src()).unwrap_or(&file);
                        methods.insert(name, rel.display().to_string());
                    }
                }
                i += 1;
            }
        }
    }
    methods
}

/// The doc comment right above `pub struct <name>` in `file`, without the `///`.
fn type_doc(file: &str, name: &str) -> Vec<String> {
    let text = fs::read_to_string(src().join(file)).expect("a source file");
    let lines: Vec<&str> = text.lines().collect();
    let at = lines
        .iter()
        .position(|l| {
            l.strip_prefix("pub struct ").is_some_and(|r| {
                r.starts_with(name) && !r[name.len()..].starts_with(char::is_alphanumeric)
            })
        })
        .unwrap_or_else(|| panic!("`pub struct {name}` in {file}"));
    let mut doc = Vec::new();
    for line in lines[..at].iter().rev() {
        if let Some(d) = line.strip_prefix("///") {
            doc.push(d.strip_prefix(' ').unwrap_or(d).to_owned());
        } else if line.starts_with("#[") {
            continue;
        } else {
            break;
        }
    }
    doc.reverse();
    doc
}

/// The names linked as `(<prefix>name)` in `text`.
fn links(text: &str, prefix: &str) -> Vec<String> {
    let pattern = format!("({prefix}");
    text.match_indices(&pattern)
        .map(|(at, _)| {
            text[at + pattern.len()..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect()
        })
        .collect()
}

/// The methods each group bullet (`- **(A) ...`) of `doc` links with `(Self::name)`.
fn groups(doc: &[String]) -> BTreeMap<char, Vec<String>> {
    let mut out: BTreeMap<char, Vec<String>> = BTreeMap::new();
    let mut current: Option<char> = None;
    for line in doc {
        if let Some(rest) = line.strip_prefix("- **(") {
            current = rest.chars().next().filter(|c| GROUPS.contains(c));
        } else if !line.starts_with("  ") {
            // Not a continuation of the bullet: the list (or this bullet) ended.
            current = None;
        }
        if let Some(g) = current {
            out.entry(g).or_default().extend(links(line, "Self::"));
        }
    }
    out
}

/// Checks one type's groups against its methods; returns the problems found.
fn check(subject: &Subject, groups: &BTreeMap<char, Vec<String>>, where_: &str) -> Vec<String> {
    let methods = public_methods(subject);
    let name = subject.name;
    let mut problems = Vec::new();
    if methods.is_empty() {
        problems.push(format!(
            "{name}: no public methods found (is the parser still right?)"
        ));
    }
    for g in GROUPS {
        if !groups.contains_key(&g) {
            problems.push(format!("{name}: {where_} has no ({g}) group"));
        }
    }
    let mut seen: BTreeMap<&str, char> = BTreeMap::new();
    for (&g, names) in groups {
        for m in names {
            if let Some(other) = seen.insert(m, g) {
                problems.push(format!(
                    "{name}::{m} is listed under ({other}) and ({g}) in {where_}"
                ));
            }
            if !methods.contains_key(m) {
                problems.push(format!(
                    "{name}::{m} is listed under ({g}) in {where_} but is no public method"
                ));
            }
            if (g == 'B') != m.starts_with("handle_") {
                problems.push(format!(
                    "{name}::{m} is under ({g}): inputs are the handle_* methods"
                ));
            }
            if (g == 'D') != m.starts_with("poll_") {
                problems.push(format!(
                    "{name}::{m} is under ({g}): outputs are the poll_* methods"
                ));
            }
        }
    }
    for (m, file) in &methods {
        if !seen.contains_key(m.as_str()) {
            problems.push(format!("{name}::{m} ({file}) is in no group of {where_}"));
        }
    }
    problems
}

#[test]
fn every_public_method_is_listed_under_its_group_on_its_type() {
    let mut problems = Vec::new();
    for subject in SUBJECTS {
        let doc = type_doc(subject.defined_in, subject.name);
        let where_ = format!("the doc comment of `{}`", subject.name);
        problems.extend(check(subject, &groups(&doc), &where_));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_crate_docs_table_lists_the_connection_types_groups() {
    let lib = fs::read_to_string(src().join("lib.rs")).expect("lib.rs");
    // Column 1 of the table is stdio, column 2 HTTP.
    let columns = [("stdio::StdioConnection::", 0), ("http::Connection::", 1)];
    let mut table: [BTreeMap<char, Vec<String>>; 2] = Default::default();
    for line in lib.lines() {
        let Some(row) = line.strip_prefix("//! | **(") else {
            continue;
        };
        let Some(g) = row.chars().next().filter(|c| GROUPS.contains(c)) else {
            continue;
        };
        let cells: Vec<&str> = row.split(" | ").collect();
        assert_eq!(
            cells.len(),
            3,
            "a group row has a label and two cells: {line}"
        );
        for (prefix, col) in columns {
            table[col]
                .entry(g)
                .or_default()
                .extend(links(cells[col + 1], prefix));
        }
    }
    let mut problems = Vec::new();
    for (subject, col) in [(&SUBJECTS[0], 0), (&SUBJECTS[1], 1)] {
        let on_type = groups(&type_doc(subject.defined_in, subject.name));
        let in_table = &table[col];
        problems.extend(check(subject, in_table, "the crate docs' table"));
        for g in GROUPS {
            let a: BTreeSet<_> = on_type.get(&g).into_iter().flatten().collect();
            let b: BTreeSet<_> = in_table.get(&g).into_iter().flatten().collect();
            if a != b {
                problems.push(format!(
                    "{}: ({g}) differs between its doc comment {a:?} and the crate docs {b:?}",
                    subject.name
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The parser itself: a method added to an impl block and missing from the groups is found.
#[test]
fn the_checker_finds_a_missing_and_a_stale_method() {
    let subject = &SUBJECTS[0];
    let mut doc_groups = groups(&type_doc(subject.defined_in, subject.name));
    doc_groups
        .entry('A')
        .or_default()
        .push("no_such_method".to_owned());
    let removed = doc_groups
        .get_mut(&'D')
        .and_then(|d| d.pop())
        .expect("(D) lists methods");
    let problems = check(subject, &doc_groups, "a doctored list").join("\n");
    assert!(problems.contains("no_such_method is listed"), "{problems}");
    assert!(problems.contains(&format!("{removed} (")), "{problems}");
}
