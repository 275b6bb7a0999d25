//! [`RedisPeerRouter`]: a handshake-era session's answers and cancellations carried to the
//! instance that must handle them, over Redis pub/sub.
//!
//! Each instance follows two channels of the deployment: its own,
//! `modelcontext:{deployment}:peer:{instance}`, where the other instances forward the
//! client's answers to the requests it sent, and `modelcontext:{deployment}:peers`, where
//! cancellations are told to every instance. The instance name is random (128 bits in hex),
//! so two instances, or one instance and its restart, never share one. Delivery is at most
//! once: a message published while its instance is away is lost, and the request waiting for
//! it times out as if the client had not answered.

use std::sync::Arc;
use std::time::Duration;

use futures_util::stream::BoxStream;
use modelcontext::server::http::{PeerRouter, RouteError, RouteFuture, Routed};
use redis::aio::ConnectionManager;
use serde::{Deserialize, Serialize};

use crate::breaker::{BreakerStats, DEFAULT_BREAKER_COOL_DOWN, DEFAULT_BREAKER_THRESHOLD};
use crate::follow::Follower;
use crate::{Breaker, Deployment, Error};

/// A [`PeerRouter`] shared by every instance of a [`Deployment`]. Built by
/// [`Deployment::peer_router`]; publishes through a connection made on first use, with the
/// deployment's command timeout on every call and a circuit breaker.
#[derive(Clone)]
pub struct RedisPeerRouter {
    connection: ConnectionManager,
    instance: String,
    /// `modelcontext:{deployment}:peer:` — an instance's channel is this and its name.
    prefix: String,
    /// `modelcontext:{deployment}:peers`: cancellations, for every instance.
    everyone: String,
    client: redis::Client,
    timeout: Duration,
    health_check: Duration,
    breaker: Arc<Breaker>,
}

/// One routed message on a channel.
#[derive(Serialize, Deserialize)]
struct Envelope {
    /// The instance that published it: its own broadcasts are not handed back to it.
    origin: String,
    session: String,
    message: String,
}

impl std::fmt::Debug for RedisPeerRouter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisPeerRouter").field("instance", &self.instance).finish_non_exhaustive()
    }
}

impl RedisPeerRouter {
    pub(crate) fn new(deployment: &Deployment) -> Result<RedisPeerRouter, Error> {
        let timeout = deployment.command_timeout;
        let connection = deployment.lazy_connection()?;
        Ok(RedisPeerRouter {
            connection,
            instance: crate::bus::random_origin(),
            prefix: deployment.key("peer:"),
            everyone: deployment.key("peers"),
            client: deployment.client.clone(),
            timeout,
            health_check: deployment.health_check,
            breaker: Arc::new(Breaker::new(DEFAULT_BREAKER_THRESHOLD, DEFAULT_BREAKER_COOL_DOWN)),
        })
    }

    /// What the router's circuit breaker has done: failed calls, outages, calls failed at once.
    pub fn stats(&self) -> BreakerStats {
        self.breaker.stats()
    }

    /// `PUBLISH channel envelope`, within the timeout, through the breaker.
    async fn publish(&self, channel: String, routed: Routed) -> Result<(), RouteError> {
        if !self.breaker.admit() {
            return Err(RouteError::unavailable("redis: failing fast after repeated failures"));
        }
        let envelope = Envelope {
            origin: self.instance.clone(),
            session: routed.session,
            message: routed.message,
        };
        let payload = serde_json::to_string(&envelope).unwrap_or_default();
        let mut connection = self.connection.clone();
        let mut command = redis::cmd("PUBLISH");
        command.arg(channel).arg(payload);
        let sent = tokio::time::timeout(self.timeout, command.query_async::<i64>(&mut connection));
        let outcome = match sent.await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(error)) => Err(RouteError::unavailable(format!("redis: {error}"))),
            Err(_) => Err(RouteError::unavailable("redis: no answer in time")),
        };
        self.breaker.record(outcome.is_ok());
        outcome
    }
}

impl PeerRouter for RedisPeerRouter {
    fn instance(&self) -> &str {
        &self.instance
    }

    fn forward<'a>(&'a self, to: &'a str, routed: Routed) -> RouteFuture<'a> {
        Box::pin(self.publish(format!("{}{to}", self.prefix), routed))
    }

    fn broadcast(&self, routed: Routed) -> RouteFuture<'_> {
        Box::pin(self.publish(self.everyone.clone(), routed))
    }

    fn incoming(&self) -> BoxStream<'static, Routed> {
        let channels = vec![format!("{}{}", self.prefix, self.instance), self.everyone.clone()];
        let origin = self.instance.clone();
        // No gap: a message lost in an outage is not sent again (see the module's doc).
        Follower::new(&self.client, channels, self.timeout, self.health_check)
            .follow(move |payload| read(&origin, payload))
    }
}

/// The message an envelope carries, `None` for this instance's own or an unreadable one.
fn read(origin: &str, payload: &[u8]) -> Option<Routed> {
    let Ok(envelope) = serde_json::from_slice::<Envelope>(payload) else {
        tracing::warn!("an unreadable message on a peer router channel");
        return None;
    };
    (envelope.origin != origin).then(|| Routed::new(envelope.session, envelope.message))
}
