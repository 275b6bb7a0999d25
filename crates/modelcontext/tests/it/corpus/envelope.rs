//! Group 2, the JSON-RPC 2.0 envelope: what is not a message (-32700 without an id), what is
//! not a request (-32600, echoing the id only when it could be read), ids of every shape,
//! methods and params of the wrong type, and the messages that never get an answer
//! (notifications, stray responses).

use expect_test::expect;

use super::{Case, Lines, Start, case, line, run_group, run_wire};

pub(crate) fn cases() -> Vec<Case<Lines>> {
    use Start::Handshake as H;
    let l = |text: &str| line(H, text);
    vec![
        case(
            "not json at all",
            l("not json at all"),
            expect![[
                r#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error: expected ident at line 1 column 2"}}"#
            ]],
        ),
        case(
            "a batch",
            l(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#),
            expect![[
                r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request: batches (JSON arrays) are not supported since 2025-06-18: send one message at a time"}}"#
            ]],
        ),
        case(
            "an empty batch",
            l("[]"),
            expect![[
                r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request: batches (JSON arrays) are not supported since 2025-06-18: send one message at a time"}}"#
            ]],
        ),
        case(
            "a number",
            l("42"),
            expect![[
                r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request: a message must be a JSON object"}}"#
            ]],
        ),
        case(
            "a string",
            l(r#""ping""#),
            expect![[
                r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request: a message must be a JSON object"}}"#
            ]],
        ),
        case(
            "null",
            l("null"),
            expect![[
                r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request: a message must be a JSON object"}}"#
            ]],
        ),
        case(
            "an empty object",
            l("{}"),
            expect![[
                r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request: \"jsonrpc\" must be \"2.0\""}}"#
            ]],
        ),
        case(
            "jsonrpc 1.0 keeps the id",
            l(r#"{"jsonrpc":"1.0","id":2,"method":"ping"}"#),
            expect![[
                r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32600,"message":"Invalid request: \"jsonrpc\" must be \"2.0\""}}"#
            ]],
        ),
        case(
            "jsonrpc missing",
            l(r#"{"id":2,"method":"ping"}"#),
            expect![[
                r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32600,"message":"Invalid request: \"jsonrpc\" must be \"2.0\""}}"#
            ]],
        ),
        case(
            "jsonrpc as a number",
            l(r#"{"jsonrpc":2.0,"id":2,"method":"ping"}"#),
            expect![[
                r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32600,"message":"Invalid request: \"jsonrpc\" must be \"2.0\""}}"#
            ]],
        ),
        case(
            "id null",
            l(r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#),
            expect![[
                r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request: \"id\" must be a string or an integer"}}"#
            ]],
        ),
        case(
            "id fractional",
            l(r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#),
            expect![[
                r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request: \"id\" must be a string or an integer"}}"#
            ]],
        ),
        case(
            "id in exponent notation",
            l(r#"{"jsonrpc":"2.0","id":1e3,"method":"ping"}"#),
            expect![[
                r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request: \"id\" must be a string or an integer"}}"#
            ]],
        ),
        case(
            "id beyond 64 bits",
            l(r#"{"jsonrpc":"2.0","id":18446744073709551616,"method":"ping"}"#),
            expect![[
                r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request: \"id\" must be a string or an integer"}}"#
            ]],
        ),
        case(
            "id object",
            l(r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#),
            expect![[
                r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request: \"id\" must be a string or an integer"}}"#
            ]],
        ),
        case(
            "id array",
            l(r#"{"jsonrpc":"2.0","id":[1],"method":"ping"}"#),
            expect![[
                r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request: \"id\" must be a string or an integer"}}"#
            ]],
        ),
        case(
            "id boolean",
            l(r#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#),
            expect![[
                r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request: \"id\" must be a string or an integer"}}"#
            ]],
        ),
        case(
            "id string is echoed",
            l(r#"{"jsonrpc":"2.0","id":"abc","method":"ping"}"#),
            expect![[r#"{"jsonrpc":"2.0","id":"abc","result":{}}"#]],
        ),
        case(
            "id negative is echoed",
            l(r#"{"jsonrpc":"2.0","id":-7,"method":"ping"}"#),
            expect![[r#"{"jsonrpc":"2.0","id":-7,"result":{}}"#]],
        ),
        case(
            "id above 2^53 is echoed exactly",
            l(r#"{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}"#),
            expect![[r#"{"jsonrpc":"2.0","id":9007199254740993,"result":{}}"#]],
        ),
        case(
            "id empty string is echoed",
            l(r#"{"jsonrpc":"2.0","id":"","method":"ping"}"#),
            expect![[r#"{"jsonrpc":"2.0","id":"","result":{}}"#]],
        ),
        case(
            "id reused after its answer",
            l(r#"{"jsonrpc":"2.0","id":0,"method":"ping"}"#),
            expect![[r#"{"jsonrpc":"2.0","id":0,"result":{}}"#]],
        ),
        case(
            "duplicate member",
            l(r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}"#),
            expect![[
                r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request: duplicate field `id` at line 1 column 28"}}"#
            ]],
        ),
        case(
            "method a number",
            l(r#"{"jsonrpc":"2.0","id":3,"method":5}"#),
            expect![[
                r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32600,"message":"Invalid request: \"method\" must be a string"}}"#
            ]],
        ),
        case(
            "method empty",
            l(r#"{"jsonrpc":"2.0","id":3,"method":""}"#),
            expect![[
                r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"Method not found","data":""}}"#
            ]],
        ),
        case(
            "method in capitals",
            l(r#"{"jsonrpc":"2.0","id":3,"method":"PING"}"#),
            expect![[
                r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"Method not found","data":"PING"}}"#
            ]],
        ),
        case(
            "neither method nor result",
            l(r#"{"jsonrpc":"2.0","id":4}"#),
            expect![[
                r#"{"jsonrpc":"2.0","id":4,"error":{"code":-32600,"message":"Invalid request: missing \"method\", \"result\" or \"error\""}}"#
            ]],
        ),
        case(
            "unknown method",
            l(r#"{"jsonrpc":"2.0","id":5,"method":"foo/bar","params":{}}"#),
            expect![[
                r#"{"jsonrpc":"2.0","id":5,"error":{"code":-32601,"message":"Method not found","data":"foo/bar"}}"#
            ]],
        ),
        case(
            "params a string",
            l(r#"{"jsonrpc":"2.0","id":6,"method":"ping","params":"x"}"#),
            expect![[
                r#"{"jsonrpc":"2.0","id":6,"error":{"code":-32602,"message":"Invalid params for 'ping': invalid type: string \"x\", expected struct RequestParams at line 1 column 3"}}"#
            ]],
        ),
        case(
            "params null",
            l(r#"{"jsonrpc":"2.0","id":6,"method":"ping","params":null}"#),
            expect![[r#"{"jsonrpc":"2.0","id":6,"result":{}}"#]],
        ),
        case(
            "unknown top-level member",
            l(r#"{"jsonrpc":"2.0","id":6,"method":"ping","extra":true}"#),
            expect![[r#"{"jsonrpc":"2.0","id":6,"result":{}}"#]],
        ),
        case(
            "result and error together",
            l(r#"{"jsonrpc":"2.0","id":77,"result":{},"error":{"code":1,"message":"x"}}"#),
            expect![[
                r#"{"jsonrpc":"2.0","id":77,"error":{"code":-32600,"message":"Invalid request: a response has \"result\" or \"error\", not both"}}"#
            ]],
        ),
        case(
            "error not an object",
            l(r#"{"jsonrpc":"2.0","id":77,"error":"x"}"#),
            expect![[
                r#"{"jsonrpc":"2.0","id":77,"error":{"code":-32600,"message":"Invalid request: \"error\" must be an object with \"code\" and \"message\""}}"#
            ]],
        ),
        case("stray result", l(r#"{"jsonrpc":"2.0","id":77,"result":{}}"#), expect!["(no answer)"]),
        case(
            "stray error",
            l(r#"{"jsonrpc":"2.0","id":78,"error":{"code":1,"message":"x"}}"#),
            expect!["(no answer)"],
        ),
        case(
            "unknown notification",
            l(r#"{"jsonrpc":"2.0","method":"notifications/unknown"}"#),
            expect!["(no answer)"],
        ),
        case(
            "cancellation of an unknown request",
            l(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":999}}"#),
            expect!["(no answer)"],
        ),
        case(
            "cancellation without a request id",
            l(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{}}"#),
            expect!["(no answer)"],
        ),
        case(
            "progress for an unknown token",
            l(
                r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}"#,
            ),
            expect!["(no answer)"],
        ),
        case(
            "notification with params of the wrong type",
            l(r#"{"jsonrpc":"2.0","method":"notifications/initialized","params":[1,2]}"#),
            expect!["(no answer)"],
        ),
    ]
}

#[test]
fn json_rpc_envelope() {
    run_group("JSON-RPC envelope", 30, cases(), run_wire);
}
