//! A 2026-07-28 `tasks/update` that reaches an instance not running its task is relayed, over
//! the `RedisPeerRouter`, to the one that does: two instances A and B behind the round-robin
//! proxy, one task store and one router on Redis.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use modelcontext::client::ToolCall;
use modelcontext::server::{NoArgs, TaskSupport};
use modelcontext::transport::http::HttpTransport;
use modelcontext::types::{ContentBlock, ElicitResult, InputResponses, TaskStatus};
use modelcontext::{Client, Context, Elicitation, EraMode, HttpOptions, McpServer, ToolDef};
use modelcontext_redis::Deployment;
use serde_json::json;

use crate::support::RedisServer;

/// The most any one step may take.
const STEP: Duration = Duration::from_secs(5);

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct Name {
    name: String,
}

/// Instance `name`: an `ask` tool that becomes a task at once and asks for a name; its
/// records and its router on `deployment`.
async fn instance(deployment: &Deployment, name: &'static str) -> SocketAddr {
    instance_with(deployment, name, HttpOptions::default()).await
}

/// [`instance`], served with `options` and the deployment's router.
async fn instance_with(
    deployment: &Deployment,
    name: &'static str,
    options: HttpOptions,
) -> SocketAddr {
    let ask = ToolDef::new("ask", move |cx: Context, _: NoArgs| async move {
        cx.run_as_task().await;
        match cx.elicit::<Name>("Your name?").await {
            Ok(Elicitation::Accepted(answer)) => format!("{name} heard {}", answer.name),
            other => format!("{name} got {other:?}"),
        }
    });
    let server = McpServer::new("shop")
        .task_store(deployment.task_store().expect("store"))
        .task_poll_interval(Duration::from_millis(5))
        .tool(ask.task(TaskSupport::Optional))
        .expect("registers");
    let router = deployment.peer_router().expect("router");
    let options = options.peer_router(Arc::new(router));
    let (addr, serve) = server.http_endpoint_with(options).bind("127.0.0.1:0").await.expect("bind");
    tokio::spawn(serve);
    addr
}

/// A modern client through the proxy, pinned to `backend` (0 is A, 1 is B) when given; it
/// answers every elicitation with the name Ada.
async fn client(proxy: SocketAddr, backend: Option<usize>) -> Client {
    let mut transport = HttpTransport::new(&format!("http://{proxy}/mcp")).expect("url");
    if let Some(backend) = backend {
        transport = transport.header(crate::proxy::PIN, &backend.to_string()).expect("header");
    }
    Client::builder()
        .era(EraMode::Modern)
        .on_elicit(|_| async {
            let mut content = serde_json::Map::new();
            content.insert("name".into(), "Ada".into());
            Ok(ElicitResult::accept(content))
        })
        .connect(transport)
        .await
        .expect("connected through the proxy")
}

fn text_of(result: &modelcontext::types::CallToolResult) -> String {
    match result.content.first() {
        Some(ContentBlock::Text(text)) => text.text.clone(),
        other => format!("{other:?}"),
    }
}

/// A task parked in `input_required` on A is answered by a `tasks/update` that lands on B:
/// B relays it to A, acknowledges once A took the answer in, and the task completes on A.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_waiting_on_a_is_answered_by_a_tasks_update_that_lands_on_b() {
    let Some(redis) = RedisServer::start().await else { return };
    let deployment = redis.deployment("shop").command_timeout(Duration::from_millis(300));
    let (a, b) = (instance(&deployment, "A").await, instance(&deployment, "B").await);
    let proxy = crate::proxy::round_robin(vec![a, b]).await;
    let (on_a, on_b) = (client(proxy, Some(0)).await, client(proxy, Some(1)).await);

    let task = match on_a.call_tool_as_task("ask", json!({})).await.expect("call on A") {
        ToolCall::Task(task) => task,
        other => panic!("expected a task, got {other:?}"),
    };
    let started = Instant::now();
    let asked = loop {
        let seen = on_b.get_task(&task.task_id).await.expect("B answers tasks/get");
        if seen.task.status == TaskStatus::InputRequired {
            break seen;
        }
        assert!(started.elapsed() < STEP, "never input_required: {seen:?}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    };
    let questions = asked.input_requests.expect("the questions");
    let key = questions.keys().next().expect("one question").clone();
    let answers: InputResponses = serde_json::from_value(json!({
        key: {"action": "accept", "content": {"name": "Ada"}}
    }))
    .expect("answers");
    let sent = Instant::now();
    on_b.update_task(&task.task_id, answers).await.expect("B relays the answer to A");
    eprintln!("tasks/update on B acknowledged {:?} after it was sent", sent.elapsed());
    let result = on_b.wait_for_task(&task).await.expect("the task completes");
    assert_eq!(text_of(&result), "A heard Ada", "{result:?}");
}

/// Through the proxy without pinning, each poll and each `tasks/update` reaches A or B in
/// turn: every task completes with its answer, wherever its update landed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_answered_through_a_round_robin_proxy_all_complete() {
    let Some(redis) = RedisServer::start().await else { return };
    let deployment = redis.deployment("shop").command_timeout(Duration::from_millis(300));
    let (a, b) = (instance(&deployment, "A").await, instance(&deployment, "B").await);
    let proxy = crate::proxy::round_robin(vec![a, b]).await;
    let client = client(proxy, None).await;
    for _ in 0..6 {
        let task = match client.call_tool_as_task("ask", json!({})).await.expect("call") {
            ToolCall::Task(task) => task,
            other => panic!("expected a task, got {other:?}"),
        };
        let result = tokio::time::timeout(STEP, client.wait_for_task(&task)).await;
        let text = text_of(&result.expect("in time").expect("completes"));
        assert!(text.ends_with("heard Ada"), "{text}");
    }
}

/// The task's instance is gone (or never ran it): B's relay finds nobody, and the client is
/// told so, not acknowledged.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tasks_update_nobody_takes_up_is_an_error() {
    use modelcontext::server::{TaskRecord, TaskStore};
    use modelcontext::types::{DetailedTask, Task};
    use std::time::SystemTime;
    let Some(redis) = RedisServer::start().await else { return };
    let deployment = redis.deployment("shop").command_timeout(Duration::from_millis(300));
    let relay_timeout = Duration::from_millis(300);
    let options = HttpOptions::default().task_update_relay_timeout(relay_timeout);
    let b = instance_with(&deployment, "B", options).await;
    let proxy = crate::proxy::round_robin(vec![b]).await;
    let on_b = client(proxy, None).await;
    // A record of a task no instance runs (as if its instance died).
    let store = deployment.task_store().expect("store");
    let stamp = "2026-07-28T00:00:00.000Z";
    let task = Task::new("orphan", TaskStatus::InputRequired, stamp, stamp, Some(60_000));
    let orphan = TaskRecord::new(DetailedTask::from(task), None, SystemTime::now());
    store.create(orphan).await.expect("stored");
    let answers: InputResponses = serde_json::from_value(json!({})).expect("answers");
    let sent = Instant::now();
    let refused = on_b.update_task("orphan", answers).await.expect_err("nobody took it up");
    assert!(sent.elapsed() < STEP, "answered after the relay's timeout: {:?}", sent.elapsed());
    assert!(refused.to_string().contains("No instance"), "{refused}");
}
