//! Every official 2026-07-28 example message round-trips through our types without loss.
//!
//! Each folder of `testdata/spec/2026-07-28/examples/` (vendored) is named after a schema definition; the
//! table below maps it to a check. A folder without a row fails the test, so a new example
//! cannot be skipped silently.

use std::fs;
use std::path::{Path, PathBuf};

use modelcontext_types::*;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

const EXAMPLES: &str =
    concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/spec/2026-07-28/examples");

/// The example files of one folder, each with its text.
fn files(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut paths: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|ext| ext == "json"))
        .collect();
    paths.sort();
    assert!(!paths.is_empty(), "{}: no examples", dir.display());
    paths.into_iter().map(|p| (p.clone(), fs::read_to_string(&p).expect("readable"))).collect()
}

fn value(path: &Path, text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{}: not JSON: {e}", path.display()))
}

#[track_caller]
fn assert_same(path: &Path, original: &Value, ours: &Value) {
    assert_eq!(
        ours,
        original,
        "{}: round trip changed the message\n ours: {ours}\n orig: {original}",
        path.display()
    );
}

/// A plain definition: parse into `T`, serialize back.
fn check<T: DeserializeOwned + Serialize>(dir: &Path) {
    for (path, text) in files(dir) {
        let parsed: T = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{}: does not parse: {e}", path.display()));
        let ours = serde_json::to_value(&parsed).expect("serializes");
        assert_same(&path, &value(&path, &text), &ours);
    }
}

fn decode(path: &Path, text: &str) -> Message {
    Message::decode_str(text).unwrap_or_else(|e| panic!("{}: envelope: {e}", path.display()))
}

fn encoded(path: &Path, text: &str, message: Message) {
    let ours = value(path, &message.encode());
    assert_same(path, &value(path, text), &ours);
}

/// Implemented by the four message enums so one check covers each direction.
trait Typed: Sized {
    fn parse(method: &str, params: Option<&RawValue>) -> Result<Self, ParamsError>;
    fn to_message(&self, id: Option<RequestId>) -> Message;
}

macro_rules! typed_requests {
    ($($ty:ty),*) => {$(
        impl Typed for $ty {
            fn parse(method: &str, params: Option<&RawValue>) -> Result<Self, ParamsError> {
                <$ty>::parse(method, params)
            }
            fn to_message(&self, id: Option<RequestId>) -> Message {
                self.to_request(id.expect("a request has an id")).into()
            }
        }
    )*};
}

macro_rules! typed_notifications {
    ($($ty:ty),*) => {$(
        impl Typed for $ty {
            fn parse(method: &str, params: Option<&RawValue>) -> Result<Self, ParamsError> {
                <$ty>::parse(method, params)
            }
            fn to_message(&self, _: Option<RequestId>) -> Message {
                self.to_notification().into()
            }
        }
    )*};
}

typed_requests!(ClientRequest, ServerRequest);
typed_notifications!(ClientNotification, ServerNotification);

/// A whole JSON-RPC request or notification: decode the envelope, parse the params by
/// method, re-encode.
fn check_message<T: Typed>(dir: &Path) {
    for (path, text) in files(dir) {
        let (id, method, params) = match decode(&path, &text) {
            Message::Request(r) => (Some(r.id), r.method, r.params),
            Message::Notification(n) => (None, n.method, n.params),
            Message::Response(_) | Message::BatchResponse(_) => {
                panic!("{}: expected a request or notification", path.display())
            }
        };
        let typed = T::parse(&method, params.as_deref())
            .unwrap_or_else(|e| panic!("{}: params: {e}", path.display()));
        encoded(&path, &text, typed.to_message(id));
    }
}

/// A whole JSON-RPC success response whose result is a `T`.
fn check_response<T: DeserializeOwned + Serialize>(dir: &Path) {
    for (path, text) in files(dir) {
        let Message::Response(Response { id: Some(id), result: Ok(raw) }) = decode(&path, &text)
        else {
            panic!("{}: expected a success response", path.display());
        };
        let result: T = serde_json::from_str(raw.get())
            .unwrap_or_else(|e| panic!("{}: result: {e}", path.display()));
        let raw = to_raw(&result).expect("serializes");
        encoded(&path, &text, Response::ok(id, raw).into());
    }
}

/// A whole JSON-RPC error response whose `data`, if any, is a `D`.
fn check_error_response<D: DeserializeOwned + Serialize>(dir: &Path) {
    for (path, text) in files(dir) {
        let Message::Response(Response { id, result: Err(mut error) }) = decode(&path, &text)
        else {
            panic!("{}: expected an error response", path.display());
        };
        if error.data.is_some() {
            let data: D = error
                .data_as()
                .unwrap_or_else(|| panic!("{}: error data does not parse", path.display()));
            error.data = Some(serde_json::to_value(data).expect("serializes"));
        }
        encoded(&path, &text, Response::error(id, error).into());
    }
}

/// A request embedded in an `InputRequiredResult`: `{method, params?}`. Members outside the
/// 2026-07-28 shape (the `ListRootsRequest` example carries a stray `id`) are copied over.
fn check_input_request(dir: &Path) {
    for (path, text) in files(dir) {
        let original = value(&path, &text);
        let parsed: InputRequest = serde_json::from_value(original.clone())
            .unwrap_or_else(|e| panic!("{}: does not parse: {e}", path.display()));
        let mut ours = serde_json::to_value(&parsed).expect("serializes");
        for (key, member) in original.as_object().expect("an object") {
            if key != "method" && key != "params" {
                ours.as_object_mut().expect("an object").insert(key.clone(), member.clone());
            }
        }
        assert_same(&path, &original, &ours);
    }
}

macro_rules! examples {
    ($($folder:ident => $check:expr,)*) => {
        fn checker(folder: &str) -> Option<fn(&Path)> {
            match folder {
                $(stringify!($folder) => Some($check),)*
                _ => None,
            }
        }
    };
}

examples! {
    AudioContent => |d| { check::<AudioContent>(d); check::<ContentBlock>(d) },
    BlobResourceContents => |d| { check::<BlobResourceContents>(d); check::<ResourceContents>(d) },
    BooleanSchema => |d| { check::<BooleanSchema>(d); check::<PrimitiveSchemaDefinition>(d) },
    CallToolRequest => check_message::<ClientRequest>,
    CallToolRequestParams => check::<CallToolRequestParams>,
    CallToolResult => check::<CallToolResult>,
    CallToolResultResponse => check_response::<MrtrResult<CallToolResult>>,
    CancelledNotification => check_message::<ClientNotification>,
    CancelledNotificationParams => check::<CancelledNotificationParams>,
    ClientCapabilities => check::<ClientCapabilities>,
    CompleteRequest => check_message::<ClientRequest>,
    CompleteRequestParams => check::<CompleteRequestParams>,
    CompleteResult => check::<CompleteResult>,
    CompleteResultResponse => check_response::<CompleteResult>,
    CreateMessageRequest => check_input_request,
    CreateMessageRequestParams => check::<CreateMessageRequestParams>,
    CreateMessageResult => check::<CreateMessageResult>,
    DiscoverRequest => check_message::<ClientRequest>,
    DiscoverResult => check::<DiscoverResult>,
    DiscoverResultResponse => check_response::<DiscoverResult>,
    ElicitRequest => check_input_request,
    ElicitRequestFormParams => |d| { check::<ElicitRequestFormParams>(d); check::<ElicitRequestParams>(d) },
    ElicitRequestURLParams => |d| { check::<ElicitRequestURLParams>(d); check::<ElicitRequestParams>(d) },
    ElicitResult => check::<ElicitResult>,
    EmbeddedResource => |d| { check::<EmbeddedResource>(d); check::<ContentBlock>(d) },
    GetPromptRequest => check_message::<ClientRequest>,
    GetPromptRequestParams => check::<GetPromptRequestParams>,
    GetPromptResult => check::<GetPromptResult>,
    GetPromptResultResponse => check_response::<MrtrResult<GetPromptResult>>,
    HeaderMismatchError => check_error_response::<Value>,
    ImageContent => |d| { check::<ImageContent>(d); check::<ContentBlock>(d) },
    InputRequests => check::<InputRequests>,
    InputRequiredResult => |d| { check::<InputRequiredResult>(d); check::<MrtrResult<CallToolResult>>(d) },
    InputResponses => check::<InputResponses>,
    InternalError => check::<McpError>,
    InvalidParamsError => check::<McpError>,
    ListPromptsRequest => check_message::<ClientRequest>,
    ListPromptsResult => check::<ListPromptsResult>,
    ListPromptsResultResponse => check_response::<ListPromptsResult>,
    ListResourceTemplatesRequest => check_message::<ClientRequest>,
    ListResourceTemplatesResult => check::<ListResourceTemplatesResult>,
    ListResourceTemplatesResultResponse => check_response::<ListResourceTemplatesResult>,
    ListResourcesRequest => check_message::<ClientRequest>,
    ListResourcesResult => check::<ListResourcesResult>,
    ListResourcesResultResponse => check_response::<ListResourcesResult>,
    ListRootsRequest => check_input_request,
    ListRootsResult => check::<ListRootsResult>,
    ListToolsRequest => check_message::<ClientRequest>,
    ListToolsResult => check::<ListToolsResult>,
    ListToolsResultResponse => check_response::<ListToolsResult>,
    LoggingMessageNotification => check_message::<ServerNotification>,
    LoggingMessageNotificationParams => check::<LoggingMessageNotificationParams>,
    MethodNotFoundError => check::<McpError>,
    MissingRequiredClientCapabilityError => check_error_response::<MissingRequiredClientCapabilityData>,
    ModelPreferences => check::<ModelPreferences>,
    NumberSchema => |d| { check::<NumberSchema>(d); check::<PrimitiveSchemaDefinition>(d) },
    PaginatedRequestParams => check::<PaginatedRequestParams>,
    ParseError => check::<McpError>,
    ProgressNotification => check_message::<ServerNotification>,
    ProgressNotificationParams => check::<ProgressNotificationParams>,
    PromptListChangedNotification => check_message::<ServerNotification>,
    ReadResourceRequest => check_message::<ClientRequest>,
    ReadResourceResult => check::<ReadResourceResult>,
    ReadResourceResultResponse => check_response::<MrtrResult<ReadResourceResult>>,
    Resource => check::<Resource>,
    ResourceLink => |d| { check::<ResourceLink>(d); check::<ContentBlock>(d) },
    ResourceListChangedNotification => check_message::<ServerNotification>,
    ResourceUpdatedNotification => check_message::<ServerNotification>,
    ResourceUpdatedNotificationParams => check::<ResourceUpdatedNotificationParams>,
    Root => check::<Root>,
    SamplingMessage => check::<SamplingMessage>,
    ServerCapabilities => check::<ServerCapabilities>,
    StringSchema => |d| { check::<StringSchema>(d); check::<PrimitiveSchemaDefinition>(d) },
    SubscriptionsAcknowledgedNotification => check_message::<ServerNotification>,
    SubscriptionsListenRequest => check_message::<ClientRequest>,
    SubscriptionsListenResult => check::<SubscriptionsListenResult>,
    SubscriptionsListenResultResponse => check_response::<SubscriptionsListenResult>,
    TextContent => |d| { check::<TextContent>(d); check::<ContentBlock>(d) },
    TextResourceContents => |d| { check::<TextResourceContents>(d); check::<ResourceContents>(d) },
    TitledMultiSelectEnumSchema => |d| { check::<TitledMultiSelectEnumSchema>(d); check::<PrimitiveSchemaDefinition>(d) },
    TitledSingleSelectEnumSchema => |d| { check::<TitledSingleSelectEnumSchema>(d); check::<PrimitiveSchemaDefinition>(d) },
    Tool => check::<Tool>,
    ToolListChangedNotification => check_message::<ServerNotification>,
    ToolResultContent => |d| { check::<ToolResultContent>(d); check::<SamplingMessageContentBlock>(d) },
    ToolUseContent => |d| { check::<ToolUseContent>(d); check::<SamplingMessageContentBlock>(d) },
    UnsupportedProtocolVersionError => check_error_response::<UnsupportedProtocolVersionData>,
    UntitledMultiSelectEnumSchema => |d| { check::<UntitledMultiSelectEnumSchema>(d); check::<PrimitiveSchemaDefinition>(d) },
    UntitledSingleSelectEnumSchema => |d| { check::<UntitledSingleSelectEnumSchema>(d); check::<PrimitiveSchemaDefinition>(d) },
}

#[test]
fn every_example_round_trips() {
    let mut folders: Vec<PathBuf> = fs::read_dir(EXAMPLES)
        .unwrap_or_else(|e| {
            panic!("{EXAMPLES}: {e} (vendored in the repository: see testdata/README.md)")
        })
        .map(|entry| entry.expect("dir entry").path())
        .filter(|p| p.is_dir())
        .collect();
    folders.sort();
    assert!(!folders.is_empty(), "no example folders under {EXAMPLES}");
    let mut unmapped = Vec::new();
    for folder in &folders {
        let name = folder.file_name().and_then(|n| n.to_str()).expect("a UTF-8 folder name");
        match checker(name) {
            Some(check) => check(folder),
            None => unmapped.push(name.to_owned()),
        }
    }
    assert!(unmapped.is_empty(), "example folders with no check in the table: {unmapped:?}");
}
