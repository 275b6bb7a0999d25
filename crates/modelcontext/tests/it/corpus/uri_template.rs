//! Group 6, URI templates. Every case of `uritemplate-test/negative-tests.json` must fail to
//! parse or to expand, with a message that says why and where, and registering it on a live
//! server must not disturb the connection. Then `resources/read` and `resources/subscribe` of
//! hostile URIs against `books://{title}` in both eras: encoded separators and traversal,
//! bad escapes, invalid UTF-8, NUL bytes, absolute paths. Each answer is exact, and the
//! connection serves on.

use std::sync::OnceLock;

use expect_test::expect;
use modelcontext::ResourceDef;
use modelcontext::types::uri_template::{UriTemplate, Value};
use serde_json::Value as Json;

use super::{Case, Lines, Start, answer_to, block_on, case, line, run_group, run_wire};
use crate::support::{MODERN_META, Wire, bookshop};

const SUITE: &str =
    concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/uritemplate-test/negative-tests.json");

/// The suite's one group: its variables and its templates, in file order.
fn suite() -> &'static (Json, Vec<String>) {
    static SUITE_DATA: OnceLock<(Json, Vec<String>)> = OnceLock::new();
    SUITE_DATA.get_or_init(|| {
        let text = std::fs::read_to_string(SUITE).unwrap_or_else(|e| panic!("{SUITE}: {e}"));
        let json: Json = serde_json::from_str(&text).expect("suite JSON");
        let group = &json["Failure Tests"];
        let templates = group["testcases"]
            .as_array()
            .expect("testcases")
            .iter()
            .map(|case| case[0].as_str().expect("a template").to_owned())
            .collect();
        (group["variables"].clone(), templates)
    })
}

/// The name of each case is its template; the table must be exactly the suite's list.
pub(crate) fn negative_cases() -> Vec<Case<&'static str>> {
    vec![
        case(
            "{/id*",
            "{/id*",
            expect![[r#"
            refused: unclosed expression: `{` has no matching `}` at byte 0
            not registered: registration failed: resource template '{/id*': unclosed expression: `{` has no matching `}` at byte 0"#]],
        ),
        case(
            "/id*}",
            "/id*}",
            expect![[r#"
            refused: `}` without a matching `{` at byte 4
            registered"#]],
        ),
        case(
            "{/?id}",
            "{/?id}",
            expect![[r#"
            refused: invalid character `?` in variable name at byte 2
            not registered: registration failed: resource template '{/?id}': invalid character `?` in variable name at byte 2"#]],
        ),
        case(
            "{var:prefix}",
            "{var:prefix}",
            expect![[r#"
            refused: prefix length must be 1 to 9999, not `prefix` at byte 5
            not registered: registration failed: resource template '{var:prefix}': prefix length must be 1 to 9999, not `prefix` at byte 5"#]],
        ),
        case(
            "{hello:2*}",
            "{hello:2*}",
            expect![[r#"
            refused: a variable cannot have both a prefix and `*` (RFC 6570 §2.4) at byte 6
            not registered: registration failed: resource template '{hello:2*}': a variable cannot have both a prefix and `*` (RFC 6570 §2.4) at byte 6"#]],
        ),
        case(
            "{??hello}",
            "{??hello}",
            expect![[r#"
            refused: invalid character `?` in variable name at byte 2
            not registered: registration failed: resource template '{??hello}': invalid character `?` in variable name at byte 2"#]],
        ),
        case(
            "{!hello}",
            "{!hello}",
            expect![[r#"
            refused: operator `!` is reserved for future extensions (RFC 6570 §2.2) at byte 1
            not registered: registration failed: resource template '{!hello}': operator `!` is reserved for future extensions (RFC 6570 §2.2) at byte 1"#]],
        ),
        case(
            "{with space}",
            "{with space}",
            expect![[r#"
            refused: invalid character ` ` in variable name at byte 5
            not registered: registration failed: resource template '{with space}': invalid character ` ` in variable name at byte 5"#]],
        ),
        case(
            "{ leading_space}",
            "{ leading_space}",
            expect![[r#"
            refused: invalid character ` ` in variable name at byte 1
            not registered: registration failed: resource template '{ leading_space}': invalid character ` ` in variable name at byte 1"#]],
        ),
        case(
            "{trailing_space }",
            "{trailing_space }",
            expect![[r#"
            refused: invalid character ` ` in variable name at byte 15
            not registered: registration failed: resource template '{trailing_space }': invalid character ` ` in variable name at byte 15"#]],
        ),
        case(
            "{=path}",
            "{=path}",
            expect![[r#"
            refused: operator `=` is reserved for future extensions (RFC 6570 §2.2) at byte 1
            not registered: registration failed: resource template '{=path}': operator `=` is reserved for future extensions (RFC 6570 §2.2) at byte 1"#]],
        ),
        case(
            "{$var}",
            "{$var}",
            expect![[r#"
            refused: invalid character `$` in variable name at byte 1
            not registered: registration failed: resource template '{$var}': invalid character `$` in variable name at byte 1"#]],
        ),
        case(
            "{|var*}",
            "{|var*}",
            expect![[r#"
            refused: operator `|` is reserved for future extensions (RFC 6570 §2.2) at byte 1
            not registered: registration failed: resource template '{|var*}': operator `|` is reserved for future extensions (RFC 6570 §2.2) at byte 1"#]],
        ),
        case(
            "{*keys?}",
            "{*keys?}",
            expect![[r#"
            refused: invalid character `*` in variable name at byte 1
            not registered: registration failed: resource template '{*keys?}': invalid character `*` in variable name at byte 1"#]],
        ),
        case(
            "{?empty=default,var}",
            "{?empty=default,var}",
            expect![[r#"
            refused: invalid character `=` in variable name at byte 7
            not registered: registration failed: resource template '{?empty=default,var}': invalid character `=` in variable name at byte 7"#]],
        ),
        case(
            "{var}{-prefix|/-/|var}",
            "{var}{-prefix|/-/|var}",
            expect![[r#"
            refused: invalid character `-` in variable name at byte 6
            not registered: registration failed: resource template '{var}{-prefix|/-/|var}': invalid character `-` in variable name at byte 6"#]],
        ),
        case(
            "?q={searchTerms}&amp;c={example:color?}",
            "?q={searchTerms}&amp;c={example:color?}",
            expect![[r#"
                refused: prefix length must be 1 to 9999, not `color?` at byte 32
                not registered: registration failed: resource template '?q={searchTerms}&amp;c={example:color?}': prefix length must be 1 to 9999, not `color?` at byte 32"#]],
        ),
        case(
            "x{?empty|foo=none}",
            "x{?empty|foo=none}",
            expect![[r#"
            refused: invalid character `|` in variable name at byte 8
            not registered: registration failed: resource template 'x{?empty|foo=none}': invalid character `|` in variable name at byte 8"#]],
        ),
        case(
            "/h{#hello+}",
            "/h{#hello+}",
            expect![[r#"
            refused: invalid character `+` in variable name at byte 9
            not registered: registration failed: resource template '/h{#hello+}': invalid character `+` in variable name at byte 9"#]],
        ),
        case(
            "/h#{hello+}",
            "/h#{hello+}",
            expect![[r#"
            refused: invalid character `+` in variable name at byte 9
            not registered: registration failed: resource template '/h#{hello+}': invalid character `+` in variable name at byte 9"#]],
        ),
        case(
            "{keys:1}",
            "{keys:1}",
            expect![[r#"
            refused: prefix `:1` applies only to strings, but `keys` is a list or map (RFC 6570 §2.4.1) at byte 1
            not registered: registration failed: resource template '{keys:1}': template variables {keys} do not match handler parameters {} (not a parameter: {keys}; not in the template: {})"#]],
        ),
        case(
            "{+keys:1}",
            "{+keys:1}",
            expect![[r#"
            refused: prefix `:1` applies only to strings, but `keys` is a list or map (RFC 6570 §2.4.1) at byte 2
            not registered: registration failed: resource template '{+keys:1}': template variables {keys} do not match handler parameters {} (not a parameter: {keys}; not in the template: {})"#]],
        ),
        case(
            "{;keys:1*}",
            "{;keys:1*}",
            expect![[r#"
            refused: a variable cannot have both a prefix and `*` (RFC 6570 §2.4) at byte 6
            not registered: registration failed: resource template '{;keys:1*}': a variable cannot have both a prefix and `*` (RFC 6570 §2.4) at byte 6"#]],
        ),
        case(
            "?{-join|&|var,list}",
            "?{-join|&|var,list}",
            expect![[r#"
            refused: invalid character `-` in variable name at byte 2
            not registered: registration failed: resource template '?{-join|&|var,list}': invalid character `-` in variable name at byte 2"#]],
        ),
        case(
            "/people/{~thing}",
            "/people/{~thing}",
            expect![[r#"
            refused: invalid character `~` in variable name at byte 9
            not registered: registration failed: resource template '/people/{~thing}': invalid character `~` in variable name at byte 9"#]],
        ),
        case(
            "/{default-graph-uri}",
            "/{default-graph-uri}",
            expect![[r#"
            refused: invalid character `-` in variable name at byte 9
            not registered: registration failed: resource template '/{default-graph-uri}': invalid character `-` in variable name at byte 9"#]],
        ),
        case(
            "/sparql{?query,default-graph-uri}",
            "/sparql{?query,default-graph-uri}",
            expect![[r#"
                refused: invalid character `-` in variable name at byte 22
                not registered: registration failed: resource template '/sparql{?query,default-graph-uri}': invalid character `-` in variable name at byte 22"#]],
        ),
        case(
            "/sparql{?query){&default-graph-uri*}",
            "/sparql{?query){&default-graph-uri*}",
            expect![[r#"
                refused: `{` inside an expression (expressions do not nest) at byte 15
                not registered: registration failed: resource template '/sparql{?query){&default-graph-uri*}': `{` inside an expression (expressions do not nest) at byte 15"#]],
        ),
        case(
            "/resolution{?x, y}",
            "/resolution{?x, y}",
            expect![[r#"
            refused: invalid character ` ` in variable name at byte 15
            not registered: registration failed: resource template '/resolution{?x, y}': invalid character ` ` in variable name at byte 15"#]],
        ),
        case(
            "{var:0}",
            "{var:0}",
            expect![[r#"
            refused: prefix length must be 1 to 9999, not `0` at byte 5
            not registered: registration failed: resource template '{var:0}': prefix length must be 1 to 9999, not `0` at byte 5"#]],
        ),
        case(
            "{var:01}",
            "{var:01}",
            expect![[r#"
            refused: prefix length must be 1 to 9999, not `01` at byte 5
            not registered: registration failed: resource template '{var:01}': prefix length must be 1 to 9999, not `01` at byte 5"#]],
        ),
        case(
            "{var:10000}",
            "{var:10000}",
            expect![[r#"
            refused: prefix length must be 1 to 9999, not `10000` at byte 5
            not registered: registration failed: resource template '{var:10000}': prefix length must be 1 to 9999, not `10000` at byte 5"#]],
        ),
        case(
            "{var:}",
            "{var:}",
            expect![[r#"
            refused: prefix length must be 1 to 9999, not `` at byte 5
            not registered: registration failed: resource template '{var:}': prefix length must be 1 to 9999, not `` at byte 5"#]],
        ),
        case(
            "{x.}",
            "{x.}",
            expect![[r#"
            refused: a variable name cannot end with `.` at byte 3
            not registered: registration failed: resource template '{x.}': a variable name cannot end with `.` at byte 3"#]],
        ),
        case(
            "{x..y}",
            "{x..y}",
            expect![[r#"
            refused: a variable name cannot contain `..` or start with `.` at byte 3
            not registered: registration failed: resource template '{x..y}': a variable name cannot contain `..` or start with `.` at byte 3"#]],
        ),
        case(
            "{%2x}",
            "{%2x}",
            expect![[r#"
            refused: `%` in a variable name must start a `%XX` escape at byte 1
            not registered: registration failed: resource template '{%2x}': `%` in a variable name must start a `%XX` escape at byte 1"#]],
        ),
    ]
}

#[test]
fn the_table_is_every_negative_case_of_the_suite() {
    let table: Vec<&str> = negative_cases().iter().map(|case| case.input).collect();
    assert_eq!(table, suite().1, "negative-tests.json and the table differ");
}

#[test]
fn uri_template_negative_suite() {
    run_group("URI templates (negative suite)", 36, negative_cases(), run_negative);
}

/// The suite's variables as template values: numbers become strings, arrays lists, objects maps.
fn lookup(name: &str) -> Option<Value> {
    let scalar = |json: &Json| match json {
        Json::String(s) => s.clone(),
        other => other.to_string(),
    };
    match &suite().0[name] {
        Json::Null => None,
        Json::Array(items) => Some(Value::List(items.iter().map(scalar).collect())),
        Json::Object(map) => {
            Some(Value::Map(map.iter().map(|(k, v)| (k.clone(), scalar(v))).collect()))
        }
        other => Some(Value::String(scalar(other))),
    }
}

/// Why the template fails (parse or expansion), then what registering it on a serving
/// server says; the connection must keep serving.
fn run_negative(template: &&'static str) -> String {
    let outcome = match UriTemplate::parse(template).and_then(|t| t.try_expand(&lookup)) {
        Ok(expanded) => format!("expanded to {expanded:?}"),
        Err(error) => format!("refused: {error}"),
    };
    let registration = block_on(async {
        let server = bookshop();
        let mut wire = Wire::start(server.clone(), "2025-11-25");
        wire.initialize().await;
        let registered = server.add_resource(ResourceDef::new(*template, || async { "x" }));
        wire.send(r#"{"jsonrpc":"2.0","id":"alive","method":"ping"}"#).await;
        let ping = answer_to(&mut wire, r#""alive""#).await;
        assert!(ping.contains(r#""result""#), "still serving: {ping}");
        match registered {
            Ok(()) => "registered".to_owned(),
            Err(error) => format!("not registered: {error}"),
        }
    });
    format!("{outcome}\n{registration}")
}

/// `resources/read` of `uri` on a handshake-era connection.
fn read(uri: &str) -> Lines {
    line(
        Start::Handshake,
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{{"uri":"{uri}"}}}}"#
        ),
    )
}

/// `resources/read` of `uri` on a modern connection.
fn read_modern(uri: &str) -> Lines {
    line(
        Start::Modern,
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{{"uri":"{uri}",{MODERN_META}}}}}"#
        ),
    )
}

pub(crate) fn wire_cases() -> Vec<Case<Lines>> {
    let long = format!("books://{}%2F", "a".repeat(64));
    let percents = format!("books://{}", "%".repeat(64));
    vec![
        case(
            "encoded traversal",
            read("books://..%2F..%2Fetc%2Fpasswd"),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown resource: books://..%2F..%2Fetc%2Fpasswd","data":{"uri":"books://..%2F..%2Fetc%2Fpasswd"}}}"#
            ]],
        ),
        case(
            "dot-dot",
            read("books://.."),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown resource: books://..","data":{"uri":"books://.."}}}"#
            ]],
        ),
        case(
            "encoded dot-dot",
            read("books://%2e%2e"),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown resource: books://%2e%2e","data":{"uri":"books://%2e%2e"}}}"#
            ]],
        ),
        case(
            "encoded slash",
            read("books://a%2Fb"),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown resource: books://a%2Fb","data":{"uri":"books://a%2Fb"}}}"#
            ]],
        ),
        case(
            "encoded backslash",
            read("books://a%5Cb"),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown resource: books://a%5Cb","data":{"uri":"books://a%5Cb"}}}"#
            ]],
        ),
        case(
            "encoded nul",
            read("books://a%00b"),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown resource: books://a%00b","data":{"uri":"books://a%00b"}}}"#
            ]],
        ),
        case(
            "bad escape",
            read("books://%ZZ"),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown resource: books://%ZZ","data":{"uri":"books://%ZZ"}}}"#
            ]],
        ),
        case(
            "escape of invalid utf-8",
            read("books://%C3%28"),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown resource: books://%C3%28","data":{"uri":"books://%C3%28"}}}"#
            ]],
        ),
        case(
            "empty value",
            read("books://"),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown resource: books://","data":{"uri":"books://"}}}"#
            ]],
        ),
        case(
            "extra segment",
            read("books://Dune/extra"),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown resource: books://Dune/extra","data":{"uri":"books://Dune/extra"}}}"#
            ]],
        ),
        case(
            "scheme in capitals",
            read("BOOKS://Dune"),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown resource: BOOKS://Dune","data":{"uri":"BOOKS://Dune"}}}"#
            ]],
        ),
        case(
            "windows absolute path",
            read("books://C:%5Cwindows"),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown resource: books://C:%5Cwindows","data":{"uri":"books://C:%5Cwindows"}}}"#
            ]],
        ),
        case(
            "encoded letters are decoded",
            read("books://Du%6Ee"),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"result":{"contents":[{"uri":"books://Du%6Ee","mimeType":"text/plain","text":"Dune by Frank Herbert"}]}}"#
            ]],
        ),
        case(
            "long value ending in an encoded slash",
            read(&long),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown resource: books://aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa%2F","data":{"uri":"books://aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa%2F"}}}"#
            ]],
        ),
        case(
            "a run of bare percent signs",
            read(&percents),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown resource: books://%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%","data":{"uri":"books://%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%"}}}"#
            ]],
        ),
        case(
            "encoded traversal, modern",
            read_modern("books://..%2F..%2Fetc%2Fpasswd"),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown resource: books://..%2F..%2Fetc%2Fpasswd","data":{"uri":"books://..%2F..%2Fetc%2Fpasswd"}}}"#
            ]],
        ),
        case(
            "encoded nul, modern",
            read_modern("books://%00"),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown resource: books://%00","data":{"uri":"books://%00"}}}"#
            ]],
        ),
        case(
            "subscribe through encoded traversal",
            line(
                Start::Handshake,
                r#"{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"books://..%2Fsecret"}}"#,
            ),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown resource: books://..%2Fsecret","data":{"uri":"books://..%2Fsecret"}}}"#
            ]],
        ),
    ]
}

#[test]
fn uri_templates_on_the_wire() {
    run_group("URI templates (wire)", 15, wire_cases(), run_wire);
}
