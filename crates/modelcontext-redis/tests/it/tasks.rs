//! `RedisTaskStore` against the `TaskStore` contract, what it leaves in Redis, and two server
//! instances sharing it: a task one creates is answered by the other, and Redis away is an
//! error, never "unknown task".

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use modelcontext::client::ToolCall;
use modelcontext::server::{NoArgs, TaskRecord, TaskStore, TaskStoreError, TaskSupport};
use modelcontext::testing::contracts;
use modelcontext::types::{
    ContentBlock, DetailedTask, INTERNAL_ERROR, INVALID_PARAMS, Task, TaskStatus,
};
use modelcontext::{Client, Context, EraMode, McpServer, ToolDef};
use modelcontext_redis::RedisTaskStore;
use serde_json::json;
use tokio::sync::Notify;

use crate::support::RedisServer;

#[tokio::test]
async fn the_redis_task_store_meets_the_contract() {
    let Some(redis) = RedisServer::start().await else { return };
    let store = redis.deployment("tasks").task_store().expect("store");
    contracts::task_store(&store).await;
}

/// The key's time to live in Redis, in milliseconds.
async fn pttl(redis: &RedisServer, key: &str) -> i64 {
    let client = redis::Client::open(redis.url()).expect("url");
    let mut connection = client.get_multiplexed_async_connection().await.expect("connected");
    redis::cmd("PTTL").arg(key).query_async(&mut connection).await.expect("PTTL")
}

fn record(id: &str, ttl_ms: Option<u64>) -> TaskRecord {
    let stamp = "2026-07-28T00:00:00.000Z";
    let task = Task::new(id, TaskStatus::Working, stamp, stamp, ttl_ms);
    TaskRecord::new(DetailedTask::from(task), Some("alice".into()), SystemTime::now())
}

#[tokio::test]
async fn a_task_key_expires_with_the_task_and_ids_with_braces_are_refused() {
    let Some(redis) = RedisServer::start().await else { return };
    let store = redis.deployment("shop").task_store().expect("store");
    store.create(record("t1", Some(60_000))).await.expect("create");
    let left = pttl(&redis, "modelcontext:shop:task:{shop}:t1").await;
    assert!((55_000..=60_000).contains(&left), "the task's TTL: {left} ms");
    let untimed = store.clone().untimed_ttl(Duration::from_secs(600));
    untimed.create(record("t2", None)).await.expect("create");
    let left = pttl(&redis, "modelcontext:shop:task:{shop}:t2").await;
    assert!((595_000..=600_000).contains(&left), "the untimed TTL: {left} ms");

    assert!(store.create(record("t{1}", None)).await.is_err(), "braces are refused");
    assert_eq!(store.get("t{1}").await.expect("get"), None);
    let staging = redis.deployment("staging").task_store().expect("store");
    assert_eq!(staging.get("t1").await.expect("get"), None, "another deployment's task");
}

fn owned(id: &str, owner: Option<&str>, status: TaskStatus) -> TaskRecord {
    let mut record = record(id, Some(60_000));
    record.owner = owner.map(str::to_owned);
    record.task.task.status = status;
    record
}

#[tokio::test]
async fn each_principal_has_a_bounded_number_of_unfinished_tasks_across_instances() {
    let Some(redis) = RedisServer::start().await else { return };
    let store = |name| redis.deployment(name).task_store().expect("store");
    let (a, b) = (store("shop").max_running_per_principal(2), store("shop"));
    let b = b.max_running_per_principal(2);
    let working = TaskStatus::Working;
    a.create(owned("a1", Some("alice"), working)).await.expect("first");
    b.create(owned("a2", Some("alice"), working)).await.expect("second, on B");
    let refused = a.create(owned("a3", Some("alice"), working)).await;
    assert_eq!(refused, Err(TaskStoreError::TooManyRunning { limit: 2 }));
    assert_eq!(a.get("a3").await.expect("get"), None, "a refused task is not stored");
    b.create(owned("b1", Some("bob"), working)).await.expect("bob has his own places");
    a.create(owned("n1", None, working)).await.expect("and so do the unauthenticated");
    a.create(owned("done", Some("alice"), TaskStatus::Completed)).await.expect("finished: free");
    assert_eq!(a.create(owned("a1", Some("alice"), working)).await, Err(TaskStoreError::Exists));

    b.update(owned("a1", Some("alice"), TaskStatus::Completed)).await.expect("a1 ends on B");
    a.create(owned("a3", Some("alice"), working)).await.expect("its place is free");
    let refused = a.create(owned("a4", Some("alice"), working)).await;
    assert_eq!(refused, Err(TaskStoreError::TooManyRunning { limit: 2 }), "a duplicate took none");
}

/// The deployment's unfinished tasks are bounded too, across instances and principals; a
/// create refused there holds no place (its principal's is given back, in the same script),
/// finished tasks take none, and an end frees one.
#[tokio::test]
async fn the_deployment_has_a_bounded_number_of_unfinished_tasks() {
    let Some(redis) = RedisServer::start().await else { return };
    let store = || redis.deployment("shop").task_store().expect("store").max_running(2);
    let (a, b) = (store().max_running_per_principal(1), store().max_running_per_principal(1));
    let working = TaskStatus::Working;
    a.create(owned("t1", Some("alice"), working)).await.expect("first");
    b.create(owned("t2", Some("bob"), working)).await.expect("second, on B, another principal");
    let refused = a.create(owned("t3", None, working)).await;
    assert_eq!(refused, Err(TaskStoreError::Full { capacity: 2 }));
    assert_eq!(a.get("t3").await.expect("get"), None, "a refused task is not stored");
    a.create(owned("done", Some("carol"), TaskStatus::Completed)).await.expect("finished: free");

    b.update(owned("t1", Some("alice"), TaskStatus::Completed)).await.expect("t1 ends on B");
    // Had the refusal kept the unauthenticated's place, this would be refused (limit 1).
    a.create(owned("t3", None, working)).await.expect("t1's place is free");
    let refused = b.create(owned("t4", Some("dave"), working)).await;
    assert_eq!(refused, Err(TaskStoreError::Full { capacity: 2 }), "full again");
}

/// What the `held` tool waits for before it finishes.
struct Release(Arc<Notify>);

/// Told when the `held` tool's handler is dropped (finished or stopped).
struct Stopped(Arc<Notify>);

struct NotifyOnDrop(Arc<Notify>);

impl Drop for NotifyOnDrop {
    fn drop(&mut self) {
        self.0.notify_one();
    }
}

/// One instance: a task tool that waits for [`Release`], its records in `store`.
fn instance(store: impl TaskStore, release: Arc<Notify>) -> McpServer {
    watched_instance(store, release, Arc::default())
}

/// [`instance`], and `stopped` is told when the `held` handler is dropped.
fn watched_instance(
    store: impl TaskStore,
    release: Arc<Notify>,
    stopped: Arc<Notify>,
) -> McpServer {
    let held = ToolDef::new("held", |cx: Context, _: NoArgs| async move {
        let _dropped = cx.state::<Stopped>().map(|stopped| NotifyOnDrop(Arc::clone(&stopped.0)));
        cx.run_as_task().await;
        if let Some(Release(release)) = cx.state::<Release>() {
            release.notified().await;
        }
        "released"
    });
    McpServer::new("shop")
        .task_store(store)
        .task_poll_interval(Duration::from_millis(5))
        .state(Release(release))
        .state(Stopped(stopped))
        .tool(held.task(TaskSupport::Optional))
        .expect("registers")
}

async fn client(server: &McpServer) -> Client {
    Client::builder().era(EraMode::Modern).connect(server.in_memory()).await.expect("connects")
}

#[tokio::test]
async fn a_task_created_on_a_is_answered_by_b_and_redis_away_is_an_error_not_unknown() {
    let Some(mut redis) = RedisServer::start().await else { return };
    let deployment = redis.deployment("shop").command_timeout(Duration::from_millis(300));
    let release = Arc::new(Notify::new());
    let a = instance(deployment.task_store().expect("store"), Arc::clone(&release));
    let b_store = deployment.task_store().expect("store");
    let b = instance(b_store.clone(), Arc::default());
    let (on_a, on_b) = (client(&a).await, client(&b).await);

    let task = match on_a.call_tool_as_task("held", json!({})).await.expect("call on A") {
        ToolCall::Task(task) => task,
        other => panic!("expected a task, got {other:?}"),
    };
    let seen = on_b.get_task(&task.task_id).await.expect("B answers tasks/get");
    assert_eq!(seen.task.status, TaskStatus::Working);
    release.notify_one();
    let result = on_b.wait_for_task(&task).await.expect("B sees it complete");
    match result.content.first() {
        Some(ContentBlock::Text(text)) => assert_eq!(text.text, "released"),
        other => panic!("expected text, got {other:?}"),
    }
    let unknown = on_b.get_task("no-such-task").await.expect_err("unknown");
    assert_eq!(unknown.code(), Some(INVALID_PARAMS), "{unknown}");

    redis.kill().await;
    let error = on_b.get_task(&task.task_id).await.expect_err("Redis is down");
    assert_eq!(error.code(), Some(INTERNAL_ERROR), "an error, not 'unknown task': {error}");
    assert!(!error.to_string().contains("unknown"), "{error}");
    let stored = b_store.get(&task.task_id).await;
    assert!(matches!(stored, Err(TaskStoreError::Unavailable(_))), "{stored:?}");
    assert!(b_store.stats().failures >= 1, "the breaker counted the failures");
}

/// A task's status changes on A reach B's bus as they are, never as a gap: B's listen streams
/// that name the task hear them (before, a status change was a hole in A's sequence, and
/// every stream on B was re-notified of everything).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn task_status_on_a_reaches_bs_bus_as_itself_not_as_a_gap() {
    use futures_util::StreamExt;
    use modelcontext::{BusEvent, ChangeEvent, SubscriptionBus};
    let Some(redis) = RedisServer::start().await else { return };
    let deployment = redis.deployment("shop");
    let release = Arc::new(Notify::new());
    let bus_a = deployment.bus().await.expect("bus on A");
    let a = instance(deployment.task_store().expect("store"), Arc::clone(&release))
        .subscription_bus(bus_a.clone());
    let bus_b = deployment.bus().await.expect("bus on B");
    let mut heard_on_b = bus_b.subscribe();

    let task = match client(&a).await.call_tool_as_task("held", json!({})).await.expect("call") {
        ToolCall::Task(task) => task,
        other => panic!("expected a task, got {other:?}"),
    };
    release.notify_one();
    let deadline = Duration::from_secs(5);
    loop {
        let heard = tokio::time::timeout(deadline, heard_on_b.next()).await.expect("in time");
        match heard {
            Some(BusEvent::Change(ChangeEvent::TaskStatus { task_id, owner, task: detailed })) => {
                assert_eq!((task_id.as_str(), owner), (task.task_id.as_str(), None));
                let detailed: serde_json::Value = serde_json::from_str(&detailed).expect("json");
                if detailed["status"] == "completed" {
                    assert_eq!(detailed["result"]["content"][0]["text"], "released");
                    break;
                }
            }
            other => panic!("expected the task's status, heard {other:?}"),
        }
    }
    let (sa, sb) = (bus_a.stats(), bus_b.stats());
    assert_eq!((sa.lost, sb.gaps), (0, 0), "{sa:?} {sb:?}");
}

/// The ACL of `docs::deployment`: a user limited to its deployment's keys and the commands it
/// lists runs the task store.
#[tokio::test]
async fn a_user_limited_to_its_deployment_runs_the_task_store() {
    let Some(redis) = RedisServer::start().await else { return };
    let rules = "on >s3cret resetchannels &modelcontext:shop:* resetkeys ~modelcontext:shop:* \
                 -@all +publish +subscribe +ping +eval +exists +hset +hgetall +smembers +sadd \
                 +srem +pttl +pexpire +del +get +set +zadd +zrem +zcard +zremrangebyscore";
    redis.add_user("shop", rules).await;
    let url = redis.url().replace("redis://", "redis://shop:s3cret@");
    let deployment = modelcontext_redis::Deployment::new(&url, "shop").expect("deployment");
    contracts::task_store(&deployment.task_store().expect("store")).await;
    let elsewhere = modelcontext_redis::Deployment::new(&url, "other").expect("deployment");
    let refused = elsewhere.task_store().expect("store").get("t1").await;
    assert!(matches!(refused, Err(TaskStoreError::Unavailable(_))), "{refused:?}");
}

/// The statuses of `task_id` heard on `events` until `marker` (published on this instance,
/// after every status that matters to the test) comes by.
async fn statuses_until(
    events: &mut futures_util::stream::BoxStream<'static, modelcontext::BusEvent>,
    task_id: &str,
    marker: &modelcontext::ChangeEvent,
) -> Vec<String> {
    use futures_util::StreamExt;
    use modelcontext::{BusEvent, ChangeEvent};
    let mut statuses = Vec::new();
    loop {
        let heard = tokio::time::timeout(Duration::from_secs(5), events.next()).await;
        match heard.expect("in time").expect("the bus lives") {
            BusEvent::Change(event) if event == *marker => return statuses,
            BusEvent::Change(ChangeEvent::TaskStatus { task_id: id, task, .. })
                if id == task_id =>
            {
                let task: serde_json::Value = serde_json::from_str(&task).expect("json");
                statuses.push(task["status"].as_str().unwrap_or_default().to_owned());
            }
            _ => {}
        }
    }
}

/// Two instances on one Redis (store and bus): `tasks/cancel` on B stops the handler on A,
/// listeners on A hear B's "cancelled" and never a "completed"; `tasks/update` on B is an
/// error saying the task runs elsewhere.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_cancelled_on_b_stops_on_a_and_is_never_announced_completed() {
    use modelcontext::{ChangeEvent, SubscriptionBus};
    let Some(redis) = RedisServer::start().await else { return };
    let deployment = redis.deployment("shop");
    let (release, stopped) = (Arc::new(Notify::new()), Arc::new(Notify::new()));
    let bus_a = deployment.bus().await.expect("bus on A");
    let store = || deployment.task_store().expect("store");
    let a = watched_instance(store(), Arc::clone(&release), Arc::clone(&stopped))
        .subscription_bus(bus_a.clone());
    let b = instance(store(), Arc::default())
        .subscription_bus(deployment.bus().await.expect("bus on B"));
    let (on_a, on_b) = (client(&a).await, client(&b).await);
    let mut heard_on_a = bus_a.subscribe();

    let task = match on_a.call_tool_as_task("held", json!({})).await.expect("call on A") {
        ToolCall::Task(task) => task,
        other => panic!("expected a task, got {other:?}"),
    };
    let answers = serde_json::from_value(json!({})).expect("answers");
    let refused = on_b.update_task(&task.task_id, answers).await.expect_err("not accepted");
    assert!(refused.to_string().contains("runs on another instance"), "{refused}");

    let started = std::time::Instant::now();
    on_b.cancel_task(&task.task_id).await.expect("B acknowledges");
    tokio::time::timeout(Duration::from_secs(2), stopped.notified()).await.expect("A stops");
    let took = started.elapsed();
    eprintln!("tasks/cancel on B stopped the handler on A in {took:?}");
    release.notify_one();
    let marker = ChangeEvent::ResourceUpdated("marker://end".into());
    bus_a.publish(marker.clone());
    let statuses = statuses_until(&mut heard_on_a, &task.task_id, &marker).await;
    assert_eq!(statuses, ["cancelled"], "what A's listeners heard (A stopped in {took:?})");
    let seen = on_a.get_task(&task.task_id).await.expect("get on A");
    assert_eq!(seen.task.status, TaskStatus::Cancelled);
}

/// A store that says when it refused an update (the task had ended already).
struct Refusals {
    store: RedisTaskStore,
    refused: Arc<Notify>,
}

impl TaskStore for Refusals {
    fn create(
        &self,
        record: TaskRecord,
    ) -> modelcontext::server::StoreFuture<'_, Result<(), TaskStoreError>> {
        self.store.create(record)
    }

    fn get<'a>(
        &'a self,
        task_id: &'a str,
    ) -> modelcontext::server::StoreFuture<'a, Result<Option<TaskRecord>, TaskStoreError>> {
        self.store.get(task_id)
    }

    fn update(
        &self,
        record: TaskRecord,
    ) -> modelcontext::server::StoreFuture<'_, Result<bool, TaskStoreError>> {
        Box::pin(async move {
            let replaced = self.store.update(record).await;
            if replaced == Ok(false) {
                self.refused.notify_one();
            }
            replaced
        })
    }
}

/// A and B share the Redis store but not a bus: A never hears B's cancellation, so its work
/// completes; Redis refuses that end (the first end wins) and A announces nothing.
#[tokio::test]
async fn an_end_redis_refused_is_never_announced() {
    use modelcontext::{ChangeEvent, InMemoryBus, SubscriptionBus};
    let Some(redis) = RedisServer::start().await else { return };
    let deployment = redis.deployment("shop");
    let (release, refused) = (Arc::new(Notify::new()), Arc::new(Notify::new()));
    let store =
        Refusals { store: deployment.task_store().expect("store"), refused: Arc::clone(&refused) };
    let bus_a = InMemoryBus::default();
    let a = instance(store, Arc::clone(&release)).subscription_bus(bus_a.clone());
    let b = instance(deployment.task_store().expect("store"), Arc::default());
    let (on_a, on_b) = (client(&a).await, client(&b).await);
    let mut heard_on_a = bus_a.subscribe();

    let task = match on_a.call_tool_as_task("held", json!({})).await.expect("call on A") {
        ToolCall::Task(task) => task,
        other => panic!("expected a task, got {other:?}"),
    };
    on_b.cancel_task(&task.task_id).await.expect("B acknowledges");
    release.notify_one();
    tokio::time::timeout(Duration::from_secs(5), refused.notified()).await.expect("refused");
    // One thread: A's decision after the refusal was taken before this test runs on.
    let marker = ChangeEvent::ResourceUpdated("marker://end".into());
    bus_a.publish(marker.clone());
    let statuses = statuses_until(&mut heard_on_a, &task.task_id, &marker).await;
    assert!(statuses.is_empty(), "A announced {statuses:?} after Redis refused it");
    let seen = on_a.get_task(&task.task_id).await.expect("get on A");
    assert_eq!(seen.task.status, TaskStatus::Cancelled);
    assert!(seen.result.is_none(), "{seen:?}");
}
