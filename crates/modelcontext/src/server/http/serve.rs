//! The accept loop of [`HttpEndpoint::serve`](super::HttpEndpoint::serve): one hyper HTTP/1.1
//! connection per TCP connection, with the connection-level limits of [`HttpOptions`]: header
//! size and count, the header read timeout (slowloris) and the write timeout (a peer that
//! stops reading). With [`HttpOptions::tls`] (feature `tls`) each connection first shakes
//! hands (`tls.rs`) and may then speak HTTP/2 (`http2.rs`); the write timeout sits under TLS,
//! on the socket. Mounted in an application's own axum stack, the endpoint gets that stack's
//! connection settings instead.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use hyper::server::conn::http1;
use tokio::net::TcpListener;

use super::HttpOptions;
use super::http1::{WriteTimeout, builder, serve_http1};
use super::served::Served;

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
