//! Our client over Streamable HTTP, checked against a real server: the official Python SDK's
//! (`tests/interop/python_http_server.py`, started by `scripts/interop-python.sh`).
//!
//! ```sh
//! python tests/interop/python_http_server.py 8000 &
//! cargo run --example http_client -- http://127.0.0.1:8000/mcp --era handshake
//! ```
//!
//! An `https://` URL works the same way; a private CA is trusted through `SSL_CERT_FILE`
//! (`scripts/interop-python.sh` serves the Python server behind TLS with one).
//!
//! `--era` is `auto` (probe with `server/discover`, fall back to `initialize`), `handshake`
//! (2025-11-25: `initialize`, a session id, DELETE at the end), `modern` (2026-07-28: every
//! request stateless, with the `Mcp-*` routing headers) or `legacy-sse` (as `handshake`, for a
//! server that only speaks the 2024-11-05 HTTP+SSE transport: point the URL at its SSE
//! endpoint; the refused `initialize` makes the client fall back). Each check prints `ok <era> <check>`
//! or `FAIL <era> <check>: <why>`; the last line is `N passed, M failed` and the exit code is 1
//! when anything failed.

use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use modelcontext::client::CallOptions;
use modelcontext::transport::http::HttpTransport;
use modelcontext::types::Era;
use modelcontext::{CallToolResult, Client, ContentBlock, EraMode};
use serde_json::json;

#[tokio::main]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (url, era) = match args.as_slice() {
        [url] => (url.as_str(), "auto"),
        [url, flag, era] if flag == "--era" => (url.as_str(), era.as_str()),
        _ => {
            eprintln!("usage: http_client <url> [--era auto|handshake|modern|legacy-sse]");
            return ExitCode::from(2);
        }
    };
    let (mode, want_era, want_version) = match era {
        "auto" => (EraMode::Auto, Era::Modern, "2026-07-28"),
        "handshake" => (EraMode::Handshake, Era::Handshake, "2025-11-25"),
        "modern" => (EraMode::Modern, Era::Modern, "2026-07-28"),
        "legacy-sse" => (EraMode::Handshake, Era::Handshake, "2025-11-25"),
        other => {
            eprintln!("unknown era {other:?}: use auto, handshake, modern or legacy-sse");
            return ExitCode::from(2);
        }
    };
    let mut report = Report { era, passed: 0, failed: 0 };

    // Connecting is the first check: negotiation (and, for `handshake`, the session) happens here.
    let transport = match HttpTransport::new(url) {
        Ok(transport) => transport,
        Err(err) => return report.fatal("connect", err),
    };
    let builder = Client::builder().era(mode).timeout(Some(Duration::from_secs(10)));
    let client = match builder.connect(transport).await {
        Ok(client) => client,
        Err(err) => return report.fatal("connect", err),
    };
    report.ok("connect");
    report.check("era", client.era() == want_era, format!("{:?}", client.era()));
    report.check(
        "protocol_version",
        client.protocol_version() == want_version,
        client.protocol_version().to_owned(),
    );
    let name = client.server_info().map(|info| info.name.clone());
    report.check("server_info", name.as_deref() == Some("PyInterop"), format!("{name:?}"));

    match client.list_all_tools().await {
        Ok(tools) => {
            let mut names: Vec<_> = tools.iter().map(|t| t.name.as_str()).collect();
            names.sort();
            let want = ["add", "count", "fail", "region"];
            report.check(
                "list_tools",
                want.iter().all(|w| names.contains(w)),
                format!("{names:?}"),
            );
        }
        Err(err) => report.fail("list_tools", err),
    }

    // A JSON or SSE answer, whichever the server picks.
    let added = client.call_tool("add", json!({"a": 2, "b": 3})).await;
    report.result("call_tool.add", added, |r| !r.is_error() && text(r) == "5");

    // A tool that raises: a result with `isError`, carrying the message, not a JSON-RPC error.
    let failed = client.call_tool("fail", json!({"message": "boom"})).await;
    report.result("call_tool.fail", failed, |r| r.is_error() && text(r).contains("boom"));

    // Progress arrives on the request's SSE stream, before the response.
    let progress = Arc::new(Mutex::new(Vec::new()));
    let sink = progress.clone();
    let options = CallOptions::new().on_progress(move |p| {
        sink.lock().unwrap_or_else(|e| e.into_inner()).push(p.progress);
    });
    let counted = client.call_tool_with("count", json!({"steps": 3}), &options).await;
    let seen = progress.lock().unwrap_or_else(|e| e.into_inner()).clone();
    report.check("call_tool.count.progress", seen.len() == 3, format!("progress {seen:?}"));
    report.result("call_tool.count", counted, |r| text(r) == "counted to 3");

    // `region` is annotated `x-mcp-header`: in 2026-07-28 it travels as `Mcp-Param-Region`
    // too, base64-wrapped because it is not ASCII, and the server checks it against the body.
    let region = client.call_tool("region", json!({"region": "Zürich"})).await;
    report.result("call_tool.region", region, |r| text(r) == "region=Zürich");

    let unknown = client.call_tool("no_such_tool", json!({})).await;
    let refused = match &unknown {
        Ok(result) => result.is_error(),
        Err(err) => err.as_mcp_error().is_some(),
    };
    report.check("call_tool.unknown", refused, format!("{unknown:?}"));

    client.close().await;

    // A fresh client that calls `region` without listing first: in 2026-07-28 it cannot know
    // the `Mcp-Param-Region` header yet, the server refuses the call (HeaderMismatch), and the
    // transport lists the tools and retries once.
    let fresh = match HttpTransport::new(url) {
        Ok(transport) => Client::builder().era(mode).connect(transport).await,
        Err(err) => Err(err),
    };
    match fresh {
        Ok(fresh) => {
            let region = fresh.call_tool("region", json!({"region": "us-east"})).await;
            report.result("call_tool.region.unlisted", region, |r| text(r) == "region=us-east");
            fresh.close().await;
        }
        Err(err) => report.fail("call_tool.region.unlisted", err),
    }
    report.finish()
}

/// The text of a result's first content block.
fn text(result: &CallToolResult) -> String {
    match result.content.first() {
        Some(ContentBlock::Text(block)) => block.text.clone(),
        other => format!("{other:?}"),
    }
}

/// Counts and prints checks, one line each.
struct Report<'a> {
    era: &'a str,
    passed: usize,
    failed: usize,
}

impl Report<'_> {
    fn ok(&mut self, check: &str) {
        self.passed += 1;
        println!("ok {} {check}", self.era);
    }

    fn fail(&mut self, check: &str, why: impl std::fmt::Display) {
        self.failed += 1;
        println!("FAIL {} {check}: {why:#}", self.era);
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
                self.check(check, passed, format!("{:?}", result.content));
            }
            Err(err) => self.fail(check, err),
        }
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
