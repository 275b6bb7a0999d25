use serde_json::json;

use super::*;
use crate::{ContentBlock, LoggingLevel, Message, ProgressToken};

fn raw(value: serde_json::Value) -> Box<RawValue> {
    to_raw(&value).expect("serializes")
}

#[track_caller]
fn check_invalid<T: fmt::Debug>(parsed: Result<T, ParamsError>, needle: &str) {
    match parsed {
        Err(ParamsError::Invalid(reason)) => assert!(reason.contains(needle), "{reason}"),
        other => panic!("expected Invalid mentioning {needle:?}, got {other:?}"),
    }
}

#[test]
fn client_request_parse() {
    let params = raw(json!({"name": 5}));
    check_invalid(ClientRequest::parse(method::TOOLS_CALL, Some(&params)), "invalid type");
    check_invalid(ClientRequest::parse(method::TOOLS_CALL, None), "name");
    assert_eq!(ClientRequest::parse("tools/explode", None), Err(ParamsError::UnknownMethod));
    // Removed-in-2026 and server-side methods are still unknown to the client enum.
    assert_eq!(ClientRequest::parse(method::ROOTS_LIST, None), Err(ParamsError::UnknownMethod));
    assert_eq!(
        ClientRequest::parse(method::PING, None),
        Ok(ClientRequest::Ping(Default::default()))
    );
    assert!(matches!(
        ClientRequest::parse(method::TOOLS_LIST, None),
        Ok(ClientRequest::ListTools(_))
    ));
    assert!(matches!(
        ClientRequest::parse(method::SERVER_DISCOVER, None),
        Ok(ClientRequest::Discover(_))
    ));
}

#[test]
fn server_request_parse() {
    let params = raw(json!({"messages": [], "maxTokens": "many"}));
    check_invalid(ServerRequest::parse(method::SAMPLING_CREATE_MESSAGE, Some(&params)), "\"many\"");
    check_invalid(ServerRequest::parse(method::ELICITATION_CREATE, None), "message");
    assert_eq!(ServerRequest::parse(method::TOOLS_CALL, None), Err(ParamsError::UnknownMethod));
    assert!(matches!(
        ServerRequest::parse(method::ROOTS_LIST, None),
        Ok(ServerRequest::ListRoots(_))
    ));
    let url = raw(json!({"mode": "url", "message": "m", "url": "https://x", "elicitationId": "e"}));
    match ServerRequest::parse(method::ELICITATION_CREATE, Some(&url)) {
        Ok(ServerRequest::Elicit(ElicitRequestParams::Url(p))) => assert_eq!(p.url, "https://x"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn client_notification_parse() {
    let params = raw(json!({"requestId": true}));
    check_invalid(ClientNotification::parse(method::CANCELLED, Some(&params)), "RequestId");
    assert_eq!(
        ClientNotification::parse("notifications/nope", None),
        Err(ParamsError::UnknownMethod)
    );
    assert_eq!(
        ClientNotification::parse(method::INITIALIZED, None),
        Ok(ClientNotification::Initialized(Default::default()))
    );
}

#[test]
fn server_notification_parse() {
    check_invalid(ServerNotification::parse(method::PROGRESS, None), "progressToken");
    let params = raw(json!({"level": "loud", "data": 1}));
    check_invalid(ServerNotification::parse(method::LOGGING_MESSAGE, Some(&params)), "loud");
    assert_eq!(
        ServerNotification::parse(method::INITIALIZED, None),
        Err(ParamsError::UnknownMethod)
    );
    assert_eq!(
        ServerNotification::parse(method::TOOLS_LIST_CHANGED, None),
        Ok(ServerNotification::ToolListChanged(Default::default()))
    );
}

#[test]
fn request_meta_is_typed_and_keeps_other_keys() {
    let params = raw(json!({
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"sampling": {}},
            "io.modelcontextprotocol/logLevel": "warning",
            "progressToken": 7,
            "traceparent": "00-abc-def-01"
        },
        "name": "add"
    }));
    let request = ClientRequest::parse(method::TOOLS_CALL, Some(&params)).expect("parses");
    let meta = request.meta().expect("has meta");
    assert_eq!(meta.protocol_version.as_deref(), Some("2026-07-28"));
    assert_eq!(meta.progress_token, Some(ProgressToken::Number(7)));
    assert_eq!(meta.log_level, Some(LoggingLevel::Warning));
    assert!(meta.client_capabilities.as_ref().is_some_and(|c| c.sampling.is_some()));
    assert_eq!(meta.other.get("traceparent"), Some(&json!("00-abc-def-01")));
    assert_eq!(request.mcp_name(), Some("add"));
    let line = Message::from(request.to_request(1)).encode();
    let back: serde_json::Value = serde_json::from_str(&line).expect("JSON");
    assert_eq!(
        back["params"],
        serde_json::from_str::<serde_json::Value>(params.get()).expect("JSON")
    );
}

#[test]
fn invalid_log_level_is_invalid_params() {
    let params = raw(json!({"_meta": {"io.modelcontextprotocol/logLevel": "chatty"}}));
    check_invalid(ClientRequest::parse(method::TOOLS_LIST, Some(&params)), "chatty");
}

#[test]
fn builders_write_literal_lines() {
    let ping = ClientRequest::Ping(RequestParams::default());
    assert_eq!(
        Message::from(ping.to_request(1)).encode(),
        r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#
    );
    let call = ClientRequest::CallTool(CallToolRequestParams::new("add", None));
    assert_eq!(
        Message::from(call.to_request("a")).encode(),
        r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"add"}}"#
    );
    let progress = ServerNotification::Progress(ProgressNotificationParams::new(
        ProgressToken::from("t"),
        1.0,
        Some(2.5),
    ));
    assert_eq!(
        Message::from(progress.to_notification()).encode(),
        r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1,"total":2.5}}"#
    );
}

#[test]
fn params_error_maps_to_json_rpc_codes() {
    assert_eq!(McpError::from(ParamsError::UnknownMethod).code, crate::METHOD_NOT_FOUND);
    assert_eq!(McpError::from(ParamsError::Invalid("x".into())).code, crate::INVALID_PARAMS);
}

#[test]
fn logging_levels_are_ordered() {
    assert!(LoggingLevel::Debug < LoggingLevel::Info);
    assert!(LoggingLevel::Warning < LoggingLevel::Error);
    assert!(LoggingLevel::Alert < LoggingLevel::Emergency);
}

#[test]
fn content_blocks_write_one_type_member() {
    let text = serde_json::to_string(&ContentBlock::text("hi")).expect("serializes");
    assert_eq!(text, r#"{"type":"text","text":"hi"}"#);
    let error = crate::CallToolResult::error(vec![ContentBlock::text("bad")]);
    assert_eq!(
        serde_json::to_string(&error).expect("serializes"),
        r#"{"content":[{"type":"text","text":"bad"}],"isError":true}"#
    );
}
