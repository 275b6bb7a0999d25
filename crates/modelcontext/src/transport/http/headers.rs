//! The headers of each POST: the handshake era's session headers, and the 2026-07-28 routing
//! headers mirrored from the body (`Mcp-Method`, `Mcp-Name`, `Mcp-Param-*` for arguments whose
//! schema says `x-mcp-header`, with the `=?base64?...?=` encoding).

use bytes::Bytes;
use http::Method;
use http::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use modelcontext_types::{
    HEADER_MISMATCH, Message, PROTOCOL_VERSION_META_KEY, Request, RequestId, Response, method,
    mirrored_arguments, to_raw,
};
use serde_json::{Map, Value, json};

use super::{MCP_METHOD, MCP_NAME, PROTOCOL_VERSION, SESSION_ID, Shared};

/// Pages of `tools/list` read when relearning headers; a server with more is not followed.
const MAX_TOOL_PAGES: usize = 20;

impl Shared {
    /// The headers of every POST.
    pub(super) fn base_headers(&self) -> HeaderMap {
        let mut headers = self.config.headers.clone();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert(ACCEPT, HeaderValue::from_static("application/json, text/event-stream"));
        headers
    }

    /// Handshake era: the session id and negotiated version (not on `initialize` itself).
    pub(super) fn session_headers(&self, initialize: bool) -> HeaderMap {
        let mut headers = self.base_headers();
        if initialize {
            return headers;
        }
        let state = self.state();
        if let Some(id) = &state.session_id {
            headers.insert(SESSION_ID, id.clone());
        }
        if let Some(version) = state.handshake_version.as_deref() {
            if let Ok(value) = HeaderValue::from_str(version) {
                headers.insert(PROTOCOL_VERSION, value);
            }
        }
        headers
    }

    /// 2026-07-28: the request's routing headers, mirrored from its body.
    pub(super) fn modern_headers(
        &self,
        rpc_method: &str,
        version: &str,
        params: Option<&Value>,
    ) -> HeaderMap {
        let mut headers = self.base_headers();
        insert_encoded(&mut headers, PROTOCOL_VERSION, version);
        insert_encoded(&mut headers, MCP_METHOD, rpc_method);
        let name_key = match rpc_method {
            method::TOOLS_CALL | method::PROMPTS_GET => "name",
            method::RESOURCES_READ => "uri",
            // The tasks extension: routed to the instance holding the task.
            method::TASKS_GET | method::TASKS_UPDATE | method::TASKS_CANCEL => "taskId",
            _ => return headers,
        };
        let Some(name) = params.and_then(|p| p.get(name_key)?.as_str()) else { return headers };
        insert_encoded(&mut headers, MCP_NAME, name);
        if rpc_method != method::TOOLS_CALL {
            return headers;
        }
        let Some(arguments) = params.and_then(|p| p.get("arguments")) else { return headers };
        let state = self.state();
        let arguments = arguments.as_object();
        for mirrored in state.tool_headers.get(name).into_iter().flatten() {
            let value = arguments.and_then(|args| mirrored.value_in(args));
            let token = &mirrored.header;
            let rendered = match value {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Bool(b)) => b.to_string(),
                Some(Value::Number(n)) => n.to_string(),
                _ => continue,
            };
            if let Ok(name) = HeaderName::from_bytes(format!("mcp-param-{token}").as_bytes()) {
                insert_encoded(&mut headers, name, &rendered);
            }
        }
        headers
    }

    /// Lists every tool again (with the refused call's own `_meta`) to learn their
    /// `x-mcp-header` arguments, and returns the call's headers computed afresh. `None` when
    /// listing fails.
    pub(super) async fn relearn_tool_headers(&self, call: &Bytes) -> Option<HeaderMap> {
        let Ok(Message::Request(request)) = Message::decode(call) else { return None };
        let params: Value = serde_json::from_str(request.params.as_ref()?.get()).ok()?;
        let meta = params.get("_meta")?;
        let version = meta.get(PROTOCOL_VERSION_META_KEY)?.as_str()?;
        let mut cursor: Option<String> = None;
        for page in 1..=MAX_TOOL_PAGES {
            let mut list = json!({ "_meta": meta });
            if let Some(cursor) = cursor.take() {
                list["cursor"] = Value::String(cursor);
            }
            let id = RequestId::String(format!("modelcontext-relist-{page}"));
            let list = Request {
                id: id.clone(),
                method: method::TOOLS_LIST.into(),
                params: to_raw(&list).ok(),
            };
            let headers = self.modern_headers(method::TOOLS_LIST, version, None);
            let body = Bytes::from(Message::Request(list).encode());
            let answer = self.send(Method::POST, headers, body).await.ok()?;
            let result = self.read_own_response(&id, answer).await?.ok()?;
            let mut result: Map<String, Value> = serde_json::from_str(result.get()).ok()?;
            self.learn_tools(&mut result);
            cursor = result.get("nextCursor").and_then(Value::as_str).map(str::to_owned);
            if cursor.is_none() {
                break;
            }
        }
        Some(self.modern_headers(method::TOOLS_CALL, version, Some(&params)))
    }

    /// Records each tool's header arguments; returns true when an invalid tool was dropped.
    pub(super) fn learn_tools(&self, result: &mut Map<String, Value>) -> bool {
        let Some(Value::Array(tools)) = result.get_mut("tools") else { return false };
        let before = tools.len();
        let mut state = self.state();
        tools.retain(|tool| {
            let Some(name) = tool.get("name").and_then(Value::as_str) else { return true };
            match mirrored_arguments(tool.get("inputSchema").unwrap_or(&Value::Null)) {
                Ok(headers) => {
                    state.tool_headers.insert(name.to_owned(), headers);
                    true
                }
                Err(reason) => {
                    tracing::warn!(tool = name, %reason, "dropping a tool: invalid x-mcp-header");
                    state.tool_headers.remove(name);
                    false
                }
            }
        });
        tools.len() != before
    }
}

/// Whether an answer body is the 2026-07-28 HeaderMismatch error (-32020).
pub(super) fn is_header_mismatch(bytes: &[u8]) -> bool {
    matches!(
        Message::decode(bytes),
        Ok(Message::Response(Response { result: Err(error), .. })) if error.code == HEADER_MISMATCH
    )
}

/// Inserts a header, wrapping a value that would not survive HTTP as `=?base64?...?=`.
fn insert_encoded(headers: &mut HeaderMap, name: HeaderName, value: &str) {
    if let Ok(value) = HeaderValue::from_str(&encode_header_value(value)) {
        headers.insert(name, value);
    }
}

/// Spec 2026-07-28 (transports, custom headers): printable ASCII without surrounding spaces
/// goes verbatim; anything else (non-ASCII, control characters, edge whitespace, or a value
/// that looks like the sentinel itself) is sent as `=?base64?<UTF-8 in base64>?=`.
pub(crate) fn encode_header_value(value: &str) -> String {
    let printable = value.bytes().all(|b| (0x20..=0x7e).contains(&b));
    let sentinel = value.starts_with("=?base64?") && value.ends_with("?=") && value.len() >= 11;
    if printable && value.trim() == value && !sentinel {
        return value.to_owned();
    }
    format!("=?base64?{}?=", crate::base64::encode(value.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    pub(super) fn header_values_are_base64_wrapped_only_when_unsafe() {
        let cases = [
            ("us-west1", "us-west1"),
            ("", ""),
            (" padded ", "=?base64?IHBhZGRlZCA=?="),
            ("Zürich", "=?base64?WsO8cmljaA==?="),
            (
                "a
b",
                "=?base64?YQpi?=",
            ),
            ("=?base64?abc?=", "=?base64?PT9iYXNlNjQ/YWJjPz0=?="),
        ];
        for (plain, sent) in cases {
            assert_eq!(encode_header_value(plain), sent, "{plain:?}");
        }
    }
}
