//! The caching hints of modern results (2026-07-28, SEP-2549): how long a client may reuse a
//! list, discover or read result (`ttlMs`) and who may share it (`cacheScope`). The default,
//! `ttlMs: 0` and `private`, tells clients not to reuse anything; a server whose lists change
//! rarely can say more, per list and per resource. The handshake era carries no hints.

use std::time::Duration;

use modelcontext_types::CacheScope;

/// One caching hint: reuse for `ttl`, by whom `scope` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheHint {
    /// How long the result stays fresh (sent in milliseconds, saturating).
    pub ttl: Duration,
    /// `Public`: any client or intermediary may reuse it; `Private`: only the principal that
    /// asked.
    pub scope: CacheScope,
}

impl CacheHint {
    /// Fresh for `ttl`, reusable as `scope` says.
    pub fn new(ttl: Duration, scope: CacheScope) -> CacheHint {
        CacheHint { ttl, scope }
    }

    /// `ttlMs`.
    pub(crate) fn ttl_ms(&self) -> u64 {
        u64::try_from(self.ttl.as_millis()).unwrap_or(u64::MAX)
    }
}

impl Default for CacheHint {
    /// `ttlMs: 0`, `private`: do not reuse.
    fn default() -> Self {
        CacheHint { ttl: Duration::ZERO, scope: CacheScope::Private }
    }
}

/// The results a server hints about; see [`McpServer::cache_hint`](super::McpServer::cache_hint).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Cacheable {
    /// `server/discover`.
    Discover,
    /// `tools/list`.
    Tools,
    /// `resources/list`.
    Resources,
    /// `resources/templates/list`.
    ResourceTemplates,
    /// `prompts/list`.
    Prompts,
    /// `resources/read`, for resources without a hint of their own
    /// ([`ResourceDef::cache_hint`](super::ResourceDef::cache_hint)).
    Reads,
    /// `skills/list` and `skills/get` (skills extension).
    Skills,
}

/// The server's hints, one per [`Cacheable`].
#[derive(Debug, Clone, Default)]
pub(crate) struct CacheHints {
    discover: CacheHint,
    tools: CacheHint,
    resources: CacheHint,
    templates: CacheHint,
    prompts: CacheHint,
    reads: CacheHint,
    skills: CacheHint,
}

impl CacheHints {
    fn slot(&mut self, what: Cacheable) -> Option<&mut CacheHint> {
        Some(match what {
            Cacheable::Discover => &mut self.discover,
            Cacheable::Tools => &mut self.tools,
            Cacheable::Resources => &mut self.resources,
            Cacheable::ResourceTemplates => &mut self.templates,
            Cacheable::Prompts => &mut self.prompts,
            Cacheable::Reads => &mut self.reads,
            Cacheable::Skills => &mut self.skills,
            #[allow(unreachable_patterns)]
            _ => return None,
        })
    }

    pub(crate) fn set(&mut self, what: Cacheable, hint: CacheHint) {
        if let Some(slot) = self.slot(what) {
            *slot = hint;
        }
    }

    pub(crate) fn get(&self, what: Cacheable) -> CacheHint {
        match what {
            Cacheable::Discover => self.discover,
            Cacheable::Tools => self.tools,
            Cacheable::Resources => self.resources,
            Cacheable::ResourceTemplates => self.templates,
            Cacheable::Prompts => self.prompts,
            Cacheable::Reads => self.reads,
            Cacheable::Skills => self.skills,
            #[allow(unreachable_patterns)]
            _ => CacheHint::default(),
        }
    }
}
