//! Change notifications on the client: [`Client::listen`](super::Client::listen).
//!
//! Modern era: one `subscriptions/listen` request per [`Subscription`]; the server
//! acknowledges first, then tags every notification with the request's id, which routes it
//! here. Handshake era: `resources/subscribe` for each URI, and the connection's untagged
//! `list_changed` / `resources/updated` notifications, filtered by the same filter. Dropping
//! the subscription ends it (`notifications/cancelled`, or `resources/unsubscribe`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use modelcontext_types::{
    Era, McpError, Notification, SUBSCRIPTION_ID_META_KEY, ServerNotification,
    SubscribeRequestParams, SubscriptionFilter, SubscriptionsListenRequestParams,
    UnsubscribeRequestParams, method, to_raw,
};
use serde_json::{Map, Value};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::{Client, DEFAULT_REQUEST_TIMEOUT};
use crate::Error;
use crate::engine::RequestOptions;

/// Where notifications of open subscriptions go, by subscription id (JSON text of the listen
/// request id; `""` for the handshake era's untagged notifications).
pub(crate) type Listeners =
    Arc<Mutex<HashMap<String, Vec<mpsc::UnboundedSender<ServerNotification>>>>>;

/// The key of the handshake era's listeners.
pub(crate) const UNTAGGED: &str = "";

/// Hands `notification` to the subscription it belongs to, if any.
pub(crate) fn route(listeners: &Listeners, notification: &Notification) {
    let Ok(parsed) =
        ServerNotification::parse(&notification.method, notification.params.as_deref())
    else {
        return;
    };
    let key = subscription_id(notification).unwrap_or_default();
    let mut listeners = listeners.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(senders) = listeners.get_mut(&key) {
        // A closed sender is a dropped subscription: forget it on the way.
        senders.retain(|sender| sender.send(parsed.clone()).is_ok());
        if senders.is_empty() {
            listeners.remove(&key);
        }
    }
}

/// Adds a listener for `key`.
pub(crate) fn register(
    listeners: &Listeners,
    key: String,
) -> mpsc::UnboundedReceiver<ServerNotification> {
    let (sender, receiver) = mpsc::unbounded_channel();
    listeners.lock().unwrap_or_else(|e| e.into_inner()).entry(key).or_default().push(sender);
    receiver
}

/// Forgets every listener of `key`: their streams end.
pub(crate) fn unregister(listeners: &Listeners, key: &str) {
    listeners.lock().unwrap_or_else(|e| e.into_inner()).remove(key);
}

fn subscription_id(notification: &Notification) -> Option<String> {
    let params: Value = serde_json::from_str(notification.params.as_deref()?.get()).ok()?;
    Some(params.get("_meta")?.get(SUBSCRIPTION_ID_META_KEY)?.to_string())
}

/// An open subscription: the change notifications the server agreed to send, in order.
pub struct Subscription {
    pub(crate) agreed: SubscriptionFilter,
    pub(crate) receiver: mpsc::UnboundedReceiver<ServerNotification>,
    pub(crate) filter_locally: bool,
    /// Modern era: the listen request, cancelled when aborted.
    pub(crate) request: Option<JoinHandle<()>>,
    /// Handshake era: unsubscribes when dropped.
    pub(crate) on_drop: Option<Box<dyn FnOnce() + Send>>,
}

impl std::fmt::Debug for Subscription {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subscription").field("agreed", &self.agreed).finish_non_exhaustive()
    }
}

impl Subscription {
    /// What the server agreed to send (modern era: its acknowledgement; handshake era: the
    /// filter asked for).
    pub fn agreed(&self) -> &SubscriptionFilter {
        &self.agreed
    }

    /// The next notification; `None` once the stream ended (the server closed it, or the
    /// connection is gone).
    pub async fn next(&mut self) -> Option<ServerNotification> {
        loop {
            let notification = self.receiver.recv().await?;
            if !self.filter_locally || wanted(&self.agreed, &notification) {
                return Some(notification);
            }
        }
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        if let Some(request) = self.request.take() {
            request.abort();
        }
        if let Some(on_drop) = self.on_drop.take() {
            on_drop();
        }
    }
}

/// Whether a handshake-era notification passes `filter`.
fn wanted(filter: &SubscriptionFilter, notification: &ServerNotification) -> bool {
    match notification {
        ServerNotification::ToolListChanged(_) => filter.tools_list_changed == Some(true),
        ServerNotification::PromptListChanged(_) => filter.prompts_list_changed == Some(true),
        ServerNotification::ResourceListChanged(_) => filter.resources_list_changed == Some(true),
        ServerNotification::ResourceUpdated(p) => {
            filter.resource_subscriptions.as_ref().is_some_and(|uris| uris.contains(&p.uri))
        }
        _ => false,
    }
}

impl Client {
    /// Opens a stream of change notifications: tool, prompt and resource list changes and
    /// updates of the resources `filter` names. Modern era: a `subscriptions/listen` request,
    /// returned once the server acknowledged it ([`Subscription::agreed`] is what it agreed
    /// to). Handshake era: `resources/subscribe` for each URI, then the connection's change
    /// notifications, filtered. Dropping the subscription ends it.
    pub async fn listen(&self, filter: SubscriptionFilter) -> Result<Subscription, Error> {
        match self.era {
            Era::Modern => self.listen_modern(filter).await,
            _ => self.listen_handshake(filter).await,
        }
    }

    async fn listen_modern(&self, filter: SubscriptionFilter) -> Result<Subscription, Error> {
        let id = self.peer.next_id();
        let key = serde_json::to_value(&id)?.to_string();
        let mut receiver = register(&self.listeners, key.clone());
        let mut params = SubscriptionsListenRequestParams::new(filter);
        params.meta = self.meta();
        let raw = to_raw(&params)?;
        let (peer, listeners) = (self.peer.clone(), Arc::clone(&self.listeners));
        let (done_tx, mut done_rx) = tokio::sync::oneshot::channel();
        let request = tokio::spawn(async move {
            let outcome =
                peer.request(id, method::SUBSCRIPTIONS_LISTEN, Some(raw), Default::default()).await;
            unregister(&listeners, &key);
            let _ = done_tx.send(outcome);
        });
        // The acknowledgement comes first (spec), or the request fails.
        let agreed = tokio::select! {
            first = receiver.recv() => match first {
                Some(ServerNotification::SubscriptionsAcknowledged(ack)) => ack.notifications,
                _ => return Err(McpError::internal("the listen stream did not start with its acknowledgement").into()),
            },
            outcome = &mut done_rx => return Err(match outcome {
                Ok(Err(error)) => error.into(),
                _ => McpError::internal("the listen stream ended before its acknowledgement").into(),
            }),
        };
        Ok(Subscription {
            agreed,
            receiver,
            filter_locally: false,
            request: Some(request),
            on_drop: None,
        })
    }

    async fn listen_handshake(&self, filter: SubscriptionFilter) -> Result<Subscription, Error> {
        let receiver = register(&self.listeners, UNTAGGED.to_owned());
        let uris = filter.resource_subscriptions.clone().unwrap_or_default();
        for uri in &uris {
            let params = SubscribeRequestParams::new(uri.clone());
            let _: Map<String, Value> = self.request(method::RESOURCES_SUBSCRIBE, params).await?;
        }
        let peer = self.peer.clone();
        let unsubscribe = move || {
            tokio::spawn(async move {
                for uri in uris {
                    let Ok(raw) = to_raw(&UnsubscribeRequestParams::new(uri)) else {
                        continue;
                    };
                    let options = RequestOptions {
                        timeout: Some(DEFAULT_REQUEST_TIMEOUT),
                        ..Default::default()
                    };
                    let _ = peer
                        .request(peer.next_id(), method::RESOURCES_UNSUBSCRIBE, Some(raw), options)
                        .await;
                }
            });
        };
        Ok(Subscription {
            agreed: filter,
            receiver,
            filter_locally: true,
            request: None,
            on_drop: Some(Box::new(unsubscribe)),
        })
    }
}
