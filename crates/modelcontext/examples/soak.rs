//! The load and soak runner behind `RELIABILITY.md`: run by hand, never in CI, on 127.0.0.1
//! only, every loop bounded in count and in time.
//!
//! ```text
//! cargo build --release -p modelcontext --example soak
//! target/release/examples/soak streams [--kind get|listen|floor-get|floor-listen] [--count 10000] [--hold-secs 16]
//! target/release/examples/soak calls   [--count 1000000] [--workers 32] [--era mixed|handshake|modern]
//! target/release/examples/soak clients [--count 500] [--ops 20]
//! ```
//! `clients` connects every client first (half of each era with `--era mixed`), then runs
//! `--ops` checked operations per client (`tools/call`, `tools/list`, `resources/read`,
//! `prompts/get`, and `ping` or, in the modern era, which removed it, `prompts/list`).
//! Every subcommand also takes `--max-secs N` (default 600): past it, loops stop and the run
//! is reported as cut short.
//!
//! The server always runs in a child process (`soak serve`, the same binary), so the memory
//! reported is the server's alone: `VmRSS` and `VmHWM` from `/proc/<pid>/status`. The child
//! serves Streamable HTTP with default options, exits when its stdin closes (so it never
//! outlives the runner), and on a `touch` line on stdin publishes `tools/list_changed` to
//! every connected client.
//!
//! What an "idle SSE stream" is here, per era:
//! - `--kind get` (default): a 2025-11-25 session (`initialize`, `notifications/initialized`)
//!   holding its standalone `GET` stream open; the server keeps the session (its state, its
//!   `Peer` and its routes: no engine and no task while it is idle) and the stream per client.
//! - `--kind listen`: a 2026-07-28 `subscriptions/listen` request whose SSE answer stays open;
//!   the server keeps one short-lived engine and the stream per client.
//! - `--kind floor-get` / `floor-listen`: the same client steps against `soak serve-floor`, a
//!   bare axum endpoint that answers with fixed bytes and holds SSE streams open: roughly what
//!   an idle stream costs in the HTTP stack alone, below the SDK.
//!
//! For `get` and `listen` the streams are opened, held for `--hold-secs` (so every stream's keep-alive
//! comment timer fires at least once with the default 15 s), then sent one `tools/list_changed`
//! each, and the runner counts the streams that delivered it.

use std::net::SocketAddr;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use modelcontext::server::NoArgs;
use modelcontext::types::Era;
use modelcontext::{
    Client, EraMode, HttpTransport, McpServer, PromptDef, ResourceDef, ResourceError, ToolDef,
};
use serde::Deserialize;
use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::{Semaphore, watch};

type Error = Box<dyn std::error::Error + Send + Sync>;

fn main() -> Result<(), Error> {
    // Logs go to stderr (on stdio, stdout carries the protocol), filtered by `RUST_LOG`;
    // `RUST_LOG=modelcontext=debug` shows each request's span (method, target, id) as it closes.
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .with_span_events(tracing_subscriber::fmt::format::FmtSpan::CLOSE)
        .init();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    match args.first().map(String::as_str) {
        Some("serve") => runtime.block_on(serve()),
        Some("serve-floor") => runtime.block_on(serve_floor()),
        Some("streams") => runtime.block_on(streams(Options::parse(&args[1..])?)),
        Some("calls") => runtime.block_on(calls(Options::parse(&args[1..])?)),
        Some("clients") => runtime.block_on(clients(Options::parse(&args[1..])?)),
        _ => Err("usage: soak streams|calls|clients [--count N] [...] (see the file's doc)".into()),
    }
}

/// The command line, shared by every subcommand (each reads what it needs).
struct Options {
    count: Option<u64>,
    workers: usize,
    era: String,
    kind: String,
    hold: Duration,
    ops: usize,
    deadline: Instant,
}

impl Options {
    fn parse(args: &[String]) -> Result<Options, Error> {
        let mut options = Options {
            count: None,
            workers: 32,
            era: "mixed".into(),
            kind: "get".into(),
            hold: Duration::from_secs(16),
            ops: 20,
            deadline: Instant::now() + Duration::from_secs(600),
        };
        for pair in args.chunks(2) {
            let [flag, value] = pair else {
                return Err(format!("{pair:?}: flag without value").into());
            };
            match flag.as_str() {
                "--count" => options.count = Some(value.parse()?),
                "--workers" => options.workers = value.parse()?,
                "--era" => options.era = value.clone(),
                "--kind" => options.kind = value.clone(),
                "--hold-secs" => options.hold = Duration::from_secs(value.parse()?),
                "--ops" => options.ops = value.parse()?,
                "--max-secs" => {
                    options.deadline = Instant::now() + Duration::from_secs(value.parse()?)
                }
                other => return Err(format!("unknown flag {other}").into()),
            }
        }
        Ok(options)
    }

    fn late(&self) -> bool {
        Instant::now() >= self.deadline
    }
}

// ---------------------------------------------------------------------------------------
// The server (child process)
// ---------------------------------------------------------------------------------------

#[derive(Deserialize, schemars::JsonSchema)]
struct Pair {
    a: i64,
    b: i64,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct Id {
    id: String,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct Name {
    name: String,
}

/// What every run talks to: a tool, a resource template and a prompt.
fn server() -> Result<McpServer, modelcontext::Error> {
    let add = ToolDef::new("add", |Pair { a, b }: Pair| async move { a.wrapping_add(b) })
        .description("Add two integers.");
    let echo = ToolDef::new("ping_tool", |_: NoArgs| async { "pong" });
    let item = ResourceDef::new("soak://item/{id}", |Id { id }: Id| async move {
        Ok::<_, ResourceError>(format!("item {id}"))
    })
    .name("item");
    let greet =
        PromptDef::new("greet", |Name { name }: Name| async move { format!("Hello, {name}.") });
    McpServer::new("soak").version("1.0.0").tool(add)?.tool(echo)?.resource(item)?.prompt(greet)
}

/// `soak serve`: binds 127.0.0.1:0, prints `listening <addr>`, serves until stdin closes.
async fn serve() -> Result<(), Error> {
    raise_nofile();
    let server = server()?;
    let (addr, serving) = server.http_endpoint().bind("127.0.0.1:0").await?;
    println!("listening {addr}");
    tokio::spawn(serving);
    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    while let Some(line) = lines.next_line().await? {
        if line.trim() == "touch" {
            server.notify_tools_changed();
        }
    }
    Ok(())
}

/// `soak serve-floor`: `axum::serve` on hyper (TCP_NODELAY) with no MCP at all,
/// to tell what an idle stream costs below the SDK. `initialize` gets a fixed answer and a
/// session id, `notifications/initialized` a 202, and any other request an SSE stream that
/// sends the events our server would send first (priming, acknowledgement) and then nothing.
async fn serve_floor() -> Result<(), Error> {
    use axum::body::Body;
    use futures_util::StreamExt;
    raise_nofile();
    let handler = |request: axum::extract::Request| async move {
        let body = axum::body::to_bytes(request.into_body(), 1 << 20).await.unwrap_or_default();
        let text = String::from_utf8_lossy(&body);
        let response = http::Response::builder();
        if text.contains("\"initialize\"") {
            let answer = r#"{"jsonrpc":"2.0","id":1,"result":{}}"#;
            let response = response.header("content-type", "application/json");
            return response
                .header("mcp-session-id", "floor")
                .body(Body::from(answer))
                .unwrap_or_default();
        }
        if text.contains("notifications/initialized") {
            return response.status(202).body(Body::empty()).unwrap_or_default();
        }
        let first = "id: 0-0\ndata:\n\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/subscriptions/acknowledged\"}\n\n";
        let head = futures_util::stream::once(async move {
            Ok::<_, std::convert::Infallible>(Bytes::from(first))
        });
        let stream =
            head.chain(futures_util::stream::pending::<Result<Bytes, std::convert::Infallible>>());
        response
            .header("content-type", "text/event-stream")
            .body(Body::from_stream(stream))
            .unwrap_or_default()
    };
    let app = axum::Router::new().route("/mcp", axum::routing::any(handler));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    println!("listening {}", listener.local_addr()?);
    use axum::serve::ListenerExt;
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    tokio::spawn(async move { axum::serve(listener, app).await });
    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    while lines.next_line().await?.is_some() {}
    Ok(())
}

/// Raises the soft open-file limit to the hard one: 10,000 streams are 10,000 sockets.
/// `unsafe` because libc is the only way to call setrlimit without another dependency.
#[allow(unsafe_code)]
fn raise_nofile() {
    // SAFETY: getrlimit/setrlimit only read and write the struct we pass.
    unsafe {
        let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 {
            limit.rlim_cur = limit.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
        }
    }
}

/// The server child, its address, and the pipe that keeps it alive.
struct Server {
    child: Child,
    stdin: ChildStdin,
    addr: SocketAddr,
    pid: u32,
}

impl Server {
    async fn start() -> Result<Server, Error> {
        Server::start_as("serve").await
    }

    /// Starts `soak COMMAND`; with `SOAK_WRAP` set (`heaptrack`, say), under that program,
    /// whose own lines before the server's are skipped. Memory figures are then the
    /// wrapper's process, not the server's.
    async fn start_as(command: &str) -> Result<Server, Error> {
        let wrapper = std::env::var("SOAK_WRAP").ok().filter(|w| !w.is_empty());
        let mut child = match &wrapper {
            Some(wrapper) => {
                let mut child = Command::new(wrapper);
                child.arg(std::env::current_exe()?);
                child
            }
            None => Command::new(std::env::current_exe()?),
        };
        let mut child = child
            .arg(command)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()?;
        let stdin = child.stdin.take().ok_or("no stdin")?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let mut lines = BufReader::new(stdout).lines();
        let addr = loop {
            let line = lines.next_line().await?.ok_or("server exited")?;
            match line.strip_prefix("listening ") {
                Some(addr) => break addr.parse()?,
                None if wrapper.is_some() => continue,
                None => return Err("unexpected output".into()),
            }
        };
        let pid = child.id().ok_or("no pid")?;
        Ok(Server { child, stdin, addr, pid })
    }

    fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    /// `(VmRSS, VmHWM)` in KiB.
    fn memory(&self) -> (u64, u64) {
        let status =
            std::fs::read_to_string(format!("/proc/{}/status", self.pid)).unwrap_or_default();
        let field = |name: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
                .unwrap_or(0)
        };
        (field("VmRSS:"), field("VmHWM:"))
    }

    async fn touch(&mut self) -> Result<(), Error> {
        self.stdin.write_all(b"touch\n").await?;
        Ok(self.stdin.flush().await?)
    }

    async fn stop(mut self) {
        drop(self.stdin);
        let _ = tokio::time::timeout(Duration::from_secs(10), self.child.wait()).await;
    }
}

fn mib(kib: u64) -> String {
    format!("{:.1} MiB", kib as f64 / 1024.0)
}

// ---------------------------------------------------------------------------------------
// streams: many idle SSE streams on one server
// ---------------------------------------------------------------------------------------

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"soak","version":"1"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
const LISTEN: &str = r#"{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;

/// One HTTP/1.1 connection, driven by its own task.
async fn connect(addr: SocketAddr) -> Result<SendRequest<Full<Bytes>>, Error> {
    let tcp = TcpStream::connect(addr).await?;
    tcp.set_nodelay(true)?;
    let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(tcp)).await?;
    tokio::spawn(connection);
    Ok(sender)
}

async fn send(
    sender: &mut SendRequest<Full<Bytes>>,
    addr: SocketAddr,
    method: http::Method,
    headers: &[(&str, &str)],
    body: &'static str,
) -> Result<http::Response<Incoming>, Error> {
    let mut request = http::Request::builder()
        .method(method)
        .uri("/mcp")
        .header("host", addr.to_string())
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    sender.ready().await?;
    Ok(sender.send_request(request.body(Full::new(Bytes::from_static(body.as_bytes())))?).await?)
}

/// Reads frames until `needle` has arrived.
async fn read_until(body: &mut Incoming, needle: &str) -> Result<(), Error> {
    let mut seen = String::new();
    while !seen.contains(needle) {
        let frame = body.frame().await.ok_or("stream ended")??;
        if let Some(data) = frame.data_ref() {
            seen.push_str(&String::from_utf8_lossy(data));
        }
    }
    Ok(())
}

/// An open idle stream: the connection's sender and the response body being held.
type Stream = (SendRequest<Full<Bytes>>, Incoming);

/// A handshake-era session holding its standalone GET stream; returns once the priming event
/// arrived.
async fn open_get_stream(addr: SocketAddr) -> Result<Stream, Error> {
    let mut sender = connect(addr).await?;
    let init = send(&mut sender, addr, http::Method::POST, &[], INITIALIZE).await?;
    let session = init
        .headers()
        .get("mcp-session-id")
        .ok_or_else(|| format!("initialize: {}", init.status()))?;
    let session = session.to_str()?.to_owned();
    init.into_body().collect().await?;
    let headers = [("mcp-session-id", session.as_str()), ("mcp-protocol-version", "2025-11-25")];
    let ack = send(&mut sender, addr, http::Method::POST, &headers, INITIALIZED).await?;
    ack.into_body().collect().await?;
    let get = send(&mut sender, addr, http::Method::GET, &headers, "").await?;
    if get.status() != http::StatusCode::OK {
        return Err(format!("GET: {}", get.status()).into());
    }
    let mut body = get.into_body();
    // The priming event: an id (its form is the event store's) and no data.
    read_until(&mut body, "id: ").await?;
    Ok((sender, body))
}

/// A modern `subscriptions/listen` stream; returns once the acknowledgement arrived.
async fn open_listen_stream(addr: SocketAddr) -> Result<Stream, Error> {
    let mut sender = connect(addr).await?;
    let headers = [("mcp-protocol-version", "2026-07-28"), ("mcp-method", "subscriptions/listen")];
    let answer = send(&mut sender, addr, http::Method::POST, &headers, LISTEN).await?;
    if answer.status() != http::StatusCode::OK {
        return Err(format!("listen: {}", answer.status()).into());
    }
    let mut body = answer.into_body();
    read_until(&mut body, "subscriptions/acknowledged").await?;
    Ok((sender, body))
}

/// What the stream tasks report.
#[derive(Default)]
struct StreamTally {
    opened: AtomicUsize,
    failed: AtomicUsize,
    notified: AtomicUsize,
    ended_early: AtomicUsize,
}

/// Holds `stream` until `stop`, counting the `tools/list_changed` it delivers.
async fn hold(stream: Stream, tally: &StreamTally, mut stop: watch::Receiver<bool>) {
    let (_sender, mut body) = stream;
    let mut seen = String::new();
    loop {
        tokio::select! {
            frame = body.frame() => match frame {
                Some(Ok(frame)) => {
                    if let Some(data) = frame.data_ref() {
                        seen.push_str(&String::from_utf8_lossy(data));
                    }
                    if seen.contains("tools/list_changed") {
                        tally.notified.fetch_add(1, Ordering::Relaxed);
                        seen.clear();
                    }
                    if seen.len() > 4096 {
                        seen.clear();
                    }
                }
                _ => {
                    tally.ended_early.fetch_add(1, Ordering::Relaxed);
                    return;
                }
            },
            _ = stop.changed() => return,
        }
    }
}

async fn streams(options: Options) -> Result<(), Error> {
    raise_nofile();
    let count = options.count.unwrap_or(10_000) as usize;
    let floor = options.kind.starts_with("floor");
    let mut server = Server::start_as(if floor { "serve-floor" } else { "serve" }).await?;
    let (base, _) = server.memory();
    let tally = Arc::new(StreamTally::default());
    let (stop_tx, stop_rx) = watch::channel(false);
    // At most 256 connection attempts at once: the listener's backlog is finite.
    let opening = Arc::new(Semaphore::new(256));
    let started = Instant::now();
    let mut tasks = Vec::with_capacity(count);
    for _ in 0..count {
        let permit = opening.clone().acquire_owned().await?;
        if options.late() {
            break;
        }
        let (tally, stop, addr, kind) =
            (tally.clone(), stop_rx.clone(), server.addr, options.kind.clone());
        tasks.push(tokio::spawn(async move {
            let opened = if kind.ends_with("listen") {
                open_listen_stream(addr).await
            } else {
                open_get_stream(addr).await
            };
            if opened.is_ok() {
                tally.opened.fetch_add(1, Ordering::Relaxed);
            }
            drop(permit);
            match opened {
                Ok(stream) => hold(stream, &tally, stop).await,
                Err(err) => {
                    if tally.failed.fetch_add(1, Ordering::Relaxed) < 5 {
                        eprintln!("open failed: {err:#}");
                    }
                }
            }
        }));
    }
    let _ = opening.acquire_many(256).await?;
    let open_secs = started.elapsed().as_secs_f64();
    let opened = tally.opened.load(Ordering::Relaxed);
    let (after_open, _) = server.memory();
    println!(
        "streams kind={} requested={count} opened={opened} failed={} in {open_secs:.1} s",
        options.kind,
        tally.failed.load(Ordering::Relaxed)
    );
    println!(
        "server VmRSS: idle {} -> all open {} ({:.1} KiB per stream)",
        mib(base),
        mib(after_open),
        (after_open.saturating_sub(base)) as f64 / opened.max(1) as f64
    );
    let hold_until = (Instant::now() + options.hold).min(options.deadline);
    tokio::time::sleep_until(hold_until.into()).await;
    if !floor {
        server.touch().await?;
    }
    let waited = Instant::now();
    // The floor server sends no notifications: nothing to wait for.
    while !floor
        && tally.notified.load(Ordering::Relaxed) + tally.ended_early.load(Ordering::Relaxed)
            < opened
        && waited.elapsed() < Duration::from_secs(60)
        && !options.late()
    {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (rss, hwm) = server.memory();
    println!(
        "after {:.0} s held: list_changed delivered on {}/{opened} streams in {:.1} s; ended early: {}",
        options.hold.as_secs_f64(),
        tally.notified.load(Ordering::Relaxed),
        waited.elapsed().as_secs_f64(),
        tally.ended_early.load(Ordering::Relaxed)
    );
    println!(
        "server VmRSS {} VmHWM {} (limit 200 MiB: {})",
        mib(rss),
        mib(hwm),
        if hwm <= 200 * 1024 { "met" } else { "NOT MET" }
    );
    let _ = stop_tx.send(true);
    for task in tasks {
        let _ = task.await;
    }
    server.stop().await;
    Ok(())
}

// ---------------------------------------------------------------------------------------
// calls: a million tools/call with RSS sampled
// ---------------------------------------------------------------------------------------

/// One client of the run, in the era the run asks for (`mixed`: alternate by worker).
async fn connect_client(url: &str, era: &str, n: usize) -> Result<Client, Error> {
    let mode = match era {
        "handshake" => EraMode::Handshake,
        "modern" => EraMode::Modern,
        _ if n % 2 == 0 => EraMode::Handshake,
        _ => EraMode::Modern,
    };
    let transport = HttpTransport::new(url)?;
    Ok(Client::builder()
        .era(mode)
        .timeout(Some(Duration::from_secs(30)))
        .connect(transport)
        .await?)
}

/// `add(i, 1)` must come back as `i + 1`, structured.
async fn checked_add(client: &Client, i: i64) -> Result<(), String> {
    let result =
        client.call_tool("add", json!({"a": i, "b": 1})).await.map_err(|e| format!("{e:#}"))?;
    let got =
        result.structured_content.as_ref().and_then(|s| s.get("result")).and_then(|v| v.as_i64());
    match (result.is_error, got) {
        (None | Some(false), Some(sum)) if sum == i + 1 => Ok(()),
        _ => Err(format!("add({i}, 1) answered {result:?}")),
    }
}

/// Counts and the first few messages of what went wrong.
#[derive(Default)]
struct Errors {
    count: AtomicU64,
    first: std::sync::Mutex<Vec<String>>,
}

impl Errors {
    fn record(&self, message: String) {
        self.count.fetch_add(1, Ordering::Relaxed);
        let mut first = self.first.lock().unwrap_or_else(|e| e.into_inner());
        if first.len() < 5 {
            first.push(message);
        }
    }

    fn report(&self) -> String {
        let first = self.first.lock().unwrap_or_else(|e| e.into_inner());
        format!("{} {:?}", self.count.load(Ordering::Relaxed), *first)
    }
}

async fn calls(options: Options) -> Result<(), Error> {
    let total = options.count.unwrap_or(1_000_000);
    let server = Arc::new(Server::start().await?);
    let next = Arc::new(AtomicU64::new(0));
    let done = Arc::new(AtomicU64::new(0));
    let errors = Arc::new(Errors::default());
    let deadline = options.deadline;
    let mut workers = Vec::new();
    for n in 0..options.workers {
        let client = connect_client(&server.url(), &options.era, n).await?;
        let (next, done, errors) = (next.clone(), done.clone(), errors.clone());
        workers.push(tokio::spawn(async move {
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= total || Instant::now() >= deadline {
                    break;
                }
                if let Err(e) = checked_add(&client, i as i64).await {
                    errors.record(e);
                }
                done.fetch_add(1, Ordering::Relaxed);
            }
            client.close().await;
        }));
    }
    let started = Instant::now();
    let stopped = Arc::new(AtomicBool::new(false));
    let sampler = {
        let (server, done, stopped) = (server.clone(), done.clone(), stopped.clone());
        tokio::spawn(async move { sample(&server, &done, total, &stopped).await })
    };
    for worker in workers {
        worker.await?;
    }
    stopped.store(true, Ordering::Relaxed);
    let secs = started.elapsed().as_secs_f64();
    let samples = sampler.await?;
    let calls = done.load(Ordering::Relaxed);
    println!(
        "calls: {calls} of {total} ({} era, {} clients) in {secs:.1} s = {:.0}/s; errors: {}",
        options.era,
        options.workers,
        calls as f64 / secs,
        errors.report()
    );
    report_plateau(&samples, calls, server.memory().1);
    if let Ok(server) = Arc::try_unwrap(server) {
        server.stop().await;
    }
    Ok(())
}

/// `(calls done, VmRSS KiB)` every 1 % of the run, until `total` calls are done or the
/// workers stopped (a run cut short by `--max-secs`).
async fn sample(
    server: &Server,
    done: &AtomicU64,
    total: u64,
    stopped: &AtomicBool,
) -> Vec<(u64, u64)> {
    let mut samples = vec![(0, server.memory().0)];
    let step = (total / 100).max(1);
    let mut next = step;
    loop {
        tokio::time::sleep(Duration::from_millis(20)).await;
        let now = done.load(Ordering::Relaxed);
        let over = now >= total || stopped.load(Ordering::Relaxed);
        if now >= next || over {
            samples.push((now, server.memory().0));
            next = now + step;
        }
        if over {
            return samples;
        }
    }
}

/// Prints the samples and whether RSS stopped growing over the second half of the calls.
fn report_plateau(samples: &[(u64, u64)], calls: u64, hwm: u64) {
    let line: Vec<String> = samples
        .iter()
        .step_by((samples.len() / 10).max(1))
        .map(|(n, rss)| format!("{}k:{}", n / 1000, mib(*rss)))
        .collect();
    println!("server VmRSS by calls done: {}", line.join(" "));
    let half = calls / 2;
    let Some(&(at, mid)) = samples.iter().find(|(n, _)| *n >= half) else {
        println!("too few samples for a plateau verdict");
        return;
    };
    let second_max =
        samples.iter().filter(|(n, _)| *n >= half).map(|(_, r)| *r).max().unwrap_or(mid);
    let end = samples.last().map_or(mid, |s| s.1);
    let growth = second_max.saturating_sub(mid);
    // Allocator noise on a steady state is a few hundred KiB; 2 % of RSS is the tolerance.
    let plateau = growth * 50 <= mid;
    println!(
        "second half (from {at} calls): RSS {} at the midpoint, {} max, {} at the end; growth {} KiB -> {}; VmHWM {}",
        mib(mid),
        mib(second_max),
        mib(end),
        growth,
        if plateau { "plateau" } else { "STILL GROWING" },
        mib(hwm)
    );
}

// ---------------------------------------------------------------------------------------
// clients: many concurrent clients of both eras
// ---------------------------------------------------------------------------------------

/// One operation of a client's mix, checked; `k` picks it.
async fn operation(client: &Client, k: usize) -> Result<(), String> {
    let wrong = |what: &str| format!("{:?} era, op {k}: {what}", client.era());
    match k % 5 {
        0 => checked_add(client, k as i64).await,
        1 => {
            let tools = client.list_all_tools().await.map_err(|e| wrong(&format!("{e:#}")))?;
            tools.iter().any(|t| t.name == "add").then_some(()).ok_or_else(|| wrong("no add tool"))
        }
        2 => {
            let uri = format!("soak://item/{k}");
            let read = client.read_resource(&uri).await.map_err(|e| wrong(&format!("{e:#}")))?;
            let text = serde_json::to_string(&read.contents).unwrap_or_default();
            text.contains(&format!("item {k}")).then_some(()).ok_or_else(|| wrong(&text))
        }
        3 => {
            let prompt = client
                .get_prompt("greet", [("name", "Ada")])
                .await
                .map_err(|e| wrong(&format!("{e:#}")))?;
            let text = serde_json::to_string(&prompt.messages).unwrap_or_default();
            text.contains("Hello, Ada.").then_some(()).ok_or_else(|| wrong(&text))
        }
        // `ping` is handshake-era only (2026-07-28 removed it): modern clients list prompts.
        _ if client.era() == Era::Handshake => {
            client.ping().await.map_err(|e| wrong(&format!("{e:#}")))
        }
        _ => {
            let prompts = client.list_prompts(None).await.map_err(|e| wrong(&format!("{e:#}")))?;
            let found = prompts.prompts.iter().any(|p| p.name == "greet");
            found.then_some(()).ok_or_else(|| wrong("no greet prompt"))
        }
    }
}

async fn clients(options: Options) -> Result<(), Error> {
    raise_nofile();
    let count = options.count.unwrap_or(500) as usize;
    let server = Server::start().await?;
    let (base, _) = server.memory();
    let errors = Arc::new(Errors::default());
    let ops_done = Arc::new(AtomicU64::new(0));
    // Everyone connects, then everyone works, then everyone closes: all `count` clients are
    // connected at once for the whole mix.
    let connected = Arc::new(tokio::sync::Barrier::new(count));
    let worked = Arc::new(tokio::sync::Barrier::new(count));
    let started = Instant::now();
    let tasks: Vec<_> = (0..count)
        .map(|n| {
            let (url, era, errors, ops_done) =
                (server.url(), options.era.clone(), errors.clone(), ops_done.clone());
            let (connected, worked, ops, deadline) =
                (connected.clone(), worked.clone(), options.ops, options.deadline);
            tokio::spawn(async move {
                let client = connect_client(&url, &era, n).await;
                connected.wait().await;
                let client = match client {
                    Ok(client) => client,
                    Err(e) => {
                        errors.record(format!("connect: {e:#}"));
                        worked.wait().await;
                        return None;
                    }
                };
                for k in 0..ops {
                    if Instant::now() >= deadline {
                        break;
                    }
                    if let Err(e) = operation(&client, n + k).await {
                        errors.record(e);
                    }
                    ops_done.fetch_add(1, Ordering::Relaxed);
                }
                worked.wait().await;
                let era = client.era();
                client.close().await;
                Some(era)
            })
        })
        .collect();
    let mut eras = std::collections::HashMap::new();
    for task in tasks {
        if let Some(era) = task.await? {
            *eras.entry(format!("{era:?}")).or_insert(0) += 1;
        }
    }
    let (rss, hwm) = server.memory();
    println!(
        "clients: {count} concurrent ({eras:?}), {} operations in {:.1} s; errors: {}",
        ops_done.load(Ordering::Relaxed),
        started.elapsed().as_secs_f64(),
        errors.report()
    );
    println!("server VmRSS idle {} -> after {}; VmHWM {}", mib(base), mib(rss), mib(hwm));
    server.stop().await;
    Ok(())
}
