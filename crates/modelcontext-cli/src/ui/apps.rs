//! MCP Apps (`io.modelcontextprotocol/ui`) in the inspector: the view a tool links to, served
//! at `/view/N` for the page to frame.
//!
//! The page frames the view with `sandbox="allow-scripts"` (no `allow-same-origin`), so the
//! view runs in an opaque origin: it cannot read the page, and its requests to the API carry
//! `Origin: null`, which the guard refuses. It is served from a URL of its own rather than
//! `srcdoc` or a `blob:` URL because those inherit the page's policy, which runs no inline
//! script; a view is inline script, so it gets its own policy, built from what its server
//! declared (`_meta.ui.csp`) and nothing wider. The browser permissions it asked for
//! (`_meta.ui.permissions`) become the frame's `allow` attribute, for the four the extension
//! names and nothing else.

use axum::extract::{Json, Path, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use modelcontext::types::{AppCsp, AppPermissions};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::api::{Answer, Ui, sdk};
use crate::failure::Failure;

#[derive(Deserialize)]
pub struct AppRequest {
    tool: String,
}

/// `POST /api/app {"tool": NAME}`: the view the tool links to (read with `resources/read`),
/// as `{"view": {"uri", "url", "prefersBorder", "policy", "allow", "permissions"}}`, or
/// `{"view": null}` for a tool without one. `allow` is the frame's `allow` attribute (empty
/// when nothing is granted) and `permissions` the same grant in the extension's shape, for the
/// view's `hostCapabilities.sandbox`.
pub async fn app(State(session): Ui, Json(request): Json<AppRequest>) -> Answer {
    let client = session.client()?;
    let tools = client.list_all_tools().await.map_err(sdk)?;
    let Some(tool) = tools.iter().find(|tool| tool.name == request.tool) else {
        return Err(Failure::Usage(format!("no tool called {:?}", request.tool)).into());
    };
    let Some(view) = client.app_for_tool(tool).await.map_err(sdk)? else {
        return Ok(Json(json!({"view": null})));
    };
    let ui = view.ui.clone().unwrap_or_default();
    let policy = view_policy(ui.csp.as_ref());
    let granted = granted_permissions(ui.permissions.as_ref());
    let allow = granted.iter().map(|(_, feature)| *feature).collect::<Vec<_>>().join("; ");
    let permissions: Map<String, Value> =
        granted.iter().map(|(key, _)| ((*key).to_owned(), json!({}))).collect();
    let uri = view.uri.clone();
    let id = session.views.keep(view);
    Ok(Json(json!({"view": {
        "uri": uri,
        "url": format!("/view/{id}"),
        "prefersBorder": ui.prefers_border,
        "policy": policy,
        "allow": allow,
        "permissions": permissions,
    }})))
}

/// `GET /view/N`: the view's HTML under its own Content-Security-Policy.
pub async fn view(State(session): Ui, Path(id): Path<u64>) -> Response {
    let Some(view) = session.views.get(id) else {
        return (StatusCode::NOT_FOUND, "no such view\n").into_response();
    };
    let policy = view_policy(view.ui.as_ref().and_then(|ui| ui.csp.as_ref()));
    let policy = HeaderValue::from_str(&policy)
        .unwrap_or_else(|_| HeaderValue::from_static("default-src 'none'; sandbox"));
    let content_type = HeaderValue::from_static("text/html; charset=utf-8");
    ([(header::CONTENT_TYPE, content_type), (header::CONTENT_SECURITY_POLICY, policy)], view.html)
        .into_response()
}

/// The view's Content-Security-Policy: the extension's restrictive default (inline script
/// and style, `data:` images and media, no network, no nested frames) widened only by the
/// origins the resource declared. Only the page may frame it, and it stays sandboxed even
/// when opened on its own.
pub fn view_policy(csp: Option<&AppCsp>) -> String {
    let empty = AppCsp::default();
    let csp = csp.unwrap_or(&empty);
    let resources = sources(&csp.resource_domains);
    let or_none = |domains: &[String]| {
        let listed = sources(domains);
        if listed.is_empty() { "'none'".to_owned() } else { listed }
    };
    let with =
        |base: &str| format!("{base}{}{resources}", if resources.is_empty() { "" } else { " " });
    [
        "default-src 'none'".to_owned(),
        format!("script-src {}", with("'unsafe-inline'")),
        format!("style-src {}", with("'unsafe-inline'")),
        format!("img-src {}", with("data:")),
        format!("font-src {}", with("data:")),
        format!("media-src {}", with("data:")),
        format!("connect-src {}", or_none(&csp.connect_domains)),
        format!("frame-src {}", or_none(&csp.frame_domains)),
        format!("base-uri {}", or_none(&csp.base_uri_domains)),
        "object-src 'none'".to_owned(),
        "form-action 'none'".to_owned(),
        "frame-ancestors 'self'".to_owned(),
        "sandbox allow-scripts".to_owned(),
    ]
    .join("; ")
}

/// The permissions a view asked for that the extension names, as pairs of its key
/// (`_meta.ui.permissions`) and the Permissions Policy feature the frame's `allow` grants.
/// The features are separated by `;` in the attribute: a space would make the next one an
/// origin of the first.
fn granted_permissions(asked: Option<&AppPermissions>) -> Vec<(&'static str, &'static str)> {
    let Some(asked) = asked else { return Vec::new() };
    let named = [
        (asked.camera.is_some(), "camera", "camera"),
        (asked.microphone.is_some(), "microphone", "microphone"),
        (asked.geolocation.is_some(), "geolocation", "geolocation"),
        (asked.clipboard_write.is_some(), "clipboardWrite", "clipboard-write"),
    ];
    named
        .into_iter()
        .filter(|(wanted, ..)| *wanted)
        .map(|(_, key, feature)| (key, feature))
        .collect()
}

/// The declared origins that are plain source expressions, space-separated. Anything else
/// (a `;` or space that would start another directive, a quoted keyword such as
/// `'unsafe-eval'`, a bare `*`) is left out: a server names origins, not policy.
fn sources(domains: &[String]) -> String {
    let plain = |domain: &&String| {
        !domain.is_empty()
            && domain.as_str() != "*"
            && domain.chars().all(|c| c.is_ascii_alphanumeric() || "-._:/*[]%".contains(c))
    };
    domains.iter().filter(plain).map(String::as_str).collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_view_without_declared_origins_gets_the_restrictive_policy() {
        assert_eq!(
            view_policy(None),
            "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; \
             img-src data:; font-src data:; media-src data:; connect-src 'none'; \
             frame-src 'none'; base-uri 'none'; object-src 'none'; form-action 'none'; \
             frame-ancestors 'self'; sandbox allow-scripts"
        );
    }

    #[test]
    fn only_the_permissions_the_extension_names_are_granted() {
        let asked: AppPermissions = serde_json::from_value(json!({
            "camera": {}, "clipboardWrite": {}, "usb": {}, "geolocation": {"why": "maps"},
        }))
        .expect("permissions");
        assert_eq!(
            granted_permissions(Some(&asked)),
            [
                ("camera", "camera"),
                ("geolocation", "geolocation"),
                ("clipboardWrite", "clipboard-write")
            ]
        );
        assert!(granted_permissions(None).is_empty());
    }

    #[test]
    fn declared_origins_widen_only_their_directives_and_cannot_inject_policy() {
        let csp: AppCsp = serde_json::from_value(json!({
            "connectDomains": ["https://api.example.com", "https://x.example; script-src *"],
            "resourceDomains": ["https://cdn.example.com", "'unsafe-eval'", "*"],
            "frameDomains": ["https://maps.example.com"],
        }))
        .expect("csp");
        assert_eq!(
            view_policy(Some(&csp)),
            "default-src 'none'; script-src 'unsafe-inline' https://cdn.example.com; \
             style-src 'unsafe-inline' https://cdn.example.com; \
             img-src data: https://cdn.example.com; font-src data: https://cdn.example.com; \
             media-src data: https://cdn.example.com; connect-src https://api.example.com; \
             frame-src https://maps.example.com; base-uri 'none'; object-src 'none'; \
             form-action 'none'; frame-ancestors 'self'; sandbox allow-scripts"
        );
    }
}
