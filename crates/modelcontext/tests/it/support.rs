//! Shared fixtures: a Bookshop built with the hand-written API, a raw wire harness, and
//! validation of every message against the official schema of the revision in use.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use modelcontext::types::{INVALID_PARAMS, Message};
use modelcontext::{
    CallOptions, EraMode, McpError, McpServer, PromptDef, ResourceDef, ResourceError, Stdio,
    ToolDef, ToolError,
};
use serde::Deserialize;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines};

use modelcontext::schemars::JsonSchema;

const CATALOG: &[(&str, &str)] = &[("Dune", "Frank Herbert"), ("Neuromancer", "William Gibson")];

fn lookup(title: &str) -> Option<&'static str> {
    CATALOG.iter().find(|(t, _)| *t == title).map(|(_, a)| *a)
}

#[derive(Deserialize, JsonSchema)]
#[schemars(crate = "modelcontext::schemars")]
pub struct TitleArgs {
    title: String,
}

fn default_limit() -> i64 {
    10
}

#[derive(Deserialize, JsonSchema)]
#[schemars(crate = "modelcontext::schemars")]
pub struct SearchArgs {
    /// Title or author to search for.
    query: String,
    /// Maximum number of results.
    #[serde(default = "default_limit")]
    #[schemars(range(min = 1, max = 50))]
    limit: i64,
}

/// The seed's Bookshop, written without macros, plus fixtures for the crash paths.
pub fn bookshop() -> McpServer {
    try_bookshop().expect("the bookshop registers")
}

fn try_bookshop() -> Result<McpServer, modelcontext::Error> {
    let get_author = ToolDef::new("get_author", |TitleArgs { title }: TitleArgs| async move {
        lookup(&title)
            .map(str::to_owned)
            .ok_or_else(|| format!("No book titled '{title}' in the catalog."))
    })
    .description("Look up the author of a book in the catalog.");
    let get_author_strict =
        ToolDef::new("get_author_strict", |TitleArgs { title }: TitleArgs| async move {
            lookup(&title).map(str::to_owned).ok_or_else(|| {
                McpError::new(INVALID_PARAMS, format!("No book titled '{title}' in the catalog."))
            })
        });
    let search_books = ToolDef::new("search_books", |args: SearchArgs| async move {
        let needle = args.query.to_lowercase();
        let hits: Vec<&str> = CATALOG
            .iter()
            .filter(|(t, a)| {
                t.to_lowercase().contains(&needle) || a.to_lowercase().contains(&needle)
            })
            .map(|(t, _)| *t)
            .take(args.limit as usize)
            .collect();
        hits.join("\n")
    })
    .description("Search the catalog by title or author.");
    let add = ToolDef::new("add", |Pair { a, b }: Pair| async move { a + b });
    let boom = ToolDef::new("boom", || async move {
        if true {
            panic!("secret internals");
        }
    });
    let model_error = ToolDef::new("model_error", || async move {
        Err::<String, _>(ToolError::new("try a shorter title"))
    });
    let book = ResourceDef::new("books://{title}", |TitleArgs { title }: TitleArgs| async move {
        match lookup(&title) {
            Some(author) => Ok(format!("{title} by {author}")),
            None => {
                Err(ResourceError::not_found(format!("No book titled '{title}' in the catalog.")))
            }
        }
    })
    .name("book");
    let broken =
        ResourceDef::new("broken://{title}", |TitleArgs { title }: TitleArgs| async move {
            Err::<String, _>(ResourceError::new(format!("backend down for {title}")))
        });
    let review = PromptDef::new("review", |TitleArgs { title }: TitleArgs| async move {
        format!("Write a two-sentence review of {title}.")
    })
    .description("Ask for a short review of a book.");
    McpServer::new("Bookshop")
        .version("1.0.0")
        .instructions("Use search_books.")
        .tool(get_author)?
        .tool(get_author_strict)?
        .tool(search_books)?
        .tool(add)?
        .tool(boom)?
        .tool(model_error)?
        .resource(book)?
        .resource(broken)?
        .prompt(review)
}

#[derive(Deserialize, JsonSchema)]
#[schemars(crate = "modelcontext::schemars")]
pub struct Pair {
    a: i64,
    b: i64,
}

/// The `_meta` envelope of a 2026-07-28 request, as JSON text to splice into literal lines.
pub const MODERN_META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

/// A server on the other end of an in-memory byte pipe, spoken to in literal JSON lines.
pub struct Wire {
    writer: DuplexStream,
    reader: Lines<BufReader<DuplexStream>>,
    /// The revision whose schema every received message must satisfy.
    pub revision: &'static str,
    methods: HashMap<String, String>,
}

impl Wire {
    pub fn start(server: McpServer, revision: &'static str) -> Wire {
        Wire::start_with(server, revision, |stdio| stdio)
    }

    pub fn start_with(
        server: McpServer,
        revision: &'static str,
        configure: impl FnOnce(
            Stdio<BufReader<DuplexStream>, DuplexStream>,
        ) -> Stdio<BufReader<DuplexStream>, DuplexStream>,
    ) -> Wire {
        let (client_write, server_read) = tokio::io::duplex(1 << 20);
        let (server_write, client_read) = tokio::io::duplex(1 << 20);
        let stdio = configure(Stdio::new(BufReader::new(server_read), server_write));
        tokio::spawn(async move { server.serve(stdio).await });
        Wire {
            writer: client_write,
            reader: BufReader::new(client_read).lines(),
            revision,
            methods: HashMap::new(),
        }
    }

    /// A wire whose server end `serve` runs (for `serve_with` and custom set-ups); schema
    /// checks use 2026-07-28.
    pub fn start_serving<F, Fut>(serve: F) -> Wire
    where
        F: FnOnce(Stdio<BufReader<DuplexStream>, DuplexStream>) -> Fut,
        Fut: std::future::Future<Output = ()> + Send + 'static,
    {
        let (client_write, server_read) = tokio::io::duplex(1 << 20);
        let (server_write, client_read) = tokio::io::duplex(1 << 20);
        tokio::spawn(serve(Stdio::new(BufReader::new(server_read), server_write)));
        Wire {
            writer: client_write,
            reader: BufReader::new(client_read).lines(),
            revision: "2026-07-28",
            methods: HashMap::new(),
        }
    }

    /// Sends one line exactly as given.
    pub async fn send(&mut self, line: &str) {
        if let Ok(Message::Request(request)) = Message::decode_str(line) {
            self.methods.insert(request.id.to_string(), request.method);
        }
        self.send_bytes(line.as_bytes()).await;
    }

    /// Sends raw bytes as one line (they may be invalid UTF-8 on purpose).
    pub async fn send_bytes(&mut self, bytes: &[u8]) {
        self.writer.write_all(bytes).await.expect("write");
        self.writer.write_all(b"\n").await.expect("write");
    }

    /// The next line from the server, checked against the schema.
    pub async fn recv(&mut self) -> String {
        let line = self.recv_unchecked().await;
        self.validate(&line);
        line
    }

    /// The next line from the server, not checked against the schema (an error without an
    /// id, which the 2025-03-26 schema has no room for).
    pub async fn recv_unchecked(&mut self) -> String {
        tokio::time::timeout(Duration::from_secs(5), self.reader.next_line())
            .await
            .expect("the server answered within 5 s")
            .expect("read")
            .expect("the server kept the stream open")
    }

    /// Sends a line and returns the answer.
    pub async fn call(&mut self, line: &str) -> String {
        self.send(line).await;
        self.recv().await
    }

    fn validate(&self, line: &str) {
        let value: Value = serde_json::from_str(line).expect("the server sent JSON");
        assert_valid(self.revision, "JSONRPCMessage", &value);
        if let Some(def) = value.get("method").and_then(|m| m.as_str()).and_then(message_definition)
        {
            assert_valid(self.revision, def, &value);
        }
        if value.get("method") == Some(&Value::from("notifications/tasks")) {
            assert_valid(TASKS_SCHEMA, "TaskStatusNotification", &value);
        }
        let method = value.get("id").and_then(|id| self.methods.get(&id.to_string()));
        if let (Some(result), Some(method)) = (value.get("result"), method) {
            let input_required = result.get("resultType") == Some(&Value::from("input_required"));
            if let Some(def) = task_result_definition(method, result) {
                assert_valid(TASKS_SCHEMA, def, result);
                return;
            }
            let def = if input_required {
                Some("InputRequiredResult")
            } else {
                result_definition(method)
            };
            if let Some(def) = def {
                assert_valid(self.revision, def, result);
            }
        }
    }

    /// Asserts the connection still serves: `ping` in the handshake era, `tools/list` in the modern one.
    pub async fn assert_alive(&mut self) {
        let line = if self.revision == "2026-07-28" {
            format!(
                r#"{{"jsonrpc":"2.0","id":"alive","method":"tools/list","params":{{{MODERN_META}}}}}"#
            )
        } else {
            r#"{"jsonrpc":"2.0","id":"alive","method":"ping"}"#.to_owned()
        };
        let answer: Value = serde_json::from_str(&self.call(&line).await).expect("json");
        assert_eq!(answer["id"], "alive", "{answer}");
        assert!(answer.get("result").is_some(), "still serving: {answer}");
    }

    /// Closes the server's input (end of file) and returns every line it sends until it
    /// closes its output.
    pub async fn finish(mut self) -> Vec<String> {
        self.writer.shutdown().await.expect("shutdown");
        let mut lines = Vec::new();
        loop {
            let next = tokio::time::timeout(Duration::from_secs(5), self.reader.next_line())
                .await
                .expect("the server closed its output within 5 s");
            match next.expect("read") {
                Some(line) => lines.push(line),
                None => return lines,
            }
        }
    }

    pub async fn initialize(&mut self) {
        self.initialize_with("{}").await;
    }

    /// `initialize` declaring `capabilities` (a JSON object, as text).
    pub async fn initialize_with(&mut self, capabilities: &str) {
        let answer = self.call(&format!(r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"2025-11-25","capabilities":{capabilities},"clientInfo":{{"name":"wire","version":"1"}}}}}}"#)).await;
        assert!(answer.contains(r#""protocolVersion":"2025-11-25""#), "{answer}");
        self.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).await;
    }
}

/// The `_meta` envelope of a 2026-07-28 request declaring `capabilities` (JSON text), plus any
/// `extra` members (JSON text, e.g. `"progressToken":1`), to splice into literal lines.
pub fn modern_meta(capabilities: &str, extra: &str) -> String {
    let sep = if extra.is_empty() { "" } else { "," };
    format!(
        r#""_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{capabilities}{sep}{extra}}}"#
    )
}

/// The schema definition of a whole message the server sends with `method`.
fn message_definition(method: &str) -> Option<&'static str> {
    Some(match method {
        "notifications/message" => "LoggingMessageNotification",
        "notifications/progress" => "ProgressNotification",
        "notifications/cancelled" => "CancelledNotification",
        "notifications/tools/list_changed" => "ToolListChangedNotification",
        "notifications/resources/list_changed" => "ResourceListChangedNotification",
        "notifications/prompts/list_changed" => "PromptListChangedNotification",
        "notifications/resources/updated" => "ResourceUpdatedNotification",
        "notifications/subscriptions/acknowledged" => "SubscriptionsAcknowledgedNotification",
        "elicitation/create" => "ElicitRequest",
        "sampling/createMessage" => "CreateMessageRequest",
        "roots/list" => "ListRootsRequest",
        _ => return None,
    })
}

/// The tasks extension's schema (`testdata/ext-tasks/`), for [`assert_valid`].
pub const TASKS_SCHEMA: &str = "ext-tasks";

/// The tasks extension's definition of a result of `method`, when it is one of its shapes.
fn task_result_definition(method: &str, result: &Value) -> Option<&'static str> {
    Some(match method {
        "tools/call" if result.get("resultType") == Some(&Value::from("task")) => {
            "CreateTaskResult"
        }
        "tasks/get" => "GetTaskResult",
        "tasks/update" => "UpdateTaskResult",
        "tasks/cancel" => "CancelTaskResult",
        _ => return None,
    })
}

/// The schema definition of the result of `method`.
pub fn result_definition(method: &str) -> Option<&'static str> {
    Some(match method {
        "initialize" => "InitializeResult",
        "server/discover" => "DiscoverResult",
        "ping" | "logging/setLevel" => "EmptyResult",
        "tools/list" => "ListToolsResult",
        "tools/call" => "CallToolResult",
        "resources/list" => "ListResourcesResult",
        "resources/templates/list" => "ListResourceTemplatesResult",
        "resources/read" => "ReadResourceResult",
        "prompts/list" => "ListPromptsResult",
        "prompts/get" => "GetPromptResult",
        "completion/complete" => "CompleteResult",
        _ => return None,
    })
}

type Validators = HashMap<(String, String), jsonschema::Validator>;

/// Validates `value` against `#/$defs/<definition>` of `testdata/spec/<revision>/schema.json`
/// (vendored), or of `testdata/ext-tasks/schema.json` for [`TASKS_SCHEMA`].
#[track_caller]
pub fn assert_valid(revision: &str, definition: &str, value: &Value) {
    static CACHE: OnceLock<Mutex<Validators>> = OnceLock::new();
    let mut cache = CACHE.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
    let validator = cache
        .entry((revision.to_owned(), definition.to_owned()))
        .or_insert_with(|| compile(revision, definition));
    let problems: Vec<String> =
        validator.iter_errors(value).map(|e| format!("{} at {}", e, e.instance_path())).collect();
    assert!(
        problems.is_empty(),
        "{revision} {definition} rejects {value}:\n{}",
        problems.join("\n")
    );
}

fn compile(revision: &str, definition: &str) -> jsonschema::Validator {
    let folder =
        if revision == TASKS_SCHEMA { revision.to_owned() } else { format!("spec/{revision}") };
    let path = format!("{}/../../testdata/{folder}/schema.json", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut schema: Value = serde_json::from_str(&text).expect("schema JSON");
    let defs = if schema.get("$defs").is_some() { "$defs" } else { "definitions" };
    schema["$ref"] = Value::from(format!("#/{defs}/{definition}"));
    jsonschema::validator_for(&schema).expect("the official schema compiles")
}

/// `method` with `params` (JSON object members, as text) sent to a fresh `server()` in each
/// era over the wire, every message checked against its revision's schema: the handshake
/// era's result, then the modern one's (`_meta` added). `capabilities` are the client's.
pub async fn in_both_eras(
    server: impl Fn() -> McpServer,
    capabilities: &str,
    method: &str,
    params: &str,
) -> [Value; 2] {
    let sep = if params.is_empty() { "" } else { "," };
    let mut old = Wire::start(server(), "2025-11-25");
    old.initialize_with(capabilities).await;
    let line = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{{{params}}}}}"#);
    let old: Value = serde_json::from_str(&old.call(&line).await).expect("json");
    let mut new = Wire::start(server(), "2026-07-28");
    let meta = modern_meta(capabilities, "");
    let line = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{{{params}{sep}{meta}}}}}"#
    );
    let new: Value = serde_json::from_str(&new.call(&line).await).expect("json");
    [old, new]
}

/// Serves `server` over Streamable HTTP on a free 127.0.0.1 port; its URL.
#[cfg(feature = "http")]
pub async fn serve_http(server: McpServer) -> String {
    let (addr, serve) = server.http_endpoint().bind("127.0.0.1:0").await.expect("bind");
    tokio::spawn(serve);
    format!("http://{addr}/mcp")
}

/// A client of `server` in `mode`, in memory (`http == false`) or over HTTP.
pub async fn connect(
    server: McpServer,
    builder: modelcontext::ClientBuilder,
    http: bool,
) -> modelcontext::Client {
    #[cfg(feature = "http")]
    if http {
        let url = serve_http(server).await;
        let transport = modelcontext::HttpTransport::new(&url).expect("url");
        return builder.connect(transport).await.expect("connects over HTTP");
    }
    let _ = http;
    builder.connect(server.in_memory()).await.expect("connects in memory")
}

/// The transports every feature test runs over: in memory (the stdio framing), and HTTP when
/// the feature is on.
pub const TRANSPORTS: &[bool] = if cfg!(feature = "http") { &[false, true] } else { &[false] };

/// Calls `tool` with `arguments` on `server` `rounds` times, over every transport in both
/// eras, and checks that each call's three progress updates (the tool's last one sent right
/// before its answer) all reached the caller before the answer did.
pub async fn check_progress_comes_first(
    server: &McpServer,
    tool: &str,
    arguments: Value,
    rounds: usize,
) {
    for &http in TRANSPORTS {
        for era in [EraMode::Handshake, EraMode::Modern] {
            let builder = modelcontext::Client::builder().era(era);
            let client = connect(server.clone(), builder, http).await;
            for _ in 0..rounds {
                let seen = Arc::new(Mutex::new(Vec::new()));
                let log = Arc::clone(&seen);
                let options = CallOptions::new()
                    .on_progress(move |p| log.lock().expect("lock").push(p.progress));
                let answer = client.call_tool_with(tool, arguments.clone(), &options).await;
                answer.expect("answered");
                assert_eq!(*seen.lock().expect("lock"), [1.0, 2.0, 3.0], "http {http}, {era:?}");
            }
        }
    }
}
