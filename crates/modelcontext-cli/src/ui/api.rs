//! The JSON API the page calls: `POST /api/<what>` with a JSON body, answered with JSON, and
//! `GET /api/events?after=N`, the long poll of everything that happens on the connection.
//! Every route is behind [`super::security::check`].

use std::sync::Arc;

use axum::extract::{Json, State};
use axum::http::{StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use modelcontext::CallOptions;
use modelcontext::types::{PromptReference, Reference, ResourceTemplateReference, Root};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::session::{ConnectRequest, Session};
use crate::failure::Failure;
use crate::pages::all_pages;

/// What a handler answers: JSON, or a failure as `{"error": ...}` with a status that says
/// whose fault it was.
pub type Answer = Result<Json<Value>, ApiError>;

/// A failure on its way to the page.
pub struct ApiError(Failure);

impl From<Failure> for ApiError {
    fn from(failure: Failure) -> ApiError {
        ApiError(failure)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = match &self.0 {
            Failure::Usage(_) => StatusCode::BAD_REQUEST,
            Failure::Other(_) => StatusCode::INTERNAL_SERVER_ERROR,
            // The server failed us, not the page.
            _ => StatusCode::BAD_GATEWAY,
        };
        let mut error = json!({"message": self.0.describe()});
        if let Failure::Protocol { code, data, .. } = &self.0 {
            error["code"] = json!(code);
            error["data"] = json!(data);
        }
        (status, Json(json!({"error": error}))).into_response()
    }
}

/// An SDK error, classified as the command's failures are.
pub fn sdk(err: modelcontext::Error) -> ApiError {
    ApiError(Failure::from_sdk(err))
}

/// The state every handler gets.
pub type Ui = State<Arc<Session>>;

pub async fn info(State(session): Ui) -> Answer {
    Ok(Json(session.info()))
}

pub async fn connect(State(session): Ui, Json(request): Json<ConnectRequest>) -> Answer {
    session.connect(&request).await?;
    Ok(Json(session.info()))
}

pub async fn disconnect(State(session): Ui) -> Answer {
    session.disconnect().await;
    Ok(Json(session.info()))
}

/// `GET /api/events?after=N`: the events numbered above N (waiting a while for one).
pub async fn events(State(session): Ui, uri: Uri) -> Answer {
    let after = (uri.query().unwrap_or(""))
        .split('&')
        .find_map(|pair| pair.strip_prefix("after="))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    Ok(Json(json!({"events": session.events.after(after).await})))
}

#[derive(Deserialize)]
pub struct ListRequest {
    /// tools, resources, templates or prompts.
    what: String,
}

/// Every page of one of the server's lists.
pub async fn list(State(session): Ui, Json(request): Json<ListRequest>) -> Answer {
    let client = session.client()?;
    let value = match request.what.as_str() {
        "tools" => json!({"tools": client.list_all_tools().await.map_err(sdk)?}),
        "resources" => json!({"resources": all_pages(
            |cursor| client.list_resources(cursor),
            |page| (page.resources, page.next_cursor),
        ).await?}),
        "templates" => json!({"resourceTemplates": all_pages(
            |cursor| client.list_resource_templates(cursor),
            |page| (page.resource_templates, page.next_cursor),
        ).await?}),
        "prompts" => json!({"prompts": all_pages(
            |cursor| client.list_prompts(cursor),
            |page| (page.prompts, page.next_cursor),
        ).await?}),
        other => return Err(Failure::Usage(format!("nothing called {other:?} to list")).into()),
    };
    Ok(Json(value))
}

#[derive(Deserialize)]
pub struct CallRequest {
    /// The page's name for this request, for progress events and `cancel`.
    request: String,
    tool: String,
    #[serde(default)]
    arguments: Map<String, Value>,
}

/// `tools/call`, with progress as `progress` events and cancellable by its request name.
pub async fn call(State(session): Ui, Json(request): Json<CallRequest>) -> Answer {
    let client = session.client()?;
    let options = progress_options(&session, &request.request);
    let CallRequest { request: name, tool, arguments } = request;
    let call = async move { client.call_tool_with(&tool, arguments, &options).await };
    finish(session.cancellable(name, call).await?)
}

#[derive(Deserialize)]
pub struct ReadRequest {
    request: String,
    uri: String,
}

pub async fn read(State(session): Ui, Json(request): Json<ReadRequest>) -> Answer {
    let client = session.client()?;
    let options = progress_options(&session, &request.request);
    let ReadRequest { request: name, uri } = request;
    let read = async move { client.read_resource_with(&uri, &options).await };
    finish(session.cancellable(name, read).await?)
}

#[derive(Deserialize)]
pub struct PromptRequest {
    request: String,
    prompt: String,
    #[serde(default)]
    arguments: Map<String, Value>,
}

pub async fn prompt(State(session): Ui, Json(request): Json<PromptRequest>) -> Answer {
    let client = session.client()?;
    let options = progress_options(&session, &request.request);
    let PromptRequest { request: name, prompt, arguments } = request;
    // Prompt arguments are strings on the wire; a form may have sent a number.
    let arguments: Vec<(String, String)> = arguments
        .into_iter()
        .map(|(key, value)| match value {
            Value::String(text) => (key, text),
            other => (key, other.to_string()),
        })
        .collect();
    let get = async move { client.get_prompt_with(&prompt, arguments, &options).await };
    finish(session.cancellable(name, get).await?)
}

/// A finished request as JSON: its result, `{"cancelled": true}`, or the failure.
pub fn finish<T: serde::Serialize>(outcome: Option<Result<T, modelcontext::Error>>) -> Answer {
    match outcome {
        None => Ok(Json(json!({"cancelled": true}))),
        Some(Ok(result)) => Ok(Json(json!({"result": result}))),
        Some(Err(err)) => Err(sdk(err)),
    }
}

/// Options that turn each progress update into a `progress` event named after the request.
pub fn progress_options(session: &Session, request: &str) -> CallOptions {
    let events = session.events.clone();
    let request = request.to_owned();
    CallOptions::new().on_progress(move |update| {
        events.push("progress", json!({"request": request, "update": update}));
    })
}

#[derive(Deserialize)]
pub struct CancelRequest {
    request: String,
}

pub async fn cancel(State(session): Ui, Json(request): Json<CancelRequest>) -> Answer {
    Ok(Json(json!({"cancelled": session.cancel(&request.request)})))
}

#[derive(Deserialize)]
pub struct CompleteRequest {
    /// `prompt` or `resource`.
    kind: String,
    /// The prompt's name or the template's URI template.
    name: String,
    argument: String,
    value: String,
}

/// `completion/complete`; a server without completions answers with nothing to offer.
pub async fn complete(State(session): Ui, Json(request): Json<CompleteRequest>) -> Answer {
    let client = session.client()?;
    if client.server_capabilities().completions.is_none() {
        return Ok(Json(json!({"completion": {"values": []}})));
    }
    let reference = match request.kind.as_str() {
        "prompt" => Reference::Prompt(PromptReference::new(request.name)),
        _ => Reference::Resource(ResourceTemplateReference::new(request.name)),
    };
    let argument = (request.argument.as_str(), request.value.as_str());
    let result = client.complete(reference, argument).await.map_err(sdk)?;
    Ok(Json(json!(result)))
}

#[derive(Deserialize)]
pub struct RootsRequest {
    roots: Vec<Root>,
}

pub async fn roots(State(session): Ui, Json(request): Json<RootsRequest>) -> Answer {
    if let Some(bad) = request.roots.iter().find(|root| !root.uri.starts_with("file://")) {
        return Err(Failure::Usage(format!("{:?} is not a file:// URI", bad.uri)).into());
    }
    session.set_roots(request.roots).await?;
    Ok(Json(session.info()))
}

#[derive(Deserialize)]
pub struct AnswerRequest {
    id: u64,
    /// The answer (an elicitation or sampling result), or else...
    #[serde(default)]
    result: Option<Value>,
    /// ...why the person refused.
    #[serde(default)]
    refused: Option<String>,
}

/// The person's answer to a question the server asked (`question` events).
pub async fn answer(State(session): Ui, Json(request): Json<AnswerRequest>) -> Answer {
    let answer = match (request.result, request.refused) {
        (Some(result), None) => Ok(result),
        (None, Some(reason)) => Err(reason),
        _ => return Err(Failure::Usage("give either result or refused".into()).into()),
    };
    session.answer(request.id, answer)?;
    Ok(Json(json!({})))
}

#[derive(Deserialize)]
pub struct ListenRequest {
    #[serde(default)]
    resources: Vec<String>,
}

pub async fn listen(State(session): Ui, Json(request): Json<ListenRequest>) -> Answer {
    Ok(Json(session.listen(request.resources).await?))
}

#[derive(Deserialize)]
pub struct LoginRequest {
    url: String,
    #[serde(default)]
    headers: Vec<(String, String)>,
}

/// Logs in to an OAuth-protected server (the answer comes once the browser came back); the
/// page then connects, and the stored tokens authorize the connection.
pub async fn login(State(session): Ui, Json(request): Json<LoginRequest>) -> Answer {
    Ok(Json(session.login(&request.url, &request.headers).await?))
}

pub async fn ping(State(session): Ui) -> Answer {
    let client = session.client()?;
    let started = std::time::Instant::now();
    client.ping().await.map_err(sdk)?;
    Ok(Json(json!({"milliseconds": started.elapsed().as_secs_f64() * 1000.0})))
}
