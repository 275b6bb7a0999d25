//! The floor of the 2026-07-28 era: the least a server must do to answer the harness's modern
//! cells correctly, written by hand, so that our modern-era rows have a floor of their own
//! wire format to be compared with (the harness's floor speaks only the handshake era, whose
//! requests and results are shorter).
//!
//! It does what the harness's floor does (parse each message into a `serde_json::Value`, answer
//! `tools/call add|echo` and `tools/list`, no validation, no state) plus what the modern era
//! makes every request and result carry, and nothing else:
//! - a request's `params._meta` must name a supported `io.modelcontextprotocol/protocolVersion`
//!   and carry `io.modelcontextprotocol/clientCapabilities` (else -32602);
//! - over HTTP, the `MCP-Protocol-Version` header must equal that version (else 400);
//! - every result carries `resultType` and `_meta["io.modelcontextprotocol/serverInfo"]`, and
//!   `server/discover` (which the harness sends first) is answered.
//!
//!   server-floor-modern [--transport stdio|http] [--host 127.0.0.1] [--port 8000] [--tools N]
//!
//! stdio: blocking std I/O on one thread, flushing when no further input is buffered.
//! http: hyper 1 (HTTP/1.1) on a multi-thread tokio runtime, JSON responses, no sessions.

use std::io::{BufRead, Write};
use std::sync::Arc;

use serde_json::{Value, json};

const VERSION: &str = "2026-07-28";
const VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";
const CAPABILITIES_KEY: &str = "io.modelcontextprotocol/clientCapabilities";
const SERVER_INFO_KEY: &str = "io.modelcontextprotocol/serverInfo";

struct Floor {
    /// `{"io.modelcontextprotocol/serverInfo": {...}}`, the `_meta` of every result.
    meta: Value,
    /// The `tools/list` result, serialized once, as the harness's floor does.
    tools_list: String,
}

impl Floor {
    fn new(extra_tools: usize) -> Floor {
        let meta = json!({ (SERVER_INFO_KEY): {"name": "mcpbench-floor-modern", "version": "0.1.0"} });
        let integer = json!({"type": "integer"});
        let string = json!({"type": "string"});
        let mut tools = vec![
            tool("add", "Add two integers", json!({"a": integer, "b": integer}), &["a", "b"], &integer),
            tool("echo", "Echo the text back", json!({"text": string}), &["text"], &string),
        ];
        tools.extend((0..extra_tools).map(generated_tool));
        let list = json!({"_meta": meta, "resultType": "complete", "tools": tools, "ttlMs": 0, "cacheScope": "private"});
        Floor { meta, tools_list: list.to_string() }
    }

    /// The answer to one message, written to `out`; nothing for a notification.
    fn answer(&self, message: &Value, out: &mut Vec<u8>) {
        let Some(id) = message.get("id") else { return };
        let method = message.get("method").and_then(Value::as_str).unwrap_or("");
        let params = message.get("params");
        if let Err(missing) = check_envelope(params) {
            return write_error(out, id, -32602, &format!("Missing required _meta field '{missing}'"));
        }
        let result = match method {
            "server/discover" => json!({
                "_meta": self.meta, "resultType": "complete", "supportedVersions": [VERSION],
                "capabilities": {"tools": {}}, "ttlMs": 0, "cacheScope": "private",
            }),
            "tools/list" => return self.write_tools_list(out, id),
            "tools/call" => match self.call(params) {
                Ok(result) => result,
                Err(message) => return write_error(out, id, -32602, message),
            },
            _ => return write_error(out, id, -32601, "method not found"),
        };
        write_json(out, &json!({"jsonrpc": "2.0", "id": id, "result": result}));
    }

    fn call(&self, params: Option<&Value>) -> Result<Value, &'static str> {
        let name = params.and_then(|p| p.get("name")).and_then(Value::as_str).unwrap_or("");
        let argument = |key: &str| params.and_then(|p| p.get("arguments")).and_then(|a| a.get(key));
        let (text, structured) = match name {
            "add" => {
                let a = argument("a").and_then(Value::as_i64);
                let b = argument("b").and_then(Value::as_i64);
                let (Some(a), Some(b)) = (a, b) else { return Err("add needs integer a and b") };
                let sum = a.wrapping_add(b);
                (Value::String(sum.to_string()), json!({"result": sum}))
            }
            "echo" => {
                let Some(text) = argument("text").and_then(Value::as_str) else {
                    return Err("echo needs string text");
                };
                (Value::String(text.to_owned()), json!({"result": text}))
            }
            _ => return Err("unknown tool"),
        };
        Ok(json!({
            "_meta": self.meta, "resultType": "complete",
            "content": [{"type": "text", "text": text}], "structuredContent": structured, "isError": false,
        }))
    }

    fn write_tools_list(&self, out: &mut Vec<u8>, id: &Value) {
        out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
        write_json(out, id);
        out.extend_from_slice(b",\"result\":");
        out.extend_from_slice(self.tools_list.as_bytes());
        out.push(b'}');
    }
}

/// The modern envelope: a supported version and the client's capabilities, or the key missing.
fn check_envelope(params: Option<&Value>) -> Result<(), &'static str> {
    let meta = params.and_then(|p| p.get("_meta"));
    match meta.and_then(|m| m.get(VERSION_KEY)).and_then(Value::as_str) {
        Some(VERSION) => {}
        _ => return Err(VERSION_KEY),
    }
    match meta.and_then(|m| m.get(CAPABILITIES_KEY)) {
        Some(Value::Object(_)) => Ok(()),
        _ => Err(CAPABILITIES_KEY),
    }
}

fn tool(name: &str, description: &str, properties: Value, required: &[&str], output: &Value) -> Value {
    json!({
        "name": name, "description": description,
        "inputSchema": {"type": "object", "properties": properties, "required": required},
        "outputSchema": {"type": "object", "properties": {"result": output}, "required": ["result"]},
    })
}

/// The generated tools every server of the harness lists.
fn generated_tool(i: usize) -> Value {
    json!({
        "name": format!("tool_{i:04}"),
        "description": format!("Generated tool number {i} for tools/list benchmarks"),
        "inputSchema": {
            "type": "object",
            "properties": {"x": {"type": "integer", "description": "an integer"}, "y": {"type": "string", "description": "a string"}},
            "required": ["x"],
        },
    })
}

fn write_error(out: &mut Vec<u8>, id: &Value, code: i64, message: &str) {
    write_json(out, &json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}));
}

fn write_json(out: &mut Vec<u8>, value: &Value) {
    // A `Value` always serializes, and writing into a Vec cannot fail.
    let _ = serde_json::to_writer(&mut *out, value);
}

fn run_stdio(floor: Floor) {
    let mut input = std::io::BufReader::with_capacity(1 << 16, std::io::stdin().lock());
    let mut output = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let (mut line, mut reply) = (Vec::with_capacity(4096), Vec::with_capacity(4096));
    loop {
        line.clear();
        if !matches!(input.read_until(b'\n', &mut line), Ok(n) if n > 0) {
            break;
        }
        let message = line.trim_ascii();
        if !message.is_empty() {
            reply.clear();
            match serde_json::from_slice::<Value>(message) {
                Ok(message) => floor.answer(&message, &mut reply),
                Err(_) => write_error(&mut reply, &Value::Null, -32700, "parse error"),
            }
            if !reply.is_empty() {
                reply.push(b'\n');
                let _ = output.write_all(&reply);
            }
        }
        if input.buffer().is_empty() && output.flush().is_err() {
            break;
        }
    }
    let _ = output.flush();
}

fn run_http(floor: Floor, host: &str, port: u16) {
    use bytes::Bytes;
    use http_body_util::{BodyExt, Full};
    use hyper::{Method, Request, Response, StatusCode};

    type Reply = Response<Full<Bytes>>;
    fn reply(status: StatusCode, body: Vec<u8>) -> Reply {
        let mut response = Response::new(Full::new(Bytes::from(body)));
        *response.status_mut() = status;
        if status != StatusCode::ACCEPTED && status != StatusCode::METHOD_NOT_ALLOWED {
            response.headers_mut().insert("content-type", hyper::header::HeaderValue::from_static("application/json"));
        }
        response
    }
    async fn handle(floor: Arc<Floor>, request: Request<hyper::body::Incoming>) -> Result<Reply, hyper::Error> {
        if request.method() != Method::POST {
            return Ok(reply(StatusCode::METHOD_NOT_ALLOWED, Vec::new()));
        }
        let header_version = request.headers().get("mcp-protocol-version").map(|v| v.as_bytes() == VERSION.as_bytes());
        let body = request.into_body().collect().await?.to_bytes();
        let mut out = Vec::with_capacity(256);
        let Ok(message) = serde_json::from_slice::<Value>(&body) else {
            write_error(&mut out, &Value::Null, -32700, "parse error");
            return Ok(reply(StatusCode::BAD_REQUEST, out));
        };
        if header_version != Some(true) {
            let id = message.get("id").unwrap_or(&Value::Null);
            write_error(&mut out, id, -32600, "MCP-Protocol-Version must be 2026-07-28");
            return Ok(reply(StatusCode::BAD_REQUEST, out));
        }
        floor.answer(&message, &mut out);
        Ok(if out.is_empty() { reply(StatusCode::ACCEPTED, out) } else { reply(StatusCode::OK, out) })
    }

    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("a tokio runtime");
    runtime.block_on(async move {
        let floor = Arc::new(floor);
        let listener = tokio::net::TcpListener::bind((host, port)).await.expect("the port is free");
        eprintln!("server-floor-modern: listening on http://{host}:{port}/mcp");
        loop {
            let Ok((stream, _)) = listener.accept().await else { continue };
            let _ = stream.set_nodelay(true);
            let floor = Arc::clone(&floor);
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |request| handle(Arc::clone(&floor), request));
                let io = hyper_util::rt::TokioIo::new(stream);
                let _ = hyper::server::conn::http1::Builder::new().serve_connection(io, service).await;
            });
        }
    });
}

fn main() {
    let (mut transport, mut host, mut port, mut tools) = ("stdio".to_owned(), "127.0.0.1".to_owned(), 8000u16, 0usize);
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next().unwrap_or_else(|| panic!("{flag} needs a value"));
        match flag.as_str() {
            "--transport" => transport = value,
            "--host" => host = value,
            "--port" => port = value.parse().expect("--port takes a number"),
            "--tools" => tools = value.parse().expect("--tools takes a number"),
            other => panic!("unknown argument {other}"),
        }
    }
    let floor = Floor::new(tools);
    match transport.as_str() {
        "stdio" => run_stdio(floor),
        "http" => run_http(floor, &host, port),
        other => panic!("unknown transport {other}"),
    }
}
