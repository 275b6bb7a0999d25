//! Servers made of servers: what a client gets through a mount is what it gets directly,
//! in every pairing of eras.

use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use modelcontext::client::CallOptions;
use modelcontext::server::NoArgs;
use modelcontext::server::compose::{Transform, Upstream};
use modelcontext::types::{ContentBlock, ServerNotification, SubscriptionFilter, method};
use modelcontext::{Client, ClientBuilder, Context, EraMode, McpServer, ToolDef};
use serde_json::{Value, json};

use crate::input::{answering_client, asking_server, text};
use crate::support::bookshop;

const ERAS: [EraMode; 2] = [EraMode::Handshake, EraMode::Modern];

/// One way a caller may come: in memory or (with the feature) over HTTP, in one era. Shown
/// as such in a failure's message.
#[derive(Clone, Copy)]
struct Caller {
    http: bool,
    era: EraMode,
}

impl Caller {
    /// A client of `server` this way, built from `builder`.
    async fn connect_with(self, server: &McpServer, builder: ClientBuilder) -> Client {
        crate::support::connect(server.clone(), builder.era(self.era), self.http).await
    }

    async fn connect(self, server: &McpServer) -> Client {
        self.connect_with(server, Client::builder()).await
    }
}

impl std::fmt::Display for Caller {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let over = if self.http { "over HTTP" } else { "in memory" };
        write!(f, "{:?} caller {over}", self.era)
    }
}

/// Every way a caller may come: in memory and (with the feature) over HTTP, in both eras.
fn callers() -> impl Iterator<Item = Caller> {
    crate::support::TRANSPORTS.iter().flat_map(|&http| ERAS.map(move |era| Caller { http, era }))
}

async fn client(server: &McpServer, era: EraMode) -> Client {
    Client::builder().era(era).connect(server.in_memory()).await.expect("connects")
}

/// `result` as JSON without its `serverInfo` stamp, which (in the modern era) names `server`.
fn unstamped(result: &impl serde::Serialize, server: &str) -> Value {
    let mut value = serde_json::to_value(result).expect("json");
    let key = modelcontext::types::SERVER_INFO_META_KEY;
    if let Some(meta) = value.get_mut("_meta").and_then(Value::as_object_mut) {
        let stamp = meta.remove(key).expect("a modern result is stamped");
        assert_eq!(stamp["name"], server);
        if meta.is_empty() {
            value.as_object_mut().expect("object").remove("_meta");
        }
    }
    value
}

/// Two bookshops under one endpoint, each namespaced; `boom` hidden from the first.
async fn two_bookshops() -> McpServer {
    McpServer::new("Gateway")
        .mount_server(&bookshop(), Transform::new().namespace("a").deny(["boom"]))
        .await
        .expect("mounts a")
        .mount_server(&bookshop(), Transform::new().namespace("b"))
        .await
        .expect("mounts b")
}

#[tokio::test]
async fn a_name_clash_is_callable_by_namespaced_names_and_a_filtered_tool_is_gone() {
    let gateway = two_bookshops().await;
    for era in ERAS {
        let client = client(&gateway, era).await;
        let names: Vec<String> =
            client.list_all_tools().await.expect("lists").into_iter().map(|t| t.name).collect();
        assert!(names.contains(&"a_get_author".to_owned()), "{names:?}");
        assert!(names.contains(&"b_get_author".to_owned()), "{names:?}");
        assert!(names.contains(&"b_boom".to_owned()), "{names:?}");
        assert!(!names.iter().any(|n| n == "a_boom" || n == "get_author"), "{names:?}");
        for name in ["a_get_author", "b_get_author"] {
            let result = client.call_tool(name, json!({"title": "Dune"})).await.expect("calls");
            let mut expected = json!({"content": [{"type": "text", "text": "Frank Herbert"}]});
            if era == EraMode::Modern {
                expected["resultType"] = json!("complete");
            }
            assert_eq!(unstamped(&result, "Gateway"), expected, "{name} {era:?}");
        }
        let hidden = client.call_tool("a_boom", json!({})).await.expect_err("unknown");
        let error = hidden.as_mcp_error().expect("protocol error");
        assert_eq!((error.code.0, error.message.as_str()), (-32602, "Unknown tool: a_boom"));
    }
}

#[tokio::test]
async fn results_and_errors_come_through_as_the_upstream_gave_them() {
    let gateway = McpServer::new("Gateway")
        .mount_server(&bookshop(), Transform::new())
        .await
        .expect("mounts");
    let direct_server = bookshop();
    let calls = [
        ("get_author", json!({"title": "Dune"})),
        ("get_author", json!({"title": "Nope"})),
        ("get_author", json!({})),
        ("get_author", json!({"title": 7})),
        ("get_author_strict", json!({"title": "Nope"})),
        ("boom", json!({})),
        ("model_error", json!({})),
        ("search_books", json!({"query": "dune", "limit": 2})),
    ];
    for caller in callers() {
        let (through, direct) =
            (caller.connect(&gateway).await, caller.connect(&direct_server).await);
        for (name, arguments) in &calls {
            let seen = through.call_tool(name, arguments).await;
            let expected = direct.call_tool(name, arguments).await;
            match (seen, expected) {
                (Ok(seen), Ok(expected)) => assert_eq!(
                    unstamped(&seen, "Gateway"),
                    unstamped(&expected, "Bookshop"),
                    "{name} {arguments} {caller}"
                ),
                (Err(seen), Err(expected)) => {
                    let (seen, expected) = (seen.as_mcp_error(), expected.as_mcp_error());
                    assert_eq!(seen, expected, "{name} {arguments} {caller}");
                    assert!(seen.is_some(), "a protocol error ({name})");
                }
                (seen, expected) => panic!("{name} {caller}: {seen:?} against {expected:?}"),
            }
        }
        let read = through.read_resource("books://Dune").await.expect("reads");
        let expected = direct.read_resource("books://Dune").await.expect("reads");
        assert_eq!(unstamped(&read, "Gateway"), unstamped(&expected, "Bookshop"), "{caller}");
    }
}

#[tokio::test]
async fn questions_reach_the_caller_in_every_pairing_of_eras() {
    for upstream_era in ERAS {
        let upstream = Upstream::builder("asker", move |client| async move {
            client.era(upstream_era).connect(asking_server().in_memory()).await
        })
        .connect()
        .await
        .expect("connects");
        let gateway =
            McpServer::new("Gateway").mount(&upstream, Transform::new()).await.expect("mounts");
        for caller in callers() {
            let pairing = format!("{caller}, {upstream_era:?} upstream");
            let calls = Arc::new(AtomicUsize::new(0));
            let builder = answering_client(caller.era, Arc::clone(&calls));
            let client = caller.connect_with(&gateway, builder).await;
            let call = |name: &'static str| client.call_tool(name, json!({"title": "Dune"}));
            assert_eq!(text(&call("order").await.expect("order")), "ordered Dune", "{pairing}");
            assert_eq!(
                text(&call("ask_model").await.expect("sampling")),
                r#"test-model Some("toolUse") {"type":"tool_use","id":"call-1","name":"calculator","input":{"expr":"2+2"}}"#,
                "{pairing}"
            );
            assert_eq!(text(&call("roots").await.expect("roots")), "file:///books", "{pairing}");
            let survey = call("survey").await.expect("survey");
            assert_eq!(text(&survey), "1 roots, rating Some((4, None))", "{pairing}");
            let prompt = client.get_prompt("greeting", [("title", "Dune")]).await.expect("prompt");
            let message = serde_json::to_value(&prompt.messages[0].content).expect("json");
            assert_eq!(message["text"], "Hello Ada, about Dune", "{pairing}");
            let read = client.read_resource("vault://Dune").await.expect("resource");
            let contents = serde_json::to_value(&read.contents).expect("json");
            assert_eq!(contents[0]["text"], "secret", "{pairing}");
        }
    }
}

/// Reports three steps of progress, then waits until cancelled and says so on `seen`.
fn patient_server(seen: Arc<Mutex<Option<tokio::sync::oneshot::Sender<bool>>>>) -> McpServer {
    let wait = ToolDef::new("wait", move |cx: Context, _: NoArgs| {
        let seen = Arc::clone(&seen);
        async move {
            for step in 1..=3 {
                cx.report_progress(f64::from(step), Some(3.0), Some("working")).await;
            }
            // The handler is dropped when cancelled: a task of its own sees that.
            let worker = cx.clone();
            tokio::spawn(async move {
                worker.cancelled().await;
                let sender = seen.lock().expect("lock").take();
                if let Some(sender) = sender {
                    let _ = sender.send(worker.is_cancelled());
                }
            });
            std::future::pending::<&str>().await
        }
    });
    McpServer::new("Patient").tool(wait).expect("registers")
}

#[tokio::test]
async fn progress_comes_back_and_a_cancellation_goes_up() {
    for caller in callers() {
        let (sender, cancelled) = tokio::sync::oneshot::channel();
        let upstream = patient_server(Arc::new(Mutex::new(Some(sender))));
        let gateway = McpServer::new("Gateway")
            .mount_server(&upstream, Transform::new().namespace("p"))
            .await
            .expect("mounts");
        let client = caller.connect(&gateway).await;
        let progress = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&progress);
        let options = CallOptions::new().on_progress(move |update| {
            seen.lock().expect("lock").push((update.progress, update.total, update.message));
        });
        let call = client.call_tool_with("p_wait", json!({}), &options);
        let outcome = tokio::time::timeout(Duration::from_millis(500), call).await;
        assert!(outcome.is_err(), "the call waits until it is dropped ({caller})");
        let cancelled = tokio::time::timeout(Duration::from_secs(5), cancelled).await;
        assert_eq!(
            cancelled.ok().and_then(Result::ok),
            Some(true),
            "cancelled upstream ({caller})"
        );
        let working = Some("working".to_owned());
        assert_eq!(
            *progress.lock().expect("lock"),
            vec![
                (1.0, Some(3.0), working.clone()),
                (2.0, Some(3.0), working.clone()),
                (3.0, Some(3.0), working)
            ],
            "{caller}"
        );
    }
}

/// Over HTTP the change reaches a 2026-07-28 caller on its `subscriptions/listen` stream and
/// a handshake-era one on its GET stream (no request of its is open when the change comes).
#[tokio::test]
async fn an_upstream_list_change_reaches_a_listening_caller() {
    for caller in callers() {
        let upstream = bookshop();
        let gateway = McpServer::new("Gateway")
            .mount_server(&upstream, Transform::new().namespace("u"))
            .await
            .expect("mounts");
        let client = caller.connect(&gateway).await;
        let filter = SubscriptionFilter::default().with_tools_list_changed(true);
        let mut changes = client.listen(filter).await.expect("listens");
        let added = ToolDef::new("added", || async { "new" });
        upstream.add_tool(added).expect("adds");
        let change = tokio::time::timeout(Duration::from_secs(5), changes.next()).await;
        assert!(
            matches!(change, Ok(Some(ServerNotification::ToolListChanged(_)))),
            "{caller}: {change:?}"
        );
        let result = client.call_tool("u_added", json!({})).await.expect("the new tool");
        assert!(matches!(&result.content[0], ContentBlock::Text(t) if t.text == "new"), "{caller}");
        upstream.remove_tool("added");
        let change = tokio::time::timeout(Duration::from_secs(5), changes.next()).await;
        assert!(matches!(change, Ok(Some(_))), "{caller}");
        let tools: Vec<Value> = client
            .list_all_tools()
            .await
            .expect("lists")
            .into_iter()
            .map(|t| Value::String(t.name))
            .collect();
        assert!(!tools.contains(&json!("u_added")), "{caller}: {tools:?}");
    }
}

#[tokio::test]
async fn progress_sent_right_before_the_answer_comes_through_first() {
    let quick = ToolDef::new("quick", |cx: Context, _: NoArgs| async move {
        for step in 1..=3 {
            cx.report_progress(f64::from(step), Some(3.0), None).await;
        }
        "done"
    });
    let upstream = McpServer::new("quick").tool(quick).expect("registers");
    let gateway =
        McpServer::new("Gateway").mount_server(&upstream, Transform::new()).await.expect("mounts");
    crate::support::check_progress_comes_first(&gateway, "quick", json!({}), 30).await;
}

/// The `progress` example as a child process behind the gateway: its updates, the last
/// right before its answer, reach callers over every transport in both eras.
#[tokio::test]
async fn a_child_process_upstream_relays_its_progress() {
    let exe = std::env::current_exe().expect("exe");
    let dir = exe.parent().and_then(|d| d.parent()).expect("dir");
    let program = dir.join("examples").join("progress");
    let upstream = Upstream::builder("progress", move |client| {
        let spawned = modelcontext::ChildProcess::new(&program).args(["--stdio"]).spawn();
        async move { client.connect(spawned?).await }
    })
    .connect()
    .await
    .expect("connects");
    let gateway =
        McpServer::new("Gateway").mount(&upstream, Transform::new()).await.expect("mounts");
    crate::support::check_progress_comes_first(&gateway, "index", json!({"files": 3}), 10).await;
}

/// Middleware of the gateway's own runs around a mounted tool's calls and lists, before and
/// after the mount, though the mount's own watcher looks only at lists and subscriptions.
#[tokio::test]
async fn the_gateways_middleware_runs_around_mounted_tools() {
    use modelcontext::server::middleware::{Next, Request, from_fn};
    let seen = Arc::new(Mutex::new(Vec::new()));
    let noted = |tag: &'static str| {
        let seen = Arc::clone(&seen);
        from_fn(move |mut request: Request, next: Next| {
            let seen = Arc::clone(&seen);
            async move {
                seen.lock().expect("lock").push(format!("{tag} {}", request.method()));
                if let Some(arguments) = request.arguments_mut() {
                    arguments.insert("title".into(), json!("Dune"));
                }
                next.run(request).await
            }
        })
    };
    let gateway = McpServer::new("Gateway")
        .middleware(noted("outer"))
        .mount_server(&bookshop(), Transform::new().namespace("a"))
        .await
        .expect("mounts")
        .middleware(noted("inner"));
    let client = client(&gateway, EraMode::Handshake).await;
    seen.lock().expect("lock").clear();
    let result = client.call_tool("a_get_author", json!({"title": "?"})).await.expect("calls");
    assert_eq!(
        serde_json::to_value(&result).expect("json"),
        json!({"content": [{"type": "text", "text": "Frank Herbert"}]})
    );
    let names: Vec<String> =
        client.list_all_tools().await.expect("lists").into_iter().map(|t| t.name).collect();
    assert!(names.contains(&"a_get_author".to_owned()), "{names:?}");
    assert_eq!(
        *seen.lock().expect("lock"),
        ["outer tools/call", "inner tools/call", "outer tools/list", "inner tools/list"]
    );
}

/// An upstream reached over HTTP (Streamable HTTP in either era, or the 2024-11-05 HTTP+SSE
/// transport): its tools answer through the gateway, and a tool it adds reaches a caller
/// listening for changes (from a handshake-era upstream, on the one stream it keeps open to
/// the gateway).
#[cfg(feature = "http")]
#[tokio::test]
async fn an_upstream_over_http_answers_and_announces_its_changes() {
    use modelcontext::server::http::HttpOptions;
    let kinds = [("Streamable HTTP", EraMode::Handshake), ("Streamable HTTP", EraMode::Modern)];
    for (kind, upstream_era) in kinds.into_iter().chain([("HTTP+SSE", EraMode::Handshake)]) {
        let upstream = bookshop();
        let legacy = kind == "HTTP+SSE";
        let options = HttpOptions::default().legacy_sse(legacy);
        let endpoint = upstream.http_endpoint_with(options);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        tokio::spawn(async move { endpoint.serve(listener).await });
        let url = format!("http://{addr}/{}", if legacy { "sse" } else { "mcp" });
        let remote = Upstream::builder("remote", move |client| {
            let transport = modelcontext::HttpTransport::new(&url);
            async move { client.era(upstream_era).connect(transport?).await }
        })
        .connect()
        .await
        .expect("connects");
        let gateway =
            McpServer::new("Gateway").mount(&remote, Transform::new().namespace("r")).await;
        let gateway = gateway.expect("mounts");
        for (round, caller) in callers().enumerate() {
            let pairing = format!("{caller}, {upstream_era:?} upstream over {kind}");
            let client = caller.connect(&gateway).await;
            let author = client.call_tool("r_get_author", json!({"title": "Dune"})).await;
            assert_eq!(text(&author.expect("calls")), "Frank Herbert", "{pairing}");
            let filter = SubscriptionFilter::default().with_tools_list_changed(true);
            let mut changes = client.listen(filter).await.expect("listens");
            let added = format!("added_{round}");
            upstream.add_tool(ToolDef::new(added.clone(), || async { "new" })).expect("adds");
            let change = tokio::time::timeout(Duration::from_secs(5), changes.next()).await;
            assert!(
                matches!(change, Ok(Some(ServerNotification::ToolListChanged(_)))),
                "{pairing}: {change:?}"
            );
            let new = client.call_tool(&format!("r_{added}"), json!({})).await;
            assert_eq!(text(&new.expect("the new tool")), "new", "{pairing}");
        }
    }
}

/// A caller's subscription to a mounted resource, under the URI it is shown, is made upstream
/// before the caller is answered, however slowly the upstream makes it: an update the
/// upstream sends right after reaches the caller under that URI, and only what it asked for.
#[tokio::test]
async fn a_subscription_to_a_mounted_resource_hears_its_updates() {
    use modelcontext::server::middleware::{Next, Request, from_fn};
    for caller in callers() {
        let upstream = bookshop().middleware(from_fn(|request: Request, next: Next| async move {
            let subscribing = [method::RESOURCES_SUBSCRIBE, method::SUBSCRIPTIONS_LISTEN];
            if subscribing.contains(&request.method()) {
                tokio::time::sleep(Duration::from_millis(300)).await;
            }
            next.run(request).await
        }));
        let gateway = McpServer::new("Gateway")
            .mount_server(&upstream, Transform::new().namespace("u"))
            .await
            .expect("mounts");
        let client = caller.connect(&gateway).await;
        let filter = SubscriptionFilter::default()
            .with_resource_subscriptions(vec!["books://u/Dune".to_owned()]);
        let mut updates = client.listen(filter).await.expect("listens");
        upstream.notify_resource_updated("books://Emma");
        upstream.notify_resource_updated("books://Dune");
        match tokio::time::timeout(Duration::from_secs(5), updates.next()).await {
            Ok(Some(ServerNotification::ResourceUpdated(params))) => {
                assert_eq!(params.uri, "books://u/Dune", "{caller}");
            }
            other => panic!("{caller}: {other:?}"),
        }
    }
}

/// Through a mount, a modern caller may run a tool as a task at the gateway, and a plain call
/// of a tool the upstream runs only as a task waits on the upstream's task; a handshake-era
/// caller gets the plain result.
#[tokio::test]
async fn tasks_work_through_a_mount() {
    use modelcontext::client::ToolCall;
    use modelcontext::server::TaskSupport;
    let quick = ToolDef::new("quick", |cx: Context, _: NoArgs| async move {
        cx.run_as_task().await;
        "done"
    });
    let only_task = ToolDef::new("only_task", |cx: Context, _: NoArgs| async move {
        cx.run_as_task().await;
        "ran as a task"
    });
    let upstream = McpServer::new("Tasks")
        .task_poll_interval(Duration::from_millis(5))
        .tool(quick.task(TaskSupport::Optional))
        .and_then(|server| server.tool(only_task.task(TaskSupport::Required)))
        .expect("registers");
    let gateway = McpServer::new("Gateway")
        .task_poll_interval(Duration::from_millis(5))
        .mount_server(&upstream, Transform::new().namespace("t"))
        .await
        .expect("mounts");
    for caller in callers() {
        let client = caller.connect(&gateway).await;
        let only = client.call_tool("t_only_task", json!({})).await;
        assert_eq!(text(&only.expect("waits on the upstream's task")), "ran as a task", "{caller}");
        let quick = client.call_tool_as_task("t_quick", json!({})).await.expect("calls");
        let result = match (caller.era, quick) {
            (EraMode::Modern, ToolCall::Task(task)) => {
                client.wait_for_task(&task).await.expect("completes")
            }
            (EraMode::Handshake, ToolCall::Done(result)) => result,
            (_, other) => panic!("{caller}: {other:?}"),
        };
        assert_eq!(text(&result), "done", "{caller}");
    }
}

/// Completions of a mounted prompt's and template's arguments are asked upstream under the
/// names and URIs it gives them, with the other arguments as context.
#[tokio::test]
async fn completions_come_through_a_mount_under_the_names_shown() {
    use modelcontext::types::{PromptReference, Reference, ResourceTemplateReference};
    let gateway = McpServer::new("Gateway")
        .mount_server(&crate::completion::server(), Transform::new().namespace("c"))
        .await
        .expect("mounts");
    for caller in callers() {
        let client = caller.connect(&gateway).await;
        let prompt = Reference::Prompt(PromptReference::new("c_review"));
        let titles = client.complete(prompt.clone(), ("title", "Du")).await.expect("titles");
        assert_eq!(titles.completion.values, ["Dune", "Dune Messiah"], "{caller}");
        let context = [("title".to_owned(), "Emma".to_owned())].into();
        let styles = client.complete_in_context(prompt, ("style", ""), context).await;
        assert_eq!(styles.expect("styles").completion.values, ["regency"], "{caller}");
        let uri = "books://c/{title}/chapters/{n}";
        let template = Reference::Resource(ResourceTemplateReference::new(uri));
        let chapters = client.complete(template, ("n", "")).await.expect("chapters");
        assert_eq!(chapters.completion.values, ["1", "2"], "{caller}");
    }
}

/// Every page of an upstream's lists is imported, and the caller lists them all through the
/// gateway, page by page.
#[tokio::test]
async fn every_page_of_an_upstreams_lists_comes_through() {
    let mut upstream = McpServer::new("Many").page_size(2);
    for n in 0..5 {
        let tool = ToolDef::new(format!("tool_{n}"), move || async move { format!("{n}") });
        upstream = upstream.tool(tool).expect("registers");
    }
    let gateway = McpServer::new("Gateway")
        .page_size(3)
        .mount_server(&upstream, Transform::new().namespace("m"))
        .await
        .expect("mounts");
    for caller in callers() {
        let client = caller.connect(&gateway).await;
        let mut names: Vec<String> =
            client.list_all_tools().await.expect("lists").into_iter().map(|t| t.name).collect();
        names.sort();
        assert_eq!(names, ["m_tool_0", "m_tool_1", "m_tool_2", "m_tool_3", "m_tool_4"]);
        let last = client.call_tool("m_tool_4", json!({})).await.expect("calls");
        assert_eq!(text(&last), "4", "{caller}");
    }
}
