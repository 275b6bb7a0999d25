//! MCP Apps (`io.modelcontextprotocol/ui`): an app's HTML as a `ui://` resource with the
//! extension's MIME type and `_meta.ui`, tools linked to it, app-only tools kept from the
//! model by the host, and the host fetching a tool's view.

use modelcontext::server::{AppResource, NoArgs};
use modelcontext::types::{AppPermissions, UiResourceMeta, Visibility};
use modelcontext::{Client, EraMode, McpServer, ToolDef};
use serde_json::{Value, json};

use crate::support::{MODERN_META, Wire};

const HTML: &str = "<!DOCTYPE html><html><body>hi</body></html>";

fn app_server() -> McpServer {
    let mut permissions = AppPermissions::default();
    permissions.camera = Some(Default::default());
    let view = AppResource::new("ui://shop/cart", "Cart", HTML)
        .description("The shopping cart")
        .connect_domains(["https://api.shop.example"])
        .resource_domains(["https://cdn.shop.example"])
        .permissions(permissions)
        .prefers_border(false);
    let show = ToolDef::new("show_cart", |_: NoArgs| async { "2 items" }).ui("ui://shop/cart");
    let add =
        ToolDef::new("add_item", |_: NoArgs| async { "added" }).ui("ui://shop/cart").app_only();
    let plain = ToolDef::new("plain", |_: NoArgs| async { "plain" });
    McpServer::new("shop")
        .app(view)
        .and_then(|s| s.tool(show))
        .and_then(|s| s.tool(add))
        .and_then(|s| s.tool(plain))
        .expect("registers")
}

fn request(id: u32, method: &str, params: &str) -> String {
    let sep = if params.is_empty() { "" } else { "," };
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{{{params}{sep}{MODERN_META}}}}}"#
    )
}

fn result(line: &str) -> Value {
    let value: Value = serde_json::from_str(line).expect("json");
    value["result"].clone()
}

#[tokio::test]
async fn the_view_is_a_ui_resource_with_the_apps_mime_type_and_its_csp() {
    let mut wire = Wire::start(app_server(), "2026-07-28");
    let listed = result(&wire.call(&request(1, "resources/list", "")).await);
    let resource = &listed["resources"][0];
    assert_eq!(resource["uri"], "ui://shop/cart");
    assert_eq!(resource["mimeType"], "text/html;profile=mcp-app");
    assert_eq!(
        resource["_meta"]["ui"]["csp"]["connectDomains"],
        json!(["https://api.shop.example"])
    );
    let read = result(&wire.call(&request(2, "resources/read", r#""uri":"ui://shop/cart""#)).await);
    let contents = &read["contents"][0];
    assert_eq!(contents["mimeType"], "text/html;profile=mcp-app");
    assert_eq!(contents["text"], HTML);
    let ui = &contents["_meta"]["ui"];
    assert_eq!(ui["csp"]["resourceDomains"], json!(["https://cdn.shop.example"]));
    assert_eq!(ui["permissions"], json!({"camera": {}}));
    assert_eq!(ui["prefersBorder"], false);
    let discovered = result(&wire.call(&request(3, "server/discover", "")).await);
    assert!(discovered["capabilities"]["extensions"]["io.modelcontextprotocol/ui"].is_object());
}

#[tokio::test]
async fn tools_carry_their_view_and_visibility() {
    let mut wire = Wire::start(app_server(), "2026-07-28");
    let listed = result(&wire.call(&request(1, "tools/list", "")).await);
    let tools = listed["tools"].as_array().expect("tools");
    let meta = |name: &str| {
        tools.iter().find(|t| t["name"] == name).map(|t| t["_meta"].clone()).expect(name)
    };
    assert_eq!(meta("show_cart"), json!({"ui": {"resourceUri": "ui://shop/cart"}}));
    assert_eq!(
        meta("add_item"),
        json!({"ui": {"resourceUri": "ui://shop/cart", "visibility": ["app"]}})
    );
    assert_eq!(meta("plain"), Value::Null);
}

#[tokio::test]
async fn a_host_hides_app_only_tools_from_the_model_and_fetches_the_view() {
    let server = app_server();
    let host = Client::builder().era(EraMode::Modern).apps().connect(server.in_memory()).await;
    let host = host.expect("connects");
    let model_tools = host.list_model_tools().await.expect("tools");
    let names: Vec<&str> = model_tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["show_cart", "plain"]);
    let show = &model_tools[0];
    let view = host.app_for_tool(show).await.expect("read").expect("a view");
    assert_eq!((view.uri.as_str(), view.html.as_str()), ("ui://shop/cart", HTML));
    let ui: UiResourceMeta = view.ui.expect("settings");
    let csp = ui.csp.expect("a csp");
    assert_eq!(csp.connect_domains, ["https://api.shop.example"]);
    assert!(host.app_for_tool(&model_tools[1]).await.expect("read").is_none());
    let all = host.list_all_tools().await.expect("tools");
    let add = all.iter().find(|t| t.name == "add_item").expect("listed for the view");
    let add_view = host.app_for_tool(add).await.expect("read").expect("a view");
    assert_eq!(add_view.visibility, Some(vec![Visibility::App]));
    let pressed = host.call_tool("add_item", json!({})).await.expect("the view may call it");
    assert_eq!(pressed.is_error, None);
}

#[tokio::test]
async fn an_app_needs_a_ui_uri() {
    let refused =
        McpServer::new("s").app(AppResource::new("https://shop.example/cart", "Cart", HTML));
    let error = refused.expect_err("not ui://");
    assert!(error.to_string().contains("must start with ui://"), "{error}");
}

#[cfg(feature = "macros")]
#[test]
fn the_tool_macro_links_a_view() {
    /// Shows the cart.
    #[modelcontext::tool(ui = "ui://shop/cart", app_only)]
    fn cart_button() -> &'static str {
        "pressed"
    }
    let def = cart_button::tool();
    let meta = def.definition().meta.clone().map(Value::Object);
    assert_eq!(meta, Some(json!({"ui": {"resourceUri": "ui://shop/cart", "visibility": ["app"]}})));
}
