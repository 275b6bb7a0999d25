//! Questions a handler asks the client (elicitation, sampling, roots), the same handler code
//! in both eras: live server requests on a handshake connection, MRTR rounds on a modern one.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use modelcontext::server::Elicitation;
use modelcontext::types::{
    ContentBlock, CreateMessageRequestParams, CreateMessageResult, ElicitAction,
    ElicitRequestParams, ElicitResult, McpError, Role, Root, SamplingContent, SamplingMessage,
    SamplingMessageContentBlock, Tool, ToolChoice, ToolChoiceMode, ToolUseContent,
};
use modelcontext::{
    Client, ClientBuilder, Context, EraMode, McpServer, PromptDef, ResourceDef, ToolDef,
};
use serde::Deserialize;
use serde_json::{Map, json};

use modelcontext::schemars::JsonSchema;

#[derive(Deserialize, JsonSchema)]
#[schemars(crate = "modelcontext::schemars")]
pub struct Confirm {
    ok: bool,
}

#[derive(Deserialize, JsonSchema)]
#[schemars(crate = "modelcontext::schemars")]
pub struct Rating {
    /// From 1 to 5.
    stars: i64,
    comment: Option<String>,
}

/// Not flat: only its schema matters, the values are never read.
#[allow(dead_code)]
#[derive(Deserialize, JsonSchema)]
#[schemars(crate = "modelcontext::schemars")]
pub struct Shipping {
    address: Address,
}

#[allow(dead_code)]
#[derive(Deserialize, JsonSchema)]
#[schemars(crate = "modelcontext::schemars")]
pub struct Address {
    street: String,
}

#[derive(Deserialize, JsonSchema)]
#[schemars(crate = "modelcontext::schemars")]
pub struct Title {
    title: String,
}

/// The questions every test asks, as tools (and one prompt and one resource).
pub fn asking_server() -> McpServer {
    try_asking_server().expect("registers")
}

fn try_asking_server() -> Result<McpServer, modelcontext::Error> {
    let order = ToolDef::new("order", |cx: Context, Title { title }: Title| async move {
        let answer = cx.elicit::<Confirm>(format!("Really order {title}?")).await?;
        Ok::<_, McpError>(match answer {
            Elicitation::Accepted(Confirm { ok: true }) => format!("ordered {title}"),
            Elicitation::Accepted(_) => "not confirmed".to_owned(),
            Elicitation::Declined => "declined".to_owned(),
            Elicitation::Cancelled => "cancelled".to_owned(),
            _ => "unknown".to_owned(),
        })
    });
    let ship = ToolDef::new("ship", |cx: Context, _: Title| async move {
        cx.elicit::<Shipping>("Where to?").await.map(|_| "shipped")
    });
    let sign_in = ToolDef::new("sign_in", |cx: Context, _: Title| async move {
        let action = cx.elicit_url("Sign in to the shop", "https://shop.example/login").await?;
        Ok::<_, McpError>(format!("{action:?}"))
    });
    let ask_model = ToolDef::new("ask_model", |cx: Context, Title { title }: Title| async move {
        let result = cx.sample(sampling_request(&title)).await?;
        Ok::<_, McpError>(describe(&result))
    });
    let roots = ToolDef::new("roots", |cx: Context, _: Title| async move {
        let roots = cx.list_roots().await?;
        Ok::<_, McpError>(roots.into_iter().map(|r| r.uri).collect::<Vec<_>>().join(" "))
    });
    let survey = ToolDef::new("survey", |cx: Context, _: Title| async move {
        // Two questions at once, then a third that depends on the first answer.
        let (confirm, roots) = tokio::join!(cx.elicit::<Confirm>("Take part?"), cx.list_roots());
        let (confirm, roots) = (confirm?, roots?);
        if confirm.accepted().is_none_or(|c| !c.ok) {
            return Ok::<_, McpError>("skipped".to_owned());
        }
        let rating = cx.elicit::<Rating>("How many stars?").await?;
        let rating = rating.accepted().map(|r| (r.stars, r.comment));
        Ok(format!("{} roots, rating {rating:?}", roots.len()))
    });
    let prompt = PromptDef::new("greeting", |cx: Context, Title { title }: Title| async move {
        let name = cx.elicit::<Name>("Your name?").await?;
        let name = name.accepted().map_or("stranger".to_owned(), |n| n.name);
        Ok::<_, McpError>(format!("Hello {name}, about {title}"))
    });
    let resource =
        ResourceDef::new("vault://{title}", |cx: Context, Title { title }: Title| async move {
            let ok = cx.elicit::<Confirm>(format!("Open {title}?")).await?;
            Ok::<_, McpError>(
                if ok.accepted().is_some_and(|c| c.ok) { "secret" } else { "closed" }.to_owned(),
            )
        });
    McpServer::new("Asker")
        .tools([order, ship, sign_in, ask_model, roots, survey])?
        .prompt(prompt)?
        .resource(resource)
}

#[derive(Deserialize, JsonSchema)]
#[schemars(crate = "modelcontext::schemars")]
pub struct Name {
    pub name: String,
}

fn sampling_request(question: &str) -> CreateMessageRequestParams {
    let mut schema = Map::new();
    schema.insert("type".into(), json!("object"));
    CreateMessageRequestParams::new(vec![SamplingMessage::user_text(question)], 100)
        .with_tools(vec![Tool::new("calculator", schema)])
        .with_tool_choice(ToolChoice::default().with_mode(ToolChoiceMode::Auto))
}

fn describe(result: &CreateMessageResult) -> String {
    format!(
        "{} {:?} {}",
        result.model,
        result.stop_reason,
        serde_json::to_string(&result.content).unwrap_or_default()
    )
}

/// A client that accepts every form with `content`, opens every URL, samples a tool call and
/// has one root; `calls` counts the callbacks run.
pub fn answering_client(mode: EraMode, calls: Arc<AtomicUsize>) -> ClientBuilder {
    let (elicits, samples, roots) = (Arc::clone(&calls), Arc::clone(&calls), calls);
    Client::builder()
        .era(mode)
        .on_elicit(move |params: ElicitRequestParams| {
            elicits.fetch_add(1, Ordering::SeqCst);
            async move {
                Ok(match params {
                    ElicitRequestParams::Url(_) => ElicitResult::new(ElicitAction::Accept),
                    ElicitRequestParams::Form(form) if form.message == "How many stars?" => {
                        ElicitResult::accept(object(json!({"stars": 4})))
                    }
                    ElicitRequestParams::Form(form) if form.message == "Your name?" => {
                        ElicitResult::accept(object(json!({"name": "Ada"})))
                    }
                    _ => ElicitResult::accept(object(json!({"ok": true}))),
                })
            }
        })
        .on_sample(move |params: CreateMessageRequestParams| {
            samples.fetch_add(1, Ordering::SeqCst);
            async move {
                let tool = params.tools.and_then(|t| t.into_iter().next()).map(|t| t.name);
                let input = object(json!({"expr": "2+2"}));
                let call = ToolUseContent::new("call-1", tool.unwrap_or_default(), input);
                let content = SamplingContent::Single(SamplingMessageContentBlock::ToolUse(call));
                Ok(CreateMessageResult::new(Role::Assistant, content, "test-model")
                    .with_stop_reason("toolUse"))
            }
        })
        .sampling_tools(true)
        .on_roots(move || {
            roots.fetch_add(1, Ordering::SeqCst);
            async move { Ok(vec![Root::new("file:///books")]) }
        })
}

fn object(value: serde_json::Value) -> Map<String, serde_json::Value> {
    match value {
        serde_json::Value::Object(map) => map,
        _ => Map::new(),
    }
}

pub fn text(result: &modelcontext::CallToolResult) -> String {
    match result.content.first() {
        Some(ContentBlock::Text(text)) => text.text.clone(),
        other => format!("{other:?}"),
    }
}

#[tokio::test]
async fn the_same_handlers_work_in_both_eras() {
    for mode in [EraMode::Handshake, EraMode::Modern] {
        let calls = Arc::new(AtomicUsize::new(0));
        let client = answering_client(mode, Arc::clone(&calls))
            .connect(asking_server().in_memory())
            .await
            .expect("up");
        let call = |name: &'static str| client.call_tool(name, json!({"title": "Dune"}));
        assert_eq!(text(&call("order").await.expect("order")), "ordered Dune", "{mode:?}");
        assert_eq!(text(&call("sign_in").await.expect("url")), "Accept", "{mode:?}");
        assert_eq!(
            text(&call("ask_model").await.expect("sampling")),
            r#"test-model Some("toolUse") {"type":"tool_use","id":"call-1","name":"calculator","input":{"expr":"2+2"}}"#,
            "{mode:?}"
        );
        assert_eq!(text(&call("roots").await.expect("roots")), "file:///books", "{mode:?}");
        calls.store(0, Ordering::SeqCst);
        assert_eq!(text(&call("survey").await.expect("survey")), "1 roots, rating Some((4, None))");
        assert_eq!(
            calls.load(Ordering::SeqCst),
            3,
            "three questions, each answered once ({mode:?})"
        );
        let prompt = client.get_prompt("greeting", [("title", "Dune")]).await.expect("prompt");
        assert_eq!(
            serde_json::to_value(&prompt.messages[0].content).expect("json")["text"],
            "Hello Ada, about Dune"
        );
        let read = client.read_resource("vault://Dune").await.expect("resource");
        assert_eq!(serde_json::to_value(&read.contents).expect("json")[0]["text"], "secret");
    }
}

#[tokio::test]
async fn decline_and_cancel_reach_the_handler() {
    for (action, expected) in
        [(ElicitAction::Decline, "declined"), (ElicitAction::Cancel, "cancelled")]
    {
        for mode in [EraMode::Handshake, EraMode::Modern] {
            let client = Client::builder()
                .era(mode)
                .on_elicit(move |_| async move { Ok(ElicitResult::new(action)) })
                .connect(asking_server().in_memory())
                .await
                .expect("up");
            let result = client.call_tool("order", json!({"title": "Dune"})).await.expect("ok");
            assert_eq!(text(&result), expected, "{mode:?}");
        }
    }
}

#[tokio::test]
async fn a_missing_capability_is_32021_with_the_required_capabilities() {
    for mode in [EraMode::Handshake, EraMode::Modern] {
        let client =
            Client::builder().era(mode).connect(asking_server().in_memory()).await.expect("up");
        for (tool, required) in [
            ("order", json!({"elicitation": {"form": {}}})),
            ("sign_in", json!({"elicitation": {"url": {}}})),
            ("ask_model", json!({"sampling": {"tools": {}}})),
            ("roots", json!({"roots": {}})),
        ] {
            let err = client.call_tool(tool, json!({"title": "Dune"})).await.expect_err("refused");
            let mcp = err.as_mcp_error().expect("a JSON-RPC error");
            assert_eq!(mcp.code.0, -32021, "{tool} {mode:?}: {mcp:?}");
            assert_eq!(
                mcp.data,
                Some(json!({"requiredCapabilities": required})),
                "{tool} {mode:?}"
            );
        }
    }
}

#[tokio::test]
async fn a_form_that_is_not_flat_is_refused_with_the_field_named() {
    let client = answering_client(EraMode::Handshake, Arc::default())
        .connect(asking_server().in_memory())
        .await
        .expect("up");
    let err = client.call_tool("ship", json!({"title": "Dune"})).await.expect_err("refused");
    let message = &err.as_mcp_error().expect("JSON-RPC error").message;
    assert!(
        message.starts_with("Elicitation schema must be a flat object of primitive fields: field 'address' rendered as"),
        "{message}"
    );
}

#[cfg(feature = "http")]
#[tokio::test]
async fn the_same_handlers_work_over_http() {
    use modelcontext::transport::http::HttpTransport;
    let (addr, serve) = asking_server().http_endpoint().bind("127.0.0.1:0").await.expect("bind");
    tokio::spawn(serve);
    for mode in [EraMode::Handshake, EraMode::Modern] {
        let transport = HttpTransport::new(&format!("http://{addr}/mcp")).expect("url");
        let client = answering_client(mode, Arc::default()).connect(transport).await.expect("up");
        let call = |name: &'static str| client.call_tool(name, json!({"title": "Dune"}));
        assert_eq!(text(&call("order").await.expect("order")), "ordered Dune", "{mode:?}");
        assert_eq!(
            text(&call("survey").await.expect("survey")),
            "1 roots, rating Some((4, None))",
            "{mode:?}"
        );
    }
}

#[tokio::test]
async fn the_client_bounds_the_rounds_of_a_server_that_keeps_asking() {
    let endless = ToolDef::new("endless", |cx: Context, _: Title| async move {
        loop {
            cx.elicit::<Confirm>("Again?").await?;
        }
        #[allow(unreachable_code)]
        Ok::<_, McpError>("never")
    });
    let server = McpServer::new("endless").tool(endless).expect("registers");
    let calls = Arc::new(AtomicUsize::new(0));
    let client = answering_client(EraMode::Modern, Arc::clone(&calls))
        .max_input_rounds(3)
        .connect(server.in_memory())
        .await
        .expect("up");
    let err = client.call_tool("endless", json!({"title": "x"})).await.expect_err("bounded");
    assert_eq!(
        err.as_mcp_error().map(|e| e.message.as_str()),
        Some("'tools/call' still needed input after 3 rounds")
    );
    assert_eq!(calls.load(Ordering::SeqCst), 3, "one answer per round");
}
