//! Wire structs built as users outside this crate build them, with `new` / `default` and the
//! `with_*` setters; each case pins the exact JSON written.

use std::collections::BTreeMap;

use modelcontext_types::*;
use serde::Serialize;
use serde_json::{Value, json};

#[track_caller]
fn assert_wire(value: &impl Serialize, expected: Value) {
    assert_eq!(serde_json::to_value(value).expect("serializes"), expected);
}

fn object(value: Value) -> JsonObject {
    value.as_object().cloned().expect("an object")
}

#[test]
fn a_tool_and_its_listing() {
    let tool = Tool::new("search", object(json!({"type": "object"})))
        .with_title("Search")
        .with_description("Finds books")
        .with_annotations(ToolAnnotations::default().with_read_only_hint(true))
        .with_icons(vec![Icon::new("https://x/i.png").with_theme(IconTheme::Dark)]);
    let page = ListToolsResult::new(vec![tool]).with_next_cursor("2").with_ttl_ms(0u32);
    assert_wire(
        &page,
        json!({
            "tools": [{
                "name": "search",
                "title": "Search",
                "description": "Finds books",
                "inputSchema": {"type": "object"},
                "annotations": {"readOnlyHint": true},
                "icons": [{"src": "https://x/i.png", "theme": "dark"}],
            }],
            "nextCursor": "2",
            "ttlMs": 0,
        }),
    );
}

#[test]
fn tool_results_and_content() {
    let link = ResourceLink::new("file:///a", "a").with_mime_type("text/plain").with_size(3u8);
    let text = TextContent::new("hi")
        .with_annotations(Annotations::default().with_audience(vec![Role::User]).with_priority(1));
    let result = CallToolResult::new(vec![text.into(), link.into()])
        .with_structured_content(json!({"n": 1}))
        .with_is_error(false);
    assert_wire(
        &result,
        json!({
            "content": [
                {"type": "text", "text": "hi", "annotations": {"audience": ["user"], "priority": 1}},
                {"type": "resource_link", "uri": "file:///a", "name": "a", "mimeType": "text/plain", "size": 3},
            ],
            "structuredContent": {"n": 1},
            "isError": false,
        }),
    );
    assert_wire(
        &CallToolResult::error(vec![ContentBlock::text("no")]),
        json!({"content": [{"type": "text", "text": "no"}], "isError": true}),
    );
}

#[test]
fn capabilities_are_built_from_defaults() {
    let server = ServerCapabilities::default()
        .with_logging(JsonObject::new())
        .with_tools(ToolsCapability::default().with_list_changed(true))
        .with_resources(ResourcesCapability::default().with_subscribe(true));
    assert_wire(
        &server,
        json!({"logging": {}, "resources": {"subscribe": true}, "tools": {"listChanged": true}}),
    );
    let client = ClientCapabilities::default()
        .with_elicitation(ElicitationCapability::default().with_url(JsonObject::new()));
    assert_wire(&client, json!({"elicitation": {"url": {}}}));
}

#[test]
fn requests_the_client_sends() {
    let meta = RequestMeta::default().with_progress_token(7).with_log_level(LoggingLevel::Info);
    let call = CallToolRequestParams::new("search", Some(object(json!({"q": "dune"}))))
        .with_meta(meta)
        .with_request_state("s");
    assert_wire(
        &call,
        json!({
            "_meta": {"progressToken": 7, "io.modelcontextprotocol/logLevel": "info"},
            "name": "search",
            "arguments": {"q": "dune"},
            "requestState": "s",
        }),
    );
    let arguments = BTreeMap::from([("city".to_owned(), "Paris".to_owned())]);
    let get = GetPromptRequestParams::new("weather").with_arguments(arguments);
    assert_wire(&get, json!({"name": "weather", "arguments": {"city": "Paris"}}));
    let complete = CompleteRequestParams::new(
        PromptReference::new("weather"),
        CompletionArgument::new("city", "Pa"),
    );
    assert_wire(
        &complete,
        json!({"ref": {"type": "ref/prompt", "name": "weather"}, "argument": {"name": "city", "value": "Pa"}}),
    );
    assert_wire(&PaginatedRequestParams::default().with_cursor(""), json!({"cursor": ""}));
}

#[test]
fn sampling_and_elicitation() {
    let sampling = CreateMessageRequestParams::new(vec![SamplingMessage::user_text("2+2?")], 10)
        .with_temperature(0.5)
        .with_tool_choice(ToolChoice::default().with_mode(ToolChoiceMode::Auto));
    assert_wire(
        &sampling,
        json!({
            "messages": [{"role": "user", "content": {"type": "text", "text": "2+2?"}}],
            "temperature": 0.5,
            "maxTokens": 10,
            "toolChoice": {"mode": "auto"},
        }),
    );
    let answer =
        CreateMessageResult::new(Role::Assistant, SamplingMessageContentBlock::text("4"), "m")
            .with_stop_reason("endTurn");
    assert_wire(
        &answer,
        json!({"role": "assistant", "content": {"type": "text", "text": "4"}, "model": "m", "stopReason": "endTurn"}),
    );
    let field = PrimitiveSchemaDefinition::String(StringSchema::default().with_min_length(1u8));
    let form = ElicitationSchema::new(BTreeMap::from([("name".to_owned(), field)]))
        .with_required(vec!["name".to_owned()]);
    assert_wire(
        &ElicitRequestFormParams::new("Your name?", form),
        json!({
            "message": "Your name?",
            "requestedSchema": {
                "type": "object",
                "properties": {"name": {"type": "string", "minLength": 1}},
                "required": ["name"],
            },
        }),
    );
}

#[test]
fn notifications_the_server_sends() {
    let progress = ProgressNotificationParams::new(ProgressToken::from("t"), 50.0, Some(100.0))
        .with_message("half");
    assert_wire(
        &progress,
        json!({"progressToken": "t", "progress": 50, "total": 100, "message": "half"}),
    );
    let log =
        LoggingMessageNotificationParams::new(LoggingLevel::Warning, "disk").with_logger("io");
    assert_wire(&log, json!({"level": "warning", "logger": "io", "data": "disk"}));
    let filter = SubscriptionFilter::default().with_resource_subscriptions(vec!["a://b".into()]);
    assert_wire(
        &SubscriptionsAcknowledgedNotificationParams::new(filter),
        json!({"notifications": {"resourceSubscriptions": ["a://b"]}}),
    );
}
