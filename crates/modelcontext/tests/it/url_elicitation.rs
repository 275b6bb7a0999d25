//! URL elicitation end to end: the handler chooses the `elicitationId`, fails a call with
//! -32042 through a typed helper, and sends `notifications/elicitation/complete`; the client
//! surfaces both. Both eras where the era has it, in memory and over HTTP.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use modelcontext::server::NoArgs;
use modelcontext::types::{ElicitRequestParams, ElicitResult, URL_ELICITATION_REQUIRED};
use modelcontext::{Client, Context, EraMode, McpServer, ToolDef, UrlElicitation};
use serde_json::Value;
use tokio::sync::mpsc;

use crate::support::{TRANSPORTS, assert_valid, connect, in_both_eras};

fn server() -> McpServer {
    let pay = ToolDef::new("pay", |cx: Context, _: NoArgs| async move {
        let elicitation = UrlElicitation::new("Confirm the payment", "https://pay.example/confirm")
            .with_id("pay-1");
        let action = cx.require_url_elicitation(&elicitation).await?;
        Ok::<_, modelcontext::McpError>(format!("{action:?}"))
    });
    let sign_in = ToolDef::new("sign_in", |cx: Context, _: NoArgs| async move {
        let elicitation = UrlElicitation::new("Sign in", "https://shop.example/login");
        let action = cx.elicit_url_with(&elicitation).await?;
        // The web flow finished (here at once): tell the client, after the call too if need be.
        cx.elicitation_completer(elicitation.id()).complete().await.expect("sent");
        Ok::<_, modelcontext::McpError>(format!("{action:?} {}", elicitation.id()))
    });
    McpServer::new("pay").tool(pay).and_then(|s| s.tool(sign_in)).expect("registers")
}

/// A client that accepts every elicitation, recording the URL ids it was asked about, and
/// reports completions on a channel.
fn client(
    mode: EraMode,
    asked: Arc<Mutex<Vec<Option<String>>>>,
    completed: mpsc::UnboundedSender<String>,
) -> modelcontext::ClientBuilder {
    Client::builder()
        .era(mode)
        .on_elicit(move |params| {
            let asked = Arc::clone(&asked);
            async move {
                if let ElicitRequestParams::Url(url) = params {
                    asked.lock().expect("lock").push(url.elicitation_id);
                }
                Ok(ElicitResult::accept(Default::default()))
            }
        })
        .on_elicitation_complete(move |id| {
            let _ = completed.send(id);
        })
}

#[tokio::test]
async fn the_typed_helper_fails_a_handshake_call_with_32042_and_asks_a_modern_one() {
    for &http in TRANSPORTS {
        let asked = Arc::default();
        let (tx, _rx) = mpsc::unbounded_channel();
        let old =
            connect(server(), client(EraMode::Handshake, Arc::clone(&asked), tx.clone()), http)
                .await;
        let err = old.call_tool("pay", serde_json::json!({})).await.expect_err("-32042");
        assert_eq!(err.code(), Some(URL_ELICITATION_REQUIRED), "{err}");
        let listed = err.url_elicitations().expect("the elicitations");
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].elicitation_id.as_deref(), Some("pay-1"));
        assert_eq!(listed[0].url, "https://pay.example/confirm");

        let new = connect(server(), client(EraMode::Modern, Arc::clone(&asked), tx), http).await;
        let result = new.call_tool("pay", serde_json::json!({})).await.expect("answered");
        let text = serde_json::to_value(&result.content).expect("json")[0]["text"].clone();
        assert_eq!(text, "Accept");
        // 2026-07-28 has no elicitationId.
        assert_eq!(*asked.lock().expect("lock"), [None], "http: {http}");
    }
}

#[tokio::test]
async fn the_32042_error_and_the_url_request_validate_against_the_schemas() {
    let caps = r#"{"elicitation":{"url":{}}}"#;
    let [old, new] =
        in_both_eras(server, caps, "tools/call", r#""name":"pay","arguments":{}"#).await;
    assert_eq!(old["error"]["code"], -32042, "{old}");
    assert_valid("2025-11-25", "URLElicitationRequiredError", &old);
    assert_eq!(old["error"]["data"]["elicitations"][0]["elicitationId"], "pay-1");
    assert_eq!(old["error"]["data"]["elicitations"][0]["mode"], "url");
    let request = &new["result"]["inputRequests"];
    let (_, first) = request.as_object().and_then(|m| m.iter().next()).expect("one question");
    assert_eq!(first["params"]["mode"], "url", "{new}");
    assert_eq!(first["params"].get("elicitationId"), None::<&Value>);
    // Without the url capability: -32021, not -32042.
    let [old, _] = in_both_eras(
        server,
        r#"{"elicitation":{}}"#,
        "tools/call",
        r#""name":"pay","arguments":{}"#,
    )
    .await;
    assert_eq!(old["error"]["code"], -32021, "{old}");
}

#[tokio::test]
async fn the_handler_knows_its_elicitation_id_and_completes_it() {
    for &http in TRANSPORTS {
        let asked = Arc::new(Mutex::new(Vec::new()));
        let (tx, mut rx) = mpsc::unbounded_channel();
        let client =
            connect(server(), client(EraMode::Handshake, Arc::clone(&asked), tx), http).await;
        let result = client.call_tool("sign_in", serde_json::json!({})).await.expect("done");
        let text = serde_json::to_value(&result.content).expect("json")[0]["text"].clone();
        let id = text.as_str().and_then(|t| t.strip_prefix("Accept ")).expect("the id").to_owned();
        assert_eq!(*asked.lock().expect("lock"), [Some(id.clone())]);
        let completed = tokio::time::timeout(Duration::from_secs(5), rx.recv())
            .await
            .expect("the completion arrived within 5 s");
        assert_eq!(completed, Some(id), "http: {http}");
        client.close().await;
    }
}
