//! Elicitation forms: every field form the 2025-11-25 and 2026-07-28 elicitation schemas allow
//! derives from a flat struct (enums with and without titles, multi-select, defaults, number
//! ranges, string formats and lengths), and an answer that breaks the requested form is
//! refused before the handler sees it. Both eras, on the wire, schema-checked.

use std::collections::BTreeSet;

use modelcontext::__private::serde::Deserialize;
use modelcontext::server::NoArgs;
use modelcontext::types::{ElicitResult, INVALID_PARAMS};
use modelcontext::{Client, Context, Elicitation, EraMode, McpServer, ToolDef, schemars};
use serde_json::{Value, json};

use crate::support::{TRANSPORTS, connect, in_both_eras};

/// A plain choice: `enum` of strings.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(crate = "modelcontext::__private::serde", rename_all = "lowercase")]
#[schemars(crate = "modelcontext::schemars")]
enum Size {
    Small,
    Large,
}

/// A choice whose options have display titles: `oneOf` of `const` + `title`.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord, Deserialize, schemars::JsonSchema)]
#[serde(crate = "modelcontext::__private::serde", rename_all = "lowercase")]
#[schemars(crate = "modelcontext::schemars")]
enum Topping {
    /// Extra cheese
    Cheese,
    /// Fresh basil
    Basil,
}

fn default_count() -> u32 {
    1
}

#[allow(dead_code)]
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(crate = "modelcontext::__private::serde")]
#[schemars(crate = "modelcontext::schemars")]
struct Order {
    /// Your name
    #[schemars(length(min = 1, max = 40))]
    name: String,
    #[schemars(email)]
    email: String,
    #[schemars(url)]
    homepage: Option<String>,
    #[schemars(extend("format" = "date"))]
    deliver_on: String,
    #[schemars(range(min = 1, max = 10))]
    #[serde(default = "default_count")]
    count: u32,
    #[schemars(range(min = 0.5, max = 2.5))]
    scale: f64,
    gift: bool,
    size: Size,
    topping: Topping,
    extras: Vec<Size>,
    #[schemars(length(max = 2))]
    toppings: BTreeSet<Topping>,
}

fn server() -> McpServer {
    let order = ToolDef::new("order", |cx: Context, _: NoArgs| async move {
        match cx.elicit::<Order>("Your order?").await? {
            Elicitation::Accepted(order) => Ok::<_, modelcontext::McpError>(format!("{order:?}")),
            _ => Ok("no order".into()),
        }
    });
    McpServer::new("forms").tool(order).expect("registers")
}

/// The form `Order` derives, as the client receives it.
fn expected_form() -> Value {
    let toppings = json!([{"const": "cheese", "title": "Extra cheese"}, {"const": "basil", "title": "Fresh basil"}]);
    json!({
        "type": "object",
        "properties": {
            "count": {"type": "integer", "minimum": 1, "maximum": 10, "default": 1},
            "deliver_on": {"type": "string", "format": "date"},
            "email": {"type": "string", "format": "email"},
            "extras": {"type": "array", "items": {"type": "string", "enum": ["small", "large"]}},
            "gift": {"type": "boolean"},
            "homepage": {"type": "string", "format": "uri"},
            "name": {"type": "string", "description": "Your name", "minLength": 1, "maxLength": 40},
            "scale": {"type": "number", "minimum": 0.5, "maximum": 2.5},
            "size": {"type": "string", "description": "A plain choice: `enum` of strings.",
                "enum": ["small", "large"]},
            "topping": {"type": "string",
                "description": "A choice whose options have display titles: `oneOf` of `const` + `title`.",
                "oneOf": toppings},
            "toppings": {"type": "array", "maxItems": 2, "items": {"anyOf": toppings}}
        },
        "required": ["name", "email", "deliver_on", "scale", "gift", "size", "topping", "extras",
            "toppings"]
    })
}

#[tokio::test]
async fn every_field_form_derives_from_a_flat_struct() {
    let caps = r#"{"elicitation":{"form":{}}}"#;
    let call = r#""name":"order","arguments":{}"#;
    // Each message was checked against its revision's schema on the way in.
    let [old, new] = in_both_eras(server, caps, "tools/call", call).await;
    assert_eq!(old["method"], "elicitation/create", "{old}");
    assert_eq!(old["params"]["requestedSchema"], expected_form());
    let asked = &new["result"]["inputRequests"]["elicit-1"]["params"]["requestedSchema"];
    assert_eq!(*asked, expected_form(), "{new}");
}

fn good_answer() -> Value {
    json!({"name": "Ada", "email": "ada@example.com", "deliver_on": "2026-12-24", "count": 2,
        "scale": 1.5, "gift": true, "size": "small", "topping": "basil", "extras": ["large"],
        "toppings": ["cheese", "basil"]})
}

/// The answer with `key` set to `value` (`Value::Null` removes it).
fn answer_with(key: &str, value: Value) -> Value {
    let mut answer = good_answer();
    match value {
        Value::Null => answer.as_object_mut().and_then(|a| a.remove(key)),
        value => answer.as_object_mut().and_then(|a| a.insert(key.into(), value)),
    };
    answer
}

fn answering(answer: Value, mode: EraMode) -> modelcontext::ClientBuilder {
    Client::builder().era(mode).on_elicit(move |_| {
        let content = answer.as_object().cloned().unwrap_or_default();
        async move { Ok(ElicitResult::accept(content)) }
    })
}

#[tokio::test]
async fn an_answer_outside_the_form_is_refused_before_the_handler_sees_it() {
    let bad = [
        answer_with("count", json!(11)),
        answer_with("scale", json!(3)),
        answer_with("name", json!("")),
        answer_with("topping", json!("olive")),
        answer_with("extras", json!(["huge"])),
        answer_with("toppings", json!(["cheese", "basil", "cheese"])),
        answer_with("gift", json!("yes")),
        answer_with("email", Value::Null),
    ];
    for mode in [EraMode::Handshake, EraMode::Modern] {
        for &http in TRANSPORTS {
            let client = connect(server(), answering(good_answer(), mode), http).await;
            let result = client.call_tool("order", json!({})).await.expect("accepted");
            let text = serde_json::to_value(&result.content).expect("json")[0]["text"].clone();
            assert!(text.as_str().is_some_and(|t| t.starts_with("Order {")), "{text}");
            for answer in &bad {
                let client = connect(server(), answering(answer.clone(), mode), http).await;
                let err = client.call_tool("order", json!({})).await.expect_err("refused");
                let message = err.as_mcp_error().map(|e| e.message.clone()).unwrap_or_default();
                assert_eq!(err.code(), Some(INVALID_PARAMS), "{mode:?} {answer}: {err}");
                assert!(message.contains("does not match the requested form"), "{message}");
            }
        }
    }
}
