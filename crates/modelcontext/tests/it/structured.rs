//! Structured tool output: a plain `Serialize + JsonSchema` type returned from `#[tool]`, the
//! explicit `Json<T>`, a hand-written tool's `output_schema`, and a tool that breaks its own
//! schema; in both eras, every message checked against its revision's schema.

use modelcontext::__private::serde;
use modelcontext::types::ContentBlock;
use modelcontext::{CallToolResult, Json, McpServer, ToolDef, schemars, tool};
use serde_json::{Value, json};

use crate::support::in_both_eras;

#[derive(serde::Serialize, schemars::JsonSchema)]
#[serde(crate = "modelcontext::__private::serde")]
#[schemars(crate = "modelcontext::schemars")]
struct Book {
    title: String,
    year: u32,
}

/// The book of the day.
#[tool]
fn book_of_the_day() -> Book {
    Book { title: "Dune".into(), year: 1965 }
}

/// A book by title, or an error the model reads.
#[tool]
async fn find_book(title: String) -> Result<Book, String> {
    match title.as_str() {
        "Dune" => Ok(Book { title, year: 1965 }),
        _ => Err(format!("no book titled '{title}'")),
    }
}

/// Every title: a list is wrapped as `{"result": [..]}`.
#[tool]
fn titles() -> Vec<String> {
    vec!["Dune".into(), "Emma".into()]
}

/// The explicit form still works.
#[tool]
fn wrapped() -> Json<Book> {
    Json(Book { title: "Emma".into(), year: 1815 })
}

fn schema(value: Value) -> serde_json::Map<String, Value> {
    value.as_object().cloned().expect("an object schema")
}

/// A hand-written tool with a declared output schema; `count` picks what it returns.
fn counted() -> ToolDef {
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    #[serde(crate = "modelcontext::__private::serde")]
    #[schemars(crate = "modelcontext::schemars")]
    struct Args {
        count: i64,
    }
    ToolDef::new("counted", |Args { count }: Args| async move {
        let structured = match count {
            // Breaks the schema: `count` must be an integer.
            -1 => json!({"count": "many"}),
            // No structured content at all.
            -2 => return CallToolResult::new(vec![ContentBlock::text("nothing")]),
            n => json!({"count": n}),
        };
        CallToolResult::text(structured.to_string()).with_structured_content(structured)
    })
    .output_schema(schema(json!({
        "type": "object",
        "properties": {"count": {"type": "integer"}},
        "required": ["count"]
    })))
}

fn server() -> McpServer {
    McpServer::new("structured")
        .tool(book_of_the_day::tool())
        .and_then(|s| s.tool(find_book::tool()))
        .and_then(|s| s.tool(titles::tool()))
        .and_then(|s| s.tool(wrapped::tool()))
        .and_then(|s| s.tool(counted()))
        .expect("registers")
}

fn call(name: &str, arguments: &str) -> String {
    format!(r#""name":"{name}","arguments":{arguments}"#)
}

#[tokio::test]
async fn a_plain_struct_is_structured_output_with_its_schema() {
    for answer in in_both_eras(server, "{}", "tools/list", "").await {
        let tools = answer["result"]["tools"].as_array().expect("tools").clone();
        let find = |name: &str| tools.iter().find(|t| t["name"] == name).cloned().expect(name);
        let book = &find("book_of_the_day")["outputSchema"];
        assert_eq!(book["type"], "object", "{book}");
        assert_eq!(book["properties"]["year"]["type"], "integer", "{book}");
        assert_eq!(find("find_book")["outputSchema"], *book);
        assert_eq!(find("wrapped")["outputSchema"], *book);
        let titles = &find("titles")["outputSchema"];
        assert_eq!(titles["properties"]["result"]["type"], "array", "{titles}");
        assert_eq!(find("counted")["outputSchema"]["required"], json!(["count"]));
    }
    for answer in in_both_eras(server, "{}", "tools/call", &call("book_of_the_day", "{}")).await {
        let result = &answer["result"];
        assert_eq!(result["structuredContent"], json!({"title": "Dune", "year": 1965}));
        let text: Value =
            serde_json::from_str(result["content"][0]["text"].as_str().expect("text"))
                .expect("the text is the JSON");
        assert_eq!(text, result["structuredContent"]);
    }
    for answer in in_both_eras(server, "{}", "tools/call", &call("titles", "{}")).await {
        assert_eq!(answer["result"]["structuredContent"], json!({"result": ["Dune", "Emma"]}));
    }
}

#[tokio::test]
async fn a_result_of_a_struct_is_structured_and_its_error_reaches_the_model() {
    let found = call("find_book", r#"{"title":"Dune"}"#);
    for answer in in_both_eras(server, "{}", "tools/call", &found).await {
        assert_eq!(answer["result"]["structuredContent"]["year"], 1965, "{answer}");
    }
    let missing = call("find_book", r#"{"title":"Nothing"}"#);
    for answer in in_both_eras(server, "{}", "tools/call", &missing).await {
        let result = &answer["result"];
        assert_eq!(result["isError"], true, "{answer}");
        assert_eq!(result.get("structuredContent"), None, "{answer}");
        assert_eq!(
            result["content"][0]["text"],
            "Error executing tool find_book: no book titled 'Nothing'"
        );
    }
}

#[tokio::test]
async fn a_hand_written_output_schema_is_enforced() {
    let good = call("counted", r#"{"count":3}"#);
    for answer in in_both_eras(server, "{}", "tools/call", &good).await {
        assert_eq!(answer["result"]["structuredContent"], json!({"count": 3}), "{answer}");
    }
    // Output that breaks the tool's own schema, or is missing, is a server bug: the model
    // gets the withheld-message text, never the bad value.
    for count in ["-1", "-2"] {
        let bad = call("counted", &format!(r#"{{"count":{count}}}"#));
        for answer in in_both_eras(server, "{}", "tools/call", &bad).await {
            let result = &answer["result"];
            assert_eq!(result["isError"], true, "{answer}");
            assert_eq!(result.get("structuredContent"), None, "{answer}");
            assert_eq!(
                result["content"],
                json!([{"type": "text", "text": "Error executing tool counted"}])
            );
        }
    }
}

#[tokio::test]
async fn structured_output_reaches_our_client_over_every_transport() {
    for mode in [modelcontext::EraMode::Handshake, modelcontext::EraMode::Modern] {
        for &http in crate::support::TRANSPORTS {
            let builder = modelcontext::Client::builder().era(mode);
            let client = crate::support::connect(server(), builder, http).await;
            let tools = client.list_all_tools().await.expect("tools");
            let book = tools.iter().find(|t| t.name == "book_of_the_day").expect("listed");
            assert!(book.output_schema.is_some(), "{mode:?} {http}");
            let result = client.call_tool("book_of_the_day", json!({})).await.expect("called");
            assert_eq!(result.structured_content, Some(json!({"title": "Dune", "year": 1965})));
            let bad = client.call_tool("counted", json!({"count": -1})).await.expect("a result");
            assert_eq!(bad.is_error, Some(true), "{mode:?} {http}");
        }
    }
}
