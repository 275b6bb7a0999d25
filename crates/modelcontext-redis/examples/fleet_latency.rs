//! What a fleet on Redis adds to each call, measured side by side in one run: the same calls
//! through the same round-robin proxy, against one instance without Redis, then against two
//! instances sharing a Redis (bus, session store, event store, peer router). Prints a table:
//! latency per call (p50 and p99), what the fleet adds at the median, and the Redis commands
//! per call counted with `INFO commandstats`; then the bus latency, from a publish on B to the
//! notification on A.
//!
//! Run it by hand, in release (a debug build measures the debug build), on loopback:
//!
//! ```sh
//! cargo run --release -p modelcontext-redis --example fleet_latency
//! cargo run --release -p modelcontext-redis --example fleet_latency -- --calls 5000
//! ```
//!
//! It starts its own `redis-server` (from `PATH`, on a free loopback port, nothing saved),
//! or uses `--redis URL` (then the command counts include whatever else uses that Redis).

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use modelcontext::server::NoArgs;
use modelcontext::transport::http::HttpTransport;
use modelcontext::types::{ServerNotification, SubscriptionFilter};
use modelcontext::{Client, Context, EraMode, HttpOptions, McpServer, ResourceDef, ToolDef};
use modelcontext_redis::Deployment;
use support::commands_run;

#[path = "../tests/it/proxy.rs"]
mod proxy;
// The test's own `redis-server`; the example uses only part of it.
#[allow(dead_code)]
#[path = "../tests/it/support.rs"]
mod support;

/// Commands left out of the count: the connections' set-up and keep-alive, and the count's own.
const IGNORED: [&str; 4] = ["info", "hello", "client|setinfo", "ping"];

/// Calls made before measuring, on each path: connections made, sessions rebuilt on both
/// instances, allocators warm.
const WARM_UP: usize = 100;
/// Calls measured on each path unless `--calls` says otherwise.
const DEFAULT_CALLS: usize = 2_000;
/// Most calls one path may be asked for: the run stays short.
const MAX_CALLS: usize = 100_000;
/// Bus events timed one at a time.
const BUS_EVENTS: usize = 1_000;
/// The most one bus event may take before the run gives up on it.
const BUS_DEADLINE: Duration = Duration::from_secs(1);

/// One way of calling a tool.
struct Path {
    name: &'static str,
    era: EraMode,
    tool: &'static str,
    /// The endpoints answer every POST with one JSON body (`HttpOptions::json_response`).
    json: bool,
}

const PATHS: [Path; 4] = [
    Path { name: "2026-07-28, `ping`", era: EraMode::Modern, tool: "ping", json: false },
    Path {
        name: "2025-11-25, `ping` (JSON answer)",
        era: EraMode::Handshake,
        tool: "ping",
        json: false,
    },
    Path {
        name: "2025-11-25, `work` (SSE answer)",
        era: EraMode::Handshake,
        tool: "work",
        json: false,
    },
    Path {
        name: "2025-11-25, `work`, `json_response`",
        era: EraMode::Handshake,
        tool: "work",
        json: true,
    },
];

/// `ping` answers at once; `work` logs one line first, so its answer is an SSE stream (the
/// log, then the result), or with `json_response` the log goes to the session's GET stream.
fn server() -> Result<McpServer, modelcontext::Error> {
    let work = ToolDef::new("work", |cx: Context, _: NoArgs| async move {
        cx.info("working").await;
        "done"
    });
    McpServer::new("bench")
        .tool(ToolDef::new("ping", || async { "pong" }))?
        .tool(work)?
        .resource(ResourceDef::new("books://Dune", || async { "Dune" }))
}

/// Serves `server` with `options` on a loopback port.
async fn serve(
    server: &McpServer,
    options: HttpOptions,
) -> Result<SocketAddr, modelcontext::Error> {
    let (addr, serving) = server.http_endpoint_with(options).bind("127.0.0.1:0").await?;
    tokio::spawn(serving);
    Ok(addr)
}

/// One instance without Redis, behind the proxy.
async fn single(json: bool) -> Result<SocketAddr, Box<dyn std::error::Error>> {
    let addr = serve(&server()?, HttpOptions::default().json_response(json)).await?;
    Ok(proxy::round_robin(vec![addr]).await)
}

/// Two instances of one deployment on Redis, behind the proxy: each request goes to the next.
async fn fleet(
    deployment: &Deployment,
    json: bool,
) -> Result<SocketAddr, Box<dyn std::error::Error>> {
    let mut instances = Vec::new();
    for _ in 0..2 {
        let server = server()?.subscription_bus(deployment.bus().await?);
        let options = HttpOptions::default()
            .json_response(json)
            .session_store(Arc::new(deployment.session_store()?))
            .event_store(Arc::new(deployment.event_store()?))
            .peer_router(Arc::new(deployment.peer_router()?));
        instances.push(serve(&server, options).await?);
    }
    Ok(proxy::round_robin(instances).await)
}

/// A client of `path`'s era through `proxy`, after [`WARM_UP`] calls (connections made, the
/// session rebuilt on every instance, as any long-lived session is).
async fn warmed(proxy: SocketAddr, path: &Path) -> Result<Client, Box<dyn std::error::Error>> {
    let transport = HttpTransport::new(&format!("http://{proxy}/mcp"))?;
    let client = Client::builder().era(path.era).connect(transport).await?;
    for _ in 0..WARM_UP {
        client.call_tool(path.tool, serde_json::json!({})).await?;
    }
    Ok(client)
}

/// The time of each of `calls` calls of `tool`, one at a time, sorted.
async fn time_calls(
    client: &Client,
    tool: &str,
    calls: usize,
) -> Result<Vec<Duration>, modelcontext::Error> {
    let mut times = Vec::with_capacity(calls);
    for _ in 0..calls {
        let started = Instant::now();
        client.call_tool(tool, serde_json::json!({})).await?;
        times.push(started.elapsed());
    }
    times.sort_unstable();
    Ok(times)
}

/// The `q` quantile (0 to 1) of sorted `times`.
fn quantile(times: &[Duration], q: f64) -> Duration {
    let last = times.len().saturating_sub(1);
    times.get((last as f64 * q).round() as usize).copied().unwrap_or_default()
}

fn micros(duration: Duration) -> String {
    format!("{:.0} µs", duration.as_secs_f64() * 1e6)
}

/// `b - a` in microseconds, signed: run-to-run noise can make it negative.
fn added(a: Duration, b: Duration) -> String {
    format!("{:+.0} µs", (b.as_secs_f64() - a.as_secs_f64()) * 1e6)
}

/// The commands run between `before` and `after`, per call: `xadd 1.00, pexpire 2.00`.
fn per_call(before: &BTreeMap<String, u64>, after: &BTreeMap<String, u64>, calls: usize) -> String {
    let counts: Vec<String> = after
        .iter()
        .filter_map(|(name, total)| {
            let run = total - before.get(name).copied().unwrap_or(0);
            (run > 0).then(|| format!("`{name}` {:.2}", run as f64 / calls as f64))
        })
        .collect();
    if counts.is_empty() { "0".to_owned() } else { counts.join(", ") }
}

/// The time from `publish` on one server to the notification on `listener`'s stream, for
/// [`BUS_EVENTS`] events one at a time, sorted.
async fn bus_latency(
    publisher: &McpServer,
    listener: &McpServer,
) -> Result<Vec<Duration>, Box<dyn std::error::Error>> {
    let client = Client::builder().era(EraMode::Modern).connect(listener.in_memory()).await?;
    let filter =
        SubscriptionFilter::default().with_resource_subscriptions(vec!["books://Dune".into()]);
    let mut stream = client.listen(filter).await?;
    let mut times = Vec::with_capacity(BUS_EVENTS);
    for _ in 0..BUS_EVENTS {
        let started = Instant::now();
        publisher.notify_resource_updated("books://Dune");
        match tokio::time::timeout(BUS_DEADLINE, stream.next()).await {
            Ok(Some(ServerNotification::ResourceUpdated(_))) => times.push(started.elapsed()),
            other => return Err(format!("no update within {BUS_DEADLINE:?}: {other:?}").into()),
        }
    }
    times.sort_unstable();
    Ok(times)
}

fn parse_args() -> Option<(Option<String>, usize)> {
    let (mut redis, mut calls) = (None, DEFAULT_CALLS);
    let mut words = std::env::args().skip(1);
    while let Some(word) = words.next() {
        match word.as_str() {
            "--redis" => redis = Some(words.next()?),
            "--calls" => {
                calls = words.next()?.parse().ok().filter(|n| (1..=MAX_CALLS).contains(n))?
            }
            _ => return None,
        }
    }
    Some((redis, calls))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let Some((url, calls)) = parse_args() else {
        eprintln!("usage: fleet_latency [--redis URL] [--calls N (1 to {MAX_CALLS})]");
        std::process::exit(2);
    };
    let own = match url {
        Some(_) => None,
        None => Some(support::RedisServer::start().await.ok_or("no redis-server on PATH")?),
    };
    let url =
        url.unwrap_or_else(|| own.as_ref().map(support::RedisServer::url).unwrap_or_default());
    let mut counter = redis::Client::open(url.as_str())?.get_multiplexed_async_connection().await?;
    let version: String = redis::cmd("INFO").arg("server").query_async(&mut counter).await?;
    let version = version.lines().find_map(|l| l.strip_prefix("redis_version:")).unwrap_or("?");
    println!(
        "{calls} calls per path after {WARM_UP} to warm up, one at a time, through a round-robin \
         proxy on loopback; Redis {version}; {} CPUs\n",
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    println!(
        "| Path | one instance, no Redis: p50 / p99 | two instances on Redis: p50 / p99 | added at p50 | Redis commands per call |"
    );
    println!("| --- | --- | --- | --- | --- |");
    for (n, path) in PATHS.iter().enumerate() {
        let client = warmed(single(path.json).await?, path).await?;
        let alone = time_calls(&client, path.tool, calls).await?;
        let deployment = Deployment::new(&url, &format!("bench{n}"))?;
        let client = warmed(fleet(&deployment, path.json).await?, path).await?;
        // Counted around the measured calls only.
        let before = commands_run(&mut counter, &IGNORED).await?;
        let shared = time_calls(&client, path.tool, calls).await?;
        let after = commands_run(&mut counter, &IGNORED).await?;
        println!(
            "| {} | {} / {} | {} / {} | {} | {} |",
            path.name,
            micros(quantile(&alone, 0.5)),
            micros(quantile(&alone, 0.99)),
            micros(quantile(&shared, 0.5)),
            micros(quantile(&shared, 0.99)),
            added(quantile(&alone, 0.5), quantile(&shared, 0.5)),
            per_call(&before, &after, calls),
        );
    }

    let alone = server()?;
    let local = bus_latency(&alone, &alone).await?;
    let deployment = Deployment::new(&url, "bench-bus")?;
    let a = server()?.subscription_bus(deployment.bus().await?);
    let b = server()?.subscription_bus(deployment.bus().await?);
    let remote = bus_latency(&b, &a).await?;
    println!("\n| Bus, {BUS_EVENTS} events one at a time | p50 | p99 |");
    println!("| --- | --- | --- |");
    for (name, times) in [
        ("in memory, publish and listen on one instance", &local),
        ("Redis, publish on B, notification on A", &remote),
    ] {
        println!(
            "| {name} | {} | {} |",
            micros(quantile(times, 0.5)),
            micros(quantile(times, 0.99))
        );
    }
    Ok(())
}
