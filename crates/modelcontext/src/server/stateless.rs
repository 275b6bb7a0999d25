//! A 2026-07-28 request over HTTP that needs no session: the core's side of the stateless
//! path, which the HTTP front end takes for every modern request
//! ([`McpServer::answer_stateless`](super::McpServer::answer_stateless)).

use std::sync::Arc;

use modelcontext_types::ClientRequest;

use super::ServerInner;
use super::call::Call;
use super::context::ClientView;
use super::extensions::Extensions;
use super::telemetry::{Link, RequestTelemetry};
use crate::engine::{Peer, Reply};

/// Answers one 2026-07-28 request that needs no connection: its transport has parsed it and
/// checked its envelope (`client` is what [`modern_view`](super::session::modern_view) made of it), so there is no era to
/// pin, no session and no engine. Whatever the handler sends before its result goes to
/// `peer`.
pub(crate) fn answer_stateless(
    server: &Arc<ServerInner>,
    request: ClientRequest,
    request_id: modelcontext_types::RequestId,
    client: ClientView,
    peer: &Peer,
    extensions: Arc<Extensions>,
) -> Reply {
    let link = Link::new(server, crate::transport::TCP, None);
    let mut telemetry = RequestTelemetry::start(request.method(), &request_id, &link);
    #[cfg(feature = "otel")]
    {
        let headers = extensions.get::<http::HeaderMap>();
        let transport = headers.map(crate::observe::otel::Carrier::headers).unwrap_or_default();
        telemetry.adopt_remote_parent(&request, transport);
    }
    telemetry.identify(&request, client.protocol_version);
    let call = Call {
        server,
        server_info: &server.info_json(),
        client: &Arc::new(client),
        peer,
        request_id,
        // A modern request's level is in its `_meta`; it has no subscriptions to keep.
        log_level: None,
        subscribed: None,
        extensions: &extensions,
        link: &link,
        item_middleware: true,
    };
    telemetry.finish(call.dispatch_with_middleware(request))
}

/// What the stateless path needs of a request's telemetry besides what every path does.
impl RequestTelemetry {
    /// [`RequestTelemetry::adopt_remote_parent_raw`] for a parsed request.
    #[cfg(feature = "otel")]
    pub(crate) fn adopt_remote_parent(
        &self,
        request: &ClientRequest,
        transport: crate::observe::otel::Carrier<'_>,
    ) {
        let meta = crate::observe::otel::Carrier::meta(request.meta());
        crate::observe::otel::adopt_remote_parent(&self.span, meta, transport);
    }
}
