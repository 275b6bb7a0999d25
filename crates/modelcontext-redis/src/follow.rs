//! Following Redis pub/sub channels on a dedicated connection, for as long as somebody reads:
//! a lost connection is made again (with a growing wait), a half-open one is noticed by a
//! ping every health-check interval, and the reader can be told that a loss happened. The
//! session store's events and the peer router both follow their channels this way.

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use futures_util::future::BoxFuture;
use futures_util::stream::BoxStream;
use tokio::sync::mpsc;

use crate::master_moves::MasterMoves;

/// Items queued for the reader before the follower waits for it.
const CAPACITY: usize = 1024;
/// The first and the longest wait between attempts to subscribe again.
const RETRY_FIRST: Duration = Duration::from_millis(50);
const RETRY_MAX: Duration = Duration::from_secs(2);

/// What a payload means to the reader: `None` to skip it.
type Read<T> = Box<dyn Fn(&[u8]) -> Option<T> + Send + Sync>;

/// Makes a new pub/sub connection each time it is called.
pub(crate) type Connect =
    Arc<dyn Fn() -> BoxFuture<'static, redis::RedisResult<redis::aio::PubSub>> + Send + Sync>;

/// Follows some channels until the stream it returns is dropped.
pub(crate) struct Follower<T> {
    connect: Connect,
    /// Tells when the subscription must be made again on a new master.
    moves: MasterMoves,
    channels: Vec<String>,
    timeout: Duration,
    health_check: Duration,
    /// Told to the reader after a lost subscription is made again, if anything.
    gap: Option<T>,
}

/// The parts of a running follower.
struct Running<T> {
    follower: Follower<T>,
    read: Read<T>,
    tx: mpsc::Sender<T>,
}

impl<T: Clone + Send + Sync + 'static> Follower<T> {
    /// Follows `channels` on the connections `connect` makes, subscribing again when `moves`
    /// tells that the master moved.
    pub(crate) fn on(
        connect: Connect,
        moves: MasterMoves,
        channels: Vec<String>,
        timeout: Duration,
        health_check: Duration,
    ) -> Follower<T> {
        Follower { connect, moves, channels, timeout, health_check, gap: None }
    }

    /// Tells `gap` after each lost subscription is made again.
    pub(crate) fn gap(mut self, gap: T) -> Follower<T> {
        self.gap = Some(gap);
        self
    }

    /// Starts following; what `read` makes of each message comes out of the stream.
    pub(crate) fn follow(
        self,
        read: impl Fn(&[u8]) -> Option<T> + Send + Sync + 'static,
    ) -> BoxStream<'static, T> {
        let (tx, rx) = mpsc::channel(CAPACITY);
        let running = Running { follower: self, read: Box::new(read), tx };
        tokio::spawn(running.run());
        futures_util::stream::unfold(rx, |mut rx| async move { Some((rx.recv().await?, rx)) })
            .boxed()
    }
}

impl<T: Clone + Send + Sync + 'static> Running<T> {
    async fn run(mut self) {
        let mut wait = RETRY_FIRST;
        // What was published before the first subscription is not owed to the reader (it
        // follows from its start); after any loss, it may be.
        let mut owes_gap = false;
        let channels = self.follower.channels.join(" ");
        loop {
            self.follower.moves.seen();
            let subscribed = tokio::time::timeout(self.follower.timeout, self.subscribe()).await;
            match subscribed {
                Ok(Ok((pings, messages))) => {
                    wait = RETRY_FIRST;
                    if std::mem::take(&mut owes_gap) && !self.tell_gap().await {
                        return;
                    }
                    if !self.listen(pings, messages).await {
                        return;
                    }
                    tracing::warn!(%channels, "lost a Redis subscription");
                }
                Ok(Err(error)) => tracing::debug!(%channels, %error, "Redis still away"),
                Err(_) => tracing::debug!(%channels, "no answer to SUBSCRIBE in time"),
            }
            owes_gap = true;
            tokio::select! {
                _ = tokio::time::sleep(wait) => {}
                _ = self.tx.closed() => return,
            }
            wait = (wait * 2).min(RETRY_MAX);
        }
    }

    /// `false` once nobody reads any more.
    async fn tell_gap(&self) -> bool {
        match &self.follower.gap {
            Some(gap) => self.tx.send(gap.clone()).await.is_ok(),
            None => !self.tx.is_closed(),
        }
    }

    async fn subscribe(
        &self,
    ) -> redis::RedisResult<(redis::aio::PubSubSink, redis::aio::PubSubStream)> {
        let mut pubsub = (self.follower.connect)().await?;
        pubsub.subscribe(&self.follower.channels).await?;
        Ok(pubsub.split())
    }

    /// Hands on what arrives until the subscription is lost (`true`) or nobody reads any
    /// more (`false`). A ping every health-check interval notices a half-open connection; a
    /// master that moved (Sentinel) counts as a loss.
    async fn listen(
        &mut self,
        mut pings: redis::aio::PubSubSink,
        mut messages: redis::aio::PubSubStream,
    ) -> bool {
        let every = self.follower.health_check;
        let mut health = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
        loop {
            let item = tokio::select! {
                message = messages.next() => match message {
                    Some(message) => (self.read)(message.get_payload_bytes()),
                    None => return true,
                },
                _ = health.tick() => {
                    let ping = pings.ping::<redis::Value>();
                    match tokio::time::timeout(self.follower.timeout, ping).await {
                        Ok(Ok(_)) => continue,
                        _ => return true,
                    }
                }
                _ = self.follower.moves.next() => return true,
                _ = self.tx.closed() => return false,
            };
            if let Some(item) = item {
                if self.tx.send(item).await.is_err() {
                    return false;
                }
            }
        }
    }
}
