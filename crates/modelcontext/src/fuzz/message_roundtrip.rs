//! `message_roundtrip`: typed MCP messages of both eras, built from fuzz bytes with
//! `Unstructured`. The generator walks the official schema (`testdata/spec/<revision>/`), so
//! every optional member, content block and capability of a definition can appear; the typed
//! value is what our types parse out of it. Without the schemas, params are free-form JSON and
//! only the round trip is checked.

use std::collections::HashMap;
use std::fmt::Debug;
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};

use arbitrary::{Result, Unstructured};
use modelcontext_types::{
    ClientNotification, ClientRequest, Message, RawValue, Request, RequestId, ServerNotification,
    ServerRequest, method, to_raw,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

const REVISIONS: [&str; 2] = ["2025-11-25", "2026-07-28"];

/// Where the schemas are: `$MCP_SPEC_DIR`, else the repository's vendored `testdata/spec`.
fn spec_dir() -> PathBuf {
    match std::env::var_os("MCP_SPEC_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/spec")),
    }
}

/// One revision's schema: its definitions, and validators compiled on first use.
struct Schema {
    revision: &'static str,
    root: Value,
    validators: Mutex<HashMap<String, &'static jsonschema::Validator>>,
}

impl Schema {
    fn defs(&self) -> &Map<String, Value> {
        let defs = self.root.get("$defs").or_else(|| self.root.get("definitions"));
        defs.and_then(Value::as_object).expect("a schema has definitions")
    }

    fn validate(&self, definition: &str, value: &Value) {
        let validator = {
            let mut cache = self.validators.lock().unwrap_or_else(|e| e.into_inner());
            *cache.entry(definition.to_owned()).or_insert_with(|| {
                let mut schema = self.root.clone();
                schema["$ref"] = Value::from(format!("#/$defs/{definition}"));
                let compiled = jsonschema::validator_for(&schema).expect("the schema compiles");
                // Compiled once per definition for the life of the process.
                Box::leak(Box::new(compiled))
            })
        };
        let problems: Vec<String> =
            validator.iter_errors(value).map(|e| format!("{e} at {}", e.instance_path())).collect();
        assert!(
            problems.is_empty(),
            "{} {definition} rejects what we serialized: {value}\n{}",
            self.revision,
            problems.join("\n")
        );
    }
}

/// Both revisions' schemas, loaded once; `None` (said once on stderr) when absent.
fn schemas() -> Option<&'static [Schema; 2]> {
    static SCHEMAS: OnceLock<Option<[Schema; 2]>> = OnceLock::new();
    let load = |revision: &'static str| {
        let path = spec_dir().join(revision).join("schema.json");
        let text = std::fs::read_to_string(&path).ok()?;
        let root = serde_json::from_str(&text).expect("the schema is JSON");
        Some(Schema { revision, root, validators: Mutex::default() })
    };
    SCHEMAS
        .get_or_init(|| {
            let loaded = load(REVISIONS[0]).zip(load(REVISIONS[1])).map(|(a, b)| [a, b]);
            if loaded.is_none() {
                eprintln!(
                    "message_roundtrip: no schemas under {} (set MCP_SPEC_DIR): params are \
                     free-form JSON and nothing is validated against the spec",
                    spec_dir().display()
                );
            }
            loaded
        })
        .as_ref()
}

// ---------------------------------------------------------------------------------------------
// The generator: a JSON instance of a schema definition, driven by the fuzz bytes.
// ---------------------------------------------------------------------------------------------

const MAX_DEPTH: u32 = 6;

struct Gen<'s, 'u, 'd> {
    defs: &'s Map<String, Value>,
    u: &'u mut Unstructured<'d>,
}

impl Gen<'_, '_, '_> {
    fn resolve<'a>(&'a self, schema: &'a Value) -> &'a Value {
        match schema.get("$ref").and_then(Value::as_str) {
            Some(r) => r.rsplit('/').next().and_then(|name| self.defs.get(name)).unwrap_or(schema),
            None => schema,
        }
    }

    fn instance(&mut self, schema: &Value, depth: u32) -> Result<Value> {
        let schema = self.resolve(schema).clone();
        let Some(s) = schema.as_object() else { return any(self.u, depth) };
        if let Some(c) = s.get("const") {
            return Ok(c.clone());
        }
        if let Some(Value::Array(values)) = s.get("enum") {
            return Ok(self.u.choose(values)?.clone());
        }
        if let Some(Value::Array(alternatives)) = s.get("anyOf").or_else(|| s.get("oneOf")) {
            let alternative = self.u.choose(alternatives)?;
            return self.instance(alternative, depth + 1);
        }
        if let Some(Value::Array(parts)) = s.get("allOf") {
            let merged = self.merge(parts);
            return self.instance(&merged, depth);
        }
        let ty = match s.get("type") {
            Some(Value::String(t)) => t.clone(),
            Some(Value::Array(types)) => {
                self.u.choose(types)?.as_str().unwrap_or("null").to_owned()
            }
            None if s.contains_key("properties") => "object".to_owned(),
            _ => return any(self.u, depth),
        };
        let bound = |key: &str| s.get(key).and_then(Value::as_f64);
        Ok(match ty.as_str() {
            "object" => self.object(s, depth)?,
            "array" => {
                let items = s.get("items").cloned().unwrap_or(Value::Bool(true));
                let max = bound("maxItems").map_or(3, |m| m as usize).min(3);
                let len = if depth < MAX_DEPTH { self.u.int_in_range(0..=max)? } else { 0 };
                let items: Result<Vec<Value>> =
                    (0..len).map(|_| self.instance(&items, depth + 1)).collect();
                Value::Array(items?)
            }
            "string" => Value::String(self.u.arbitrary::<&str>()?.chars().take(24).collect()),
            "integer" => {
                let (lo, hi) = (bound("minimum").map_or(i64::MIN, |m| m as i64), bound("maximum"));
                let hi = hi.map_or(i64::MAX, |m| m as i64);
                Value::from(self.u.int_in_range(lo..=hi.max(lo))?)
            }
            "number" => number(self.u, bound("minimum"), bound("maximum"))?,
            "boolean" => Value::Bool(self.u.arbitrary()?),
            "null" => Value::Null,
            _ => any(self.u, depth)?,
        })
    }

    /// Required members always, optional ones as the input says (fewer when deep), and a few
    /// extra members where `additionalProperties` allows them.
    fn object(&mut self, s: &Map<String, Value>, depth: u32) -> Result<Value> {
        let required: Vec<&str> = match s.get("required") {
            Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        let mut out = Map::new();
        if let Some(Value::Object(properties)) = s.get("properties") {
            for (name, schema) in properties {
                let wanted = required.contains(&name.as_str())
                    || (depth < MAX_DEPTH && self.u.ratio(1, 2)?);
                if wanted {
                    out.insert(name.clone(), self.instance(schema, depth + 1)?);
                }
            }
        }
        let extra = match s.get("additionalProperties") {
            Some(Value::Bool(false)) => None,
            Some(schema @ Value::Object(_)) => Some(schema.clone()),
            _ if s.contains_key("properties") => None,
            _ => Some(Value::Bool(true)),
        };
        let known = |name: &str| s.get("properties").is_some_and(|p| p.get(name).is_some());
        if let Some(schema) = extra.filter(|_| depth < MAX_DEPTH) {
            for _ in 0..self.u.int_in_range(0..=2)? {
                let name: String = self.u.arbitrary::<&str>()?.chars().take(12).collect();
                // A known member's name would bring its own schema.
                if !known(&name) && !out.contains_key(&name) {
                    let value = self.instance(&schema, depth + 1)?;
                    out.insert(name, value);
                }
            }
        }
        Ok(Value::Object(out))
    }

    /// `allOf` of object schemas as one object schema.
    fn merge(&self, parts: &[Value]) -> Value {
        let (mut properties, mut required) = (Map::new(), Vec::new());
        for part in parts {
            let part = self.resolve(part);
            if let Some(Value::Object(p)) = part.get("properties") {
                properties.extend(p.clone());
            }
            if let Some(Value::Array(r)) = part.get("required") {
                required.extend(r.iter().cloned());
            }
        }
        serde_json::json!({"type": "object", "properties": properties, "required": required})
    }
}

fn number(u: &mut Unstructured<'_>, min: Option<f64>, max: Option<f64>) -> Result<Value> {
    let n = match u.int_in_range(0..=2)? {
        0 => f64::from(u.arbitrary::<i32>()?),
        1 => f64::from(u.arbitrary::<u16>()?) / 64.0,
        _ => u.arbitrary::<f64>()?,
    };
    let n = if n.is_finite() { n } else { 0.0 };
    let n = match (min, max) {
        (Some(lo), Some(hi)) if lo <= hi => lo + (n.abs() % 1.0) * (hi - lo),
        (Some(lo), _) => lo + n.abs(),
        (_, Some(hi)) => hi - n.abs(),
        _ => n,
    };
    Ok(serde_json::Number::from_f64(n).map_or(Value::Null, Value::Number))
}

/// Any small JSON value.
fn any(u: &mut Unstructured<'_>, depth: u32) -> Result<Value> {
    let kinds = if depth < MAX_DEPTH { 7 } else { 5 };
    Ok(match u.int_in_range(0..=kinds - 1)? {
        0 => Value::Null,
        1 => Value::Bool(u.arbitrary()?),
        2 => Value::from(u.arbitrary::<i64>()?),
        3 => number(u, None, None)?,
        4 => Value::String(u.arbitrary::<&str>()?.chars().take(24).collect()),
        5 => Value::Array(
            (0..u.int_in_range(0..=3)?).map(|_| any(u, depth + 1)).collect::<Result<_>>()?,
        ),
        _ => {
            let mut map = Map::new();
            for _ in 0..u.int_in_range(0..=3)? {
                let key = u.choose(&KEYS)?.to_string();
                map.insert(key, any(u, depth + 1)?);
            }
            Value::Object(map)
        }
    })
}

/// Member names of MCP params, for free-form params.
const KEYS: [&str; 16] = [
    "_meta",
    "name",
    "uri",
    "arguments",
    "cursor",
    "level",
    "progressToken",
    "progress",
    "requestId",
    "reason",
    "protocolVersion",
    "capabilities",
    "clientInfo",
    "ref",
    "argument",
    "io.modelcontextprotocol/protocolVersion",
];

// ---------------------------------------------------------------------------------------------
// The round trips.
// ---------------------------------------------------------------------------------------------

/// Which typed enum, or which result type, a definition parses into.
#[derive(Clone, Copy)]
enum Kind {
    ClientRequest,
    ServerRequest,
    ClientNotification,
    ServerNotification,
    Result(fn(&Value) -> Option<Value>),
}

const fn result<T: Serialize + DeserializeOwned + PartialEq + Debug>() -> Kind {
    Kind::Result(result_roundtrip::<T>)
}

/// The definitions generated, per revision (those a revision lacks are skipped).
fn table() -> Vec<(&'static str, Kind)> {
    use Kind::*;
    use modelcontext_types as t;
    vec![
        ("InitializeRequest", ClientRequest),
        ("PingRequest", ClientRequest),
        ("DiscoverRequest", ClientRequest),
        ("ListToolsRequest", ClientRequest),
        ("CallToolRequest", ClientRequest),
        ("ListResourcesRequest", ClientRequest),
        ("ListResourceTemplatesRequest", ClientRequest),
        ("ReadResourceRequest", ClientRequest),
        ("SubscribeRequest", ClientRequest),
        ("UnsubscribeRequest", ClientRequest),
        ("ListPromptsRequest", ClientRequest),
        ("GetPromptRequest", ClientRequest),
        ("CompleteRequest", ClientRequest),
        ("SetLevelRequest", ClientRequest),
        ("SubscriptionsListenRequest", ClientRequest),
        ("CreateMessageRequest", ServerRequest),
        ("ElicitRequest", ServerRequest),
        ("ListRootsRequest", ServerRequest),
        ("InitializedNotification", ClientNotification),
        ("RootsListChangedNotification", ClientNotification),
        ("CancelledNotification", ClientNotification),
        ("ProgressNotification", ServerNotification),
        ("LoggingMessageNotification", ServerNotification),
        ("ToolListChangedNotification", ServerNotification),
        ("PromptListChangedNotification", ServerNotification),
        ("ResourceListChangedNotification", ServerNotification),
        ("ResourceUpdatedNotification", ServerNotification),
        ("SubscriptionsAcknowledgedNotification", ServerNotification),
        ("ElicitationCompleteNotification", ServerNotification),
        ("InitializeResult", result::<t::InitializeResult>()),
        ("DiscoverResult", result::<t::DiscoverResult>()),
        ("EmptyResult", result::<t::EmptyResult>()),
        ("ListToolsResult", result::<t::ListToolsResult>()),
        ("CallToolResult", result::<t::CallToolResult>()),
        ("ListResourcesResult", result::<t::ListResourcesResult>()),
        ("ListResourceTemplatesResult", result::<t::ListResourceTemplatesResult>()),
        ("ReadResourceResult", result::<t::ReadResourceResult>()),
        ("ListPromptsResult", result::<t::ListPromptsResult>()),
        ("GetPromptResult", result::<t::GetPromptResult>()),
        ("CompleteResult", result::<t::CompleteResult>()),
        ("CreateMessageResult", result::<t::CreateMessageResult>()),
        ("ElicitResult", result::<t::ElicitResult>()),
        ("ListRootsResult", result::<t::ListRootsResult>()),
        ("SubscriptionsListenResult", result::<t::SubscriptionsListenResult>()),
        ("InputRequiredResult", result::<t::InputRequiredResult>()),
    ]
}

/// Parses a result, serializes it, parses that: the same value; also through a JSON-RPC
/// response on the wire. Returns what was serialized (`None` if our type refuses the input).
fn result_roundtrip<T: Serialize + DeserializeOwned + PartialEq + Debug>(
    value: &Value,
) -> Option<Value> {
    let typed: T = serde_json::from_value(value.clone()).ok()?;
    let raw = to_raw(&typed).expect("a typed result serializes");
    let again: T = serde_json::from_str(raw.get()).expect("a serialized result parses");
    assert_eq!(again, typed, "result changed: {}", raw.get());
    let wire = Message::Response(modelcontext_types::Response::ok(RequestId::from(7), raw));
    let Ok(Message::Response(response)) = Message::decode(wire.encode().as_bytes()) else {
        panic!("a result response does not decode: {}", wire.encode());
    };
    let raw = response.result.expect("still a result");
    let from_wire: T = serde_json::from_str(raw.get()).expect("the result parses off the wire");
    assert_eq!(from_wire, typed, "result changed on the wire: {}", raw.get());
    Some(serde_json::from_str(raw.get()).expect("JSON"))
}

/// A request or notification: method and params parsed into the typed enum, turned back into
/// a message, encoded, decoded and parsed again: the same typed value and the same bytes.
/// Returns the encoded message (`None` if our types refuse the input).
fn message_roundtrip(kind: Kind, value: &Value) -> Option<Value> {
    let method = value.get("method")?.as_str()?;
    let params = match value.get("params") {
        Some(p) => Some(to_raw(p).ok()?),
        None => None,
    };
    let id: Option<RequestId> = match value.get("id") {
        Some(id) => Some(serde_json::from_value(id.clone()).ok()?),
        None => None,
    };
    let params = params.as_deref();
    let encoded = match kind {
        Kind::ClientRequest => {
            typed_request(method, params, id, ClientRequest::parse, |t, id| t.to_request(id))?
        }
        Kind::ServerRequest => {
            typed_request(method, params, id, ServerRequest::parse, |t, id| t.to_request(id))?
        }
        Kind::ClientNotification => {
            typed_notification(method, params, ClientNotification::parse, |t| {
                t.to_notification().into()
            })?
        }
        Kind::ServerNotification => {
            typed_notification(method, params, ServerNotification::parse, |t| {
                t.to_notification().into()
            })?
        }
        Kind::Result(_) => unreachable!("results go through result_roundtrip"),
    };
    Some(encoded)
}

type Parse<T> =
    fn(&str, Option<&RawValue>) -> std::result::Result<T, modelcontext_types::ParamsError>;

fn typed_request<T: PartialEq + Debug>(
    method: &str,
    params: Option<&RawValue>,
    id: Option<RequestId>,
    parse: Parse<T>,
    to_request: fn(&T, RequestId) -> Request,
) -> Option<Value> {
    let typed = parse(method, params).ok()?;
    let Some(id) = id else {
        // 2026-07-28 sends server requests inside an `InputRequiredResult`: no id, no
        // `jsonrpc`, only method and params.
        let request = to_request(&typed, RequestId::from(0));
        let again = parse(&request.method, request.params.as_deref()).expect("parses again");
        assert_eq!(again, typed, "input request changed");
        let mut out = serde_json::json!({"method": request.method});
        if let Some(p) = request.params {
            out["params"] = serde_json::from_str(p.get()).expect("JSON");
        }
        return Some(out);
    };
    let message = Message::Request(to_request(&typed, id.clone()));
    let encoded = message.encode();
    let Ok(Message::Request(request)) = Message::decode(encoded.as_bytes()) else {
        panic!("an encoded request does not decode as one: {encoded}");
    };
    assert_eq!(request.id, id, "{encoded}");
    let again = parse(&request.method, request.params.as_deref()).expect("parses again");
    assert_eq!(again, typed, "request changed: {encoded}");
    assert_eq!(Message::Request(to_request(&again, id)).encode(), encoded, "bytes changed");
    Some(serde_json::from_str(&encoded).expect("JSON"))
}

fn typed_notification<T: PartialEq + Debug>(
    method: &str,
    params: Option<&RawValue>,
    parse: Parse<T>,
    to_message: fn(&T) -> Message,
) -> Option<Value> {
    let typed = parse(method, params).ok()?;
    let encoded = to_message(&typed).encode();
    let Ok(Message::Notification(n)) = Message::decode(encoded.as_bytes()) else {
        panic!("an encoded notification does not decode as one: {encoded}");
    };
    let again = parse(&n.method, n.params.as_deref()).expect("parses again");
    assert_eq!(again, typed, "notification changed: {encoded}");
    assert_eq!(to_message(&again).encode(), encoded, "bytes changed");
    Some(serde_json::from_str(&encoded).expect("JSON"))
}

/// Input: `[revision, definition]`, then the bytes `Unstructured` builds the instance from.
/// A spec-valid message or result that our types parse serializes back to something that
/// parses to the same typed value, and that the revision's schema accepts. Without the
/// schemas: free-form params of a fuzz-chosen method, round trip only.
pub fn check_message_roundtrip(data: &[u8]) {
    let [revision, definition, rest @ ..] = data else { return };
    let mut u = Unstructured::new(rest);
    let table = table();
    let (name, kind) = table[usize::from(*definition) % table.len()];
    let Some(schemas) = schemas() else {
        free_form(kind, &mut u);
        return;
    };
    let schema = &schemas[usize::from(*revision) % 2];
    let Some(definition) = schema.defs().get(name) else { return };
    let mut generator = Gen { defs: schema.defs(), u: &mut u };
    let Ok(value) = generator.instance(definition, 0) else { return };
    let serialized = match kind {
        Kind::Result(roundtrip) => roundtrip(&value),
        kind => message_roundtrip(kind, &value),
    };
    if let Some(serialized) = serialized {
        schema.validate(name, &serialized);
    }
}

fn free_form(kind: Kind, u: &mut Unstructured<'_>) {
    let Ok(params) = any(u, 1) else { return };
    let methods =
        [method::INITIALIZE, method::TOOLS_CALL, method::RESOURCES_READ, method::PROGRESS];
    let Ok(method) = u.choose(&methods) else { return };
    let value = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    match kind {
        Kind::Result(roundtrip) => drop(roundtrip(&params)),
        kind => drop(message_roundtrip(kind, &value)),
    }
}
