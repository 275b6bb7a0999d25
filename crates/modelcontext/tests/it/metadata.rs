//! Icons and metadata on every definition the spec gives them to, from the builders and from
//! the macro attributes, listed in both eras and checked against each revision's schema.

use modelcontext::types::{Annotations, Icon, IconTheme, Role};
use modelcontext::{McpServer, PromptDef, ResourceDef, ToolDef, prompt, resource, tool};
use serde_json::{Map, Value, json};

use crate::support::in_both_eras;

fn meta(key: &str) -> Map<String, Value> {
    json!({ "example.com/origin": key }).as_object().cloned().expect("an object")
}

fn dark_icon() -> Vec<Icon> {
    vec![
        Icon::new("https://example.com/dark.svg")
            .with_theme(IconTheme::Dark)
            .with_sizes(vec!["any".into()]),
    ]
}

/// Say hello.
#[tool(icon = "https://example.com/hello.png", meta = meta("tool"))]
fn hello() -> String {
    "hello".into()
}

/// The catalog.
#[resource(
    "books://catalog",
    icon = "https://example.com/books.png",
    size = 2048,
    annotations = Annotations::default().with_priority(0.5),
    meta = meta("resource")
)]
fn catalog() -> String {
    "Dune".into()
}

/// One book.
#[resource("books://{title}", icons = dark_icon(), meta = meta("template"))]
fn book(title: String) -> String {
    title
}

/// Review a book.
#[prompt(icon = "https://example.com/review.png", meta = meta("prompt"))]
fn review(title: String) -> String {
    format!("Review {title}.")
}

fn macro_server() -> McpServer {
    McpServer::new("meta")
        .tool(hello::tool())
        .and_then(|s| s.resource(catalog::resource()))
        .and_then(|s| s.resource(book::resource()))
        .and_then(|s| s.prompt(review::prompt()))
        .expect("registers")
}

fn builder_server() -> McpServer {
    let audience = Annotations::default().with_audience(vec![Role::User]);
    let hello = ToolDef::new("hello", || async { "hello" })
        .icons(vec![Icon::new("https://example.com/hello.png")])
        .meta(meta("tool"));
    let catalog = ResourceDef::new("books://catalog", || async { "Dune" })
        .icons(vec![Icon::new("https://example.com/books.png")])
        .size(2048)
        .annotations(audience)
        .meta(meta("resource"));
    let book = ResourceDef::new("books://{title}", |p: BookParams| async move { p.title })
        .icons(dark_icon())
        .meta(meta("template"));
    let review = PromptDef::new("review", || async { "Review." })
        .icons(vec![Icon::new("https://example.com/review.png")])
        .meta(meta("prompt"));
    McpServer::new("meta")
        .tool(hello)
        .and_then(|s| s.resource(catalog))
        .and_then(|s| s.resource(book))
        .and_then(|s| s.prompt(review))
        .expect("registers")
}

#[derive(modelcontext::__private::serde::Deserialize, modelcontext::schemars::JsonSchema)]
#[serde(crate = "modelcontext::__private::serde")]
#[schemars(crate = "modelcontext::schemars")]
struct BookParams {
    title: String,
}

async fn first(server: fn() -> McpServer, method: &str, list: &str) -> [Value; 2] {
    in_both_eras(server, "{}", method, "").await.map(|answer| answer["result"][list][0].clone())
}

#[tokio::test]
async fn every_definition_carries_its_icons_and_metadata() {
    for server in [macro_server as fn() -> McpServer, builder_server] {
        for tool in first(server, "tools/list", "tools").await {
            assert_eq!(tool["icons"], json!([{"src": "https://example.com/hello.png"}]), "{tool}");
            assert_eq!(tool["_meta"], json!({"example.com/origin": "tool"}));
        }
        for resource in first(server, "resources/list", "resources").await {
            assert_eq!(resource["icons"][0]["src"], "https://example.com/books.png", "{resource}");
            assert_eq!(resource["size"], 2048);
            assert!(resource["annotations"].is_object(), "{resource}");
            assert_eq!(resource["_meta"], json!({"example.com/origin": "resource"}));
        }
        for template in first(server, "resources/templates/list", "resourceTemplates").await {
            assert_eq!(
                template["icons"],
                json!([{"src": "https://example.com/dark.svg", "sizes": ["any"], "theme": "dark"}]),
                "{template}"
            );
            assert_eq!(template.get("size"), None);
            assert_eq!(template["_meta"], json!({"example.com/origin": "template"}));
        }
        for prompt in first(server, "prompts/list", "prompts").await {
            assert_eq!(prompt["icons"][0]["src"], "https://example.com/review.png", "{prompt}");
            assert_eq!(prompt["_meta"], json!({"example.com/origin": "prompt"}));
        }
    }
}

#[tokio::test]
async fn our_client_sees_the_metadata_over_every_transport() {
    for mode in [modelcontext::EraMode::Handshake, modelcontext::EraMode::Modern] {
        for &http in crate::support::TRANSPORTS {
            let builder = modelcontext::Client::builder().era(mode);
            let client = crate::support::connect(macro_server(), builder, http).await;
            let tools = client.list_all_tools().await.expect("tools");
            assert_eq!(tools[0].icons, Some(vec![Icon::new("https://example.com/hello.png")]));
            let resources = client.list_resources(None).await.expect("resources");
            assert_eq!(resources.resources[0].size, Some(2048), "{mode:?} {http}");
            let prompts = client.list_prompts(None).await.expect("prompts");
            assert_eq!(prompts.prompts[0].meta, Some(meta("prompt")));
        }
    }
}
