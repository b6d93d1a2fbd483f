//! The optional result cache of the discover era (`ttlMs` / `cacheScope` hints).
//!
//! The TTL and scope come from [`CacheHint::from_wire`] (absent or negative TTL is 0, clamped
//! to [`MAX_TTL_MS`](crate::cache_hint::MAX_TTL_MS), any scope but `"public"` is private), as
//! for a host's persistent tool cache, and an entry is fresh while `stored_at <= now < stored_at + ttl`. Here the clock is the
//! session's monotonic `now` and the key is the method plus what selects the result (`cursor`
//! for lists, `uri` for `resources/read`); pages are separate entries. A session is one
//! authorisation context, so private entries are kept too (never shared across sessions).
//! MRTR retries are never cached. List-changed notifications drop the matching entries;
//! `notifications/resources/updated` drops that URI's read.

use std::collections::HashMap;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::Session;
use crate::cache_hint::{CacheHint, CacheScope};
use crate::time::{Duration, Instant, saturating_add};

/// Methods whose complete results carry cache hints.
const CACHEABLE: [&str; 5] = [
    "tools/list",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
];

/// Entries kept at most; the oldest goes first.
pub(crate) const MAX_ENTRIES: usize = 256;

#[derive(Debug)]
struct Entry {
    stored_at: Instant,
    fresh_until: Instant,
    #[allow(dead_code)] // kept for a host that shares entries; a session never does
    scope: CacheScope,
    payload: Box<RawValue>,
}

/// Method + cursor / uri.
pub(crate) type Key = (String, Option<String>);

#[derive(Debug, Default)]
pub(crate) struct ResultCache {
    entries: HashMap<Key, Entry>,
}

/// The cache key of a request, when its method is cacheable.
pub(crate) fn key_of(method: &str, params: Option<&str>) -> Option<Key> {
    #[derive(Deserialize)]
    struct P {
        #[serde(default)]
        cursor: Option<String>,
        #[serde(default)]
        uri: Option<String>,
    }
    if !CACHEABLE.contains(&method) {
        return None;
    }
    let p = params
        .and_then(|p| serde_json::from_str::<P>(p).ok())
        .unwrap_or(P {
            cursor: None,
            uri: None,
        });
    let selector = if method == "resources/read" {
        Some(p.uri?)
    } else {
        p.cursor
    };
    Some((method.to_owned(), selector))
}

impl ResultCache {
    pub(crate) fn fresh(&self, key: &Key, now: Instant) -> Option<&RawValue> {
        let e = self.entries.get(key)?;
        (now >= e.stored_at && now < e.fresh_until).then_some(&*e.payload)
    }

    pub(crate) fn store(&mut self, key: Key, now: Instant, payload: &RawValue) {
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Hints<'a> {
            #[serde(default)]
            ttl_ms: Option<serde_json::Number>,
            #[serde(default, borrow)]
            cache_scope: Option<std::borrow::Cow<'a, str>>,
        }
        let Ok(h) = serde_json::from_str::<Hints<'_>>(payload.get()) else {
            return;
        };
        let ttl = h.ttl_ms.and_then(|n| n.as_i64());
        let CacheHint { ttl_ms, scope } = CacheHint::from_wire(ttl, h.cache_scope.as_deref());
        if ttl_ms == 0 {
            self.entries.remove(&key);
            return;
        }
        if self.entries.len() >= MAX_ENTRIES
            && !self.entries.contains_key(&key)
            && let Some(oldest) = self
                .entries
                .iter()
                .min_by_key(|(_, e)| e.stored_at)
                .map(|(k, _)| k.clone())
        {
            self.entries.remove(&oldest);
        }
        self.entries.insert(
            key,
            Entry {
                stored_at: now,
                fresh_until: saturating_add(now, Duration::from_millis(ttl_ms)),
                scope,
                payload: payload.to_owned(),
            },
        );
    }

    /// Drops what a server notification makes stale.
    pub(crate) fn invalidate(&mut self, method: &str, params: Option<&RawValue>) {
        let lists: &[&str] = match method {
            "notifications/tools/list_changed" => &["tools/list"],
            "notifications/prompts/list_changed" => &["prompts/list"],
            "notifications/resources/list_changed" => {
                &["resources/list", "resources/templates/list"]
            }
            "notifications/resources/updated" => {
                if let Some(key) = key_of("resources/read", params.map(RawValue::get)) {
                    self.entries.remove(&key);
                }
                return;
            }
            _ => return,
        };
        self.entries
            .retain(|(m, _), _| !lists.contains(&m.as_str()));
    }

    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }
}

impl Session {
    /// Completes `handle` from a fresh cache entry, if caching is on and there is one.
    pub(super) fn answer_from_cache(
        &mut self,
        now: Instant,
        handle: super::RequestHandle,
        method: &str,
        params: Option<&str>,
    ) -> bool {
        if !self.config.result_cache || self.era() != Some(super::Era::Discover) {
            return false;
        }
        let Some(hit) = key_of(method, params).and_then(|k| self.cache.fresh(&k, now)) else {
            return false;
        };
        let result = Ok(hit.into());
        self.events
            .push_back(super::Event::Completed { handle, result });
        true
    }

    /// How many results the cache holds (see [`SessionConfig::result_cache`](super::SessionConfig::result_cache)).
    #[must_use]
    pub fn cached_results(&self) -> usize {
        self.cache.len()
    }
}
