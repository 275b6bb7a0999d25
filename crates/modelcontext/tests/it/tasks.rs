//! The tasks extension (`io.modelcontextprotocol/tasks`): our client against our server in
//! memory for the lifecycle (complete, tool error, protocol error, cancel, input, a task that
//! outlives its client's connection), literal wire lines for the shapes (each checked against
//! the extension's schema, `testdata/ext-tasks/`), the store's bounds and who may see a task.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use modelcontext::client::ToolCall;
use modelcontext::server::{
    Elicitation, Extensions, InMemoryTaskStore, NoArgs, PrincipalId, StoreFuture, TaskRecord,
    TaskStore, TaskStoreError, TaskSupport,
};
use modelcontext::types::{
    DetailedTask, ElicitResult, INTERNAL_ERROR, INVALID_PARAMS, MISSING_REQUIRED_CLIENT_CAPABILITY,
    Task, TaskStatus,
};
use modelcontext::{
    Client, ContentBlock, Context, EraMode, McpError, McpServer, ToolDef, ToolError,
};
use serde_json::{Value, json};
use tokio::sync::Notify;

use crate::support::{TASKS_SCHEMA, Wire, assert_valid, modern_meta};

/// What the `held` tool waits for before it finishes.
struct Release(Arc<Notify>);

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[schemars(crate = "modelcontext::schemars")]
struct Confirm {
    ok: bool,
}

/// Tools for every way a task ends. `quick` becomes a task and finishes; `held` waits for
/// [`Release`]; `forever` never finishes; `ask` asks a question inside its task.
fn task_server(release: Arc<Notify>) -> McpServer {
    let quick = ToolDef::new("quick", |cx: Context, _: NoArgs| async move {
        cx.run_as_task().await;
        "done"
    });
    let held = ToolDef::new("held", |cx: Context, _: NoArgs| async move {
        if let Some(Release(release)) = cx.state::<Release>() {
            release.notified().await;
        }
        "released"
    });
    let forever = ToolDef::new("forever", |_: NoArgs| std::future::pending::<&str>());
    let tool_error = ToolDef::new("tool_error", |cx: Context, _: NoArgs| async move {
        cx.run_as_task().await;
        Err::<String, _>(ToolError::new("no such file"))
    });
    let crash = ToolDef::new("crash", |cx: Context, _: NoArgs| async move {
        cx.run_as_task().await;
        Err::<String, _>(McpError::internal("the disk is on fire"))
    });
    let ask = ToolDef::new("ask", |cx: Context, _: NoArgs| async move {
        cx.run_as_task().await;
        match cx.elicit::<Confirm>("Go ahead?").await? {
            Elicitation::Accepted(Confirm { ok: true }) => Ok::<_, McpError>("went ahead"),
            _ => Ok("stopped"),
        }
    });
    let only_task = ToolDef::new("only_task", |cx: Context, _: NoArgs| async move {
        cx.run_as_task().await;
        "ran as a task"
    });
    let plain = ToolDef::new("plain", |_: NoArgs| async { "plain" });
    let optional = [quick, held, forever, tool_error, crash, ask];
    let mut server = McpServer::new("tasks")
        .task_poll_interval(Duration::from_millis(5))
        .state(Release(release));
    for tool in optional {
        server = server.tool(tool.task(TaskSupport::Optional)).expect("registers");
    }
    server
        .tool(only_task.task(TaskSupport::Required))
        .and_then(|s| s.tool(plain))
        .expect("registers")
}

async fn client(server: &McpServer) -> Client {
    Client::builder()
        .era(EraMode::Modern)
        .on_elicit(|_| async {
            let answer = json!({"ok": true});
            Ok(ElicitResult::accept(answer.as_object().cloned().unwrap_or_default()))
        })
        .connect(checked(server))
        .await
        .expect("connects")
}

/// A connection to `server` that checks every message the client sends against the schemas
/// (the 2026-07-28 envelope and request, the extension's params for `tasks/*`) on its way.
fn checked(server: &McpServer) -> modelcontext::Connection {
    let (client_end, mut middle) = modelcontext::transport::memory_pair();
    let mut server_end = server.in_memory();
    tokio::spawn(async move {
        loop {
            tokio::select! {
                Some(Ok(message)) = middle.receiver.recv() => {
                    check_client_message(&message.encode());
                    if server_end.sender.send(message).await.is_err() { return; }
                }
                Some(Ok(message)) = server_end.receiver.recv() => {
                    if middle.sender.send(message).await.is_err() { return; }
                }
                else => return,
            }
        }
    });
    client_end
}

#[track_caller]
fn check_client_message(text: &str) {
    let value: Value = serde_json::from_str(text).expect("json");
    assert_valid("2026-07-28", "JSONRPCMessage", &value);
    let params = &value["params"];
    match value["method"].as_str() {
        Some("tools/call") => assert_valid("2026-07-28", "CallToolRequest", &value),
        Some("tasks/get") => assert_valid(TASKS_SCHEMA, "GetTaskRequestParams", params),
        Some("tasks/update") => assert_valid(TASKS_SCHEMA, "UpdateTaskRequestParams", params),
        Some("tasks/cancel") => assert_valid(TASKS_SCHEMA, "CancelTaskRequestParams", params),
        _ => {}
    }
    if value["method"].as_str().is_some_and(|m| m.starts_with("tasks/")) {
        let extensions =
            &params["_meta"]["io.modelcontextprotocol/clientCapabilities"]["extensions"];
        assert!(extensions.get("io.modelcontextprotocol/tasks").is_some(), "{value}");
    }
}

fn expect_task(call: ToolCall) -> Task {
    match call {
        ToolCall::Task(task) => task,
        other => panic!("expected a task, got {other:?}"),
    }
}

fn text(result: &modelcontext::CallToolResult) -> &str {
    match result.content.first() {
        Some(ContentBlock::Text(text)) => &text.text,
        other => panic!("expected text, got {other:?}"),
    }
}

#[tokio::test]
async fn a_task_completes_and_its_result_is_inlined() {
    let server = task_server(Arc::default());
    let client = client(&server).await;
    let task = expect_task(client.call_tool_as_task("quick", json!({})).await.expect("call"));
    assert_eq!(task.poll_interval_ms, Some(5));
    assert!(task.ttl_ms.is_some_and(|ttl| ttl > 0));
    let result = client.wait_for_task(&task).await.expect("completes");
    assert_eq!(text(&result), "done");
    let after = client.get_task(&task.task_id).await.expect("kept for its TTL");
    assert_eq!(after.task.status, TaskStatus::Completed);
}

#[tokio::test]
async fn a_tool_error_completes_and_a_protocol_error_fails() {
    let server = task_server(Arc::default());
    let client = client(&server).await;
    let task = expect_task(client.call_tool_as_task("tool_error", json!({})).await.expect("call"));
    let result = client.wait_for_task(&task).await.expect("a tool error is a result");
    assert_eq!(result.is_error, Some(true));
    let task = expect_task(client.call_tool_as_task("crash", json!({})).await.expect("call"));
    let error = client.wait_for_task(&task).await.expect_err("a protocol error fails the task");
    assert_eq!(error.as_mcp_error().map(|e| e.message.as_str()), Some("the disk is on fire"));
    let failed = client.get_task(&task.task_id).await.expect("get");
    assert_eq!(failed.task.status, TaskStatus::Failed);
    assert!(failed.result.is_none() && failed.error.is_some(), "{failed:?}");
}

#[tokio::test]
async fn a_cancelled_task_stays_cancelled() {
    let server = task_server(Arc::default());
    let client = client(&server).await;
    let task = expect_task(client.call_tool_as_task("forever", json!({})).await.expect("call"));
    client.cancel_task(&task.task_id).await.expect("acknowledged");
    let cancelled = client.get_task(&task.task_id).await.expect("get");
    assert_eq!(cancelled.task.status, TaskStatus::Cancelled);
    client.cancel_task(&task.task_id).await.expect("cancelling again is acknowledged");
    assert!(client.wait_for_task(&task).await.is_err(), "a cancelled task has no result");
}

#[tokio::test]
async fn a_task_asks_for_input_and_the_client_answers() {
    let server = task_server(Arc::default());
    let client = client(&server).await;
    let task = expect_task(client.call_tool_as_task("ask", json!({})).await.expect("call"));
    let waiting = wait_for_status(&client, &task, TaskStatus::InputRequired).await;
    let questions = waiting.input_requests.expect("the question is shown");
    assert_eq!(questions.len(), 1, "{questions:?}");
    let result = client.wait_for_task(&task).await.expect("completes once answered");
    assert_eq!(text(&result), "went ahead");
}

#[tokio::test]
async fn plain_call_tool_waits_on_a_task_the_server_insists_on() {
    let server = task_server(Arc::default());
    let client = client(&server).await;
    let result = client.call_tool("only_task", json!({})).await.expect("transparent");
    assert_eq!(text(&result), "ran as a task");
    let result = client.call_tool("quick", json!({})).await.expect("optional: a plain call");
    assert_eq!(text(&result), "done");
}

#[tokio::test]
async fn a_task_outlives_its_clients_connection() {
    let release = Arc::new(Notify::new());
    let server = task_server(Arc::clone(&release));
    let first = client(&server).await;
    let task = expect_task(first.call_tool_as_task("held", json!({})).await.expect("call"));
    drop(first);
    release.notify_one();
    let second = client(&server).await;
    let result = second.wait_for_task(&task).await.expect("fetched again");
    assert_eq!(text(&result), "released");
}

#[tokio::test]
async fn an_unknown_task_is_invalid_params_and_tasks_need_the_extension() {
    let server = task_server(Arc::default());
    let client = client(&server).await;
    let error = client.get_task("no-such-task").await.expect_err("unknown");
    assert_eq!(error.code(), Some(INVALID_PARAMS));
    assert!(error.to_string().contains("unknown or expired task 'no-such-task'"), "{error}");
    let mut wire = Wire::start(server, "2026-07-28");
    let meta = modern_meta("{}", "");
    let answer = wire
        .call(&format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{{"taskId":"x",{meta}}}}}"#
        ))
        .await;
    let answer: Value = serde_json::from_str(&answer).expect("json");
    assert_eq!(answer["error"]["code"], MISSING_REQUIRED_CLIENT_CAPABILITY.0, "{answer}");
    let required = &answer["error"]["data"]["requiredCapabilities"]["extensions"];
    assert!(required.get("io.modelcontextprotocol/tasks").is_some(), "{answer}");
}

/// A store that cannot answer, as a networked one while its backend is away.
struct Unreachable;

impl TaskStore for Unreachable {
    fn create(&self, _: TaskRecord) -> StoreFuture<'_, Result<(), TaskStoreError>> {
        Box::pin(async { Err(TaskStoreError::Unavailable("unplugged".into())) })
    }

    fn get<'a>(
        &'a self,
        _: &'a str,
    ) -> StoreFuture<'a, Result<Option<TaskRecord>, TaskStoreError>> {
        Box::pin(async { Err(TaskStoreError::Unavailable("unplugged".into())) })
    }

    fn update(&self, _: TaskRecord) -> StoreFuture<'_, Result<bool, TaskStoreError>> {
        Box::pin(async { Err(TaskStoreError::Unavailable("unplugged".into())) })
    }
}

#[tokio::test]
async fn a_store_that_cannot_answer_is_an_internal_error_never_an_unknown_task() {
    let server = task_server(Arc::default()).task_store(Unreachable);
    let client = client(&server).await;
    for (what, error) in [
        ("get", client.get_task("some-task").await.expect_err("no store")),
        ("call", client.call_tool_as_task("forever", json!({})).await.expect_err("no store")),
    ] {
        assert_eq!(error.code(), Some(INTERNAL_ERROR), "{what}: {error}");
        assert!(!error.to_string().contains("unknown"), "{what}: {error}");
        assert!(error.to_string().contains("unplugged"), "{what}: {error}");
    }
}

#[tokio::test]
async fn an_expired_task_is_forgotten() {
    let store = InMemoryTaskStore::new(10, 10);
    let an_hour_ago = SystemTime::now() - Duration::from_secs(3600);
    let record = record("old", Some("alice"), TaskStatus::Completed, an_hour_ago, Some(60_000));
    store.create(record).await.expect("stored");
    assert!(store.get("old").await.expect("get").is_none(), "past its TTL");
    let server = McpServer::new("ttl")
        .task_store(store)
        .tool(ToolDef::new("t", |_: NoArgs| async { "" }).task(TaskSupport::Optional))
        .expect("registers");
    let error = client(&server).await.get_task("old").await.expect_err("expired");
    assert_eq!(error.code(), Some(INVALID_PARAMS));
}

#[tokio::test]
async fn the_store_evicts_the_oldest_finished_task_and_bounds_running_ones() {
    let store = InMemoryTaskStore::new(2, 1);
    let now = SystemTime::now();
    let earlier = now - Duration::from_secs(10);
    store
        .create(record("a", Some("alice"), TaskStatus::Completed, earlier, None))
        .await
        .expect("stored");
    store.create(record("b", Some("bob"), TaskStatus::Working, now, None)).await.expect("stored");
    let refused = store.create(record("b2", Some("bob"), TaskStatus::Working, now, None)).await;
    assert_eq!(refused, Err(TaskStoreError::TooManyRunning { limit: 1 }));
    store.create(record("c", Some("carol"), TaskStatus::Working, now, None)).await.expect("stored");
    assert!(store.get("a").await.expect("get").is_none(), "the oldest finished task made room");
    assert!(
        store.get("b").await.expect("get").is_some()
            && store.get("c").await.expect("get").is_some()
    );
    let full = store.create(record("d", Some("dan"), TaskStatus::Working, now, None)).await;
    assert_eq!(full, Err(TaskStoreError::Full { capacity: 2 }));
}

#[tokio::test]
async fn a_principal_over_its_running_limit_gets_a_clear_error() {
    let server = task_server(Arc::default()).task_store(InMemoryTaskStore::new(100, 1));
    let client = client(&server).await;
    expect_task(client.call_tool_as_task("forever", json!({})).await.expect("first"));
    let error = client.call_tool_as_task("forever", json!({})).await.expect_err("second");
    assert!(error.to_string().contains("too many unfinished tasks"), "{error}");
}

#[tokio::test]
async fn a_principal_cannot_read_or_cancel_anothers_task() {
    let server = task_server(Arc::default());
    let mut alice = as_principal(&server, "alice");
    let mut bob = as_principal(&server, "bob");
    let created = alice.call(&call_line(1, "forever")).await;
    let task_id = task_id_of(&created);
    for method in ["tasks/get", "tasks/cancel"] {
        let answer = bob.call(&task_line(2, method, &task_id, "")).await;
        assert!(answer.contains(r#""code":-32602"#), "{method}: {answer}");
        assert!(!answer.contains("alice"), "nothing about the owner leaks: {answer}");
    }
    let mine = alice.call(&task_line(3, "tasks/get", &task_id, "")).await;
    assert!(mine.contains(r#""status":"working""#), "{mine}");
}

/// Every task message on the wire, each validated against the extension's schema by
/// [`Wire`]: creation, polling in each status, update and cancel acknowledgements.
#[tokio::test]
async fn every_task_message_matches_the_extensions_schema() {
    let server = task_server(Arc::default());
    let mut wire = as_principal(&server, "alice");
    let created = wire.call(&call_line(1, "ask")).await;
    let task_id = task_id_of(&created);
    let waiting = poll_until(&mut wire, &task_id, "input_required").await;
    let key = waiting["result"]["inputRequests"]
        .as_object()
        .and_then(|questions| questions.keys().next().cloned())
        .expect("one question");
    let answers =
        format!(r#","inputResponses":{{"{key}":{{"action":"accept","content":{{"ok":true}}}}}}"#);
    let ack = wire.call(&task_line(3, "tasks/update", &task_id, &answers)).await;
    assert!(ack.contains(r#""resultType":"complete""#), "{ack}");
    let done = poll_until(&mut wire, &task_id, "completed").await;
    assert_eq!(done["result"]["result"]["content"][0]["text"], "went ahead");
    for (id, tool) in [(4, "crash"), (5, "forever")] {
        let created = wire.call(&call_line(id, tool)).await;
        let task_id = task_id_of(&created);
        if tool == "forever" {
            wire.call(&task_line(6, "tasks/cancel", &task_id, "")).await;
            poll_until(&mut wire, &task_id, "cancelled").await;
        } else {
            poll_until(&mut wire, &task_id, "failed").await;
        }
    }
    let direct = json!({"taskId": "t", "status": "working", "createdAt": "2026-07-28T00:00:00Z",
        "lastUpdatedAt": "2026-07-28T00:00:00Z", "ttlMs": null, "resultType": "complete"});
    assert_valid(TASKS_SCHEMA, "GetTaskResult", &direct);
}

/// Over Streamable HTTP our client sends `Mcp-Name: <taskId>` on `tasks/*` (the server
/// checks it against the body, -32020 otherwise), and a task's input round trips.
#[cfg(feature = "http")]
#[tokio::test]
async fn tasks_work_over_http_with_the_task_id_as_mcp_name() {
    let server = task_server(Arc::default());
    let endpoint = server.http_endpoint();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move { endpoint.serve(listener).await });
    let transport = modelcontext::HttpTransport::new(&format!("http://{addr}/mcp")).expect("url");
    let client = Client::builder()
        .era(EraMode::Modern)
        .on_elicit(|_| async {
            let answer = json!({"ok": true});
            Ok(ElicitResult::accept(answer.as_object().cloned().unwrap_or_default()))
        })
        .connect(transport)
        .await
        .expect("connects");
    let task = expect_task(client.call_tool_as_task("ask", json!({})).await.expect("call"));
    let result = client.wait_for_task(&task).await.expect("completes");
    assert_eq!(text(&result), "went ahead");
    let result = client.call_tool("only_task", json!({})).await.expect("transparent");
    assert_eq!(text(&result), "ran as a task");
    let task = expect_task(client.call_tool_as_task("forever", json!({})).await.expect("call"));
    client.cancel_task(&task.task_id).await.expect("cancelled");
    let cancelled = client.get_task(&task.task_id).await.expect("get");
    assert_eq!(cancelled.task.status, TaskStatus::Cancelled);
}

/// `notifications/tasks` on a listen stream that names the task: its owner hears each change
/// (the full `DetailedTask`, tagged with the stream), another principal naming it hears none.
#[tokio::test]
async fn a_listen_stream_hears_its_own_tasks_status() {
    let server = task_server(Arc::default());
    let mut alice = as_principal(&server, "alice");
    let mut bob = as_principal(&server, "bob");
    let task_id = task_id_of(&alice.call(&call_line(1, "ask")).await);
    let waiting = poll_until(&mut alice, &task_id, "input_required").await;
    let key = waiting["result"]["inputRequests"]
        .as_object()
        .and_then(|questions| questions.keys().next().cloned())
        .expect("one question");
    for wire in [&mut alice, &mut bob] {
        let ack = wire.call(&listen_line(&task_id)).await;
        assert!(ack.contains(&format!(r#""taskIds":["{task_id}"]"#)), "{ack}");
    }
    let answers =
        format!(r#","inputResponses":{{"{key}":{{"action":"accept","content":{{"ok":true}}}}}}"#);
    alice.send(&task_line(3, "tasks/update", &task_id, &answers)).await;
    let mut statuses = Vec::new();
    while statuses.last().map(String::as_str) != Some("completed") {
        let line: Value = serde_json::from_str(&alice.recv().await).expect("json");
        if line["method"] == "notifications/tasks" {
            assert_eq!(line["params"]["taskId"], task_id.as_str());
            assert_eq!(line["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], "listen");
            statuses.push(line["params"]["status"].as_str().unwrap_or_default().to_owned());
        }
    }
    assert_eq!(statuses, ["working", "completed"]);
    bob.assert_alive().await;
}

#[tokio::test]
async fn task_notifications_need_the_extension() {
    let mut wire = Wire::start(task_server(Arc::default()), "2026-07-28");
    let meta = modern_meta("{}", "");
    let listen = format!(
        r#"{{"jsonrpc":"2.0","id":"listen","method":"subscriptions/listen","params":{{"notifications":{{"taskIds":["t"]}},{meta}}}}}"#
    );
    let answer = wire.call(&listen).await;
    assert!(answer.contains(r#""code":-32021"#), "{answer}");
}

fn listen_line(task_id: &str) -> String {
    let meta = modern_meta(TASKS_CAPS, "");
    format!(
        r#"{{"jsonrpc":"2.0","id":"listen","method":"subscriptions/listen","params":{{"notifications":{{"taskIds":["{task_id}"]}},{meta}}}}}"#
    )
}

const TASKS_CAPS: &str =
    r#"{"elicitation":{"form":{}},"extensions":{"io.modelcontextprotocol/tasks":{}}}"#;

fn call_line(id: u32, tool: &str) -> String {
    let meta = modern_meta(TASKS_CAPS, "");
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{{}},{meta}}}}}"#
    )
}

fn task_line(id: u32, method: &str, task_id: &str, extra: &str) -> String {
    let meta = modern_meta(TASKS_CAPS, "");
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{{"taskId":"{task_id}"{extra},{meta}}}}}"#
    )
}

fn task_id_of(line: &str) -> String {
    let value: Value = serde_json::from_str(line).expect("json");
    assert_eq!(value["result"]["resultType"], "task", "{value}");
    value["result"]["taskId"].as_str().expect("a task id").to_owned()
}

/// Polls `tasks/get` on the wire until the task reports `status` (bounded).
async fn poll_until(wire: &mut Wire, task_id: &str, status: &str) -> Value {
    for attempt in 0..500 {
        let line = wire.call(&task_line(100 + attempt, "tasks/get", task_id, "")).await;
        let value: Value = serde_json::from_str(&line).expect("json");
        if value["result"]["status"] == status {
            return value;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    panic!("task {task_id} never reached {status}");
}

/// Polls the client's `get_task` until the task reports `status` (bounded).
async fn wait_for_status(client: &Client, task: &Task, status: TaskStatus) -> DetailedTask {
    for _ in 0..500 {
        let detailed = client.get_task(&task.task_id).await.expect("get");
        if detailed.task.status == status {
            return detailed;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    panic!("task {} never reached {status:?}", task.task_id);
}

/// A wire to `server` whose connection is authenticated as `name`.
fn as_principal(server: &McpServer, name: &str) -> Wire {
    let server = server.clone();
    let mut extensions = Extensions::new();
    extensions.insert(PrincipalId(name.to_owned()));
    Wire::start_serving(move |stdio| async move { server.serve_with(stdio, extensions).await })
}

fn record(
    id: &str,
    owner: Option<&str>,
    status: TaskStatus,
    created: SystemTime,
    ttl_ms: Option<u64>,
) -> TaskRecord {
    let stamp = "2026-07-28T00:00:00.000Z";
    let task = Task::new(id, status, stamp, stamp, ttl_ms);
    TaskRecord::new(DetailedTask::from(task), owner.map(str::to_owned), created)
}

/// `#[tool(task = "required")]`: the server declares the extension, and a modern client that
/// does not is refused with -32021 naming it.
#[cfg(feature = "macros")]
#[tokio::test]
async fn the_tool_macro_declares_task_support() {
    /// A job that only runs as a task.
    #[modelcontext::tool(task = "required")]
    async fn nightly_job() -> &'static str {
        "done"
    }
    let server = McpServer::new("jobs").tool(nightly_job::tool()).expect("registers");
    let extensions = server.capabilities().extensions.expect("declared");
    assert!(extensions.contains_key("io.modelcontextprotocol/tasks"));
    let mut wire = Wire::start(server, "2026-07-28");
    let meta = modern_meta("{}", "");
    let call = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"nightly_job","arguments":{{}},{meta}}}}}"#
    );
    let answer = wire.call(&call).await;
    assert!(answer.contains(r#""code":-32021"#), "{answer}");
    assert!(answer.contains(r#""extensions":{"io.modelcontextprotocol/tasks":{}}"#), "{answer}");
}
