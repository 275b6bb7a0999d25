//! JSON-RPC batches on the line transports (in memory and stdio) for sessions that negotiated
//! 2025-03-26, the one revision whose schema has them; refused as before everywhere else. (The
//! HTTP server's batches are in `http_modes`.)

use std::sync::Arc;
use std::time::Duration;

use modelcontext::server::NoArgs;
use modelcontext::{Client, Context, McpServer, Stdio, ToolDef};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::Notify;

use crate::stdio::bookshop_binary;
use crate::support::{Wire, assert_valid, bookshop};

const BATCH_REVISION: &str = "2025-03-26";

fn initialize(version: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{version}","capabilities":{{}},"clientInfo":{{"name":"wire","version":"1"}}}}}}"#
    )
}

/// A wire to `server` that negotiated `version`.
async fn wire_at(server: McpServer, version: &'static str) -> Wire {
    let mut wire = Wire::start(server, version);
    let answer = wire.call(&initialize(version)).await;
    assert!(answer.contains(&format!(r#""protocolVersion":"{version}""#)), "{answer}");
    wire.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).await;
    wire
}

fn call(id: u32, tool: &str, arguments: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{arguments}}}}}"#
    )
}

/// The elements of a batch answer, as their wire JSON (serde_json keeps the members' order)
/// ordered by id (the order of a batch's answers is free), after checking the array against
/// the 2025-03-26 schema.
fn batch_answer(line: &str) -> Vec<String> {
    let value: Value = serde_json::from_str(line).expect("JSON");
    assert_valid(BATCH_REVISION, "JSONRPCBatchResponse", &value);
    let mut items = value.as_array().expect("an array").clone();
    items.sort_by_key(|item| item["id"].to_string());
    items.iter().map(Value::to_string).collect()
}

fn author_answer(id: u32, author: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"{author}"}}]}}}}"#
    )
}

/// The batch of two calls and a notification, and the one array that answers it.
const TWO_CALLS_AND_A_NOTIFICATION: &str = concat!(
    r#"[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_author","arguments":{"title":"Dune"}}},"#,
    r#"{"jsonrpc":"2.0","method":"notifications/roots/list_changed"},"#,
    r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_author","arguments":{"title":"Neuromancer"}}}]"#
);

#[tokio::test]
async fn a_batch_of_calls_and_a_notification_is_answered_with_one_array() {
    let mut wire = wire_at(bookshop(), BATCH_REVISION).await;
    let answer = wire.call(TWO_CALLS_AND_A_NOTIFICATION).await;
    assert_eq!(
        batch_answer(&answer),
        [author_answer(1, "Frank Herbert"), author_answer(2, "William Gibson")]
    );
    for item in serde_json::from_str::<Vec<Value>>(&answer).expect("array") {
        assert_valid(BATCH_REVISION, "CallToolResult", &item["result"]);
    }
    wire.assert_alive().await;
}

#[tokio::test]
async fn the_requests_of_a_batch_run_concurrently_and_what_they_send_goes_alone() {
    // Each call waits for the other: answered only if both run at once.
    let barrier = Arc::new(tokio::sync::Barrier::new(2));
    let meet = ToolDef::new("meet", move |cx: Context, _: NoArgs| {
        let barrier = barrier.clone();
        async move {
            cx.report_progress(1.0, None, Some("waiting")).await;
            barrier.wait().await;
            "met"
        }
    });
    let server = McpServer::new("meet").tool(meet).expect("registers");
    let mut wire = wire_at(server, BATCH_REVISION).await;
    let with_progress = |id: u32| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"meet","arguments":{{}},"_meta":{{"progressToken":{id}}}}}}}"#
        )
    };
    wire.send(&format!("[{},{}]", with_progress(1), with_progress(2))).await;
    // The progress of each call comes on a line of its own, before the batch's answer.
    let mut progress = Vec::new();
    for _ in 0..2 {
        let line = wire.recv().await;
        let value: Value = serde_json::from_str(&line).expect("JSON");
        assert_eq!(value["method"], "notifications/progress", "{line}");
        progress.push(value["params"]["progressToken"].clone());
    }
    progress.sort_by_key(Value::to_string);
    assert_eq!(progress, [json!(1), json!(2)]);
    let met = |id: u32| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"met"}}]}}}}"#
        )
    };
    assert_eq!(batch_answer(&wire.recv().await), [met(1), met(2)]);
    wire.assert_alive().await;
}

#[tokio::test]
async fn a_batch_meets_the_in_flight_limit_and_leaves_out_what_was_cancelled() {
    let (started, release) = (Arc::new(Notify::new()), Arc::new(Notify::new()));
    let (on_start, released) = (started.clone(), release.clone());
    let hold = ToolDef::new("hold", move |_: NoArgs| {
        let (started, release) = (on_start.clone(), released.clone());
        async move {
            started.notify_one();
            release.notified().await;
            "released"
        }
    });
    let quick = ToolDef::new("quick", |_: NoArgs| async { "quick" });
    let server = McpServer::new("one")
        .tool(hold)
        .and_then(|s| s.tool(quick))
        .expect("registers")
        .max_in_flight(1);
    let mut wire = wire_at(server, BATCH_REVISION).await;
    // `hold` takes the one place, so the batch's `quick` is refused as busy, inside the array.
    wire.send(&format!("[{},{}]", call(1, "hold", "{}"), call(2, "quick", "{}"))).await;
    // One thread, and the loop takes a whole batch without yielding: once `hold` has started,
    // `quick` was refused.
    started.notified().await;
    release.notify_one();
    assert_eq!(
        batch_answer(&wire.recv().await),
        [
            r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"released"}]}}"#,
            r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"Server busy: 1 requests already in flight; retry later"}}"#,
        ]
    );
    // A request of a batch that is cancelled gets no answer: the array holds the others.
    wire.send(&format!("[{},{}]", call(3, "hold", "{}"), call(4, "quick", "{}"))).await;
    wire.send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}"#)
        .await;
    assert_eq!(
        batch_answer(&wire.recv().await),
        [
            r#"{"jsonrpc":"2.0","id":4,"error":{"code":-32603,"message":"Server busy: 1 requests already in flight; retry later"}}"#
        ]
    );
    wire.assert_alive().await;
}

#[tokio::test]
async fn a_batch_right_before_end_of_input_is_still_answered() {
    let mut wire = wire_at(bookshop(), BATCH_REVISION).await;
    wire.send(TWO_CALLS_AND_A_NOTIFICATION).await;
    let lines = wire.finish().await;
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(
        batch_answer(&lines[0]),
        [author_answer(1, "Frank Herbert"), author_answer(2, "William Gibson")]
    );
}

#[tokio::test]
async fn a_batch_of_notifications_only_gets_no_answer() {
    let mut wire = wire_at(bookshop(), BATCH_REVISION).await;
    wire.send(r#"[{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}]"#).await;
    // The next line is the answer to the ping: the batch had none.
    wire.assert_alive().await;
}

#[tokio::test]
async fn an_empty_batch_is_one_invalid_request() {
    let mut wire = wire_at(bookshop(), BATCH_REVISION).await;
    wire.send("[]").await;
    assert_eq!(
        wire.recv_unchecked().await,
        r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request: an empty batch"}}"#
    );
    wire.assert_alive().await;
}

#[tokio::test]
async fn initialize_and_malformed_elements_get_their_own_errors_in_the_array() {
    let mut wire = wire_at(bookshop(), BATCH_REVISION).await;
    let batch = format!(
        r#"[{},{{"jsonrpc":"1.0","id":8,"method":"ping"}},{}]"#,
        initialize(BATCH_REVISION).replace(r#""id":0"#, r#""id":7"#),
        call(9, "get_author", r#"{"title":"Dune"}"#)
    );
    assert_eq!(
        batch_answer(&wire.call(&batch).await),
        [
            r#"{"jsonrpc":"2.0","id":7,"error":{"code":-32600,"message":"initialize must not be part of a batch"}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":8,"error":{"code":-32600,"message":"Invalid request: \"jsonrpc\" must be \"2.0\""}}"#.to_owned(),
            author_answer(9, "Frank Herbert"),
        ]
    );
    // An element without a readable id is answered inside the array too, without an id.
    wire.send(r#"[42,{"jsonrpc":"2.0","id":3,"method":"ping"}]"#).await;
    assert_eq!(
        wire.recv_unchecked().await,
        r#"[{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request: a message must be a JSON object"}},{"jsonrpc":"2.0","id":3,"result":{}}]"#
    );
    wire.assert_alive().await;
}

const REFUSED: &str = r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request: batches (JSON arrays) are not supported since 2025-06-18: send one message at a time"}}"#;

#[tokio::test]
async fn other_revisions_and_uninitialized_connections_refuse_batches_as_before() {
    let batch = format!("[{}]", call(1, "get_author", r#"{"title":"Dune"}"#));
    let mut wire = wire_at(bookshop(), "2025-11-25").await;
    wire.send(&batch).await;
    assert_eq!(wire.recv_unchecked().await, REFUSED);
    wire.assert_alive().await;

    let mut before_initialize = Wire::start(bookshop(), BATCH_REVISION);
    before_initialize.send(&batch).await;
    assert_eq!(before_initialize.recv_unchecked().await, REFUSED);
}

/// The bookshop example as a child process, spoken to in raw lines.
struct Child {
    process: tokio::process::Child,
    stdin: tokio::process::ChildStdin,
    lines: tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
}

impl Child {
    fn spawn() -> Child {
        let mut process = tokio::process::Command::new(bookshop_binary())
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("the bookshop example is built");
        let stdin = process.stdin.take().expect("stdin");
        let lines = BufReader::new(process.stdout.take().expect("stdout")).lines();
        Child { process, stdin, lines }
    }

    async fn call(&mut self, line: &str) -> String {
        self.stdin.write_all(format!("{line}\n").as_bytes()).await.expect("write");
        tokio::time::timeout(Duration::from_secs(10), self.lines.next_line())
            .await
            .expect("answered within 10 s")
            .expect("read")
            .expect("the child kept its stdout open")
    }

    async fn initialize(&mut self, version: &str) {
        let answer = self.call(&initialize(version)).await;
        assert!(answer.contains(&format!(r#""protocolVersion":"{version}""#)), "{answer}");
        let initialized = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n";
        self.stdin.write_all(initialized.as_bytes()).await.expect("write");
    }

    async fn exit(mut self) {
        drop(self.stdin);
        let status = tokio::time::timeout(Duration::from_secs(10), self.process.wait())
            .await
            .expect("exits")
            .expect("status");
        assert!(status.success(), "{status}");
    }
}

#[tokio::test]
async fn a_child_server_on_stdio_answers_a_batch_with_one_line() {
    let mut child = Child::spawn();
    child.initialize(BATCH_REVISION).await;
    let answer = child.call(TWO_CALLS_AND_A_NOTIFICATION).await;
    assert_eq!(
        batch_answer(&answer),
        [author_answer(1, "Frank Herbert"), author_answer(2, "William Gibson")]
    );
    assert_eq!(
        child.call("[]").await,
        r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request: an empty batch"}}"#
    );
    assert_eq!(
        child.call(r#"{"jsonrpc":"2.0","id":"alive","method":"ping"}"#).await,
        r#"{"jsonrpc":"2.0","id":"alive","result":{}}"#
    );
    child.exit().await;

    let mut later = Child::spawn();
    later.initialize("2025-11-25").await;
    assert_eq!(later.call(TWO_CALLS_AND_A_NOTIFICATION).await, REFUSED);
    later.exit().await;
}

#[tokio::test]
async fn a_client_that_negotiated_2025_03_26_takes_a_servers_batch() {
    let (client_end, server_end) = tokio::io::duplex(1 << 16);
    let (client_read, client_write) = tokio::io::split(client_end);
    let (server_read, mut server_write) = tokio::io::split(server_end);
    let mut from_client = BufReader::new(server_read).lines();
    let connecting = tokio::spawn(async move {
        let transport = Stdio::new(BufReader::new(client_read), client_write);
        Client::builder().era(modelcontext::EraMode::Handshake).connect(transport).await
    });
    let mut next = async || -> Value {
        let line = tokio::time::timeout(Duration::from_secs(5), from_client.next_line())
            .await
            .expect("the client wrote within 5 s")
            .expect("read")
            .expect("open");
        serde_json::from_str(&line).expect("JSON")
    };
    let initialize = next().await;
    assert_eq!(initialize["method"], "initialize");
    let answer = json!({"jsonrpc": "2.0", "id": initialize["id"], "result": {
        "protocolVersion": BATCH_REVISION, "capabilities": {"tools": {}},
        "serverInfo": {"name": "batcher", "version": "1"}}});
    server_write.write_all(format!("{answer}\n").as_bytes()).await.expect("write");
    assert_eq!(next().await["method"], "notifications/initialized");
    let client = connecting.await.expect("task").expect("connects");
    assert_eq!(client.protocol_version(), BATCH_REVISION);

    // The server answers a call inside a batch that also pings the client.
    let calling = tokio::spawn(async move {
        let tools = client.list_tools(None).await;
        (client, tools)
    });
    let list = next().await;
    assert_eq!(list["method"], "tools/list");
    let batch = json!([
        {"jsonrpc": "2.0", "id": "s1", "method": "ping"},
        {"jsonrpc": "2.0", "id": list["id"], "result": {"tools": []}},
    ]);
    server_write.write_all(format!("{batch}\n").as_bytes()).await.expect("write");
    let (client, tools) = calling.await.expect("task");
    assert!(tools.expect("the call was answered").tools.is_empty());
    // The client's answer to the batch's request is a batch of one.
    let answer = next().await;
    assert_eq!(answer, json!([{"jsonrpc": "2.0", "id": "s1", "result": {}}]));
    assert_valid(BATCH_REVISION, "JSONRPCBatchResponse", &answer);
    drop(client);
}
