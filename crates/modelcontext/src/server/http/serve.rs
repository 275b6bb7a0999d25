//! The accept loop of [`HttpEndpoint::serve`](super::HttpEndpoint::serve): one hyper HTTP/1.1
//! connection per TCP connection, with the connection-level limits of [`HttpOptions`]: header
//! size and count, the header read timeout (slowloris) and the write timeout (a peer that
//! stops reading). With [`HttpOptions::tls`] (feature `tls`) each connection first shakes
//! hands (`tls.rs`) and may then speak HTTP/2 (`http2.rs`); the write timeout sits under TLS,
//! on the socket. Mounted in an application's own axum stack, the endpoint gets that stack's
//! connection settings instead.

use std::future::Future as _;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::{Instant, Sleep};

use super::HttpOptions;

/// hyper's own default header count; setting it explicitly costs a heap allocation per request
/// (hyper keeps the default-sized array on the stack), so it is only set when it differs.
const HYPER_DEFAULT_MAX_HEADERS: usize = 100;

/// hyper's default read buffer limit (8 KiB + 100 x 4 KiB); a head must fit in it.
const HYPER_DEFAULT_MAX_BUF_SIZE: usize = 8192 + 4096 * 100;

/// The HTTP/1.1 connection settings the options ask for.
fn builder(options: &HttpOptions) -> http1::Builder {
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(options.header_read_timeout)
        .max_header_size(options.max_header_bytes);
    if options.max_header_bytes > HYPER_DEFAULT_MAX_BUF_SIZE {
        // The read buffer must hold a whole head, or hyper refuses it before our limit does.
        builder.max_buf_size(options.max_header_bytes.saturating_add(8192));
    }
    if options.max_headers != HYPER_DEFAULT_MAX_HEADERS {
        builder.max_headers(options.max_headers);
    }
    builder
}

/// Accepts connections until the listener fails for good.
pub(super) async fn serve(
    listener: TcpListener,
    options: &HttpOptions,
    router: axum::Router,
) -> io::Result<()> {
    // Shared, not cloned per connection: each one only clones the router (as before TLS).
    let connections = Arc::new(Connections::new(options, router));
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
        let io = WriteTimeout::new(tcp, options.write_timeout);
        let connections = connections.clone();
        // In the accept loop's span: one the application opened around `serve` is the parent
        // of the MCP request spans.
        let connection = async move { connections.serve(io, peer).await };
        tokio::spawn(tracing::Instrument::in_current_span(connection));
    }
}

/// What every connection of one listener shares: the protocol settings and the router.
struct Connections {
    http1: http1::Builder,
    router: axum::Router,
    /// Behind a trait object, made by the `ServerTls` itself: see `ServerTls`'s `listener`.
    #[cfg(feature = "tls")]
    tls: Option<Box<dyn super::tls::TlsListener>>,
}

impl Connections {
    fn new(options: &HttpOptions, router: axum::Router) -> Connections {
        Connections {
            http1: builder(options),
            router,
            #[cfg(feature = "tls")]
            tls: options.tls.as_ref().map(|tls| tls.listener(options)),
        }
    }

    /// Serves one connection; its end, orderly or not, concerns only its peer (debug log).
    async fn serve(&self, io: WriteTimeout, peer: SocketAddr) {
        let router = self.router.clone();
        #[cfg(feature = "tls")]
        if let Some(tls) = &self.tls {
            return tls.serve(io, peer, &self.http1, router).await;
        }
        serve_http1(&self.http1, io, router, peer).await;
    }
}

/// Serves one HTTP/1.1 connection over `io` (TCP, or TLS on it).
pub(super) async fn serve_http1<IO>(
    builder: &http1::Builder,
    io: IO,
    router: axum::Router,
    peer: SocketAddr,
) where
    IO: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let service = TowerToHyperService::new(router);
    if let Err(err) = builder.serve_connection(TokioIo::new(io), service).await {
        tracing::debug!(%err, %peer, "HTTP connection ended");
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

/// A TCP stream whose writes fail with `TimedOut` once one has been blocked for `limit`: a
/// peer that stops reading (an SSE client that never drains its socket) loses its connection,
/// and the stream's queued events are freed with it, instead of holding them forever.
pub(super) struct WriteTimeout {
    tcp: TcpStream,
    limit: Duration,
    /// Armed while a write is blocked; allocated on the first blocked write only.
    blocked: Option<Pin<Box<Sleep>>>,
    armed: bool,
}

impl WriteTimeout {
    fn new(tcp: TcpStream, limit: Duration) -> WriteTimeout {
        WriteTimeout { tcp, limit, blocked: None, armed: false }
    }

    /// Called when a write returned `Pending`: starts the clock once, and fails when it ran out.
    fn poll_blocked(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<usize>> {
        let limit = self.limit;
        let sleep = self.blocked.get_or_insert_with(|| Box::pin(tokio::time::sleep(limit)));
        if !self.armed {
            sleep.as_mut().reset(Instant::now() + limit);
            self.armed = true;
        }
        ready!(sleep.as_mut().poll(cx));
        let message = format!("the peer read nothing for {:?}", self.limit);
        Poll::Ready(Err(io::Error::new(io::ErrorKind::TimedOut, message)))
    }

    fn after_write(
        &mut self,
        cx: &mut Context<'_>,
        poll: Poll<io::Result<usize>>,
    ) -> Poll<io::Result<usize>> {
        match poll {
            Poll::Pending => self.poll_blocked(cx),
            ready => {
                self.armed = false;
                ready
            }
        }
    }
}

impl AsyncRead for WriteTimeout {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().tcp).poll_read(cx, buf)
    }
}

impl AsyncWrite for WriteTimeout {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let poll = Pin::new(&mut this.tcp).poll_write(cx, buf);
        this.after_write(cx, poll)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let poll = Pin::new(&mut this.tcp).poll_write_vectored(cx, bufs);
        this.after_write(cx, poll)
    }

    fn is_write_vectored(&self) -> bool {
        self.tcp.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().tcp).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().tcp).poll_shutdown(cx)
    }
}
