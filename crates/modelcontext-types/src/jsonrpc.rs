//! The JSON-RPC 2.0 envelope: what every MCP message looks like before its method is known.
//!
//! Decoding is two-step on purpose. [`Message::decode`] reads only the envelope and keeps
//! `params` / `result` as unparsed [`RawValue`]s; the receiver then parses them once, straight
//! into the concrete type the `method` names. No trial parsing through untagged enums.

use std::fmt;

use serde::de::IgnoredAny;
use serde::ser::SerializeStruct;
use serde::{Deserialize, Serialize};
use serde_json::Value;
pub use serde_json::value::RawValue;

/// A JSON-RPC request id: a string or an integer, never `null` (MCP forbids it).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(untagged)]
pub enum RequestId {
    /// An integer id.
    Number(i64),
    /// A string id.
    String(String),
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestId::Number(n) => write!(f, "{n}"),
            RequestId::String(s) => write!(f, "{s:?}"),
        }
    }
}

impl From<i64> for RequestId {
    fn from(n: i64) -> Self {
        RequestId::Number(n)
    }
}

impl From<String> for RequestId {
    fn from(s: String) -> Self {
        RequestId::String(s)
    }
}

impl From<&str> for RequestId {
    fn from(s: &str) -> Self {
        RequestId::String(s.to_owned())
    }
}

/// A JSON-RPC error code. Open on purpose: a peer may send any integer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ErrorCode(pub i32);

impl ErrorCode {
    /// Invalid JSON was received.
    pub const PARSE_ERROR: ErrorCode = ErrorCode(-32700);
    /// The JSON sent is not a valid request object.
    pub const INVALID_REQUEST: ErrorCode = ErrorCode(-32600);
    /// The method does not exist or is not available.
    pub const METHOD_NOT_FOUND: ErrorCode = ErrorCode(-32601);
    /// Invalid method parameters. MCP also uses it for unknown tools, prompts and resources.
    pub const INVALID_PARAMS: ErrorCode = ErrorCode(-32602);
    /// Internal JSON-RPC error.
    pub const INTERNAL_ERROR: ErrorCode = ErrorCode(-32603);
    /// The connection closed before the answer came (SDK-side, as the Python SDK uses it).
    pub const CONNECTION_CLOSED: ErrorCode = ErrorCode(-32000);
    /// A request timed out on the client (SDK-side, as the Python SDK uses it).
    pub const REQUEST_TIMEOUT: ErrorCode = ErrorCode(-32001);
    /// Handshake-era "resource not found"; 2026-07-28 uses [`ErrorCode::INVALID_PARAMS`] instead.
    pub const RESOURCE_NOT_FOUND_LEGACY: ErrorCode = ErrorCode(-32002);
    /// An HTTP header disagrees with the body, or a required header is missing (2026-07-28).
    pub const HEADER_MISMATCH: ErrorCode = ErrorCode(-32020);
    /// The request needs a client capability the client did not declare (2026-07-28).
    pub const MISSING_REQUIRED_CLIENT_CAPABILITY: ErrorCode = ErrorCode(-32021);
    /// The requested protocol version is not supported (2026-07-28).
    pub const UNSUPPORTED_PROTOCOL_VERSION: ErrorCode = ErrorCode(-32022);
    /// 2025-11-25 only: the server needs a URL-mode elicitation first.
    pub const URL_ELICITATION_REQUIRED: ErrorCode = ErrorCode(-32042);
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// Invalid JSON was received (-32700).
pub const PARSE_ERROR: ErrorCode = ErrorCode::PARSE_ERROR;
/// The JSON sent is not a valid request object (-32600).
pub const INVALID_REQUEST: ErrorCode = ErrorCode::INVALID_REQUEST;
/// The method does not exist or is not available (-32601).
pub const METHOD_NOT_FOUND: ErrorCode = ErrorCode::METHOD_NOT_FOUND;
/// Invalid method parameters (-32602).
pub const INVALID_PARAMS: ErrorCode = ErrorCode::INVALID_PARAMS;
/// Internal error (-32603).
pub const INTERNAL_ERROR: ErrorCode = ErrorCode::INTERNAL_ERROR;
/// The connection closed before an answer came (-32000).
pub const CONNECTION_CLOSED: ErrorCode = ErrorCode::CONNECTION_CLOSED;
/// A request timed out (-32001).
pub const REQUEST_TIMEOUT: ErrorCode = ErrorCode::REQUEST_TIMEOUT;
/// A header disagrees with the body (-32020).
pub const HEADER_MISMATCH: ErrorCode = ErrorCode::HEADER_MISMATCH;
/// A required client capability is missing (-32021).
pub const MISSING_REQUIRED_CLIENT_CAPABILITY: ErrorCode =
    ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY;
/// The protocol version is not supported (-32022).
pub const UNSUPPORTED_PROTOCOL_VERSION: ErrorCode = ErrorCode::UNSUPPORTED_PROTOCOL_VERSION;
/// A URL elicitation is required first (-32042, 2025-11-25 only).
pub const URL_ELICITATION_REQUIRED: ErrorCode = ErrorCode::URL_ELICITATION_REQUIRED;

/// A JSON-RPC error object: what the peer's JSON-RPC layer sees when a request fails.
///
/// A tool may return one on purpose to fail the whole `tools/call` (the seed's `MCPError`):
/// `code`, `message` and `data` reach the client verbatim.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct McpError {
    /// The error code, e.g. [`INVALID_PARAMS`].
    pub code: ErrorCode,
    /// A short description, shown to the host.
    pub message: String,
    /// Anything else the receiver should know.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl McpError {
    /// An error with a code and a message.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> McpError {
        McpError { code, message: message.into(), data: None }
    }

    /// Attaches `data`.
    pub fn with_data(mut self, data: Value) -> McpError {
        self.data = Some(data);
        self
    }

    /// -32602 with a message.
    pub fn invalid_params(message: impl Into<String>) -> McpError {
        McpError::new(INVALID_PARAMS, message)
    }

    /// -32600 with a message.
    pub fn invalid_request(message: impl Into<String>) -> McpError {
        McpError::new(INVALID_REQUEST, message)
    }

    /// -32603 with a message.
    pub fn internal(message: impl Into<String>) -> McpError {
        McpError::new(INTERNAL_ERROR, message)
    }

    /// -32601 `Method not found`, naming the method in `data`.
    pub fn method_not_found(method: &str) -> McpError {
        McpError::new(METHOD_NOT_FOUND, "Method not found").with_data(Value::from(method))
    }

    /// -32700 `Parse error`.
    pub fn parse_error(detail: impl fmt::Display) -> McpError {
        McpError::new(PARSE_ERROR, format!("Parse error: {detail}"))
    }
}

impl fmt::Display for McpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for McpError {}

/// A request: it expects exactly one [`Response`] with the same id.
#[derive(Debug, Clone)]
pub struct Request {
    /// Unique among the sender's in-flight requests.
    pub id: RequestId,
    /// The method, e.g. `tools/call`.
    pub method: String,
    /// The parameters, unparsed until the method is known.
    pub params: Option<Box<RawValue>>,
}

/// A notification: no id, never answered.
#[derive(Debug, Clone)]
pub struct Notification {
    /// The method, e.g. `notifications/progress`.
    pub method: String,
    /// The parameters, unparsed until the method is known.
    pub params: Option<Box<RawValue>>,
}

/// The answer to a [`Request`]: a result or an error, never both.
#[derive(Debug, Clone)]
pub struct Response {
    /// The id of the request; `None` (the member is omitted) only when it could not be read.
    pub id: Option<RequestId>,
    /// The result, or the JSON-RPC error.
    pub result: Result<Box<RawValue>, McpError>,
}

/// Any JSON-RPC message. Batches are part of 2025-03-26 only (removed in 2025-06-18): a
/// received one decodes as [`DecodeError::Batch`], and the answer to one is
/// [`Message::BatchResponse`].
#[derive(Debug, Clone)]
pub enum Message {
    /// A request.
    Request(Request),
    /// A notification.
    Notification(Notification),
    /// A response.
    Response(Response),
    /// The responses to the requests of one batch, sent as one JSON array (the 2025-03-26
    /// schema's `JSONRPCBatchResponse`). Only ever sent: [`Message::decode`] never yields it.
    BatchResponse(Vec<Response>),
}

/// Why bytes did not decode into a [`Message`], and what to answer.
#[derive(Debug, Clone)]
pub enum DecodeError {
    /// Not JSON at all (-32700, answered without an id).
    Parse(String),
    /// JSON, but not a JSON-RPC message (-32600). The id, when it could be read, is echoed.
    Invalid {
        /// The request id, if the object had a valid one.
        id: Option<RequestId>,
        /// What is wrong.
        reason: String,
    },
    /// A JSON array: a JSON-RPC batch, with each element decoded on its own (an empty array
    /// has none). Only a 2025-03-26 connection takes batches; everywhere else this is refused
    /// as an invalid request, as [`DecodeError::to_response`] does.
    Batch(Vec<Result<Message, DecodeError>>),
}

impl DecodeError {
    /// The error response the receiver should send back.
    pub fn to_response(&self) -> Response {
        match self {
            DecodeError::Parse(detail) => {
                Response { id: None, result: Err(McpError::parse_error(detail)) }
            }
            DecodeError::Invalid { id, reason } => Response {
                id: id.clone(),
                result: Err(McpError::invalid_request(format!("Invalid request: {reason}"))),
            },
            DecodeError::Batch(_) => Response {
                id: None,
                result: Err(McpError::invalid_request(format!("Invalid request: {BATCH_REFUSED}"))),
            },
        }
    }
}

/// Messages have no equality of their own: batch elements compare by their encoding.
impl PartialEq for DecodeError {
    fn eq(&self, other: &DecodeError) -> bool {
        match (self, other) {
            (DecodeError::Parse(a), DecodeError::Parse(b)) => a == b,
            (
                DecodeError::Invalid { id, reason },
                DecodeError::Invalid { id: other_id, reason: other_reason },
            ) => id == other_id && reason == other_reason,
            (DecodeError::Batch(a), DecodeError::Batch(b)) => {
                let same =
                    |x: &Result<Message, DecodeError>, y: &Result<Message, DecodeError>| match (
                        x, y,
                    ) {
                        (Ok(x), Ok(y)) => x.encode() == y.encode(),
                        (Err(x), Err(y)) => x == y,
                        _ => false,
                    };
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same(x, y))
            }
            _ => false,
        }
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::Parse(detail) => write!(f, "parse error: {detail}"),
            DecodeError::Invalid { reason, .. } => write!(f, "invalid message: {reason}"),
            DecodeError::Batch(items) => write!(f, "a batch of {} messages", items.len()),
        }
    }
}

impl std::error::Error for DecodeError {}

/// The envelope as it arrives: every member optional and loosely typed, so a malformed
/// message still yields its id for the error answer.
#[derive(Deserialize)]
struct Envelope {
    jsonrpc: Option<IsVersion2>,
    #[serde(default, deserialize_with = "present")]
    id: Option<Value>,
    method: Option<Value>,
    params: Option<Box<RawValue>>,
    result: Option<Box<RawValue>>,
    error: Option<Value>,
}

/// Whether the `jsonrpc` member is the string `"2.0"`, read without building the value (a
/// `Value` would allocate its string on every message).
struct IsVersion2(bool);

impl<'de> Deserialize<'de> for IsVersion2 {
    fn deserialize<D: serde::Deserializer<'de>>(de: D) -> Result<IsVersion2, D::Error> {
        de.deserialize_any(IsVersion2Visitor)
    }
}

/// Accepts any JSON value, as a `Value` would; only a string can be the version.
struct IsVersion2Visitor;

impl<'de> serde::de::Visitor<'de> for IsVersion2Visitor {
    type Value = IsVersion2;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_str<E>(self, text: &str) -> Result<IsVersion2, E> {
        Ok(IsVersion2(text == "2.0"))
    }

    fn visit_bool<E>(self, _: bool) -> Result<IsVersion2, E> {
        Ok(IsVersion2(false))
    }

    fn visit_i64<E>(self, _: i64) -> Result<IsVersion2, E> {
        Ok(IsVersion2(false))
    }

    fn visit_u64<E>(self, _: u64) -> Result<IsVersion2, E> {
        Ok(IsVersion2(false))
    }

    fn visit_f64<E>(self, _: f64) -> Result<IsVersion2, E> {
        Ok(IsVersion2(false))
    }

    fn visit_unit<E>(self) -> Result<IsVersion2, E> {
        Ok(IsVersion2(false))
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<IsVersion2, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(IsVersion2(false))
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<IsVersion2, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(IsVersion2(false))
    }
}

/// Keeps `"id": null` apart from a missing id: a present `null` becomes `Some(Value::Null)`.
fn present<'de, D: serde::Deserializer<'de>>(de: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(de).map(Some)
}

/// Why a batch is refused where batches are not taken (any revision but 2025-03-26).
const BATCH_REFUSED: &str =
    "batches (JSON arrays) are not supported since 2025-06-18: send one message at a time";

/// Explains valid JSON that is not a message object, or decodes the elements of a batch.
fn shape_error(text: &str, err: &serde_json::Error, max_depth: usize) -> DecodeError {
    let reason = match text.bytes().find(|b| !b.is_ascii_whitespace()) {
        Some(b'[') => return decode_batch(text, max_depth),
        Some(b'{') => err.to_string(),
        _ => "a message must be a JSON object".into(),
    };
    DecodeError::Invalid { id: None, reason }
}

/// The elements of a JSON array, each decoded as one message (the text is known to be JSON).
fn decode_batch(text: &str, max_depth: usize) -> DecodeError {
    match serde_json::from_str::<Vec<&RawValue>>(text) {
        Ok(items) => DecodeError::Batch(
            items.iter().map(|item| Message::decode_text(item.get(), max_depth)).collect(),
        ),
        Err(err) => DecodeError::Parse(err.to_string()),
    }
}

fn request_id(value: &Value) -> Option<RequestId> {
    match value {
        Value::String(s) => Some(RequestId::String(s.clone())),
        Value::Number(n) => n.as_i64().map(RequestId::Number),
        _ => None,
    }
}

impl Message {
    /// Decodes one message from bytes (one stdio line, one HTTP body). A JSON array is
    /// [`DecodeError::Batch`], with its elements decoded (the array itself counts toward the
    /// depth limit).
    pub fn decode(bytes: &[u8]) -> Result<Message, DecodeError> {
        Message::decode_with_depth(bytes, MAX_JSON_DEPTH)
    }

    /// [`Message::decode`] with arrays and objects nested at most `max_depth` deep, the
    /// envelope included (a parse error beyond; `max_depth` is capped at [`MAX_JSON_DEPTH`]).
    /// Checked on the bytes first: serde_json skips `params` unparsed here, so its own
    /// recursion limit would only strike later, as the wrong error.
    pub fn decode_with_depth(bytes: &[u8], max_depth: usize) -> Result<Message, DecodeError> {
        // JSON text is UTF-8. Checked once, here: serde would check only the strings it
        // parses, not the members it skips, and parses the checked text without re-checking.
        match std::str::from_utf8(bytes) {
            Ok(text) => Message::decode_text(text, max_depth),
            Err(err) => Err(DecodeError::Parse(format!("invalid UTF-8: {err}"))),
        }
    }

    /// Decodes one message from a string.
    pub fn decode_str(text: &str) -> Result<Message, DecodeError> {
        Message::decode_text(text, MAX_JSON_DEPTH)
    }

    fn decode_text(text: &str, max_depth: usize) -> Result<Message, DecodeError> {
        let max_depth = max_depth.min(MAX_JSON_DEPTH);
        if nesting_exceeds(text.as_bytes(), max_depth) {
            let reason = format!("arrays and objects nested more than {max_depth} deep");
            return Err(DecodeError::Parse(reason));
        }
        match serde_json::from_str::<Envelope>(text) {
            Ok(envelope) => envelope.classify(),
            // Valid JSON of the wrong shape (an array, a number, a duplicate key) is an invalid
            // request, not a parse error; only re-check on this cold path.
            Err(err) if serde_json::from_str::<IgnoredAny>(text).is_ok() => {
                Err(shape_error(text, &err, max_depth))
            }
            Err(err) => Err(DecodeError::Parse(err.to_string())),
        }
    }

    /// Serializes the message as one line of JSON (no newline, none embedded).
    pub fn encode(&self) -> String {
        let mut buf = Vec::new();
        self.encode_into(&mut buf);
        // JSON from serde_json is UTF-8, and `one_line` only rewrites ASCII whitespace.
        String::from_utf8(buf).unwrap_or_default()
    }

    /// Appends the serialized message to `buf`, as one line.
    pub fn encode_into(&self, buf: &mut Vec<u8>) {
        encode_line(self, buf);
    }
}

impl Response {
    /// Serializes the response as one line of JSON, as [`Message::encode`] would serialize
    /// it inside a [`Message::Response`], without moving or copying it into one.
    pub fn encode(&self) -> String {
        // The result is copied in verbatim: sized for it and the envelope, the buffer is
        // allocated once instead of grown several times.
        let result = self.result.as_ref().map_or(0, |result| result.get().len());
        let mut buf = Vec::with_capacity(result + ENVELOPE_BYTES);
        encode_line(self, &mut buf);
        // JSON from serde_json is UTF-8, and `one_line` only rewrites ASCII whitespace.
        String::from_utf8(buf).unwrap_or_default()
    }
}

/// Room for a response's members around its result: `jsonrpc`, a long id, the keys.
const ENVELOPE_BYTES: usize = 96;

/// Appends `message` serialized to `buf`, as one line.
fn encode_line(message: &impl Serialize, buf: &mut Vec<u8>) {
    let start = buf.len();
    // Writing into a Vec cannot fail, and our types always serialize.
    let _ = serde_json::to_writer(&mut *buf, message);
    one_line(&mut buf[start..]);
}

/// The deepest nesting of arrays and objects a message may have, and the default limit:
/// serde_json's recursion limit, so every message that passes can also have its params parsed.
pub const MAX_JSON_DEPTH: usize = 128;

/// Whether arrays and objects in `bytes` nest deeper than `limit`, brackets inside strings
/// aside. One pass, no allocation; malformed JSON is left to the parser.
fn nesting_exceeds(bytes: &[u8], limit: usize) -> bool {
    // Nesting deeper than `limit` needs more than `limit` opening brackets: a SIMD search
    // that stops at the `limit + 1`-th settles almost every message without the stateful
    // scan below.
    if !crate::bytes::either_occurs_more_than(b'[', b'{', bytes, limit) {
        return false;
    }
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for &byte in bytes {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > limit {
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

/// Turns the line breaks of serialized JSON into spaces. `params` and `result` are raw JSON
/// kept as the peer wrote it, so they may hold pretty-printed whitespace; written verbatim,
/// a `\n` there would split the message on stdio (found by the `jsonrpc_decode` fuzz target).
/// Outside strings a raw `\n` or `\r` can only be whitespace, and inside strings JSON has them
/// escaped, so the rewrite never changes the value.
fn one_line(json: &mut [u8]) {
    // Almost every message has none: a SIMD search, not a byte loop.
    let mut from = 0;
    while let Some(at) = crate::bytes::find_either(b'\n', b'\r', &json[from..]) {
        json[from + at] = b' ';
        from += at + 1;
    }
}

impl Envelope {
    fn classify(self) -> Result<Message, DecodeError> {
        let id = match &self.id {
            Some(value) => request_id(value),
            None => None,
        };
        let invalid = |reason: &str| DecodeError::Invalid { id: id.clone(), reason: reason.into() };
        if !self.jsonrpc.is_some_and(|version| version.0) {
            return Err(invalid("\"jsonrpc\" must be \"2.0\""));
        }
        if let Some(method) = self.method {
            let Value::String(method) = method else {
                return Err(invalid("\"method\" must be a string"));
            };
            if self.result.is_some() || self.error.is_some() {
                return Err(invalid("a request cannot carry \"result\" or \"error\""));
            }
            return match self.id {
                None => Ok(Message::Notification(Notification { method, params: self.params })),
                Some(_) => match id {
                    Some(id) => Ok(Message::Request(Request { id, method, params: self.params })),
                    None => Err(invalid("\"id\" must be a string or an integer")),
                },
            };
        }
        if self.params.is_some() {
            return Err(invalid("\"params\" without \"method\""));
        }
        let result = match (self.result, self.error) {
            (Some(result), None) => Ok(result),
            (None, Some(error)) => {
                Err(serde_json::from_value::<McpError>(error).map_err(|_| {
                    invalid("\"error\" must be an object with \"code\" and \"message\"")
                })?)
            }
            (Some(_), Some(_)) => {
                return Err(invalid("a response has \"result\" or \"error\", not both"));
            }
            (None, None) => return Err(invalid("missing \"method\", \"result\" or \"error\"")),
        };
        match (&self.id, id.clone()) {
            (Some(_), Some(id)) => Ok(Message::Response(Response { id: Some(id), result })),
            (None | Some(Value::Null), None) if result.is_err() => {
                Ok(Message::Response(Response { id: None, result }))
            }
            _ => Err(invalid("a response needs the request's \"id\"")),
        }
    }
}

impl Serialize for Message {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Message::Request(r) => r.serialize(serializer),
            Message::Notification(n) => n.serialize(serializer),
            Message::Response(r) => r.serialize(serializer),
            Message::BatchResponse(responses) => responses.serialize(serializer),
        }
    }
}

impl Serialize for Request {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("Request", 4)?;
        s.serialize_field("jsonrpc", "2.0")?;
        s.serialize_field("id", &self.id)?;
        s.serialize_field("method", &self.method)?;
        if let Some(params) = &self.params {
            s.serialize_field("params", params)?;
        }
        s.end()
    }
}

impl Serialize for Notification {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("Notification", 3)?;
        s.serialize_field("jsonrpc", "2.0")?;
        s.serialize_field("method", &self.method)?;
        if let Some(params) = &self.params {
            s.serialize_field("params", params)?;
        }
        s.end()
    }
}

impl Serialize for Response {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("Response", 3)?;
        s.serialize_field("jsonrpc", "2.0")?;
        // An unreadable id is omitted: the MCP schema (2025-11-25 on) types `id` as string or
        // integer, so JSON-RPC's `"id": null` would not validate.
        if let Some(id) = &self.id {
            s.serialize_field("id", id)?;
        }
        match &self.result {
            Ok(result) => s.serialize_field("result", result)?,
            Err(error) => s.serialize_field("error", error)?,
        }
        s.end()
    }
}

/// Serializes `value` into a [`RawValue`], ready to embed as `params` or `result`.
pub fn to_raw(value: &impl Serialize) -> Result<Box<RawValue>, serde_json::Error> {
    serde_json::value::to_raw_value(value)
}

impl Request {
    /// A request whose params are serialized from `params`.
    pub fn new(
        id: impl Into<RequestId>,
        method: impl Into<String>,
        params: &impl Serialize,
    ) -> Result<Request, serde_json::Error> {
        Ok(Request { id: id.into(), method: method.into(), params: Some(to_raw(params)?) })
    }
}

impl Notification {
    /// A notification whose params are serialized from `params`.
    pub fn new(
        method: impl Into<String>,
        params: &impl Serialize,
    ) -> Result<Notification, serde_json::Error> {
        Ok(Notification { method: method.into(), params: Some(to_raw(params)?) })
    }
}

impl Response {
    /// A successful response.
    pub fn ok(id: RequestId, result: Box<RawValue>) -> Response {
        Response { id: Some(id), result: Ok(result) }
    }

    /// An error response.
    pub fn error(id: Option<RequestId>, error: McpError) -> Response {
        Response { id, result: Err(error) }
    }
}

impl From<Request> for Message {
    fn from(r: Request) -> Message {
        Message::Request(r)
    }
}

impl From<Notification> for Message {
    fn from(n: Notification) -> Message {
        Message::Notification(n)
    }
}

impl From<Response> for Message {
    fn from(r: Response) -> Message {
        Message::Response(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A request whose params nest arrays so that the whole message is `depth` deep.
    fn nested(depth: usize) -> String {
        let inner = depth - 1;
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{}"\"[{{"{}}}"#,
            "[".repeat(inner),
            "]".repeat(inner)
        )
    }

    #[test]
    fn depth_limit_counts_every_array_and_object_and_ignores_brackets_in_strings() {
        for limit in [1, 2, 10, 64] {
            assert!(Message::decode_with_depth(nested(limit).as_bytes(), limit).is_ok());
            let too_deep = Message::decode_with_depth(nested(limit + 1).as_bytes(), limit);
            let expected = format!("arrays and objects nested more than {limit} deep");
            assert!(matches!(too_deep, Err(DecodeError::Parse(r)) if r == expected));
        }
    }

    #[test]
    fn the_default_depth_is_serde_jsons_own_limit() {
        let at = Message::decode_with_depth(nested(MAX_JSON_DEPTH).as_bytes(), MAX_JSON_DEPTH);
        assert!(at.is_ok(), "{at:?}");
        let over =
            Message::decode_with_depth(nested(MAX_JSON_DEPTH + 1).as_bytes(), MAX_JSON_DEPTH);
        assert!(matches!(over, Err(DecodeError::Parse(_))), "{over:?}");
    }

    #[test]
    fn invalid_utf8_inside_a_string_is_a_parse_error() {
        let bytes = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"x\":[\"\xc3\x28\"]}";
        assert!(matches!(Message::decode(bytes), Err(DecodeError::Parse(_))));
    }

    #[track_caller]
    fn check_roundtrip(line: &str) {
        let message = Message::decode_str(line).expect("decodes");
        assert_eq!(message.encode(), line);
    }

    #[test]
    fn envelopes_roundtrip_byte_for_byte() {
        check_roundtrip(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
        check_roundtrip(
            r#"{"jsonrpc":"2.0","id":"a","method":"tools/list","params":{"cursor":"x"}}"#,
        );
        check_roundtrip(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        check_roundtrip(r#"{"jsonrpc":"2.0","id":7,"result":{}}"#);
        check_roundtrip(r#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"}}"#);
        // A JSON-RPC `null` id is read, and written back the MCP way: omitted.
        let null_id =
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#;
        let decoded = Message::decode_str(null_id).expect("decodes");
        assert_eq!(
            decoded.encode(),
            r#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"}}"#
        );
    }

    #[test]
    fn raw_params_with_line_breaks_encode_on_one_line() {
        // Found by the `jsonrpc_decode` fuzz target: raw params kept as the peer wrote them.
        let pretty =
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":{\r\n\t\"a\":\"x\\ny\"}}";
        let encoded = Message::decode_str(pretty).expect("decodes").encode();
        let expected =
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":{  \t\"a\":\"x\\ny\"}}";
        assert_eq!(encoded, expected);
    }

    #[track_caller]
    fn check_invalid(line: &str, id: Option<RequestId>) {
        match Message::decode_str(line) {
            Err(DecodeError::Invalid { id: got, .. }) => assert_eq!(got, id, "{line}"),
            other => panic!("{line}: expected invalid, got {other:?}"),
        }
    }

    #[test]
    fn invalid_envelopes_keep_their_id() {
        check_invalid(r#"{"jsonrpc":"1.0","id":3,"method":"ping"}"#, Some(RequestId::Number(3)));
        check_invalid(r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#, None);
        check_invalid(r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#, None);
        check_invalid(r#"{"jsonrpc":"2.0","id":"x","method":5}"#, Some("x".into()));
        check_invalid(r#"{"jsonrpc":"2.0","id":2}"#, Some(RequestId::Number(2)));
        check_invalid(r#"42"#, None);
    }

    #[test]
    fn only_the_string_2_0_is_the_version() {
        for version in ["2", "2.0", "null", "true", r#"{"v":"2.0"}"#, r#"["2.0"]"#, r#""2.00""#] {
            let line = format!(r#"{{"jsonrpc":{version},"id":4,"method":"ping"}}"#);
            check_invalid(&line, Some(RequestId::Number(4)));
        }
        check_invalid(r#"{"id":4,"method":"ping"}"#, Some(RequestId::Number(4)));
        // An escaped string is the same string.
        let escaped = r#"{"jsonrpc":"2\u002e0","id":4,"method":"ping"}"#;
        assert!(matches!(Message::decode_str(escaped), Ok(Message::Request(_))));
    }

    #[test]
    fn an_array_is_a_batch_of_separately_decoded_elements_refused_by_default() {
        let line = r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}, 7, []]"#;
        let Err(batch @ DecodeError::Batch(_)) = Message::decode_str(line) else {
            panic!("expected a batch");
        };
        let DecodeError::Batch(items) = &batch else { unreachable!() };
        assert!(matches!(items[0], Ok(Message::Request(_))));
        assert!(matches!(items[1], Err(DecodeError::Invalid { id: None, .. })));
        assert!(matches!(items[2], Err(DecodeError::Batch(ref inner)) if inner.is_empty()));
        let refusal = batch.to_response().result.expect_err("refused");
        assert_eq!(refusal.code, super::INVALID_REQUEST);
        assert!(matches!(Message::decode_str(" [ ] "), Err(DecodeError::Batch(v)) if v.is_empty()));
    }

    #[test]
    fn a_batch_response_encodes_as_one_array_line() {
        let ok = Response::ok(RequestId::Number(1), to_raw(&"a").expect("raw"));
        let err = Response::error(Some("b".into()), McpError::invalid_request("no"));
        assert_eq!(
            Message::BatchResponse(vec![ok, err]).encode(),
            r#"[{"jsonrpc":"2.0","id":1,"result":"a"},{"jsonrpc":"2.0","id":"b","error":{"code":-32600,"message":"no"}}]"#
        );
    }

    #[test]
    fn garbage_is_a_parse_error() {
        assert!(matches!(
            Message::decode_str(r#"{"jsonrpc":"2.0","id":1,"method":"#),
            Err(DecodeError::Parse(_))
        ));
        assert!(matches!(Message::decode(b"\xff\xfe"), Err(DecodeError::Parse(_))));
    }
}
