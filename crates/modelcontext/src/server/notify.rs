//! Change notifications: the server's tools, prompts or resources changed, or one resource's
//! contents did.
//!
//! Whatever part of the server notices a change publishes a [`ChangeEvent`] on the
//! [`SubscriptionBus`]; every connection listens to it and tells its client in the client's
//! era: `notifications/*/list_changed` and (for URIs it subscribed to with
//! `resources/subscribe`) `notifications/resources/updated` on a handshake-era connection;
//! the same notifications, filtered and tagged with the subscription id, on each modern
//! `subscriptions/listen` stream. The default bus is in memory; a shared one (for several
//! instances behind a load balancer, e.g. `modelcontext-redis`) implements the trait.
//!
//! The bus carries typed [`ChangeEvent`]s, never JSON-RPC: acknowledgement first, filtering
//! and the subscription id stay here, whatever the backend. A backend that may have lost
//! events says so with [`BusEvent::Gap`]; each stream then re-sends everything its filter asks
//! for ([`resync`]), so a client may hear a change twice but never misses one silently.

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

/// What a subscriber of a [`SubscriptionBus`] hears.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum BusEvent {
    /// A change, as some instance published it.
    Change(ChangeEvent),
    /// The subscriber may have missed changes: it fell behind, or the backend lost messages
    /// (a reconnect, a hole in an origin's sequence numbers). The server answers with a
    /// conservative re-notification of everything each stream asked for.
    Gap,
}

/// Carries [`ChangeEvent`]s from where they happen to every connection that listens, on this
/// instance and (for a shared backend) on every other instance of the deployment.
///
/// The contract (checked by
/// [`testing::contracts::subscription_bus`](crate::testing::contracts::subscription_bus)):
/// `publish` never waits on I/O: it hands the event to this instance's subscribers at once and
/// queues it for the others. Each subscriber hears every event published after it subscribed,
/// in each publisher's order, or a [`BusEvent::Gap`] where it may have missed some; a slow
/// subscriber never slows a publisher or another subscriber.
pub trait SubscriptionBus: Send + Sync + 'static {
    /// Sends `event` to every current subscriber. Never blocks and never waits on I/O.
    fn publish(&self, event: ChangeEvent);
    /// The events published from now on, in order, with a [`BusEvent::Gap`] wherever some may
    /// be missing. Ends when the bus is gone.
    fn subscribe(&self) -> BoxStream<'static, BusEvent>;
}

/// The default bus: a broadcast channel within the process. A subscriber that falls more
/// than 256 events behind loses the oldest ones and hears a [`BusEvent::Gap`] instead (a slow
/// client must not stall the server).
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

    fn subscribe(&self) -> BoxStream<'static, BusEvent> {
        let receiver = self.sender.subscribe();
        futures_util::stream::unfold(receiver, |mut receiver| async move {
            match receiver.recv().await {
                Ok(event) => Some((BusEvent::Change(event), receiver)),
                Err(broadcast::error::RecvError::Lagged(missed)) => {
                    tracing::warn!(missed, "a connection fell behind on change notifications");
                    Some((BusEvent::Gap, receiver))
                }
                Err(broadcast::error::RecvError::Closed) => None,
            }
        })
        .boxed()
    }
}

/// The events that stand for whatever a gap may have hidden from `filter`: each list it
/// watches, and each resource it subscribed to.
pub(crate) fn resync(filter: &SubscriptionFilter) -> Vec<ChangeEvent> {
    let lists = [
        (filter.tools_list_changed, ChangeEvent::ToolsListChanged),
        (filter.prompts_list_changed, ChangeEvent::PromptsListChanged),
        (filter.resources_list_changed, ChangeEvent::ResourcesListChanged),
    ];
    let lists = lists.into_iter().filter(|(wanted, _)| *wanted == Some(true)).map(|(_, e)| e);
    let uris = filter.resource_subscriptions.iter().flatten().cloned();
    lists.chain(uris.map(ChangeEvent::ResourceUpdated)).collect()
}

/// What a handshake-era connection hears: every list change, and the URIs it subscribed to.
fn handshake_filter(subscribed: &Subscribed) -> SubscriptionFilter {
    let mut uris: Vec<String> =
        subscribed.lock().unwrap_or_else(|e| e.into_inner()).iter().cloned().collect();
    // A set has no order; a re-notification in URI order is the same on every run.
    uris.sort_unstable();
    SubscriptionFilter::default()
        .with_tools_list_changed(true)
        .with_prompts_list_changed(true)
        .with_resources_list_changed(true)
        .with_resource_subscriptions(uris)
}

/// The URIs a handshake-era connection subscribed to with `resources/subscribe`.
pub(crate) type Subscribed = Arc<Mutex<HashSet<String>>>;

/// Forwards events to a handshake-era connection until the bus or the connection ends. Holds
/// the connection only weakly, so it never keeps a finished connection open.
pub(crate) async fn forward_to_session(
    mut events: BoxStream<'static, BusEvent>,
    peer: WeakPeer,
    subscribed: Subscribed,
) {
    while let Some(heard) = events.next().await {
        let due = handshake_due(&subscribed, &heard);
        if due.is_empty() {
            continue;
        }
        let Some(peer) = peer.upgrade() else { return };
        if tell(&peer, &due).await.is_err() {
            return;
        }
    }
}

/// What a handshake-era connection that subscribed to `subscribed` is due for `heard`: the
/// change if it wants it, everything it may have missed after a gap. Read at each event: the
/// client subscribes and unsubscribes while a forwarder runs.
pub(super) fn handshake_due(subscribed: &Subscribed, heard: &BusEvent) -> Vec<ChangeEvent> {
    match heard {
        BusEvent::Change(event) if handshake_wants(subscribed, event) => vec![event.clone()],
        BusEvent::Change(_) => Vec::new(),
        BusEvent::Gap => resync(&handshake_filter(subscribed)),
    }
}

/// Sends `events` to a handshake-era connection as notifications, in order; fails once the
/// connection is closed.
pub(super) async fn tell(peer: &crate::engine::Peer, events: &[ChangeEvent]) -> Result<(), ()> {
    for event in events {
        let Some(notification) = to_notification(event, None) else { continue };
        peer.notify(notification).await.map_err(|_| ())?;
    }
    Ok(())
}

/// Whether a handshake-era connection wants `event`: every list change, and updates of the
/// URIs it subscribed to.
fn handshake_wants(subscribed: &Subscribed, event: &ChangeEvent) -> bool {
    match event {
        ChangeEvent::ResourceUpdated(uri) => {
            subscribed.lock().unwrap_or_else(|e| e.into_inner()).contains(uri)
        }
        _ => true,
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
