//! One HTTP/1.1 connection: hyper's settings for the limits of [`HttpOptions`] (header size and
//! count, the header read timeout) and the write timeout under it, shared by plain-text
//! connections and HTTP/1.1 over TLS.

use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::time::{Instant, Sleep};

use super::HttpOptions;
use super::served::Served;

/// hyper's own default header count; setting it explicitly costs a heap allocation per request
/// (hyper keeps the default-sized array on the stack), so it is only set when it differs.
const HYPER_DEFAULT_MAX_HEADERS: usize = 100;

/// hyper's default read buffer limit (8 KiB + 100 x 4 KiB); a head must fit in it.
const HYPER_DEFAULT_MAX_BUF_SIZE: usize = 8192 + 4096 * 100;

/// The HTTP/1.1 connection settings the options ask for.
pub(super) fn builder(options: &HttpOptions) -> http1::Builder {
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(options.limits.header_read_timeout)
        .max_header_size(options.limits.max_header_bytes);
    if options.limits.max_header_bytes > HYPER_DEFAULT_MAX_BUF_SIZE {
        // The read buffer must hold a whole head, or hyper refuses it before our limit does.
        builder.max_buf_size(options.limits.max_header_bytes.saturating_add(8192));
    }
    if options.limits.max_headers != HYPER_DEFAULT_MAX_HEADERS {
        builder.max_headers(options.limits.max_headers);
    }
    builder
}

/// Serves one HTTP/1.1 connection over `io` (TCP, or TLS on it).
pub(super) async fn serve_http1<IO>(
    builder: &http1::Builder,
    io: IO,
    served: Served,
    peer: SocketAddr,
) where
    IO: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let service = TowerToHyperService::new(served);
    if let Err(err) = builder.serve_connection(TokioIo::new(io), service).await {
        tracing::debug!(%err, %peer, "HTTP connection ended");
    }
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
    pub(super) fn new(tcp: TcpStream, limit: Duration) -> WriteTimeout {
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
