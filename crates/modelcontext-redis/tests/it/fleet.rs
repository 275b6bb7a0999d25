//! Two server instances, A and B, one deployment on one Redis: what B changes reaches the
//! clients of A, in both eras, with nothing lost, and after Redis restarts.

use std::time::{Duration, Instant};

use modelcontext::types::{ServerNotification, SubscriptionFilter};
use modelcontext::{Client, EraMode, McpServer, ResourceDef, ToolDef};
use modelcontext_redis::RedisBus;

use crate::support::RedisServer;

/// The most a change may take from B's publish to a notification on A's stream.
const FAN_OUT_DEADLINE: Duration = Duration::from_secs(1);

async fn instance(redis: &RedisServer) -> (McpServer, RedisBus) {
    let bus = redis.deployment("shop").bus().await.expect("bus");
    let server = McpServer::new("shop")
        .tool(ToolDef::new("ping", || async { "pong" }))
        .expect("tool")
        .resource(ResourceDef::new("books://Dune", || async { "Dune" }))
        .expect("resource")
        .resource(ResourceDef::new("books://Emma", || async { "Emma" }))
        .expect("resource")
        .subscription_bus(bus.clone());
    (server, bus)
}

/// Tool list changes and updates of `books://Dune` only.
fn tools_and_dune() -> SubscriptionFilter {
    SubscriptionFilter::default()
        .with_tools_list_changed(true)
        .with_resource_subscriptions(vec!["books://Dune".into()])
}

async fn listener(server: &McpServer, era: EraMode) -> modelcontext::client::Subscription {
    let client = Client::builder().era(era).connect(server.in_memory()).await.expect("connected");
    let subscription = client.listen(tools_and_dune()).await.expect("listening");
    // The subscription holds what it needs; the client handle may go.
    std::mem::forget(client);
    subscription
}

async fn next_within(
    stream: &mut modelcontext::client::Subscription,
    deadline: Duration,
    what: &str,
) -> ServerNotification {
    tokio::time::timeout(deadline, stream.next())
        .await
        .unwrap_or_else(|_| panic!("{what}: nothing within {deadline:?}"))
        .unwrap_or_else(|| panic!("{what}: the stream ended"))
}

fn updated_uri(notification: &ServerNotification) -> Option<&str> {
    match notification {
        ServerNotification::ResourceUpdated(params) => Some(&params.uri),
        _ => None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listen_streams_on_a_hear_what_changes_on_b_and_only_what_they_asked_for() {
    let Some(redis) = RedisServer::start().await else { return };
    let (a, _bus_a) = instance(&redis).await;
    let (b, _bus_b) = instance(&redis).await;
    let mut modern = listener(&a, EraMode::Modern).await;
    let mut handshake = listener(&a, EraMode::Handshake).await;

    b.add_tool(ToolDef::new("shout", || async { "HEY" })).expect("a new tool on B");
    b.notify_resource_updated("books://Emma");
    b.notify_resource_updated("books://Dune");
    for (era, stream) in [("modern", &mut modern), ("handshake", &mut handshake)] {
        let first = next_within(stream, FAN_OUT_DEADLINE, era).await;
        assert!(matches!(first, ServerNotification::ToolListChanged(_)), "{era}: {first:?}");
        // Emma was published before Dune: the next one being Dune means Emma was left out.
        let second = next_within(stream, FAN_OUT_DEADLINE, era).await;
        assert_eq!(updated_uri(&second), Some("books://Dune"), "{era}: {second:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_events_from_b_all_reach_a_once_and_the_latency_is_measured() {
    let Some(redis) = RedisServer::start().await else { return };
    let (a, bus_a) = instance(&redis).await;
    let (b, bus_b) = instance(&redis).await;
    let mut stream = listener(&a, EraMode::Modern).await;

    // One at a time: publish on B, wait for the frame on A.
    let mut latencies = Vec::new();
    for _ in 0..200 {
        let started = Instant::now();
        b.notify_resource_updated("books://Dune");
        next_within(&mut stream, FAN_OUT_DEADLINE, "one event").await;
        latencies.push(started.elapsed());
    }
    latencies.sort_unstable();
    let p50 = latencies[latencies.len() / 2];
    let p99 = latencies[latencies.len() * 99 / 100];
    eprintln!("bus latency, publish on B to the notification on A: p50 {p50:?}, p99 {p99:?}");

    // A burst: every one arrives, none twice (a gap would re-notify, and count more).
    const BURST: usize = 1000;
    for _ in 0..BURST {
        b.notify_resource_updated("books://Dune");
    }
    let mut received = 0;
    while received < BURST {
        let notification = next_within(&mut stream, Duration::from_secs(5), "the burst").await;
        assert_eq!(updated_uri(&notification), Some("books://Dune"), "{notification:?}");
        received += 1;
    }
    let extra = tokio::time::timeout(Duration::from_millis(200), stream.next()).await;
    assert!(extra.is_err(), "more than was published: {extra:?}");
    let (sa, sb) = (bus_a.stats(), bus_b.stats());
    eprintln!("burst: published {BURST} on B, received {received} on A; A {sa:?}; B {sb:?}");
    assert_eq!((sb.lost, sa.gaps), (0, 0));
    assert_eq!(sa.received, sb.published);
}

/// Redis killed and started again, empty, while A's streams are open and modern-era calls
/// run on B: the streams hear a gap then B's next change, and no modern call fails.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_redis_restarts_open_streams_hear_a_gap_then_the_next_event() {
    let Some(mut redis) = RedisServer::start().await else { return };
    let (a, bus_a) = instance(&redis).await;
    let (b, _bus_b) = instance(&redis).await;
    let mut modern = listener(&a, EraMode::Modern).await;
    let mut handshake = listener(&a, EraMode::Handshake).await;
    let load = ModernLoad::start(&b).await;

    redis.kill().await;
    redis.start_again().await;
    let restarted = Instant::now();
    // The gap: everything each stream asked for, re-notified (the tool list, then Dune).
    for (era, stream) in [("modern", &mut modern), ("handshake", &mut handshake)] {
        let first = next_within(stream, Duration::from_secs(10), era).await;
        assert!(matches!(first, ServerNotification::ToolListChanged(_)), "{era}: {first:?}");
        let second = next_within(stream, FAN_OUT_DEADLINE, era).await;
        assert_eq!(updated_uri(&second), Some("books://Dune"), "{era}: {second:?}");
    }
    let gap_after = restarted.elapsed();
    assert!(bus_a.stats().gaps >= 1 && bus_a.stats().reconnects >= 1, "{:?}", bus_a.stats());

    // B's next change reaches A. B's publishing connection learns of the restart from its
    // first failed call, so B keeps changing things, as a server under load would.
    let mut published = 0;
    let arrived = loop {
        b.notify_resource_updated("books://Dune");
        published += 1;
        match tokio::time::timeout(Duration::from_millis(100), modern.next()).await {
            Ok(Some(notification)) => break notification,
            Ok(None) => panic!("the stream ended"),
            Err(_) => assert!(published < 100, "no event from B within 10 s of the restart"),
        }
    };
    assert_eq!(updated_uri(&arrived), Some("books://Dune"));
    let (succeeded, failed) = load.stop().await;
    eprintln!(
        "redis restart: gap on A's streams {gap_after:?} after Redis was back, B's next event \
         after {:?} ({published} published); modern calls on B meanwhile: {succeeded} \
         succeeded, {failed} failed",
        restarted.elapsed()
    );
    // The 2026-07-28 era needs no Redis to answer: an outage fails none of its calls.
    assert_eq!(failed, 0, "modern calls failed while Redis restarted");
    assert!(succeeded > 0, "the modern load made no call");
}

/// Modern-era `ping` calls on one instance, one after another, until stopped: the load that
/// must not notice Redis going away.
struct ModernLoad {
    stop: tokio::sync::watch::Sender<bool>,
    task: tokio::task::JoinHandle<(u64, u64)>,
}

impl ModernLoad {
    async fn start(server: &McpServer) -> ModernLoad {
        let client = Client::builder()
            .era(EraMode::Modern)
            .connect(server.in_memory())
            .await
            .expect("connected");
        let (stop, mut stopped) = tokio::sync::watch::channel(false);
        let task = tokio::spawn(async move {
            let (mut succeeded, mut failed) = (0, 0);
            while !*stopped.borrow_and_update() {
                match client.call_tool("ping", serde_json::json!({})).await {
                    Ok(result) if !result.is_error() => succeeded += 1,
                    _ => failed += 1,
                }
            }
            (succeeded, failed)
        });
        ModernLoad { stop, task }
    }

    /// Ends the load: (calls that succeeded, calls that failed).
    async fn stop(self) -> (u64, u64) {
        let _ = self.stop.send(true);
        self.task.await.expect("the load task")
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_modern_request_issues_no_redis_command() {
    let Some(redis) = RedisServer::start().await else { return };
    let (a, _bus) = instance(&redis).await;
    let client =
        Client::builder().era(EraMode::Modern).connect(a.in_memory()).await.expect("connected");
    let before = redis.commands_run().await;
    assert!(before.contains_key("subscribe"), "the count works: {before:?}");
    for _ in 0..50 {
        client.call_tool("ping", serde_json::json!({})).await.expect("called");
        client.list_tools(None).await.expect("listed");
        client.read_resource("books://Dune").await.expect("read");
    }
    assert_eq!(redis.commands_run().await, before, "commands run while serving 150 requests");
}

/// The same over Streamable HTTP: A serves on loopback, a modern client's listen stream (an
/// SSE answer) and a handshake client's session GET stream hear B's changes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_http_a_listen_stream_and_a_session_get_stream_on_a_hear_b() {
    use modelcontext::transport::http::HttpTransport;
    let Some(redis) = RedisServer::start().await else { return };
    let (a, _bus_a) = instance(&redis).await;
    let (b, _bus_b) = instance(&redis).await;
    let (addr, serve) = a.http_endpoint().bind("127.0.0.1:0").await.expect("bind");
    tokio::spawn(serve);
    for era in [EraMode::Modern, EraMode::Handshake] {
        let transport = HttpTransport::new(&format!("http://{addr}/mcp")).expect("url");
        let client = Client::builder().era(era).connect(transport).await.expect("connected");
        let mut stream = client.listen(tools_and_dune()).await.expect("listening");
        // A handshake-era client is connected once its GET stream is open: one change of B's
        // reaches it, through Redis and A.
        b.notify_tools_changed();
        let opened = next_within(&mut stream, FAN_OUT_DEADLINE, "over http").await;
        assert!(matches!(opened, ServerNotification::ToolListChanged(_)), "{era:?}: {opened:?}");
        b.notify_resource_updated("books://Emma");
        b.notify_resource_updated("books://Dune");
        // Dune, never Emma.
        let dune = next_within(&mut stream, FAN_OUT_DEADLINE, "over http").await;
        assert_eq!(updated_uri(&dune), Some("books://Dune"), "{era:?}: {dune:?}");
    }
}

/// Which instance ran each round of `order`, shared by both instances of a test.
type Rounds = std::sync::Arc<std::sync::Mutex<Vec<&'static str>>>;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Title {
    title: String,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Confirm {
    ok: bool,
}

/// An instance named `name` whose `order` tool asks the client to confirm (an MRTR round in
/// the 2026-07-28 era) and notes where each round ran.
fn ordering_instance(
    name: &'static str,
    ring: modelcontext::server::KeyRing,
    rounds: Rounds,
) -> McpServer {
    use modelcontext::{Context, Elicitation, McpError};
    let order = ToolDef::new("order", move |cx: Context, Title { title }: Title| {
        let rounds = rounds.clone();
        async move {
            rounds.lock().expect("rounds").push(name);
            let answer = cx.elicit::<Confirm>(format!("Really order {title}?")).await?;
            Ok::<_, McpError>(match answer {
                Elicitation::Accepted(Confirm { ok: true }) => format!("ordered {title} on {name}"),
                _ => "not ordered".to_owned(),
            })
        }
    });
    McpServer::new("shop").tool(order).expect("tool").key_ring(ring)
}

/// Serves `server` on a loopback port; its address.
async fn serve(server: &McpServer) -> std::net::SocketAddr {
    let (addr, serve) = server.http_endpoint().bind("127.0.0.1:0").await.expect("bind");
    tokio::spawn(serve);
    addr
}

/// A modern client through a round-robin proxy over A and B calls `order`: round 1 and the
/// retry land on different instances. The answer, and where the rounds ran.
async fn order_through_the_proxy(
    a: modelcontext::server::KeyRing,
    b: modelcontext::server::KeyRing,
) -> (Result<String, String>, Vec<&'static str>) {
    use modelcontext::transport::http::HttpTransport;
    use modelcontext::types::{ContentBlock, ElicitResult};
    let rounds = Rounds::default();
    let a = serve(&ordering_instance("A", a, rounds.clone())).await;
    let b = serve(&ordering_instance("B", b, rounds.clone())).await;
    let proxy = crate::proxy::round_robin(vec![a, b]).await;
    let transport = HttpTransport::new(&format!("http://{proxy}/mcp")).expect("url");
    let client = Client::builder()
        .era(EraMode::Modern)
        .on_elicit(|_| async {
            let mut content = serde_json::Map::new();
            content.insert("ok".into(), true.into());
            Ok(ElicitResult::accept(content))
        })
        .connect(transport)
        .await
        .expect("connected through the proxy");
    let answer = client.call_tool("order", serde_json::json!({ "title": "Dune" })).await;
    let answer = answer.map_err(|e| e.to_string()).map(|result| match result.content.first() {
        Some(ContentBlock::Text(text)) => text.text.clone(),
        other => format!("{other:?}"),
    });
    let rounds = rounds.lock().expect("rounds").clone();
    (answer, rounds)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mrtr_round_one_on_a_retry_on_b_through_a_round_robin_proxy() {
    use modelcontext::server::KeyRing;
    let ring = |keys: &[&str]| {
        let hex: Vec<String> = keys.iter().map(|k| k.repeat(32)).collect();
        KeyRing::from_hex(&hex).expect("hex").audience("shop")
    };
    let (answer, rounds) = order_through_the_proxy(ring(&["11"]), ring(&["11"])).await;
    let answer = answer.expect("ordered");
    assert!(answer.starts_with("ordered Dune on "), "{answer}");
    assert_eq!(rounds.len(), 2, "two rounds: {rounds:?}");
    assert_ne!(rounds[0], rounds[1], "the rounds ran on different instances: {rounds:?}");
    // Rotation: the instance of round 1 still has [k1] only, the other already [k2, k1]. The
    // proxy's order is the same in every run, so round 1 lands where it did above.
    let first = rounds[0];
    let (old, new) = (ring(&["11"]), ring(&["22", "11"]));
    let (a, b) = if first == "A" { (old, new) } else { (new, old) };
    let (rotated, rounds) = order_through_the_proxy(a, b).await;
    assert_eq!(rounds.first(), Some(&first), "round 1 where it was: {rounds:?}");
    assert!(rotated.expect("a rotated ring opens the old key's state").starts_with("ordered"));
    let (stranger, rounds) = order_through_the_proxy(ring(&["11"]), ring(&["33"])).await;
    let error = stranger.expect_err("a stranger's ring refuses the state");
    assert!(error.contains("-32602") || error.contains("requestState"), "{error}; {rounds:?}");
}
