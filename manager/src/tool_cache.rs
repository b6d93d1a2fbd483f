//! The tool cache: one entry format and one freshness rule, under two policies.
//!
//! The manager keeps each server's last `tools/list` so that a slow server can be served from
//! the cache after the start-up deadline ([`CachePolicy::StartupFallback`]); a 2026-07-28 server
//! marks its results with `ttlMs` / `cacheScope` ([`CachePolicy::Ttl`]). Both produce the same
//! [`CacheEntry`]: a key, the wall-clock time it was stored, a TTL, a scope and the raw JSON
//! payload. An entry is fresh while `stored_at_ms <= now_ms < stored_at_ms + ttl_ms`.
//!
//! # Keys
//!
//! [`CacheKey::for_server`] is a SHA-256 over the server's name and everything that decides
//! which server answers: command, args, cwd, env file, env (names and values), URL, transport,
//! headers (names and values). Any config change therefore misses the cache, and a different
//! credential (the authorisation context a `"private"` entry must not cross) gives a different
//! key. The key is a digest, so no value is stored in clear (low-entropy secrets could still be
//! guessed by someone who knows the rest of the config).
//!
//! # File format
//!
//! One file per entry (the adapter names it [`CacheKey::file_name`] in a directory the caller
//! chooses), JSON: `{"version": 1, "key", "server", "storedAtMs", "ttlMs", "scope", "payload"}`.
//! [`decode`] reports unknown versions and corrupt files as a [`DecodeError`]; the adapter
//! ignores such a file (and may overwrite it). Files over [`MAX_FILE_BYTES`] are refused.

use std::collections::HashMap;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use sha2::{Digest, Sha256};

use super::config::{ServerConfig, TransportConfig};
use mcp_proto::cache_hint::CacheHint;
use mcp_proto::time::Duration;

/// The cache file format version [`encode`] writes and [`decode`] reads.
pub const FORMAT_VERSION: u64 = 1;

/// The largest cache file [`decode`] accepts.
pub const MAX_FILE_BYTES: usize = 16 * 1024 * 1024;

pub use mcp_proto::cache_hint::{CacheScope, MAX_TTL_MS};

/// Identifies one server configuration: 64 lowercase hex digits of a SHA-256.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct CacheKey(String);

impl CacheKey {
    /// The key of `server`'s configuration (see the [module docs](self)).
    pub fn for_server(server: &ServerConfig) -> Self {
        let mut h = Fields(Sha256::new());
        h.str("mcp-proto tool cache key v1");
        h.str(&server.name);
        match &server.transport {
            TransportConfig::Stdio(stdio) => {
                h.str("stdio");
                h.str(&stdio.command);
                h.list(stdio.args.iter().map(String::as_str));
                h.opt(stdio.cwd.as_deref());
                h.opt(stdio.env_file.as_deref());
                h.str(if stdio.clear_env { "clear" } else { "inherit" });
                h.pairs(&stdio.env);
            }
            TransportConfig::Http(http) => {
                h.str("http");
                h.str(&http.url);
                h.str(&format!("{:?}", http.transport));
                h.pairs(&http.headers);
            }
        }
        let digest = h.0.finalize();
        let mut hex = String::with_capacity(64);
        for b in digest {
            // Writing to a String cannot fail.
            let _ = write!(hex, "{b:02x}");
        }
        CacheKey(hex)
    }

    /// The key as text (64 hex digits).
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// A file name for this key's cache file: `tools-<key>.json`.
    pub fn file_name(&self) -> String {
        format!("tools-{}.json", self.0)
    }
}

/// Length-prefixed fields, so that no two configurations encode the same.
struct Fields(Sha256);

impl Fields {
    fn str(&mut self, s: &str) {
        self.0.update((s.len() as u64).to_le_bytes());
        self.0.update(s.as_bytes());
    }
    fn opt(&mut self, s: Option<&str>) {
        match s {
            None => self.0.update([0]),
            Some(s) => {
                self.0.update([1]);
                self.str(s);
            }
        }
    }
    fn list<'a>(&mut self, items: impl ExactSizeIterator<Item = &'a str>) {
        self.0.update((items.len() as u64).to_le_bytes());
        for item in items {
            self.str(item);
        }
    }
    fn pairs(&mut self, pairs: &[(String, String)]) {
        // Sorted: the order of `env` or `headers` in the file does not change the server.
        let mut sorted: Vec<_> = pairs.iter().collect();
        sorted.sort();
        self.0.update((sorted.len() as u64).to_le_bytes());
        for (name, value) in sorted {
            self.str(name);
            self.str(value);
        }
    }
}

/// How an entry's TTL and scope are chosen when it is stored.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CachePolicy {
    /// The manager's own fallback: keep the tools for `max_age` to serve them after the
    /// start-up deadline while the server is still connecting. Scope: private.
    StartupFallback {
        /// How long a stored list may be served.
        max_age: Duration,
    },
    /// A server's cache hint (`ttlMs`, `cacheScope`); see [`CachePolicy::from_hint`].
    Ttl {
        /// The TTL in milliseconds, at most [`MAX_TTL_MS`].
        ttl_ms: u64,
        /// The scope.
        scope: CacheScope,
    },
}

impl CachePolicy {
    /// The policy for a result's `ttlMs` and `cacheScope` as sent: absent or negative TTL is 0,
    /// longer than [`MAX_TTL_MS`] is clamped; a scope other than `"public"` is private.
    pub fn from_hint(ttl_ms: Option<i64>, scope: Option<&str>) -> Self {
        let CacheHint { ttl_ms, scope } = CacheHint::from_wire(ttl_ms, scope);
        CachePolicy::Ttl { ttl_ms, scope }
    }

    fn ttl_and_scope(self) -> (u64, CacheScope) {
        match self {
            CachePolicy::StartupFallback { max_age } => (
                u64::try_from(max_age.as_millis()).unwrap_or(u64::MAX),
                CacheScope::Private,
            ),
            CachePolicy::Ttl { ttl_ms, scope } => (ttl_ms.min(MAX_TTL_MS), scope),
        }
    }
}

/// One cached `tools/list` result (or any cacheable result) of one server configuration.
#[derive(Debug, Clone)]
pub struct CacheEntry {
    /// The configuration it belongs to.
    pub key: CacheKey,
    /// The server's name when stored (for display; the key decides).
    pub server: String,
    /// Wall-clock milliseconds (Unix epoch) when it was stored, as the adapter read them.
    pub stored_at_ms: u64,
    /// How long it stays fresh.
    pub ttl_ms: u64,
    /// Who may be served it.
    pub scope: CacheScope,
    /// The result as received: raw JSON.
    pub payload: Box<RawValue>,
}

impl PartialEq for CacheEntry {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
            && self.server == other.server
            && self.stored_at_ms == other.stored_at_ms
            && self.ttl_ms == other.ttl_ms
            && self.scope == other.scope
            && self.payload.get() == other.payload.get()
    }
}

impl CacheEntry {
    /// An entry stored at `now_ms` under `policy`.
    pub fn new(
        server: &ServerConfig,
        now_ms: u64,
        policy: CachePolicy,
        payload: Box<RawValue>,
    ) -> Self {
        let (ttl_ms, scope) = policy.ttl_and_scope();
        Self {
            key: CacheKey::for_server(server),
            server: server.name.clone(),
            stored_at_ms: now_ms,
            ttl_ms,
            scope,
            payload,
        }
    }

    /// Whether the entry is fresh at wall-clock `now_ms`: `stored_at_ms <= now_ms <
    /// stored_at_ms + ttl_ms`. An entry from the future (the clock went back) is not fresh.
    pub fn is_fresh(&self, now_ms: u64) -> bool {
        now_ms >= self.stored_at_ms && now_ms - self.stored_at_ms < self.ttl_ms
    }

    /// Whether the entry is younger than `max_age` at `now_ms`, whatever its TTL: for serving a
    /// stale entry when the server is unreachable (the specification allows it on error).
    pub fn is_younger_than(&self, now_ms: u64, max_age: Duration) -> bool {
        let max_age = u64::try_from(max_age.as_millis()).unwrap_or(u64::MAX);
        now_ms >= self.stored_at_ms && now_ms - self.stored_at_ms < max_age
    }
}

/// Why a cache file was not used.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// Written by another version of this format.
    #[error("unknown cache format version {0}")]
    UnknownVersion(u64),
    /// Larger than [`MAX_FILE_BYTES`].
    #[error("cache file too large ({0} bytes)")]
    TooLarge(usize),
    /// Not a cache file of this format (truncated, edited, another program's).
    #[error("corrupt cache file: {0}")]
    Corrupt(String),
    /// A valid entry, but for another configuration.
    #[error("cache file is for another configuration")]
    KeyMismatch,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct FileV1<'a> {
    version: u64,
    key: CacheKey,
    server: String,
    stored_at_ms: u64,
    ttl_ms: u64,
    scope: CacheScope,
    #[serde(borrow)]
    payload: &'a RawValue,
}

#[derive(Deserialize)]
struct VersionOnly {
    version: u64,
}

/// The contents of `entry`'s cache file.
pub fn encode(entry: &CacheEntry) -> Vec<u8> {
    let file = FileV1 {
        version: FORMAT_VERSION,
        key: entry.key.clone(),
        server: entry.server.clone(),
        stored_at_ms: entry.stored_at_ms,
        ttl_ms: entry.ttl_ms,
        scope: entry.scope,
        payload: &entry.payload,
    };
    // Strings, integers and already-valid raw JSON always serialize.
    serde_json::to_vec(&file).unwrap_or_default()
}

/// Reads a cache file's contents. With `expected = Some(key)`, an entry for another key is
/// [`DecodeError::KeyMismatch`].
pub fn decode(bytes: &[u8], expected: Option<&CacheKey>) -> Result<CacheEntry, DecodeError> {
    if bytes.len() > MAX_FILE_BYTES {
        return Err(DecodeError::TooLarge(bytes.len()));
    }
    let corrupt = |e: serde_json::Error| DecodeError::Corrupt(e.to_string());
    let VersionOnly { version } = serde_json::from_slice(bytes).map_err(corrupt)?;
    if version != FORMAT_VERSION {
        return Err(DecodeError::UnknownVersion(version));
    }
    let file: FileV1<'_> = serde_json::from_slice(bytes).map_err(corrupt)?;
    if file.key.0.len() != 64 || !file.key.0.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(DecodeError::Corrupt("key is not a SHA-256 in hex".into()));
    }
    if expected.is_some_and(|k| *k != file.key) {
        return Err(DecodeError::KeyMismatch);
    }
    Ok(CacheEntry {
        key: file.key,
        server: file.server,
        stored_at_ms: file.stored_at_ms,
        ttl_ms: file.ttl_ms,
        scope: file.scope,
        payload: file.payload.to_owned(),
    })
}

/// The in-memory side of the cache: the entries the manager holds, by key.
///
/// The adapter loads files into it with [`insert`](Self::insert) (after [`decode`]), stores new
/// results the same way (and writes [`encode`] to disk), and deletes the file when
/// [`handle_list_changed`](Self::handle_list_changed) returns an entry.
#[derive(Debug, Clone, Default)]
pub struct ToolCache {
    entries: HashMap<CacheKey, CacheEntry>,
}

impl ToolCache {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// Stores `entry`, replacing any entry with the same key.
    pub fn insert(&mut self, entry: CacheEntry) {
        self.entries.insert(entry.key.clone(), entry);
    }

    /// The entry for `key` if it is fresh at `now_ms`.
    pub fn fresh(&self, key: &CacheKey, now_ms: u64) -> Option<&CacheEntry> {
        self.entries.get(key).filter(|e| e.is_fresh(now_ms))
    }

    /// The entry for `key`, fresh or not.
    pub fn get(&self, key: &CacheKey) -> Option<&CacheEntry> {
        self.entries.get(key)
    }

    /// `notifications/tools/list_changed` arrived from the server with this key: its entry is
    /// no longer valid. Returns the removed entry (so the adapter deletes its file).
    pub fn handle_list_changed(&mut self, key: &CacheKey) -> Option<CacheEntry> {
        self.entries.remove(key)
    }
}

#[cfg(test)]
mod tests;
