//! An MCP App (`io.modelcontextprotocol/ui`): a tool whose results a host renders in a small
//! HTML view, and a tool only that view may call.
//!
//! `cargo run --example apps --features macros` serves the app in memory to a client acting
//! as the host: it lists the tools the model may see (the view's button tool is not among
//! them), fetches the view linked to the model's tool, and presses the button the way the
//! view would, with a `tools/call` of the app-only tool. With `--stdio` it serves the app over
//! stdio instead, for a real host (`mcp ui --stdio 'target/debug/examples/apps --stdio'` renders
//! the view and presses its button).

use std::sync::atomic::{AtomicU64, Ordering};

use modelcontext::server::{AppResource, Json};
use modelcontext::{Client, Context, EraMode, McpServer, tool};
use serde_json::json;

/// The view: a counter with a button. In a host, the view talks to the host over
/// `postMessage` JSON-RPC; `tools/call` of `increment` goes through the host to this server.
const COUNTER_HTML: &str = r#"<!DOCTYPE html>
<html>
<head><meta charset="utf-8"><title>Counter</title></head>
<body>
  <p>Count: <output id="count">?</output></p>
  <button id="more">+1</button>
  <script>
    let next = 1;
    function call(method, params) {
      const id = next++;
      window.parent.postMessage({ jsonrpc: "2.0", id, method, params }, "*");
      return new Promise((resolve) => {
        window.addEventListener("message", function answer(event) {
          if (event.data && event.data.id === id) {
            window.removeEventListener("message", answer);
            resolve(event.data.result);
          }
        });
      });
    }
    function show(result) {
      const count = result && result.structuredContent && result.structuredContent.count;
      document.getElementById("count").textContent = String(count ?? "?");
    }
    window.addEventListener("message", (event) => {
      if (event.data && event.data.method === "ui/notifications/tool-result") show(event.data.params);
    });
    document.getElementById("more").onclick = async () => show(await call("tools/call", { name: "increment", arguments: {} }));
  </script>
</body>
</html>
"#;

/// What both tools return: the count, as structured content the view reads.
#[derive(serde::Serialize, schemars::JsonSchema)]
struct Count {
    count: u64,
}

/// The shared count.
#[derive(Default)]
struct Counter(AtomicU64);

/// Shows the counter (the host renders it in the counter view).
#[tool(ui = "ui://counter/view")]
async fn show_counter(ctx: Context) -> Json<Count> {
    let count = ctx.state::<Counter>().map_or(0, |c| c.0.load(Ordering::Relaxed));
    Json(Count { count })
}

/// Adds one to the counter: the view's button, not for the model.
#[tool(ui = "ui://counter/view", app_only)]
async fn increment(ctx: Context) -> Json<Count> {
    let count = ctx.state::<Counter>().map_or(0, |c| c.0.fetch_add(1, Ordering::Relaxed) + 1);
    Json(Count { count })
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), modelcontext::Error> {
    let view = AppResource::new("ui://counter/view", "Counter", COUNTER_HTML)
        .description("A counter with a +1 button")
        .prefers_border(true);
    let server = McpServer::new("counter")
        .state(Counter::default())
        .app(view)?
        .tool(show_counter::tool())?
        .tool(increment::tool())?;
    if std::env::args().any(|arg| arg == "--stdio") {
        return server.run_stdio().await;
    }

    let host = Client::builder().era(EraMode::Modern).apps().connect(server.in_memory()).await?;
    let model_tools = host.list_model_tools().await?;
    let names: Vec<&str> = model_tools.iter().map(|t| t.name.as_str()).collect();
    println!("tools the model sees: {names:?}");
    for tool in &model_tools {
        if let Some(view) = host.app_for_tool(tool).await? {
            let csp = view.ui.as_ref().and_then(|ui| ui.csp.clone()).unwrap_or_default();
            println!(
                "'{}' renders in {} ({} bytes of HTML, CSP {csp:?})",
                tool.name,
                view.uri,
                view.html.len()
            );
        }
    }
    let pressed = host.call_tool("increment", json!({})).await?;
    println!("the view pressed +1: {}", json!(pressed.structured_content));
    let shown = host.call_tool("show_counter", json!({})).await?;
    println!("the model's tool now shows: {}", json!(shown.structured_content));
    Ok(())
}
