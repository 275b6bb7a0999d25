//! The client the official MCP conformance suite drives (`conformance client --command ...`):
//! the suite starts a mock server per scenario and runs this binary with the server's URL as
//! the last argument. The scenario comes from `MCP_CONFORMANCE_SCENARIO`, the wire version from
//! `MCP_CONFORMANCE_PROTOCOL_VERSION` (2026-07-28 is the stateless modern wire, anything older
//! the `initialize` handshake) and scenario data from `MCP_CONFORMANCE_CONTEXT` (JSON).
//! Everything goes through modelcontext's public `Client` over the HTTP client transport.
//! Exits non-zero when the scenario could not be carried out.

use std::process::ExitCode;
use std::time::Duration;

use modelcontext::auth::DpopKey;
use modelcontext::auth::client::{ClientAuth, IdentityProvider, OAuthClient};
use modelcontext::client::SkillError;
use modelcontext::transport::http::HttpTransport;
use modelcontext::types::{
    CreateMessageResult, ElicitAction, ElicitRequestParams, ElicitResult, Role, Root,
    SamplingMessageContentBlock,
};
use modelcontext::{Client, ClientBuilder, EraMode, McpError};
use serde_json::{Map, Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const MODERN_VERSION: &str = "2026-07-28";

struct Run {
    scenario: String,
    protocol_version: Option<String>,
    context: Value,
    url: String,
}

impl Run {
    fn from_env() -> Result<Run, String> {
        let url =
            std::env::args().skip(1).last().ok_or("usage: conformance-client <server-url>")?;
        let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO")
            .map_err(|_| "MCP_CONFORMANCE_SCENARIO is not set")?;
        let protocol_version = std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION").ok();
        let context = match std::env::var("MCP_CONFORMANCE_CONTEXT") {
            Ok(text) if !text.trim().is_empty() => serde_json::from_str(&text)
                .map_err(|e| format!("MCP_CONFORMANCE_CONTEXT is not JSON: {e}"))?,
            _ => Value::Null,
        };
        Ok(Run { scenario, protocol_version, context, url })
    }

    /// The era the suite asks for: the modern wire at 2026-07-28, the handshake before.
    fn era(&self) -> EraMode {
        match self.protocol_version.as_deref() {
            Some(MODERN_VERSION) => EraMode::Modern,
            Some(_) => EraMode::Handshake,
            None => EraMode::Auto,
        }
    }

    fn builder(&self) -> ClientBuilder {
        Client::builder()
            .info("modelcontext-conformance-client", env!("CARGO_PKG_VERSION"))
            .era(self.era())
            // Under the suite's 30 s per scenario, so a hang reports our error, not its timeout.
            .timeout(Some(Duration::from_secs(20)))
    }

    async fn connect(&self, builder: ClientBuilder) -> Result<Client, String> {
        let transport = HttpTransport::new(&self.url).map_err(|e| format!("{e:#}"))?;
        builder.connect(transport).await.map_err(|e| format!("connect: {e:#}"))
    }
}

/// The Client ID Metadata Document URL the suite expects (`auth/basic-cimd`).
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";
/// Never listened on: the redirect is read from the authorization server's `Location`.
const REDIRECT_URI: &str = "http://localhost:3000/callback";

/// The OAuth client for an `auth/*` scenario, from `MCP_CONFORMANCE_CONTEXT`: client
/// credentials (a secret, or a private key for a JWT assertion), a workload's JWT, or an
/// enterprise identity provider's ID token for the extension scenarios, else the authorization
/// code grant, with pre-registered credentials when given; DPoP for `auth/dpop*`.
fn oauth_client(run: &Run) -> Result<OAuthClient, String> {
    let oauth = grant(run)?;
    if run.scenario.starts_with("auth/dpop") {
        return Ok(oauth.dpop(DpopKey::generate().map_err(|e| e.to_string())?));
    }
    Ok(oauth)
}

fn grant(run: &Run) -> Result<OAuthClient, String> {
    let text = |key: &str| run.context.get(key).and_then(Value::as_str).map(str::to_owned);
    if let Some(jwt) = text("valid_jwt") {
        let client_id = text("client_id").ok_or("the context has no client_id")?;
        return Ok(OAuthClient::jwt_bearer(client_id, move || {
            let jwt = jwt.clone();
            async move { Ok(jwt) }
        }));
    }
    if let Some(id_token) = text("idp_id_token") {
        let endpoint = text("idp_token_endpoint").ok_or("the context has no idp_token_endpoint")?;
        let idp_client = text("idp_client_id").ok_or("the context has no idp_client_id")?;
        let client_id = text("client_id").ok_or("the context has no client_id")?;
        let idp = IdentityProvider::new(endpoint, idp_client);
        return Ok(OAuthClient::enterprise_managed(
            idp,
            client_id,
            text("client_secret"),
            move || {
                let id_token = id_token.clone();
                async move { Ok(id_token) }
            },
        ));
    }
    if let Some(private_key_pem) = text("private_key_pem") {
        let client_id = text("client_id").ok_or("the context has no client_id")?;
        let algorithm = text("signing_algorithm").unwrap_or_else(|| "ES256".into());
        let auth = ClientAuth::PrivateKeyJwt { private_key_pem, algorithm };
        return Ok(OAuthClient::client_credentials(client_id, auth));
    }
    if run.scenario.starts_with("auth/client-credentials") {
        let client_id = text("client_id").ok_or("the context has no client_id")?;
        let secret = text("client_secret").ok_or("the context has no client_secret")?;
        return Ok(OAuthClient::client_credentials(client_id, ClientAuth::Secret(secret)));
    }
    let mut oauth = OAuthClient::authorization_code(
        "modelcontext-conformance-client",
        REDIRECT_URI,
        follow_authorization,
    )
    .client_metadata_url(CLIENT_METADATA_URL);
    if let Some(client_id) = text("client_id") {
        oauth = oauth.pre_registered(client_id, text("client_secret"), text("issuer"));
    }
    Ok(oauth)
}

/// The user's visit to the authorization endpoint: the suite's mock answers a GET with a 302
/// whose `Location` is the redirect URL (with `code`, `state`, `iss`). Plain HTTP/1.1 over
/// TCP, redirects not followed.
async fn follow_authorization(url: String) -> Result<String, String> {
    let rest = url.strip_prefix("http://").ok_or("the authorization URL is not http://")?;
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let path = if path.is_empty() { "/" } else { path };
    let visit = async {
        let mut stream =
            tokio::net::TcpStream::connect(authority).await.map_err(|e| e.to_string())?;
        let request =
            format!("GET {path} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n\r\n");
        stream.write_all(request.as_bytes()).await.map_err(|e| e.to_string())?;
        let mut answer = Vec::new();
        stream.read_to_end(&mut answer).await.map_err(|e| e.to_string())?;
        Ok::<_, String>(String::from_utf8_lossy(&answer).into_owned())
    };
    let answer = tokio::time::timeout(Duration::from_secs(10), visit)
        .await
        .map_err(|_| "the authorization endpoint did not answer in 10 s".to_owned())??;
    let head = answer.split("\r\n\r\n").next().unwrap_or("");
    let status = head.split_whitespace().nth(1).unwrap_or("");
    let location = head.lines().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        name.trim().eq_ignore_ascii_case("location").then(|| value.trim().to_owned())
    });
    match location {
        Some(location) if status.starts_with('3') => Ok(location),
        _ => Err(format!("the authorization endpoint answered {status} without a redirect")),
    }
}

fn fail(context: &str, error: impl std::fmt::Display) -> String {
    format!("{context}: {error:#}")
}

/// Answers every form elicitation with `accept`, filling each field with its schema default
/// (SEP-1034: a client that supports defaults pre-fills them).
async fn accept_with_defaults(params: ElicitRequestParams) -> Result<ElicitResult, McpError> {
    let ElicitRequestParams::Form(form) = params else {
        return Ok(ElicitResult::new(ElicitAction::Decline));
    };
    let schema = serde_json::to_value(&form.requested_schema).unwrap_or_default();
    let mut content = Map::new();
    if let Some(Value::Object(properties)) = schema.get("properties") {
        for (name, property) in properties {
            if let Some(default) = property.get("default") {
                content.insert(name.clone(), default.clone());
            }
        }
    }
    Ok(ElicitResult::accept(content))
}

async fn sample_text(
    _: modelcontext::types::CreateMessageRequestParams,
) -> Result<CreateMessageResult, McpError> {
    let content = SamplingMessageContentBlock::text("Hello from the conformance client");
    Ok(CreateMessageResult::new(Role::Assistant, content, "conformance-model")
        .with_stop_reason("endTurn"))
}

async fn roots() -> Result<Vec<Root>, McpError> {
    Ok(vec![Root::new("file:///tmp/conformance")])
}

async fn list_tool_names(client: &Client) -> Result<Vec<modelcontext::types::Tool>, String> {
    client.list_all_tools().await.map_err(|e| fail("tools/list", e))
}

async fn call(client: &Client, name: &str, args: Value) -> Result<(), String> {
    let result =
        client.call_tool(name, args).await.map_err(|e| fail(&format!("tools/call {name}"), e))?;
    eprintln!("{name}: {}", serde_json::to_string(&result).unwrap_or_default());
    Ok(())
}

/// Loads a skill as a host does, then reads each of its other files; stops at the first
/// verification failure (reported, not an error: refusing the content is the right outcome).
async fn load_and_read_skill(
    client: &Client,
    entry: &modelcontext::types::SkillEntry,
) -> Result<(), String> {
    let skill = match client.load_skill(entry).await {
        Ok(skill) => skill,
        Err(SkillError::Request(e)) => return Err(fail("resources/read", e)),
        Err(refused) => {
            eprintln!("skill refused: {refused}");
            return Ok(());
        }
    };
    let modelcontext::types::SkillFiles::Listed(files) = &skill.entry.resources else {
        return Ok(());
    };
    for file in files.iter().filter(|f| f.uri != skill.entry.uri) {
        match skill.read_file(client, &file.uri).await {
            Ok(bytes) => eprintln!("{}: {} verified bytes", file.uri, bytes.len()),
            Err(SkillError::Request(e)) => return Err(fail("resources/read", e)),
            Err(refused) => {
                eprintln!("file refused: {refused}");
                return Ok(());
            }
        }
    }
    Ok(())
}

async fn run(run: &Run) -> Result<(), String> {
    match run.scenario.as_str() {
        // Handshake, list tools, close.
        "initialize" => {
            let client = run.connect(run.builder()).await?;
            list_tool_names(&client).await?;
            client.close().await;
        }
        // List tools, call add_numbers.
        "tools_call" => {
            let client = run.connect(run.builder()).await?;
            list_tool_names(&client).await?;
            call(&client, "add_numbers", json!({"a": 5, "b": 3})).await?;
            client.close().await;
        }
        // Every request carries the modern envelope and headers; the mock rejects the first
        // version once (-32022) and the client retries with one it supports.
        "request-metadata" => {
            let builder = run
                .builder()
                .on_elicit(accept_with_defaults)
                .on_sample(sample_text)
                .on_roots(roots);
            let client = run.connect(builder).await?;
            list_tool_names(&client).await?;
            client.close().await;
        }
        // Mcp-Method / Mcp-Name on every POST: list and use the first of each kind.
        "http-standard-headers" => {
            let client = run.connect(run.builder()).await?;
            let tools = list_tool_names(&client).await?;
            if let Some(tool) = tools.first() {
                call(&client, &tool.name, json!({})).await?;
            }
            let resources =
                client.list_resources(None).await.map_err(|e| fail("resources/list", e))?;
            if let Some(resource) = resources.resources.first() {
                client.read_resource(&resource.uri).await.map_err(|e| fail("resources/read", e))?;
            }
            let prompts = client.list_prompts(None).await.map_err(|e| fail("prompts/list", e))?;
            if let Some(prompt) = prompts.prompts.first() {
                client
                    .get_prompt(&prompt.name, Vec::<(String, String)>::new())
                    .await
                    .map_err(|e| fail("prompts/get", e))?;
            }
            client.close().await;
        }
        // x-mcp-header arguments mirrored in Mcp-Param-* headers.
        "http-custom-headers" => {
            let client = run.connect(run.builder()).await?;
            list_tool_names(&client).await?;
            let calls =
                run.context.get("toolCalls").and_then(Value::as_array).cloned().unwrap_or_default();
            for tool_call in calls {
                let name = tool_call.get("name").and_then(Value::as_str).unwrap_or_default();
                let args = tool_call.get("arguments").cloned().unwrap_or_else(|| json!({}));
                call(&client, name, args).await?;
            }
            client.close().await;
        }
        // Tools with invalid x-mcp-header annotations are dropped from the list; call the rest.
        "http-invalid-tool-headers" => {
            let client = run.connect(run.builder()).await?;
            for tool in list_tool_names(&client).await? {
                call(&client, &tool.name, json!({})).await?;
            }
            client.close().await;
        }
        // List tools; a network `$ref` in a schema is never fetched.
        "json-schema-ref-no-deref" => {
            let client = run.connect(run.builder()).await?;
            list_tool_names(&client).await?;
            client.close().await;
        }
        // Echo the rich input schema back verbatim.
        "json-schema-2020-12-preservation" => {
            let client = run.connect(run.builder()).await?;
            let tools = list_tool_names(&client).await?;
            let focal = tools
                .iter()
                .find(|t| t.name == "json_schema_2020_12_tool")
                .ok_or("tools/list has no json_schema_2020_12_tool")?;
            let schema = Value::Object(focal.input_schema.clone());
            call(&client, "json_schema_echo", json!({ "schema": schema })).await?;
            client.close().await;
        }
        // MRTR: requestState echoed exactly, no state invented, new ids, no leakage.
        "sep-2322-client-request-state" => {
            let client = run.connect(run.builder().on_elicit(accept_with_defaults)).await?;
            list_tool_names(&client).await?;
            for name in [
                "test_mrtr_echo_state",
                "test_mrtr_no_state",
                "test_mrtr_unrelated",
                "test_mrtr_no_result_type",
            ] {
                call(&client, name, json!({})).await?;
            }
            client.close().await;
        }
        // SEP-1034: accept the form with its defaults filled in.
        "elicitation-sep1034-client-defaults" => {
            let client = run.connect(run.builder().on_elicit(accept_with_defaults)).await?;
            list_tool_names(&client).await?;
            call(&client, "test_client_elicitation_defaults", json!({})).await?;
            client.close().await;
        }
        // The server closes the SSE stream mid-call; the transport reconnects after `retry`.
        "sse-retry" => {
            let client = run.connect(run.builder()).await?;
            list_tool_names(&client).await?;
            call(&client, "test_reconnection", json!({})).await?;
            client.close().await;
        }
        // Skills (SEP-2640): a host builds its registry from the listing alone, reading no
        // skill file ahead of need.
        "sep-2640-client-no-prefetch" => {
            let client = run.connect(run.builder()).await?;
            let skills = client.list_all_skills().await.map_err(|e| fail("skills/list", e))?;
            eprintln!("skills listed: {}", skills.len());
            client.close().await;
        }
        // Skills: load the first skill, which the mock serves tampered (digest, size or front
        // matter); the load must fail verification, so no supporting file is read after it.
        verify if verify.starts_with("sep-2640-client-verify-") => {
            let client = run.connect(run.builder()).await?;
            let skills = client.list_all_skills().await.map_err(|e| fail("skills/list", e))?;
            if let Some(entry) = skills.first() {
                load_and_read_skill(&client, entry).await?;
            }
            client.close().await;
        }
        // OAuth: the transport authorizes on the first 401 and steps up on 403.
        auth if auth.starts_with("auth/") => {
            let transport = HttpTransport::new(&run.url)
                .map_err(|e| format!("{e:#}"))?
                .auth(oauth_client(run)?);
            let client =
                run.builder().connect(transport).await.map_err(|e| format!("connect: {e:#}"))?;
            list_tool_names(&client).await?;
            call(&client, "test-tool", json!({})).await?;
            client.close().await;
        }
        other => return Err(format!("scenario '{other}' is not implemented by this client")),
    }
    Ok(())
}

#[tokio::main]
async fn main() -> ExitCode {
    let outcome = match Run::from_env() {
        Ok(config) => run(&config).await,
        Err(e) => Err(e),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("conformance-client: {e}");
            ExitCode::FAILURE
        }
    }
}
