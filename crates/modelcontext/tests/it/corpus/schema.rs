//! Group 7, JSON Schema: tool schemas registered on a serving server and arguments checked
//! against them. Nothing is ever fetched (remote `$ref`, `$id` bases, `$schema`: a listener on
//! 127.0.0.1 proves no connection was attempted); `pattern` runs on the linear-time engine
//! (backtracking-only syntax is refused, classic catastrophic patterns answer at once); huge
//! `enum`s and deep nesting are bounded by `max_schema_depth` / `max_schema_bytes`, tested at
//! limit-1, limit and limit+1; deeply nested arguments stop at the decoder's depth.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::mpsc;
use std::time::Duration;

use expect_test::expect;
use modelcontext::server::{DEFAULT_MAX_SCHEMA_BYTES, DEFAULT_MAX_SCHEMA_DEPTH};
use modelcontext::{McpServer, ToolDef};
use serde_json::{Map, Value, json};

use super::{Case, answer_to, block_on, case, run_group};
use crate::support::Wire;

/// Stands for the address of the listener that catches any fetch.
const TRIPWIRE: &str = "{tripwire}";

/// A schema, as JSON text or built (deep schemas cannot go through the text parser).
pub(crate) enum Schema {
    Text(String),
    /// `{"type":"object","not":{"not":..}}`: objects nested exactly this deep.
    Depth(usize),
    /// `{"type":"object","description":"xx.."}` of exactly this many bytes.
    Bytes(usize),
}

pub(crate) enum Step {
    /// Register tool `t` with this input schema.
    Register { input: Schema },
    /// Register tool `t` with the schema, then call it with these arguments (JSON text).
    Call { input: Schema, arguments: String },
}

/// The server's limits for one case: `(max_schema_depth, max_schema_bytes)`, or the defaults.
pub(crate) struct SchemaCase {
    limits: Option<(usize, usize)>,
    step: Step,
}

fn register(schema: &str) -> SchemaCase {
    SchemaCase { limits: None, step: Step::Register { input: Schema::Text(schema.to_owned()) } }
}

fn register_with(limits: (usize, usize), input: Schema) -> SchemaCase {
    SchemaCase { limits: Some(limits), step: Step::Register { input } }
}

fn call(schema: &str, arguments: impl Into<String>) -> SchemaCase {
    let step = Step::Call { input: Schema::Text(schema.to_owned()), arguments: arguments.into() };
    SchemaCase { limits: None, step }
}

/// Arguments `{"n":{"n":..{}..}}` nested `depth` objects below the arguments object.
fn nested_arguments(depth: usize) -> String {
    format!("{}{{}}{}", r#"{"n":"#.repeat(depth), "}".repeat(depth))
}

const RECURSIVE: &str = r##"{"type":"object","$ref":"#/$defs/node","$defs":{"node":{"type":"object","properties":{"n":{"$ref":"#/$defs/node"}}}}}"##;

pub(crate) fn cases() -> Vec<Case<SchemaCase>> {
    let big_enum: Vec<usize> = (0..50_000).collect();
    let big_enum = json!({"type": "object", "properties": {"v": {"enum": big_enum}}}).to_string();
    let huge_enum: Vec<usize> = (0..200_000).collect();
    let huge_enum = json!({"type": "object", "properties": {"v": {"enum": huge_enum}}}).to_string();
    let huge_pattern = json!({"type": "object", "properties": {"v": {"type": "string",
        "pattern": "a".repeat(DEFAULT_MAX_SCHEMA_BYTES)}}})
    .to_string();
    let wrong_items: Vec<&str> = vec!["x"; 100];
    let (d, b) = (DEFAULT_MAX_SCHEMA_DEPTH, DEFAULT_MAX_SCHEMA_BYTES);
    let depth = |n| register_with((10, b), Schema::Depth(n));
    let bytes = |n| register_with((d, 1000), Schema::Bytes(n));
    vec![
        // Nothing is fetched.
        case(
            "remote $ref over http",
            register(r#"{"type":"object","properties":{"a":{"$ref":"http://{tripwire}/a.json"}}}"#),
            expect![[
                r#"not registered: registration failed: tool 't' has an invalid input schema: "$ref" at #/properties/a refers to "http://{tripwire}/a.json", another document (external documents are never fetched: put every definition the schema refers to under its own "$defs")"#
            ]],
        ),
        case(
            "remote $ref over https",
            register(
                r#"{"type":"object","properties":{"a":{"$ref":"https://{tripwire}/a.json"}}}"#,
            ),
            expect![[
                r#"not registered: registration failed: tool 't' has an invalid input schema: "$ref" at #/properties/a refers to "https://{tripwire}/a.json", another document (external documents are never fetched: put every definition the schema refers to under its own "$defs")"#
            ]],
        ),
        case(
            "$ref to a file",
            register(r#"{"type":"object","properties":{"a":{"$ref":"file:///etc/passwd"}}}"#),
            expect![[
                r#"not registered: registration failed: tool 't' has an invalid input schema: "$ref" at #/properties/a refers to "file:///etc/passwd", another document (external documents are never fetched: put every definition the schema refers to under its own "$defs")"#
            ]],
        ),
        case(
            "relative $ref against a remote $id",
            register(
                r#"{"$id":"http://{tripwire}/root.json","type":"object","properties":{"a":{"$ref":"other.json"}}}"#,
            ),
            expect![[
                r#"not registered: registration failed: tool 't' has an invalid input schema: "$ref" at #/properties/a refers to "other.json", another document (external documents are never fetched: put every definition the schema refers to under its own "$defs")"#
            ]],
        ),
        case(
            "remote $schema",
            register(r#"{"$schema":"http://{tripwire}/meta.json","type":"object"}"#),
            expect!["registered"],
        ),
        case(
            "local $ref into $defs",
            register(
                r##"{"type":"object","properties":{"a":{"$ref":"#/$defs/A"}},"$defs":{"A":{"type":"string"}}}"##,
            ),
            expect!["registered"],
        ),
        case(
            "local $ref to nothing",
            register(r##"{"type":"object","properties":{"a":{"$ref":"#/$defs/nope"}}}"##),
            expect![
                "not registered: registration failed: tool 't' has an invalid input schema: Pointer '/$defs/nope' does not exist"
            ],
        ),
        // Patterns.
        case(
            "pattern with a backreference",
            register(
                r#"{"type":"object","properties":{"a":{"type":"string","pattern":"^(a+)\\1$"}}}"#,
            ),
            expect![[
                r#"not registered: registration failed: tool 't' has an invalid input schema: "^(a+)\\1$" is not a "regex""#
            ]],
        ),
        case(
            "pattern with a lookahead",
            register(
                r#"{"type":"object","properties":{"a":{"type":"string","pattern":"^(?=a)a+$"}}}"#,
            ),
            expect![[
                r#"not registered: registration failed: tool 't' has an invalid input schema: "^(?=a)a+$" is not a "regex""#
            ]],
        ),
        case(
            "patternProperties with a lookbehind",
            register(r#"{"type":"object","patternProperties":{"(?<=a)b":{}}}"#),
            expect![[
                r#"not registered: registration failed: tool 't' has an invalid input schema: "(?<=a)b" is not a "regex""#
            ]],
        ),
        case(
            "pattern that is not a regex",
            register(r#"{"type":"object","properties":{"a":{"type":"string","pattern":"["}}}"#),
            expect![[
                r#"not registered: registration failed: tool 't' has an invalid input schema: "[" is not a "regex""#
            ]],
        ),
        case(
            "nested quantifiers on 100000 characters",
            call(
                r#"{"type":"object","properties":{"a":{"type":"string","pattern":"^(a+)+$"}}}"#,
                format!(r#"{{"a":"{}!"}}"#, "a".repeat(100_000)),
            ),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"Error executing tool t: Invalid arguments: argument 'a': \"<100000 × 'a'>!\" does not match \"^(a+)+$\""}],"isError":true}}"#
            ]],
        ),
        case(
            "overlapping alternation on 100000 characters",
            call(
                r#"{"type":"object","properties":{"a":{"type":"string","pattern":"^(a|a)*$"}}}"#,
                format!(r#"{{"a":"{}!"}}"#, "a".repeat(100_000)),
            ),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"Error executing tool t: Invalid arguments: argument 'a': \"<100000 × 'a'>!\" does not match \"^(a|a)*$\""}],"isError":true}}"#
            ]],
        ),
        case(
            "catastrophic patternProperties on a 20000-byte near miss",
            call(
                r#"{"type":"object","patternProperties":{"^(x+x+)+y$":{"type":"integer"}}}"#,
                format!(r#"{{"{}":"not an integer"}}"#, "x".repeat(20_000)),
            ),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"ok"}]}}"#
            ]],
        ),
        // Size and depth.
        case("depth limit-1", depth(9), expect!["registered"]),
        case("depth at the limit", depth(10), expect!["registered"]),
        case(
            "depth limit+1",
            depth(11),
            expect![
                "not registered: registration failed: tool 't' has an invalid input schema: it nests objects and arrays more than 10 levels deep (McpServer::max_schema_depth)"
            ],
        ),
        case(
            "default depth at the limit",
            register_with((d, b), Schema::Depth(d)),
            expect!["registered"],
        ),
        case(
            "default depth plus one",
            register_with((d, b), Schema::Depth(d + 1)),
            expect![
                "not registered: registration failed: tool 't' has an invalid input schema: it nests objects and arrays more than 64 levels deep (McpServer::max_schema_depth)"
            ],
        ),
        case(
            "a schema 2000 levels deep",
            register_with((d, b), Schema::Depth(2000)),
            expect![
                "not registered: registration failed: tool 't' has an invalid input schema: it nests objects and arrays more than 64 levels deep (McpServer::max_schema_depth)"
            ],
        ),
        case("bytes limit-1", bytes(999), expect!["registered"]),
        case("bytes at the limit", bytes(1000), expect!["registered"]),
        case(
            "bytes limit+1",
            bytes(1001),
            expect![
                "not registered: registration failed: tool 't' has an invalid input schema: it is longer than 1000 bytes as JSON (McpServer::max_schema_bytes)"
            ],
        ),
        case(
            "enum of 200000 values",
            register(&huge_enum),
            expect![
                "not registered: registration failed: tool 't' has an invalid input schema: it is longer than 1048576 bytes as JSON (McpServer::max_schema_bytes)"
            ],
        ),
        case(
            "pattern longer than the byte limit",
            register(&huge_pattern),
            expect![
                "not registered: registration failed: tool 't' has an invalid input schema: it is longer than 1048576 bytes as JSON (McpServer::max_schema_bytes)"
            ],
        ),
        case(
            "enum of 50000 values, a value outside",
            call(&big_enum, r#"{"v":-1}"#),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"Error executing tool t: Invalid arguments: argument 'v': -1 is not one of 0, 1 or 49998 other candidates"}],"isError":true}}"#
            ]],
        ),
        case(
            "enum of 50000 values, the last value",
            call(&big_enum, r#"{"v":49999}"#),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"ok"}]}}"#
            ]],
        ),
        // Arguments.
        case(
            "arguments nested 100 deep against a recursive schema",
            call(RECURSIVE, nested_arguments(100)),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"ok"}]}}"#
            ]],
        ),
        case(
            "arguments nested 200 deep",
            call(RECURSIVE, nested_arguments(200)),
            expect![[
                r#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error: arrays and objects nested more than 128 deep"}}"#
            ]],
        ),
        case(
            "100 violations are summarized",
            call(
                r#"{"type":"object","properties":{"a":{"type":"array","items":{"type":"integer"}}}}"#,
                json!({"a": wrong_items}).to_string(),
            ),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"Error executing tool t: Invalid arguments: argument 'a.0': \"x\" is not of type \"integer\"; argument 'a.1': \"x\" is not of type \"integer\"; argument 'a.2': \"x\" is not of type \"integer\"; argument 'a.3': \"x\" is not of type \"integer\"; argument 'a.4': \"x\" is not of type \"integer\"; argument 'a.5': \"x\" is not of type \"integer\"; argument 'a.6': \"x\" is not of type \"integer\"; argument 'a.7': \"x\" is not of type \"integer\"; argument 'a.8': \"x\" is not of type \"integer\"; argument 'a.9': \"x\" is not of type \"integer\"; and 90 more"}],"isError":true}}"#
            ]],
        ),
        case(
            "uniqueItems over 10000 items",
            call(
                r#"{"type":"object","properties":{"a":{"type":"array","uniqueItems":true}}}"#,
                json!({"a": (0..10_000).collect::<Vec<_>>()}).to_string(),
            ),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"ok"}]}}"#
            ]],
        ),
        case(
            "multipleOf a tiny fraction of a huge number",
            call(r#"{"type":"object","properties":{"a":{"multipleOf":1e-300}}}"#, r#"{"a":1e300}"#),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"ok"}]}}"#
            ]],
        ),
        case(
            "additional properties are refused",
            call(
                r#"{"type":"object","properties":{},"additionalProperties":false}"#,
                r#"{"x":1,"y":2}"#,
            ),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"Error executing tool t: Invalid arguments: Additional properties are not allowed ('x', 'y' were unexpected)"}],"isError":true}}"#
            ]],
        ),
    ]
}

#[test]
fn json_schema() {
    let (addr, fetched) = tripwire();
    run_group("JSON Schema", 30, cases(), |case| run_schema(case, addr));
    let mut probe = TcpStream::connect(addr).expect("connect");
    probe.write_all(b"SENTINEL").expect("write");
    let first = fetched.recv_timeout(Duration::from_secs(5)).expect("the tripwire answered");
    assert_eq!(first, "SENTINEL", "a schema made the server connect to {addr}");
}

/// A listener whose first 8 bytes of each connection are reported, in order of arrival.
fn tripwire() -> (SocketAddr, mpsc::Receiver<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let mut first = [0u8; 8];
            let read = stream
                .read_exact(&mut first)
                .map(|()| String::from_utf8_lossy(&first).into_owned());
            if tx.send(read.unwrap_or_default()).is_err() {
                return;
            }
        }
    });
    (addr, rx)
}

fn build(schema: &Schema, addr: SocketAddr) -> Map<String, Value> {
    match schema {
        Schema::Text(text) => {
            let text = text.replace(TRIPWIRE, &addr.to_string());
            serde_json::from_str(&text).expect("schema JSON")
        }
        Schema::Depth(depth) => {
            let mut schema = Map::new();
            for _ in 1..*depth {
                let mut outer = Map::new();
                outer.insert("not".into(), Value::Object(schema));
                schema = outer;
            }
            schema.insert("type".into(), "object".into());
            schema
        }
        Schema::Bytes(len) => {
            let mut schema = Map::new();
            schema.insert("type".into(), "object".into());
            schema.insert("description".into(), "".into());
            let pad = len - Value::Object(schema.clone()).to_string().len();
            schema.insert("description".into(), "x".repeat(pad).into());
            schema
        }
    }
}

/// Registers (and maybe calls) tool `t` on a serving server; returns the registration error
/// or `registered`, or the call's answer line. `tools/list` must succeed afterwards and list
/// `t` exactly when it was registered.
fn run_schema(case: &SchemaCase, addr: SocketAddr) -> String {
    let mut server = McpServer::new("schemas");
    if let Some((depth, bytes)) = case.limits {
        server = server.max_schema_depth(depth).max_schema_bytes(bytes);
    }
    let (Step::Register { input } | Step::Call { input, .. }) = &case.step;
    let tool = ToolDef::new("t", |_: Value| async { "ok" }).input_schema(build(input, addr));
    block_on(async move {
        let mut wire = Wire::start(server.clone(), "2025-11-25");
        wire.initialize().await;
        let registered = server.add_tool(tool);
        let outcome = match (&registered, &case.step) {
            (Err(error), _) => format!("not registered: {error}"),
            (Ok(()), Step::Register { .. }) => "registered".to_owned(),
            (Ok(()), Step::Call { arguments, .. }) => {
                let line = format!(
                    r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"t","arguments":{arguments}}}}}"#
                );
                wire.send(&line).await;
                answer_to(&mut wire, "1").await
            }
        };
        wire.send(r#"{"jsonrpc":"2.0","id":"alive","method":"tools/list"}"#).await;
        let list = answer_to(&mut wire, r#""alive""#).await;
        assert!(list.contains(r#""result""#), "still serving: {list}");
        assert_eq!(list.contains(r#""name":"t""#), registered.is_ok(), "{list}");
        squeeze(&outcome.replace(&addr.to_string(), TRIPWIRE))
    })
}

/// Writes runs of 16 or more of one character as `<count × 'c'>`, so answers that quote long
/// arguments stay readable in the snapshots.
fn squeeze(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::new();
    let mut at = 0;
    while at < chars.len() {
        let run = chars[at..].iter().take_while(|c| **c == chars[at]).count();
        if run >= 16 {
            out.push_str(&format!("<{run} × {:?}>", chars[at]));
        } else {
            out.extend(&chars[at..at + run]);
        }
        at += run;
    }
    out
}
