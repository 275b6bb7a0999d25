//! The floor's work in a binary of our size: what a process that only parses and answers costs
//! to start and to hold when it carries everything `bench_server` carries.
//!
//! Cold start and resident memory depend on the binary as much as on the work done: the kernel
//! maps an executable's pages as they are first touched (16 at a time, around each fault), and
//! the loader relocates every pointer in its read-only data. `scripts/bench.sh` runs this
//! binary in the stdio cells and the stdio cold start beside the harness's floor and
//! `bench_server`, so the share of our figures that comes from the size of the binary is
//! measured in the same run, not argued.
//!
//! ```text
//! sized_floor            # stdio: a hand-written handshake-era server (the floor's work)
//! sized_floor --tokio    # the same work inside the tokio runtime bench_server builds
//! sized_floor --sdk ...  # bench_server itself, with bench_server's arguments
//! ```
//!
//! `--tokio` measures what every tokio-based SDK pays before its own code runs: the runtime
//! `#[tokio::main(flavor = "current_thread")]` builds (IO, time and, with tokio's `process` or
//! `signal` feature compiled in, signal drivers), then the floor's loop, unchanged, inside
//! `block_on`. Its start above the plain floor's is the runtime's; `bench_server`'s above it is
//! the SDK's own.
//!
//! The `--sdk` branch is what keeps the whole SDK linked: `bench_server`'s `main` is compiled
//! into this binary and reachable, so the linker cannot drop it.
//!
//! The stdio server answers `initialize`, `ping`, `tools/list` and `tools/call` of `add` and
//! `echo` (text plus `structuredContent`), one message per line, on one thread with blocking
//! std I/O, flushing when no further input is buffered: what the harness checks, and no more.

use std::io::{BufRead, Write};

use serde_json::{Value, json};

// Its own `main` is unused here; `main_with` is the `--sdk` branch.
#[allow(dead_code)]
#[path = "main.rs"]
mod bench_server;

fn main() -> Result<(), modelcontext::Error> {
    match std::env::args().nth(1).as_deref() {
        Some("--sdk") => return bench_server::main_with(std::env::args().skip(2)),
        Some("--tokio") => {
            // The runtime bench_server builds for stdio, with the same drivers enabled.
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
            runtime.block_on(async { serve_floor() });
        }
        _ => serve_floor(),
    }
    Ok(())
}

fn serve_floor() {
    let mut input = std::io::BufReader::with_capacity(1 << 16, std::io::stdin().lock());
    let mut output = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let (mut line, mut reply) = (Vec::with_capacity(4096), Vec::with_capacity(4096));
    loop {
        line.clear();
        if !matches!(input.read_until(b'\n', &mut line), Ok(n) if n > 0) {
            break;
        }
        reply.clear();
        answer_line(line.trim_ascii(), &mut reply);
        if !reply.is_empty() {
            reply.push(b'\n');
            let _ = output.write_all(&reply);
        }
        if input.buffer().is_empty() && output.flush().is_err() {
            break;
        }
    }
    let _ = output.flush();
}

/// The answer to one line, appended to `out`; nothing for a notification or a blank line.
fn answer_line(line: &[u8], out: &mut Vec<u8>) {
    if line.is_empty() {
        return;
    }
    let message = match serde_json::from_slice::<Value>(line) {
        Ok(message) => message,
        Err(_) => return write_error(out, &Value::Null, -32700, "Parse error"),
    };
    let Some(id) = message.get("id") else { return };
    let params = message.get("params");
    let result = match message.get("method").and_then(Value::as_str).unwrap_or("") {
        "initialize" => initialize_result(params),
        "ping" => json!({}),
        "tools/list" => json!({"tools": [
            tool("add", "Add two integers", json!({"a": {"type": "integer"}, "b": {"type": "integer"}}), &["a", "b"]),
            tool("echo", "Echo the text back", json!({"text": {"type": "string"}}), &["text"]),
        ]}),
        "tools/call" => match call(params) {
            Ok(result) => result,
            Err(message) => return write_error(out, id, -32602, message),
        },
        _ => return write_error(out, id, -32601, "Method not found"),
    };
    write_json(out, &json!({"jsonrpc": "2.0", "id": id, "result": result}));
}

fn initialize_result(params: Option<&Value>) -> Value {
    const SUPPORTED: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];
    let asked = params.and_then(|p| p.get("protocolVersion")).and_then(Value::as_str);
    let version = asked.filter(|v| SUPPORTED.contains(v)).unwrap_or(SUPPORTED[0]);
    json!({
        "protocolVersion": version,
        "capabilities": {"tools": {"listChanged": false}},
        "serverInfo": {"name": "sized-floor", "version": env!("CARGO_PKG_VERSION")},
    })
}

fn call(params: Option<&Value>) -> Result<Value, &'static str> {
    let argument = |key: &str| params.and_then(|p| p.get("arguments")).and_then(|a| a.get(key));
    let (text, structured) = match params.and_then(|p| p.get("name")).and_then(Value::as_str) {
        Some("add") => {
            let (Some(a), Some(b)) =
                (argument("a").and_then(Value::as_i64), argument("b").and_then(Value::as_i64))
            else {
                return Err("add needs integers a and b");
            };
            let sum = a.wrapping_add(b);
            (sum.to_string(), json!({"result": sum}))
        }
        Some("echo") => {
            let Some(text) = argument("text").and_then(Value::as_str) else {
                return Err("echo needs a string text");
            };
            (text.to_owned(), json!({"result": text}))
        }
        _ => return Err("unknown tool"),
    };
    Ok(
        json!({"content": [{"type": "text", "text": text}], "structuredContent": structured, "isError": false}),
    )
}

fn tool(name: &str, description: &str, properties: Value, required: &[&str]) -> Value {
    json!({
        "name": name,
        "description": description,
        "inputSchema": {"type": "object", "properties": properties, "required": required},
    })
}

fn write_error(out: &mut Vec<u8>, id: &Value, code: i64, message: &str) {
    write_json(
        out,
        &json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}),
    );
}

fn write_json(out: &mut Vec<u8>, value: &Value) {
    // A `Value` always serializes, and writing into a Vec cannot fail.
    let _ = serde_json::to_writer(&mut *out, value);
}
