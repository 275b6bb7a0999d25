//! [`RedisBus`]: the subscription bus of a deployment, on Redis pub/sub.
//!
//! Three parts: `publish` (local subscribers at once, a bounded queue for Redis), the
//! publisher task (drains the queue into one `PUBLISH` pipeline at a time, through a
//! connection manager that reconnects by itself), and the listener task (a dedicated pub/sub
//! connection; per-origin sequence numbers reveal holes; a lost connection is re-subscribed
//! with backoff, then reported as a gap).

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use futures_util::StreamExt;
use futures_util::stream::BoxStream;
use modelcontext::{BusEvent, ChangeEvent, SubscriptionBus};
use redis::aio::{PubSubSink, PubSubStream};
use tokio::sync::{broadcast, mpsc};
use tokio::task::JoinHandle;

use crate::endpoint::{Connection, Endpoint};
use crate::master_moves::MasterMoves;
use crate::wire::{Envelope, WireEvent};
use crate::{Deployment, Error};

/// Events a subscriber on this instance may fall behind by before it hears a gap.
const LOCAL_CAPACITY: usize = 4096;
/// Events queued for Redis before `publish` starts dropping them (the others hear a gap).
const OUTBOX_CAPACITY: usize = 4096;
/// Most `PUBLISH` commands sent in one pipeline.
const BATCH: usize = 256;
/// Most origins remembered for hole detection; past it the memory starts over, with a gap.
const MAX_ORIGINS: usize = 4096;
/// The first and the longest wait between attempts to re-subscribe.
const RETRY_FIRST: Duration = Duration::from_millis(50);
const RETRY_MAX: Duration = Duration::from_secs(2);

/// A [`SubscriptionBus`] shared by every instance of a [`Deployment`] through Redis pub/sub
/// (channel `modelcontext:{deployment}:bus`). Built by [`Deployment::bus`]; clones share one
/// bus, and the bus's two connections close when the last clone is dropped.
#[derive(Clone)]
pub struct RedisBus {
    shared: Arc<Shared>,
}

struct Shared {
    /// This bus's id in every message it publishes; its own messages coming back are skipped.
    origin: String,
    next_seq: AtomicU64,
    /// Whether the last `publish` found the queue full (for logging once per run of losses).
    losing: AtomicBool,
    local: broadcast::Sender<BusEvent>,
    outbox: mpsc::Sender<String>,
    stats: Arc<Counters>,
    tasks: [JoinHandle<()>; 2],
}

impl Drop for Shared {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

impl std::fmt::Debug for RedisBus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisBus").field("origin", &self.shared.origin).finish_non_exhaustive()
    }
}

/// What a [`RedisBus`] has done since it was connected ([`RedisBus::stats`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct BusStats {
    /// Events published on this bus.
    pub published: u64,
    /// Events this bus sent to Redis.
    pub sent: u64,
    /// Events that never reached Redis: the queue was full, or Redis failed or timed out.
    pub lost: u64,
    /// Events received from other instances and delivered here.
    pub received: u64,
    /// Gaps reported to this instance's subscribers (holes, reconnects, unreadable messages).
    pub gaps: u64,
    /// Times the subscription connection was lost and made again.
    pub reconnects: u64,
}

#[derive(Default)]
struct Counters {
    published: AtomicU64,
    sent: AtomicU64,
    lost: AtomicU64,
    received: AtomicU64,
    gaps: AtomicU64,
    reconnects: AtomicU64,
}

impl Counters {
    fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }
}

impl RedisBus {
    pub(crate) async fn connect(deployment: &Deployment) -> Result<RedisBus, Error> {
        let timeout = deployment.command_timeout;
        let publisher = deployment.endpoint.connection(timeout, Some(RETRY_MAX))?;
        let channel = deployment.key("bus");
        let origin = random_origin();
        let subscriber = Subscriber {
            endpoint: deployment.endpoint.clone(),
            channel: channel.clone(),
            timeout,
            health_check: deployment.health_check,
            probe_with: publisher.clone(),
            origin: origin.clone(),
        };
        let mut moves = deployment.endpoint.moves();
        moves.seen();
        let first = subscriber.subscribe().await?;
        let (local, _) = broadcast::channel(LOCAL_CAPACITY);
        let (outbox, queued) = mpsc::channel(OUTBOX_CAPACITY);
        let stats = Arc::new(Counters::default());
        let sender = Sender { connection: publisher, channel, timeout };
        let listener = Listener {
            subscriber,
            local: local.clone(),
            last_seq: HashMap::new(),
            moves,
            stats: Arc::clone(&stats),
        };
        let tasks = [
            tokio::spawn(sender.run(queued, Arc::clone(&stats))),
            tokio::spawn(listener.run(first)),
        ];
        let next_seq = AtomicU64::new(0);
        let losing = AtomicBool::new(false);
        let shared = Shared { origin, next_seq, losing, local, outbox, stats, tasks };
        Ok(RedisBus { shared: Arc::new(shared) })
    }

    /// Counts of what this bus published, sent, lost and received, and the gaps it reported.
    pub fn stats(&self) -> BusStats {
        let c = &self.shared.stats;
        let read = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        BusStats {
            published: read(&c.published),
            sent: read(&c.sent),
            lost: read(&c.lost),
            received: read(&c.received),
            gaps: read(&c.gaps),
            reconnects: read(&c.reconnects),
        }
    }
}

impl SubscriptionBus for RedisBus {
    fn publish(&self, event: ChangeEvent) {
        let shared = &self.shared;
        Counters::add(&shared.stats.published, 1);
        // Taken even if the event can't be sent, so the hole shows at the other instances.
        let seq = shared.next_seq.fetch_add(1, Ordering::Relaxed);
        let payload = WireEvent::from_event(&event).and_then(|event| {
            let envelope = Envelope { origin: shared.origin.clone(), seq, event };
            serde_json::to_string(&envelope).ok()
        });
        // Nobody subscribed on this instance is not an error.
        let _ = shared.local.send(BusEvent::Change(event));
        let queued = payload.is_some_and(|payload| shared.outbox.try_send(payload).is_ok());
        if !queued {
            Counters::add(&shared.stats.lost, 1);
        }
        // Once per run of losses, not once per event: an outage must not flood the log.
        let was_losing = shared.losing.swap(!queued, Ordering::Relaxed);
        if !queued && !was_losing {
            tracing::warn!("change events could not be queued for the other instances");
        }
    }

    fn subscribe(&self) -> BoxStream<'static, BusEvent> {
        let receiver = self.shared.local.subscribe();
        futures_util::stream::unfold(receiver, |mut receiver| async move {
            match receiver.recv().await {
                Ok(heard) => Some((heard, receiver)),
                Err(broadcast::error::RecvError::Lagged(_)) => Some((BusEvent::Gap, receiver)),
                Err(broadcast::error::RecvError::Closed) => None,
            }
        })
        .boxed()
    }
}

/// A random 128-bit origin id in hex: two buses never share one, even across restarts.
pub(crate) fn random_origin() -> String {
    let mut bytes = [0u8; 16];
    if getrandom::fill(&mut bytes).is_ok() {
        return bytes.iter().map(|b| format!("{b:02x}")).collect();
    }
    // Without an OS random source: this process, this moment, and this process's count of
    // buses tell buses apart in practice.
    static BUSES: AtomicU64 = AtomicU64::new(0);
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
    let nanos = now.map(|d| d.as_nanos()).unwrap_or_default();
    let count = BUSES.fetch_add(1, Ordering::Relaxed);
    format!("{:x}-{nanos:x}-{count}", std::process::id())
}

/// Makes the bus's subscription: a dedicated pub/sub connection on the deployment's channel.
struct Subscriber {
    endpoint: Endpoint,
    channel: String,
    timeout: Duration,
    /// How often a live subscription is pinged.
    health_check: Duration,
    /// Publishes the probe that proves a new subscription works.
    probe_with: Connection,
    origin: String,
}

impl Subscriber {
    /// A dedicated connection subscribed to the channel, proven by hearing back a probe it
    /// published, all within the timeout.
    async fn subscribe(&self) -> Result<Subscription, Error> {
        // redis-rs takes a refused SUBSCRIBE (a Redis user without this channel) for a success;
        // only a message that comes back proves the subscription.
        let probe = Envelope { origin: self.origin.clone(), seq: 0, event: WireEvent::Probe };
        let probe = serde_json::to_string(&probe).unwrap_or_default();
        let attempt = async {
            let mut pubsub = self.endpoint.pubsub().await?;
            pubsub.subscribe(&self.channel).await?;
            let (pings, mut messages) = pubsub.split();
            let mut publisher = self.probe_with.clone();
            let publish = redis::cmd("PUBLISH").arg(&self.channel).arg(&probe).to_owned();
            publish.query_async::<()>(&mut publisher).await?;
            // What others publish meanwhile is dropped: the caller reports a gap (or is not
            // ready yet).
            while let Some(message) = messages.next().await {
                if message.get_payload_bytes() == probe.as_bytes() {
                    return Ok(Subscription { messages, pings });
                }
            }
            Err(Error::closed("subscribe"))
        };
        let late =
            "subscribe (no probe came back on the bus channel: may this user subscribe to it?)";
        tokio::time::timeout(self.timeout, attempt).await.map_err(|_| Error::timeout(late))?
    }
}

/// A live subscription: its messages, and the half of the connection that sends pings.
/// Dropping the messages closes the connection.
struct Subscription {
    messages: PubSubStream,
    pings: PubSubSink,
}

/// The publisher task's side: the connection and where it publishes.
struct Sender {
    connection: Connection,
    channel: String,
    timeout: Duration,
}

impl Sender {
    /// Sends what `publish` queued, a pipeline at a time, until the bus is dropped.
    async fn run(mut self, mut queued: mpsc::Receiver<String>, stats: Arc<Counters>) {
        let mut batch = Vec::with_capacity(BATCH);
        let mut failing = false;
        while queued.recv_many(&mut batch, BATCH).await > 0 {
            let count = batch.len() as u64;
            match self.send(&batch).await {
                Ok(()) => {
                    Counters::add(&stats.sent, count);
                    if std::mem::replace(&mut failing, false) {
                        tracing::info!("change events reach the other instances again");
                    }
                }
                Err(error) => {
                    Counters::add(&stats.lost, count);
                    // Once per outage, not once per batch.
                    if !std::mem::replace(&mut failing, true) {
                        tracing::warn!(%error, "change events are not reaching the other instances");
                    }
                }
            }
            batch.clear();
        }
    }

    async fn send(&mut self, payloads: &[String]) -> Result<(), Error> {
        let mut pipe = redis::pipe();
        for payload in payloads {
            pipe.cmd("PUBLISH").arg(&self.channel).arg(payload).ignore();
        }
        let sent = pipe.query_async::<()>(&mut self.connection);
        tokio::time::timeout(self.timeout, sent).await.map_err(|_| Error::timeout("publish"))??;
        Ok(())
    }
}

/// The listener task's side: delivers other instances' events here, and gaps.
struct Listener {
    subscriber: Subscriber,
    local: broadcast::Sender<BusEvent>,
    /// The last sequence number seen from each other origin.
    last_seq: HashMap<String, u64>,
    /// Tells when the master moved (Sentinel): the subscription is made again there.
    moves: MasterMoves,
    stats: Arc<Counters>,
}

impl Listener {
    async fn run(mut self, mut subscription: Subscription) {
        loop {
            self.listen(&mut subscription).await;
            let channel = &self.subscriber.channel;
            tracing::warn!(%channel, "lost the Redis subscription; resubscribing");
            // Closes the old connection before the new one is made.
            drop(subscription);
            self.moves.seen();
            subscription = self.resubscribe().await;
            Counters::add(&self.stats.reconnects, 1);
            // Whatever was published while we were away is lost to us: say so, once.
            self.last_seq.clear();
            self.gap();
        }
    }

    /// Delivers what arrives until the subscription is lost: its connection closed, or a
    /// ping went unanswered within the command timeout. The ping is what notices a
    /// half-open connection (a NAT or a load balancer that dropped it without a word), which
    /// would otherwise go quiet for good.
    async fn listen(&mut self, subscription: &mut Subscription) {
        let every = self.subscriber.health_check;
        let mut health = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
        health.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                message = subscription.messages.next() => match message {
                    Some(message) => self.deliver(message.get_payload_bytes()),
                    None => return,
                },
                _ = self.moves.next() => return,
                _ = health.tick() => {
                    let ping = subscription.pings.ping::<redis::Value>();
                    let answered = tokio::time::timeout(self.subscriber.timeout, ping).await;
                    if !matches!(answered, Ok(Ok(_))) {
                        return;
                    }
                }
            }
        }
    }

    /// Subscribes again, waiting longer after each failure (up to [`RETRY_MAX`]).
    async fn resubscribe(&self) -> Subscription {
        let mut wait = RETRY_FIRST;
        loop {
            match self.subscriber.subscribe().await {
                Ok(messages) => return messages,
                Err(error) => tracing::debug!(%error, "Redis still away"),
            }
            tokio::time::sleep(wait).await;
            wait = (wait * 2).min(RETRY_MAX);
        }
    }

    fn deliver(&mut self, payload: &[u8]) {
        let Ok(envelope) = serde_json::from_slice::<Envelope>(payload) else {
            // Unreadable, or a kind this build doesn't know: something changed that we can't
            // name, so everything may have.
            tracing::warn!("an unreadable message on the bus channel");
            return self.gap();
        };
        if envelope.origin == self.subscriber.origin {
            return; // ours: delivered here when published
        }
        let Some(event) = envelope.event.into_event() else { return }; // a probe
        if !self.in_sequence(&envelope.origin, envelope.seq) {
            return;
        }
        Counters::add(&self.stats.received, 1);
        let _ = self.local.send(BusEvent::Change(event));
    }

    /// Records `seq` from `origin`; reports a gap if some before it are missing. `false` for
    /// one already seen (a duplicate is dropped).
    fn in_sequence(&mut self, origin: &str, seq: u64) -> bool {
        if !self.last_seq.contains_key(origin) && self.last_seq.len() >= MAX_ORIGINS {
            self.last_seq.clear();
            self.gap();
        }
        let previous = self.last_seq.get(origin).copied();
        match previous {
            Some(last) if seq <= last => return false,
            Some(last) if seq != last + 1 => self.gap(),
            // The first from an origin: what it sent before we subscribed is not owed to us.
            _ => {}
        }
        self.last_seq.insert(origin.to_owned(), seq);
        true
    }

    fn gap(&self) {
        Counters::add(&self.stats.gaps, 1);
        let _ = self.local.send(BusEvent::Gap);
    }
}
