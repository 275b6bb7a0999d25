//! Redis Sentinel (feature `sentinel`): connections that follow the master through a failover.
//!
//! A `ConnectionManager` reconnects to the address it was given, forever; after a failover
//! that address is a replica (writes fail with `READONLY`) or nothing at all. So on Sentinel a
//! deployment's command connection is a [`FailoverConnection`]: it holds one multiplexed
//! connection to the master as the sentinels last named it, and drops it when a call shows the
//! master may have moved (an I/O error or a dropped connection, `READONLY`, `MASTERDOWN`). The
//! call that saw it fails (the stores count it as Redis away); the next call asks the sentinels
//! again and connects there. Pub/sub and dedicated connections ask the sentinels each time they
//! are made.
//!
//! A master demoted by a manual failover keeps accepting writes until the sentinels reconfigure
//! it (up to ten seconds later), and nothing fails meanwhile: writes there would be lost. So the
//! deployment also follows the sentinels' `+switch-master` channel, and every connection made
//! before the latest switch is dropped at its next use.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use futures_util::StreamExt;
use futures_util::stream::BoxStream;
use redis::aio::{ConnectionLike, MultiplexedConnection};
use redis::sentinel::{SentinelClient, SentinelNodeConnectionInfo, SentinelServerType};
use redis::{
    AsyncConnectionConfig, Cmd, ErrorKind, Pipeline, RedisError, RedisFuture, RedisResult,
    ServerErrorKind, Value,
};

use crate::follow::Follower;
use crate::master_moves::MasterMoves;
use crate::{DEFAULT_COMMAND_TIMEOUT, DEFAULT_HEALTH_CHECK_INTERVAL, Error};

/// The share of the command timeout a call on a [`FailoverConnection`] may wait for its
/// answer: less than the stores' own timeout, so that the connection, not the store, sees a
/// master that went silent, and asks the sentinels again.
const ANSWER_SHARE: f64 = 0.8;

/// How often the switch watcher checks that its deployment still exists.
const WATCH_ALIVE: Duration = Duration::from_secs(1);

/// The sentinels of one service, and what they announced.
pub(crate) struct Sentinels {
    /// Asks the first sentinel that answers; one question at a time (it needs `&mut`).
    client: Arc<tokio::sync::Mutex<SentinelClient>>,
    service: String,
    /// Switches of master announced (or possibly missed while the watcher was away): a
    /// connection made before the latest is dropped at its next use, a subscription at once.
    switches: tokio::sync::watch::Sender<u64>,
    watching: AtomicBool,
}

impl std::fmt::Debug for Sentinels {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sentinels").field("service", &self.service).finish_non_exhaustive()
    }
}

impl Sentinels {
    /// The sentinels at `urls`, for the master of `service`, connected to as `nodes` says
    /// (password, TLS, database of the data nodes). Nothing is connected yet.
    pub(crate) fn new(
        urls: Vec<String>,
        service: &str,
        nodes: SentinelNodeConnectionInfo,
    ) -> Result<Sentinels, Error> {
        if service.is_empty() {
            return Err(Error::config("sentinel: give the name of the monitored service".into()));
        }
        // A `String`, not `&str`: the parameter is a `String` without the `tls` feature.
        let name: String = service.to_owned();
        let client = SentinelClient::build(urls, name, Some(nodes), SentinelServerType::Master)
            .map_err(|e| Error::config(format!("sentinel: {e}")))?;
        Ok(Sentinels {
            client: Arc::new(tokio::sync::Mutex::new(client)),
            service: service.to_owned(),
            switches: tokio::sync::watch::Sender::new(0),
            watching: AtomicBool::new(false),
        })
    }

    /// A client for the master as the sentinels name it now (they check it calls itself
    /// master). Starts the switch watcher on first use.
    pub(crate) async fn master(self: &Arc<Self>) -> RedisResult<redis::Client> {
        self.watch();
        self.client.lock().await.async_get_client().await
    }

    /// A new multiplexed connection to the master as named now.
    pub(crate) async fn connect(
        self: &Arc<Self>,
        config: &AsyncConnectionConfig,
    ) -> RedisResult<MultiplexedConnection> {
        self.master().await?.get_multiplexed_async_connection_with_config(config).await
    }

    pub(crate) fn switches(&self) -> u64 {
        *self.switches.borrow()
    }

    /// Tells each switch from now on.
    pub(crate) fn moves(&self) -> tokio::sync::watch::Receiver<u64> {
        self.switches.subscribe()
    }

    /// Follows `+switch-master` on the sentinels (on a connection to whichever answers), for
    /// as long as the deployment exists. The watcher has no deployment settings to read: it
    /// uses the default timeout and health-check interval.
    fn watch(self: &Arc<Self>) {
        if self.watching.swap(true, Ordering::AcqRel) {
            return;
        }
        let client = Arc::clone(&self.client);
        let connect = Arc::new(move || {
            let client = Arc::clone(&client);
            Box::pin(async move {
                let sentinel = client.lock().await.async_get_sentinel_client().await?;
                sentinel.get_async_pubsub().await
            }) as futures_util::future::BoxFuture<'static, _>
        });
        let channels = vec!["+switch-master".to_owned()];
        let service = self.service.clone();
        // `<service> <old ip> <old port> <new ip> <new port>`; a lost subscription may have
        // missed one, so it counts as a switch too.
        let (timeout, health_check) = (DEFAULT_COMMAND_TIMEOUT, DEFAULT_HEALTH_CHECK_INTERVAL);
        let switches = Follower::on(connect, MasterMoves::never(), channels, timeout, health_check)
            .gap(())
            .follow(move |payload| {
                let named = payload.split(|b| *b == b' ').next();
                (named == Some(service.as_bytes())).then_some(())
            });
        tokio::spawn(watch(Arc::downgrade(self), switches));
    }
}

/// Counts each switch heard until the deployment is gone.
async fn watch(sentinels: Weak<Sentinels>, mut switches: BoxStream<'static, ()>) {
    let mut alive = tokio::time::interval(WATCH_ALIVE);
    loop {
        tokio::select! {
            heard = switches.next() => {
                let (Some(()), Some(sentinels)) = (heard, sentinels.upgrade()) else { return };
                sentinels.switches.send_modify(|switches| *switches += 1);
                tracing::info!(service = %sentinels.service, "the sentinels switched master");
            }
            _ = alive.tick() => if sentinels.strong_count() == 0 { return },
        }
    }
}

/// A multiplexed connection to the master that asks the sentinels again when the master may
/// have moved. Clones share the connection.
#[derive(Clone)]
pub(crate) struct FailoverConnection {
    shared: Arc<Failover>,
}

struct Failover {
    sentinels: Arc<Sentinels>,
    config: AsyncConnectionConfig,
    current: Mutex<Option<Current>>,
    /// Held while a connection is made, so callers who all found none wait for one; counts
    /// the connections made.
    making: tokio::sync::Mutex<u64>,
}

/// The connection in use, its number, and the switches announced when it was made.
#[derive(Clone)]
struct Current {
    number: u64,
    switches: u64,
    connection: MultiplexedConnection,
}

impl FailoverConnection {
    pub(crate) fn new(sentinels: &Arc<Sentinels>, timeout: Duration) -> FailoverConnection {
        let config = AsyncConnectionConfig::new()
            .set_connection_timeout(Some(timeout))
            .set_response_timeout(Some(timeout.mul_f64(ANSWER_SHARE)));
        let shared = Failover {
            sentinels: Arc::clone(sentinels),
            config,
            current: Mutex::default(),
            making: tokio::sync::Mutex::new(0),
        };
        FailoverConnection { shared: Arc::new(shared) }
    }

    pub(crate) fn get_db(&self) -> i64 {
        self.shared.live().map_or(0, |current| current.connection.get_db())
    }

    pub(crate) fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        Box::pin(async move {
            let mut current = self.shared.current().await?;
            let answer = current.connection.req_packed_command(cmd).await;
            self.shared.check(current.number, answer)
        })
    }

    pub(crate) fn req_packed_commands<'a>(
        &'a mut self,
        cmd: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        Box::pin(async move {
            let mut current = self.shared.current().await?;
            let answers = current.connection.req_packed_commands(cmd, offset, count).await;
            self.shared.check(current.number, answers)
        })
    }
}

impl Failover {
    /// The connection to use: the current one if it was made after the latest switch, else a
    /// new one to the master the sentinels name now.
    async fn current(&self) -> RedisResult<Current> {
        if let Some(current) = self.live() {
            return Ok(current);
        }
        let mut made = self.making.lock().await;
        if let Some(current) = self.live() {
            return Ok(current);
        }
        // Read before asking: a switch announced meanwhile makes this connection stale.
        let switches = self.sentinels.switches();
        let connection = self.sentinels.connect(&self.config).await?;
        *made += 1;
        let current = Current { number: *made, switches, connection };
        *self.lock() = Some(current.clone());
        Ok(current)
    }

    fn live(&self) -> Option<Current> {
        let current = self.lock().clone()?;
        (current.switches == self.sentinels.switches()).then_some(current)
    }

    /// Hands the answer on; an error that says the master may have moved drops the
    /// connection it came from (unless a newer one replaced it already).
    fn check<T>(&self, number: u64, answer: RedisResult<T>) -> RedisResult<T> {
        if let Err(error) = &answer {
            if master_may_have_moved(error) {
                let mut current = self.lock();
                if current.as_ref().is_some_and(|current| current.number == number) {
                    tracing::debug!(%error, "asking the sentinels for the master again");
                    *current = None;
                }
            }
        }
        answer
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Current>> {
        self.current.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A lost connection or a silent one (I/O errors, timeouts included), a node that is no longer
/// master (`READONLY`, also inside a script's error) or has lost its own (`MASTERDOWN`).
fn master_may_have_moved(error: &RedisError) -> bool {
    error.is_io_error()
        || error.is_unrecoverable_error()
        || matches!(
            error.kind(),
            ErrorKind::Server(ServerErrorKind::ReadOnly | ServerErrorKind::MasterDown)
        )
        || error.to_string().contains("READONLY")
}
