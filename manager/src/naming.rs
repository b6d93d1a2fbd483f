//! Tool namespacing: one flat list of tool names for a model, built from many servers.
//!
//! Models see tools as `server__tool`, and LLM APIs accept only names matching
//! `^[A-Za-z0-9_-]{1,64}$`. [`ToolNamespace`] produces such names and maps them back through a
//! lookup table; a name is never split to find its server (the `__` separator may also occur
//! inside server or tool names).
//!
//! # Rules
//!
//! - Sanitizing maps every character outside `[A-Za-z0-9_-]` to `_` (one `_` per character, so
//!   `日本` becomes `__`); ASCII letters, digits, `_` and `-` are kept (`context7` stays
//!   `context7`).
//! - A pair is *plain* when server and tool are already made of `[A-Za-z0-9_-]`, the server
//!   neither contains `__` nor ends with `_`, and `server__tool` fits in 64 characters. A plain
//!   pair's name is exactly `server__tool`. No two plain pairs can get the same name: the first
//!   `__` of such a name ends the server part.
//! - Any other pair gets `S__T_h`, where `S` and `T` are the sanitized parts truncated to share
//!   53 characters fairly (each keeps at least half unless the other needs less) and `h` is 8 hex
//!   digits of an FNV-1a hash of the exact pair. So the name depends on the pair alone.
//! - If the name is taken anyway (a tool literally named like another pair's hashed name, or a
//!   32-bit hash collision), the hash is recomputed with a counter until the name is free. Only
//!   in this case does the result depend on insertion order: the same inserts in the same order
//!   always give the same names.
//! - Inserting a pair that is already present returns its existing name; names never change
//!   while their pair stays inserted.

use std::collections::HashMap;

/// The longest name a model API accepts.
pub const MAX_NAME_LEN: usize = 64;

/// What separates the server part from the tool part.
pub const SEPARATOR: &str = "__";

/// `_` + 8 hex digits.
const SUFFIX_LEN: usize = 9;

/// Characters the server and tool parts of a hashed name share.
const PARTS_BUDGET: usize = MAX_NAME_LEN - SEPARATOR.len() - SUFFIX_LEN;

/// A bidirectional table between model-facing tool names and `(server, tool)` pairs.
///
/// Use one per agent session: [`insert`](Self::insert) every tool each server lists, hand the
/// returned names to the model, and [`resolve`](Self::resolve) the names the model calls.
/// Every name matches `^[A-Za-z0-9_-]{1,64}$` and no two pairs share one (see the
/// [module rules](self)).
#[derive(Debug, Clone, Default)]
pub struct ToolNamespace {
    by_name: HashMap<String, (String, String)>,
    by_pair: HashMap<(String, String), String>,
}

impl ToolNamespace {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many pairs are inserted.
    pub fn len(&self) -> usize {
        self.by_name.len()
    }

    /// Whether no pair is inserted.
    pub fn is_empty(&self) -> bool {
        self.by_name.is_empty()
    }

    /// The server and tool behind a model-facing `name`, if it was handed out.
    pub fn resolve(&self, name: &str) -> Option<(&str, &str)> {
        self.by_name
            .get(name)
            .map(|(server, tool)| (server.as_str(), tool.as_str()))
    }

    /// The name handed out for `(server, tool)`, if it is inserted.
    pub fn name_of(&self, server: &str, tool: &str) -> Option<&str> {
        self.by_pair
            .get(&(server.to_owned(), tool.to_owned()))
            .map(String::as_str)
    }

    /// All `(name, server, tool)` entries, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str, &str)> {
        self.by_name
            .iter()
            .map(|(name, (server, tool))| (name.as_str(), server.as_str(), tool.as_str()))
    }

    /// Adds `(server, tool)` and returns its model-facing name (its existing name if it is
    /// already present).
    pub fn insert(&mut self, server: &str, tool: &str) -> String {
        let pair = (server.to_owned(), tool.to_owned());
        if let Some(name) = self.by_pair.get(&pair) {
            return name.clone();
        }
        let mut name = preferred_name(server, tool);
        let mut round = 0u64;
        while self.by_name.contains_key(&name) {
            round += 1;
            name = hashed_name(server, tool, round);
        }
        self.by_name.insert(name.clone(), pair.clone());
        self.by_pair.insert(pair, name.clone());
        name
    }

    /// Removes one pair; returns its name if it was present.
    pub fn remove(&mut self, server: &str, tool: &str) -> Option<String> {
        let name = self.by_pair.remove(&(server.to_owned(), tool.to_owned()))?;
        self.by_name.remove(&name);
        Some(name)
    }

    /// Removes every tool of `server` (before re-inserting its new list after
    /// `notifications/tools/list_changed`, or when it is disconnected for good). Returns how
    /// many were removed.
    pub fn remove_server(&mut self, server: &str) -> usize {
        let before = self.by_name.len();
        self.by_name.retain(|_, (s, _)| s != server);
        self.by_pair.retain(|(s, _), _| s != server);
        before - self.by_name.len()
    }
}

/// Replaces every character outside `[A-Za-z0-9_-]` with `_`.
pub fn sanitize(part: &str) -> String {
    part.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The name a pair gets when nothing else holds it (see the [module rules](self)).
pub fn preferred_name(server: &str, tool: &str) -> String {
    if is_plain(server, tool) {
        format!("{server}{SEPARATOR}{tool}")
    } else {
        hashed_name(server, tool, 0)
    }
}

fn is_valid_part(part: &str) -> bool {
    part.bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

fn is_plain(server: &str, tool: &str) -> bool {
    is_valid_part(server)
        && is_valid_part(tool)
        && !server.contains(SEPARATOR)
        && !server.ends_with('_')
        && server.len() + SEPARATOR.len() + tool.len() <= MAX_NAME_LEN
}

/// `S__T_hhhhhhhh` with the parts truncated to fit and the hash of the pair and `round`.
fn hashed_name(server: &str, tool: &str, round: u64) -> String {
    let (s, t) = (sanitize(server), sanitize(tool));
    let (s_len, t_len) = fair_split(s.len(), t.len(), PARTS_BUDGET);
    let mut hash = Fnv1a::new();
    hash.write(server.as_bytes());
    // 0xFF never occurs in UTF-8, so the pair's encoding is unambiguous.
    hash.write(&[0xFF]);
    hash.write(tool.as_bytes());
    if round > 0 {
        hash.write(&[0xFE]);
        hash.write(&round.to_le_bytes());
    }
    let h = hash.finish();
    let folded = (h ^ (h >> 32)) as u32;
    // Sanitized text is ASCII, so byte lengths are character boundaries.
    format!("{}{SEPARATOR}{}_{folded:08x}", &s[..s_len], &t[..t_len])
}

/// Shares `budget` between two lengths: each keeps at least half (rounded down for the first)
/// unless it needs less, and gives what it does not need to the other.
fn fair_split(a: usize, b: usize, budget: usize) -> (usize, usize) {
    if a + b <= budget {
        return (a, b);
    }
    let half = budget / 2;
    let a_len = a.min(budget - b.min(budget - half));
    (a_len, b.min(budget - a_len))
}

/// FNV-1a, 64 bits: a small stable hash (not a secret-keeping one).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Fnv1a(u64);

impl Fnv1a {
    pub(crate) fn new() -> Self {
        Self(0xcbf2_9ce4_8422_2325)
    }

    pub(crate) fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }

    pub(crate) fn finish(self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests;
