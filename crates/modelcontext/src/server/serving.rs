//! Serving: over any transport, the process's stdin and stdout, or an in-memory connection, inside
//! the server's lifespan. The HTTP front end serves through [`super::front_end`].

use modelcontext_types::ServerCapabilities;

use super::{Extensions, McpServer, Running, session};
use crate::Error;
use crate::transport::{Connection, Stdio, Transport, memory_pair};

impl McpServer {
    /// Runs the [`lifespan`](McpServer::lifespan) start hooks and publishes their state; the
    /// returned [`Running`] runs the stop hooks. Fails with the first start hook's error.
    pub async fn start(&self) -> Result<Running, Error> {
        self.inner.lifespan.start().await
    }

    /// The capabilities this server declares, derived from what is registered.
    pub fn capabilities(&self) -> ServerCapabilities {
        self.inner.capabilities()
    }

    /// Serves one connection until the peer goes away.
    pub async fn serve(&self, transport: impl Transport) {
        self.serve_with(transport, Extensions::new()).await;
    }

    /// [`McpServer::serve`] for a transport that knows more than the protocol carries (an
    /// authenticated [`PrincipalId`](super::PrincipalId), headers...): every handler of the connection sees
    /// `extensions` through [`Context::extension`](super::Context::extension).
    pub async fn serve_with(&self, transport: impl Transport, extensions: Extensions) {
        let session = session::ServerSession::new(self.inner.clone()).with_extensions(extensions);
        let (peer, run, _stop) = crate::engine::start(transport.open(), session);
        // Only the engine sends on a server connection; letting go of this handle lets the
        // transport close its output once the engine is done.
        drop(peer);
        // On the heap for the reason `run_stdio` gives: the engine's loop is the larger part
        // of a serving future.
        Box::pin(run).await;
    }

    /// Serves the process's stdin and stdout until stdin closes. Logs must go to stderr.
    pub async fn run_stdio(&self) -> Result<(), Error> {
        // The serving state (kilobytes of nested state machines) lives on the heap, so the
        // future a caller hands to `block_on` is a pointer: the runtime moves that future
        // through several frames, and each copy of a large one is stack the process touches
        // once and holds (BENCHMARKS.md, cold start).
        Box::pin(self.serve_stdio()).await
    }

    async fn serve_stdio(&self) -> Result<(), Error> {
        let stdio = Stdio::stdin_stdout()
            .max_line_bytes(self.inner.max_line_bytes)
            .max_json_depth(self.inner.max_json_depth);
        let running = self.start().await?;
        self.serve(stdio).await;
        running.shutdown().await;
        Ok(())
    }

    /// Starts serving an in-memory connection and returns the client's end: pass it to
    /// [`Client::connect`](crate::Client::connect). Every message is serialized and parsed
    /// as on a real wire.
    pub fn in_memory(&self) -> Connection {
        let (client_end, server_end) = memory_pair();
        let server = self.clone();
        // The caller's span (one around a test, say) is the parent of the requests' spans.
        let serving = async move { server.serve(server_end).await };
        tokio::spawn(tracing::Instrument::in_current_span(serving));
        client_end
    }
}
