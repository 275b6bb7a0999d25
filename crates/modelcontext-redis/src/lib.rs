//! Redis backends for [`modelcontext`] servers that run as many instances behind a load
//! balancer.
//!
//! Every instance started with the same [`Deployment`] (one Redis, one deployment name) shares
//! what the instances must agree on: the change notifications, through a [`RedisBus`] that
//! carries each [`ChangeEvent`](modelcontext::ChangeEvent) published on one instance to the
//! `subscriptions/listen` streams and handshake-era connections of all the others; and the
//! handshake-era sessions, through a [`RedisSessionStore`] given to
//! [`HttpOptions::session_store`](modelcontext::HttpOptions::session_store), so that any
//! instance serves any 2025-11-25 session; and the client's answers to a session's requests
//! and its cancellations, through a [`RedisPeerRouter`] given to
//! [`HttpOptions::peer_router`](modelcontext::HttpOptions::peer_router), so they reach the
//! instance running the handler wherever they are POSTed (the router also keeps a session's
//! GET stream on one instance, and brings it what the session sends on the others). Give the
//! instances the same [`KeyRing`](modelcontext::server::KeyRing) too, so a cursor or an MRTR
//! `requestState` sealed by one opens on the others. A [`RedisEventStore`] keeps the SSE event
//! logs of handshake-era sessions, so a stream cut on one instance is followed from the shared
//! log, live, wherever it is resumed (`HttpOptions::event_store`). A [`RedisTaskStore`] keeps
//! the tasks extension's records ([`McpServer::task_store`](modelcontext::McpServer::task_store)),
//! so any instance answers `tasks/get` for a task another created.
//!
//! ```no_run
//! use modelcontext::McpServer;
//! use modelcontext::server::KeyRing;
//! use modelcontext_redis::Deployment;
//!
//! # async fn run(signing_key_hex: &str) -> Result<(), Box<dyn std::error::Error>> {
//! let deployment = Deployment::new("redis://127.0.0.1:6379/", "bookshop-prod")?;
//! let server = McpServer::new("bookshop")
//!     .key_ring(KeyRing::from_hex([signing_key_hex])?.audience("bookshop-prod"))
//!     .subscription_bus(deployment.bus().await?);
//! # let _ = server;
//! # Ok(())
//! # }
//! ```
//!
//! What Redis holds and what happens when it is away:
//!
//! - Nothing on the request path: a 2026-07-28 request issues no Redis command (with a
//!   [`RedisTaskStore`], a task's creation, status changes and `tasks/*` requests do).
//! - `publish` never waits on Redis: the event reaches this instance's streams at once and is
//!   queued for the others (a bounded queue; an event that finds it full is lost for the other
//!   instances and they hear a gap).
//! - Each event carries its origin's sequence number, so a receiver sees a hole and reports a
//!   [`BusEvent::Gap`](modelcontext::BusEvent::Gap); so does the loss of the subscription
//!   connection, once it is back. On a gap every open stream is re-notified of everything it
//!   asked for: a client may hear a change twice, never miss one silently.
//! - Every Redis call has a timeout ([`Deployment::command_timeout`]), and the subscription
//!   connection is pinged ([`Deployment::health_check_interval`]), so a connection dropped
//!   silently on the way is noticed, made again and reported as a gap.
//!
//! # Redis Sentinel
//!
//! With the feature `sentinel` (off by default), `Deployment::sentinel` finds the master of a
//! monitored service through its sentinels, and `Deployment::sentinel_with` also says how to
//! reach the data nodes (password, TLS, database):
//!
//! ```no_run
//! # #[cfg(feature = "sentinel")]
//! # fn sentinel() -> Result<(), modelcontext_redis::Error> {
//! use modelcontext_redis::Deployment;
//!
//! let sentinels = ["redis://10.0.0.1:26379/", "redis://10.0.0.2:26379/"];
//! let deployment = Deployment::sentinel(sentinels, "mymaster", "bookshop-prod")?;
//! # let _ = deployment;
//! # Ok(())
//! # }
//! ```
//!
//! Every connection follows the master through a failover. A command connection asks the
//! sentinels again when a call fails in a way that says the master may have moved (a lost or
//! silent connection, `READONLY`, `MASTERDOWN`), and the deployment follows the sentinels'
//! `+switch-master` announcements, so that a demoted master that still takes writes is left at
//! once. Pub/sub connections subscribe again on the new master and report a gap, as after any
//! loss; a resumed SSE stream's blocking reads move too. During the switch, calls fail as when
//! Redis is away (a 503 for a handshake request that needs the store, an SSE event sent without
//! id, a gap on the bus), and they work again once the sentinels named the new master (in the
//! tests, a manual failover is followed about 70 ms after the switch is announced, a killed
//! master within about 0.5 s of it). What Sentinel itself may lose is lost: writes the old
//! master took but had not replicated, and, unless the data nodes have `min-replicas-to-write`,
//! writes it took between the promotion of its replica and the announcement of the switch.
//! See `modelcontext::docs::deployment`.
//!
//! # Redis Cluster
//!
//! With the feature `cluster` (off by default), `Deployment::cluster` runs a deployment on a
//! Redis Cluster, given the URLs of some or all of its nodes (they share one username and
//! password; `rediss://` for TLS):
//!
//! ```no_run
//! # #[cfg(feature = "cluster")]
//! # fn cluster() -> Result<(), modelcontext_redis::Error> {
//! use modelcontext_redis::Deployment;
//!
//! let nodes = ["redis://10.0.0.1:6379/", "redis://10.0.0.2:6379/", "redis://10.0.0.3:6379/"];
//! let deployment = Deployment::cluster(nodes, "bookshop-prod")?;
//! # let _ = deployment;
//! # Ok(())
//! # }
//! ```
//!
//! Commands go through a cluster connection of the `redis` crate: each to the master owning its
//! key's slot, following `MOVED` and `ASK` when slots move. Every script keeps its keys in one
//! slot. A session's keys (its record and subscriptions, its SSE streams and their index, its
//! GET-stream claim) share the session id as hash tag: one slot per session, and the sessions
//! spread over the cluster. A deployment's task keys (the records and the sets of unfinished
//! tasks, which one script admits together) share the deployment's name as hash tag: they live
//! in one slot, on one node. The `redis` crate does not follow a redirection answered inside a
//! pipeline, so on a cluster a session's load and an event's append are one script each (on
//! one Redis they stay pipelines).
//!
//! A message published on any node reaches the subscribers of every node, so each
//! subscription (the bus's, the session events', the peer router's) is a plain connection to
//! one of the nodes given, each new one starting a node further; when its node is lost it is
//! made again on the next and reports a gap, as after any loss. A resumed SSE stream's blocking
//! reads use a cluster connection of their own (one connection per master), which finds the
//! stream's node. While a node is lost the keys of its slots fail as when Redis is away, until
//! the cluster promotes its replica; the other nodes keep serving theirs only with
//! `cluster-require-full-coverage no`. See `modelcontext::docs::deployment`.

// On docs.rs (nightly, `--cfg docsrs`): badges naming the feature each gated item needs.
#![cfg_attr(docsrs, feature(doc_cfg))]

mod breaker;
mod bus;
#[cfg(feature = "cluster")]
mod cluster;
mod endpoint;
mod error;
#[cfg(feature = "http")]
mod events;
#[cfg(any(feature = "http", feature = "sentinel"))]
mod follow;
mod master_moves;
#[cfg(feature = "http")]
mod router;
#[cfg(feature = "sentinel")]
mod sentinel;
#[cfg(feature = "http")]
mod sessions;
mod tasks;
mod wire;

use std::time::Duration;

use breaker::Breaker;
pub use breaker::{BreakerStats, DEFAULT_BREAKER_COOL_DOWN, DEFAULT_BREAKER_THRESHOLD};
pub use bus::{BusStats, RedisBus};
use endpoint::Endpoint;
pub use error::Error;
#[cfg(feature = "http")]
pub use events::{
    DEFAULT_EVENT_TTL, DEFAULT_EVENTS_PER_STREAM, DEFAULT_MAX_FOLLOWERS, RedisEventStore,
};
#[cfg(feature = "http")]
pub use router::RedisPeerRouter;
#[cfg(feature = "http")]
pub use sessions::RedisSessionStore;
pub use tasks::{
    DEFAULT_MAX_RUNNING, DEFAULT_MAX_RUNNING_PER_PRINCIPAL, DEFAULT_UNTIMED_TASK_TTL,
    RedisTaskStore,
};

/// How long, by default, a [`RedisPeerRouter`]'s liveness key lives unrenewed: a claim of an
/// instance that died is taken over by another at most this long after its last renewal.
pub const DEFAULT_INSTANCE_LIVENESS: Duration = Duration::from_secs(3);

/// The default timeout of one Redis call (connect, subscribe, a pipeline of publishes, a ping).
pub const DEFAULT_COMMAND_TIMEOUT: Duration = Duration::from_secs(2);

/// How often, by default, the bus pings its subscription connection.
pub const DEFAULT_HEALTH_CHECK_INTERVAL: Duration = Duration::from_secs(10);

/// One deployment on one Redis: the connection settings and the name every key and channel
/// is prefixed with (`modelcontext:{name}:`), so several deployments can share a Redis.
///
/// The name is the deployment's, never an instance's: every instance of the service gets the
/// same one. Use the same name as the audience of the deployment's key ring.
#[derive(Clone, Debug)]
pub struct Deployment {
    endpoint: Endpoint,
    name: String,
    command_timeout: Duration,
    health_check: Duration,
    instance_liveness: Duration,
}

impl Deployment {
    /// A deployment named `name` on the Redis at `url` (`redis://[user:password@]host:port/db`,
    /// or `rediss://` for TLS when the `redis` crate is built with a TLS feature). Nothing is
    /// connected yet. Fails on a malformed URL or an empty name, or one with whitespace or
    /// braces (braces are Redis Cluster hash tags).
    pub fn new(url: &str, name: &str) -> Result<Deployment, Error> {
        let client = redis::Client::open(url).map_err(|e| Error::config(format!("{e}")))?;
        Deployment::from_client(client, name)
    }

    /// A deployment on a Redis client you configured yourself.
    pub fn from_client(client: redis::Client, name: &str) -> Result<Deployment, Error> {
        Deployment::on(Endpoint::Direct(client), name)
    }

    /// A deployment named `name` on the master of `service`, found through the Redis
    /// Sentinels at `sentinel_urls` (`redis://[user:password@]host:port`, the sentinels' own
    /// address and credentials; give several, any one that answers will do). The data nodes
    /// are reached without password, TLS or database: see [`Deployment::sentinel_with`].
    /// Nothing is connected yet. Fails on a malformed URL, an empty list or service name, or
    /// a bad deployment name.
    ///
    /// Every connection follows the master through a failover: see the crate's
    /// documentation, "Redis Sentinel".
    #[cfg(feature = "sentinel")]
    #[cfg_attr(docsrs, doc(cfg(feature = "sentinel")))]
    pub fn sentinel<I>(sentinel_urls: I, service: &str, name: &str) -> Result<Deployment, Error>
    where
        I: IntoIterator,
        I::Item: AsRef<str>,
    {
        let nodes = redis::sentinel::SentinelNodeConnectionInfo::default();
        Deployment::sentinel_with(sentinel_urls, service, nodes, name)
    }

    /// As [`Deployment::sentinel`], with how to reach the data nodes (master and replicas):
    /// their username and password, database, protocol
    /// ([`RedisConnectionInfo`](redis::RedisConnectionInfo)) and TLS mode. A user limited by
    /// an ACL needs `+role` there: the master is checked with `ROLE` before it is used.
    #[cfg(feature = "sentinel")]
    #[cfg_attr(docsrs, doc(cfg(feature = "sentinel")))]
    pub fn sentinel_with<I>(
        sentinel_urls: I,
        service: &str,
        nodes: redis::sentinel::SentinelNodeConnectionInfo,
        name: &str,
    ) -> Result<Deployment, Error>
    where
        I: IntoIterator,
        I::Item: AsRef<str>,
    {
        let urls = sentinel_urls.into_iter().map(|url| url.as_ref().to_owned()).collect();
        let sentinels = sentinel::Sentinels::new(urls, service, nodes)?;
        Deployment::on(Endpoint::Sentinel(std::sync::Arc::new(sentinels)), name)
    }

    /// A deployment named `name` on the Redis Cluster whose nodes (some or all: any one
    /// that answers tells the others) are at `node_urls` (`redis://[user:password@]host:port`,
    /// or `rediss://`; every node takes the same credentials). Nothing is connected yet. Fails
    /// on a malformed URL, an empty list, or a bad deployment name.
    ///
    /// Commands go to the node owning their key's slot; pub/sub uses one of the nodes given
    /// at a time, so give several (all masters, ideally): see the crate's documentation,
    /// "Redis Cluster".
    #[cfg(feature = "cluster")]
    #[cfg_attr(docsrs, doc(cfg(feature = "cluster")))]
    pub fn cluster<I>(node_urls: I, name: &str) -> Result<Deployment, Error>
    where
        I: IntoIterator,
        I::Item: AsRef<str>,
    {
        let urls = node_urls.into_iter().map(|url| url.as_ref().to_owned()).collect();
        let nodes = cluster::Nodes::new(urls)?;
        Deployment::on(Endpoint::Cluster(std::sync::Arc::new(nodes)), name)
    }

    fn on(endpoint: Endpoint, name: &str) -> Result<Deployment, Error> {
        let bad = |c: char| c.is_whitespace() || c.is_control() || c == '{' || c == '}';
        if name.is_empty() || name.chars().any(bad) {
            return Err(Error::config(format!(
                "deployment name {name:?}: give a non-empty name without spaces or braces"
            )));
        }
        let name = name.to_owned();
        Ok(Deployment {
            endpoint,
            name,
            command_timeout: DEFAULT_COMMAND_TIMEOUT,
            health_check: DEFAULT_HEALTH_CHECK_INTERVAL,
            instance_liveness: DEFAULT_INSTANCE_LIVENESS,
        })
    }

    /// How long one Redis call may take before it counts as failed (default
    /// [`DEFAULT_COMMAND_TIMEOUT`]).
    pub fn command_timeout(mut self, timeout: Duration) -> Deployment {
        self.command_timeout = timeout;
        self
    }

    /// How often the bus pings its subscription connection (default
    /// [`DEFAULT_HEALTH_CHECK_INTERVAL`]): a connection dropped silently on the way (a NAT, a
    /// proxy's idle timeout) is noticed within this interval plus the command timeout, then
    /// made again and reported as a gap. At least 10 ms.
    pub fn health_check_interval(mut self, interval: Duration) -> Deployment {
        self.health_check = interval.max(Duration::from_millis(10));
        self
    }

    /// How long a [`RedisPeerRouter`]'s liveness key lives unrenewed (default
    /// [`DEFAULT_INSTANCE_LIVENESS`]; renewed every third of it while the instance holds a
    /// session's GET stream): an instance that dies holding a GET stream keeps it from the
    /// others for about this long, instead of the claim's lifetime. Shorter means one more
    /// `SET` per period per instance holding a stream, and a stall of the instance longer
    /// than it lets another instance take its streams (the stalled one ends its own at its
    /// next renewal). At least 30 ms.
    pub fn instance_liveness(mut self, liveness: Duration) -> Deployment {
        self.instance_liveness = liveness.max(Duration::from_millis(30));
        self
    }

    /// The deployment's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Connects a [`RedisBus`] for this deployment: one connection for publishing, one
    /// subscribed to the deployment's channel. Returns once the subscription is in place, so
    /// events published anywhere from then on reach this bus; fails if Redis cannot be reached
    /// within the command timeout (a wrong URL or password shows at startup).
    pub async fn bus(&self) -> Result<RedisBus, Error> {
        RedisBus::connect(self).await
    }

    #[cfg(feature = "http")]
    #[cfg_attr(docsrs, doc(cfg(feature = "http")))]
    /// A [`RedisSessionStore`] for this deployment: handshake-era session records with an
    /// idle expiry, for [`HttpOptions::session_store`](modelcontext::HttpOptions::session_store).
    /// Connects on first use.
    pub fn session_store(&self) -> Result<RedisSessionStore, Error> {
        RedisSessionStore::new(self)
    }

    #[cfg(feature = "http")]
    #[cfg_attr(docsrs, doc(cfg(feature = "http")))]
    /// A [`RedisEventStore`] for this deployment: the SSE event logs of handshake-era sessions
    /// (`HttpOptions::event_store`), so a stream cut on one instance resumes on any other and
    /// follows what the first still sends. Connects on first use.
    pub fn event_store(&self) -> Result<RedisEventStore, Error> {
        RedisEventStore::new(self)
    }

    /// A [`RedisTaskStore`] for this deployment: the tasks extension's records, for
    /// [`McpServer::task_store`](modelcontext::McpServer::task_store), so that any instance
    /// answers `tasks/get` for a task another created. Connects on first use.
    pub fn task_store(&self) -> Result<RedisTaskStore, Error> {
        RedisTaskStore::new(self)
    }

    #[cfg(feature = "http")]
    #[cfg_attr(docsrs, doc(cfg(feature = "http")))]
    /// A [`RedisPeerRouter`] for this deployment, with a fresh random instance name: the
    /// client's answers and cancellations reach the instance that runs their request, for
    /// [`HttpOptions::peer_router`](modelcontext::HttpOptions::peer_router). Connects on first
    /// use.
    pub fn peer_router(&self) -> Result<RedisPeerRouter, Error> {
        RedisPeerRouter::new(self)
    }

    /// A multiplexed connection that reconnects by itself, made on first use, with the
    /// deployment's timeout on connecting and on every answer.
    fn lazy_connection(&self) -> Result<endpoint::Connection, Error> {
        self.endpoint.connection(self.command_timeout, None)
    }

    /// `modelcontext:{name}:{what}`: every key and channel of the deployment.
    fn key(&self, what: &str) -> String {
        format!("modelcontext:{}:{what}", self.name)
    }

    /// `modelcontext:{name}:{what}:` and the name in braces (`modelcontext:shop:task:{shop}`):
    /// a key with the deployment's name as its Redis Cluster hash tag, for the keys one script must touch together whatever their session
    /// (all in one slot, on one node of a cluster). Still under `modelcontext:{name}:`, as
    /// the deployment's ACL patterns expect.
    fn slot_key(&self, what: &str) -> String {
        format!("modelcontext:{0}:{what}:{{{0}}}", self.name)
    }
}

/// A duration as Redis takes it in `PX` and `PEXPIRE`: whole milliseconds, at least one.
fn millis(duration: Duration) -> String {
    duration.as_millis().max(1).to_string()
}
