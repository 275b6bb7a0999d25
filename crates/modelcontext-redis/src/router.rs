//! [`RedisPeerRouter`]: a handshake-era session's answers and cancellations carried to the
//! instance that must handle them, over Redis pub/sub (and a 2026-07-28 `tasks/update` to the
//! instance running its task).
//!
//! Each instance follows two channels of the deployment: its own,
//! `modelcontext:{deployment}:peer:{instance}`, where the other instances forward the
//! client's answers to the requests it sent, and `modelcontext:{deployment}:peers`, where
//! cancellations are told to every instance. The instance name is random (128 bits in hex),
//! so two instances, or one instance and its restart, never share one. Delivery is at most
//! once: a message published while its instance is away is lost, and the request waiting for
//! it times out as if the client had not answered.
//!
//! The claim on a session's standalone GET stream is one string key beside the session's
//! record, `modelcontext:{deployment}:session:{ID}:standalone` (same hash slot), holding the
//! claiming stream's ticket with a time to live: taken and renewed by one short Lua script
//! (set only if absent or already this ticket's), released by another (deleted only if still
//! this ticket's), so two instances never both hold it and a late release never frees
//! another stream's claim.
//!
//! An instance that dies holding a claim must not keep the stream from the others until the
//! claim expires. So while an instance holds at least one claim it keeps a liveness key,
//! `modelcontext:{deployment}:alive:{instance}`, with a short time to live
//! ([`Deployment::instance_liveness`], default [`DEFAULT_INSTANCE_LIVENESS`]), set before its
//! first claim and renewed every third of that. A claim refused because another instance's
//! ticket holds it is taken over when that instance's liveness key is gone: one script sets
//! the claim only if it still holds the very ticket that was seen (compare and set), so of two
//! instances taking over at once one wins, and a claim renewed or taken meanwhile is left
//! alone. The liveness key and the claim live in different hash slots, so the check and the
//! takeover are two calls; the takeover's compare and set is what keeps it sound. An instance
//! that holds no claim sends nothing for liveness.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use futures_util::stream::BoxStream;
use modelcontext::server::http::{
    ClaimFuture, Direction, HolderFuture, PeerRouter, RouteError, RouteFuture, Routed,
};
use serde::{Deserialize, Serialize};

use crate::breaker::{BreakerStats, DEFAULT_BREAKER_COOL_DOWN, DEFAULT_BREAKER_THRESHOLD};
use crate::endpoint::{Connection, Endpoint};
use crate::{Breaker, Deployment, Error};

/// A [`PeerRouter`] shared by every instance of a [`Deployment`]. Built by
/// [`Deployment::peer_router`]; publishes through a connection made on first use, with the
/// deployment's command timeout on every call and a circuit breaker.
#[derive(Clone)]
pub struct RedisPeerRouter {
    connection: Connection,
    instance: String,
    /// `modelcontext:{deployment}:peer:` — an instance's channel is this and its name.
    prefix: String,
    /// `modelcontext:{deployment}:peers`: cancellations, for every instance.
    everyone: String,
    /// `modelcontext:{deployment}:session`, as the session store names its records: a
    /// session's GET-stream claim is `{sessions}:{ID}:standalone`.
    sessions: String,
    endpoint: Endpoint,
    timeout: Duration,
    health_check: Duration,
    breaker: Arc<Breaker>,
    /// The claims this instance holds, and whether its liveness key is kept.
    liveness: Arc<Liveness>,
    /// `modelcontext:{deployment}:alive:` — an instance's liveness key is this and its name.
    alive: String,
}

/// This instance's liveness: its key, and the claims that make it worth keeping.
struct Liveness {
    /// `modelcontext:{deployment}:alive:{instance}`.
    key: String,
    ttl: Duration,
    state: Mutex<Held>,
}

#[derive(Default)]
struct Held {
    /// `(session, ticket)` of each claim this instance holds.
    claims: HashSet<(String, String)>,
    /// Whether the task renewing the liveness key runs (it stops once no claim is held).
    beating: bool,
}

impl Liveness {
    fn lock(&self) -> std::sync::MutexGuard<'_, Held> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `SET alive 1 PX liveness`.
    fn beat(&self) -> redis::Cmd {
        let mut command = redis::cmd("SET");
        command.arg(&self.key).arg(1).arg("PX").arg(crate::millis(self.ttl));
        command
    }
}

/// Takes or renews the claim: 1, or the ticket holding it. KEYS: the claim. ARGV: the ticket,
/// its lifetime in ms.
const CLAIM: &str = r"
local held = redis.call('GET', KEYS[1])
if held and held ~= ARGV[1] then return held end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1";

/// Takes the claim over if it still holds the ticket seen (of an instance found dead): 1 or
/// 0. KEYS: the claim. ARGV: the ticket seen, the new ticket, its lifetime in ms.
const TAKE_OVER: &str = r"
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1";

/// Ends the claim if the ticket still holds it. KEYS: the claim. ARGV: the ticket.
const RELEASE: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1";

/// One routed message on a channel.
#[derive(Serialize, Deserialize)]
struct Envelope {
    /// The instance that published it: its own broadcasts are not handed back to it.
    origin: String,
    session: String,
    message: String,
    /// For the session's GET stream ([`Direction::ToClient`]); absent: from the client.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    to_client: bool,
    /// A relayed `tasks/update` or its answer; absent: a session's message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    task: Option<TaskLeg>,
}

/// Which leg of a relayed `tasks/update` an [`Envelope`] carries.
#[derive(Serialize, Deserialize, Clone, Copy)]
#[serde(rename_all = "snake_case")]
enum TaskLeg {
    /// [`Direction::TaskUpdate`].
    Update,
    /// [`Direction::TaskUpdated`].
    Updated,
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
        let instance = crate::bus::random_origin();
        let alive = deployment.key("alive:");
        let liveness = Arc::new(Liveness {
            key: format!("{alive}{instance}"),
            ttl: deployment.instance_liveness,
            state: Mutex::default(),
        });
        Ok(RedisPeerRouter {
            connection,
            instance,
            liveness,
            alive,
            prefix: deployment.key("peer:"),
            everyone: deployment.key("peers"),
            sessions: deployment.key("session"),
            endpoint: deployment.endpoint.clone(),
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
        let envelope = Envelope {
            origin: self.instance.clone(),
            session: routed.session,
            message: routed.message,
            to_client: routed.direction == Direction::ToClient,
            task: match routed.direction {
                Direction::TaskUpdate => Some(TaskLeg::Update),
                Direction::TaskUpdated => Some(TaskLeg::Updated),
                _ => None,
            },
        };
        let payload = serde_json::to_string(&envelope).unwrap_or_default();
        let mut command = redis::cmd("PUBLISH");
        command.arg(channel).arg(payload);
        self.run::<i64>(command).await.map(|_| ())
    }

    /// Runs `command` within the timeout, unless the breaker is open (then an error at once);
    /// its outcome is recorded by the breaker.
    async fn run<T: redis::FromRedisValue>(&self, command: redis::Cmd) -> Result<T, RouteError> {
        let mut connection = self.connection.clone();
        let answer = command.query_async::<T>(&mut connection);
        self.breaker.call(self.timeout, answer).await.map_err(RouteError::unavailable)
    }

    /// The key of session `session`'s GET-stream claim; `None` for an id that cannot be a
    /// hash tag (with braces), which no session of ours has.
    fn claim_key(&self, session: &str) -> Option<String> {
        (!session.contains(['{', '}']))
            .then(|| format!("{}:{{{session}}}:standalone", self.sessions))
    }

    /// `EVAL script 1 claim args…`: 1 or 0 as a bool.
    async fn script(&self, script: &str, key: String, args: &[&str]) -> Result<bool, RouteError> {
        Ok(self.eval::<i64>(script, key, args).await? == 1)
    }

    /// `EVAL script 1 claim args…`, its answer as `T`.
    async fn eval<T: redis::FromRedisValue>(
        &self,
        script: &str,
        key: String,
        args: &[&str],
    ) -> Result<T, RouteError> {
        let mut command = redis::cmd("EVAL");
        command.arg(script).arg(1).arg(key).arg(args);
        self.run::<T>(command).await
    }

    /// Takes or renews `ticket`'s claim at `key`; a claim held by an instance that is not
    /// alive is taken over.
    async fn claim(&self, key: String, ticket: &str, ttl: Duration) -> Result<bool, RouteError> {
        let lifetime = crate::millis(ttl);
        let answer: redis::Value = self.eval(CLAIM, key.clone(), &[ticket, &lifetime]).await?;
        let held = match answer {
            redis::Value::Int(1) => return Ok(true),
            redis::Value::BulkString(held) => String::from_utf8_lossy(&held).into_owned(),
            redis::Value::SimpleString(held) => held,
            _ => return Ok(false),
        };
        let Some((holder, _)) = held.split_once('/') else { return Ok(false) };
        if holder == self.instance || self.alive(holder).await? {
            return Ok(false);
        }
        tracing::info!(holder, "taking over a GET stream claim of an instance that is gone");
        self.script(TAKE_OVER, key, &[&held, ticket, &lifetime]).await
    }

    /// Whether instance `instance` keeps its liveness key.
    async fn alive(&self, instance: &str) -> Result<bool, RouteError> {
        let mut command = redis::cmd("EXISTS");
        command.arg(format!("{}{instance}", self.alive));
        Ok(self.run::<i64>(command).await? == 1)
    }

    /// Sets this instance's liveness key, and keeps it while the instance holds a claim.
    async fn keep_alive(&self) -> Result<(), RouteError> {
        self.run::<()>(self.liveness.beat()).await?;
        let mut held = self.liveness.lock();
        if !held.beating {
            held.beating = true;
            let (connection, breaker) = (self.connection.clone(), Arc::clone(&self.breaker));
            let beats = Beats { connection, breaker, timeout: self.timeout };
            tokio::spawn(beats.run(Arc::downgrade(&self.liveness)));
        }
        Ok(())
    }
}

/// What renews an instance's liveness key: the router's connection, breaker and timeout.
struct Beats {
    connection: Connection,
    breaker: Arc<Breaker>,
    timeout: Duration,
}

impl Beats {
    /// Renews the liveness key every third of its lifetime while the router lives (the
    /// liveness is held weakly) and holds a claim; a failed renewal is left to the next.
    async fn run(self, liveness: Weak<Liveness>) {
        let Some(period) = liveness.upgrade().map(|l| l.ttl / 3) else { return };
        loop {
            tokio::time::sleep(period).await;
            let Some(live) = liveness.upgrade() else { return };
            let beat = {
                let mut held = live.lock();
                if held.claims.is_empty() {
                    held.beating = false;
                    return;
                }
                live.beat()
            };
            drop(live);
            let mut connection = self.connection.clone();
            let sent = self.breaker.call(self.timeout, beat.query_async::<()>(&mut connection));
            if let Err(error) = sent.await {
                tracing::debug!(%error, "instance liveness not renewed");
            }
        }
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

    fn claim_standalone<'a>(
        &'a self,
        session: &'a str,
        ticket: &'a str,
        ttl: Duration,
    ) -> ClaimFuture<'a> {
        Box::pin(async move {
            let Some(key) = self.claim_key(session) else {
                return Err(RouteError::unavailable("a session id may not contain braces"));
            };
            let held = (session.to_owned(), ticket.to_owned());
            if !self.liveness.lock().claims.contains(&held) {
                // Alive before claiming: another instance must never see our claim and
                // find us dead.
                self.keep_alive().await?;
            }
            let claimed = self.claim(key, ticket, ttl).await?;
            if claimed {
                self.liveness.lock().claims.insert(held);
            }
            Ok(claimed)
        })
    }

    fn release_standalone<'a>(&'a self, session: &'a str, ticket: &'a str) -> RouteFuture<'a> {
        Box::pin(async move {
            let held = (session.to_owned(), ticket.to_owned());
            self.liveness.lock().claims.remove(&held);
            let Some(key) = self.claim_key(session) else { return Ok(()) };
            self.script(RELEASE, key, &[ticket]).await.map(|_| ())
        })
    }

    fn standalone_holder<'a>(&'a self, session: &'a str) -> HolderFuture<'a> {
        Box::pin(async move {
            let Some(key) = self.claim_key(session) else { return Ok(None) };
            let mut command = redis::cmd("GET");
            command.arg(key);
            self.run::<Option<String>>(command).await
        })
    }

    fn incoming(&self) -> BoxStream<'static, Routed> {
        let channels = vec![format!("{}{}", self.prefix, self.instance), self.everyone.clone()];
        let origin = self.instance.clone();
        // No gap: a message lost in an outage is not sent again (see the module's doc).
        self.endpoint
            .follower(channels, self.timeout, self.health_check)
            .follow(move |payload| read(&origin, payload))
    }
}

/// The message an envelope carries, `None` for this instance's own or an unreadable one.
fn read(origin: &str, payload: &[u8]) -> Option<Routed> {
    let Ok(envelope) = serde_json::from_slice::<Envelope>(payload) else {
        tracing::warn!("an unreadable message on a peer router channel");
        return None;
    };
    if envelope.origin == origin {
        return None;
    }
    Some(match (envelope.task, envelope.to_client) {
        (Some(TaskLeg::Update), _) => Routed::task_update(envelope.session, envelope.message),
        (Some(TaskLeg::Updated), _) => Routed::task_updated(envelope.session, envelope.message),
        (None, true) => Routed::to_client(envelope.session, envelope.message),
        (None, false) => Routed::new(envelope.session, envelope.message),
    })
}
