//! One request being answered: the method handlers of a server connection, in both eras.

use std::sync::Arc;

use futures_util::StreamExt;
use modelcontext_types::{
    CacheScope, CallToolRequestParams, CallToolResult, ClientRequest, CompleteResult,
    DiscoverResult, EmptyResult, Era, GetPromptRequestParams, GetPromptResult, INVALID_PARAMS,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, MODERN_VERSIONS, McpError,
    Meta, Notification, PaginatedRequestParams, RawValue, ReadResourceRequestParams,
    ReadResourceResult, RequestMeta, ResultType, SUBSCRIPTION_ID_META_KEY, SubscriptionFilter,
    SubscriptionsAcknowledgedNotificationParams, SubscriptionsListenRequestParams,
    SubscriptionsListenResult, method, to_raw,
};
use serde_json::{Map, Value};

use super::context::{CancelGuard, ClientView, Context, ContextParts, SessionLogLevel};
use super::extensions::{Extensions, PrincipalId};
use super::mrtr::{self, Binding, InputRound};
use super::notify::{self, ChangeEvent};
use super::stamp::{Stamp, WireResult, internal};
use super::{ServerInner, pagination};
use crate::engine::{Outcome, Peer, Reply};

/// One request being answered: everything a method handler needs, borrowed from the loop.
pub(super) struct Call<'a> {
    pub server: &'a Arc<ServerInner>,
    pub server_info: &'a Arc<Value>,
    pub client: &'a Arc<ClientView>,
    pub peer: &'a Peer,
    pub request_id: modelcontext_types::RequestId,
    pub log_level: &'a SessionLogLevel,
    pub extensions: &'a Arc<Extensions>,
}

impl Call<'_> {
    pub(super) fn dispatch(self, request: ClientRequest) -> Reply {
        let server = self.server;
        match request {
            ClientRequest::Ping(_) => Reply::Now(self.finish(EmptyResult::default())),
            ClientRequest::Discover(_) => {
                let versions = MODERN_VERSIONS.iter().map(|v| v.to_string()).collect();
                let mut result = DiscoverResult::new(versions, server.capabilities());
                result.instructions = server.instructions.clone();
                Reply::Now(self.finish(result))
            }
            ClientRequest::ListTools(params) => {
                let catalog = server.catalog();
                let tools = catalog.tools.iter().map(|t| &*t.listed);
                Reply::Now(self.page("tools", params, tools, |tools| ToolsPage {
                    tools,
                    ..Default::default()
                }))
            }
            ClientRequest::CallTool(params) => self.call_tool(params),
            ClientRequest::ListResources(params) => {
                let catalog = server.catalog();
                let resources = catalog.resources.iter().map(|r| r.to_resource());
                Reply::Now(self.page("resources", params, resources, ListResourcesResult::new))
            }
            ClientRequest::ListResourceTemplates(params) => {
                let catalog = server.catalog();
                let templates = catalog.templates.iter().map(|t| t.def.to_template());
                let page = ListResourceTemplatesResult::new;
                Reply::Now(self.page("resources/templates", params, templates, page))
            }
            ClientRequest::ReadResource(params) => self.read_resource(params),
            ClientRequest::ListPrompts(params) => {
                let catalog = server.catalog();
                let prompts = catalog.prompts.iter().map(|p| p.prompt.clone());
                Reply::Now(self.page("prompts", params, prompts, ListPromptsResult::new))
            }
            ClientRequest::GetPrompt(params) => self.get_prompt(params),
            ClientRequest::Complete(params) => match &server.completion {
                Some(handler) => {
                    let future = handler.complete(params);
                    self.later(async move { future.await.map(CompleteResult::new) })
                }
                None => Reply::Now(Err(McpError::method_not_found("completion/complete"))),
            },
            ClientRequest::SubscriptionsListen(params) => self.listen(params),
            other => Reply::Now(Err(McpError::method_not_found(other.method()))),
        }
    }

    /// `subscriptions/listen` (2026-07-28): the acknowledgement first, then every change the
    /// filter asks for, each tagged with the listen request's id, until the client cancels.
    fn listen(self, params: SubscriptionsListenRequestParams) -> Reply {
        let agreed = notify::agreed(&params.notifications);
        let id = serde_json::to_value(&self.request_id).unwrap_or_default();
        // Subscribe before acknowledging, so no change between the two is lost.
        let events = self.server.bus.subscribe();
        let peer = self.peer.clone();
        Reply::Stream(Box::pin(listen_stream(peer, id, agreed, events)))
    }

    /// Answers a list method with one page of `items`.
    fn page<I: Iterator, R: WireResult + Paged>(
        &self,
        kind: &str,
        params: PaginatedRequestParams,
        items: I,
        result: impl FnOnce(Vec<I::Item>) -> R,
    ) -> Outcome {
        let server = self.server;
        let cursor = params.cursor.as_deref();
        let (page, next) = pagination::page(&server.keys, server.page_size, kind, cursor, items)?;
        let mut result = result(page);
        result.set_next_cursor(next);
        self.finish(result)
    }

    /// Opens what a handler runs in: the MRTR round of a modern request (`binding` digests
    /// the arguments, so it is only computed then; a handshake-era request has no rounds, its
    /// questions are live requests), the handler's context, and the guard that raises the
    /// context's cancellation flag if the handler's future is dropped unfinished.
    fn start(
        &self,
        binding: impl FnOnce() -> Binding,
        responses: Option<modelcontext_types::InputResponses>,
        state: Option<&str>,
        meta: Option<RequestMeta>,
    ) -> Result<Started, McpError> {
        let round = self.input_round(binding, responses, state)?;
        let cx = self.context(meta, round.as_ref().map(|(_, r)| Arc::clone(r)));
        let guard = cx.cancel_guard();
        Ok(Started { round, cx, guard })
    }

    fn context(&self, meta: Option<RequestMeta>, input: Option<Arc<InputRound>>) -> Context {
        Context::new(ContextParts {
            request_id: self.request_id.clone(),
            client: self.client,
            meta,
            peer: self.peer,
            server: self.server,
            session_log_level: self.log_level,
            input,
            extensions: Arc::clone(self.extensions),
        })
    }

    fn call_tool(self, params: CallToolRequestParams) -> Reply {
        let Some(entry) = self.server.catalog().tools.get(&params.name).cloned() else {
            // Spec (server/tools, error handling): an unknown tool is a protocol error.
            let message = format!("Unknown tool: {}", params.name);
            return Reply::Now(Err(McpError::new(INVALID_PARAMS, message)));
        };
        let arguments = params.arguments.unwrap_or_default();
        let started = self.start(
            || Binding::new(method::TOOLS_CALL, &params.name, &arguments),
            params.input_responses,
            params.request_state.as_deref(),
            params.meta,
        );
        let Started { round, cx, guard } = match started {
            Ok(started) => started,
            Err(error) => return Reply::Now(Err(error)),
        };
        match entry.call(cx, arguments, self.server.withhold_error_messages) {
            Ok(future) => self.later_in(round, guarded(guard, future)),
            Err(rejected) => Reply::Now(self.finish::<CallToolResult>(*rejected)),
        }
    }

    fn read_resource(self, params: ReadResourceRequestParams) -> Reply {
        let uri = params.uri;
        let withhold = self.server.withhold_error_messages;
        let Some((def, args)) = self.server.resolve_resource(&uri) else {
            return Reply::Now(Err(super::unknown_resource(&uri)));
        };
        let started = self.start(
            || Binding::new(method::RESOURCES_READ, &uri, &Map::new()),
            params.input_responses,
            params.request_state.as_deref(),
            params.meta,
        );
        let Started { round, cx, guard } = match started {
            Ok(started) => started,
            Err(error) => return Reply::Now(Err(error)),
        };
        let future = guarded(guard, super::resource::read(&def, cx, &uri, args, withhold));
        self.later_in(round, async move { future.await.map(ReadResourceResult::new) })
    }

    fn get_prompt(self, params: GetPromptRequestParams) -> Reply {
        let Some(def) = self.server.catalog().prompts.get(&params.name).cloned() else {
            return Reply::Now(Err(McpError::invalid_params(format!(
                "Unknown prompt: {}",
                params.name
            ))));
        };
        let args: Map<String, Value> = params
            .arguments
            .unwrap_or_default()
            .into_iter()
            .map(|(k, v)| (k, Value::String(v)))
            .collect();
        let started = self.start(
            || Binding::new(method::PROMPTS_GET, &params.name, &args),
            params.input_responses,
            params.request_state.as_deref(),
            params.meta,
        );
        let Started { round, cx, guard } = match started {
            Ok(started) => started,
            Err(error) => return Reply::Now(Err(error)),
        };
        match def.get(cx, args, self.server.withhold_error_messages) {
            Ok(future) => self.later_in::<GetPromptResult>(round, guarded(guard, future)),
            Err(error) => Reply::Now(Err(error)),
        }
    }

    /// The MRTR round of a modern request; none in the handshake era.
    fn input_round(
        &self,
        binding: impl FnOnce() -> Binding,
        responses: Option<modelcontext_types::InputResponses>,
        state: Option<&str>,
    ) -> Result<Option<(Binding, Arc<InputRound>)>, McpError> {
        if self.client.era == Era::Handshake {
            return Ok(None);
        }
        let principal = self.extensions.get::<PrincipalId>().map(|p| p.0.as_str());
        let binding = binding().with_principal(principal);
        let round = InputRound::open(self.server, &binding, responses, state)?;
        Ok(Some((binding, Arc::new(round))))
    }

    /// [`Call::later`], inside an MRTR round when there is one.
    fn later_in<R: WireResult + 'static>(
        self,
        round: Option<(Binding, Arc<InputRound>)>,
        future: impl std::future::Future<Output = Result<R, McpError>> + Send + 'static,
    ) -> Reply {
        match round {
            Some((binding, round)) => {
                let server = Arc::clone(self.server);
                self.later(mrtr::run(server, binding, round, future))
            }
            None => self.later(future),
        }
    }

    /// Runs `future` concurrently, then stamps and serializes its result.
    fn later<R: WireResult + 'static>(
        self,
        future: impl std::future::Future<Output = Result<R, McpError>> + Send + 'static,
    ) -> Reply {
        let stamp = Stamp::new(self.server_info, self.client.era);
        Reply::Later(Box::pin(async move { stamp.apply(future.await?) }))
    }

    pub(super) fn finish<R: WireResult>(&self, result: R) -> Outcome {
        Stamp::new(self.server_info, self.client.era).apply(result)
    }
}

/// What [`Call::start`] opens for a handler.
struct Started {
    round: Option<(Binding, Arc<InputRound>)>,
    cx: Context,
    guard: CancelGuard,
}

/// A page of `tools/list`, assembled from each tool's JSON serialized at registration: the
/// wire shape of [`ListToolsResult`](modelcontext_types::ListToolsResult), field for field.
#[derive(Default, serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct ToolsPage<'a> {
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    meta: Option<Meta>,
    #[serde(skip_serializing_if = "Option::is_none")]
    result_type: Option<ResultType>,
    tools: Vec<&'a RawValue>,
    #[serde(skip_serializing_if = "Option::is_none")]
    next_cursor: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ttl_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cache_scope: Option<CacheScope>,
}

super::stamp::cacheable_result!(ToolsPage<'_>);

/// A list result: [`Call::page`] fills in its `nextCursor`.
trait Paged {
    fn set_next_cursor(&mut self, next: Option<String>);
}

macro_rules! paged {
    ($($ty:ty),*) => {$(
        impl Paged for $ty {
            fn set_next_cursor(&mut self, next: Option<String>) {
                self.next_cursor = next;
            }
        }
    )*};
}

paged!(ToolsPage<'_>, ListResourcesResult, ListResourceTemplatesResult, ListPromptsResult);

/// The body of a listen stream: acknowledgement, then the wanted events, tagged with `id`.
async fn listen_stream(
    peer: Peer,
    id: Value,
    agreed: SubscriptionFilter,
    mut events: futures_util::stream::BoxStream<'static, ChangeEvent>,
) -> Outcome {
    let mut meta = Meta::new();
    meta.insert(SUBSCRIPTION_ID_META_KEY.into(), id.clone());
    let ack =
        SubscriptionsAcknowledgedNotificationParams::new(agreed.clone()).with_meta(meta.clone());
    peer.notify(Notification::new(method::SUBSCRIPTIONS_ACKNOWLEDGED, &ack).map_err(internal)?)
        .await?;
    while let Some(event) = events.next().await {
        if !notify::wants(&agreed, &event) {
            continue;
        }
        if let Some(notification) = notify::to_notification(&event, Some(&id)) {
            peer.notify(notification).await?;
        }
    }
    // The bus ended: close the stream with its result (spec: SHOULD).
    let mut done = SubscriptionsListenResult::default().with_meta(meta);
    done.result_type = Some(ResultType::Complete);
    to_raw(&done).map_err(internal)
}

/// `future`, raising its context's cancellation flag if dropped before it finishes.
async fn guarded<T>(guard: CancelGuard, future: impl std::future::Future<Output = T>) -> T {
    let output = future.await;
    guard.disarm();
    output
}

#[cfg(test)]
mod tests {
    use modelcontext_types::{ListToolsResult, Tool, to_raw};
    use serde_json::{json, to_string};

    use super::ToolsPage;
    use crate::server::stamp::WireResult;

    /// `ToolsPage` mirrors `ListToolsResult` by hand: both must write the same bytes, plain and
    /// with the modern stamp, so a field added to one and not the other fails here.
    #[test]
    fn a_tools_page_is_written_exactly_as_list_tools_result() {
        let tool = Tool::new("t", Default::default()).with_description("d");
        let raw = to_raw(&tool).expect("a tool serializes");
        let mut page =
            ToolsPage { tools: vec![&*raw], next_cursor: Some("c".into()), ..Default::default() };
        let mut typed = ListToolsResult::new(vec![tool]).with_next_cursor("c");
        assert_eq!(to_string(&page).expect("json"), to_string(&typed).expect("json"));
        page.stamp(json!({"name": "s", "version": "1"}));
        typed.stamp(json!({"name": "s", "version": "1"}));
        assert_eq!(to_string(&page).expect("json"), to_string(&typed).expect("json"));
    }
}
