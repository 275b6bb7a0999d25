//! `mcp ui` as the host of an MCP Apps view: what a view may ask of the host (a link, a
//! message, the model's context, a display mode) and the exact answers it gets; the
//! permissions it asked for as the frame's `allow`; `ui/resource-teardown` when its pane is
//! replaced; `ui/notifications/tool-cancelled` when its tool's call is cancelled.

use modelcontext::server::{AppResource, NoArgs};
use modelcontext::types::AppPermissions;
use modelcontext::{McpServer, ToolDef};
use serde_json::{Value, json};

use super::webdriver::Browser;
use super::{Ui, open_page};
use crate::HttpServer;

/// A view that asks the host everything the extension lets it ask, in order, and shows the
/// answers (`#answers`) and the host's notifications (`#notes`) as JSON. It answers
/// `ui/resource-teardown` at once.
const ASKING_HTML: &str = r#"<!DOCTYPE html>
<html><body>
<pre id="answers">?</pre><pre id="notes">[]</pre>
<script>
  let next = 1;
  const waiting = new Map();
  const notes = [];
  function request(method, params) {
    const id = next++;
    parent.postMessage({ jsonrpc: "2.0", id, method, params }, "*");
    return new Promise((resolve) => waiting.set(id, resolve));
  }
  addEventListener("message", (event) => {
    const message = event.data;
    if (message.method === "ui/resource-teardown") {
      parent.postMessage({ jsonrpc: "2.0", id: message.id, result: {} }, "*");
    } else if (message.method) {
      notes.push({ method: message.method, params: message.params });
      document.getElementById("notes").textContent = JSON.stringify(notes);
    } else if (waiting.has(message.id)) {
      waiting.get(message.id)(message);
      waiting.delete(message.id);
    }
  });
  const asks = [
    ["ui/open-link", { url: "https://example.com/docs?page=1" }],
    ["ui/open-link", { url: "javascript:alert(1)" }],
    ["ui/message", { role: "user", content: { type: "text", text: "Book the 9:30 train" } }],
    ["ui/update-model-context", { content: [{ type: "text", text: "first draft" }] }],
    ["ui/update-model-context", { content: [{ type: "text", text: "seat 12A picked" }], structuredContent: { seat: "12A" } }],
    ["ui/request-display-mode", { mode: "fullscreen" }],
    ["ui/no-such-thing", {}],
  ];
  request("ui/initialize", { protocolVersion: "2026-01-26", appInfo: { name: "asking", version: "1" }, appCapabilities: {} })
    .then(async (init) => {
      parent.postMessage({ jsonrpc: "2.0", method: "ui/notifications/initialized" }, "*");
      const capabilities = init.result.hostCapabilities;
      const answers = [{ openLinks: capabilities.openLinks, sandbox: capabilities.sandbox }];
      for (const [method, params] of asks) {
        const { result, error } = await request(method, params);
        answers.push({ method, result, error });
      }
      document.getElementById("answers").textContent = JSON.stringify(answers);
    });
</script>
</body></html>
"#;

/// A server with the asking view (asking for the camera, the clipboard and geolocation),
/// a tool that shows it, one that never ends, and one without a view.
fn asking_server() -> HttpServer {
    HttpServer::start(|| {
        let permissions: AppPermissions =
            serde_json::from_value(json!({"camera": {}, "clipboardWrite": {}, "geolocation": {}}))
                .expect("permissions");
        let view =
            AppResource::new("ui://asking/view", "Asking", ASKING_HTML).permissions(permissions);
        let ask = ToolDef::new("ask", |_: NoArgs| async { "asked" }).ui("ui://asking/view");
        let hang =
            ToolDef::new("hang", |_: NoArgs| std::future::pending::<&str>()).ui("ui://asking/view");
        let plain = ToolDef::new("plain", |_: NoArgs| async { "plain" });
        McpServer::new("asking")
            .app(view)
            .and_then(|s| s.tool(ask))
            .and_then(|s| s.tool(hang))
            .and_then(|s| s.tool(plain))
            .expect("the asking server")
    })
}

/// The JSON the view shows in `#id` once it is not `?`.
fn view_json(browser: &Browser, id: &str) -> Value {
    let script = format!(
        "const e = document.getElementById('{id}'); return e && e.textContent !== '?' ? e.textContent : null"
    );
    let text = browser.wait_until(&format!("#{id} in the view"), &script);
    serde_json::from_str(text.as_str().unwrap_or("")).expect("JSON in the view")
}

#[test]
fn a_view_asks_the_host_and_gets_exact_answers() {
    let Some(browser) = Browser::start() else { return };
    let server = asking_server();
    let ui = Ui::start(&[&server.url]);
    open_page(&browser, &ui);
    let page = browser.script("return location.href", json!([]));
    browser.click(".tool-item[data-name='ask']");
    browser.click("#call-button");
    browser.wait_for_text("#call-result", "asked");
    let frame = browser.element("#app-frame");
    let allow = "return document.querySelector('#app-frame').getAttribute('allow')";
    assert_eq!(browser.script(allow, json!([])), json!("camera; geolocation; clipboard-write"));
    browser.enter_frame(&frame);
    let answers = view_json(&browser, "answers");
    browser.leave_frame();
    assert_eq!(
        answers,
        json!([
            {"openLinks": {}, "sandbox": {"permissions":
                {"camera": {}, "geolocation": {}, "clipboardWrite": {}}}},
            {"method": "ui/open-link", "result": {}},
            {"method": "ui/open-link", "error": {"code": -32000,
                "message": "Policy violation: only http and https links are offered"}},
            {"method": "ui/message", "result": {}},
            {"method": "ui/update-model-context", "result": {}},
            {"method": "ui/update-model-context", "result": {}},
            {"method": "ui/request-display-mode", "result": {"mode": "inline"}},
            {"method": "ui/no-such-thing", "error": {"code": -32601,
                "message": "mcp ui does not handle ui/no-such-thing"}},
        ])
    );
    // The link is offered in the log, to open in a new tab with no handle on the page.
    let link = "const a = document.querySelector('#app-log .view-link a'); \
                return [a.getAttribute('href'), a.getAttribute('target'), a.getAttribute('rel')]";
    assert_eq!(
        browser.script(link, json!([])),
        json!(["https://example.com/docs?page=1", "_blank", "noopener noreferrer"])
    );
    assert_eq!(browser.script("return location.href", json!([])), page, "never navigated");
    browser.wait_for_text("#app-log .view-said", "user Book the 9:30 train");
    // Only the latest model context is kept.
    let context = browser.wait_for_text("#app-context", "seat 12A picked");
    assert!(context.contains("\"seat\": \"12A\"") && !context.contains("first draft"), "{context}");

    // Another tool's pane replaces this one: the view is asked to tear down, and answers.
    browser.click(".tool-item[data-name='plain']");
    browser.wait_for_text("#teardown-note", "ui://asking/view answered ui/resource-teardown");
    browser.wait_until(
        "the old pane gone",
        "return document.querySelector('.detail[hidden]') === null",
    );
}

#[test]
fn a_cancelled_call_is_told_to_its_view() {
    let Some(browser) = Browser::start() else { return };
    let server = asking_server();
    let ui = Ui::start(&[&server.url]);
    open_page(&browser, &ui);
    browser.click(".tool-item[data-name='hang']");
    browser.click("#call-button");
    browser.wait_until(
        "the call running",
        "return !document.querySelector('#cancel-button').disabled",
    );
    browser.click("#cancel-button");
    browser.wait_for_text("#call-result", "Cancelled");
    let frame = browser.element("#app-frame");
    browser.enter_frame(&frame);
    let script = "const e = document.getElementById('notes'); \
                  return e.textContent.includes('tool-cancelled') ? e.textContent : null";
    let notes = browser.wait_until("the cancellation in the view", script);
    browser.leave_frame();
    let notes: Value = serde_json::from_str(notes.as_str().unwrap_or("")).expect("JSON");
    assert_eq!(
        notes,
        json!([
            {"method": "ui/notifications/tool-input", "params": {"arguments": {}}},
            {"method": "ui/notifications/tool-cancelled",
             "params": {"reason": "cancelled from the page"}},
        ])
    );
}
