//! What a handshake-era session is ([`SessionRecord`]) and the changes it goes through
//! ([`SessionChange`]): the session's state as the core keeps it, and as a
//! [`SessionStore`](crate::server::http::SessionStore) shares it between the instances of a
//! deployment.

use std::collections::BTreeSet;

/// What a handshake-era session is, enough for any instance to serve it without running
/// `initialize` again.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SessionRecord {
    /// The `Mcp-Session-Id`.
    pub id: String,
    /// Who opened the session ([`PrincipalId`](crate::PrincipalId)); only they may use it.
    pub principal: Option<String>,
    /// The protocol revision `initialize` agreed on.
    pub protocol_version: String,
    /// The client's `initialize` params, as JSON: its capabilities and `clientInfo`.
    pub initialize: String,
    /// Whether `notifications/initialized` arrived.
    pub initialized: bool,
    /// The level `logging/setLevel` asked for, if any.
    pub log_level: Option<String>,
    /// The URIs `resources/subscribe` asked for.
    pub subscriptions: BTreeSet<String>,
}

impl SessionRecord {
    /// A session just made by `initialize`: not yet initialized, no log level, no
    /// subscriptions.
    pub fn new(
        id: impl Into<String>,
        protocol_version: impl Into<String>,
        initialize: impl Into<String>,
    ) -> SessionRecord {
        SessionRecord {
            id: id.into(),
            principal: None,
            protocol_version: protocol_version.into(),
            initialize: initialize.into(),
            initialized: false,
            log_level: None,
            subscriptions: BTreeSet::new(),
        }
    }

    /// The same record, owned by `principal`.
    pub fn with_principal(mut self, principal: impl Into<String>) -> SessionRecord {
        self.principal = Some(principal.into());
        self
    }

    /// `change` applied to the record.
    pub fn apply(&mut self, change: &SessionChange) {
        match change {
            SessionChange::Initialized => self.initialized = true,
            SessionChange::LogLevel(level) => self.log_level = Some(level.clone()),
            SessionChange::Subscribe(uri) => {
                self.subscriptions.insert(uri.clone());
            }
            SessionChange::Unsubscribe(uri) => {
                self.subscriptions.remove(uri);
            }
        }
    }
}

/// One change to a stored session.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SessionChange {
    /// `notifications/initialized` arrived.
    Initialized,
    /// `logging/setLevel` with this level.
    LogLevel(String),
    /// `resources/subscribe` for this URI.
    Subscribe(String),
    /// `resources/unsubscribe` for this URI.
    Unsubscribe(String),
}
