//! A deployment on Redis Cluster (feature `cluster`): three masters of the test's own on free
//! loopback ports, their slots assigned and the nodes introduced by hand (no `redis-cli`
//! needed). The contract suites pass on the cluster, a deployment's sessions spread over the
//! nodes while its task keys share one, and buses subscribed on different nodes hear each
//! other, also after one's node is lost.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use modelcontext::server::http::{
    EventStore, SessionChange, SessionRecord, SessionStore, StreamId,
};
use modelcontext::server::{TaskRecord, TaskStore};
use modelcontext::testing::contracts;
use modelcontext::types::{DetailedTask, Task, TaskStatus};
use modelcontext::{BusEvent, ChangeEvent, SubscriptionBus};
use modelcontext_redis::{Deployment, RedisBus};
use redis::aio::MultiplexedConnection;

use crate::support::{Deadline, RedisServer, connect};

/// The slots of a cluster.
const SLOTS: u16 = 16384;

/// Three masters sharing the slots (nodes 0 to 2), and a replica of each (nodes 3 to 5) or
/// none.
struct Cluster {
    nodes: Vec<RedisServer>,
}

impl Cluster {
    async fn start() -> Option<Cluster> {
        Cluster::start_with(0).await
    }

    /// Three masters, and `replicas` replicas of each.
    async fn start_with(replicas: usize) -> Option<Cluster> {
        let flags = [
            "--cluster-enabled",
            "yes",
            "--cluster-config-file",
            "nodes.conf",
            "--cluster-node-timeout",
            "1000",
            // A lost master without a replica leaves its slots unserved; the other nodes
            // keep serving theirs (by default they would refuse every key).
            "--cluster-require-full-coverage",
            "no",
        ];
        let mut nodes = Vec::new();
        for _ in 0..3 * (1 + replicas) {
            nodes.push(RedisServer::start_with(&flags).await?);
        }
        let share = SLOTS / 3 + 1;
        for (n, node) in nodes.iter().take(3).enumerate() {
            let mut admin = connect(&node.url()).await;
            let first = share * n as u16;
            let slots: Vec<u16> = (first..(first + share).min(SLOTS)).collect();
            let () = cluster_command(&["ADDSLOTS"])
                .arg(slots)
                .query_async(&mut admin)
                .await
                .expect("ADDSLOTS");
            // Distinct epochs, as `redis-cli --cluster create` gives: no conflict to settle.
            let epoch = (n + 1).to_string();
            let () = cluster_command(&["SET-CONFIG-EPOCH", &epoch])
                .query_async(&mut admin)
                .await
                .expect("epoch");
        }
        let mut first = connect(&nodes[0].url()).await;
        for node in &nodes[1..] {
            let port = node.port().to_string();
            let () = cluster_command(&["MEET", "127.0.0.1", &port])
                .query_async(&mut first)
                .await
                .expect("MEET");
        }
        let cluster = Cluster { nodes };
        let all: Vec<usize> = (0..cluster.nodes.len()).collect();
        cluster.wait_until_ok(&all).await;
        for n in 3..cluster.nodes.len() {
            let master = cluster.node_id(n % 3).await;
            let mut admin = connect(&cluster.nodes[n].url()).await;
            let () = cluster_command(&["REPLICATE", &master])
                .query_async(&mut admin)
                .await
                .expect("REPLICATE");
        }
        for n in 3..cluster.nodes.len() {
            cluster.wait_until_in_sync(n).await;
        }
        Some(cluster)
    }

    /// Waits until replica `n` is in sync with its master.
    async fn wait_until_in_sync(&self, n: usize) {
        let deadline = Deadline::new("the replica is in sync", Duration::from_secs(20));
        let mut asking = connect(&self.nodes[n].url()).await;
        loop {
            let info: String =
                redis::cmd("INFO").arg("replication").query_async(&mut asking).await.expect("INFO");
            if info.contains("master_link_status:up") {
                return;
            }
            deadline.next().await;
        }
    }

    /// Waits until each node of `which` sees the whole cluster served (`cluster_state:ok`)
    /// and knows every node.
    async fn wait_until_ok(&self, which: &[usize]) {
        let deadline = Deadline::new("the cluster is ok", Duration::from_secs(20));
        for n in which {
            let mut asking = connect(&self.nodes[*n].url()).await;
            loop {
                let info: String =
                    cluster_command(&["INFO"]).query_async(&mut asking).await.expect("INFO");
                let known = format!("cluster_known_nodes:{}", self.nodes.len());
                if info.contains("cluster_state:ok") && info.contains(&known) {
                    break;
                }
                deadline.next().await;
            }
        }
    }

    /// Waits until node 0 has marked node `n` failed.
    async fn wait_until_failed(&self, n: usize) {
        let deadline = Deadline::new("the node is marked failed", Duration::from_secs(20));
        let port = format!("127.0.0.1:{}", self.nodes[n].port());
        let mut asking = connect(&self.nodes[0].url()).await;
        loop {
            let nodes: String =
                cluster_command(&["NODES"]).query_async(&mut asking).await.expect("NODES");
            let line = nodes.lines().find(|line| line.contains(&port)).unwrap_or_default();
            if line.contains("fail") && !line.contains("fail?") {
                return;
            }
            deadline.next().await;
        }
    }

    fn urls(&self) -> Vec<String> {
        self.nodes.iter().map(RedisServer::url).collect()
    }

    fn deployment(&self, name: &str) -> Deployment {
        Deployment::cluster(self.urls(), name).expect("a deployment")
    }

    /// How many keys matching `pattern` each node holds.
    async fn keys_per_node(&self, pattern: &str) -> Vec<usize> {
        let mut counts = Vec::new();
        for node in &self.nodes {
            let mut asking = connect(&node.url()).await;
            let keys: Vec<String> =
                redis::cmd("KEYS").arg(pattern).query_async(&mut asking).await.expect("KEYS");
            counts.push(keys.len());
        }
        counts
    }

    /// How many subscribers `channel` has on each node.
    async fn subscribers_per_node(&self, channel: &str) -> Vec<u64> {
        let mut counts = Vec::new();
        for node in &self.nodes {
            let mut asking = connect(&node.url()).await;
            let numsub: BTreeMap<String, u64> = redis::cmd("PUBSUB")
                .arg("NUMSUB")
                .arg(channel)
                .query_async(&mut asking)
                .await
                .expect("PUBSUB NUMSUB");
            counts.push(numsub.get(channel).copied().unwrap_or_default());
        }
        counts
    }
}

/// `CLUSTER words…`.
fn cluster_command(words: &[&str]) -> redis::Cmd {
    let mut command = redis::cmd("CLUSTER");
    command.arg(words);
    command
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_contract_suites_pass_on_a_three_node_cluster() {
    let Some(cluster) = Cluster::start().await else { return };
    contracts::session_store(&cluster.deployment("sessions").session_store().expect("store")).await;
    let events = (cluster.deployment("events"), cluster.deployment("events"));
    let events = (events.0.event_store().expect("store"), events.1.event_store().expect("store"));
    contracts::event_store(&events.0, &events.1).await;
    contracts::task_store(&cluster.deployment("tasks").task_store().expect("store")).await;
    let routers = cluster.deployment("routers");
    let (a, b) = (routers.peer_router().expect("router"), routers.peer_router().expect("router"));
    contracts::peer_router(&a, &b).await;
    let buses = cluster.deployment("bus");
    let a = buses.bus().await.expect("bus a");
    let b = buses.bus().await.expect("bus b");
    contracts::subscription_bus(&a, &b).await;
}

const IDLE: Duration = Duration::from_secs(600);

/// Sessions hash by their id, so a deployment's sessions spread over the nodes; its task keys
/// share the deployment's tag, so they sit on one node (one script admits a task).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_spread_over_the_nodes_and_a_deployments_task_keys_share_one() {
    let Some(cluster) = Cluster::start().await else { return };
    let deployment = cluster.deployment("spread");
    let store = deployment.session_store().expect("store");
    for n in 0..30 {
        let record = SessionRecord::new(format!("s{n}"), "2025-11-25", "{}");
        assert!(store.create(record.clone(), IDLE).await.expect("created"));
        store.update(&record.id, SessionChange::Subscribe("r".into())).await.expect("subscribed");
        assert!(store.load(&record.id).await.expect("loaded").is_some());
    }
    let sessions = cluster.keys_per_node("modelcontext:spread:session:*").await;
    assert_eq!(sessions.iter().sum::<usize>(), 60, "{sessions:?}");
    assert!(sessions.iter().all(|&count| count > 0), "on every node: {sessions:?}");
    // A session's two keys are on one node: the record and its subscriptions.
    for node in &cluster.nodes {
        let mut asking = connect(&node.url()).await;
        let keys: Vec<String> = redis::cmd("KEYS")
            .arg("modelcontext:spread:session:*")
            .query_async(&mut asking)
            .await
            .expect("KEYS");
        assert_eq!(keys.len() % 2, 0, "{keys:?}");
    }
    let tasks = deployment.task_store().expect("store");
    for n in 0..10 {
        tasks.create(task(&format!("t{n}"))).await.expect("created");
    }
    let task_keys = cluster.keys_per_node("modelcontext:spread:task*").await;
    assert_eq!(task_keys.iter().filter(|&&count| count > 0).count(), 1, "{task_keys:?}");
    for n in 0..30 {
        store.delete(&format!("s{n}")).await.expect("deleted");
    }
    assert_eq!(cluster.keys_per_node("modelcontext:spread:session:*").await, [0, 0, 0]);
}

/// Two buses of one deployment subscribe on different nodes, and hear each other; the node of
/// one is killed: it subscribes again on another, reports a gap, and hears the other again.
/// The session store keeps answering for the sessions on the nodes still up.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn buses_on_different_nodes_hear_each_other_and_one_moves_when_its_node_dies() {
    let Some(mut cluster) = Cluster::start().await else { return };
    let deployment = cluster.deployment("moving").command_timeout(Duration::from_millis(500));
    let (a, b) = (deployment.bus().await.expect("bus a"), deployment.bus().await.expect("bus b"));
    let channel = "modelcontext:moving:bus";
    let subscribed = cluster.subscribers_per_node(channel).await;
    assert_eq!(subscribed, [1, 1, 0], "one bus on each of the first two nodes");
    let mut heard = b.subscribe();
    a.publish(ChangeEvent::ToolsListChanged);
    let first = tokio::time::timeout(Duration::from_secs(5), heard.next()).await;
    assert_eq!(first.expect("in time"), Some(BusEvent::Change(ChangeEvent::ToolsListChanged)));

    let store = deployment.session_store().expect("store");
    let ids: Vec<String> = (0..20).map(|n| format!("m{n}")).collect();
    for id in &ids {
        assert!(
            store.create(SessionRecord::new(id, "2025-11-25", "{}"), IDLE).await.expect("made")
        );
    }
    // Bus b subscribed on node 1: kill it.
    let started = Instant::now();
    cluster.nodes[1].kill().await;
    hears_again(&a, &mut heard).await;
    let back = started.elapsed();
    let stats = b.stats();
    assert!(stats.reconnects >= 1 && stats.gaps >= 1, "{stats:?}");
    // Once the others marked node 1 failed (its slots, without a replica, stay away), the
    // sessions on nodes 0 and 2 still answer.
    cluster.wait_until_failed(1).await;
    let failed = started.elapsed();
    let on_node_1 = session_slots_on(&cluster, &ids).await;
    let mut answered = 0;
    for (id, lost) in ids.iter().zip(&on_node_1) {
        if !lost {
            assert!(store.load(id).await.expect("answered").is_some(), "{id}");
            answered += 1;
        }
    }
    assert!(answered > 0);
    eprintln!(
        "node killed: bus b heard bus a again after {back:?}; node marked failed after \
         {failed:?}; {answered} sessions on the other nodes answered"
    );
}

/// Publishes on `a` until `b` hears it (after a gap).
async fn hears_again(a: &RedisBus, heard: &mut futures_util::stream::BoxStream<'static, BusEvent>) {
    let deadline = Deadline::new("bus b hears bus a again", Duration::from_secs(15));
    loop {
        a.publish(ChangeEvent::PromptsListChanged);
        let wait = Duration::from_millis(100);
        while let Ok(event) = tokio::time::timeout(wait, heard.next()).await {
            if event == Some(BusEvent::Change(ChangeEvent::PromptsListChanged)) {
                return;
            }
        }
        deadline.next().await;
    }
}

/// For each session id, whether its slot is one node 1 was given (asked of node 0).
async fn session_slots_on(cluster: &Cluster, ids: &[String]) -> Vec<bool> {
    let mut asking: MultiplexedConnection = connect(&cluster.nodes[0].url()).await;
    let share = SLOTS / 3 + 1;
    let mut on_node_1 = Vec::new();
    for id in ids {
        let key = format!("modelcontext:moving:session:{{{id}}}");
        let slot: u16 =
            cluster_command(&["KEYSLOT", &key]).query_async(&mut asking).await.expect("KEYSLOT");
        on_node_1.push(slot / share == 1);
    }
    on_node_1
}

/// An unfinished task of alice's, living a minute.
fn task(id: &str) -> TaskRecord {
    let stamp = "2026-07-28T00:00:00.000Z";
    let task = Task::new(id, TaskStatus::Working, stamp, stamp, Some(60_000));
    TaskRecord::new(DetailedTask::from(task), Some("alice".into()), std::time::SystemTime::now())
}

/// A session's slot migrated to another node mid-run (`CLUSTER SETSLOT … MIGRATING` and
/// `IMPORTING`, `MIGRATE`, then `SETSLOT … NODE`), while a resumed SSE stream of the session
/// is followed: during the migration the store answers through `ASK`, after it through
/// `MOVED`, and the feed reads what is appended on the new node.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sessions_slot_migrated_mid_run_is_followed() {
    let Some(cluster) = Cluster::start().await else { return };
    let deployment = cluster.deployment("migrating");
    let store = deployment.session_store().expect("store");
    let events = deployment.event_store().expect("store");
    let record = SessionRecord::new("s1", "2025-11-25", "{}");
    assert!(store.create(record.clone(), IDLE).await.expect("created"));
    store.update("s1", SessionChange::Subscribe("r".into())).await.expect("subscribed");
    let stream = StreamId { instance: 1, number: 1 };
    events.append("s1", stream, &note(0)).stored().await.expect("stored");
    let mut feed = events.follow("s1", stream, "0").await.expect("follow").expect("a feed");
    let first = feed.next().await.expect("event 0").expect("read");
    assert_eq!(first.message.encode(), note(0).encode());

    let mut asking = connect(&cluster.nodes[0].url()).await;
    let slot: u16 =
        cluster_command(&["KEYSLOT", "{s1}"]).query_async(&mut asking).await.expect("slot");
    let from = usize::from(slot / (SLOTS / 3 + 1));
    let to = (from + 1) % 3;
    let started = Instant::now();
    let keys = cluster.migrate_keys(slot, from, to).await;
    assert_eq!(keys.len(), 4, "record, subscriptions, stream index, stream: {keys:?}");
    // Moved, but the slot still belongs to the old node: it answers `ASK`.
    let loaded = store.load("s1").await.expect("loaded through ASK");
    assert_eq!(loaded.map(|record| record.subscriptions.len()), Some(1));
    cluster.assign_slot(slot, to).await;
    let loaded = store.load("s1").await.expect("loaded through MOVED");
    assert_eq!(loaded.map(|record| record.subscriptions.len()), Some(1));
    events.append("s1", stream, &note(1)).stored().await.expect("stored on the new node");
    let next = tokio::time::timeout(Duration::from_secs(5), feed.next()).await;
    let next = next.expect("the feed reads on the new node").expect("event 1");
    assert_eq!(next.expect("read").message.encode(), note(1).encode());
    let mut on_new_node = connect(&cluster.nodes[to].url()).await;
    let there: bool = redis::cmd("EXISTS")
        .arg("modelcontext:migrating:session:{s1}")
        .query_async(&mut on_new_node)
        .await
        .expect("EXISTS");
    assert!(there, "the record is on the new node");
    eprintln!("slot migrated: the store and the feed followed within {:?}", started.elapsed());
}

fn note(n: u32) -> modelcontext::types::Message {
    let text = format!(r#"{{"jsonrpc":"2.0","method":"n","params":{{"n":{n}}}}}"#);
    modelcontext::types::Message::decode_str(&text).expect("a notification")
}

impl Cluster {
    async fn node_id(&self, n: usize) -> String {
        let mut asking = connect(&self.nodes[n].url()).await;
        cluster_command(&["MYID"]).query_async(&mut asking).await.expect("MYID")
    }

    /// Marks `slot` migrating from node `from` to node `to`, and moves its keys there; the
    /// slot still belongs to `from`. Returns the keys moved.
    async fn migrate_keys(&self, slot: u16, from: usize, to: usize) -> Vec<String> {
        let (from_id, to_id) = (self.node_id(from).await, self.node_id(to).await);
        let slot = slot.to_string();
        let mut source = connect(&self.nodes[from].url()).await;
        let mut target = connect(&self.nodes[to].url()).await;
        let importing = cluster_command(&["SETSLOT", &slot, "IMPORTING", &from_id]);
        let () = importing.query_async(&mut target).await.expect("IMPORTING");
        let migrating = cluster_command(&["SETSLOT", &slot, "MIGRATING", &to_id]);
        let () = migrating.query_async(&mut source).await.expect("MIGRATING");
        let keys: Vec<String> = cluster_command(&["GETKEYSINSLOT", &slot, "100"])
            .query_async(&mut source)
            .await
            .expect("GETKEYSINSLOT");
        let mut migrate = redis::cmd("MIGRATE");
        migrate.arg("127.0.0.1").arg(self.nodes[to].port()).arg("").arg(0).arg(5000);
        migrate.arg("KEYS").arg(&keys);
        let () = migrate.query_async(&mut source).await.expect("MIGRATE");
        keys
    }

    /// Gives `slot` to node `n`, telling every node.
    async fn assign_slot(&self, slot: u16, n: usize) {
        let id = self.node_id(n).await;
        let slot = slot.to_string();
        for node in &self.nodes {
            let mut admin = connect(&node.url()).await;
            let assign = cluster_command(&["SETSLOT", &slot, "NODE", &id]);
            let () = assign.query_async(&mut admin).await.expect("SETSLOT NODE");
        }
    }
}

/// The ACL of `docs::deployment` with the event store's `+xadd +xread` and the cluster's
/// `+cluster|slots +asking`, given on every node: the session, event and task stores run on
/// the cluster as that user (without `+cluster|slots` the first call fails with `NOPERM`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_user_limited_to_its_deployment_runs_the_stores_on_the_cluster() {
    let Some(cluster) = Cluster::start().await else { return };
    let rules = "on >s3cret resetchannels &modelcontext:shop:* resetkeys ~modelcontext:shop:* \
                 -@all +publish +subscribe +ping +eval +exists +hset +hgetall +smembers +sadd \
                 +srem +pttl +pexpire +del +get +set +zadd +zrem +zcard +zremrangebyscore \
                 +xadd +xread +cluster|slots +asking";
    // ACLs are per node.
    for node in &cluster.nodes {
        node.add_user("shop", rules).await;
    }
    let urls =
        cluster.nodes.iter().map(|node| format!("redis://shop:s3cret@127.0.0.1:{}/", node.port()));
    let deployment = Deployment::cluster(urls, "shop").expect("a deployment");
    contracts::session_store(&deployment.session_store().expect("store")).await;
    let events =
        (deployment.event_store().expect("store"), deployment.event_store().expect("store"));
    contracts::event_store(&events.0, &events.1).await;
    contracts::task_store(&deployment.task_store().expect("store")).await;
}

/// A master killed while its replica is in sync: the cluster promotes the replica, and the
/// session store finds the sessions of the lost master's slots there. The time until they load
/// again is printed (`--nocapture`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_store_follows_a_masters_failover_to_its_replica() {
    let Some(mut cluster) = Cluster::start_with(1).await else { return };
    let deployment = cluster.deployment("failover").command_timeout(Duration::from_millis(500));
    let store = deployment.session_store().expect("store");
    let ids: Vec<String> = (0..30).map(|n| format!("f{n}")).collect();
    for id in &ids {
        assert!(
            store.create(SessionRecord::new(id, "2025-11-25", "{}"), IDLE).await.expect("made")
        );
    }
    let share = SLOTS / 3 + 1;
    let mut asking = connect(&cluster.nodes[0].url()).await;
    let mut on_node_1 = Vec::new();
    for id in &ids {
        let key = format!("modelcontext:failover:session:{{{id}}}");
        let slot: u16 =
            cluster_command(&["KEYSLOT", &key]).query_async(&mut asking).await.expect("KEYSLOT");
        if slot / share == 1 {
            on_node_1.push((id.clone(), key));
        }
    }
    assert!(!on_node_1.is_empty());
    // Replicated before the kill: node 4 is node 1's replica.
    let mut replica = connect(&cluster.nodes[4].url()).await;
    let deadline = Deadline::new("the sessions reach the replica", Duration::from_secs(10));
    for (_, key) in &on_node_1 {
        loop {
            let mut exists = redis::pipe();
            exists.cmd("READONLY").ignore().cmd("EXISTS").arg(key);
            let (there,): (bool,) = exists.query_async(&mut replica).await.expect("EXISTS");
            if there {
                break;
            }
            deadline.next().await;
        }
    }
    let started = Instant::now();
    cluster.nodes[1].kill().await;
    let mut failed = 0;
    let deadline = Deadline::new("the store loads them again", Duration::from_secs(30));
    let mut first = None;
    for (id, _) in &on_node_1 {
        loop {
            match store.load(id).await {
                Ok(loaded) => {
                    assert!(loaded.is_some(), "a replicated session lost: {id}");
                    first.get_or_insert(started.elapsed());
                    break;
                }
                Err(_) => failed += 1,
            }
            deadline.next().await;
        }
    }
    let (first, all) = (first.unwrap_or_default(), started.elapsed());
    let made = SessionRecord::new("after", "2025-11-25", "{}");
    assert!(store.create(made, IDLE).await.expect("created after the failover"));
    eprintln!(
        "master killed: its sessions load again from the promoted replica after {first:?}, all \
         {} of them after {all:?} ({failed} calls failed meanwhile)",
        on_node_1.len()
    );
}

#[test]
fn a_bad_cluster_configuration_fails_at_once_with_a_clear_error() {
    let nobody: [&str; 0] = [];
    let error = Deployment::cluster(nobody, "x").expect_err("no node");
    assert!(error.to_string().contains("at least one node"), "{error}");
    let error = Deployment::cluster(["http://nope"], "x").expect_err("not redis");
    assert!(error.to_string().contains("cluster"), "{error}");
    let error = Deployment::cluster(["redis://127.0.0.1:1/"], "a{b}").expect_err("name");
    assert!(error.to_string().contains("deployment name"), "{error}");
}
