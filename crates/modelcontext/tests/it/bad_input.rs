//! Bad input of every kind on the stdio framing: each line gets the answer the spec
//! prescribes (or none, for notifications), and the connection keeps serving.

use expect_test::{Expect, expect};

use crate::support::{Wire, bookshop};

/// Sends `line` on an initialized handshake-era connection; checks the answer, then liveness.
#[track_caller]
fn check(line: &str, expected: Expect) {
    let runtime =
        tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    let answer = runtime.block_on(async {
        let mut wire =
            Wire::start_with(bookshop(), "2025-11-25", |stdio| stdio.max_line_bytes(4096));
        wire.initialize().await;
        let answer = wire.call(line).await;
        wire.assert_alive().await;
        answer
    });
    expected.assert_eq(&answer);
}

/// Lines that must get no answer at all; liveness proves the server read past them.
#[track_caller]
fn check_silent(line: &str) {
    let runtime =
        tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    runtime.block_on(async {
        let mut wire = Wire::start(bookshop(), "2025-11-25");
        wire.initialize().await;
        wire.send(line).await;
        wire.assert_alive().await;
    });
}

#[test]
fn malformed_json_is_a_parse_error_without_an_id() {
    check(
        r#"{"jsonrpc":"2.0","id":1,"method":"#,
        expect![[
            r#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error: EOF while parsing a value at line 1 column 33"}}"#
        ]],
    );
    check(
        "not json at all",
        expect![[
            r#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error: expected ident at line 1 column 2"}}"#
        ]],
    );
}

#[test]
fn a_batch_is_an_invalid_request() {
    check(
        r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
        expect![[
            r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request: batches (JSON arrays) are not supported since 2025-06-18: send one message at a time"}}"#
        ]],
    );
}

#[test]
fn a_scalar_is_an_invalid_request() {
    check(
        "42",
        expect![[
            r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request: a message must be a JSON object"}}"#
        ]],
    );
}

#[test]
fn a_wrong_jsonrpc_version_keeps_the_id() {
    check(
        r#"{"jsonrpc":"1.0","id":2,"method":"ping"}"#,
        expect![[
            r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32600,"message":"Invalid request: \"jsonrpc\" must be \"2.0\""}}"#
        ]],
    );
}

#[test]
fn a_missing_jsonrpc_member_is_invalid() {
    check(
        r#"{"id":2,"method":"ping"}"#,
        expect![[
            r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32600,"message":"Invalid request: \"jsonrpc\" must be \"2.0\""}}"#
        ]],
    );
}

#[test]
fn ids_of_disallowed_shapes_are_invalid() {
    check(
        r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
        expect![[
            r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request: \"id\" must be a string or an integer"}}"#
        ]],
    );
    check(
        r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#,
        expect![[
            r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request: \"id\" must be a string or an integer"}}"#
        ]],
    );
    check(
        r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#,
        expect![[
            r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request: \"id\" must be a string or an integer"}}"#
        ]],
    );
    check(
        r#"{"jsonrpc":"2.0","id":[1],"method":"ping"}"#,
        expect![[
            r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request: \"id\" must be a string or an integer"}}"#
        ]],
    );
    check(
        r#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#,
        expect![[
            r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request: \"id\" must be a string or an integer"}}"#
        ]],
    );
}

#[test]
fn ids_of_allowed_shapes_are_echoed() {
    check(
        r#"{"jsonrpc":"2.0","id":"abc","method":"ping"}"#,
        expect![[r#"{"jsonrpc":"2.0","id":"abc","result":{}}"#]],
    );
    check(
        r#"{"jsonrpc":"2.0","id":-7,"method":"ping"}"#,
        expect![[r#"{"jsonrpc":"2.0","id":-7,"result":{}}"#]],
    );
    check(
        r#"{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}"#,
        expect![[r#"{"jsonrpc":"2.0","id":9007199254740993,"result":{}}"#]],
    );
    check(
        r#"{"jsonrpc":"2.0","id":"","method":"ping"}"#,
        expect![[r#"{"jsonrpc":"2.0","id":"","result":{}}"#]],
    );
}

#[test]
fn a_method_that_is_not_a_string_is_invalid() {
    check(
        r#"{"jsonrpc":"2.0","id":3,"method":5}"#,
        expect![[
            r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32600,"message":"Invalid request: \"method\" must be a string"}}"#
        ]],
    );
}

#[test]
fn an_object_with_neither_method_nor_result_is_invalid() {
    check(
        r#"{"jsonrpc":"2.0","id":4}"#,
        expect![[
            r#"{"jsonrpc":"2.0","id":4,"error":{"code":-32600,"message":"Invalid request: missing \"method\", \"result\" or \"error\""}}"#
        ]],
    );
}

#[test]
fn an_unknown_method_names_itself_in_data() {
    check(
        r#"{"jsonrpc":"2.0","id":5,"method":"foo/bar","params":{}}"#,
        expect![[
            r#"{"jsonrpc":"2.0","id":5,"error":{"code":-32601,"message":"Method not found","data":"foo/bar"}}"#
        ]],
    );
}

#[test]
fn params_of_the_wrong_type_are_invalid_params() {
    check(
        r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":5}}"#,
        expect![[
            r#"{"jsonrpc":"2.0","id":6,"error":{"code":-32602,"message":"Invalid params for 'tools/call': invalid type: integer `5`, expected a string at line 1 column 9"}}"#
        ]],
    );
    check(
        r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"add","arguments":"{}"}}"#,
        expect![[
            r#"{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"Invalid params for 'tools/call': invalid type: string \"{}\", expected a map at line 1 column 30"}}"#
        ]],
    );
    check(
        r#"{"jsonrpc":"2.0","id":8,"method":"tools/call"}"#,
        expect![[
            r#"{"jsonrpc":"2.0","id":8,"error":{"code":-32602,"message":"Invalid params for 'tools/call': missing field `name` at line 1 column 2"}}"#
        ]],
    );
    check(
        r#"{"jsonrpc":"2.0","id":9,"method":"resources/read","params":[]}"#,
        expect![[
            r#"{"jsonrpc":"2.0","id":9,"error":{"code":-32602,"message":"Invalid params for 'resources/read': invalid length 1, expected struct ReadResourceRequestParams with 4 elements at line 1 column 2"}}"#
        ]],
    );
    check(
        r#"{"jsonrpc":"2.0","id":10,"method":"logging/setLevel","params":{"level":"loud"}}"#,
        expect![[
            r#"{"jsonrpc":"2.0","id":10,"error":{"code":-32602,"message":"Invalid params for 'logging/setLevel': unknown variant `loud`, expected one of `debug`, `info`, `notice`, `warning`, `error`, `critical`, `alert`, `emergency` at line 1 column 15"}}"#
        ]],
    );
}

#[test]
fn a_line_over_the_limit_is_answered_and_skipped() {
    let huge = format!(
        r#"{{"jsonrpc":"2.0","id":11,"method":"ping","params":{{"pad":"{}"}}}}"#,
        "x".repeat(5000)
    );
    check(
        &huge,
        expect![[
            r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request: message of more than 5061 bytes exceeds the limit of 4096"}}"#
        ]],
    );
}

#[test]
fn an_id_may_be_reused_after_its_answer() {
    // `initialize` used id 0 and was answered, so 0 is free again (a duplicate *in flight* is
    // refused: see engine.rs).
    check(
        r#"{"jsonrpc":"2.0","id":0,"method":"ping"}"#,
        expect![[r#"{"jsonrpc":"2.0","id":0,"result":{}}"#]],
    );
}

#[test]
fn notifications_never_get_an_answer() {
    check_silent(
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":999}}"#,
    );
    check_silent(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{}}"#);
    check_silent(r#"{"jsonrpc":"2.0","method":"notifications/unknown"}"#);
    check_silent(
        r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}"#,
    );
    check_silent("");
    check_silent("   ");
}

#[test]
fn a_stray_response_is_ignored() {
    check_silent(r#"{"jsonrpc":"2.0","id":77,"result":{}}"#);
    check_silent(r#"{"jsonrpc":"2.0","id":78,"error":{"code":1,"message":"x"}}"#);
}

#[test]
fn requests_before_initialize_get_a_clear_error() {
    let runtime =
        tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    let (list, ping) = runtime.block_on(async {
        let mut wire = Wire::start(bookshop(), "2025-11-25");
        let list = wire.call(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#).await;
        let ping = wire.call(r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#).await;
        wire.initialize().await;
        wire.assert_alive().await;
        (list, ping)
    });
    expect![[r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"'tools/list' before initialization: send 'initialize' first, or carry the 2026-07-28 '_meta' envelope (io.modelcontextprotocol/protocolVersion and clientCapabilities)"}}"#]].assert_eq(&list);
    expect![[r#"{"jsonrpc":"2.0","id":2,"result":{}}"#]].assert_eq(&ping);
}
