//! Pagination: configurable pages, deterministic order, sealed cursors.

use modelcontext::{Client, EraMode, McpServer, PromptDef, ToolDef};
use serde_json::Value;

use crate::support::{MODERN_META, Wire};

/// A server with `count` tools named `t0000`.. in registration order, and one prompt.
fn many_tools(count: usize, page_size: usize) -> McpServer {
    let tools = (0..count).map(|i| ToolDef::new(format!("t{i:04}"), || async { "ok" }));
    let prompt = PromptDef::new("p", || async { "hi".to_owned() });
    McpServer::new("many")
        .page_size(page_size)
        .tools(tools)
        .expect("tools")
        .prompt(prompt)
        .expect("prompt")
}

#[tokio::test]
async fn list_all_tools_follows_cursors_over_a_thousand_tools() {
    let server = many_tools(1000, 100);
    for mode in [EraMode::Handshake, EraMode::Modern] {
        let client = Client::builder().era(mode).connect(server.in_memory()).await.expect("up");
        let first = client.list_tools(None).await.expect("page");
        assert_eq!(first.tools.len(), 100);
        assert!(first.next_cursor.is_some());
        let tools = client.list_all_tools().await.expect("all");
        let names: Vec<String> = tools.into_iter().map(|t| t.name).collect();
        let expected: Vec<String> = (0..1000).map(|i| format!("t{i:04}")).collect();
        assert_eq!(names, expected, "{mode:?}");
    }
}

/// The `nextCursor` of an answer line.
fn next_cursor(line: &str) -> String {
    let value: Value = serde_json::from_str(line).expect("json");
    value["result"]["nextCursor"].as_str().expect("a next cursor").to_owned()
}

#[tokio::test]
async fn forged_altered_and_foreign_cursors_are_invalid_params() {
    let mut wire = Wire::start(many_tools(3, 2), "2026-07-28");
    let list = |id: u32, method: &str, cursor: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{{"cursor":"{cursor}",{MODERN_META}}}}}"#
        )
    };
    let first = wire
        .call(&format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{{MODERN_META}}}}}"#
        ))
        .await;
    let cursor = next_cursor(&first);
    let second = wire.call(&list(2, "tools/list", &cursor)).await;
    assert!(second.contains(r#""name":"t0002""#) && !second.contains("nextCursor"), "{second}");

    let mut altered = cursor.clone().into_bytes();
    altered[0] = if altered[0] == b'A' { b'B' } else { b'A' };
    let altered = String::from_utf8(altered).expect("ascii");
    let other_server = next_cursor(
        &Wire::start(many_tools(3, 2), "2026-07-28")
            .call(&format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{{MODERN_META}}}}}"#
            ))
            .await,
    );
    for (id, method, bad) in [
        (3, "tools/list", altered.as_str()),
        (4, "tools/list", "not-a-cursor"),
        (5, "tools/list", ""),
        (6, "prompts/list", cursor.as_str()),
        (7, "tools/list", other_server.as_str()),
    ] {
        let answer = wire.call(&list(id, method, bad)).await;
        assert_eq!(
            answer,
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32602,"message":"Invalid cursor"}}}}"#
            )
        );
    }
    wire.assert_alive().await;
}

#[tokio::test]
async fn pages_are_the_same_in_the_handshake_era() {
    let mut wire = Wire::start(many_tools(3, 2), "2025-11-25");
    wire.initialize().await;
    let first = wire.call(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#).await;
    assert!(first.contains(r#""name":"t0001""#) && !first.contains("t0002"), "{first}");
    let cursor = next_cursor(&first);
    let second = wire
        .call(&format!(
            r#"{{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{{"cursor":"{cursor}"}}}}"#
        ))
        .await;
    assert!(
        second.starts_with(r#"{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"t0002""#),
        "{second}"
    );
}

#[tokio::test]
async fn a_cursor_from_one_instance_pages_on_another_with_the_same_key_ring() {
    use modelcontext::server::KeyRing;
    let ring = |key: &str| KeyRing::from_hex([key.repeat(32)]).expect("hex").audience("shop");
    let list = |cursor: &str| {
        let cursor =
            if cursor.is_empty() { String::new() } else { format!(r#""cursor":"{cursor}","#) };
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{{cursor}{MODERN_META}}}}}"#
        )
    };
    let first =
        Wire::start(many_tools(3, 2).key_ring(ring("11")), "2026-07-28").call(&list("")).await;
    let cursor = next_cursor(&first);
    let on_b =
        Wire::start(many_tools(3, 2).key_ring(ring("11")), "2026-07-28").call(&list(&cursor)).await;
    assert!(on_b.contains(r#""name":"t0002""#), "{on_b}");
    let stranger =
        Wire::start(many_tools(3, 2).key_ring(ring("33")), "2026-07-28").call(&list(&cursor)).await;
    assert!(stranger.contains(r#""code":-32602"#), "{stranger}");
}
