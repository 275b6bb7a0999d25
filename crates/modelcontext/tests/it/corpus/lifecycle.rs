//! Group 3, lifecycle and per-method params of both eras: requests before `initialize`,
//! `initialize` itself, the 2026-07-28 `_meta` envelope, methods one era removed or lacks, and
//! params of the wrong shape for each method the bookshop serves.

use expect_test::expect;

use super::{Case, Lines, Start, case, line, run_group, run_wire};
use crate::support::MODERN_META;

/// A handshake-era request with id 1.
fn h(method: &str, params: &str) -> Lines {
    line(Start::Handshake, request(method, params))
}

/// A modern request with id 1, the `_meta` envelope spliced into `params`.
fn m(method: &str, params: &str) -> Lines {
    let sep = if params.is_empty() { "" } else { "," };
    line(Start::Modern, request(method, &format!("{params}{sep}{MODERN_META}")))
}

/// A request whose params are the members in `params`.
fn request(method: &str, params: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{{{params}}}}}"#)
}

const INIT: &str =
    r#""protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}"#;

pub(crate) fn cases() -> Vec<Case<Lines>> {
    use Start::{Fresh, FreshModern};
    vec![
        // Before any era is pinned.
        case(
            "tools/list before initialize",
            line(Fresh, request("tools/list", "")),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"'tools/list' before initialization: send 'initialize' first, or carry the 2026-07-28 '_meta' envelope (io.modelcontextprotocol/protocolVersion and clientCapabilities)"}}"#
            ]],
        ),
        case(
            "ping before initialize",
            line(Fresh, request("ping", "")),
            expect![[r#"{"jsonrpc":"2.0","id":1,"result":{}}"#]],
        ),
        case(
            "initialized before initialize",
            line(Fresh, r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            expect!["(no answer)"],
        ),
        case(
            "initialize without params",
            line(Fresh, r#"{"jsonrpc":"2.0","id":1,"method":"initialize"}"#),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params for 'initialize': missing field `protocolVersion` at line 1 column 2"}}"#
            ]],
        ),
        case(
            "initialize with a numeric version",
            line(
                Fresh,
                request(
                    "initialize",
                    r#""protocolVersion":20251125,"capabilities":{},"clientInfo":{"name":"c","version":"1"}"#,
                ),
            ),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params for 'initialize': invalid type: integer `20251125`, expected a string at line 1 column 27"}}"#
            ]],
        ),
        case(
            "initialize without clientInfo",
            line(
                Fresh,
                request("initialize", r#""protocolVersion":"2025-11-25","capabilities":{}"#),
            ),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params for 'initialize': missing field `clientInfo` at line 1 column 50"}}"#
            ]],
        ),
        case(
            "initialize with capabilities not an object",
            line(
                Fresh,
                request(
                    "initialize",
                    r#""protocolVersion":"2025-11-25","capabilities":[],"clientInfo":{"name":"c","version":"1"}"#,
                ),
            ),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params for 'initialize': invalid type: sequence, expected struct ClientCapabilities at line 1 column 47"}}"#
            ]],
        ),
        case(
            "initialize with an unknown version gets the latest",
            line(
                Fresh,
                request(
                    "initialize",
                    r#""protocolVersion":"1999-01-01","capabilities":{},"clientInfo":{"name":"c","version":"1"}"#,
                ),
            ),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"logging":{},"prompts":{"listChanged":true},"resources":{"subscribe":true,"listChanged":true},"tools":{"listChanged":true}},"serverInfo":{"name":"Bookshop","version":"1.0.0"},"instructions":"Use search_books."}}"#
            ]],
        ),
        case(
            "modern envelope with an unsupported version",
            line(
                FreshModern,
                request(
                    "tools/list",
                    r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}"#,
                ),
            ),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28"],"requested":"2099-01-01"}}}"#
            ]],
        ),
        case(
            "modern envelope without capabilities",
            line(
                FreshModern,
                request(
                    "tools/list",
                    r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}"#,
                ),
            ),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Missing required _meta field 'io.modelcontextprotocol/clientCapabilities'"}}"#
            ]],
        ),
        case(
            "modern envelope without a version",
            line(
                FreshModern,
                request(
                    "tools/list",
                    r#""_meta":{"io.modelcontextprotocol/clientCapabilities":{}}"#,
                ),
            ),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Missing required _meta field 'io.modelcontextprotocol/protocolVersion'"}}"#
            ]],
        ),
        case(
            "modern envelope with a numeric version",
            line(
                FreshModern,
                request(
                    "tools/list",
                    r#""_meta":{"io.modelcontextprotocol/protocolVersion":20260728,"io.modelcontextprotocol/clientCapabilities":{}}"#,
                ),
            ),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params for 'tools/list': invalid type: integer `20260728`, expected a string at line 1 column 60"}}"#
            ]],
        ),
        case(
            "server/discover without the envelope",
            line(FreshModern, request("server/discover", "")),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Missing required _meta field 'io.modelcontextprotocol/protocolVersion'"}}"#
            ]],
        ),
        // Handshake era.
        case(
            "initialize twice",
            h("initialize", INIT),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"logging":{},"prompts":{"listChanged":true},"resources":{"subscribe":true,"listChanged":true},"tools":{"listChanged":true}},"serverInfo":{"name":"Bookshop","version":"1.0.0"},"instructions":"Use search_books."}}"#
            ]],
        ),
        case(
            "modern envelope after initialize",
            h("tools/list", MODERN_META),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"this connection negotiated the handshake era with initialize; requests must not carry the 2026-07-28 _meta envelope"}}"#
            ]],
        ),
        case(
            "server/discover after initialize",
            h("server/discover", ""),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found","data":"server/discover"}}"#
            ]],
        ),
        case(
            "tools/call of an unknown tool",
            h("tools/call", r#""name":"nope","arguments":{}"#),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown tool: nope"}}"#
            ]],
        ),
        case(
            "tools/call with a numeric name",
            h("tools/call", r#""name":5"#),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params for 'tools/call': invalid type: integer `5`, expected a string at line 1 column 9"}}"#
            ]],
        ),
        case(
            "tools/call with arguments a string",
            h("tools/call", r#""name":"add","arguments":"{}""#),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params for 'tools/call': invalid type: string \"{}\", expected a map at line 1 column 30"}}"#
            ]],
        ),
        case(
            "tools/call without params",
            line(Start::Handshake, r#"{"jsonrpc":"2.0","id":1,"method":"tools/call"}"#),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params for 'tools/call': missing field `name` at line 1 column 2"}}"#
            ]],
        ),
        case(
            "tools/call with arguments that break the schema",
            h("tools/call", r#""name":"add","arguments":{"a":"one","b":2}"#),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"Error executing tool add: Invalid arguments: argument 'a': \"one\" is not of type \"integer\""}],"isError":true}}"#
            ]],
        ),
        case(
            "resources/read with params an array",
            line(
                Start::Handshake,
                r#"{"jsonrpc":"2.0","id":1,"method":"resources/read","params":[]}"#,
            ),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params for 'resources/read': invalid length 1, expected struct ReadResourceRequestParams with 4 elements at line 1 column 2"}}"#
            ]],
        ),
        case(
            "resources/read without a uri",
            h("resources/read", ""),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params for 'resources/read': missing field `uri` at line 1 column 2"}}"#
            ]],
        ),
        case(
            "resources/read of an unknown resource",
            h("resources/read", r#""uri":"books://Nothing""#),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"No book titled 'Nothing' in the catalog.","data":{"uri":"books://Nothing"}}}"#
            ]],
        ),
        case(
            "resources/subscribe to an unknown uri",
            h("resources/subscribe", r#""uri":"nope://x""#),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown resource: nope://x","data":{"uri":"nope://x"}}}"#
            ]],
        ),
        case(
            "prompts/get of an unknown prompt",
            h("prompts/get", r#""name":"nope""#),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown prompt: nope"}}"#
            ]],
        ),
        case(
            "prompts/get without its argument",
            h("prompts/get", r#""name":"review""#),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Missing required arguments for prompt 'review': title"}}"#
            ]],
        ),
        case(
            "prompts/get with a non-string argument",
            h("prompts/get", r#""name":"review","arguments":{"title":5}"#),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params for 'prompts/get': invalid type: integer `5`, expected a string at line 1 column 39"}}"#
            ]],
        ),
        case(
            "params as an array are not read by position",
            line(
                Start::Handshake,
                r#"{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":["review",{"title":"Dune"}]}"#,
            ),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params for 'prompts/get': invalid type: string \"review\", expected struct RequestMeta at line 1 column 9"}}"#
            ]],
        ),
        case(
            "tools/call params as an array",
            line(
                Start::Handshake,
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":["add",{"a":1,"b":2}]}"#,
            ),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params for 'tools/call': invalid type: string \"add\", expected struct RequestMeta at line 1 column 6"}}"#
            ]],
        ),
        case(
            "logging/setLevel to an unknown level",
            h("logging/setLevel", r#""level":"loud""#),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params for 'logging/setLevel': unknown variant `loud`, expected one of `debug`, `info`, `notice`, `warning`, `error`, `critical`, `alert`, `emergency` at line 1 column 15"}}"#
            ]],
        ),
        case(
            "tools/list with a forged cursor",
            h("tools/list", r#""cursor":"garbage""#),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid cursor"}}"#
            ]],
        ),
        case(
            "completion/complete without the capability",
            h(
                "completion/complete",
                r#""ref":{"type":"ref/prompt","name":"review"},"argument":{"name":"title","value":"D"}"#,
            ),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found","data":"completion/complete"}}"#
            ]],
        ),
        case(
            "progress token of the wrong type",
            h(
                "tools/call",
                r#""name":"add","arguments":{"a":1,"b":2},"_meta":{"progressToken":{"x":1}}"#,
            ),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params for 'tools/call': data did not match any variant of untagged enum ProgressToken at line 1 column 73"}}"#
            ]],
        ),
        // Modern era.
        case(
            "ping is removed",
            m("ping", ""),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found","data":"ping"}}"#
            ]],
        ),
        case(
            "logging/setLevel is removed",
            m("logging/setLevel", r#""level":"info""#),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found","data":"logging/setLevel"}}"#
            ]],
        ),
        case(
            "resources/subscribe is removed",
            m("resources/subscribe", r#""uri":"books://Dune""#),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found","data":"resources/subscribe"}}"#
            ]],
        ),
        case(
            "initialize on a modern connection",
            m("initialize", INIT),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"this connection speaks 2026-07-28; the initialize handshake is not accepted","data":{"supported":["2026-07-28"],"requested":"2025-11-25"}}}"#
            ]],
        ),
        case(
            "a request without the envelope",
            line(Start::Modern, request("tools/list", "")),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Missing required _meta field 'io.modelcontextprotocol/protocolVersion'"}}"#
            ]],
        ),
        case(
            "a handshake version in the envelope",
            line(
                Start::Modern,
                request(
                    "tools/list",
                    r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25","io.modelcontextprotocol/clientCapabilities":{}}"#,
                ),
            ),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28"],"requested":"2025-11-25"}}}"#
            ]],
        ),
        case(
            "tools/call of an unknown tool, modern",
            m("tools/call", r#""name":"nope","arguments":{}"#),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown tool: nope"}}"#
            ]],
        ),
        case(
            "resources/read of an unknown resource, modern",
            m("resources/read", r#""uri":"books://Nothing""#),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"No book titled 'Nothing' in the catalog.","data":{"uri":"books://Nothing"}}}"#
            ]],
        ),
        case(
            "tools/list with a forged cursor, modern",
            m("tools/list", r#""cursor":"garbage""#),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid cursor"}}"#
            ]],
        ),
        case(
            "subscriptions/listen with a flag of the wrong type",
            m("subscriptions/listen", r#""notifications":{"toolsListChanged":"yes"}"#),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params for 'subscriptions/listen': invalid type: string \"yes\", expected a boolean at line 1 column 42"}}"#
            ]],
        ),
        case(
            "tools/call with a forged requestState",
            m("tools/call", r#""name":"add","arguments":{"a":1,"b":2},"requestState":"garbage""#),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid or expired requestState","data":{"reason":"invalid_request_state"}}}"#
            ]],
        ),
        case(
            "an unknown log level in the envelope",
            line(
                Start::Modern,
                request(
                    "tools/list",
                    r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/logLevel":"loud"}"#,
                ),
            ),
            expect![[
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params for 'tools/list': unknown variant `loud`, expected one of `debug`, `info`, `notice`, `warning`, `error`, `critical`, `alert`, `emergency` at line 1 column 154"}}"#
            ]],
        ),
    ]
}

#[test]
fn lifecycle_and_params_of_both_eras() {
    run_group("lifecycle and params", 30, cases(), run_wire);
}
