//! A deployment on Redis Sentinel (feature `sentinel`): a master, one replica and one
//! sentinel of the test's own, all on free loopback ports. The contract suites pass through
//! the sentinel, and the stores follow the master through a failover.

use std::time::{Duration, Instant};

use crate::support::{Deadline, RedisServer, SentinelServer, connect};
use futures_util::StreamExt;
use futures_util::stream::BoxStream;
use modelcontext::server::http::{EventStore, SessionRecord, SessionStore, StreamId};
use modelcontext::testing::contracts;
use modelcontext::types::Message;
use modelcontext::{BusEvent, ChangeEvent, SubscriptionBus};
use modelcontext_redis::{Deployment, RedisBus, RedisSessionStore};

/// The name the sentinel monitors the master by.
const SERVICE: &str = "mymaster";

/// A master, its replica (in sync) and a sentinel that knows both.
struct Watched {
    master: RedisServer,
    replica: RedisServer,
    sentinel: SentinelServer,
}

impl Watched {
    /// The master is started with `master_flags`.
    async fn start(master_flags: &[&str]) -> Option<Watched> {
        let master = RedisServer::start_with(master_flags).await?;
        let port = master.port().to_string();
        let replica = RedisServer::start_with(&["--replicaof", "127.0.0.1", &port]).await?;
        let mut to_replica = connect(&replica.url()).await;
        let deadline = Deadline::new("the replica is in sync", Duration::from_secs(10));
        loop {
            let info: String = redis::cmd("INFO")
                .arg("replication")
                .query_async(&mut to_replica)
                .await
                .expect("INFO");
            if info.contains("master_link_status:up") {
                break;
            }
            deadline.next().await;
        }
        // Started after the replica synced, so the sentinel's first look at the master lists it.
        let config = format!(
            "sentinel resolve-hostnames no\n\
             sentinel monitor {SERVICE} 127.0.0.1 {port} 1\n\
             sentinel down-after-milliseconds {SERVICE} 500\n\
             sentinel failover-timeout {SERVICE} 5000\n"
        );
        let sentinel = SentinelServer::start(&config).await?;
        let watched = Watched { master, replica, sentinel };
        let mut asking = connect(&watched.sentinel.url()).await;
        let deadline = Deadline::new("the sentinel knows the replica", Duration::from_secs(10));
        loop {
            let replicas: Vec<std::collections::HashMap<String, String>> = redis::cmd("SENTINEL")
                .arg("REPLICAS")
                .arg(SERVICE)
                .query_async(&mut asking)
                .await
                .expect("SENTINEL REPLICAS");
            if replicas.iter().any(|r| r.get("flags").is_some_and(|f| f == "slave")) {
                break;
            }
            deadline.next().await;
        }
        Some(watched)
    }

    fn deployment(&self, name: &str) -> Deployment {
        Deployment::sentinel([self.sentinel.url()], SERVICE, name).expect("a deployment")
    }

    /// The port of the master the sentinel names now.
    async fn named_master(&self) -> Option<u16> {
        let mut asking = connect(&self.sentinel.url()).await;
        let (_, port): (String, u16) = redis::cmd("SENTINEL")
            .arg("GET-MASTER-ADDR-BY-NAME")
            .arg(SERVICE)
            .query_async(&mut asking)
            .await
            .ok()?;
        Some(port)
    }
}

fn note(n: u32) -> Message {
    Message::decode_str(&format!(r#"{{"jsonrpc":"2.0","method":"n","params":{{"n":{n}}}}}"#))
        .expect("a notification")
}

/// Whether the session `id` of deployment `failover` is stored on `server` (on a connection
/// of its own: the sentinel closes every client's connection to a node it reconfigures).
async fn session_on(server: &RedisServer, id: &str) -> bool {
    let key = format!("modelcontext:failover:session:{{{id}}}");
    let there = redis::cmd("EXISTS").arg(key).query_async(&mut connect(&server.url()).await).await;
    there.expect("EXISTS")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_contract_suites_pass_through_a_sentinel() {
    let Some(watched) = Watched::start(&[]).await else { return };
    contracts::session_store(&watched.deployment("sessions").session_store().expect("store")).await;
    let events = (watched.deployment("events"), watched.deployment("events"));
    let events = (events.0.event_store().expect("store"), events.1.event_store().expect("store"));
    contracts::event_store(&events.0, &events.1).await;
    contracts::task_store(&watched.deployment("tasks").task_store().expect("store")).await;
    let routers = watched.deployment("routers");
    let (a, b) = (routers.peer_router().expect("router"), routers.peer_router().expect("router"));
    contracts::peer_router(&a, &b).await;
    let a = watched.deployment("bus").bus().await.expect("bus a");
    let b = watched.deployment("bus").bus().await.expect("bus b");
    contracts::subscription_bus(&a, &b).await;
    // All of it on the master the sentinel named: nothing was written to the replica by hand.
    assert_eq!(watched.named_master().await, Some(watched.master.port()));
}

/// The ACL of `docs::deployment`, with `+role` (the master is checked with `ROLE`), on the
/// data nodes: the session store runs through the sentinel as that user.
#[tokio::test]
async fn a_user_limited_to_its_deployment_runs_the_session_store_through_a_sentinel() {
    let Some(watched) = Watched::start(&[]).await else { return };
    let rules = "on >s3cret resetchannels &modelcontext:shop:* resetkeys ~modelcontext:shop:* \
                 -@all +publish +subscribe +ping +eval +exists +hset +hgetall +smembers +sadd \
                 +srem +pttl +pexpire +del +role";
    // ACLs are not replicated: each data node gets the user.
    watched.master.add_user("shop", rules).await;
    watched.replica.add_user("shop", rules).await;
    let user = redis::RedisConnectionInfo::default().set_username("shop").set_password("s3cret");
    let nodes =
        redis::sentinel::SentinelNodeConnectionInfo::default().set_redis_connection_info(user);
    let deployment = Deployment::sentinel_with([watched.sentinel.url()], SERVICE, nodes, "shop")
        .expect("a deployment");
    contracts::session_store(&deployment.session_store().expect("store")).await;
}

/// What runs through a deployment while its master changes: a session store with sessions
/// stored (and replicated) before, and two buses that hear each other.
struct Running {
    store: RedisSessionStore,
    before: Vec<SessionRecord>,
    a: RedisBus,
    b: RedisBus,
    heard: BoxStream<'static, BusEvent>,
}

const IDLE: Duration = Duration::from_secs(600);

impl Running {
    async fn start(watched: &Watched) -> Running {
        let deployment = watched.deployment("failover").command_timeout(Duration::from_millis(500));
        let store = deployment.session_store().expect("store");
        let (a, b) =
            (deployment.bus().await.expect("bus a"), deployment.bus().await.expect("bus b"));
        let mut heard = b.subscribe();
        a.publish(ChangeEvent::ToolsListChanged);
        assert_eq!(heard.next().await, Some(BusEvent::Change(ChangeEvent::ToolsListChanged)));
        let before: Vec<SessionRecord> =
            (0..10).map(|n| SessionRecord::new(format!("before{n}"), "2025-11-25", "{}")).collect();
        for record in &before {
            assert!(store.create(record.clone(), IDLE).await.expect("created"));
        }
        // Replicated before the switch: these must never be reported missing.
        let mut to_master = connect(&watched.master.url()).await;
        let mut wait = redis::cmd("WAIT");
        wait.arg(1).arg(5000);
        assert_eq!(wait.query_async::<u64>(&mut to_master).await.expect("WAIT"), 1);
        // The deployment follows `+switch-master` (the one subscribed client of the sentinel).
        let mut asking = connect(&watched.sentinel.url()).await;
        let deadline =
            Deadline::new("the deployment listens to the sentinel", Duration::from_secs(5));
        loop {
            let mut list = redis::cmd("CLIENT");
            list.arg("LIST");
            let clients: String = list.query_async(&mut asking).await.expect("CLIENT LIST");
            if clients.lines().any(|line| line.contains(" sub=1 ")) {
                break;
            }
            deadline.next().await;
        }
        Running { store, before, a, b, heard }
    }

    /// Loads the sessions stored before and creates new ones until a new one lands on the
    /// replica (the new master) after the sentinel named it. A call may fail meanwhile; a
    /// session stored before is never reported missing. Returns when the sentinel named the
    /// new master, when the store wrote there, the failed calls, the sessions created.
    async fn until_written_to_the_new_master(
        &self,
        watched: &Watched,
        started: Instant,
    ) -> (Duration, Duration, u32, Vec<String>) {
        let (mut named, mut failed, mut created) = (None, 0, Vec::new());
        let deadline = Deadline::new("the store writes to the new master", Duration::from_secs(30));
        loop {
            if named.is_none() && watched.named_master().await == Some(watched.replica.port()) {
                named = Some(started.elapsed());
            }
            for record in &self.before {
                match self.store.load(&record.id).await {
                    Ok(loaded) => assert_eq!(loaded.as_ref(), Some(record), "a session lost"),
                    Err(_) => failed += 1,
                }
            }
            let id = format!("during{}", created.len() as u32 + failed);
            match self.store.create(SessionRecord::new(&id, "2025-11-25", "{}"), IDLE).await {
                Ok(made) => {
                    assert!(made, "a new id is new");
                    created.push(id.clone());
                }
                Err(_) => failed += 1,
            }
            if let Some(named) = named {
                if session_on(&watched.replica, &id).await {
                    return (named, started.elapsed(), failed, created);
                }
            }
            deadline.next().await;
        }
    }

    /// After the switch every call succeeds, on the new master, and B hears A again (after
    /// a gap). Returns the sessions created during the switch that the new master lacks.
    async fn serves_on_the_new_master(&mut self, watched: &Watched, created: &[String]) -> usize {
        for record in &self.before {
            assert_eq!(self.store.load(&record.id).await.expect("loaded").as_ref(), Some(record));
        }
        let after = SessionRecord::new("after", "2025-11-25", "{}");
        assert!(self.store.create(after, IDLE).await.expect("created"));
        assert!(session_on(&watched.replica, "after").await, "written to the new master");
        let deadline = Deadline::new("bus B hears bus A again", Duration::from_secs(10));
        'published: loop {
            self.a.publish(ChangeEvent::PromptsListChanged);
            let wait = Duration::from_millis(100);
            while let Ok(event) = tokio::time::timeout(wait, self.heard.next()).await {
                if event == Some(BusEvent::Change(ChangeEvent::PromptsListChanged)) {
                    break 'published;
                }
            }
            deadline.next().await;
        }
        let stats = self.b.stats();
        assert!(stats.reconnects >= 1 && stats.gaps >= 1, "{stats:?}");
        let mut lost = 0;
        for id in created {
            lost += usize::from(!session_on(&watched.replica, id).await);
        }
        lost
    }
}

/// `SENTINEL FAILOVER` while a session store and two buses run through the sentinel. The old
/// master lives on, and would take writes until the sentinel names the new one (about a
/// second, lost when it is made a replica), but for `min-replicas-to-write 1`, which
/// `docs::deployment` asks for: it refuses them once the promoted replica left it, so those
/// calls fail, and nothing a call reported done is lost. (Only the old master has it here: a
/// promoted replica with it and no replica of its own would refuse every write.) The times
/// are printed (`--nocapture`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_store_and_a_bus_follow_the_master_through_a_manual_failover() {
    let fenced = ["--min-replicas-to-write", "1", "--min-replicas-max-lag", "10"];
    let Some(watched) = Watched::start(&fenced).await else { return };
    // A resumed SSE stream, followed (a blocking XREAD) on the master from before.
    let events = watched.deployment("failover").event_store().expect("store");
    let stream = StreamId { instance: 1, number: 1 };
    events.append("s1", stream, &note(0)).stored().await.expect("stored");
    let mut feed = events.follow("s1", stream, "0").await.expect("follow").expect("a feed");
    let first = feed.next().await.expect("event 0").expect("read");
    assert_eq!(first.message.encode(), note(0).encode());
    let mut running = Running::start(&watched).await;
    let started = Instant::now();
    let mut asking = connect(&watched.sentinel.url()).await;
    let deadline = Deadline::new("the sentinel starts a failover", Duration::from_secs(10));
    let mut failover = redis::cmd("SENTINEL");
    failover.arg("FAILOVER").arg(SERVICE);
    while failover.query_async::<()>(&mut asking).await.is_err() {
        deadline.next().await;
    }
    let (named, written, failed, created) =
        running.until_written_to_the_new_master(&watched, started).await;
    // Written there at once: the deployment heard `+switch-master`, it did not wait for the
    // sentinel to reconfigure the old master (ten seconds later) and drop its clients.
    assert!(written < named + Duration::from_secs(2), "{written:?} vs {named:?}");
    let lost = running.serves_on_the_new_master(&watched, &created).await;
    eprintln!(
        "manual failover: new master named after {named:?}, written to after {written:?}, \
         buses back after {:?}; {failed} calls failed, {} sessions created meanwhile",
        started.elapsed(),
        created.len()
    );
    assert_eq!(lost, 0, "a session reported created is not on the new master");
    // The feed moved to the new master too: it reads what is appended there.
    events.append("s1", stream, &note(1)).stored().await.expect("stored on the new master");
    let next = tokio::time::timeout(Duration::from_secs(5), feed.next()).await;
    let next = next.expect("the feed reads on the new master").expect("event 1");
    assert_eq!(next.expect("read").message.encode(), note(1).encode());
}

/// The master killed (as a crash would): the sentinel sees it down after 500 ms, promotes
/// the replica, and the store and the buses follow. Nothing a call reported done is lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_store_and_a_bus_follow_the_master_when_it_dies() {
    let Some(mut watched) = Watched::start(&[]).await else { return };
    let mut running = Running::start(&watched).await;
    let started = Instant::now();
    watched.master.kill().await;
    let (named, written, failed, created) =
        running.until_written_to_the_new_master(&watched, started).await;
    assert!(written < named + Duration::from_secs(2), "{written:?} vs {named:?}");
    let lost = running.serves_on_the_new_master(&watched, &created).await;
    eprintln!(
        "master killed: new master named after {named:?}, written to after {written:?}, buses \
         back after {:?}; {failed} calls failed, {} sessions created meanwhile",
        started.elapsed(),
        created.len()
    );
    assert_eq!(lost, 0, "a session reported created is not on the new master");
}

#[test]
fn a_bad_sentinel_configuration_fails_at_once_with_a_clear_error() {
    let nobody: [&str; 0] = [];
    let error = Deployment::sentinel(nobody, SERVICE, "x").expect_err("no sentinel");
    assert!(error.to_string().contains("sentinel"), "{error}");
    let error = Deployment::sentinel(["redis://127.0.0.1:1/"], "", "x").expect_err("no service");
    assert!(error.to_string().contains("monitored service"), "{error}");
    let error = Deployment::sentinel(["http://nope"], SERVICE, "x").expect_err("not redis");
    assert!(error.to_string().contains("redis backend configuration"), "{error}");
    let error = Deployment::sentinel(["redis://127.0.0.1:1/"], SERVICE, "a b").expect_err("name");
    assert!(error.to_string().contains("deployment name"), "{error}");
}
