//! The macros, tested the way users meet them: compile errors through trybuild (`ui/`), and
//! expansions served by a real `McpServer` to a client over the in-memory transport.
//! Refresh the `.stderr` files with `TRYBUILD=overwrite cargo test -p modelcontext-macros`.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use modelcontext::{Client, Context, McpServer, ResourceError, prompt, resource, tool, tools};
use serde_json::{Value, json};

#[test]
fn compile_errors() {
    trybuild::TestCases::new().compile_fail("tests/ui/*.rs");
}

// The server under test: the seed's bookshop, one item per macro feature.

/// Look up the author of a book in the catalog.
#[tool]
fn get_author(title: String) -> Result<String, String> {
    match title.as_str() {
        "Dune" => Ok("Frank Herbert".into()),
        _ => Err(format!("No book titled '{title}' in the catalog.")),
    }
}

/// Search the catalog.
///
/// Matches titles only.
#[tool(name = "search_books", title = "Search", annotations(read_only = true, open_world = false))]
async fn search(
    #[arg(description = "Words to look for.", min_length = 1)] query: String,
    #[arg(description = "Maximum number of results.", default = 2, minimum = 1, maximum = 50)]
    limit: i64,
    #[arg(rename = "language", pattern = "^[a-z]{2}$")] lang: Option<String>,
) -> String {
    let titles = ["Dune", "Dune Messiah", "Children of Dune"];
    let found: Vec<&str> = titles.iter().copied().filter(|t| t.contains(&query)).collect();
    let shown = found.iter().take(limit as usize).copied().collect::<Vec<_>>().join(", ");
    format!("{shown} ({})", lang.as_deref().unwrap_or("any language"))
}

/// The protocol version of this call.
#[tool]
async fn protocol(cx: Context) -> String {
    cx.protocol_version().to_owned()
}

/// How many books the catalog holds.
#[tool]
fn catalog_size() -> u32 {
    3
}

/// A shop with state shared by its tools.
#[derive(Default)]
struct Bookshop {
    visits: AtomicUsize,
}

#[tools]
impl Bookshop {
    /// Record a visit and return how many there were.
    #[tool]
    fn visit(&self) -> String {
        (self.visits.fetch_add(1, Ordering::SeqCst) + 1).to_string()
    }

    /// Greet a visitor.
    #[tool(name = "greet")]
    async fn greeting(&self, #[arg(default = "reader")] name: String) -> String {
        format!("Hello, {name}! Visits so far: {}", self.visits.load(Ordering::SeqCst))
    }

    /// Not a tool: untouched by `#[tools]`.
    fn opening_hours(&self) -> &'static str {
        "9 to 5"
    }
}

/// A book's text.
#[resource("books://{title}", mime_type = "text/plain")]
async fn book(title: String) -> Result<String, ResourceError> {
    match title.as_str() {
        "Dune" => Ok("A desert planet.".into()),
        _ => Err(ResourceError::not_found(format!("No book titled '{title}'"))),
    }
}

/// Every title, one per line.
#[resource("books://catalog", name = "catalog", title = "Catalog")]
fn all_titles() -> Result<String, ResourceError> {
    Ok("Dune\nDune Messiah".into())
}

/// Ask for a review of a book.
#[prompt(title = "Review")]
fn review(
    #[arg(description = "The book to review.")] title: String,
    style: Option<String>,
) -> String {
    format!("Review {title} in a {} style.", style.as_deref().unwrap_or("neutral"))
}

fn server() -> Result<McpServer, modelcontext::Error> {
    let shop = Arc::new(Bookshop::default());
    McpServer::new("Bookshop")
        .tool(get_author::tool())?
        .tool(search::tool())?
        .tool(protocol::tool())?
        .tool(catalog_size::tool())?
        .tools(shop.tool_defs())?
        .resource(book::resource())?
        .resource(all_titles::resource())?
        .prompt(review::prompt())
}

/// Runs `f` against the server above through an in-memory client. Sync, so that the `check`
/// functions below can be `#[track_caller]` and failures point at the test's line.
fn with_client<T>(f: impl AsyncFnOnce(&Client) -> T) -> T {
    with_server(server().expect("the server registers every item"), f)
}

fn with_server<T>(server: McpServer, f: impl AsyncFnOnce(&Client) -> T) -> T {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build();
    runtime.expect("runtime").block_on(async {
        let client = Client::connect(server.in_memory()).await.expect("handshake");
        f(&client).await
    })
}

fn to_json(value: &impl serde::Serialize) -> Value {
    serde_json::to_value(value).expect("serializable")
}

/// The `tools/list` entry for `name`, as JSON.
#[track_caller]
fn check_listed_tool(name: &str, expected: Value) {
    let tools = with_client(async |client| client.list_all_tools().await.expect("tools/list"));
    let tool = tools.iter().find(|tool| tool.name == name).expect("listed");
    assert_eq!(to_json(tool), expected);
}

/// The result of calling `name` with `arguments`, as JSON.
#[track_caller]
fn check_call(name: &str, arguments: Value, expected: Value) {
    let result =
        with_client(async |client| client.call_tool(name, arguments).await.expect("tools/call"));
    assert_eq!(call_result(&result), expected);
}

/// A `tools/call` result without the envelope fields every result carries.
fn call_result(result: &modelcontext::CallToolResult) -> Value {
    let mut json = to_json(result);
    if let Value::Object(fields) = &mut json {
        fields.retain(|key, _| !matches!(key.as_str(), "_meta" | "resultType"));
    }
    json
}

fn text(text: &str) -> Value {
    json!({ "content": [{ "type": "text", "text": text }] })
}

fn tool_error(text: &str) -> Value {
    json!({ "content": [{ "type": "text", "text": text }], "isError": true })
}

#[test]
fn doc_comment_and_parameters_become_the_tool_definition() {
    check_listed_tool(
        "get_author",
        json!({
            "name": "get_author",
            "description": "Look up the author of a book in the catalog.",
            "inputSchema": {
                "type": "object",
                "properties": { "title": { "type": "string" } },
                "required": ["title"],
            },
        }),
    );
}

#[test]
fn arg_options_become_schema_keywords() {
    check_listed_tool(
        "search_books",
        json!({
            "name": "search_books",
            "title": "Search",
            "description": "Search the catalog.\n\nMatches titles only.",
            "annotations": { "readOnlyHint": true, "openWorldHint": false },
            "inputSchema": {
                "type": "object",
                "properties": {
                    "query": { "type": "string", "description": "Words to look for.", "minLength": 1 },
                    "limit": {
                        "type": "integer",
                        "format": "int64",
                        "description": "Maximum number of results.",
                        "default": 2,
                        "minimum": 1,
                        "maximum": 50,
                    },
                    "language": { "type": ["string", "null"], "pattern": "^[a-z]{2}$" },
                },
                "required": ["query"],
            },
        }),
    );
}

#[test]
fn sync_tool_returns_its_value_or_its_error() {
    check_call("get_author", json!({ "title": "Dune" }), text("Frank Herbert"));
    check_call(
        "get_author",
        json!({ "title": "Emma" }),
        tool_error("Error executing tool get_author: No book titled 'Emma' in the catalog."),
    );
}

#[test]
fn async_tool_applies_defaults_and_optional_arguments() {
    check_call(
        "search_books",
        json!({ "query": "Dune" }),
        text("Dune, Dune Messiah (any language)"),
    );
    check_call(
        "search_books",
        json!({ "query": "Dune", "limit": 1, "language": "en" }),
        text("Dune (en)"),
    );
}

#[test]
fn arguments_breaking_the_schema_are_a_tool_error() {
    let result = with_client(async |client| {
        client
            .call_tool("search_books", json!({ "query": "Dune", "limit": 0 }))
            .await
            .expect("tools/call")
    });
    assert!(result.is_error());
    let message = to_json(&result.content)[0]["text"].as_str().unwrap_or_default().to_owned();
    assert!(message.contains("argument 'limit'"), "{message}");
}

#[test]
fn context_and_parameterless_tools() {
    let (version, result) = with_client(async |client| {
        let result = client.call_tool("protocol", json!({})).await.expect("tools/call");
        (client.protocol_version().to_owned(), result)
    });
    assert_eq!(call_result(&result), text(&version));
    check_listed_tool(
        "protocol",
        json!({
            "name": "protocol",
            "description": "The protocol version of this call.",
            "inputSchema": { "type": "object", "properties": {} },
        }),
    );
    check_call(
        "catalog_size",
        json!({}),
        json!({ "content": [{ "type": "text", "text": "3" }], "structuredContent": { "result": 3 } }),
    );
}

#[test]
fn tools_impl_block_shares_one_value() {
    let results = with_client(async |client| {
        let first = client.call_tool("visit", json!({})).await.expect("tools/call");
        let second = client.call_tool("visit", json!({})).await.expect("tools/call");
        let greeting = client.call_tool("greet", json!({})).await.expect("tools/call");
        [first, second, greeting].map(|result| call_result(&result))
    });
    assert_eq!(results, [text("1"), text("2"), text("Hello, reader! Visits so far: 2")]);
    check_listed_tool(
        "greet",
        json!({
            "name": "greet",
            "description": "Greet a visitor.",
            "inputSchema": {
                "type": "object",
                "properties": { "name": { "type": "string", "default": "reader" } },
            },
        }),
    );
}

#[test]
fn resource_template_and_static_resource() {
    let (templates, resources) = with_client(async |client| {
        let templates = client.list_resource_templates(None).await.expect("templates/list");
        let resources = client.list_resources(None).await.expect("resources/list");
        (to_json(&templates)["resourceTemplates"].clone(), to_json(&resources)["resources"].clone())
    });
    let expected_template = json!([{
        "uriTemplate": "books://{title}",
        "name": "book",
        "description": "A book's text.",
        "mimeType": "text/plain",
    }]);
    assert_eq!(templates, expected_template);
    let expected_resource = json!([{
        "uri": "books://catalog",
        "name": "catalog",
        "title": "Catalog",
        "description": "Every title, one per line.",
    }]);
    assert_eq!(resources, expected_resource);
}

#[test]
fn resources_read_through_the_function() {
    let (dune, catalog, missing) = with_client(async |client| {
        let dune = client.read_resource("books://Dune").await.expect("resources/read");
        let catalog = client.read_resource("books://catalog").await.expect("resources/read");
        let missing =
            client.read_resource("books://Emma").await.map(|_| ()).expect_err("not found");
        (to_json(&dune), to_json(&catalog), missing)
    });
    let dune_contents =
        json!([{ "uri": "books://Dune", "mimeType": "text/plain", "text": "A desert planet." }]);
    assert_eq!(dune["contents"], dune_contents);
    assert_eq!(
        catalog["contents"],
        json!([{ "uri": "books://catalog", "mimeType": "text/plain", "text": "Dune\nDune Messiah" }])
    );
    assert_eq!(missing.code(), Some(modelcontext::types::INVALID_PARAMS));
}

#[test]
fn prompt_arguments_and_rendering() {
    let (listed, plain, styled) = with_client(async |client| {
        let listed = client.list_prompts(None).await.expect("prompts/list");
        let plain = client.get_prompt("review", [("title", "Dune")]).await.expect("prompts/get");
        let styled = client
            .get_prompt("review", [("title", "Dune"), ("style", "playful")])
            .await
            .expect("prompts/get");
        (to_json(&listed)["prompts"].clone(), to_json(&plain), to_json(&styled))
    });
    let expected_prompt = json!([{
        "name": "review",
        "title": "Review",
        "description": "Ask for a review of a book.",
        "arguments": [
            { "name": "title", "description": "The book to review.", "required": true },
            { "name": "style", "required": false },
        ],
    }]);
    assert_eq!(listed, expected_prompt);
    assert_eq!(plain["messages"][0]["content"]["text"], "Review Dune in a neutral style.");
    assert_eq!(styled["messages"][0]["content"]["text"], "Review Dune in a playful style.");
}

#[test]
fn items_declared_inside_a_function_body() {
    // A module could not see `Point` or `sum` from here; the generated code must.
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Point {
        x: i64,
        y: i64,
    }

    /// Add the coordinates of a point.
    #[tool]
    fn sum(point: Point) -> i64 {
        point.x + point.y
    }

    let server = McpServer::new("Geometry").tool(sum::tool()).expect("registers");
    let result = with_server(server, async |client| {
        client.call_tool("sum", json!({ "point": { "x": 2, "y": 3 } })).await.expect("tools/call")
    });
    assert_eq!(result.structured_content, Some(json!({ "result": 5 })));
}

#[test]
fn functions_stay_callable_as_written() {
    assert_eq!(get_author("Dune".into()), Ok("Frank Herbert".to_owned()));
    assert_eq!(catalog_size(), 3);
    assert_eq!(review("Dune".into(), None), "Review Dune in a neutral style.");
    assert_eq!(Bookshop::default().opening_hours(), "9 to 5");
    let shop = Bookshop::default();
    assert_eq!(shop.visit(), "1");
}

/// Every macro with `crate = "mc"`, for a dependency known by another name. (`::modelcontext`
/// still resolves in this crate; the unit tests of the expansions check that it is not named.)
mod renamed {
    use std::sync::Arc;

    use ::modelcontext as mc;

    /// Add two integers.
    #[mc::tool(crate = "mc", annotations(read_only = true))]
    pub fn add(a: i64, #[arg(default = 1)] b: i64) -> i64 {
        a + b
    }

    /// A chapter of a book.
    #[mc::resource("chapters://{number}", crate = "mc", mime_type = "text/plain")]
    pub fn chapter(_cx: mc::Context, number: u32) -> String {
        format!("Chapter {number}")
    }

    /// Ask for a summary.
    #[mc::prompt(crate = "mc")]
    pub fn summary(title: String) -> String {
        format!("Summarize {title}.")
    }

    pub struct Clock;

    #[mc::tools(crate = "mc")]
    impl Clock {
        /// The hour, always noon.
        #[tool]
        fn hour(&self, _cx: mc::Context) -> u32 {
            12
        }
    }

    pub fn server() -> Result<mc::McpServer, mc::Error> {
        mc::McpServer::new("Renamed")
            .tool(add::tool())?
            .resource(chapter::resource())?
            .prompt(summary::prompt())?
            .tools(Arc::new(Clock).tool_defs())
    }
}

#[test]
fn crate_option_names_a_renamed_dependency() {
    let server = renamed::server().expect("the server registers every item");
    let (sum, hour, chapter, prompt) = with_server(server, async |client| {
        let sum = client.call_tool("add", json!({ "a": 2 })).await.expect("tools/call");
        let hour = client.call_tool("hour", json!({})).await.expect("tools/call");
        let chapter = client.read_resource("chapters://7").await.expect("resources/read");
        let prompt = client.get_prompt("summary", [("title", "Dune")]).await.expect("prompts/get");
        (call_result(&sum), call_result(&hour), to_json(&chapter), to_json(&prompt))
    });
    assert_eq!(sum["structuredContent"], json!({ "result": 3 }));
    assert_eq!(hour["structuredContent"], json!({ "result": 12 }));
    assert_eq!(chapter["contents"][0]["text"], "Chapter 7");
    assert_eq!(prompt["messages"][0]["content"]["text"], "Summarize Dune.");
}
