//! Typed requests and notifications: what each `method` carries.
//!
//! A receiver decodes the envelope ([`crate::Message::decode`]), then calls `parse` with the
//! method and the raw params. `parse` matches the method string first and deserializes the
//! params once, straight into that method's type; there is no trial parsing. Absent params
//! parse as `{}`, so methods whose params are all optional accept none.

use std::fmt;

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::{
    CallToolRequestParams, CancelledNotificationParams, CompleteRequestParams,
    CreateMessageRequestParams, ElicitRequestParams, ElicitationCompleteNotificationParams,
    GetPromptRequestParams, GetSkillRequestParams, InitializeRequestParams,
    LoggingMessageNotificationParams, McpError, Notification, NotificationParams,
    PaginatedRequestParams, ProgressNotificationParams, RawValue, ReadDirectoryRequestParams,
    ReadResourceRequestParams, Request, RequestId, RequestMeta, RequestParams,
    ResourceUpdatedNotificationParams, SetLevelRequestParams, SubscribeRequestParams,
    SubscriptionsAcknowledgedNotificationParams, SubscriptionsListenRequestParams, TaskIdParams,
    UnsubscribeRequestParams, UpdateTaskParams, to_raw,
};

/// Every MCP method name, both eras.
pub mod method {
    /// Handshake-era lifecycle request.
    pub const INITIALIZE: &str = "initialize";
    /// Liveness check (handshake era).
    pub const PING: &str = "ping";
    /// Modern-era discovery (2026-07-28).
    pub const SERVER_DISCOVER: &str = "server/discover";
    /// List tools.
    pub const TOOLS_LIST: &str = "tools/list";
    /// Call a tool.
    pub const TOOLS_CALL: &str = "tools/call";
    /// List resources.
    pub const RESOURCES_LIST: &str = "resources/list";
    /// List resource templates.
    pub const RESOURCES_TEMPLATES_LIST: &str = "resources/templates/list";
    /// Read a resource.
    pub const RESOURCES_READ: &str = "resources/read";
    /// Watch a resource (handshake era).
    pub const RESOURCES_SUBSCRIBE: &str = "resources/subscribe";
    /// Stop watching a resource (handshake era).
    pub const RESOURCES_UNSUBSCRIBE: &str = "resources/unsubscribe";
    /// List prompts.
    pub const PROMPTS_LIST: &str = "prompts/list";
    /// Render a prompt.
    pub const PROMPTS_GET: &str = "prompts/get";
    /// Complete an argument.
    pub const COMPLETION_COMPLETE: &str = "completion/complete";
    /// Set the session log level (handshake era).
    pub const LOGGING_SET_LEVEL: &str = "logging/setLevel";
    /// Open a notification stream (2026-07-28).
    pub const SUBSCRIPTIONS_LISTEN: &str = "subscriptions/listen";
    /// Poll a task (tasks extension).
    pub const TASKS_GET: &str = "tasks/get";
    /// Answer a task's questions (tasks extension).
    pub const TASKS_UPDATE: &str = "tasks/update";
    /// Ask for a task's cancellation (tasks extension).
    pub const TASKS_CANCEL: &str = "tasks/cancel";
    /// List skills (skills extension).
    pub const SKILLS_LIST: &str = "skills/list";
    /// One skill's entry by URI (skills extension).
    pub const SKILLS_GET: &str = "skills/get";
    /// The children of a directory resource (skills extension, `directoryRead`).
    pub const RESOURCES_DIRECTORY_READ: &str = "resources/directory/read";
    /// A task's status changed (tasks extension).
    pub const TASKS_STATUS: &str = "notifications/tasks";
    /// Sample from the client's LLM.
    pub const SAMPLING_CREATE_MESSAGE: &str = "sampling/createMessage";
    /// Ask the user for input.
    pub const ELICITATION_CREATE: &str = "elicitation/create";
    /// List the client's roots.
    pub const ROOTS_LIST: &str = "roots/list";
    /// The client finished initializing (handshake era).
    pub const INITIALIZED: &str = "notifications/initialized";
    /// A request was cancelled.
    pub const CANCELLED: &str = "notifications/cancelled";
    /// Progress of a request.
    pub const PROGRESS: &str = "notifications/progress";
    /// The client's roots changed (handshake era).
    pub const ROOTS_LIST_CHANGED: &str = "notifications/roots/list_changed";
    /// A log message.
    pub const LOGGING_MESSAGE: &str = "notifications/message";
    /// The tool list changed.
    pub const TOOLS_LIST_CHANGED: &str = "notifications/tools/list_changed";
    /// The prompt list changed.
    pub const PROMPTS_LIST_CHANGED: &str = "notifications/prompts/list_changed";
    /// The resource list changed.
    pub const RESOURCES_LIST_CHANGED: &str = "notifications/resources/list_changed";
    /// A watched resource changed.
    pub const RESOURCES_UPDATED: &str = "notifications/resources/updated";
    /// A listen stream's agreed subscriptions (2026-07-28).
    pub const SUBSCRIPTIONS_ACKNOWLEDGED: &str = "notifications/subscriptions/acknowledged";
    /// A URL elicitation finished (2025-11-25 only).
    pub const ELICITATION_COMPLETE: &str = "notifications/elicitation/complete";
}

/// Why params did not parse.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ParamsError {
    /// The method is not one this enum knows (answer -32601).
    UnknownMethod,
    /// The method is known but its params are malformed (answer -32602); says what is wrong.
    Invalid(String),
}

impl fmt::Display for ParamsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamsError::UnknownMethod => f.write_str("Method not found"),
            ParamsError::Invalid(reason) => write!(f, "Invalid params: {reason}"),
        }
    }
}

impl std::error::Error for ParamsError {}

impl From<ParamsError> for McpError {
    fn from(err: ParamsError) -> McpError {
        match err {
            ParamsError::UnknownMethod => {
                McpError::new(crate::METHOD_NOT_FOUND, "Method not found")
            }
            ParamsError::Invalid(_) => McpError::invalid_params(err.to_string()),
        }
    }
}

fn parse_params<T: DeserializeOwned>(params: Option<&RawValue>) -> Result<T, ParamsError> {
    let text = params.map_or("{}", RawValue::get);
    serde_json::from_str(text).map_err(|err| ParamsError::Invalid(err.to_string()))
}

/// Serializes params, leaving out an empty object (the schemas allow params to be absent
/// when nothing in them is required, and `{"method":"ping"}` is the common spelling), except
/// for `notifications/cancelled`, whose params 2025-11-25 requires even without a
/// `requestId` (found by the `message_roundtrip` fuzz target).
fn raw_params(name: &str, params: &impl Serialize) -> Option<Box<RawValue>> {
    // Our params types hold only strings, numbers, JSON values and string-keyed maps, so
    // serializing them cannot fail.
    #[allow(clippy::expect_used)]
    let raw = to_raw(params).expect("MCP params always serialize");
    (raw.get() != "{}" || name == method::CANCELLED).then_some(raw)
}

/// Params that carry a typed request `_meta`.
trait HasRequestMeta {
    fn request_meta(&self) -> Option<&RequestMeta>;
}

macro_rules! has_request_meta {
    ($($ty:ty),* $(,)?) => {$(
        impl HasRequestMeta for $ty {
            fn request_meta(&self) -> Option<&RequestMeta> {
                self.meta.as_ref()
            }
        }
    )*};
}

has_request_meta!(
    InitializeRequestParams,
    RequestParams,
    PaginatedRequestParams,
    CallToolRequestParams,
    ReadResourceRequestParams,
    SubscribeRequestParams,
    UnsubscribeRequestParams,
    GetPromptRequestParams,
    CompleteRequestParams,
    SetLevelRequestParams,
    SubscriptionsListenRequestParams,
    CreateMessageRequestParams,
    TaskIdParams,
    UpdateTaskParams,
    GetSkillRequestParams,
    ReadDirectoryRequestParams,
);

impl HasRequestMeta for ElicitRequestParams {
    fn request_meta(&self) -> Option<&RequestMeta> {
        self.meta()
    }
}

/// Defines a message enum with `parse`, `method` and the params serializer; one table row
/// per variant keeps method strings and params types side by side.
macro_rules! messages {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident($params:ty) = $method:path,)* }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq)]
        #[non_exhaustive]
        // Unboxed on purpose: a message is parsed once and moved a few times, and boxing
        // would put a deref in every handler's match arm.
        #[allow(clippy::large_enum_variant)]
        pub enum $name {
            $($(#[$vdoc])* $variant($params),)*
        }

        impl $name {
            /// Parses `params` as the params of `method`.
            pub fn parse(method: &str, params: Option<&RawValue>) -> Result<Self, ParamsError> {
                match method {
                    $($method => parse_params(params).map($name::$variant),)*
                    _ => Err(ParamsError::UnknownMethod),
                }
            }

            /// The method name.
            pub fn method(&self) -> &'static str {
                match self {
                    $($name::$variant(_) => $method,)*
                }
            }

            /// The params, serialized (`None` when they are an empty object that may be left out).
            pub fn params(&self) -> Option<Box<RawValue>> {
                match self {
                    $($name::$variant(p) => raw_params($method, p),)*
                }
            }
        }
    };
}

macro_rules! requests {
    ($name:ident { $($variant:ident),* $(,)? }) => {
        impl $name {
            /// The request's typed `_meta`.
            pub fn meta(&self) -> Option<&RequestMeta> {
                match self {
                    $($name::$variant(p) => p.request_meta(),)*
                }
            }

            /// The JSON-RPC request with this id.
            pub fn to_request(&self, id: impl Into<RequestId>) -> Request {
                Request { id: id.into(), method: self.method().to_owned(), params: self.params() }
            }
        }
    };
}

macro_rules! notifications {
    ($name:ident) => {
        impl $name {
            /// The JSON-RPC notification.
            pub fn to_notification(&self) -> Notification {
                Notification { method: self.method().to_owned(), params: self.params() }
            }
        }
    };
}

messages!(
    /// A request a client sends to a server (both eras).
    ClientRequest {
        /// `initialize` (handshake era).
        Initialize(Box<InitializeRequestParams>) = method::INITIALIZE,
        /// `ping` (handshake era).
        Ping(RequestParams) = method::PING,
        /// `server/discover` (2026-07-28).
        Discover(RequestParams) = method::SERVER_DISCOVER,
        /// `tools/list`.
        ListTools(PaginatedRequestParams) = method::TOOLS_LIST,
        /// `tools/call`.
        CallTool(CallToolRequestParams) = method::TOOLS_CALL,
        /// `resources/list`.
        ListResources(PaginatedRequestParams) = method::RESOURCES_LIST,
        /// `resources/templates/list`.
        ListResourceTemplates(PaginatedRequestParams) = method::RESOURCES_TEMPLATES_LIST,
        /// `resources/read`.
        ReadResource(ReadResourceRequestParams) = method::RESOURCES_READ,
        /// `resources/subscribe` (handshake era).
        Subscribe(SubscribeRequestParams) = method::RESOURCES_SUBSCRIBE,
        /// `resources/unsubscribe` (handshake era).
        Unsubscribe(UnsubscribeRequestParams) = method::RESOURCES_UNSUBSCRIBE,
        /// `prompts/list`.
        ListPrompts(PaginatedRequestParams) = method::PROMPTS_LIST,
        /// `prompts/get`.
        GetPrompt(GetPromptRequestParams) = method::PROMPTS_GET,
        /// `completion/complete`.
        Complete(CompleteRequestParams) = method::COMPLETION_COMPLETE,
        /// `logging/setLevel` (handshake era).
        SetLevel(SetLevelRequestParams) = method::LOGGING_SET_LEVEL,
        /// `subscriptions/listen` (2026-07-28).
        SubscriptionsListen(SubscriptionsListenRequestParams) = method::SUBSCRIPTIONS_LISTEN,
        /// `tasks/get` (tasks extension).
        GetTask(TaskIdParams) = method::TASKS_GET,
        /// `tasks/update` (tasks extension).
        UpdateTask(UpdateTaskParams) = method::TASKS_UPDATE,
        /// `tasks/cancel` (tasks extension).
        CancelTask(TaskIdParams) = method::TASKS_CANCEL,
        /// `skills/list` (skills extension).
        ListSkills(PaginatedRequestParams) = method::SKILLS_LIST,
        /// `skills/get` (skills extension).
        GetSkill(GetSkillRequestParams) = method::SKILLS_GET,
        /// `resources/directory/read` (skills extension).
        ReadDirectory(ReadDirectoryRequestParams) = method::RESOURCES_DIRECTORY_READ,
    }
);

requests!(ClientRequest {
    Initialize,
    Ping,
    Discover,
    ListTools,
    CallTool,
    ListResources,
    ListResourceTemplates,
    ReadResource,
    Subscribe,
    Unsubscribe,
    ListPrompts,
    GetPrompt,
    Complete,
    SetLevel,
    SubscriptionsListen,
    GetTask,
    UpdateTask,
    CancelTask,
    ListSkills,
    GetSkill,
    ReadDirectory,
});

impl ClientRequest {
    /// The value of the `Mcp-Name` header (2026-07-28 HTTP): the tool or prompt name, or the
    /// resource URI, for the three methods that require it.
    pub fn mcp_name(&self) -> Option<&str> {
        match self {
            ClientRequest::CallTool(p) => Some(&p.name),
            ClientRequest::GetPrompt(p) => Some(&p.name),
            ClientRequest::ReadResource(p) => Some(&p.uri),
            // The tasks extension: the task id, so intermediaries route to its holder.
            ClientRequest::GetTask(p) | ClientRequest::CancelTask(p) => Some(&p.task_id),
            ClientRequest::UpdateTask(p) => Some(&p.task_id),
            _ => None,
        }
    }
}

messages!(
    /// A request a server sends to a client (handshake era; in 2026-07-28 the last three
    /// travel inside an `InputRequiredResult` instead).
    ServerRequest {
        /// `ping`.
        Ping(RequestParams) = method::PING,
        /// `sampling/createMessage`.
        CreateMessage(CreateMessageRequestParams) = method::SAMPLING_CREATE_MESSAGE,
        /// `elicitation/create`.
        Elicit(ElicitRequestParams) = method::ELICITATION_CREATE,
        /// `roots/list`.
        ListRoots(RequestParams) = method::ROOTS_LIST,
    }
);

requests!(ServerRequest { Ping, CreateMessage, Elicit, ListRoots });

messages!(
    /// A notification a client sends to a server.
    ClientNotification {
        /// `notifications/initialized` (handshake era).
        Initialized(NotificationParams) = method::INITIALIZED,
        /// `notifications/cancelled`.
        Cancelled(CancelledNotificationParams) = method::CANCELLED,
        /// `notifications/progress` (handshake era: progress of a server request).
        Progress(ProgressNotificationParams) = method::PROGRESS,
        /// `notifications/roots/list_changed` (handshake era).
        RootsListChanged(NotificationParams) = method::ROOTS_LIST_CHANGED,
    }
);

notifications!(ClientNotification);

messages!(
    /// A notification a server sends to a client.
    ServerNotification {
        /// `notifications/progress`.
        Progress(ProgressNotificationParams) = method::PROGRESS,
        /// `notifications/message`.
        LoggingMessage(LoggingMessageNotificationParams) = method::LOGGING_MESSAGE,
        /// `notifications/tools/list_changed`.
        ToolListChanged(NotificationParams) = method::TOOLS_LIST_CHANGED,
        /// `notifications/prompts/list_changed`.
        PromptListChanged(NotificationParams) = method::PROMPTS_LIST_CHANGED,
        /// `notifications/resources/list_changed`.
        ResourceListChanged(NotificationParams) = method::RESOURCES_LIST_CHANGED,
        /// `notifications/resources/updated`.
        ResourceUpdated(ResourceUpdatedNotificationParams) = method::RESOURCES_UPDATED,
        /// `notifications/cancelled` (2026-07-28: only to end a listen stream).
        Cancelled(CancelledNotificationParams) = method::CANCELLED,
        /// `notifications/subscriptions/acknowledged` (2026-07-28).
        SubscriptionsAcknowledged(SubscriptionsAcknowledgedNotificationParams) =
            method::SUBSCRIPTIONS_ACKNOWLEDGED,
        /// `notifications/elicitation/complete` (2025-11-25 only).
        ElicitationComplete(ElicitationCompleteNotificationParams) = method::ELICITATION_COMPLETE,
    }
);

notifications!(ServerNotification);

#[cfg(test)]
mod tests;
