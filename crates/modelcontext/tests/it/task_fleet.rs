//! Tasks across two instances sharing a task store (the in-memory one, shared): a task
//! cancelled on the instance that does not run it stops where it runs, and an end the store
//! refused (the task was cancelled elsewhere first) is never announced. The Redis crate runs
//! the same story on Redis.

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use futures_util::stream::BoxStream;
use modelcontext::client::ToolCall;
use modelcontext::server::{InMemoryTaskStore, NoArgs, StoreFuture, TaskRecord, TaskStore};
use modelcontext::server::{TaskStoreError, TaskSupport};
use modelcontext::types::{INTERNAL_ERROR, InputResponses, Task, TaskStatus};
use modelcontext::{
    BusEvent, ChangeEvent, Client, Context, EraMode, InMemoryBus, McpServer, SubscriptionBus,
    ToolDef,
};
use serde_json::json;
use tokio::sync::Notify;

/// How long an instance may take to hear of something another did.
const DEADLINE: Duration = Duration::from_secs(5);

/// One task store shared by the instances; says when it refused an update (a task that had
/// ended already).
#[derive(Clone, Default)]
struct Shared {
    store: Arc<InMemoryTaskStore>,
    refused: Arc<Notify>,
}

impl TaskStore for Shared {
    fn create(&self, record: TaskRecord) -> StoreFuture<'_, Result<(), TaskStoreError>> {
        self.store.create(record)
    }

    fn get<'a>(
        &'a self,
        task_id: &'a str,
    ) -> StoreFuture<'a, Result<Option<TaskRecord>, TaskStoreError>> {
        self.store.get(task_id)
    }

    fn update(&self, record: TaskRecord) -> StoreFuture<'_, Result<bool, TaskStoreError>> {
        Box::pin(async move {
            let replaced = self.store.update(record).await;
            if replaced == Ok(false) {
                self.refused.notify_one();
            }
            replaced
        })
    }
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

/// One instance: `held` becomes a task and waits for [`Release`], its records in `store`,
/// its changes on `bus`.
fn instance(
    store: Shared,
    bus: InMemoryBus,
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
    McpServer::new("fleet")
        .task_store(store)
        .subscription_bus(bus)
        .state(Release(release))
        .state(Stopped(stopped))
        .tool(held.task(TaskSupport::Optional))
        .expect("registers")
}

async fn client(server: &McpServer) -> Client {
    Client::builder().era(EraMode::Modern).connect(server.in_memory()).await.expect("connects")
}

async fn start_held(client: &Client) -> Task {
    match client.call_tool_as_task("held", json!({})).await.expect("call") {
        ToolCall::Task(task) => task,
        other => panic!("expected a task, got {other:?}"),
    }
}

/// The statuses of `task_id` heard on `events` until the marker `bus` publishes now (every
/// event published before the marker is heard before it).
async fn statuses_heard(
    events: &mut BoxStream<'static, BusEvent>,
    bus: &InMemoryBus,
    task_id: &str,
) -> Vec<String> {
    let marker = ChangeEvent::ResourceUpdated("marker://end".into());
    bus.publish(marker.clone());
    let mut statuses = Vec::new();
    loop {
        let heard = tokio::time::timeout(DEADLINE, events.next()).await.expect("in time");
        match heard.expect("the bus lives") {
            BusEvent::Change(event) if event == marker => return statuses,
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

/// A and B share the store, not the bus: B's cancellation is stored, A does not hear it, and
/// when A's work then completes, the store refuses the end and A announces nothing.
#[tokio::test]
async fn an_end_the_store_refused_is_never_announced() {
    let store = Shared::default();
    let (bus_a, release) = (InMemoryBus::default(), Arc::new(Notify::new()));
    let a = instance(store.clone(), bus_a.clone(), Arc::clone(&release), Arc::default());
    let b = instance(store.clone(), InMemoryBus::default(), Arc::default(), Arc::default());
    let (on_a, on_b) = (client(&a).await, client(&b).await);
    let mut heard_on_a = bus_a.subscribe();

    let task = start_held(&on_a).await;
    on_b.cancel_task(&task.task_id).await.expect("B acknowledges");
    release.notify_one();
    tokio::time::timeout(DEADLINE, store.refused.notified()).await.expect("A's end is refused");

    let statuses = statuses_heard(&mut heard_on_a, &bus_a, &task.task_id).await;
    assert!(statuses.is_empty(), "A announced {statuses:?} after the store refused it");
    for on in [&on_a, &on_b] {
        let seen = on.get_task(&task.task_id).await.expect("get");
        assert_eq!(seen.task.status, TaskStatus::Cancelled, "{seen:?}");
        assert!(seen.result.is_none(), "{seen:?}");
    }
}

/// A and B share the store and the bus: `tasks/cancel` on B stops the handler on A, every
/// listener hears "cancelled" (announced by B), and never "completed". `tasks/update` on B,
/// which cannot reach A's work, is an error saying so, not a silent acknowledgement.
#[tokio::test]
async fn a_task_cancelled_on_another_instance_stops_where_it_runs() {
    let (store, bus) = (Shared::default(), InMemoryBus::default());
    let (release, stopped) = (Arc::new(Notify::new()), Arc::new(Notify::new()));
    let a = instance(store.clone(), bus.clone(), Arc::clone(&release), Arc::clone(&stopped));
    let b = instance(store.clone(), bus.clone(), Arc::default(), Arc::default());
    let (on_a, on_b) = (client(&a).await, client(&b).await);
    let mut heard = bus.subscribe();

    let task = start_held(&on_a).await;
    let answers: InputResponses = serde_json::from_value(json!({})).expect("answers");
    let refused = on_b.update_task(&task.task_id, answers).await.expect_err("not accepted");
    assert_eq!(refused.code(), Some(INTERNAL_ERROR), "{refused}");
    assert!(refused.to_string().contains("runs on another instance"), "{refused}");

    on_b.cancel_task(&task.task_id).await.expect("B acknowledges");
    tokio::time::timeout(DEADLINE, stopped.notified()).await.expect("A's handler is stopped");
    release.notify_one();
    let statuses = statuses_heard(&mut heard, &bus, &task.task_id).await;
    assert_eq!(statuses, ["cancelled"], "what listeners heard");
    let seen = on_a.get_task(&task.task_id).await.expect("get on A");
    assert_eq!(seen.task.status, TaskStatus::Cancelled, "{seen:?}");
    on_a.cancel_task(&task.task_id).await.expect("cancelling again on A is acknowledged");
}

/// A cancellation the bus lost is caught up when the bus reports the gap: A does not share
/// B's bus (so never hears B's cancellation), then falls behind on its own (more than the
/// in-memory bus keeps, published without yielding, so A hears a gap); A reads its running
/// tasks' records again and stops the one that ended.
#[tokio::test]
async fn a_cancellation_hidden_by_a_gap_on_the_bus_still_stops_the_task() {
    let store = Shared::default();
    let (bus_a, stopped) = (InMemoryBus::default(), Arc::new(Notify::new()));
    let a = instance(store.clone(), bus_a.clone(), Arc::default(), Arc::clone(&stopped));
    let b = instance(store.clone(), InMemoryBus::default(), Arc::default(), Arc::default());
    let (on_a, on_b) = (client(&a).await, client(&b).await);

    let task = start_held(&on_a).await;
    on_b.cancel_task(&task.task_id).await.expect("B acknowledges");
    for _ in 0..1_000 {
        bus_a.publish(ChangeEvent::ToolsListChanged);
    }
    tokio::time::timeout(DEADLINE, stopped.notified()).await.expect("A's handler is stopped");
}

/// The `tasks/update` relay between two HTTP endpoints (the peer router is the HTTP server's).
#[cfg(feature = "http")]
mod relay {
    use super::*;
    use modelcontext::server::http::MemoryPeerRouter;

    #[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
    struct Name {
        name: String,
    }

    /// Instance `name` over HTTP: an `ask` tool that becomes a task and asks for a name, its
    /// records in `store`, its endpoint routed by `router`.
    async fn asking(
        name: &'static str,
        store: Arc<InMemoryTaskStore>,
        router: Arc<modelcontext::server::http::MemoryInstance>,
    ) -> std::net::SocketAddr {
        let ask = ToolDef::new("ask", move |cx: Context, _: NoArgs| async move {
            cx.run_as_task().await;
            match cx.elicit::<Name>("Your name?").await {
                Ok(modelcontext::Elicitation::Accepted(answer)) => {
                    format!("{name} heard {}", answer.name)
                }
                other => format!("{name} got {other:?}"),
            }
        });
        let server = McpServer::new("shop")
            .task_store(Shared { store, refused: Arc::default() })
            .task_poll_interval(Duration::from_millis(5))
            .tool(ask.task(TaskSupport::Optional))
            .expect("registers");
        let options = modelcontext::HttpOptions::default().peer_router(router);
        let endpoint = server.http_endpoint_with(options);
        let (addr, serve) = endpoint.bind("127.0.0.1:0").await.expect("bind");
        tokio::spawn(serve);
        addr
    }

    /// A modern client of the endpoint at `addr`.
    async fn http_client(addr: std::net::SocketAddr) -> Client {
        let transport =
            modelcontext::transport::http::HttpTransport::new(&format!("http://{addr}/mcp"))
                .expect("url");
        Client::builder()
            .era(EraMode::Modern)
            .on_elicit(|_| async {
                Ok(modelcontext::types::ElicitResult::accept(Default::default()))
            })
            .connect(transport)
            .await
            .expect("connects")
    }

    /// With a peer router (in memory here), a `tasks/update` on B for a task parked on A is
    /// relayed to A, acknowledged once A took the answer in, and the task completes with it.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_tasks_update_on_b_is_relayed_to_a_through_the_peer_router() {
        let (store, routers) = (Arc::new(InMemoryTaskStore::default()), MemoryPeerRouter::new());
        let a = asking("A", Arc::clone(&store), routers.instance("a")).await;
        let b = asking("B", store, routers.instance("b")).await;
        let (on_a, on_b) = (http_client(a).await, http_client(b).await);
        let task = match on_a.call_tool_as_task("ask", json!({})).await.expect("call on A") {
            ToolCall::Task(task) => task,
            other => panic!("expected a task, got {other:?}"),
        };
        let asked = tokio::time::timeout(DEADLINE, async {
            loop {
                let seen = on_b.get_task(&task.task_id).await.expect("B answers tasks/get");
                if seen.task.status == TaskStatus::InputRequired {
                    break seen;
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        })
        .await
        .expect("input_required in time");
        let key = asked.input_requests.expect("questions").into_keys().next().expect("one");
        let answers: InputResponses = serde_json::from_value(json!({
            key: {"action": "accept", "content": {"name": "Ada"}}
        }))
        .expect("answers");
        on_b.update_task(&task.task_id, answers).await.expect("relayed to A and acknowledged");
        let result = on_b.wait_for_task(&task).await.expect("completes");
        let text = serde_json::to_value(&result).expect("json")["content"][0]["text"].clone();
        assert_eq!(text, "A heard Ada");
    }
}
