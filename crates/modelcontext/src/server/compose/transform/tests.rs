use serde_json::json;

use super::*;

fn tool(name: &str, schema: serde_json::Value) -> Tool {
    let serde_json::Value::Object(schema) = schema else { panic!("object") };
    Tool::new(name, schema)
}

#[test]
fn patterns_match_whole_names_with_stars_for_any_run() {
    assert!(matches_pattern("get_author", "get_author"));
    assert!(!matches_pattern("get_author", "get_authors"));
    assert!(matches_pattern("get_*", "get_author"));
    assert!(matches_pattern("*_author", "get_author"));
    assert!(matches_pattern("g*t*r", "get_author"));
    assert!(!matches_pattern("get_*_x", "get_author"));
    assert!(matches_pattern("*", ""));
}

#[test]
fn uris_take_the_prefix_after_the_scheme_and_give_it_back() {
    let transform = Transform::new().namespace("docs");
    for (upstream, shown) in [
        ("file:///a.txt", "file://docs//a.txt"),
        ("ui://books/view", "ui://docs/books/view"),
        ("urn:isbn:1", "urn:docs/isbn:1"),
        ("books://{title}", "books://docs/{title}"),
    ] {
        assert_eq!(transform.shown_uri(upstream), shown);
        assert_eq!(transform.upstream_uri(shown).as_deref(), Some(upstream));
    }
    assert_eq!(transform.upstream_uri("ui://other/books/view"), None);
    assert_eq!(Transform::new().upstream_uri("ui://x").as_deref(), Some("ui://x"));
}

#[test]
fn a_tool_is_filtered_renamed_namespaced_and_described() {
    let transform = Transform::new()
        .namespace("shop")
        .allow(["get_*", "search"])
        .deny(["get_secret"])
        .rename("search", "find")
        .describe("find_me", "unused");
    let schema = json!({"type": "object"});
    assert!(transform.tool(tool("delete", schema.clone())).is_none());
    assert!(transform.tool(tool("get_secret", schema.clone())).is_none());
    let (shown, route, _) = transform.tool(tool("search", schema.clone())).expect("allowed");
    assert_eq!(shown.name, "shop_find");
    assert_eq!(route.upstream_name, "search");
    let described = Transform::new().describe("search", "Find a book by title.");
    let (shown, _, _) = described.tool(tool("search", schema)).expect("shown");
    assert_eq!(shown.description.as_deref(), Some("Find a book by title."));
}

#[test]
fn arguments_are_hidden_defaulted_and_renamed_both_ways() {
    let transform = Transform::new()
        .hide_argument("search", "store", "main")
        .default_argument("search", "limit", 10)
        .rename_argument("search", "q", "query");
    let schema = json!({
        "type": "object",
        "properties": {"store": {"type": "string"}, "limit": {"type": "integer"}, "q": {"type": "string"}},
        "required": ["store", "limit", "q"]
    });
    let (shown, route, _) = transform.tool(tool("search", schema)).expect("shown");
    assert_eq!(
        serde_json::Value::Object(shown.input_schema),
        json!({
            "type": "object",
            "properties": {"limit": {"type": "integer", "default": 10}, "query": {"type": "string"}},
            "required": ["query"]
        })
    );
    let serde_json::Value::Object(sent) = json!({"query": "dune", "store": "sneaky"}) else {
        panic!("object")
    };
    assert_eq!(
        serde_json::Value::Object(route.upstream_arguments(sent)),
        json!({"q": "dune", "store": "main", "limit": 10})
    );
}

#[test]
fn code_sees_the_shown_tool_and_may_hide_it() {
    let transform = Transform::new().namespace("a").map_tools(|mut tool| {
        tool.title = Some(tool.name.to_uppercase());
        (tool.name != "a_hidden").then_some(tool)
    });
    let schema = json!({"type": "object"});
    let (shown, route, _) = transform.tool(tool("get", schema.clone())).expect("shown");
    assert_eq!((shown.title.as_deref(), route.upstream_name.as_str()), (Some("A_GET"), "get"));
    assert!(transform.tool(tool("hidden", schema)).is_none());
}

#[test]
fn an_apps_view_follows_its_resource() {
    let mut meta = serde_json::Map::new();
    meta.insert("ui".into(), json!({"resourceUri": "ui://books/view"}));
    let mut shown = tool("view", json!({"type": "object"}));
    shown.meta = Some(meta);
    let (shown, _, _) = Transform::new().namespace("b").tool(shown).expect("shown");
    assert_eq!(shown.meta.expect("meta")["ui"]["resourceUri"], "ui://b/books/view");
}
