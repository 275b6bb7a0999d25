//! The server the official MCP conformance suite tests (`conformance server --url ...`): every
//! tool, resource and prompt fixture the suite expects, written with modelcontext's public API
//! as any user would write them. Both protocol eras are served on one endpoint,
//! `http://127.0.0.1:$PORT/mcp` (a 2025-11-25 client gets a session from `initialize`, a
//! 2026-07-28 client is served statelessly).
//!
//! `PORT=3000 cargo run -p conformance --bin conformance-server`

use std::time::Duration;

use modelcontext::server::{ChangeEvent, InMemoryBus, Skill, SubscriptionBus};
use modelcontext::types::{
    Completion, ContentBlock, CreateMessageRequestParams, ElicitRequestFormParams,
    ElicitRequestParams, ElicitResult, ElicitationSchema, LoggingLevel, PromptMessage,
    ResourceContents, Role, SamplingContent, SamplingMessage, SamplingMessageContentBlock,
};
use modelcontext::{
    Context, McpError, McpServer, PromptDef, ResourceDef, ToolDef, ToolError, prompt, resource,
    tool,
};
use serde_json::{Map, Value, json};

/// A 1x1 red pixel.
const PNG_BASE64: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC";
/// Eight silent 16-bit samples at 8 kHz.
const WAV_BASE64: &str =
    "UklGRjQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YRAAAAAAAAAAAAAAAAAAAAAAAAAA";

// ---------------------------------------------------------------------------------------------
// Tools: content types

/// Returns a simple text response.
#[tool]
fn test_simple_text() -> &'static str {
    "This is a simple text response for testing."
}

/// Returns a 1x1 PNG image.
#[tool]
fn test_image_content() -> ContentBlock {
    ContentBlock::image(PNG_BASE64, "image/png")
}

/// Returns a short WAV clip.
#[tool]
fn test_audio_content() -> ContentBlock {
    ContentBlock::audio(WAV_BASE64, "audio/wav")
}

/// Returns an embedded text resource.
#[tool]
fn test_embedded_resource() -> ContentBlock {
    ContentBlock::resource(
        ResourceContents::text("test://embedded-resource", "This is an embedded resource content.")
            .with_mime_type("text/plain"),
    )
}

/// Returns text, an image and an embedded resource.
#[tool]
fn test_multiple_content_types() -> Vec<ContentBlock> {
    vec![
        ContentBlock::text("Multiple content types test:"),
        ContentBlock::image(PNG_BASE64, "image/png"),
        ContentBlock::resource(
            ResourceContents::text(
                "test://mixed-content-resource",
                r#"{"test":"data","value":123}"#,
            )
            .with_mime_type("application/json"),
        ),
    ]
}

/// Always fails, with a message for the model.
#[tool]
fn test_error_handling() -> Result<String, ToolError> {
    Err(ToolError::new("This tool intentionally returns an error for testing"))
}

// ---------------------------------------------------------------------------------------------
// Tools: logging and progress

/// Sends three info log messages about 50 ms apart.
#[tool]
async fn test_tool_with_logging(ctx: Context) -> &'static str {
    ctx.info("Tool execution started").await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    ctx.info("Tool processing data").await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    ctx.info("Tool execution completed").await;
    "Logging test completed"
}

/// Logs one message; a 2026-07-28 client only receives it if its request set a log level.
#[tool]
async fn test_logging_tool(ctx: Context) -> &'static str {
    ctx.log(LoggingLevel::Info, "test_logging_tool ran").await;
    "Logging tool completed"
}

/// Reports progress 0, 50 and 100 of 100, about 50 ms apart (only with a progress token).
#[tool]
async fn test_tool_with_progress(ctx: Context) -> &'static str {
    ctx.report_progress(0.0, Some(100.0), None).await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    ctx.report_progress(50.0, Some(100.0), None).await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    ctx.report_progress(100.0, Some(100.0), None).await;
    "Progress test completed"
}

// ---------------------------------------------------------------------------------------------
// Tools: asking the client (live requests in 2025-11-25, MRTR rounds in 2026-07-28)

fn user_message(text: &str) -> SamplingMessage {
    SamplingMessage::user_text(text)
}

fn sampling(text: &str, max_tokens: u64) -> CreateMessageRequestParams {
    CreateMessageRequestParams::new(vec![user_message(text)], max_tokens)
}

/// The text of a sampled message (its text blocks, joined).
fn sampled_text(content: &SamplingContent) -> String {
    content
        .blocks()
        .iter()
        .filter_map(|block| match block {
            SamplingMessageContentBlock::Text(text) => Some(text.text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// A form elicitation from a literal JSON schema.
fn form(message: &str, schema: Value) -> Result<ElicitRequestParams, McpError> {
    let requested_schema: ElicitationSchema = serde_json::from_value(schema)
        .map_err(|e| McpError::internal(format!("bad elicitation schema: {e}")))?;
    Ok(ElicitRequestParams::Form(ElicitRequestFormParams::new(message, requested_schema)))
}

fn describe(result: &ElicitResult) -> String {
    let action = serde_json::to_value(result.action).unwrap_or_default();
    let content = result.content.clone().map(Value::Object).unwrap_or(Value::Null);
    format!("action={}, content={content}", action.as_str().unwrap_or("?"))
}

/// Asks the client's LLM to answer `prompt`.
#[tool]
async fn test_sampling(ctx: Context, prompt: String) -> Result<String, McpError> {
    let answer = ctx.sample(sampling(&prompt, 100)).await?;
    Ok(format!("LLM response: {}", sampled_text(&answer.content)))
}

/// Asks the user for a username and an email address.
#[tool]
async fn test_elicitation(ctx: Context, message: String) -> Result<String, McpError> {
    let schema = json!({
        "type": "object",
        "properties": {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"}
        },
        "required": ["username", "email"]
    });
    let result = ctx.elicit_raw(form(&message, schema)?).await?;
    Ok(format!("User response: {}", describe(&result)))
}

/// Elicits a form whose every primitive field has a default (SEP-1034).
#[tool]
async fn test_elicitation_sep1034_defaults(ctx: Context) -> Result<String, McpError> {
    let schema = json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "User name", "default": "John Doe"},
            "age": {"type": "integer", "description": "User age", "default": 30},
            "score": {"type": "number", "description": "User score", "default": 95.5},
            "status": {
                "type": "string",
                "description": "User status",
                "enum": ["active", "inactive", "pending"],
                "default": "active"
            },
            "verified": {"type": "boolean", "description": "Verification status", "default": true}
        }
    });
    let result = ctx
        .elicit_raw(form("Please review and update the form fields with defaults", schema)?)
        .await?;
    Ok(format!("Elicitation completed: {}", describe(&result)))
}

/// Elicits a form with the five enum shapes (SEP-1330).
#[tool]
async fn test_elicitation_sep1330_enums(ctx: Context) -> Result<String, McpError> {
    let schema = json!({
        "type": "object",
        "properties": {
            "untitledSingle": {
                "type": "string",
                "description": "Select one option",
                "enum": ["option1", "option2", "option3"]
            },
            "titledSingle": {
                "type": "string",
                "description": "Select one option with titles",
                "oneOf": [
                    {"const": "value1", "title": "First Option"},
                    {"const": "value2", "title": "Second Option"},
                    {"const": "value3", "title": "Third Option"}
                ]
            },
            "legacyEnum": {
                "type": "string",
                "description": "Select one option (legacy)",
                "enum": ["opt1", "opt2", "opt3"],
                "enumNames": ["Option One", "Option Two", "Option Three"]
            },
            "untitledMulti": {
                "type": "array",
                "description": "Select multiple options",
                "minItems": 1,
                "maxItems": 3,
                "items": {"type": "string", "enum": ["option1", "option2", "option3"]}
            },
            "titledMulti": {
                "type": "array",
                "description": "Select multiple options with titles",
                "minItems": 1,
                "maxItems": 3,
                "items": {
                    "anyOf": [
                        {"const": "value1", "title": "First Choice"},
                        {"const": "value2", "title": "Second Choice"},
                        {"const": "value3", "title": "Third Choice"}
                    ]
                }
            }
        },
        "required": []
    });
    let result =
        ctx.elicit_raw(form("Please select options from the enum fields", schema)?).await?;
    Ok(format!("Elicitation completed: {}", describe(&result)))
}

/// Needs the client's `sampling` capability: a client without it gets -32021.
#[tool]
async fn test_missing_capability(ctx: Context) -> Result<String, McpError> {
    let answer = ctx.sample(sampling("Say hello", 10)).await?;
    Ok(format!("Sampled: {}", sampled_text(&answer.content)))
}

/// Completes in one response; its stream carries no server-to-client requests.
#[tool]
async fn test_streaming_elicitation(ctx: Context) -> &'static str {
    ctx.report_progress(1.0, Some(1.0), None).await;
    "Streaming elicitation test completed"
}

fn name_form(message: &str, field: &str) -> Result<ElicitRequestParams, McpError> {
    form(
        message,
        json!({
            "type": "object",
            "properties": { field: {"type": "string"} },
            "required": [field]
        }),
    )
}

/// A string field of an accepted elicitation.
fn field(result: &ElicitResult, name: &str) -> String {
    result
        .content
        .as_ref()
        .and_then(|c| c.get(name))
        .and_then(Value::as_str)
        .unwrap_or("unknown")
        .to_owned()
}

/// 2026-07-28 MRTR: asks the user's name, then greets them.
#[tool]
async fn test_input_required_result_elicitation(ctx: Context) -> Result<String, McpError> {
    let form = name_form("What is your name?", "name")?;
    let answer = ctx.question("user_name").elicit_raw(form).await?;
    Ok(format!("Hello, {}!", field(&answer, "name")))
}

/// 2026-07-28 MRTR: asks the client's LLM a question.
#[tool]
async fn test_input_required_result_sampling(ctx: Context) -> Result<String, McpError> {
    let question = sampling("What is the capital of France?", 100);
    let answer = ctx.question("capital_question").sample(question).await?;
    Ok(format!("The answer: {}", sampled_text(&answer.content)))
}

/// 2026-07-28 MRTR: asks the client's roots.
#[tool]
async fn test_input_required_result_list_roots(ctx: Context) -> Result<String, McpError> {
    let roots = ctx.question("client_roots").list_roots().await?;
    let uris: Vec<&str> = roots.iter().map(|r| r.uri.as_str()).collect();
    Ok(format!("Client roots: {}", uris.join(", ")))
}

/// 2026-07-28 MRTR with request state: the SDK seals and checks `requestState`.
#[tool]
async fn test_input_required_result_request_state(ctx: Context) -> Result<String, McpError> {
    let schema = json!({
        "type": "object",
        "properties": {"ok": {"type": "boolean"}},
        "required": ["ok"]
    });
    let answer = ctx.question("confirm").elicit_raw(form("Please confirm", schema)?).await?;
    Ok(format!("state-ok: confirmation {}", describe(&answer)))
}

/// 2026-07-28 MRTR: three questions of three kinds in one round.
#[tool]
async fn test_input_required_result_multiple_inputs(ctx: Context) -> Result<String, McpError> {
    let (user_name, greeting_key, roots_key) =
        (ctx.question("user_name"), ctx.question("greeting"), ctx.question("client_roots"));
    let form = name_form("What is your name?", "name")?;
    let (name, greeting, roots) = tokio::join!(
        user_name.elicit_raw(form),
        greeting_key.sample(sampling("Generate a greeting", 50)),
        roots_key.list_roots(),
    );
    let (name, greeting, roots) = (name?, greeting?, roots?);
    Ok(format!(
        "{} {} ({} roots)",
        sampled_text(&greeting.content),
        field(&name, "name"),
        roots.len()
    ))
}

/// 2026-07-28 MRTR over two rounds: name, then favourite colour.
#[tool]
async fn test_input_required_result_multi_round(ctx: Context) -> Result<String, McpError> {
    let name =
        ctx.question("step1").elicit_raw(name_form("Step 1: What is your name?", "name")?).await?;
    let color = name_form("Step 2: What is your favorite color?", "color")?;
    let color = ctx.question("step2").elicit_raw(color).await?;
    Ok(format!("{} likes {}", field(&name, "name"), field(&color, "color")))
}

/// 2026-07-28 MRTR: a retry with a tampered `requestState` is refused by the SDK.
#[tool]
async fn test_input_required_result_tampered_state(ctx: Context) -> Result<String, McpError> {
    let schema = json!({
        "type": "object",
        "properties": {"ok": {"type": "boolean"}},
        "required": ["ok"]
    });
    let answer = ctx.question("confirm").elicit_raw(form("Please confirm", schema)?).await?;
    Ok(format!("confirmed: {}", describe(&answer)))
}

/// 2026-07-28 MRTR: asks only what the client declared it can answer.
#[tool]
async fn test_input_required_result_capabilities(ctx: Context) -> Result<String, McpError> {
    let caps = ctx.client_capabilities().clone();
    let mut answers = Vec::new();
    if caps.elicitation.is_some() {
        let name = ctx.elicit_raw(name_form("What is your name?", "name")?).await?;
        answers.push(format!("name={}", field(&name, "name")));
    }
    if caps.sampling.is_some() {
        let sampled = ctx.sample(sampling("What is the capital of France?", 100)).await?;
        answers.push(format!("sampled={}", sampled_text(&sampled.content)));
    }
    if caps.roots.is_some() {
        answers.push(format!("roots={}", ctx.list_roots().await?.len()));
    }
    Ok(format!("Capabilities honoured: {}", answers.join(", ")))
}

// ---------------------------------------------------------------------------------------------
// Tools: schemas and headers

/// The input schema of `json_schema_2020_12_tool`, keyword for keyword.
fn json_schema_2020_12() -> Map<String, Value> {
    let schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "$anchor": "addressDef",
                "type": "object",
                "properties": {
                    "street": {"type": "string"},
                    "city": {"type": "string"}
                }
            }
        },
        "properties": {
            "name": {"type": "string"},
            "address": {"$ref": "#/$defs/address"},
            "contactMethod": {"type": "string", "enum": ["phone", "email"]},
            "phone": {"type": "string"},
            "email": {"type": "string"}
        },
        "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
        "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
        "then": {"required": ["phone"]},
        "else": {"required": ["email"]},
        "additionalProperties": false
    });
    match schema {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

fn json_schema_tool() -> ToolDef {
    ToolDef::new(
        "json_schema_2020_12_tool",
        |args: Value| async move { format!("Received: {args}") },
    )
    .description("Tool with JSON Schema 2020-12 features")
    .input_schema(json_schema_2020_12())
}

/// `region` is mirrored in the `Mcp-Param-Region` header (2026-07-28, `x-mcp-header`).
fn x_mcp_header_tool() -> ToolDef {
    let schema = json!({
        "type": "object",
        "properties": {
            "region": {"type": "string", "description": "Region", "x-mcp-header": "Region"},
            "level": {"type": "integer", "description": "Level"}
        },
        "required": ["region"]
    });
    let Value::Object(schema) = schema else { unreachable!("a literal object") };
    ToolDef::new("test_x_mcp_header", |args: Value| async move {
        let region = args.get("region").and_then(Value::as_str).unwrap_or_default().to_owned();
        format!("region={region}")
    })
    .description("Tool whose region argument is mirrored in the Mcp-Param-Region header")
    .input_schema(schema)
}

/// Greets someone: the tasks extension's synchronous fixture (a tool that never becomes a task).
#[tool]
fn greet(name: String) -> String {
    format!("Hello, {name}!")
}

// ---------------------------------------------------------------------------------------------
// Tools: the tasks extension (io.modelcontextprotocol/tasks), as the suite's `tasks-*` expect

/// Sleeps `seconds`, then reports; a task when the client allows (0 seconds answers at once).
#[tool(task = "optional")]
async fn slow_compute(seconds: u64, label: Option<String>) -> String {
    tokio::time::sleep(Duration::from_secs(seconds.min(600))).await;
    format!("Computed {} after {seconds}s", label.as_deref().unwrap_or("result"))
}

/// Fails as a tool after a second: the task completes with `isError`. Only runs as a task.
#[tool(task = "required")]
async fn failing_job() -> Result<String, ToolError> {
    tokio::time::sleep(Duration::from_secs(1)).await;
    Err(ToolError::new("the job failed"))
}

/// Fails with a JSON-RPC error: the task ends `failed`.
#[tool(task = "optional")]
async fn protocol_error_job() -> Result<String, McpError> {
    tokio::time::sleep(Duration::from_millis(200)).await;
    Err(McpError::internal("the job hit an internal error"))
}

fn confirm_form(message: &str) -> Result<ElicitRequestParams, McpError> {
    let schema = json!({
        "type": "object",
        "properties": {"confirm": {"type": "boolean"}},
        "required": ["confirm"]
    });
    form(message, schema)
}

/// Becomes a task, then asks whether to delete `filename` (one question, `tasks/update`).
#[tool(task = "optional")]
async fn confirm_delete(ctx: Context, filename: String) -> Result<String, McpError> {
    ctx.run_as_task().await;
    let answer = ctx.elicit_raw(confirm_form(&format!("Delete {filename}?"))?).await?;
    Ok(format!("{filename}: {}", describe(&answer)))
}

/// Becomes a task, then asks two questions at once.
#[tool(task = "optional")]
async fn multi_input(ctx: Context) -> Result<String, McpError> {
    ctx.run_as_task().await;
    let (name, confirm) = tokio::join!(
        ctx.elicit_raw(name_form("What is your name?", "name")?),
        ctx.elicit_raw(confirm_form("Proceed?")?),
    );
    Ok(format!("name: {}, confirm: {}", field(&name?, "name"), describe(&confirm?)))
}

/// Asks the user's name in an MRTR round, then goes on as a task that greets them.
#[tool(task = "required")]
async fn test_tool_with_task(ctx: Context) -> Result<String, McpError> {
    let form = name_form("What is your name?", "name")?;
    let name = field(&ctx.question("user_name").elicit_raw(form).await?, "name");
    tokio::time::sleep(Duration::from_millis(100)).await;
    Ok(format!("Hello, {name}! (from a task)"))
}

// ---------------------------------------------------------------------------------------------
// Tools: change notifications (2026-07-28 `subscriptions/listen` streams, 2025-11-25 sessions)

/// Tools that announce a change of the tool or prompt list on `bus`, the server's bus.
fn change_triggers(bus: &InMemoryBus) -> Vec<ToolDef> {
    let tools = bus.clone();
    let prompts = bus.clone();
    vec![
        ToolDef::new("test_trigger_tool_change", move || {
            let bus = tools.clone();
            async move {
                bus.publish(ChangeEvent::ToolsListChanged);
                "Tool list change announced"
            }
        })
        .description("Announces a change of the tool list (notifications/tools/list_changed)"),
        ToolDef::new("test_trigger_prompt_change", move || {
            let bus = prompts.clone();
            async move {
                bus.publish(ChangeEvent::PromptsListChanged);
                "Prompt list change announced"
            }
        })
        .description("Announces a change of the prompt list (notifications/prompts/list_changed)"),
    ]
}

// ---------------------------------------------------------------------------------------------
// Resources

/// A static text resource.
#[resource("test://static-text", name = "static-text", mime_type = "text/plain")]
fn static_text() -> &'static str {
    "This is the content of the static text resource."
}

/// A static binary resource (a 1x1 PNG).
#[resource("test://static-binary", name = "static-binary", mime_type = "image/png")]
fn static_binary() -> ResourceContents {
    ResourceContents::blob("test://static-binary", PNG_BASE64).with_mime_type("image/png")
}

/// A resource template with one variable.
#[resource("test://template/{id}/data", name = "template-data", mime_type = "application/json")]
fn template_data(id: String) -> String {
    json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")}).to_string()
}

/// A resource clients may subscribe to.
#[resource("test://watched-resource", name = "watched-resource", mime_type = "text/plain")]
fn watched_resource() -> &'static str {
    "Watched resource content"
}

// ---------------------------------------------------------------------------------------------
// Prompts

/// A simple prompt without arguments.
#[prompt]
fn test_simple_prompt() -> String {
    "This is a simple prompt for testing.".into()
}

/// A prompt with two required arguments.
#[prompt]
fn test_prompt_with_arguments(
    #[arg(description = "First test argument")] arg1: String,
    #[arg(description = "Second test argument")] arg2: String,
) -> String {
    format!("Prompt with arguments: arg1='{arg1}', arg2='{arg2}'")
}

/// A prompt that embeds a resource.
#[prompt]
fn test_prompt_with_embedded_resource(
    #[arg(rename = "resourceUri", description = "URI of the resource to embed")]
    resource_uri: String,
) -> Vec<PromptMessage> {
    let embedded = ResourceContents::text(resource_uri, "Embedded resource content for testing.")
        .with_mime_type("text/plain");
    vec![
        PromptMessage::new(Role::User, ContentBlock::resource(embedded)),
        PromptMessage::user_text("Please process the embedded resource above."),
    ]
}

/// A prompt with an image.
#[prompt]
fn test_prompt_with_image() -> Vec<PromptMessage> {
    vec![
        PromptMessage::new(Role::User, ContentBlock::image(PNG_BASE64, "image/png")),
        PromptMessage::user_text("Please analyze the image above."),
    ]
}

/// 2026-07-28 MRTR on `prompts/get`: asks for context first.
#[prompt]
async fn test_input_required_result_prompt(ctx: Context) -> Result<String, McpError> {
    let form = name_form("What context should the prompt use?", "context")?;
    let answer = ctx.question("user_context").elicit_raw(form).await?;
    Ok(format!("Prompt using context: {}", field(&answer, "context")))
}

// ---------------------------------------------------------------------------------------------

/// Skills (SEP-2640): one skill with supporting files in subdirectories (for directory reads),
/// one under an organizational prefix.
fn skills() -> Result<Vec<Skill>, modelcontext::Error> {
    let pdf = Skill::new(
        "---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\n\
         license: Apache-2.0\nmetadata:\n  version: \"2.1.0\"\n---\n\n# PDF processing\n\n\
         Fill forms with references/FORMS.md; extract text with scripts/extract.py.\n",
    )?
    .file("references/FORMS.md", "# Forms\n\nField names are case-sensitive.\n")?
    .file("scripts/extract.py", "print('extracted')\n")?;
    let refunds = Skill::new(
        "---\nname: refunds\ndescription: Process customer refund requests per company policy\n\
         ---\n\nRefund within 30 days; see examples/email.md.\n",
    )?
    .prefix("acme/billing")?
    .file("examples/email.md", "Dear customer, your refund is on its way.\n")?;
    Ok(vec![pdf, refunds])
}

fn server() -> Result<McpServer, modelcontext::Error> {
    let tools: Vec<ToolDef> = vec![
        test_simple_text::tool(),
        test_image_content::tool(),
        test_audio_content::tool(),
        test_embedded_resource::tool(),
        test_multiple_content_types::tool(),
        test_error_handling::tool(),
        test_tool_with_logging::tool(),
        test_logging_tool::tool(),
        test_tool_with_progress::tool(),
        test_sampling::tool(),
        test_elicitation::tool(),
        test_elicitation_sep1034_defaults::tool(),
        test_elicitation_sep1330_enums::tool(),
        test_missing_capability::tool(),
        test_streaming_elicitation::tool(),
        test_input_required_result_elicitation::tool(),
        test_input_required_result_sampling::tool(),
        test_input_required_result_list_roots::tool(),
        test_input_required_result_request_state::tool(),
        test_input_required_result_multiple_inputs::tool(),
        test_input_required_result_multi_round::tool(),
        test_input_required_result_tampered_state::tool(),
        test_input_required_result_capabilities::tool(),
        json_schema_tool(),
        x_mcp_header_tool(),
        greet::tool(),
        slow_compute::tool(),
        failing_job::tool(),
        protocol_error_job::tool(),
        confirm_delete::tool(),
        multi_input::tool(),
        test_tool_with_task::tool(),
    ];
    let resources: Vec<ResourceDef> = vec![
        static_text::resource(),
        static_binary::resource(),
        template_data::resource(),
        watched_resource::resource(),
    ];
    let prompts: Vec<PromptDef> = vec![
        test_simple_prompt::prompt(),
        test_prompt_with_arguments::prompt(),
        test_prompt_with_embedded_resource::prompt(),
        test_prompt_with_image::prompt(),
        test_input_required_result_prompt::prompt(),
    ];
    let bus = InMemoryBus::default();
    let server = McpServer::new("modelcontext-conformance-server")
        .version(env!("CARGO_PKG_VERSION"))
        .subscription_bus(bus.clone())
        .tools(tools)?
        .tools(change_triggers(&bus))?
        .completion(|_params| async { Ok(Completion::default()) });
    for def in resources {
        server.add_resource(def)?;
    }
    for def in prompts {
        server.add_prompt(def)?;
    }
    for skill in skills()? {
        server.add_skill(skill)?;
    }
    Ok(server)
}

#[tokio::main]
async fn main() -> Result<(), modelcontext::Error> {
    let port: u16 = match std::env::var("PORT") {
        Ok(port) => port.parse().map_err(|_| {
            modelcontext::Error::from(std::io::Error::other(format!("PORT={port} is not a port")))
        })?,
        Err(_) => 3000,
    };
    let (addr, serve) = server()?.http_endpoint().bind(&format!("127.0.0.1:{port}")).await?;
    eprintln!("conformance server at http://{addr}/mcp");
    serve.await
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_fixture_registers() {
        let server = super::server().expect("fixtures register");
        let caps = server.capabilities();
        assert!(caps.tools.is_some() && caps.resources.is_some() && caps.prompts.is_some());
        assert!(caps.completions.is_some());
    }
}
