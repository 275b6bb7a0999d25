//! Our client against a real server nobody here wrote: the official reference server
//! `@modelcontextprotocol/server-everything` (TypeScript SDK 1.x, 2025-11-25 only), started by
//! `scripts/interop-node.sh`.
//!
//! ```sh
//! cargo run --example everything_client -- --stdio npx mcp-server-everything stdio
//! PORT=3001 npx mcp-server-everything streamableHttp &
//! cargo run --example everything_client -- http://127.0.0.1:3001/mcp
//! ```
//!
//! The client runs in the default era mode, `auto`: it probes with `server/discover`, the
//! legacy server refuses it, and the client falls back to `initialize` (2025-11-25);
//! `--era handshake` (before the target) skips the probe. `--era modern` speaks only
//! 2026-07-28, for the server behind a gateway that bridges the eras
//! (`mcp serve --http ADDR --stdio -- npx mcp-server-everything stdio`). Then it checks tools (text, image,
//! structured content, resource links, progress, errors), resources (static, templated text
//! and blob, a miss), prompts, completions, the server's requests to the client (roots,
//! sampling, elicitation) and its notifications (logging, `list_changed`). Each check prints
//! `ok <transport> <era> <check>` or `FAIL <transport> <era> <check>: <why>`; the last line is
//! `N passed, M failed` and the exit code is 1 when anything failed.

use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use modelcontext::client::CallOptions;
use modelcontext::transport::http::HttpTransport;
use modelcontext::types::{
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult, Era,
    LoggingLevel, PromptReference, Reference, ResourceContents, ResourceTemplateReference, Role,
    Root, SamplingMessageContentBlock,
};
use modelcontext::{CallToolResult, ChildProcess, Client, ContentBlock, EraMode};
use serde_json::{Value, json};

/// The root we offer; `get-roots-list` must hand it back.
const ROOT_URI: &str = "file:///interop/everything";
/// What our sampling handler answers; `trigger-sampling-request` must hand it back.
const SAMPLED_TEXT: &str = "Sampled by the modelcontext interop client";
/// The start of every PNG file, base64-encoded.
const PNG_BASE64_PREFIX: &str = "iVBORw0KGgo";

#[tokio::main]
async fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut mode = ("auto", EraMode::Auto);
    if args.first().map(String::as_str) == Some("--era") && args.len() > 1 {
        mode = match args[1].as_str() {
            "auto" => ("auto", EraMode::Auto),
            "handshake" => ("handshake", EraMode::Handshake),
            "modern" => ("modern", EraMode::Modern),
            other => {
                eprintln!("unknown era {other:?}: use auto, handshake or modern");
                return ExitCode::from(2);
            }
        };
        args.drain(..2);
    }
    let (transport, target) = match args.as_slice() {
        [flag, program, rest @ ..] if flag == "--stdio" => ("stdio", Target::Stdio(program, rest)),
        [url] if url.starts_with("http://") || url.starts_with("https://") => {
            ("http", Target::Http(url))
        }
        _ => {
            eprintln!(
                "usage: everything_client [--era auto|handshake|modern] --stdio <command> [args...]"
            );
            eprintln!("       everything_client [--era auto|handshake|modern] <url>");
            return ExitCode::from(2);
        }
    };
    let mut report = Report { label: format!("{transport} {}", mode.0), passed: 0, failed: 0 };

    // What the server sends on its own: log messages and other notifications.
    let logs = Arc::new(Mutex::new(Vec::<String>::new()));
    let notifications = Arc::new(Mutex::new(Vec::<String>::new()));
    let (log_sink, notification_sink) = (logs.clone(), notifications.clone());
    let builder = Client::builder()
        .era(mode.1)
        .info("everything-interop", env!("CARGO_PKG_VERSION"))
        .timeout(Some(Duration::from_secs(20)))
        .log_level(LoggingLevel::Debug)
        .on_log(move |params| lock(&log_sink).push(params.data.to_string()))
        .on_notification(move |n| lock(&notification_sink).push(n.method))
        .on_roots(|| async {
            let mut root = Root::new(ROOT_URI);
            root.name = Some("interop".into());
            Ok(vec![root])
        })
        .on_sample(|params: CreateMessageRequestParams| async move {
            let asked = params.messages.len();
            let content = SamplingMessageContentBlock::text(format!("{SAMPLED_TEXT} ({asked})"));
            Ok(CreateMessageResult::new(Role::Assistant, content, "interop-model")
                .with_stop_reason("endTurn"))
        })
        .on_elicit(|params: ElicitRequestParams| async move {
            Ok(match params {
                ElicitRequestParams::Form(_) => {
                    let answer = json!({"name": "Ada Lovelace", "check": true, "integer": 7});
                    ElicitResult::accept(answer.as_object().cloned().unwrap_or_default())
                }
                _ => ElicitResult::new(modelcontext::types::ElicitAction::Decline),
            })
        });

    // Connecting: `auto` probes `server/discover`, then falls back to `initialize`.
    let connected = match target {
        Target::Stdio(program, rest) => match ChildProcess::new(program).args(rest).spawn() {
            Ok(connection) => builder.connect(connection).await,
            Err(err) => return report.fatal("connect", format!("cannot start {program}: {err}")),
        },
        Target::Http(url) => match HttpTransport::new(url) {
            Ok(transport) => builder.connect(transport).await,
            Err(err) => return report.fatal("connect", err),
        },
    };
    let client = match connected {
        Ok(client) => client,
        Err(err) => return report.fatal("connect", err),
    };
    report.ok("connect");
    // In `auto` this is the fallback: `server/discover` refused, `initialize` accepted.
    // `modern` reaches the server through a gateway that speaks 2026-07-28 on its behalf.
    let era_check = if mode.0 == "auto" { "era.fallback" } else { "era" };
    let (era, revision) = match mode.1 {
        EraMode::Modern => (Era::Modern, "2026-07-28"),
        _ => (Era::Handshake, "2025-11-25"),
    };
    report.check(era_check, client.era() == era, format!("{:?}", client.era()));
    report.check(
        "protocol_version",
        client.protocol_version() == revision,
        client.protocol_version().to_owned(),
    );
    let name = client.server_info().map(|info| info.name.clone());
    report.check(
        "server_info",
        name.as_deref() == Some("mcp-servers/everything"),
        format!("{name:?}"),
    );
    let instructions = client.instructions().unwrap_or_default().to_owned();
    report.check("instructions", !instructions.trim().is_empty(), format!("{instructions:?}"));
    // 2026-07-28 has no `ping`: a stateless server needs no liveness check.
    if client.era() == Era::Handshake {
        match client.ping().await {
            Ok(()) => report.ok("ping"),
            Err(err) => report.fail("ping", err),
        }
    }

    // Tools. The conditional ones (roots, sampling, elicitation) are there because we declared
    // those capabilities; the server registers them once `initialized` arrives.
    match client.list_all_tools().await {
        Ok(tools) => {
            let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
            let want = [
                "echo",
                "get-sum",
                "get-tiny-image",
                "get-structured-content",
                "get-resource-links",
                "trigger-long-running-operation",
                "get-roots-list",
                "trigger-sampling-request",
                "trigger-elicitation-request",
            ];
            let missing: Vec<_> = want.iter().filter(|w| !names.contains(w)).collect();
            report.check(
                "tools/list",
                missing.is_empty(),
                format!("missing {missing:?} in {names:?}"),
            );
            let structured = tools.iter().find(|t| t.name == "get-structured-content");
            let schema = structured.and_then(|t| t.output_schema.as_ref());
            let has_fields = schema
                .and_then(|s| s.get("properties"))
                .is_some_and(|p| p.get("temperature").is_some() && p.get("humidity").is_some());
            report.check("tools/list.output_schema", has_fields, format!("{schema:?}"));
        }
        Err(err) => report.fail("tools/list", err),
    }

    let echo = client.call_tool("echo", json!({"message": "hi"})).await;
    report.result("tools/call.echo", echo, |r| !r.is_error() && text(r, 0) == "Echo: hi");

    let sum = client.call_tool("get-sum", json!({"a": 2, "b": 3})).await;
    report.result("tools/call.get-sum", sum, |r| {
        !r.is_error() && text(r, 0) == "The sum of 2 and 3 is 5."
    });

    let image = client.call_tool("get-tiny-image", json!({})).await;
    report.result("tools/call.get-tiny-image", image, |r| {
        let png = r.content.iter().any(|block| match block {
            ContentBlock::Image(image) => {
                image.mime_type == "image/png" && image.data.starts_with(PNG_BASE64_PREFIX)
            }
            _ => false,
        });
        !r.is_error() && r.content.len() == 3 && png
    });

    let structured =
        client.call_tool("get-structured-content", json!({"location": "Chicago"})).await;
    let weather = json!({"temperature": 36, "conditions": "Light rain / drizzle", "humidity": 82});
    report.result("tools/call.get-structured-content", structured, |r| {
        let mirrored = serde_json::from_str::<Value>(&text(r, 0)).ok() == Some(weather.clone());
        !r.is_error() && r.structured_content.as_ref() == Some(&weather) && mirrored
    });

    let links = client.call_tool("get-resource-links", json!({"count": 2})).await;
    report.result("tools/call.get-resource-links", links, |r| {
        let uris: Vec<&str> = r
            .content
            .iter()
            .filter_map(|block| match block {
                ContentBlock::ResourceLink(link) => Some(link.uri.as_str()),
                _ => None,
            })
            .collect();
        uris == ["demo://resource/dynamic/blob/1", "demo://resource/dynamic/text/2"]
    });

    // Progress notifications arrive before the result, for the token we sent.
    let progress = Arc::new(Mutex::new(Vec::new()));
    let sink = progress.clone();
    let options = CallOptions::new().on_progress(move |p| lock(&sink).push(p.progress));
    let long = client
        .call_tool_with(
            "trigger-long-running-operation",
            json!({"duration": 1, "steps": 3}),
            &options,
        )
        .await;
    let seen = lock(&progress).clone();
    report.check("tools/call.progress", seen == [1.0, 2.0, 3.0], format!("progress {seen:?}"));
    report.result("tools/call.trigger-long-running-operation", long, |r| {
        text(r, 0) == "Long running operation completed. Duration: 1 seconds, Steps: 3."
    });

    // Arguments the input schema refuses, and a tool that does not exist: refused, either as an
    // `isError` result or a JSON-RPC error, and the connection stays usable.
    let invalid = client.call_tool("get-sum", json!({"a": "two"})).await;
    report.refused("tools/call.invalid_arguments", &invalid);
    let unknown = client.call_tool("no-such-tool", json!({})).await;
    report.refused("tools/call.unknown_tool", &unknown);

    // The server asks us: roots (synced after `initialized`, then again on demand), sampling and
    // elicitation (on the tool call's own stream).
    let roots = client.call_tool("get-roots-list", json!({})).await;
    report.result("server_request.roots", roots, |r| {
        !r.is_error() && text(r, 0).contains(ROOT_URI) && text(r, 0).contains("(1 total)")
    });
    let sampled = client
        .call_tool("trigger-sampling-request", json!({"prompt": "Say hi", "maxTokens": 20}))
        .await;
    report.result("server_request.sampling", sampled, |r| {
        let t = text(r, 0);
        !r.is_error() && t.contains(SAMPLED_TEXT) && t.contains("interop-model")
    });
    let elicited = client.call_tool("trigger-elicitation-request", json!({})).await;
    report.result("server_request.elicitation", elicited, |r| {
        !r.is_error()
            && text(r, 0).contains("User provided the requested information")
            && text(r, 1).contains("- Name: Ada Lovelace")
            && text(r, 1).contains("- Favorite Integer: 7")
    });

    // Resources: the static documents, the dynamic templates, and a miss.
    let mut resources = Vec::new();
    let mut cursor = None;
    let listed = loop {
        match client.list_resources(cursor).await {
            Ok(page) => {
                resources.extend(page.resources.into_iter().map(|r| (r.uri, r.mime_type)));
                match page.next_cursor {
                    Some(next) => cursor = Some(next),
                    None => break Ok(()),
                }
            }
            Err(err) => break Err(err),
        }
    };
    let features = "demo://resource/static/document/features.md";
    match listed {
        Ok(()) => report.check(
            "resources/list",
            resources.iter().any(|(uri, _)| uri == features),
            format!("{resources:?}"),
        ),
        Err(err) => report.fail("resources/list", err),
    }
    match client.read_resource(features).await {
        Ok(read) => {
            let good = match read.contents.first() {
                Some(ResourceContents::Text(doc)) => {
                    doc.uri == features
                        && doc.mime_type.as_deref() == Some("text/markdown")
                        && doc.text.contains('#')
                }
                _ => false,
            };
            report.check("resources/read.static", good, short(&read.contents));
        }
        Err(err) => report.fail("resources/read.static", err),
    }
    let text_template = "demo://resource/dynamic/text/{resourceId}";
    match client.list_resource_templates(None).await {
        Ok(page) => {
            let templates: Vec<_> =
                page.resource_templates.iter().map(|t| &t.uri_template).collect();
            report.check(
                "resources/templates/list",
                templates.iter().any(|t| *t == text_template),
                format!("{templates:?}"),
            );
        }
        Err(err) => report.fail("resources/templates/list", err),
    }
    match client.read_resource("demo://resource/dynamic/text/1").await {
        Ok(read) => {
            let good = matches!(read.contents.first(), Some(ResourceContents::Text(t))
                if t.text.starts_with("Resource 1: This is a plaintext resource created at"));
            report.check("resources/read.template_text", good, short(&read.contents));
        }
        Err(err) => report.fail("resources/read.template_text", err),
    }
    match client.read_resource("demo://resource/dynamic/blob/2").await {
        Ok(read) => {
            let decoded = match read.contents.first() {
                Some(ResourceContents::Blob(b)) => base64_decode(&b.blob),
                _ => None,
            };
            let text = decoded.map(|bytes| String::from_utf8_lossy(&bytes).into_owned());
            let good =
                text.as_deref().is_some_and(|t| t.starts_with("Resource 2: This is a base64 blob"));
            report.check("resources/read.template_blob", good, format!("decoded {text:?}"));
        }
        Err(err) => report.fail("resources/read.template_blob", err),
    }
    let missing = client.read_resource("demo://resource/dynamic/text/0").await;
    match &missing {
        Err(err) if err.as_mcp_error().is_some() => report.ok("resources/read.unknown"),
        other => {
            report.fail("resources/read.unknown", format!("want a JSON-RPC error, got {other:?}"))
        }
    }

    // A resource the server makes during the session (from a data: URL, so nothing leaves
    // the machine): a link to it, then the same bytes embedded. Registering it announces
    // `notifications/resources/list_changed`, on the standalone stream over HTTP.
    let gzip = json!({"name": "interop.txt.gz", "data": "data:text/plain,hello%20interop"});
    let linked = client.call_tool("gzip-file-as-resource", gzip.clone()).await;
    let session_uri = "demo://resource/session/interop.txt.gz";
    report.result("tools/call.gzip_resource_link", linked, |r| {
        matches!(r.content.first(), Some(ContentBlock::ResourceLink(link)) if link.uri == session_uri)
    });
    match client.read_resource(session_uri).await {
        Ok(read) => {
            let bytes = match read.contents.first() {
                Some(ResourceContents::Blob(b)) => base64_decode(&b.blob),
                _ => None,
            };
            let gzip_magic = bytes.as_deref().is_some_and(|b| b.starts_with(&[0x1f, 0x8b]));
            report.check("resources/read.session", gzip_magic, short(&read.contents));
        }
        Err(err) => report.fail("resources/read.session", err),
    }
    let mut embed = gzip;
    embed["outputType"] = json!("resource");
    let embedded = client.call_tool("gzip-file-as-resource", embed).await;
    report.result("tools/call.gzip_embedded", embedded, |r| match r.content.first() {
        Some(ContentBlock::Resource(embedded)) => match &embedded.resource {
            ResourceContents::Blob(b) => {
                b.uri == session_uri
                    && base64_decode(&b.blob).is_some_and(|b| b.starts_with(&[0x1f, 0x8b]))
            }
            _ => false,
        },
        _ => false,
    });

    // Prompts and completions.
    match client.list_prompts(None).await {
        Ok(page) => {
            let names: Vec<&str> = page.prompts.iter().map(|p| p.name.as_str()).collect();
            let want = ["simple-prompt", "args-prompt", "completable-prompt"];
            report.check(
                "prompts/list",
                want.iter().all(|w| names.contains(w)),
                format!("{names:?}"),
            );
        }
        Err(err) => report.fail("prompts/list", err),
    }
    let no_args: [(&str, &str); 0] = [];
    match client.get_prompt("simple-prompt", no_args).await {
        Ok(prompt) => {
            let got = prompt_text(&prompt.messages);
            report.check(
                "prompts/get.simple",
                got == "This is a simple prompt without arguments.",
                got,
            );
        }
        Err(err) => report.fail("prompts/get.simple", err),
    }
    match client.get_prompt("args-prompt", [("city", "Paris"), ("state", "Texas")]).await {
        Ok(prompt) => {
            let got = prompt_text(&prompt.messages);
            let user = prompt.messages.first().is_some_and(|m| m.role == Role::User);
            report.check("prompts/get.args", user && got == "What's weather in Paris, Texas?", got);
        }
        Err(err) => report.fail("prompts/get.args", err),
    }
    let reference = Reference::Prompt(PromptReference::new("completable-prompt"));
    match client.complete(reference, ("department", "En")).await {
        Ok(done) => {
            let values = done.completion.values;
            report.check(
                "completion/complete.prompt",
                values == ["Engineering"],
                format!("{values:?}"),
            );
        }
        Err(err) => report.fail("completion/complete.prompt", err),
    }
    let reference = Reference::Resource(ResourceTemplateReference::new(text_template));
    match client.complete(reference, ("resourceId", "7")).await {
        Ok(done) => {
            let values = done.completion.values;
            report.check("completion/complete.resource", values == ["7"], format!("{values:?}"));
        }
        Err(err) => report.fail("completion/complete.resource", err),
    }

    // 2026-07-28 has no stream for what a server sends on its own (only listen streams, for
    // list changes a client asks for): the checks below are the handshake era's.
    if client.era() == Era::Handshake {
        // Notifications the server sent on its own while all this ran (waiting a little for those
        // on the standalone stream): the roots sync logs a message (we asked for logs), and the
        // session resource was announced.
        let roots_logged =
            |logs: &[String]| logs.iter().any(|l| l.contains("Roots updated: 1 root(s)"));
        let announced = |methods: &[String], method: &str| methods.iter().any(|m| m == method);
        for _ in 0..60 {
            let logged = roots_logged(&lock(&logs));
            if logged && announced(&lock(&notifications), "notifications/resources/list_changed") {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let logged = lock(&logs).clone();
        report.check("notifications/message", roots_logged(&logged), format!("{logged:?}"));
        let methods = lock(&notifications).clone();
        let resources_changed = announced(&methods, "notifications/resources/list_changed");
        report.check(
            "notifications/resources/list_changed",
            resources_changed,
            format!("{methods:?}"),
        );
        // The conditional tools are registered while the server handles `initialized`; over
        // HTTP that is before any client has its GET stream open, and the TypeScript SDK
        // drops a message that has no stream to go to (the spec allows it), so only stdio
        // can see it.
        if transport == "stdio" {
            let tools_changed = announced(&methods, "notifications/tools/list_changed");
            let methods = format!("{methods:?}");
            report.check("notifications/tools/list_changed", tools_changed, methods);
        }
    }

    // Still answering after everything above.
    let again = client.call_tool("echo", json!({"message": "bye"})).await;
    report.result("tools/call.echo_again", again, |r| text(r, 0) == "Echo: bye");
    client.close().await;
    report.finish()
}

enum Target<'a> {
    Stdio(&'a str, &'a [String]),
    Http(&'a str),
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// The text of content block `index`, or a description of what is there instead.
fn text(result: &CallToolResult, index: usize) -> String {
    match result.content.get(index) {
        Some(ContentBlock::Text(block)) => block.text.clone(),
        other => format!("{other:?}"),
    }
}

fn prompt_text(messages: &[modelcontext::types::PromptMessage]) -> String {
    match messages.first().map(|m| &m.content) {
        Some(ContentBlock::Text(block)) => block.text.clone(),
        other => format!("{other:?}"),
    }
}

/// Debug output, cut to a readable length.
fn short(value: &impl std::fmt::Debug) -> String {
    let full = format!("{value:?}");
    match full.char_indices().nth(300) {
        Some((cut, _)) => format!("{}...", &full[..cut]),
        None => full,
    }
}

/// Standard base64 (with padding), as MCP blobs are.
fn base64_decode(input: &str) -> Option<Vec<u8>> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    };
    let bytes = input.trim_end_matches('=').as_bytes();
    let mut out = Vec::with_capacity(bytes.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for &c in bytes {
        acc = (acc << 6) | u32::from(value(c)?);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

/// Counts and prints checks, one line each.
struct Report {
    label: String,
    passed: usize,
    failed: usize,
}

impl Report {
    fn ok(&mut self, check: &str) {
        self.passed += 1;
        println!("ok {} {check}", self.label);
    }

    fn fail(&mut self, check: &str, why: impl std::fmt::Display) {
        self.failed += 1;
        println!("FAIL {} {check}: {why:#}", self.label);
    }

    fn check(&mut self, check: &str, passed: bool, got: String) {
        if passed { self.ok(check) } else { self.fail(check, format!("got {got}")) }
    }

    fn result<E: std::fmt::Display>(
        &mut self,
        check: &str,
        result: Result<CallToolResult, E>,
        want: impl Fn(&CallToolResult) -> bool,
    ) {
        match result {
            Ok(result) => {
                let passed = want(&result);
                self.check(check, passed, short(&result));
            }
            Err(err) => self.fail(check, err),
        }
    }

    /// A call the server must refuse: an `isError` result or a JSON-RPC error (not a timeout,
    /// not a dropped connection).
    fn refused(&mut self, check: &str, result: &Result<CallToolResult, modelcontext::Error>) {
        let refused = match result {
            Ok(result) => result.is_error(),
            Err(err) => err.as_mcp_error().is_some(),
        };
        self.check(check, refused, short(result));
    }

    fn fatal(mut self, check: &str, why: impl std::fmt::Display) -> ExitCode {
        self.fail(check, why);
        self.finish()
    }

    fn finish(self) -> ExitCode {
        println!("{} passed, {} failed", self.passed, self.failed);
        if self.failed == 0 { ExitCode::SUCCESS } else { ExitCode::FAILURE }
    }
}
