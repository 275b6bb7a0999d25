//! Client-side caching of modern results (2026-07-28, SEP-2549): a list or read result whose
//! `ttlMs` is above zero is reused until it goes stale, without a request.
//!
//! - `cacheScope: private` results are reused only by the client that fetched them (one
//!   client, one principal); `public` ones by every client sharing the [`ResultCache`].
//! - A `list_changed` notification drops that list; `resources/updated` drops that resource's
//!   reads (over `subscriptions/listen` in the modern era, so a client that does not listen
//!   relies on `ttlMs` alone, as the server chose).
//! - Results of calls that answered `input_required` rounds are never cached (spec MRTR).
//! - Handshake-era results carry no hints, so nothing is cached there.
//! - The cache holds at most [`MAX_CACHED_RESULTS`] results; beyond that, a new result is
//!   not kept until stale ones are dropped.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use modelcontext_types::{CacheScope, ServerNotification, method};
use serde::Deserialize;
use serde_json::Value;

/// The most results one [`ResultCache`] holds.
pub const MAX_CACHED_RESULTS: usize = 1024;

/// A cache of modern list and read results. Every client has its own unless given one with
/// [`ClientBuilder::cache`](super::ClientBuilder::cache); clone it to share `public` results
/// between clients. Cheap to clone.
#[derive(Clone, Default)]
pub struct ResultCache {
    entries: Arc<Mutex<HashMap<Key, Entry>>>,
}

impl std::fmt::Debug for ResultCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResultCache").field("len", &self.len()).finish()
    }
}

#[derive(Clone, PartialEq, Eq, Hash)]
struct Key {
    /// `None` for a public result; the fetching client for a private one.
    owner: Option<u64>,
    method: &'static str,
    /// The cursor of a list page, the URI of a read.
    target: String,
}

struct Entry {
    value: Value,
    expires: Instant,
}

/// The hint fields of a result.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Hint {
    ttl_ms: Option<u64>,
    cache_scope: Option<CacheScope>,
}

/// Tells clients apart as principals: each client's private results are its own.
pub(crate) fn next_owner() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

impl ResultCache {
    /// An empty cache.
    pub fn new() -> ResultCache {
        ResultCache::default()
    }

    /// How many results it holds, stale ones included.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether it holds nothing.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Drops everything.
    pub fn clear(&self) {
        self.lock().clear();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Key, Entry>> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A fresh result for `owner`: its own private one, else a public one.
    pub(crate) fn get(&self, owner: u64, method: &'static str, target: &str) -> Option<Value> {
        let now = Instant::now();
        let entries = self.lock();
        [Some(owner), None].into_iter().find_map(|owner| {
            let key = Key { owner, method, target: target.to_owned() };
            entries.get(&key).filter(|e| e.expires > now).map(|e| e.value.clone())
        })
    }

    /// Keeps `value` if its hints allow reuse.
    pub(crate) fn put(&self, owner: u64, method: &'static str, target: &str, value: &Value) {
        let Ok(hint) = Hint::deserialize(value) else { return };
        let ttl = match hint.ttl_ms {
            Some(ms) if ms > 0 => Duration::from_millis(ms),
            _ => return,
        };
        // An absent or unknown scope is taken as the narrower one.
        let owner = match hint.cache_scope {
            Some(CacheScope::Public) => None,
            _ => Some(owner),
        };
        let now = Instant::now();
        let Some(expires) = now.checked_add(ttl) else { return };
        let mut entries = self.lock();
        if entries.len() >= MAX_CACHED_RESULTS {
            entries.retain(|_, entry| entry.expires > now);
            if entries.len() >= MAX_CACHED_RESULTS {
                return;
            }
        }
        let key = Key { owner, method, target: target.to_owned() };
        entries.insert(key, Entry { value: value.clone(), expires });
    }

    /// Drops what `notification` says changed.
    pub(crate) fn invalidate(&self, notification: &ServerNotification) {
        let methods: &[&str] = match notification {
            ServerNotification::ToolListChanged(_) => &[method::TOOLS_LIST],
            ServerNotification::PromptListChanged(_) => &[method::PROMPTS_LIST],
            ServerNotification::ResourceListChanged(_) => {
                &[method::RESOURCES_LIST, method::RESOURCES_TEMPLATES_LIST]
            }
            ServerNotification::ResourceUpdated(params) => {
                let uri = params.uri.as_str();
                self.lock().retain(|k, _| !(k.method == method::RESOURCES_READ && k.target == uri));
                return;
            }
            _ => return,
        };
        self.lock().retain(|key, _| !methods.contains(&key.method));
    }
}
