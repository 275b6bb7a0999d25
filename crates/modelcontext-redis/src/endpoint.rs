//! Where a deployment's connections go: one Redis named by its address, (feature `sentinel`)
//! the master that a set of Redis Sentinels names at the moment of connecting, or (feature
//! `cluster`) the nodes of a Redis Cluster.
//!
//! The stores never see the difference: they take a [`Connection`] for their commands, and
//! ask the [`Endpoint`] for a pub/sub or a dedicated connection when they (re)make one.

use std::time::Duration;

use redis::aio::{
    ConnectionLike, ConnectionManager, ConnectionManagerConfig, MultiplexedConnection,
};
use redis::{AsyncConnectionConfig, Cmd, Pipeline, RedisFuture, RedisResult, Value};

use crate::Error;
#[cfg(feature = "http")]
use crate::follow::{Connect, Follower};
use crate::master_moves::MasterMoves;

// The direct variant stays inline, as the client was before Sentinel came.
#[cfg_attr(any(feature = "sentinel", feature = "cluster"), allow(clippy::large_enum_variant))]
#[derive(Clone, Debug)]
pub(crate) enum Endpoint {
    /// One Redis at a fixed address.
    Direct(redis::Client),
    /// The master of a service, as its sentinels name it.
    #[cfg(feature = "sentinel")]
    Sentinel(std::sync::Arc<crate::sentinel::Sentinels>),
    /// The nodes of a cluster.
    #[cfg(feature = "cluster")]
    Cluster(std::sync::Arc<crate::cluster::Nodes>),
}

impl Endpoint {
    /// A multiplexed connection for the stores' commands, made on first use, with `timeout`
    /// on connecting and on every answer; `retry_max` caps the wait between reconnections.
    pub(crate) fn connection(
        &self,
        timeout: Duration,
        retry_max: Option<Duration>,
    ) -> Result<Connection, Error> {
        match self {
            Endpoint::Direct(client) => {
                let mut config = ConnectionManagerConfig::new()
                    .set_connection_timeout(Some(timeout))
                    .set_response_timeout(Some(timeout));
                if let Some(retry_max) = retry_max {
                    config = config.set_max_delay(retry_max);
                }
                let manager = ConnectionManager::new_lazy_with_config(client.clone(), config)?;
                Ok(Connection::Direct(manager))
            }
            #[cfg(feature = "sentinel")]
            Endpoint::Sentinel(sentinels) => Ok(Connection::Sentinel(
                crate::sentinel::FailoverConnection::new(sentinels, timeout),
            )),
            #[cfg(feature = "cluster")]
            Endpoint::Cluster(nodes) => {
                Ok(Connection::Cluster(crate::cluster::LazyCluster::new(nodes, timeout)))
            }
        }
    }

    /// A new pub/sub connection (to the master as named now, on Sentinel; to one node, on a
    /// cluster).
    pub(crate) async fn pubsub(&self) -> RedisResult<redis::aio::PubSub> {
        match self {
            Endpoint::Direct(client) => client.get_async_pubsub().await,
            #[cfg(feature = "sentinel")]
            Endpoint::Sentinel(sentinels) => sentinels.master().await?.get_async_pubsub().await,
            #[cfg(feature = "cluster")]
            Endpoint::Cluster(nodes) => nodes.pubsub().await,
        }
    }

    /// Tells when the master moved (never, but on Sentinel): a subscription made before should
    /// be made again. (On a cluster any node hears every channel: a subscription stays until
    /// its node is lost.)
    pub(crate) fn moves(&self) -> MasterMoves {
        match self {
            #[cfg(feature = "sentinel")]
            Endpoint::Sentinel(sentinels) => MasterMoves::on(sentinels.moves()),
            _ => MasterMoves::never(),
        }
    }

    /// Follows `channels` on this deployment's Redis (its master as named now, on Sentinel),
    /// subscribing again when the master moves.
    #[cfg(feature = "http")]
    pub(crate) fn follower<T: Clone + Send + Sync + 'static>(
        &self,
        channels: Vec<String>,
        timeout: Duration,
        health_check: Duration,
    ) -> Follower<T> {
        let endpoint = self.clone();
        let connect: Connect = std::sync::Arc::new(move || {
            let endpoint = endpoint.clone();
            Box::pin(async move { endpoint.pubsub().await })
        });
        Follower::on(connect, self.moves(), channels, timeout, health_check)
    }

    #[cfg_attr(not(feature = "http"), allow(dead_code))] // used by the HTTP-era stores
    /// How many times the master moved so far (always 0 but on Sentinel): a dedicated
    /// connection made before the latest move is on the wrong node.
    pub(crate) fn switches(&self) -> u64 {
        match self {
            #[cfg(feature = "sentinel")]
            Endpoint::Sentinel(sentinels) => sentinels.switches(),
            _ => 0,
        }
    }

    #[cfg_attr(not(feature = "http"), allow(dead_code))] // used by the HTTP-era stores
    /// A new connection of its own, `connect` to connect, `answer` for each answer: to the
    /// master as named now, on Sentinel; on a cluster, a cluster connection (it finds the node
    /// of each key by itself).
    pub(crate) async fn dedicated(
        &self,
        connect: Duration,
        answer: Duration,
    ) -> RedisResult<Dedicated> {
        let config = AsyncConnectionConfig::new()
            .set_connection_timeout(Some(connect))
            .set_response_timeout(Some(answer));
        match self {
            Endpoint::Direct(client) => client
                .get_multiplexed_async_connection_with_config(&config)
                .await
                .map(Dedicated::One),
            #[cfg(feature = "sentinel")]
            Endpoint::Sentinel(sentinels) => sentinels.connect(&config).await.map(Dedicated::One),
            #[cfg(feature = "cluster")]
            Endpoint::Cluster(nodes) => {
                nodes.connect(connect, answer).await.map(Dedicated::Cluster)
            }
        }
    }
}

#[cfg_attr(not(feature = "http"), allow(dead_code))] // used by the HTTP-era stores
/// A connection of one user's own (a blocking read): to one node, or on a cluster, to the
/// cluster.
pub(crate) enum Dedicated {
    One(MultiplexedConnection),
    #[cfg(feature = "cluster")]
    Cluster(redis::cluster_async::ClusterConnection),
}

impl ConnectionLike for Dedicated {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match self {
            Dedicated::One(connection) => connection.req_packed_command(cmd),
            #[cfg(feature = "cluster")]
            Dedicated::Cluster(connection) => connection.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        cmd: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match self {
            Dedicated::One(connection) => connection.req_packed_commands(cmd, offset, count),
            #[cfg(feature = "cluster")]
            Dedicated::Cluster(connection) => connection.req_packed_commands(cmd, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Dedicated::One(connection) => connection.get_db(),
            #[cfg(feature = "cluster")]
            Dedicated::Cluster(_) => 0,
        }
    }
}

/// The stores' command connection. Without the `sentinel` and `cluster` features this is a
/// [`ConnectionManager`] and nothing else (one variant: the match costs nothing).
#[derive(Clone)]
pub(crate) enum Connection {
    Direct(ConnectionManager),
    #[cfg(feature = "sentinel")]
    Sentinel(crate::sentinel::FailoverConnection),
    #[cfg(feature = "cluster")]
    Cluster(crate::cluster::LazyCluster),
}

impl Connection {
    #[cfg_attr(not(feature = "http"), allow(dead_code))] // used by the HTTP-era stores
    /// Whether this is a Redis Cluster connection. A pipeline sent through one goes to the
    /// node of its first key, and a `MOVED` or `ASK` answered inside it (a slot moving) is
    /// not followed, as it is for a single command: there, commands that must go together
    /// are one script.
    pub(crate) fn is_cluster(&self) -> bool {
        #[cfg(feature = "cluster")]
        {
            matches!(self, Connection::Cluster(_))
        }
        #[cfg(not(feature = "cluster"))]
        {
            false
        }
    }
}

impl ConnectionLike for Connection {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match self {
            Connection::Direct(manager) => manager.req_packed_command(cmd),
            #[cfg(feature = "sentinel")]
            Connection::Sentinel(failover) => failover.req_packed_command(cmd),
            #[cfg(feature = "cluster")]
            Connection::Cluster(cluster) => cluster.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        cmd: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match self {
            Connection::Direct(manager) => manager.req_packed_commands(cmd, offset, count),
            #[cfg(feature = "sentinel")]
            Connection::Sentinel(failover) => failover.req_packed_commands(cmd, offset, count),
            #[cfg(feature = "cluster")]
            Connection::Cluster(cluster) => cluster.req_packed_commands(cmd, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Connection::Direct(manager) => manager.get_db(),
            #[cfg(feature = "sentinel")]
            Connection::Sentinel(failover) => failover.get_db(),
            #[cfg(feature = "cluster")]
            Connection::Cluster(_) => 0,
        }
    }
}
