//! Servers made of servers: mount another [`McpServer`] or proxy any MCP server through a
//! [`Client`](crate::client::Client), and show what it serves through a [`Transform`].
//!
//! An [`Upstream`] is a connection to another server that is made again when it breaks. A
//! server [mounts](McpServer::mount) it: the upstream's tools, resources, templates and
//! prompts join the server's own, under the names the transform gives them, and change when
//! the upstream says its lists changed. Listing merges them with the server's own (and pages
//! them); a call goes to whoever owns the name or URI.
//!
//! A call through a mount behaves as a direct one. The upstream's progress reaches the
//! caller's progress token, and its log messages the caller. Its sampling, elicitation and
//! roots requests are asked of the caller's client (in the 2026-07-28 era as `input_required`
//! rounds). A caller's cancellation cancels the upstream request. Tool errors stay tool
//! errors, and protocol errors keep their code, message and data. Resource subscriptions are
//! made upstream when a client makes them. The eras are bridged: each side speaks its own.
//!
//! ```no_run
//! use modelcontext::McpServer;
//! use modelcontext::server::compose::{Transform, Upstream};
//! use modelcontext::transport::ChildProcess;
//!
//! # async fn run() -> Result<(), modelcontext::Error> {
//! let books = Upstream::builder("books", |client| async move {
//!     client.connect(ChildProcess::new("bookshop").spawn()?).await
//! })
//! .connect()
//! .await?;
//! McpServer::new("gateway")
//!     .mount(&books, Transform::new().namespace("books").deny(["delete_*"]))
//!     .await?
//!     .serve_http("127.0.0.1:8080")
//!     .await
//! # }
//! ```
//!
//! What is not forwarded: completions of an upstream's prompt and template arguments, and
//! the skills extension. A live server-to-client request of a handshake-era upstream names
//! no call, so with several calls in flight on that upstream it goes to the latest (see
//! [`Upstream`]); the 2026-07-28 era has no such ambiguity.

mod callers;
mod forward;
mod mount;
mod transform;
mod upstream;

use std::sync::Arc;

pub use transform::Transform;
pub use upstream::{Upstream, UpstreamBuilder};

use super::McpServer;
use super::middleware::from_fn;
use crate::Error;

impl McpServer {
    /// Adds what `upstream` serves, shown through `transform`, and keeps it in step with the
    /// upstream's changes. Fails when the upstream cannot be listed or a shown name clashes
    /// with one the server has (namespace one of them). Mount after setting the
    /// [subscription bus](Self::subscription_bus): changes are published on the bus the
    /// server has at this point.
    pub async fn mount(mut self, upstream: &Upstream, transform: Transform) -> Result<Self, Error> {
        let inner = self.inner_mut();
        let mounted = mount::Mounted::new(
            upstream.clone(),
            transform,
            Arc::clone(&inner.catalog),
            Arc::clone(&inner.bus),
            inner.schema_limits,
        );
        mounted.import().await?;
        mounted.follow();
        let watcher = Arc::clone(&mounted);
        let sees = from_fn(move |request, next| Arc::clone(&watcher).see_requests(request, next));
        let inner = self.inner_mut();
        inner.middleware = inner.middleware.with_for(mount::Mounted::SEEN_METHODS, sees);
        Ok(self)
    }

    /// Mounts `server` in process (over an in-memory connection): [`McpServer::mount`] of
    /// an upstream named after it.
    pub async fn mount_server(
        self,
        server: &McpServer,
        transform: Transform,
    ) -> Result<Self, Error> {
        let mounted = server.clone();
        let name = server.inner.info.name.clone();
        let upstream = Upstream::builder(name, move |client| {
            let connection = mounted.in_memory();
            async move { client.connect(connection).await }
        })
        .connect()
        .await?;
        self.mount(&upstream, transform).await
    }
}
