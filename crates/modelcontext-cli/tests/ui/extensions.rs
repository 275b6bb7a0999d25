//! `mcp ui` and the extensions: an MCP Apps view (the `apps` example over stdio) rendered and
//! pressing its button; tool annotations as badges, a task started, listed and cancelled,
//! and a skill listed and read, against a server of the test's own over HTTP; and the exact
//! JSON of the API routes behind those tabs. A task's question is answered in the page's
//! dialog.

use std::collections::HashMap;

use modelcontext::server::{AppResource, NoArgs, Skill, TaskSupport};
use modelcontext::types::{ToolAnnotations, Visibility};
use modelcontext::{Context, McpError, McpServer, ToolDef};
use serde_json::{Value, json};

use super::webdriver::{Browser, http_with_head};
use super::{Ui, open_page, policies, screenshot};
use crate::{HttpServer, example_stdio};

/// A server with annotated tools, two task-capable tools and one skill.
fn extras_server() -> HttpServer {
    HttpServer::start(|| {
        let hints = |value: Value| -> ToolAnnotations {
            serde_json::from_value(value).expect("annotations")
        };
        let look = ToolDef::new("look", |_: NoArgs| async { "all quiet" })
            .annotations(hints(json!({"readOnlyHint": true, "openWorldHint": false})));
        let wipe = ToolDef::new("wipe", |_: NoArgs| async { "wiped" })
            .annotations(hints(json!({"destructiveHint": true, "idempotentHint": true})));
        let quick = ToolDef::new("quick", |cx: Context, _: NoArgs| async move {
            cx.run_as_task().await;
            "done as a task"
        });
        let forever = ToolDef::new("forever", |cx: Context, _: NoArgs| async move {
            cx.run_as_task().await;
            std::future::pending::<&str>().await
        });
        let ask = ToolDef::new("ask", |cx: Context, _: NoArgs| async move {
            cx.run_as_task().await;
            let question = json!({"message": "Go ahead?", "requestedSchema": {"type": "object",
                "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}});
            let params =
                serde_json::from_value(question).map_err(|e| McpError::internal(e.to_string()))?;
            let answer = json!(cx.elicit_raw(params).await?);
            let ahead = answer["action"] == "accept" && answer["content"]["ok"] == true;
            Ok::<_, McpError>(if ahead { "went ahead" } else { "stopped" })
        });
        let notes = Skill::new(
            "---\nname: notes\ndescription: Keep meeting notes in one format\n---\n\
             Write notes as in templates/meeting.md.\n",
        )
        .and_then(|skill| skill.file("templates/meeting.md", "# Meeting\n\n## Decisions\n"))
        .expect("the notes skill");
        McpServer::new("extras")
            .tool(look)
            .and_then(|s| s.tool(wipe))
            .and_then(|s| s.tool(quick.task(TaskSupport::Optional)))
            .and_then(|s| s.tool(forever.task(TaskSupport::Optional)))
            .and_then(|s| s.tool(ask.task(TaskSupport::Optional)))
            .and_then(|s| s.skill(notes))
            .expect("the extras server")
    })
}

#[test]
fn an_app_view_renders_in_a_sandbox_and_calls_a_tool_through_the_host() {
    let Some(browser) = Browser::start() else { return };
    let ui = Ui::start(&["--stdio", &example_stdio("apps")]);
    open_page(&browser, &ui);
    browser.wait_for_text(".tool-item[data-name='show_counter']", "has a view");
    browser.wait_for_text(".tool-item[data-name='increment']", "app only");
    browser.click(".tool-item[data-name='show_counter']");
    browser.click("#call-button");
    browser.wait_for_text("#call-result", "count");
    let frame = browser.element("#app-frame");
    let sandbox = "return document.querySelector('#app-frame').getAttribute('sandbox')";
    assert_eq!(browser.script(sandbox, json!([])), json!("allow-scripts"));
    // Inside the view: the result the host handed it, then its button, whose `tools/call`
    // goes through the page and the `mcp` process to the server.
    browser.enter_frame(&frame);
    browser.wait_for_text("#count", "0");
    browser.click("#more");
    browser.wait_for_text("#count", "1");
    browser.leave_frame();
    browser.wait_for_text("#app-log", "← tools/call");
    browser.script("document.querySelector('#app-view').scrollIntoView()", json!([]));
    screenshot(&browser, "app");
    browser.wait_for_text("#app-log", r#"→ result #1 { "count": 1 }"#);
    browser.wait_for_text("#app-log", "→ ui/notifications/tool-result");
}

/// A view that does the whole handshake: it shows the host context it was given and the
/// arguments of the call, asks to be 321 pixels tall, tries a tool it may not call and the
/// page's API, and shows what became of both.
const PROBE_HTML: &str = r#"<!DOCTYPE html>
<html><body>
<p id="tool">?</p><p id="input">?</p><p id="refused">?</p><p id="fetch">?</p>
<script>
  let next = 1;
  const waiting = new Map();
  function request(method, params) {
    const id = next++;
    parent.postMessage({ jsonrpc: "2.0", id, method, params }, "*");
    return new Promise((resolve) => waiting.set(id, resolve));
  }
  const show = (id, text) => { document.getElementById(id).textContent = text; };
  addEventListener("message", (event) => {
    const message = event.data;
    if (waiting.has(message.id)) { waiting.get(message.id)(message); waiting.delete(message.id); }
    if (message.method === "ui/notifications/tool-input") show("input", JSON.stringify(message.params.arguments));
  });
  request("ui/initialize", { protocolVersion: "2026-01-26", appInfo: { name: "probe", version: "1" }, appCapabilities: {} })
    .then(async (answer) => {
      show("tool", `${answer.result.hostContext.toolInfo.tool.name} in ${answer.result.hostInfo.name}`);
      parent.postMessage({ jsonrpc: "2.0", method: "ui/notifications/initialized" }, "*");
      parent.postMessage({ jsonrpc: "2.0", method: "ui/notifications/size-changed", params: { height: 321 } }, "*");
      const refused = await request("tools/call", { name: "secret", arguments: {} });
      show("refused", refused.error ? refused.error.message : "called");
      try { await fetch("/api/info"); show("fetch", "fetched"); } catch { show("fetch", "blocked"); }
    });
</script>
</body></html>
"#;

/// A view that navigates its frame elsewhere once it has loaded.
const WANDERING_HTML: &str = r#"<!DOCTYPE html>
<html><body><script>addEventListener("load", () => { location.href = "about:blank"; });</script></body></html>
"#;

/// A server with the probe view, its tool, and a tool only the model may call.
fn probe_server() -> HttpServer {
    HttpServer::start(|| {
        let schema = json!({"type": "object", "properties": {"word": {"type": "string"}}});
        let Value::Object(schema) = schema else { unreachable!("an object") };
        let probe = ToolDef::new("probe", |args: HashMap<String, String>| async move {
            format!("probed {}", args.get("word").map_or("nothing", String::as_str))
        })
        .input_schema(schema)
        .ui("ui://probe/view");
        let secret = ToolDef::new("secret", |_: NoArgs| async { "the secret" })
            .ui("ui://probe/view")
            .visibility([Visibility::Model]);
        let wander =
            ToolDef::new("wander", |_: NoArgs| async { "wandered" }).ui("ui://wander/view");
        McpServer::new("probe")
            .app(AppResource::new("ui://probe/view", "Probe", PROBE_HTML))
            .and_then(|s| s.app(AppResource::new("ui://wander/view", "Wander", WANDERING_HTML)))
            .and_then(|s| s.tool(wander))
            .and_then(|s| s.tool(probe))
            .and_then(|s| s.tool(secret))
            .expect("the probe server")
    })
}

#[test]
fn a_view_gets_the_handshake_resizes_and_reaches_only_what_it_may() {
    let Some(browser) = Browser::start() else { return };
    let server = probe_server();
    let ui = Ui::start(&[&server.url]);
    open_page(&browser, &ui);
    browser.click(".tool-item[data-name='probe']");
    browser.type_into("#tool-form [data-path='word']", "deep");
    browser.click("#call-button");
    browser.wait_for_text("#call-result", "probed deep");
    let frame = browser.element("#app-frame");
    browser.wait_until(
        "the view at the height it asked for",
        "return document.querySelector('#app-frame').style.height === '321px'",
    );
    browser.enter_frame(&frame);
    browser.wait_for_text("#tool", "probe in mcp");
    browser.wait_for_text("#input", r#"{"word":"deep"}"#);
    browser.wait_for_text("#refused", r#"the view may not call "secret""#);
    // Its own policy has no `connect-src`: the page's API is out of its reach.
    browser.wait_for_text("#fetch", "blocked");
    let origin = browser.script("return window.origin", json!([]));
    assert_eq!(origin, json!("null"), "the view runs in an opaque origin");
    browser.leave_frame();
    browser.wait_for_text("#app-log", "← ui/initialize");
    browser.wait_for_text("#app-log", "← ui/notifications/size-changed");

    // A view that navigates its frame away is no longer talked to: the second call's
    // notifications are not sent to whatever page the frame holds now.
    browser.click(".tool-item[data-name='wander']");
    browser.click("#call-button");
    browser.wait_for_text("#app-log", "navigated away");
    browser.click("#call-button");
    browser.wait_for_text("#call-result", "wandered");
    let sent = "return document.querySelectorAll('#app-log .sent').length";
    assert_eq!(browser.script(sent, json!([])), json!(2), "only the first call's two messages");
}

#[test]
fn a_view_is_served_with_its_own_policy() {
    let ui = Ui::start(&["--stdio", &example_stdio("apps")]);
    let token = [("X-MCP-UI-Token", ui.token.as_str())];
    let body = json!({"tool": "show_counter"}).to_string();
    let (status, answer) = ui.request("POST", "/api/app", &token, Some(&body));
    assert_eq!(status, 200, "{answer}");
    let policy = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; \
                  img-src data:; font-src data:; media-src data:; connect-src 'none'; \
                  frame-src 'none'; base-uri 'none'; object-src 'none'; form-action 'none'; \
                  frame-ancestors 'self'; sandbox allow-scripts";
    let answer: Value = serde_json::from_str(&answer).expect("JSON");
    assert_eq!(
        answer,
        json!({"view": {"uri": "ui://counter/view", "url": "/view/1", "prefersBorder": true,
                        "policy": policy, "allow": "", "permissions": {}}})
    );
    let (status, head, html) = http_with_head(&ui.address, "GET", "/view/1", &token, None);
    assert_eq!(status, 200);
    assert_eq!(policies(&head), [policy], "{head}");
    assert!(!head.to_ascii_lowercase().contains("x-frame-options"), "{head}");
    assert!(html.contains("<title>Counter</title>"), "{html}");
    let (status, head, _) = http_with_head(&ui.address, "GET", "/view/2", &token, None);
    assert_eq!(status, 404);
    assert_eq!(policies(&head).len(), 1, "{head}");
}

#[test]
fn annotations_tasks_and_skills_in_the_browser() {
    let Some(browser) = Browser::start() else { return };
    let server = extras_server();
    let ui = Ui::start(&[&server.url]);
    open_page(&browser, &ui);
    let badges = |tool: &str| format!(".tool-item[data-name='{tool}'] .badges");
    browser.wait_for_text(&badges("look"), "read-only");
    browser.wait_for_text(&badges("look"), "closed world");
    browser.wait_for_text(&badges("wipe"), "destructive");
    browser.wait_for_text(&badges("wipe"), "idempotent");

    // A task that never ends: listed as working, then cancelled from its row.
    browser.click(".tool-item[data-name='forever']");
    browser.click("#call-as-task");
    browser.click("#call-button");
    browser.click("#show-tasks");
    browser.wait_for_text("#tasks-note", "has no tasks/list");
    browser.wait_for_text("#task-list .task[data-status='working']", "forever");
    browser.click("#task-list .task[data-status='working'] .task-cancel");
    browser.wait_for_text("#task-list .task[data-status='cancelled']", "cancelled");
    // One that finishes: its result shown in its row.
    browser.click("#tabs [data-tab='tools']");
    browser.click(".tool-item[data-name='quick']");
    browser.click("#call-as-task");
    browser.click("#call-button");
    browser.click("#show-tasks");
    browser.wait_for_text("#task-list .task[data-status='completed']", "done as a task");
    // One that asks a question: the page's dialog takes the answer the task waits on.
    browser.click("#tabs [data-tab='tools']");
    browser.click(".tool-item[data-name='ask']");
    browser.click("#call-as-task");
    browser.click("#call-button");
    browser.wait_for_text("#question-message", "Go ahead?");
    browser.click("#question-body [data-path='ok']");
    browser.click("#question-accept");
    browser.click("#show-tasks");
    browser.wait_for_text("#task-list .task:last-child[data-status='completed']", "went ahead");
    screenshot(&browser, "tasks");

    browser.click("#tabs [data-tab='skills']");
    browser.wait_for_text("#skill-list", "Keep meeting notes in one format");
    browser.click(".skill-item[data-uri='skill://notes/SKILL.md']");
    browser.wait_for_text("#skill-text", "Write notes as in templates/meeting.md.");
    browser.click(".skill-file[data-uri='skill://notes/templates/meeting.md']");
    browser.wait_for_text("#skill-text", "## Decisions");
    screenshot(&browser, "skills");
}

#[test]
fn the_task_and_skill_routes_answer_exact_json() {
    let server = extras_server();
    let ui = Ui::start(&[&server.url]);
    let post = |path: &str, body: Value| -> Value {
        let headers = [("X-MCP-UI-Token", ui.token.as_str())];
        let (status, text) = ui.request("POST", path, &headers, Some(&body.to_string()));
        assert_eq!(status, 200, "{path}: {text}");
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}: {text}"))
    };
    let started = post("/api/call-task", json!({"request": "t1", "tool": "quick"}));
    let task_id = started["task"]["taskId"].as_str().expect("a task id").to_owned();
    let mut listed = post("/api/tasks", json!({}));
    for _ in 0..200 {
        if listed["tasks"][0]["task"]["status"] == "completed" {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
        listed = post("/api/tasks", json!({}));
    }
    let task = &listed["tasks"][0]["task"];
    let times = (task["createdAt"].clone(), task["lastUpdatedAt"].clone());
    assert_eq!(
        listed,
        json!({"tasks": [{"tool": "quick", "task": {
            "taskId": task_id, "status": "completed",
            "createdAt": times.0, "lastUpdatedAt": times.1,
            "ttlMs": task["ttlMs"], "pollIntervalMs": task["pollIntervalMs"],
            "result": {"content": [{"type": "text", "text": "done as a task"}]},
        }}]})
    );
    let skills = post("/api/skills", json!({}));
    let entry = skills["skills"][0].clone();
    assert_eq!(entry["uri"], "skill://notes/SKILL.md", "{skills}");
    assert_eq!(
        post("/api/skill", json!({"entry": entry, "file": "skill://notes/templates/meeting.md"})),
        json!({"uri": "skill://notes/templates/meeting.md", "text": "# Meeting\n\n## Decisions\n"})
    );
    assert_eq!(
        post("/api/skill", json!({"entry": entry}))["text"],
        "---\nname: notes\ndescription: Keep meeting notes in one format\n---\n\
         Write notes as in templates/meeting.md.\n"
    );
}
