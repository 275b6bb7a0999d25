//! Every claim of the "Handling errors" page, on the wire, in both eras: literal requests in,
//! exact JSON out, each answer validated against the revision's official schema.

use expect_test::{Expect, expect};

use crate::support::{MODERN_META, Wire, bookshop};

/// Runs `params` of `method` in both eras and checks each answer.
#[track_caller]
fn check(method: &str, params: &str, handshake: Expect, modern: Expect) {
    let runtime =
        tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    let (old, new) = runtime.block_on(async {
        let mut wire = Wire::start(bookshop(), "2025-11-25");
        wire.initialize().await;
        let old = wire.call(&format!(r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{{{params}}}}}"#)).await;
        wire.assert_alive().await;

        let mut wire = Wire::start(bookshop(), "2026-07-28");
        let sep = if params.is_empty() { "" } else { "," };
        let new = wire.call(&format!(r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{{{params}{sep}{MODERN_META}}}}}"#)).await;
        wire.assert_alive().await;
        (old, new)
    });
    handshake.assert_eq(&old);
    modern.assert_eq(&new);
}

#[test]
fn a_tool_that_works() {
    check(
        "tools/call",
        r#""name":"get_author","arguments":{"title":"Dune"}"#,
        expect![[
            r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"Frank Herbert"}]}}"#
        ]],
        expect![[
            r#"{"jsonrpc":"2.0","id":1,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"Bookshop","version":"1.0.0"}},"resultType":"complete","content":[{"type":"text","text":"Frank Herbert"}]}}"#
        ]],
    );
}

#[test]
fn an_ordinary_error_is_a_tool_error_the_model_reads() {
    check(
        "tools/call",
        r#""name":"get_author","arguments":{"title":"Nothing"}"#,
        expect![[
            r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"Error executing tool get_author: No book titled 'Nothing' in the catalog."}],"isError":true}}"#
        ]],
        expect![[
            r#"{"jsonrpc":"2.0","id":1,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"Bookshop","version":"1.0.0"}},"resultType":"complete","content":[{"type":"text","text":"Error executing tool get_author: No book titled 'Nothing' in the catalog."}],"isError":true}}"#
        ]],
    );
}

#[test]
fn an_mcp_error_fails_the_whole_request_verbatim() {
    check(
        "tools/call",
        r#""name":"get_author_strict","arguments":{"title":"Nothing"}"#,
        expect![[
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"No book titled 'Nothing' in the catalog."}}"#
        ]],
        expect![[
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"No book titled 'Nothing' in the catalog."}}"#
        ]],
    );
}

#[test]
fn a_tool_error_is_shown_even_when_messages_are_withheld() {
    check(
        "tools/call",
        r#""name":"model_error","arguments":{}"#,
        expect![[
            r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"Error executing tool model_error: try a shorter title"}],"isError":true}}"#
        ]],
        expect![[
            r#"{"jsonrpc":"2.0","id":1,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"Bookshop","version":"1.0.0"}},"resultType":"complete","content":[{"type":"text","text":"Error executing tool model_error: try a shorter title"}],"isError":true}}"#
        ]],
    );
}

#[test]
fn a_panic_is_a_tool_error_without_the_message() {
    check(
        "tools/call",
        r#""name":"boom","arguments":{}"#,
        expect![[
            r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"Error executing tool boom"}],"isError":true}}"#
        ]],
        expect![[
            r#"{"jsonrpc":"2.0","id":1,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"Bookshop","version":"1.0.0"}},"resultType":"complete","content":[{"type":"text","text":"Error executing tool boom"}],"isError":true}}"#
        ]],
    );
}

#[test]
fn a_violated_maximum_is_rejected_before_the_function_runs() {
    check(
        "tools/call",
        r#""name":"search_books","arguments":{"query":"d","limit":999}"#,
        expect![[
            r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"Error executing tool search_books: Invalid arguments: argument 'limit': 999 is greater than the maximum of 50"}],"isError":true}}"#
        ]],
        expect![[
            r#"{"jsonrpc":"2.0","id":1,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"Bookshop","version":"1.0.0"}},"resultType":"complete","content":[{"type":"text","text":"Error executing tool search_books: Invalid arguments: argument 'limit': 999 is greater than the maximum of 50"}],"isError":true}}"#
        ]],
    );
}

#[test]
fn a_wrong_type_is_rejected_before_the_function_runs() {
    check(
        "tools/call",
        r#""name":"get_author","arguments":{"title":5}"#,
        expect![[
            r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"Error executing tool get_author: Invalid arguments: argument 'title': 5 is not of type \"string\""}],"isError":true}}"#
        ]],
        expect![[
            r#"{"jsonrpc":"2.0","id":1,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"Bookshop","version":"1.0.0"}},"resultType":"complete","content":[{"type":"text","text":"Error executing tool get_author: Invalid arguments: argument 'title': 5 is not of type \"string\""}],"isError":true}}"#
        ]],
    );
}

#[test]
fn a_missing_argument_is_rejected_before_the_function_runs() {
    check(
        "tools/call",
        r#""name":"search_books","arguments":{}"#,
        expect![[
            r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"Error executing tool search_books: Invalid arguments: \"query\" is a required property"}],"isError":true}}"#
        ]],
        expect![[
            r#"{"jsonrpc":"2.0","id":1,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"Bookshop","version":"1.0.0"}},"resultType":"complete","content":[{"type":"text","text":"Error executing tool search_books: Invalid arguments: \"query\" is a required property"}],"isError":true}}"#
        ]],
    );
}

#[test]
fn defaults_apply_and_structured_output_carries_numbers() {
    check(
        "tools/call",
        r#""name":"add","arguments":{"a":2,"b":3}"#,
        expect![[
            r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"5"}],"structuredContent":{"result":5}}}"#
        ]],
        expect![[
            r#"{"jsonrpc":"2.0","id":1,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"Bookshop","version":"1.0.0"}},"resultType":"complete","content":[{"type":"text","text":"5"}],"structuredContent":{"result":5}}}"#
        ]],
    );
}

#[test]
fn an_unknown_tool_is_a_protocol_error() {
    check(
        "tools/call",
        r#""name":"no_such_tool","arguments":{}"#,
        expect![[
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown tool: no_such_tool"}}"#
        ]],
        expect![[
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown tool: no_such_tool"}}"#
        ]],
    );
}

#[test]
fn a_resource_that_exists() {
    check(
        "resources/read",
        r#""uri":"books://Dune""#,
        expect![[
            r#"{"jsonrpc":"2.0","id":1,"result":{"contents":[{"uri":"books://Dune","mimeType":"text/plain","text":"Dune by Frank Herbert"}]}}"#
        ]],
        expect![[
            r#"{"jsonrpc":"2.0","id":1,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"Bookshop","version":"1.0.0"}},"resultType":"complete","contents":[{"uri":"books://Dune","mimeType":"text/plain","text":"Dune by Frank Herbert"}],"ttlMs":0,"cacheScope":"private"}}"#
        ]],
    );
}

#[test]
fn a_resource_that_does_not_exist() {
    check(
        "resources/read",
        r#""uri":"books://Nothing""#,
        expect![[
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"No book titled 'Nothing' in the catalog.","data":{"uri":"books://Nothing"}}}"#
        ]],
        expect![[
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"No book titled 'Nothing' in the catalog.","data":{"uri":"books://Nothing"}}}"#
        ]],
    );
}

#[test]
fn a_uri_that_matches_nothing() {
    check(
        "resources/read",
        r#""uri":"nomatch://x""#,
        expect![[
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown resource: nomatch://x","data":{"uri":"nomatch://x"}}}"#
        ]],
        expect![[
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown resource: nomatch://x","data":{"uri":"nomatch://x"}}}"#
        ]],
    );
}

#[test]
fn an_encoded_traversal_matches_nothing() {
    check(
        "resources/read",
        r#""uri":"books://..%2F..%2Fetc""#,
        expect![[
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown resource: books://..%2F..%2Fetc","data":{"uri":"books://..%2F..%2Fetc"}}}"#
        ]],
        expect![[
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown resource: books://..%2F..%2Fetc","data":{"uri":"books://..%2F..%2Fetc"}}}"#
        ]],
    );
}

#[test]
fn another_resource_error_is_internal_with_the_uri() {
    check(
        "resources/read",
        r#""uri":"broken://Dune""#,
        expect![[
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"backend down for Dune","data":{"uri":"broken://Dune"}}}"#
        ]],
        expect![[
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"backend down for Dune","data":{"uri":"broken://Dune"}}}"#
        ]],
    );
}

#[test]
fn tools_are_listed_with_their_schemas() {
    check(
        "tools/list",
        "",
        expect![[
            r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"get_author","description":"Look up the author of a book in the catalog.","inputSchema":{"type":"object","properties":{"title":{"type":"string"}},"required":["title"]}},{"name":"get_author_strict","inputSchema":{"type":"object","properties":{"title":{"type":"string"}},"required":["title"]}},{"name":"search_books","description":"Search the catalog by title or author.","inputSchema":{"type":"object","properties":{"query":{"type":"string","description":"Title or author to search for."},"limit":{"type":"integer","format":"int64","description":"Maximum number of results.","minimum":1,"maximum":50,"default":10}},"required":["query"]}},{"name":"add","inputSchema":{"type":"object","properties":{"a":{"type":"integer","format":"int64"},"b":{"type":"integer","format":"int64"}},"required":["a","b"]},"outputSchema":{"type":"object","properties":{"result":{"type":"integer"}},"required":["result"]}},{"name":"boom","inputSchema":{"type":"object","properties":{}}},{"name":"model_error","inputSchema":{"type":"object","properties":{}}}]}}"#
        ]],
        expect![[
            r#"{"jsonrpc":"2.0","id":1,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"Bookshop","version":"1.0.0"}},"resultType":"complete","tools":[{"name":"get_author","description":"Look up the author of a book in the catalog.","inputSchema":{"type":"object","properties":{"title":{"type":"string"}},"required":["title"]}},{"name":"get_author_strict","inputSchema":{"type":"object","properties":{"title":{"type":"string"}},"required":["title"]}},{"name":"search_books","description":"Search the catalog by title or author.","inputSchema":{"type":"object","properties":{"query":{"type":"string","description":"Title or author to search for."},"limit":{"type":"integer","format":"int64","description":"Maximum number of results.","minimum":1,"maximum":50,"default":10}},"required":["query"]}},{"name":"add","inputSchema":{"type":"object","properties":{"a":{"type":"integer","format":"int64"},"b":{"type":"integer","format":"int64"}},"required":["a","b"]},"outputSchema":{"type":"object","properties":{"result":{"type":"integer"}},"required":["result"]}},{"name":"boom","inputSchema":{"type":"object","properties":{}}},{"name":"model_error","inputSchema":{"type":"object","properties":{}}}],"ttlMs":0,"cacheScope":"private"}}"#
        ]],
    );
}

#[test]
fn templates_are_listed() {
    check(
        "resources/templates/list",
        "",
        expect![[
            r#"{"jsonrpc":"2.0","id":1,"result":{"resourceTemplates":[{"uriTemplate":"books://{title}","name":"book"},{"uriTemplate":"broken://{title}","name":"broken://{title}"}]}}"#
        ]],
        expect![[
            r#"{"jsonrpc":"2.0","id":1,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"Bookshop","version":"1.0.0"}},"resultType":"complete","resourceTemplates":[{"uriTemplate":"books://{title}","name":"book"},{"uriTemplate":"broken://{title}","name":"broken://{title}"}],"ttlMs":0,"cacheScope":"private"}}"#
        ]],
    );
}

#[test]
fn a_prompt_renders() {
    check(
        "prompts/get",
        r#""name":"review","arguments":{"title":"Dune"}"#,
        expect![[
            r#"{"jsonrpc":"2.0","id":1,"result":{"messages":[{"role":"user","content":{"type":"text","text":"Write a two-sentence review of Dune."}}]}}"#
        ]],
        expect![[
            r#"{"jsonrpc":"2.0","id":1,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"Bookshop","version":"1.0.0"}},"resultType":"complete","messages":[{"role":"user","content":{"type":"text","text":"Write a two-sentence review of Dune."}}]}}"#
        ]],
    );
}

#[test]
fn an_unknown_prompt_and_a_missing_argument_are_invalid_params() {
    check(
        "prompts/get",
        r#""name":"nope","arguments":{}"#,
        expect![[
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown prompt: nope"}}"#
        ]],
        expect![[
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown prompt: nope"}}"#
        ]],
    );
    check(
        "prompts/get",
        r#""name":"review","arguments":{}"#,
        expect![[
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Missing required arguments for prompt 'review': title"}}"#
        ]],
        expect![[
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Missing required arguments for prompt 'review': title"}}"#
        ]],
    );
}

#[test]
fn prompts_are_listed() {
    check(
        "prompts/list",
        "",
        expect![[
            r#"{"jsonrpc":"2.0","id":1,"result":{"prompts":[{"name":"review","description":"Ask for a short review of a book.","arguments":[{"name":"title","required":true}]}]}}"#
        ]],
        expect![[
            r#"{"jsonrpc":"2.0","id":1,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"Bookshop","version":"1.0.0"}},"resultType":"complete","prompts":[{"name":"review","description":"Ask for a short review of a book.","arguments":[{"name":"title","required":true}]}],"ttlMs":0,"cacheScope":"private"}}"#
        ]],
    );
}
