//! One request being answered: the method handlers of a server connection, in both eras, and
//! the server's middleware around them.

use std::future::Future;
use std::sync::Arc;

use futures_util::StreamExt;
use modelcontext_types::{
    ClientRequest, CompleteResult, Completion, DiscoverResult, EmptyResult, Era, InputResponses,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListSkillsResult,
    ListToolsResult, MODERN_VERSIONS, McpError, Meta, Notification, PaginatedRequestParams,
    RawValue, ReadDirectoryResult, RequestMeta, ResultType, SUBSCRIPTION_ID_META_KEY,
    SubscriptionFilter, SubscriptionsAcknowledgedNotificationParams,
    SubscriptionsListenRequestParams, SubscriptionsListenResult, declares_tasks, method,
    tasks_capabilities, to_raw,
};
use serde_json::Value;

use super::cache::Cacheable;
use super::context::{ClientView, Context, ContextParts, SessionLogLevel};
use super::extensions::{Extensions, PrincipalId};
use super::frame::{HandlerFrame, Round, guarded};
use super::handler::{Invocation, Kind, Located, RequestParts, Route};
use super::middleware::{Endpoint, Origin, Stack};
use super::mrtr::{Binding, InputRound};
use super::notify::{self, BusEvent, Subscribed};
use super::prompt::PromptKind;
use super::resource::ResourceKind;
use super::stamp::{ServerInfoJson, Stamp, WireResult, internal};
use super::tasks::{self, TaskSupport};
use super::telemetry::Link;
use super::tool::ToolKind;
use super::{ServerInner, pagination};
use crate::engine::{Outcome, Peer, Reply};

/// One request being answered: everything a method handler needs, borrowed from the loop.
pub(super) struct Call<'a> {
    pub server: &'a Arc<ServerInner>,
    pub server_info: &'a Arc<ServerInfoJson>,
    pub client: &'a Arc<ClientView>,
    pub peer: &'a Peer,
    pub request_id: modelcontext_types::RequestId,
    /// What `logging/setLevel` set: handshake era only.
    pub log_level: Option<&'a SessionLogLevel>,
    /// The URIs of `resources/subscribe`: handshake era only.
    pub subscribed: Option<&'a Subscribed>,
    pub extensions: &'a Arc<Extensions>,
    /// The transport and session the request came over.
    pub link: &'a Link,
    /// Whether the middleware of the tool, resource or prompt the request names is still to
    /// run (it is not inside that middleware).
    pub item_middleware: bool,
}

impl Call<'_> {
    /// Answers `request` through the server's middleware, if it has any, then its method.
    /// Without middleware this is [`Call::dispatch`] itself: nothing is boxed or cloned.
    pub(super) fn dispatch_with_middleware(self, request: ClientRequest) -> Reply {
        let stack = &self.server.middleware;
        match stack.runs_for(request.method()) {
            true => self.through(stack, request),
            false => self.dispatch(request),
        }
    }

    /// Answers `request` through `stack`, then its method: one future that owns what the
    /// method needs, since a middleware may await before it lets the request through.
    fn through(self, stack: &Stack, request: ClientRequest) -> Reply {
        let origin = self.origin();
        let owned = OwnedCall::of(&self);
        let endpoint: Endpoint = Arc::new(move |request| match owned.call().dispatch(request) {
            Reply::Now(outcome) => Box::pin(std::future::ready(outcome)),
            Reply::Later(future) | Reply::Stream(future) => future,
        });
        let request = super::middleware::Request::new(request, origin);
        match stack.run_through(request, endpoint) {
            (true, future) => Reply::Stream(future),
            (false, future) => Reply::Later(future),
        }
    }

    /// What a middleware knows of where the request comes from.
    fn origin(&self) -> Origin {
        Origin {
            id: self.request_id.clone(),
            era: self.client.era,
            protocol_version: self.client.protocol_version,
            session_id: self.link.session_id.clone(),
            transport: self.link.transport,
            extensions: Arc::clone(self.extensions),
            server_info: Arc::clone(self.server_info),
        }
    }

    /// Answers `request` by its method.
    pub(super) fn dispatch(self, request: ClientRequest) -> Reply {
        let server = self.server;
        match request {
            ClientRequest::Ping(_) => Reply::Now(self.finish(EmptyResult::default())),
            ClientRequest::Discover(_) => {
                let versions = MODERN_VERSIONS.iter().map(|v| v.to_string()).collect();
                let mut result = DiscoverResult::new(versions, server.capabilities());
                result.instructions = server.instructions.clone();
                let stamp = self.stamp().with_hint(server.cache.get(Cacheable::Discover));
                Reply::Now(stamp.apply(result))
            }
            ClientRequest::ListTools(params) => {
                let catalog = server.catalog();
                let tools = catalog.tools.iter().map(|t| &*t.listing.json);
                Reply::Now(self.page("tools", params, tools, ToolsPage::new))
            }
            ClientRequest::CallTool(params) => self.serve::<ToolKind>(params),
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
            ClientRequest::ReadResource(params) => self.serve::<ResourceKind>(params),
            ClientRequest::ListPrompts(params) => {
                let catalog = server.catalog();
                let prompts = catalog.prompts.iter().map(|p| p.prompt.clone());
                Reply::Now(self.page("prompts", params, prompts, ListPromptsResult::new))
            }
            ClientRequest::GetPrompt(params) => self.serve::<PromptKind>(params),
            ClientRequest::Complete(params) => {
                let catalog = server.catalog();
                match (super::completion::find(&catalog, &params), &server.completion) {
                    (Some((completer, request)), _) => {
                        let future = completer.complete(request);
                        self.later(async move { future.await.map(CompleteResult::new) })
                    }
                    (None, Some(handler)) => {
                        let future = handler.complete(params);
                        self.later(async move { future.await.map(CompleteResult::new) })
                    }
                    // Completions are declared (some argument has a completer), just not for
                    // this one: nothing to suggest.
                    (None, None) if catalog.has_completers() => {
                        Reply::Now(self.finish(CompleteResult::new(Completion::new(Vec::new()))))
                    }
                    (None, None) => {
                        Reply::Now(Err(McpError::method_not_found("completion/complete")))
                    }
                }
            }
            ClientRequest::SubscriptionsListen(params) => self.listen(params),
            ClientRequest::SetLevel(params) => match self.log_level {
                Some(level) => {
                    level.set(params.level);
                    Reply::Now(self.finish(EmptyResult::default()))
                }
                None => Reply::Now(Err(McpError::method_not_found(method::LOGGING_SET_LEVEL))),
            },
            ClientRequest::Subscribe(params) => Reply::Now(self.subscribe(&params.uri, true)),
            ClientRequest::Unsubscribe(params) => Reply::Now(self.subscribe(&params.uri, false)),
            ClientRequest::GetTask(params) => {
                self.task_method(|server, principal| tasks::get(server, params, principal))
            }
            ClientRequest::UpdateTask(params) => {
                self.task_method(|server, principal| tasks::update(server, params, principal))
            }
            ClientRequest::CancelTask(params) => {
                self.task_method(|server, principal| tasks::cancel(server, params, principal))
            }
            ClientRequest::ListSkills(params) => {
                let catalog = server.catalog();
                let skills = catalog.skills.iter().map(|s| s.entry.clone());
                Reply::Now(self.page("skills", params, skills, ListSkillsResult::new))
            }
            ClientRequest::GetSkill(params) => {
                let found = super::skills::serve::get(&server.catalog(), &params.uri);
                let hint = server.cache.get(Cacheable::Skills);
                Reply::Now(found.and_then(|result| self.stamp().with_hint(hint).apply(result)))
            }
            ClientRequest::ReadDirectory(params) => {
                let catalog = server.catalog();
                let children = super::skills::serve::children(&catalog, &params.uri);
                Reply::Now(children.and_then(|children| {
                    let kind = format!("directory/{}", params.uri);
                    let cursor = params.cursor.as_deref();
                    let keys = &server.keys;
                    let (page, next) = pagination::page(
                        keys,
                        server.page_size,
                        &kind,
                        cursor,
                        children.into_iter(),
                    )?;
                    let mut result = ReadDirectoryResult::new(page);
                    result.next_cursor = next;
                    self.finish(result)
                }))
            }
            other => Reply::Now(Err(McpError::method_not_found(other.method()))),
        }
    }

    /// `tasks/get`, `tasks/update` and `tasks/cancel`: modern requests that declare the tasks
    /// extension only (-32021 naming it otherwise, as the extension requires).
    fn task_method<R, F>(self, method: impl FnOnce(Arc<ServerInner>, Option<String>) -> F) -> Reply
    where
        R: WireResult + 'static,
        F: Future<Output = Result<R, McpError>> + Send + 'static,
    {
        if self.client.era != Era::Modern {
            return Reply::Now(Err(McpError::method_not_found("tasks/*")));
        }
        if !declares_tasks(&self.client.capabilities) {
            return Reply::Now(Err(missing_tasks_extension()));
        }
        let future = method(Arc::clone(self.server), self.principal());
        self.later(future)
    }

    /// `resources/subscribe` and `resources/unsubscribe` (handshake era): the URI must name a
    /// resource or match a template.
    fn subscribe(&self, uri: &str, on: bool) -> Outcome {
        let Some(subscribed) = self.subscribed else {
            let name = if on { method::RESOURCES_SUBSCRIBE } else { method::RESOURCES_UNSUBSCRIBE };
            return Err(McpError::method_not_found(name));
        };
        if self.server.resolve_resource(uri).is_none() {
            return Err(super::unknown_resource(uri));
        }
        let mut subscribed = subscribed.lock().unwrap_or_else(|e| e.into_inner());
        if on {
            subscribed.insert(uri.to_owned());
        } else {
            subscribed.remove(uri);
        }
        drop(subscribed);
        self.finish(EmptyResult::default())
    }

    fn principal(&self) -> Option<String> {
        self.extensions.get::<PrincipalId>().map(|p| p.0.clone())
    }

    /// `subscriptions/listen` (2026-07-28): the acknowledgement first, then every change the
    /// filter asks for, each tagged with the listen request's id, until the client cancels.
    fn listen(self, params: SubscriptionsListenRequestParams) -> Reply {
        let agreed = notify::agreed(&params.notifications);
        // Tasks extension: asking for task notifications without declaring it is -32021.
        if agreed.task_ids.is_some() && !declares_tasks(&self.client.capabilities) {
            return Reply::Now(Err(missing_tasks_extension()));
        }
        let id = serde_json::to_value(&self.request_id).unwrap_or_default();
        // Subscribe before acknowledging, so no change between the two is lost.
        let events = self.server.bus.subscribe();
        let listener = Listener { peer: self.peer.clone(), id, principal: self.principal() };
        Reply::Stream(Box::pin(listen_stream(listener, agreed, events)))
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
        let hint = match kind {
            "tools" => Cacheable::Tools,
            "resources" => Cacheable::Resources,
            "resources/templates" => Cacheable::ResourceTemplates,
            "skills" => Cacheable::Skills,
            _ => Cacheable::Prompts,
        };
        self.stamp().with_hint(server.cache.get(hint)).apply(result)
    }

    /// `tools/call`, `resources/read` and `prompts/get`. The kind locates the handler (or the
    /// target's own middleware, which comes back here once it lets the request through); then,
    /// the same for all three: the MRTR round of a modern request, the handler's context and
    /// its cancellation guard, the kind's check of the arguments, and the handler's run (with
    /// the kind's panic and withholding policy) inside the request's [`HandlerFrame`].
    fn serve<K: Kind>(self, params: K::Params) -> Reply {
        let located = K::locate(self.server, params, self.item_middleware);
        let Located { handler, target, mut arguments, parts } = match located {
            Ok(Route::Handler(located)) => located,
            Ok(Route::Middleware(stack, request)) => {
                return Call { item_middleware: false, ..self }.through(&stack, request);
            }
            Err(error) => return Reply::Now(Err(error)),
        };
        let RequestParts { responses, state, meta } = parts;
        let round = match self.input_round(|| K::binding(&target, &mut arguments), responses, state)
        {
            Ok(round) => round,
            Err(error) => return Reply::Now(Err(error)),
        };
        let cx = self.context(meta, round.as_ref().map(|round| Arc::clone(&round.input)));
        let guard = cx.cancel_guard();
        if let Some(answer) = K::refuse(&target, &arguments) {
            return Reply::Now(answer.and_then(|result| self.finish(result)));
        }
        let withhold = self.server.withhold_error_messages;
        let stamp = match K::cache_hint(&target, &self.server.cache) {
            Some(hint) => self.stamp().with_hint(hint),
            None => self.stamp(),
        };
        let task = match self.task_plan(K::task_support(&target), round.as_ref()) {
            Ok(task) => task,
            Err(error) => return Reply::Now(Err(error)),
        };
        if let Some(input) = task {
            let run = handler.run_to_value(Invocation { cx, arguments, target, withhold });
            let run = Box::pin(async move { guarded(guard, run).await.map(K::into_wire) });
            let call = tasks::TaskCall {
                server: Arc::clone(self.server),
                round: input,
                owner: self.principal(),
                stamp,
                run,
            };
            return Reply::Later(Box::pin(call.respond()));
        }
        let frame = HandlerFrame { guard, round, stamp };
        Reply::Later(handler.respond(Invocation { cx, arguments, target, withhold }, frame))
    }

    /// Whether this call may become a task (tasks extension): a task-capable target, a modern
    /// request that declares the extension. A required task without the extension is -32021.
    fn task_plan(
        &self,
        support: Option<TaskSupport>,
        round: Option<&Round>,
    ) -> Result<Option<Arc<InputRound>>, McpError> {
        let (Some(support), Some(round)) = (support, round) else { return Ok(None) };
        if declares_tasks(&self.client.capabilities) {
            return Ok(Some(Arc::clone(&round.input)));
        }
        match support {
            TaskSupport::Required => Err(missing_tasks_extension()),
            _ => Ok(None),
        }
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

    /// The MRTR round of a modern request (`binding` digests the arguments, so it is only
    /// computed then); none in the handshake era, whose questions are live requests.
    fn input_round(
        &self,
        binding: impl FnOnce() -> Binding,
        responses: Option<InputResponses>,
        state: Option<String>,
    ) -> Result<Option<Round>, McpError> {
        if self.client.era == Era::Handshake {
            return Ok(None);
        }
        let principal = self.extensions.get::<PrincipalId>().map(|p| p.0.as_str());
        let binding = binding().with_principal(principal);
        let input = InputRound::open(self.server, binding, responses, state.as_deref())?;
        Ok(Some(Round { server: Arc::clone(self.server), input: Arc::new(input) }))
    }

    /// Runs `future` concurrently, then stamps and serializes its result.
    fn later<R: WireResult + 'static>(
        self,
        future: impl Future<Output = Result<R, McpError>> + Send + 'static,
    ) -> Reply {
        let stamp = self.stamp();
        Reply::Later(Box::pin(async move { stamp.apply(future.await?) }))
    }

    pub(super) fn finish<R: WireResult>(&self, result: R) -> Outcome {
        self.stamp().apply(result)
    }

    fn stamp(&self) -> Stamp {
        Stamp::new(self.server_info, self.client.era)
    }
}

/// -32021 naming the tasks extension.
fn missing_tasks_extension() -> McpError {
    McpError::missing_required_client_capability(
        "This request needs the io.modelcontextprotocol/tasks extension",
        tasks_capabilities(),
    )
}

/// What [`Call`] borrows, owned: for a request whose method runs after middleware awaited.
struct OwnedCall {
    server: Arc<ServerInner>,
    server_info: Arc<ServerInfoJson>,
    client: Arc<ClientView>,
    peer: Peer,
    request_id: modelcontext_types::RequestId,
    log_level: Option<SessionLogLevel>,
    subscribed: Option<Subscribed>,
    extensions: Arc<Extensions>,
    link: Link,
    item_middleware: bool,
}

impl OwnedCall {
    fn of(call: &Call<'_>) -> OwnedCall {
        OwnedCall {
            server: Arc::clone(call.server),
            server_info: Arc::clone(call.server_info),
            client: Arc::clone(call.client),
            peer: call.peer.clone(),
            request_id: call.request_id.clone(),
            log_level: call.log_level.cloned(),
            subscribed: call.subscribed.cloned(),
            extensions: Arc::clone(call.extensions),
            link: call.link.clone(),
            item_middleware: call.item_middleware,
        }
    }

    fn call(&self) -> Call<'_> {
        Call {
            server: &self.server,
            server_info: &self.server_info,
            client: &self.client,
            peer: &self.peer,
            request_id: self.request_id.clone(),
            log_level: self.log_level.as_ref(),
            subscribed: self.subscribed.as_ref(),
            extensions: &self.extensions,
            link: &self.link,
            item_middleware: self.item_middleware,
        }
    }
}

/// A page of `tools/list`, assembled from each tool's JSON serialized at registration.
type ToolsPage<'a> = ListToolsResult<&'a RawValue>;

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

paged!(
    ToolsPage<'_>,
    ListResourcesResult,
    ListResourceTemplatesResult,
    ListPromptsResult,
    ListSkillsResult
);

/// The body of a listen stream: acknowledgement, then the wanted events, tagged with `id`.
/// Who listens: where the notifications go, the listen request's id, and the principal (task
/// notifications are only for their owner).
struct Listener {
    peer: Peer,
    id: Value,
    principal: Option<String>,
}

async fn listen_stream(
    listener: Listener,
    agreed: SubscriptionFilter,
    mut events: futures_util::stream::BoxStream<'static, BusEvent>,
) -> Outcome {
    let Listener { peer, id, principal } = listener;
    let mut meta = Meta::new();
    meta.insert(SUBSCRIPTION_ID_META_KEY.into(), id.clone());
    let ack =
        SubscriptionsAcknowledgedNotificationParams::new(agreed.clone()).with_meta(meta.clone());
    peer.notify(Notification::new(method::SUBSCRIPTIONS_ACKNOWLEDGED, &ack).map_err(internal)?)
        .await?;
    while let Some(heard) = events.next().await {
        let (change, resent) = match heard {
            // Task status goes to the task's owner only.
            BusEvent::Change(notify::ChangeEvent::TaskStatus { owner, .. })
                if owner != principal =>
            {
                continue;
            }
            BusEvent::Change(event) if notify::wants(&agreed, &event) => (Some(event), vec![]),
            BusEvent::Change(_) => continue,
            // Something may be lost: tell the client everything it asked for may have changed.
            BusEvent::Gap => (None, notify::resync(&agreed)),
        };
        for event in change.iter().chain(&resent) {
            if let Some(notification) = notify::to_notification(event, Some(&id)) {
                peer.notify(notification).await?;
            }
        }
    }
    // The bus ended: close the stream with its result (spec: SHOULD).
    let mut done = SubscriptionsListenResult::default().with_meta(meta);
    done.result_type = Some(ResultType::Complete);
    to_raw(&done).map_err(internal)
}
