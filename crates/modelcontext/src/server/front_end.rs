//! The seam between the server core and its HTTP front end (`server::http`, feature `http`):
//! everything the front end uses of the core besides the public API. Being a child module,
//! `server::http` could reach further, so this is a rule kept by review (`grep -rn
//! "crate::server::" src/server/http` lists only this module and public items), not by the
//! compiler. The core never imports the front end.
//!
//! A front end hands the core a parsed request ([`parse_request`]) and the connection's
//! [`Extensions`](super::Extensions), and gets back a [`Reply`](crate::engine::Reply) it maps
//! to its own wire:
//! - a handshake-era session's POSTs go through a [`SharedSession`] made by
//!   [`McpServer::http_session`] (or rebuilt from a [`SessionRecord`]);
//! - a stateless or 2026-07-28 request goes to [`McpServer::answer_stateless`] with the
//!   [`ClientView`] it describes ([`modern_view`]; [`removed_in_modern`] names what that era
//!   refused);
//! - what the front end must know of the catalog before the core parses a request (the JSON
//!   depth limit, a tool's definition for header mirrors, its scopes) it asks here.

use std::sync::Arc;

pub(crate) use super::ServerInner;
pub(crate) use super::context::ClientView;
pub(crate) use super::parse::parse_request;
pub(crate) use super::session::{modern_view, removed_in_modern};
pub use super::session_record::{SessionChange, SessionRecord};
pub(crate) use super::shared_session::SharedSession;
pub(crate) use super::tasks::TaskRelay;

use super::tool::ToolEntry;
use super::{Extensions, McpServer, session, stateless, telemetry};
impl McpServer {
    /// The JSON nesting limit the HTTP server applies (see [`McpServer::max_json_depth`]).
    pub(crate) fn json_depth_limit(&self) -> usize {
        self.inner.max_json_depth
    }

    /// The metric instruments of this server (feature `otel`).
    #[cfg(feature = "otel")]
    pub(crate) fn instruments(&self) -> Arc<crate::observe::otel::Instruments> {
        self.inner.instruments()
    }

    /// A registered tool (the HTTP layer checks its `x-mcp-header` mirrors, see
    /// [`header_mirrors`]).
    pub(crate) fn tool_entry(&self, name: &str) -> Option<Arc<ToolEntry>> {
        self.inner.catalog().tools.get(name).cloned()
    }

    /// The OAuth scopes a registered tool requires beyond the endpoint's (empty if unknown).
    #[cfg(feature = "auth-server")]
    pub(crate) fn tool_scopes(&self, name: &str) -> Vec<String> {
        self.tool_entry(name).map_or_else(Vec::new, |entry| entry.def.required_scopes.clone())
    }

    /// Answers one admitted 2026-07-28 request without a session or an engine (see
    /// [`stateless::answer_stateless`]).
    pub(crate) fn answer_stateless(
        &self,
        request: modelcontext_types::ClientRequest,
        request_id: modelcontext_types::RequestId,
        client: ClientView,
        peer: &crate::engine::Peer,
        extensions: Arc<Extensions>,
    ) -> crate::engine::Reply {
        stateless::answer_stateless(&self.inner, request, request_id, client, peer, extensions)
    }

    /// The state of a new HTTP session, whose handlers see `extensions` (what the transport
    /// knows about the connection, see [`McpServer::serve_with`]). Each POST dispatches its
    /// own request with it; the session starts an engine for it ([`attach`](crate::engine::outside_loop::attach))
    /// only when a handler outlives its POST.
    pub(crate) fn http_session(&self, extensions: Extensions, session_id: &str) -> SharedSession {
        let link =
            telemetry::Link::new(&self.inner, crate::transport::TCP, Some(session_id.into()));
        let session = session::ServerSession::new(self.inner.clone())
            .with_extensions(extensions)
            .with_link(link)
            .with_shared_forwarder();
        SharedSession::new(session)
    }

    /// The server held weakly, for what the server itself holds (the task relay).
    pub(crate) fn downgrade(&self) -> std::sync::Weak<ServerInner> {
        Arc::downgrade(&self.inner)
    }

    /// Sends the `tasks/update`s of tasks that do not run here through `relay`.
    pub(crate) fn relay_task_updates(&self, relay: Arc<dyn TaskRelay>) {
        // The first one set stays.
        let _ = self.inner.live_tasks.relay.set(relay);
    }

    /// This server's `initialize` result at `version`, declaring `capabilities`.
    pub(crate) fn initialize_result(
        &self,
        version: &'static str,
        capabilities: modelcontext_types::ServerCapabilities,
    ) -> modelcontext_types::InitializeResult {
        let mut result = modelcontext_types::InitializeResult::new(
            version,
            capabilities,
            self.inner.info.clone(),
        );
        result.instructions = self.inner.instructions.clone();
        result
    }
}

/// The arguments the input schema of `tool` mirrors into `Mcp-Param-*` headers
/// (`x-mcp-header`), found once when it is registered for each modern HTTP call to check.
/// Only a tool whose `listed` JSON mentions the annotation has its schema walked (most have
/// none); an annotation this server cannot read (a passthrough tool's: its owner checks it)
/// mirrors nothing.
pub(crate) fn header_mirrors(
    tool: &modelcontext_types::Tool,
    listed: &modelcontext_types::RawValue,
) -> Vec<modelcontext_types::MirroredArgument> {
    if !listed.get().contains("x-mcp-header") {
        return Vec::new();
    }
    let schema = serde_json::Value::Object(tool.input_schema.clone());
    modelcontext_types::mirrored_arguments(&schema).unwrap_or_default()
}

/// Delivers the answers of a `tasks/update` relayed from another instance, if the task runs
/// here: `None` when it does not (another instance may run it).
pub(crate) async fn answer_here(
    server: &ServerInner,
    params: modelcontext_types::UpdateTaskParams,
) -> Option<Result<(), modelcontext_types::McpError>> {
    let live = server.live_tasks.get(&params.task_id)?;
    Some(live.answer(params.input_responses).await)
}

/// The error for a client whose `tasks/update` for task `id`, running on another instance,
/// the relay could not carry there (`why`).
pub(crate) fn relay_unavailable(id: &str, why: &str) -> modelcontext_types::McpError {
    modelcontext_types::McpError::internal(format!(
        "Task '{id}' runs on another instance of this server, and its answers cannot be \
         passed on now ({why}): try again"
    ))
}

#[cfg(test)]
mod tests {
    use modelcontext_types::{MirroredArgument, Tool, to_raw};
    use serde_json::json;

    use super::header_mirrors;

    fn mirrors_of(schema: serde_json::Value) -> Vec<MirroredArgument> {
        let serde_json::Value::Object(schema) = schema else { panic!("an object schema") };
        let tool = Tool::new("t", schema);
        header_mirrors(&tool, &to_raw(&tool).expect("serializes"))
    }

    #[test]
    fn mirrors_are_the_annotated_arguments() {
        let schema = json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "size": {"type": "integer"}
        }});
        let found: Vec<_> =
            mirrors_of(schema).into_iter().map(|m| (m.path.join("."), m.header)).collect();
        assert_eq!(found, [("region".to_owned(), "Region".to_owned())]);
    }

    #[test]
    fn no_annotation_or_an_unreadable_one_mirrors_nothing() {
        let plain = json!({"type": "object", "properties": {"a": {"type": "string"}}});
        assert!(mirrors_of(plain).is_empty());
        let unreadable =
            json!({"type": "object", "properties": {"a": {"type": "number", "x-mcp-header": "A"}}});
        assert!(mirrors_of(unreadable).is_empty());
    }
}
