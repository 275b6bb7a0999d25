//! Change notifications: the server's tools, prompts or resources changed, or one resource's
//! contents did.
//!
//! Whatever part of the server notices a change publishes a [`ChangeEvent`] on the
//! [`SubscriptionBus`]; every connection listens to it and tells its client in the client's
//! era: `notifications/*/list_changed` and (for URIs it subscribed to with
//! `resources/subscribe`) `notifications/resources/updated` on a handshake-era connection;
//! the same notifications, filtered and tagged with the subscription id, on each modern
//! `subscriptions/listen` stream. The default bus is in memory; a shared one (for several
//! instances behind a load balancer) implements the trait.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use futures_util::StreamExt;
use futures_util::stream::BoxStream;
use modelcontext_types::{
    Meta, Notification, NotificationParams, ResourceUpdatedNotificationParams,
    SUBSCRIPTION_ID_META_KEY, SubscriptionFilter, method,
};
use serde_json::Value;
use tokio::sync::broadcast;

use crate::engine::WeakPeer;

/// Something that changed on the server.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ChangeEvent {
    /// Tools were added or removed.
    ToolsListChanged,
    /// Prompts were added or removed.
    PromptsListChanged,
    /// Resources or templates were added or removed.
    ResourcesListChanged,
    /// The contents of the resource at this URI changed.
    ResourceUpdated(String),
    /// A task's status changed (tasks extension): `notifications/tasks` to the listen streams
    /// of its owner that named it. `task` is the `DetailedTask` as JSON text.
    TaskStatus {
        /// The task.
        task_id: String,
        /// The principal the task belongs to.
        owner: Option<String>,
        /// The `DetailedTask`, serialized.
        task: String,
    },
}

/// Carries [`ChangeEvent`]s from where they happen to every connection that listens.
pub trait SubscriptionBus: Send + Sync + 'static {
    /// Sends `event` to every current subscriber. Never blocks.
    fn publish(&self, event: ChangeEvent);
    /// The events published from now on, in order. Ends when the bus is gone.
    fn subscribe(&self) -> BoxStream<'static, ChangeEvent>;
}

/// The default bus: a broadcast channel within the process. A subscriber that falls more
/// than 256 events behind misses the oldest ones (a slow client must not stall the server).
#[derive(Debug, Clone)]
pub struct InMemoryBus {
    sender: broadcast::Sender<ChangeEvent>,
}

impl Default for InMemoryBus {
    fn default() -> Self {
        InMemoryBus { sender: broadcast::channel(256).0 }
    }
}

impl SubscriptionBus for InMemoryBus {
    fn publish(&self, event: ChangeEvent) {
        // No subscriber is not an error: nobody is listening yet.
        let _ = self.sender.send(event);
    }

    fn subscribe(&self) -> BoxStream<'static, ChangeEvent> {
        let receiver = self.sender.subscribe();
        futures_util::stream::unfold(receiver, |mut receiver| async move {
            loop {
                match receiver.recv().await {
                    Ok(event) => return Some((event, receiver)),
                    Err(broadcast::error::RecvError::Lagged(missed)) => {
                        tracing::warn!(missed, "a connection fell behind on change notifications");
                    }
                    Err(broadcast::error::RecvError::Closed) => return None,
                }
            }
        })
        .boxed()
    }
}

/// The URIs a handshake-era connection subscribed to with `resources/subscribe`.
pub(crate) type Subscribed = Arc<Mutex<HashSet<String>>>;

/// Forwards events to a handshake-era connection until the bus or the connection ends. Holds
/// the connection only weakly, so it never keeps a finished connection open.
pub(crate) async fn forward_to_session(
    mut events: BoxStream<'static, ChangeEvent>,
    peer: WeakPeer,
    subscribed: Subscribed,
) {
    while let Some(event) = events.next().await {
        if let ChangeEvent::ResourceUpdated(uri) = &event {
            let wanted = subscribed.lock().unwrap_or_else(|e| e.into_inner()).contains(uri);
            if !wanted {
                continue;
            }
        }
        let Some(peer) = peer.upgrade() else { return };
        if let Some(notification) = to_notification(&event, None) {
            if peer.notify(notification).await.is_err() {
                return;
            }
        }
    }
}

/// The part of `requested` this server honours: every kind it can send. Resource URIs are
/// matched exactly (no sub-resources).
pub(crate) fn agreed(requested: &SubscriptionFilter) -> SubscriptionFilter {
    let yes = |flag: Option<bool>| flag.filter(|wanted| *wanted);
    let mut agreed = SubscriptionFilter::default();
    agreed.tools_list_changed = yes(requested.tools_list_changed);
    agreed.prompts_list_changed = yes(requested.prompts_list_changed);
    agreed.resources_list_changed = yes(requested.resources_list_changed);
    agreed.resource_subscriptions =
        requested.resource_subscriptions.clone().filter(|u| !u.is_empty());
    agreed.task_ids = requested.task_ids.clone().filter(|ids| !ids.is_empty());
    agreed
}

/// Whether a listen stream with `filter` wants `event`.
pub(crate) fn wants(filter: &SubscriptionFilter, event: &ChangeEvent) -> bool {
    match event {
        ChangeEvent::ToolsListChanged => filter.tools_list_changed == Some(true),
        ChangeEvent::PromptsListChanged => filter.prompts_list_changed == Some(true),
        ChangeEvent::ResourcesListChanged => filter.resources_list_changed == Some(true),
        ChangeEvent::ResourceUpdated(uri) => {
            filter.resource_subscriptions.as_ref().is_some_and(|uris| uris.contains(uri))
        }
        ChangeEvent::TaskStatus { task_id, .. } => {
            filter.task_ids.as_ref().is_some_and(|ids| ids.contains(task_id))
        }
    }
}

/// The notification for `event`, tagged with a listen stream's id when there is one.
pub(crate) fn to_notification(
    event: &ChangeEvent,
    subscription: Option<&Value>,
) -> Option<Notification> {
    let meta = subscription.map(|id| {
        let mut meta = Meta::new();
        meta.insert(SUBSCRIPTION_ID_META_KEY.into(), id.clone());
        meta
    });
    let list = |method: &str| {
        let mut params = NotificationParams::default();
        params.meta = meta.clone();
        Notification::new(method, &params)
    };
    let notification = match event {
        ChangeEvent::ToolsListChanged => list(method::TOOLS_LIST_CHANGED),
        ChangeEvent::PromptsListChanged => list(method::PROMPTS_LIST_CHANGED),
        ChangeEvent::ResourcesListChanged => list(method::RESOURCES_LIST_CHANGED),
        ChangeEvent::ResourceUpdated(uri) => {
            let mut params = ResourceUpdatedNotificationParams::new(uri.clone());
            params.meta = meta.clone();
            Notification::new(method::RESOURCES_UPDATED, &params)
        }
        // Modern listen streams only: the handshake era has no such notification.
        ChangeEvent::TaskStatus { task, .. } => {
            let meta = meta?;
            let Ok(Value::Object(mut params)) = serde_json::from_str::<Value>(task) else {
                return None;
            };
            params.insert("_meta".into(), Value::Object(meta));
            Notification::new(method::TASKS_STATUS, &params)
        }
    };
    notification.ok()
}
