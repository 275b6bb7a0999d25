//! Redis Cluster (feature `cluster`): commands go through a cluster connection, pub/sub
//! through a plain connection to one node.
//!
//! A [`LazyCluster`] is the stores' command connection: a `redis` cluster connection, made on
//! first use (a failed first connection is tried again at the next call), that sends each
//! command to the master owning its key's slot and follows `MOVED`, `ASK` and new nodes by
//! itself. Every script and pipeline the stores send keeps its keys in one slot (a session's
//! keys share its id as hash tag, a deployment's task keys share its name), so each is one
//! node's work, atomic as on a single Redis.
//!
//! A message published on any node of a cluster reaches the subscribers of every node, so a
//! subscription needs one node, any one: [`Nodes::pubsub`] connects to the nodes given, each
//! new subscription starting one node further than the last, so one made again after its node
//! was lost goes to another (and the follower reports the gap, as on one Redis). A resumed SSE
//! stream's blocking `XREAD` needs the node owning its stream: it gets a cluster connection of
//! its own ([`Nodes::connect`]), which finds that node by itself.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use redis::aio::ConnectionLike;
use redis::cluster::{ClusterClient, ClusterConfig};
use redis::cluster_async::ClusterConnection;
use redis::{Cmd, Pipeline, RedisFuture, RedisResult, Value};
use tokio::sync::OnceCell;

use crate::Error;

/// The nodes of a cluster, as given.
pub(crate) struct Nodes {
    client: ClusterClient,
    /// One client per node given, for pub/sub connections.
    nodes: Vec<redis::Client>,
    /// The node the next pub/sub connection tries first.
    next: AtomicUsize,
}

impl std::fmt::Debug for Nodes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Nodes").field("nodes", &self.nodes.len()).finish_non_exhaustive()
    }
}

impl Nodes {
    /// The cluster whose nodes (some or all) are at `urls`. Nothing is connected yet.
    pub(crate) fn new(urls: Vec<String>) -> Result<Nodes, Error> {
        let bad = |e: redis::RedisError| Error::config(format!("cluster: {e}"));
        if urls.is_empty() {
            return Err(Error::config("cluster: give the URL of at least one node".into()));
        }
        let nodes = urls
            .iter()
            .map(|url| redis::Client::open(url.as_str()))
            .collect::<RedisResult<Vec<_>>>()
            .map_err(bad)?;
        let client = ClusterClient::new(urls).map_err(bad)?;
        Ok(Nodes { client, nodes, next: AtomicUsize::new(0) })
    }

    /// A new cluster connection (to every master), `connect` to connect to each node, `answer`
    /// for each answer.
    pub(crate) async fn connect(
        &self,
        connect: Duration,
        answer: Duration,
    ) -> RedisResult<ClusterConnection> {
        let config =
            ClusterConfig::new().set_connection_timeout(connect).set_response_timeout(answer);
        self.client.get_async_connection_with_config(config).await
    }

    /// A new pub/sub connection to one node: the first that accepts, starting one node
    /// further than the last time.
    pub(crate) async fn pubsub(&self) -> RedisResult<redis::aio::PubSub> {
        let first = self.next.fetch_add(1, Ordering::Relaxed);
        let count = self.nodes.len();
        let mut failed = None;
        for node in (0..count).map(|n| &self.nodes[(first + n) % count]) {
            match node.get_async_pubsub().await {
                Ok(pubsub) => return Ok(pubsub),
                Err(error) => failed = Some(error),
            }
        }
        // `nodes` is never empty (see `new`), so this is the last node's error.
        Err(failed.unwrap_or_else(|| std::io::Error::other("a cluster without nodes").into()))
    }
}

/// The stores' command connection on a cluster: made on first use, shared by clones.
#[derive(Clone)]
pub(crate) struct LazyCluster {
    nodes: Arc<Nodes>,
    timeout: Duration,
    connection: Arc<OnceCell<ClusterConnection>>,
}

impl LazyCluster {
    pub(crate) fn new(nodes: &Arc<Nodes>, timeout: Duration) -> LazyCluster {
        LazyCluster { nodes: Arc::clone(nodes), timeout, connection: Arc::default() }
    }

    /// The connection, made now if it is not yet (a failure is tried again next time).
    async fn get(&self) -> RedisResult<ClusterConnection> {
        let connect = || self.nodes.connect(self.timeout, self.timeout);
        self.connection.get_or_try_init(connect).await.cloned()
    }

    pub(crate) fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        Box::pin(async move { self.get().await?.req_packed_command(cmd).await })
    }

    pub(crate) fn req_packed_commands<'a>(
        &'a mut self,
        cmd: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        Box::pin(async move { self.get().await?.req_packed_commands(cmd, offset, count).await })
    }
}
