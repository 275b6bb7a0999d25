//! Inside the handler: logging filtered per era, lifespan state, reading resources through
//! the server's own registry, and progress that only increases.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use modelcontext::server::NoArgs;
use modelcontext::types::{LoggingLevel, ResourceContents};
use modelcontext::{Client, Context, EraMode, McpServer, ResourceDef, ToolDef};
use serde_json::json;

use crate::support::{MODERN_META, Wire, modern_meta};

/// A server whose `chatty` tool logs once at each of four levels, then answers "done".
fn chatty_server() -> McpServer {
    let chatty = ToolDef::new("chatty", |cx: Context, _: NoArgs| async move {
        cx.debug("d").await;
        cx.info("i").await;
        cx.warning(json!({"disk": "low"})).await;
        cx.log_to(Some("db"), LoggingLevel::Error, "e").await;
        "done"
    });
    McpServer::new("chatty").tool(chatty).expect("registers")
}

/// Sends `call` and returns every line up to and including the answer.
async fn lines_until_answer(wire: &mut Wire, call: &str) -> Vec<String> {
    wire.send(call).await;
    let mut lines = Vec::new();
    loop {
        let line = wire.recv().await;
        let done = line.contains(r#""id":"#);
        lines.push(line);
        if done {
            return lines;
        }
    }
}

#[tokio::test]
async fn handshake_logging_follows_set_level() {
    let mut wire = Wire::start(chatty_server(), "2025-11-25");
    wire.initialize().await;
    let call = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"chatty"}}"#;
    // Before logging/setLevel the server sends everything.
    let before = lines_until_answer(&mut wire, call).await;
    assert_eq!(before.len(), 5, "{before:#?}");
    assert_eq!(
        before[0],
        r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"debug","data":"d"}}"#
    );
    wire.call(
        r#"{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"warning"}}"#,
    )
    .await;
    let call = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"chatty"}}"#;
    let after = lines_until_answer(&mut wire, call).await;
    expect_test::expect![[r#"
        [
            "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"warning\",\"data\":{\"disk\":\"low\"}}}",
            "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"error\",\"logger\":\"db\",\"data\":\"e\"}}",
            "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"done\"}]}}",
        ]
    "#]]
    .assert_debug_eq(&after);
}

#[tokio::test]
async fn modern_logging_only_with_the_request_log_level() {
    let mut wire = Wire::start(chatty_server(), "2026-07-28");
    let silent = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"chatty",{MODERN_META}}}}}"#
    );
    let lines = lines_until_answer(&mut wire, &silent).await;
    assert_eq!(lines.len(), 1, "no log level, no log messages: {lines:#?}");
    let meta = modern_meta("{}", r#""io.modelcontextprotocol/logLevel":"info""#);
    let info = format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"chatty",{meta}}}}}"#
    );
    let lines = lines_until_answer(&mut wire, &info).await;
    let levels: Vec<&str> =
        lines.iter().filter_map(|l| l.split(r#""level":""#).nth(1)?.split('"').next()).collect();
    assert_eq!(levels, ["info", "warning", "error"], "{lines:#?}");
    // The level was this request's only: the next one without it is silent again.
    let again = silent.replace(r#""id":1"#, r#""id":3"#);
    assert_eq!(lines_until_answer(&mut wire, &again).await.len(), 1);
}

#[tokio::test]
async fn the_client_receives_log_messages_in_both_eras() {
    for mode in [EraMode::Handshake, EraMode::Modern] {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let client = Client::builder()
            .era(mode)
            .log_level(LoggingLevel::Warning)
            .on_log(move |params| {
                let _ = tx.send((params.level, params.data));
            })
            .connect(chatty_server().in_memory())
            .await
            .expect("connects");
        client.call_tool("chatty", json!({})).await.expect("called");
        let mut got = Vec::new();
        while let Ok(message) = rx.try_recv() {
            got.push(message);
        }
        assert_eq!(
            got,
            [(LoggingLevel::Warning, json!({"disk": "low"})), (LoggingLevel::Error, json!("e"))],
            "{mode:?}"
        );
    }
}

struct Visits(AtomicUsize);

#[tokio::test]
async fn lifespan_state_is_built_once_and_shared() {
    let visit = ToolDef::new("visit", |cx: Context, _: NoArgs| async move {
        let visits = cx.state::<Visits>().map(|v| v.0.fetch_add(1, Ordering::SeqCst) + 1);
        let missing = cx.state::<String>().is_none();
        format!("{visits:?} {missing}")
    });
    let server =
        McpServer::new("state").state(Visits(AtomicUsize::new(0))).tool(visit).expect("registers");
    let first = Client::connect(server.in_memory()).await.expect("connects");
    let second = Client::builder()
        .era(EraMode::Handshake)
        .connect(server.in_memory())
        .await
        .expect("connects");
    let text = |r: modelcontext::CallToolResult| serde_json::to_value(&r.content).expect("json");
    assert_eq!(
        text(first.call_tool("visit", json!({})).await.expect("ok"))[0]["text"],
        "Some(1) true"
    );
    assert_eq!(
        text(second.call_tool("visit", json!({})).await.expect("ok"))[0]["text"],
        "Some(2) true"
    );
}

#[tokio::test]
async fn a_handler_reads_resources_through_the_registry() {
    let shelf = ResourceDef::new("shelf://{name}", |name: Shelf| async move {
        format!("books on {}", name.name)
    });
    let count = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&count);
    let summary = ToolDef::new("summary", move |cx: Context, _: NoArgs| {
        let seen = Arc::clone(&seen);
        async move {
            seen.fetch_add(1, Ordering::SeqCst);
            let found = cx.read_resource("shelf://top").await.map_err(|e| e.message)?;
            let missing = cx.read_resource("nowhere://x").await.expect_err("unknown");
            let [ResourceContents::Text(text)] = found.as_slice() else {
                return Err("one text".to_owned());
            };
            Ok(format!("{} / {}", text.text, missing.message))
        }
    });
    let server =
        McpServer::new("shelves").resource(shelf).expect("shelf").tool(summary).expect("summary");
    let client = Client::connect(server.in_memory()).await.expect("connects");
    let result = client.call_tool("summary", json!({})).await.expect("ok");
    assert_eq!(
        serde_json::to_value(&result.content).expect("json")[0]["text"],
        "books on top / Unknown resource: nowhere://x"
    );
    assert_eq!(count.load(Ordering::SeqCst), 1);
}

#[derive(serde::Deserialize, modelcontext::schemars::JsonSchema)]
#[schemars(crate = "modelcontext::schemars")]
struct Shelf {
    name: String,
}

#[tokio::test]
async fn progress_that_does_not_increase_is_not_sent() {
    let steps = ToolDef::new("steps", |cx: Context, _: NoArgs| async move {
        for progress in [1.0, 1.0, 0.5, f64::NAN, 2.0] {
            cx.report_progress(progress, Some(2.0), None).await;
        }
        "done"
    });
    let server = McpServer::new("steps").tool(steps).expect("registers");
    let mut wire = Wire::start(server, "2026-07-28");
    let meta = modern_meta("{}", r#""progressToken":7"#);
    let call = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"steps",{meta}}}}}"#
    );
    let lines = lines_until_answer(&mut wire, &call).await;
    let progress: Vec<&str> =
        lines.iter().filter_map(|l| l.split(r#""progress":"#).nth(1)?.split(',').next()).collect();
    assert_eq!(progress, ["1", "2"], "{lines:#?}");
}

/// A modern connection's requests each describe the client: the server reuses the last
/// description while it is the same, so a change on any request must still be seen.
#[tokio::test]
async fn each_modern_request_is_answered_with_the_client_it_describes() {
    let whoami = ToolDef::new("whoami", |cx: Context, _: NoArgs| async move {
        let sampling = cx.client_capabilities().sampling.is_some();
        let name = cx.client_info().map_or("anonymous", |info| info.name.as_str()).to_owned();
        format!("{name}, sampling: {sampling}")
    });
    let server = McpServer::new("whoami").tool(whoami).expect("registers");
    let mut wire = Wire::start(server, "2026-07-28");
    let info = r#""io.modelcontextprotocol/clientInfo":{"name":"ada","version":"1"}"#;
    let envelopes = [
        (modern_meta("{}", ""), "anonymous, sampling: false"),
        (modern_meta("{}", ""), "anonymous, sampling: false"),
        (modern_meta(r#"{"sampling":{}}"#, ""), "anonymous, sampling: true"),
        (modern_meta(r#"{"sampling":{}}"#, info), "ada, sampling: true"),
        (modern_meta("{}", info), "ada, sampling: false"),
        (modern_meta("{}", ""), "anonymous, sampling: false"),
    ];
    for (id, (meta, expected)) in envelopes.iter().enumerate() {
        let call = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{{meta},"name":"whoami"}}}}"#
        );
        let answer: serde_json::Value =
            serde_json::from_str(&wire.call(&call).await).expect("JSON");
        assert_eq!(answer["result"]["content"][0]["text"], *expected, "request {id}: {answer}");
    }
    // A version the server does not speak is refused even after a good envelope was reused.
    let stale = r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-01-01","io.modelcontextprotocol/clientCapabilities":{}},"name":"whoami"}}"#;
    let answer = wire.call(stale).await;
    assert!(answer.contains(r#""code":-32022"#), "{answer}");
}
