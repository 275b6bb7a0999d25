//! The server the SDK-neutral load harness measures (`scripts/bench.sh` runs it; the harness
//! is kept outside the repository): the same contract as its reference servers, written the
//! way a user would write it. `#[tool]` functions, argument validation on, the default server configuration and
//! the default HTTP options; nothing here exists only to make a benchmark faster.
//!
//! ```text
//! bench_server [--transport stdio|http] [--host 127.0.0.1] [--port 8000] [--tools N]
//! ```
//!
//! - `add(a, b)`: the sum as text plus `structuredContent: {"result": a + b}`.
//! - `echo(text)`: the text back, as one text block.
//! - `--tools N`: N more tools `tool_0000`.. with the harness's shared input schema
//!   (`{x: integer, y?: string}`), for the `tools/list` cell.
//! - stdio by default; `--transport http` serves Streamable HTTP at
//!   `http://127.0.0.1:<port>/mcp` (TCP_NODELAY, loopback-only Host/Origin by default).

use modelcontext::{McpServer, ToolDef, tool};
use serde::Deserialize;
use serde_json::{Map, Value, json};

/// Add two integers
#[tool]
fn add(
    #[arg(description = "first addend")] a: i64,
    #[arg(description = "second addend")] b: i64,
) -> i64 {
    a.wrapping_add(b)
}

/// Echo the text back
#[tool]
fn echo(#[arg(description = "text to send back")] text: String) -> String {
    text
}

/// The arguments of a generated tool; its advertised schema is the harness's shared one.
#[derive(Deserialize, schemars::JsonSchema)]
#[allow(dead_code)]
struct Generated {
    x: i64,
    y: Option<String>,
}

/// The input schema every reference server gives its generated tools.
fn generated_schema() -> Map<String, Value> {
    let schema = json!({
        "type": "object",
        "properties": {
            "x": {"type": "integer", "description": "an integer"},
            "y": {"type": "string", "description": "a string"}
        },
        "required": ["x"]
    });
    match schema {
        Value::Object(schema) => schema,
        _ => Map::new(),
    }
}

fn generated_tool(i: usize, schema: &Map<String, Value>) -> ToolDef {
    ToolDef::new(format!("tool_{i:04}"), |_: Generated| async { "ok" })
        .description(format!("Generated tool number {i} for tools/list benchmarks"))
        .input_schema(schema.clone())
}

fn server(extra_tools: usize) -> Result<McpServer, modelcontext::Error> {
    let schema = generated_schema();
    McpServer::new("modelcontext-bench")
        .version(env!("CARGO_PKG_VERSION"))
        .tool(add::tool())?
        .tool(echo::tool())?
        .tools((0..extra_tools).map(|i| generated_tool(i, &schema)))
}

/// The command line, as the harness's reference servers take it.
struct Options {
    transport: String,
    host: String,
    port: u16,
    tools: usize,
}

fn parse_args(mut args: impl Iterator<Item = String>) -> Result<Options, String> {
    let mut options =
        Options { transport: "stdio".into(), host: "127.0.0.1".into(), port: 8000, tools: 0 };
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--transport" => options.transport = value()?,
            "--host" => options.host = value()?,
            "--port" => options.port = value()?.parse().map_err(|e| format!("--port: {e}"))?,
            "--tools" => options.tools = value()?.parse().map_err(|e| format!("--tools: {e}"))?,
            "-h" | "--help" => {
                return Err("bench_server [--transport stdio|http] [--host 127.0.0.1] \
                            [--port 8000] [--tools N]"
                    .into());
            }
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok(options)
}

fn main() -> Result<(), modelcontext::Error> {
    main_with(std::env::args().skip(1))
}

/// The server run with these arguments (also `sized_floor --sdk`'s, which compiles this file in).
pub(crate) fn main_with(args: impl Iterator<Item = String>) -> Result<(), modelcontext::Error> {
    // Logs go to stderr (on stdio, stdout carries the protocol), filtered by `RUST_LOG`;
    // `RUST_LOG=modelcontext=debug` shows each request's span (method, target, id) as it closes.
    // Without `RUST_LOG` no subscriber is installed, as the harness's reference servers install
    // none: the registry's span slabs and the filter's parsing are the logger's start-up cost,
    // not the SDK's (36 of the process's 265 page faults at start; BENCHMARKS.md).
    if std::env::var_os("RUST_LOG").is_some() {
        tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
            .with_writer(std::io::stderr)
            .with_span_events(tracing_subscriber::fmt::format::FmtSpan::CLOSE)
            .init();
    }
    let options = parse_args(args).unwrap_or_else(|message| {
        eprintln!("{message}");
        std::process::exit(2);
    });
    let server = server(options.tools)?;
    // A stdio server has one connection: a current-thread runtime serves it without waking
    // other threads (the advice of the crate docs, "Choosing a runtime"). HTTP serves many
    // connections, so it gets a worker per core.
    let runtime = match options.transport.as_str() {
        "stdio" => tokio::runtime::Builder::new_current_thread().enable_all().build(),
        _ => tokio::runtime::Builder::new_multi_thread().enable_all().build(),
    };
    let runtime = runtime?;
    runtime.block_on(serve(server, options))
}

async fn serve(server: McpServer, options: Options) -> Result<(), modelcontext::Error> {
    match options.transport.as_str() {
        "stdio" => server.run_stdio().await,
        #[cfg(feature = "http")]
        "http" => {
            let addr = format!("{}:{}", options.host, options.port);
            let (bound, serve) = server.http_endpoint().bind(&addr).await?;
            eprintln!("bench_server: listening on http://{bound}/mcp");
            serve.await
        }
        other => {
            let known = if cfg!(feature = "http") {
                "stdio or http"
            } else {
                "stdio: built without `http`"
            };
            eprintln!("unknown transport {other} ({known})");
            std::process::exit(2);
        }
    }
}
