//! URL elicitation end to end (2025-11-25): the handler picks the `elicitationId` before it
//! asks, can fail a call with -32042 `URLElicitationRequired` instead of asking, and tells the
//! client when the out-of-band flow is done (`notifications/elicitation/complete`), even
//! after the call has returned.
//!
//! 2026-07-28 dropped the id, the notification and -32042: there a URL elicitation is an MRTR
//! question like any other, and completion is a no-op. The same handler code serves both.

use modelcontext_types::{
    ElicitAction, ElicitRequestParams, ElicitRequestURLParams,
    ElicitationCompleteNotificationParams, Era, InputRequest, McpError, Notification, method,
    to_raw,
};

use super::context::Context;
use super::input::{check_capability, random_id};
use crate::Error;
use crate::engine::WeakPeer;

/// A URL elicitation whose id is known before it is sent.
#[derive(Debug, Clone, PartialEq)]
pub struct UrlElicitation {
    params: ElicitRequestURLParams,
}

impl UrlElicitation {
    /// Asks the user to open `url`, under a fresh random `elicitationId`.
    pub fn new(message: impl Into<String>, url: impl Into<String>) -> UrlElicitation {
        let mut params = ElicitRequestURLParams::new(message, url);
        params.elicitation_id = Some(random_id());
        UrlElicitation { params }
    }

    /// Uses `id` as the `elicitationId` (the server must keep ids unique).
    pub fn with_id(mut self, id: impl Into<String>) -> UrlElicitation {
        self.params.elicitation_id = Some(id.into());
        self
    }

    /// The `elicitationId`: the key under which the out-of-band flow reports back.
    pub fn id(&self) -> &str {
        self.params.elicitation_id.as_deref().unwrap_or_default()
    }

    /// The params as a handshake-era client gets them.
    pub fn params(&self) -> &ElicitRequestURLParams {
        &self.params
    }

    /// The params for `era`: 2026-07-28 has no `elicitationId`.
    fn params_for(&self, era: Era) -> ElicitRequestURLParams {
        let mut params = self.params.clone();
        if era != Era::Handshake {
            params.elicitation_id = None;
        }
        params
    }
}

impl Context {
    /// Asks the user to open the elicitation's URL, as [`Context::elicit_url`] does, under the
    /// id the handler chose (so it can later [complete](Context::elicitation_completer) it).
    pub async fn elicit_url_with(
        &self,
        elicitation: &UrlElicitation,
    ) -> Result<ElicitAction, McpError> {
        let params = ElicitRequestParams::Url(elicitation.params_for(self.era()));
        Ok(self.elicit_raw(params).await?.action)
    }

    /// Fails the call until the user has been through `elicitation`'s URL. Handshake era: the
    /// call fails at once with -32042 `URLElicitationRequired` listing it (the client opens the
    /// URL and may retry once it completes); return the error with `?`. Modern era (which has
    /// no -32042): an MRTR question, as [`Context::elicit_url_with`]; `Ok` holds the user's
    /// choice. Either way the client must declare `elicitation.url`, else -32021.
    pub async fn require_url_elicitation(
        &self,
        elicitation: &UrlElicitation,
    ) -> Result<ElicitAction, McpError> {
        if self.era() != Era::Handshake {
            return self.elicit_url_with(elicitation).await;
        }
        let request = InputRequest::Elicit(ElicitRequestParams::Url(elicitation.params.clone()));
        check_capability(self.client_capabilities(), &request)?;
        Err(McpError::url_elicitation_required(vec![elicitation.params.clone()]))
    }

    /// A handle that sends `notifications/elicitation/complete` for `elicitation_id` on this
    /// connection, usable after the request has returned (from the web handler the URL led
    /// to, say). It does not keep the connection open. On a modern request it does nothing.
    pub fn elicitation_completer(&self, elicitation_id: impl Into<String>) -> ElicitationCompleter {
        let peer = (self.era() == Era::Handshake).then(|| self.peer().downgrade());
        ElicitationCompleter { peer, elicitation_id: elicitation_id.into() }
    }
}

/// Sends `notifications/elicitation/complete` for one URL elicitation; see
/// [`Context::elicitation_completer`].
#[derive(Clone)]
pub struct ElicitationCompleter {
    /// `None` in the modern era, which has no such notification.
    peer: Option<WeakPeer>,
    elicitation_id: String,
}

impl std::fmt::Debug for ElicitationCompleter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ElicitationCompleter")
            .field("elicitation_id", &self.elicitation_id)
            .finish_non_exhaustive()
    }
}

impl ElicitationCompleter {
    /// The id this handle completes.
    pub fn elicitation_id(&self) -> &str {
        &self.elicitation_id
    }

    /// Tells the client the out-of-band flow finished. Fails with a closed-connection error
    /// when the client has gone; does nothing on a modern connection.
    pub async fn complete(&self) -> Result<(), Error> {
        let Some(weak) = &self.peer else { return Ok(()) };
        let Some(peer) = weak.upgrade() else {
            return Err(
                McpError::new(modelcontext_types::CONNECTION_CLOSED, "Connection closed").into()
            );
        };
        let params = ElicitationCompleteNotificationParams::new(self.elicitation_id.clone());
        let params = to_raw(&params).map_err(|e| McpError::internal(e.to_string()))?;
        let notification =
            Notification { method: method::ELICITATION_COMPLETE.into(), params: Some(params) };
        peer.notify(notification).await?;
        Ok(())
    }
}
