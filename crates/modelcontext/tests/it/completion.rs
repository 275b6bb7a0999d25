//! Completions per argument: `#[arg(complete = f)]` on a prompt, `ResourceDef::complete` on a
//! template; successful completions in both eras, through the client and on the wire.

use modelcontext::types::{PromptReference, Reference, ResourceTemplateReference};
use modelcontext::{Client, CompletionRequest, EraMode, McpServer, ResourceDef, prompt};
use serde_json::json;

use crate::support::{TRANSPORTS, connect, in_both_eras};

const TITLES: &[&str] = &["Dune", "Dune Messiah", "Emma", "Neuromancer"];

async fn titles(request: CompletionRequest) -> Vec<String> {
    let titles = TITLES.iter().filter(|t| t.starts_with(&request.value));
    titles.map(|t| t.to_string()).collect()
}

/// Review a book.
#[prompt]
fn review(
    #[arg(complete = titles)] title: String,
    #[arg(complete = styles)] style: Option<String>,
) -> String {
    format!("Review {title} in a {} style.", style.unwrap_or_default())
}

/// Styles, narrowed by the title already chosen (the request's context).
async fn styles(request: CompletionRequest) -> Vec<String> {
    match request.arguments.get("title").map(String::as_str) {
        Some("Emma") => vec!["regency".into()],
        _ => vec!["plain".into(), "witty".into()],
    }
}

/// A prompt and a template whose arguments complete (also mounted in `compose.rs`).
pub fn server() -> McpServer {
    let chapter = ResourceDef::new("books://{title}/chapters/{n}", |p: Chapter| async move {
        format!("{} {}", p.title, p.n)
    })
    .complete("title", titles)
    .complete("n", |_: CompletionRequest| async { vec!["1".to_owned(), "2".to_owned()] });
    McpServer::new("complete")
        .prompt(review::prompt())
        .and_then(|s| s.resource(chapter))
        .expect("registers")
}

#[derive(modelcontext::__private::serde::Deserialize, modelcontext::schemars::JsonSchema)]
#[serde(crate = "modelcontext::__private::serde")]
#[schemars(crate = "modelcontext::schemars")]
struct Chapter {
    title: String,
    n: u32,
}

#[tokio::test]
async fn arguments_complete_from_their_functions() {
    for mode in [EraMode::Handshake, EraMode::Modern] {
        for &http in TRANSPORTS {
            let client = connect(server(), Client::builder().era(mode), http).await;
            assert!(client.server_capabilities().completions.is_some());
            let prompt = Reference::Prompt(PromptReference::new("review"));
            let done = client.complete(prompt.clone(), ("title", "Du")).await.expect("done");
            assert_eq!(done.completion.values, ["Dune", "Dune Messiah"], "{mode:?} {http}");
            let template =
                Reference::Resource(ResourceTemplateReference::new("books://{title}/chapters/{n}"));
            let done = client.complete(template.clone(), ("n", "")).await.expect("done");
            assert_eq!(done.completion.values, ["1", "2"]);
            // An argument without a completer: nothing to suggest, not an error.
            let none = client.complete(template, ("other", "x")).await.expect("done");
            assert!(none.completion.values.is_empty());
        }
    }
}

#[tokio::test]
async fn the_context_arguments_reach_the_completer_on_the_wire() {
    let params = r#""ref":{"type":"ref/prompt","name":"review"},"argument":{"name":"style","value":""},"context":{"arguments":{"title":"Emma"}}"#;
    for answer in in_both_eras(server, "{}", "completion/complete", params).await {
        assert_eq!(answer["result"]["completion"]["values"], json!(["regency"]), "{answer}");
    }
}
