//! The handlers of what a composed server shows for an upstream: each sends its request on,
//! relays the upstream's progress and questions to the caller while it waits, and answers
//! with what came back. Tool errors stay tool errors and protocol errors keep their code,
//! message and data; only a failure to reach the upstream is worded here.

use std::future::Future;
use std::pin::{Pin, pin};
use std::sync::Arc;

use modelcontext_types::{
    CallToolResult, GetPromptResult, McpError, Meta, ProgressNotificationParams, Reference,
    ResourceContents, SERVER_INFO_META_KEY,
};
use serde_json::Value;
use tokio::sync::{Notify, mpsc};

use super::callers::{Caller, within};
use super::transform::{ToolRoute, Transform};
use super::upstream::Upstream;
use crate::Error;
use crate::client::{CallOptions, Client};
use crate::server::Context;
use crate::server::completion::{ArgumentCompleter, CompletionRequest};
use crate::server::handler::{ErasedHandler, Invocation, erase_invocation};
use crate::server::prompt::PromptKind;
use crate::server::resource::ResourceKind;
use crate::server::tool::{ToolKind, error_result};

/// Answers `tools/call` of a shown tool through `upstream`.
pub(super) fn tool(upstream: Upstream, route: ToolRoute) -> Arc<dyn ErasedHandler<ToolKind>> {
    let route = Arc::new(route);
    erase_invocation(move |invocation: Invocation<ToolKind>| {
        Box::pin(call_tool(upstream.clone(), Arc::clone(&route), invocation))
    })
}

/// Answers `resources/read` of a shown resource or template through `upstream`.
pub(super) fn resource(
    upstream: Upstream,
    transform: Arc<Transform>,
) -> Arc<dyn ErasedHandler<ResourceKind>> {
    erase_invocation(move |invocation: Invocation<ResourceKind>| {
        Box::pin(read_resource(upstream.clone(), Arc::clone(&transform), invocation))
    })
}

/// Answers `prompts/get` of a shown prompt through `upstream`.
pub(super) fn prompt(upstream: Upstream, name: String) -> Arc<dyn ErasedHandler<PromptKind>> {
    let name: Arc<str> = name.into();
    erase_invocation(move |invocation: Invocation<PromptKind>| {
        Box::pin(get_prompt(upstream.clone(), Arc::clone(&name), invocation))
    })
}

/// Completes `argument` of the upstream's prompt or template `reference` through `upstream`.
pub(super) fn completer(
    upstream: Upstream,
    reference: Reference,
    argument: String,
) -> impl ArgumentCompleter {
    move |request: CompletionRequest| {
        let (upstream, reference, argument) =
            (upstream.clone(), reference.clone(), argument.clone());
        async move {
            let client = upstream.client().await.map_err(McpError::internal)?;
            let value = request.value.as_str();
            let asked =
                client.complete_in_context(reference, (&argument, value), request.arguments);
            let outcome = asked.await;
            upstream.settle(&client, &outcome);
            match outcome {
                Ok(result) => Ok(result.completion),
                Err(error) => Err(match upstream_said(&error) {
                    Some(error) => error.clone(),
                    None => McpError::internal(unreachable(&upstream, &error)),
                }),
            }
        }
    }
}

async fn call_tool(
    upstream: Upstream,
    route: Arc<ToolRoute>,
    invocation: Invocation<ToolKind>,
) -> Result<CallToolResult, McpError> {
    let Invocation { cx, arguments, target, .. } = invocation;
    let shown = &target.def.tool.name;
    let arguments = route.upstream_arguments(arguments.into_object());
    let client = match upstream.client().await {
        Ok(client) => client,
        Err(reason) => return Ok(error_result(shown, Some(&reason))),
    };
    let (options, progress) = call_options(&upstream, &cx);
    let call = Box::pin(client.call_tool_object(&route.upstream_name, Some(arguments), &options));
    let outcome = relayed(&upstream, &client, &cx, progress, call).await;
    upstream.changes_imported().await;
    match outcome {
        Ok(mut result) => {
            result.result_type = None;
            unstamp(&mut result.meta);
            Ok(result)
        }
        Err(error) => match upstream_said(&error) {
            Some(error) => Err(error.clone()),
            None => Ok(error_result(shown, Some(&unreachable(&upstream, &error)))),
        },
    }
}

async fn read_resource(
    upstream: Upstream,
    transform: Arc<Transform>,
    invocation: Invocation<ResourceKind>,
) -> Result<Vec<ResourceContents>, McpError> {
    let shown = invocation.target.uri().to_owned();
    let Some(upstream_uri) = transform.upstream_uri(&shown) else {
        return Err(crate::server::unknown_resource(&shown));
    };
    let failed =
        |reason: String| McpError::internal(reason).with_data(serde_json::json!({"uri": shown}));
    let client = upstream.client().await.map_err(failed)?;
    let cx = &invocation.cx;
    let (options, progress) = call_options(&upstream, cx);
    let read = Box::pin(client.read_resource_with(&upstream_uri, &options));
    let read = relayed(&upstream, &client, cx, progress, read).await;
    match read {
        Ok(result) => {
            Ok(result.contents.into_iter().map(|c| shown_contents(&transform, c)).collect())
        }
        Err(error) => Err(match upstream_said(&error) {
            Some(error) => error.clone(),
            None => failed(unreachable(&upstream, &error)),
        }),
    }
}

/// Contents carry the URI they are of: the caller gets them under the URI it knows.
fn shown_contents(transform: &Transform, contents: ResourceContents) -> ResourceContents {
    match contents {
        ResourceContents::Text(mut text) => {
            text.uri = transform.shown_uri(&text.uri);
            ResourceContents::Text(text)
        }
        ResourceContents::Blob(mut blob) => {
            blob.uri = transform.shown_uri(&blob.uri);
            ResourceContents::Blob(blob)
        }
        other => other,
    }
}

async fn get_prompt(
    upstream: Upstream,
    name: Arc<str>,
    invocation: Invocation<PromptKind>,
) -> Result<GetPromptResult, McpError> {
    let arguments: Vec<(String, String)> = invocation
        .arguments
        .into_object()
        .into_iter()
        .map(|(key, value)| match value {
            Value::String(text) => (key, text),
            other => (key, other.to_string()),
        })
        .collect();
    let client = upstream.client().await.map_err(McpError::internal)?;
    let cx = &invocation.cx;
    let (options, progress) = call_options(&upstream, cx);
    let rendered = Box::pin(client.get_prompt_with(&name, arguments, &options));
    let rendered = relayed(&upstream, &client, cx, progress, rendered).await;
    let mut rendered = rendered.map_err(|error| match upstream_said(&error) {
        Some(error) => error.clone(),
        None => McpError::internal(unreachable(&upstream, &error)),
    })?;
    rendered.result_type = None;
    unstamp(&mut rendered.meta);
    Ok(rendered)
}

/// Takes the upstream's era envelope off a result's `_meta` (its `serverInfo` stamp): this
/// server stamps its own, in the caller's era.
fn unstamp(meta: &mut Option<Meta>) {
    if let Some(keys) = meta {
        keys.remove(SERVER_INFO_META_KEY);
        if keys.is_empty() {
            *meta = None;
        }
    }
}

/// The options of a request sent on for the caller `cx`: the upstream's timeout, and, when
/// the caller asked for progress, the upstream's progress delivered to the returned receiver
/// (no channel is made for a caller that did not ask).
fn call_options(upstream: &Upstream, cx: &Context) -> (CallOptions, Option<ProgressUpdates>) {
    let options = CallOptions::new().timeout(upstream.call_timeout());
    if cx.progress_token().is_none() {
        return (options, None);
    }
    let (progress, updates) = mpsc::unbounded_channel();
    let options = options.on_progress(move |update| {
        let _ = progress.send(update);
    });
    (options, Some(updates))
}

type ProgressUpdates = mpsc::UnboundedReceiver<ProgressNotificationParams>;

/// The next progress update; never, without a channel.
async fn next_update(progress: &mut Option<ProgressUpdates>) -> Option<ProgressNotificationParams> {
    match progress {
        Some(updates) => updates.recv().await,
        None => std::future::pending().await,
    }
}

/// Awaits `request` on the upstream for the caller `cx`: the caller is registered for the
/// upstream's questions and log messages, and gets the upstream's `progress`. Dropping this
/// future (the caller cancelled) drops the request, which cancels it upstream.
///
/// The request comes boxed: a client request's future is large, and inline it would be held
/// more than once in this future and the handler's, which are moved on every call.
async fn relayed<T>(
    upstream: &Upstream,
    client: &Arc<Client>,
    cx: &Context,
    mut progress: Option<ProgressUpdates>,
    request: Pin<Box<impl Future<Output = Result<T, Error>>>>,
) -> Result<T, Error> {
    let caller = Caller { cx: cx.clone(), asked: Arc::new(Notify::new()) };
    let _registered = upstream.shared.callers.register(caller.clone());
    let asked = Arc::clone(&caller.asked);
    let mut request = pin!(within(caller, request));
    let outcome = loop {
        tokio::select! {
            biased;
            Some(update) = next_update(&mut progress) => report(cx, update).await,
            outcome = &mut request => break outcome,
            // A question was recorded for a modern caller: this poll lets its frame see it.
            () = asked.notified() => {}
        }
    };
    // Progress sent just before the answer is still queued: it goes first, as it came.
    if let Some(updates) = &mut progress {
        while let Ok(update) = updates.try_recv() {
            report(cx, update).await;
        }
    }
    upstream.settle(client, &outcome);
    outcome
}

/// The JSON-RPC error the upstream answered with; `None` when it did not answer (a closed
/// connection or a timeout also carry an error object, made here, not upstream).
fn upstream_said(error: &Error) -> Option<&McpError> {
    match error.kind() {
        crate::ErrorKind::Protocol => error.as_mcp_error(),
        _ => None,
    }
}

/// Boxed: progress is rare, and the future of every forwarded call would otherwise have room
/// for this one.
async fn report(cx: &Context, update: ProgressNotificationParams) {
    let message = update.message.as_deref();
    Box::pin(cx.report_progress(update.progress, update.total, message)).await;
}

/// Why the upstream could not answer, in words for the caller.
fn unreachable(upstream: &Upstream, error: &Error) -> String {
    format!("upstream server '{}' did not answer: {error}", upstream.name())
}
