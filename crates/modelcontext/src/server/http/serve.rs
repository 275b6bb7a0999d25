//! The accept loop of [`HttpEndpoint::serve`](super::HttpEndpoint::serve): one hyper HTTP/1.1
//! connection per TCP connection, with the connection-level limits of [`HttpOptions`]: header
//! size and count, the header read timeout (slowloris) and the write timeout (a peer that
//! stops reading). With [`HttpOptions::tls`] (feature `tls`) each connection first shakes
//! hands (`tls.rs`) and may then speak HTTP/2 (`http2.rs`); the write timeout sits under TLS,
//! on the socket. Mounted in an application's own axum stack, the endpoint gets that stack's
//! connection settings instead.

use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Body;
use axum::response::Response;
use futures_util::future::Either;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use tokio::net::TcpListener;

use super::http1::{WriteTimeout, builder, serve_http1};
use super::{HttpOptions, Shared, exchange};

/// Accepts connections until the listener fails for good.
pub(super) async fn serve(
    listener: TcpListener,
    options: &HttpOptions,
    served: Served,
) -> io::Result<()> {
    // Shared, not cloned per connection: each one only clones what it serves.
    let connections = Arc::new(Connections::new(options, served));
    loop {
        let (tcp, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(err) if is_per_connection(&err) => continue,
            Err(err) => {
                // Out of file descriptors and the like: wait for some to close, as axum does.
                tracing::error!(%err, "accepting an HTTP connection failed");
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            }
        };
        // Small JSON-RPC answers must not wait for Nagle's algorithm.
        let _ = tcp.set_nodelay(true);
        let io = WriteTimeout::new(tcp, options.limits.write_timeout);
        let connections = connections.clone();
        // In the accept loop's span: one the application opened around `serve` is the parent
        // of the MCP request spans.
        let connection = async move { connections.serve(io, peer).await };
        tokio::spawn(tracing::Instrument::in_current_span(connection));
    }
}

/// What a listener serves on every connection: an axum router (the endpoint's own with more
/// routes, or an application's), or the endpoint alone at `/mcp`, which needs no router:
/// each request then skips the router's path lookup and its boxed, cloned route service.
#[derive(Clone)]
pub(super) enum Served {
    Router(axum::Router),
    Endpoint(Arc<Shared>),
}

/// The answer of one request to [`Served`].
type ServedFuture = Either<
    axum::routing::future::RouteFuture<Infallible>,
    Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>,
>;

impl tower::Service<hyper::Request<Incoming>> for Served {
    type Response = Response;
    type Error = Infallible;
    type Future = ServedFuture;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: hyper::Request<Incoming>) -> ServedFuture {
        match self {
            Served::Router(router) => Either::Left(router.call(request)),
            Served::Endpoint(shared) => {
                let shared = shared.clone();
                Either::Right(Box::pin(async move { Ok(endpoint_at_mcp(shared, request).await) }))
            }
        }
    }
}

/// The endpoint at `/mcp` and nothing else, as a router with that one route answers: 404
/// with an empty body for any other path.
async fn endpoint_at_mcp(shared: Arc<Shared>, request: hyper::Request<Incoming>) -> Response {
    if request.uri().path() != "/mcp" {
        let mut response = Response::new(Body::empty());
        *response.status_mut() = http::StatusCode::NOT_FOUND;
        return response;
    }
    exchange::handle(shared, request.map(Body::new)).await
}

/// What every connection of one listener shares: the protocol settings and what it serves.
struct Connections {
    http1: http1::Builder,
    served: Served,
    /// Behind a trait object, made by the `ServerTls` itself: see `ServerTls`'s `listener`.
    #[cfg(feature = "tls")]
    tls: Option<Box<dyn super::tls::TlsListener>>,
}

impl Connections {
    fn new(options: &HttpOptions, served: Served) -> Connections {
        Connections {
            http1: builder(options),
            served,
            #[cfg(feature = "tls")]
            tls: options.tls.certificate.as_ref().map(|tls| tls.listener(options)),
        }
    }

    /// Serves one connection; its end, orderly or not, concerns only its peer (debug log).
    async fn serve(&self, io: WriteTimeout, peer: SocketAddr) {
        let served = self.served.clone();
        #[cfg(feature = "tls")]
        if let Some(tls) = &self.tls {
            return tls.serve(io, peer, &self.http1, served).await;
        }
        serve_http1(&self.http1, io, served, peer).await;
    }
}

/// Errors that concern one connection only (the peer reset it before we accepted it).
fn is_per_connection(err: &io::Error) -> bool {
    matches!(
        err.kind(),
        io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
    )
}
