//! The questions on the wire: live `elicitation/create` in the handshake era, MRTR
//! (`InputRequiredResult`, sealed `requestState`, retry with a new id) in the modern era.

use std::time::Duration;

use modelcontext::server::KeyRing;
use serde_json::Value;

use crate::input::asking_server;
use crate::support::{Wire, modern_meta};

const ELICIT_FORM: &str = r#"{"elicitation":{"form":{}}}"#;

#[tokio::test]
async fn handshake_elicitation_is_a_live_request() {
    let mut wire = Wire::start(asking_server(), "2025-11-25");
    wire.initialize_with(ELICIT_FORM).await;
    let question = wire.call(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"order","arguments":{"title":"Dune"}}}"#).await;
    assert_eq!(
        question,
        r#"{"jsonrpc":"2.0","id":1,"method":"elicitation/create","params":{"message":"Really order Dune?","requestedSchema":{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}}}"#
    );
    let answer = wire
        .call(r#"{"jsonrpc":"2.0","id":1,"result":{"action":"accept","content":{"ok":true}}}"#)
        .await;
    assert_eq!(
        answer,
        r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"ordered Dune"}]}}"#
    );
}

/// A modern `tools/call` of `order` with `extra` params members (JSON text).
fn order(id: u32, title: &str, extra: &str) -> String {
    let meta = modern_meta(ELICIT_FORM, "");
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"order","arguments":{{"title":"{title}"}}{extra},{meta}}}}}"#
    )
}

fn request_state(line: &str) -> String {
    let value: Value = serde_json::from_str(line).expect("json");
    value["result"]["requestState"].as_str().expect("a requestState").to_owned()
}

const ACCEPT: &str = r#""inputResponses":{"elicit-1":{"action":"accept","content":{"ok":true}}}"#;

#[tokio::test]
async fn modern_elicitation_is_an_input_required_round() {
    let mut wire = Wire::start(asking_server(), "2026-07-28");
    let first = wire.call(&order(1, "Dune", "")).await;
    let state = request_state(&first);
    assert!(state.contains('.'), "sealed: {state}");
    assert_eq!(
        first.replace(&state, "STATE"),
        r#"{"jsonrpc":"2.0","id":1,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"Asker","version":"0.1.0"}},"resultType":"input_required","inputRequests":{"elicit-1":{"method":"elicitation/create","params":{"message":"Really order Dune?","requestedSchema":{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}}}},"requestState":"STATE"}}"#
    );
    let retry =
        wire.call(&order(2, "Dune", &format!(r#",{ACCEPT},"requestState":"{state}""#))).await;
    assert_eq!(
        retry,
        r#"{"jsonrpc":"2.0","id":2,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"Asker","version":"0.1.0"}},"resultType":"complete","content":[{"type":"text","text":"ordered Dune"}]}}"#
    );
    // A retry without the answer is asked again, not failed.
    let unanswered = wire.call(&order(3, "Dune", &format!(r#","requestState":"{state}""#))).await;
    assert!(unanswered.contains(r#""resultType":"input_required""#), "{unanswered}");
}

const INVALID_STATE: &str = r#""error":{"code":-32602,"message":"Invalid or expired requestState","data":{"reason":"invalid_request_state"}}}"#;

#[tokio::test]
async fn tampered_foreign_and_misbound_request_state_is_refused() {
    let mut wire = Wire::start(asking_server(), "2026-07-28");
    let state = request_state(&wire.call(&order(1, "Dune", "")).await);
    let mut tampered = state.clone().into_bytes();
    tampered[3] = if tampered[3] == b'A' { b'B' } else { b'A' };
    let tampered = String::from_utf8(tampered).expect("ascii");
    let foreign = request_state(
        &Wire::start(asking_server(), "2026-07-28").call(&order(1, "Dune", "")).await,
    );
    let cases = [
        (2, "Dune", tampered.as_str()),
        (3, "Dune", "v1.garbage"),
        (4, "Dune", foreign.as_str()),
        // Sealed for "Dune": another title is another request.
        (5, "Neuromancer", state.as_str()),
    ];
    for (id, title, bad) in cases {
        let answer =
            wire.call(&order(id, title, &format!(r#",{ACCEPT},"requestState":"{bad}""#))).await;
        assert_eq!(answer, format!(r#"{{"jsonrpc":"2.0","id":{id},{INVALID_STATE}"#), "case {id}");
    }
    wire.assert_alive().await;
}

#[tokio::test]
async fn an_expired_request_state_is_refused() {
    let server = asking_server().request_state_ttl(Duration::ZERO);
    let mut wire = Wire::start(server, "2026-07-28");
    let state = request_state(&wire.call(&order(1, "Dune", "")).await);
    let answer =
        wire.call(&order(2, "Dune", &format!(r#",{ACCEPT},"requestState":"{state}""#))).await;
    assert_eq!(answer, format!(r#"{{"jsonrpc":"2.0","id":2,{INVALID_STATE}"#));
}

#[tokio::test]
async fn servers_sharing_signing_keys_accept_each_others_state() {
    let keys = vec![vec![7u8; 32]];
    let one = asking_server().signing_keys(keys.clone()).expect("keys");
    let two = asking_server().signing_keys(keys).expect("keys");
    let state = request_state(&Wire::start(one, "2026-07-28").call(&order(1, "Dune", "")).await);
    let answer = Wire::start(two, "2026-07-28")
        .call(&order(2, "Dune", &format!(r#",{ACCEPT},"requestState":"{state}""#)))
        .await;
    assert!(answer.contains("ordered Dune"), "{answer}");
}

/// Round 1 on a server with `first`, the retry on a server with `second` (two instances of a
/// deployment, or a stranger): the retry's answer.
async fn round_one_then_retry(first: KeyRing, second: KeyRing) -> String {
    let a = asking_server().key_ring(first);
    let b = asking_server().key_ring(second);
    let state = request_state(&Wire::start(a, "2026-07-28").call(&order(1, "Dune", "")).await);
    Wire::start(b, "2026-07-28")
        .call(&order(2, "Dune", &format!(r#",{ACCEPT},"requestState":"{state}""#)))
        .await
}

#[tokio::test]
async fn a_deployment_key_ring_opens_on_every_instance_through_rotation_and_not_elsewhere() {
    let ring = |keys: &[&str]| {
        let hex: Vec<String> = keys.iter().map(|k| k.repeat(32)).collect();
        KeyRing::from_hex(&hex).expect("hex keys").audience("bookshop-prod")
    };
    let (k1, k2, k3) = ("11", "22", "33");
    let same = round_one_then_retry(ring(&[k1]), ring(&[k1])).await;
    assert!(same.contains("ordered Dune"), "same ring: {same}");
    let rotating = round_one_then_retry(ring(&[k1]), ring(&[k2, k1])).await;
    assert!(rotating.contains("ordered Dune"), "B rotated to k2 and still opens k1: {rotating}");
    let rotated_first = round_one_then_retry(ring(&[k2, k1]), ring(&[k1])).await;
    assert_eq!(rotated_first, format!(r#"{{"jsonrpc":"2.0","id":2,{INVALID_STATE}"#));
    let stranger = round_one_then_retry(ring(&[k1]), ring(&[k3])).await;
    assert_eq!(stranger, format!(r#"{{"jsonrpc":"2.0","id":2,{INVALID_STATE}"#));
    let other_deployment = round_one_then_retry(ring(&[k1]), ring(&[k1]).audience("staging")).await;
    assert_eq!(other_deployment, format!(r#"{{"jsonrpc":"2.0","id":2,{INVALID_STATE}"#));
}

#[tokio::test]
async fn several_questions_travel_together_and_rounds_accumulate() {
    let meta = modern_meta(r#"{"elicitation":{},"roots":{}}"#, "");
    let survey = |id: u32, extra: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"survey","arguments":{{"title":"x"}}{extra},{meta}}}}}"#
        )
    };
    let mut wire = Wire::start(asking_server(), "2026-07-28");
    let first = wire.call(&survey(1, "")).await;
    let value: Value = serde_json::from_str(&first).expect("json");
    let keys: Vec<&String> =
        value["result"]["inputRequests"].as_object().expect("requests").keys().collect();
    assert_eq!(keys, ["elicit-1", "roots-2"]);
    let answers = r#""inputResponses":{"elicit-1":{"action":"accept","content":{"ok":true}},"roots-2":{"roots":[{"uri":"file:///a"},{"uri":"file:///b"}]}}"#;
    let second = wire
        .call(&survey(2, &format!(r#",{answers},"requestState":"{}""#, request_state(&first))))
        .await;
    let value: Value = serde_json::from_str(&second).expect("json");
    let keys: Vec<&String> =
        value["result"]["inputRequests"].as_object().expect("requests").keys().collect();
    assert_eq!(keys, ["elicit-3"], "only the new question: {second}");
    // The last round sends only its own answer; the earlier ones ride in the state.
    let rating = r#""inputResponses":{"elicit-3":{"action":"accept","content":{"stars":5,"comment":"great"}}}"#;
    let third = wire
        .call(&survey(3, &format!(r#",{rating},"requestState":"{}""#, request_state(&second))))
        .await;
    assert!(third.contains(r#"2 roots, rating Some((5, Some(\"great\")))"#), "{third}");
}

#[tokio::test]
async fn cancelling_a_call_cancels_the_question_it_awaits() {
    let mut wire = Wire::start(asking_server(), "2025-11-25");
    wire.initialize_with(ELICIT_FORM).await;
    let question = wire.call(r#"{"jsonrpc":"2.0","id":"call","method":"tools/call","params":{"name":"order","arguments":{"title":"Dune"}}}"#).await;
    assert!(
        question.starts_with(r#"{"jsonrpc":"2.0","id":1,"method":"elicitation/create""#),
        "{question}"
    );
    let cancelled = wire
        .call(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"call","reason":"user"}}"#)
        .await;
    assert_eq!(
        cancelled,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"The caller dropped the request"}}"#
    );
    wire.assert_alive().await;
}

/// A form with every field shape `elicit::<T>` accepts.
#[derive(serde::Deserialize, modelcontext::schemars::JsonSchema)]
#[schemars(crate = "modelcontext::schemars")]
#[allow(dead_code)]
struct Preferences {
    /// Your e-mail address.
    #[schemars(email)]
    email: String,
    #[schemars(range(min = 1, max = 10))]
    copies: i64,
    gift: Option<bool>,
    format: Format,
}

#[derive(serde::Deserialize, modelcontext::schemars::JsonSchema)]
#[schemars(crate = "modelcontext::schemars")]
#[allow(dead_code)]
enum Format {
    #[serde(rename = "paperback")]
    Paperback,
    #[serde(rename = "ebook")]
    Ebook,
}

#[tokio::test]
async fn a_form_is_derived_from_a_flat_struct() {
    use modelcontext::{Context, McpServer, ToolDef};
    let ask = ToolDef::new("ask", |cx: Context, _: modelcontext::server::NoArgs| async move {
        cx.elicit::<Preferences>("Preferences?").await.map(|_| "ok")
    });
    let mut wire = Wire::start(McpServer::new("forms").tool(ask).expect("tool"), "2025-11-25");
    wire.initialize_with(ELICIT_FORM).await;
    let question = wire
        .call(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask"}}"#)
        .await;
    expect_test::expect![[r#"{"jsonrpc":"2.0","id":1,"method":"elicitation/create","params":{"message":"Preferences?","requestedSchema":{"type":"object","properties":{"copies":{"type":"integer","minimum":1,"maximum":10},"email":{"type":"string","description":"Your e-mail address.","format":"email"},"format":{"type":"string","enum":["paperback","ebook"]},"gift":{"type":"boolean"}},"required":["email","copies","format"]}}}"#]].assert_eq(&question);
}

#[tokio::test]
async fn a_question_can_name_its_input_request_key() {
    use modelcontext::server::NoArgs;
    use modelcontext::{Context, McpServer, ToolDef};
    let greet = ToolDef::new("greet", |cx: Context, _: NoArgs| async move {
        let name =
            cx.question("user_name").elicit::<crate::input::Name>("What is your name?").await?;
        let name = name.accepted().map_or("stranger".to_owned(), |n| n.name);
        Ok::<_, modelcontext::McpError>(format!("Hello, {name}!"))
    });
    let mut wire = Wire::start(McpServer::new("greeter").tool(greet).expect("tool"), "2026-07-28");
    let meta = modern_meta(ELICIT_FORM, "");
    let call = |id: u32, extra: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"greet","arguments":{{}}{extra},{meta}}}}}"#
        )
    };
    let first = wire.call(&call(1, "")).await;
    assert!(
        first.contains(r#""inputRequests":{"user_name":{"method":"elicitation/create""#),
        "{first}"
    );
    let answer = r#""inputResponses":{"user_name":{"action":"accept","content":{"name":"Alice"}}}"#;
    let retry = wire
        .call(&call(2, &format!(r#",{answer},"requestState":"{}""#, request_state(&first))))
        .await;
    assert!(retry.contains(r#""text":"Hello, Alice!""#), "{retry}");
}

/// SEP-2322: servers ignore what they do not recognize. Valid answers that come with answers
/// to questions never asked (and no `requestState`: answered up front) complete the call.
#[tokio::test]
async fn answers_under_unknown_keys_are_ignored_and_the_call_completes() {
    let mut wire = Wire::start(asking_server(), "2026-07-28");
    let answers = r#","inputResponses":{"elicit-1":{"action":"accept","content":{"ok":true}},"unknown_extra_key":{"action":"accept","content":{"foo":"bar"}},"another_unexpected":{"action":"accept","content":{"baz":123}}}"#;
    let up_front = wire.call(&order(1, "Dune", answers)).await;
    assert_eq!(
        up_front,
        r#"{"jsonrpc":"2.0","id":1,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"Asker","version":"0.1.0"}},"resultType":"complete","content":[{"type":"text","text":"ordered Dune"}]}}"#
    );
    let state = request_state(&wire.call(&order(2, "Dune", "")).await);
    let retry =
        wire.call(&order(3, "Dune", &format!(r#"{answers},"requestState":"{state}""#))).await;
    assert_eq!(
        retry,
        r#"{"jsonrpc":"2.0","id":3,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"Asker","version":"0.1.0"}},"resultType":"complete","content":[{"type":"text","text":"ordered Dune"}]}}"#
    );
}

/// An entry that is no answer at all is left out rather than failing the request: under an
/// unknown key it is ignored, under the question's key the question is asked again.
#[tokio::test]
async fn entries_that_are_no_answer_are_left_out() {
    let mut wire = Wire::start(asking_server(), "2026-07-28");
    let answers = r#","inputResponses":{"elicit-1":{"action":"accept","content":{"ok":true}},"extra":42,"more":[1,2]}"#;
    let completed = wire.call(&order(1, "Dune", answers)).await;
    assert!(completed.contains(r#""resultType":"complete""#), "{completed}");
    let invalid = wire.call(&order(2, "Dune", r#","inputResponses":{"elicit-1":12345}"#)).await;
    assert!(invalid.contains(r#""resultType":"input_required""#), "{invalid}");
    let not_an_object = wire.call(&order(3, "Dune", r#","inputResponses":7"#)).await;
    assert!(not_an_object.contains(r#""code":-32602"#), "{not_an_object}");
}

/// A transport that authenticated someone: serves `server` in memory with a [`PrincipalId`].
fn served_as(server: modelcontext::McpServer, who: &str) -> Wire {
    use modelcontext::server::{Extensions, PrincipalId};
    let mut extensions = Extensions::new();
    extensions.insert(PrincipalId(who.to_owned()));
    Wire::start_serving(move |stdio| async move { server.serve_with(stdio, extensions).await })
}

#[tokio::test]
async fn request_state_is_bound_to_the_principal() {
    let keys = vec![vec![9u8; 32]];
    let server = || asking_server().signing_keys(keys.clone()).expect("keys");
    let state = request_state(&served_as(server(), "alice").call(&order(1, "Dune", "")).await);
    let retry = order(2, "Dune", &format!(r#",{ACCEPT},"requestState":"{state}""#));
    let as_alice = served_as(server(), "alice").call(&retry).await;
    assert!(as_alice.contains("ordered Dune"), "{as_alice}");
    let as_bob = served_as(server(), "bob").call(&retry).await;
    assert_eq!(as_bob, format!(r#"{{"jsonrpc":"2.0","id":2,{INVALID_STATE}"#));
    let anonymous = Wire::start(server(), "2026-07-28").call(&retry).await;
    assert_eq!(anonymous, format!(r#"{{"jsonrpc":"2.0","id":2,{INVALID_STATE}"#));
}

#[tokio::test]
async fn a_handler_reads_what_the_transport_attached() {
    use modelcontext::server::{NoArgs, PrincipalId};
    use modelcontext::{Context, McpServer, ToolDef};
    let whoami = ToolDef::new("whoami", |cx: Context, _: NoArgs| async move {
        cx.extension::<PrincipalId>().map_or("nobody".to_owned(), |p| p.0.clone())
    });
    let server = McpServer::new("who").tool(whoami).expect("tool");
    let meta = modern_meta("{}", "");
    let call = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"whoami",{meta}}}}}"#
    );
    assert!(served_as(server.clone(), "alice").call(&call).await.contains(r#""text":"alice""#));
    assert!(Wire::start(server, "2026-07-28").call(&call).await.contains(r#""text":"nobody""#));
}
