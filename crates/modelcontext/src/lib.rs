//! modelcontext: the Model Context Protocol SDK for Rust.
//!
//! A plain function becomes a tool an agent can call; a host talks to any server. Both
//! protocol eras are served by one server object: the handshake era (2024-11-05 ..
//! 2025-11-25, `initialize`) and the stateless modern era (2026-07-28, `_meta` on every
//! request). Transports: stdio, child processes, in-memory and Streamable HTTP.
//!
//! - [`McpServer`]: register tools, resources and prompts, then [`McpServer::run_stdio`] or
//!   [`McpServer::serve_http`].
//! - [`Client`]: [`Client::connect`] to [`McpServer::in_memory`], a [`ChildProcess`], an
//!   HTTP URL ([`Client::connect_http`]) or any [`Transport`].
//! - [`Context`]: what a handler can read and do (progress, logs, elicitation, sampling,
//!   roots) the same way in both eras.
//! - [`docs`]: the guide chapters, starting with handling errors.
//!
//! Features:
//! - `macros` (default): `#[tool]`, `#[resource]`, `#[prompt]` and `#[tools]`.
//! - `http` (default): Streamable HTTP server and client (axum, hyper).
//! - `tls` (default): `https://` for the client, the auth module's fetches and the OAuth
//!   client (rustls, the system's roots), HTTP/2 by ALPN; one [`net::HttpClient`] for all.
//! - `auth-client`: the OAuth 2.1 client ([`auth::client`]): discovery, PKCE, registration,
//!   token stores, DPoP proofs; signs ES256 with `p256` (no JWT library, no RSA). Turns on
//!   `http`.
//! - `auth-server`: an HTTP endpoint as an OAuth 2.1 resource server: token verification
//!   (JWT/JWKS through `jsonwebtoken` with the RustCrypto RSA, ECDSA and EdDSA crates;
//!   introspection), protected resource metadata, DPoP proof checks, per-tool scopes. Turns on
//!   `http`.
//! - `auth`: both of the above.
//! - `otel`: OpenTelemetry: W3C trace context carried in `params._meta`, the request spans as
//!   OpenTelemetry spans (`tracing-opentelemetry`), the operation metrics; see
//!   [`docs::observability`].
//! - `testing`: `testing::contracts`, the suites an implementation of a seam runs in its tests.

// On docs.rs (nightly, `--cfg docsrs`): badges naming the feature each gated item needs.
#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(any(feature = "auth-client", feature = "auth-server"))]
#[cfg_attr(docsrs, doc(cfg(any(feature = "auth-client", feature = "auth-server"))))]
pub mod auth;
mod base64;
pub mod client;
pub mod docs;
mod engine;
mod error;
#[cfg(feature = "http")]
#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
pub mod net;
mod observe;
pub mod server;
pub mod skills;
#[cfg(any(test, feature = "testing"))]
#[cfg_attr(docsrs, doc(cfg(feature = "testing")))]
pub mod testing;
pub mod transport;

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;

#[cfg(feature = "fuzzing")]
#[doc(hidden)]
#[path = "fuzz.rs"]
pub mod __fuzz;

/// The protocol types (re-export of `modelcontext-types`), including every error code.
pub mod types {
    pub use modelcontext_types::*;
}

/// The [schemars](https://docs.rs/schemars) this crate is built with. Argument types of tools,
/// resources, prompts and elicitations implement its [`JsonSchema`](schemars::JsonSchema), and
/// the structs `#[tool]` and friends generate derive it through this path, so the macros need no
/// `schemars` dependency of your own.
///
/// Deriving `JsonSchema` on a type of your own (a struct argument, an elicitation form) names
/// `schemars` where the derive is written: depend on `schemars` 1.x yourself, or point the
/// derive here with `#[schemars(crate = "modelcontext::schemars")]`:
///
/// ```
/// # use modelcontext::__private::serde;
/// use modelcontext::schemars::JsonSchema;
///
/// #[derive(serde::Deserialize, JsonSchema)]
/// # #[serde(crate = "modelcontext::__private::serde")]
/// #[schemars(crate = "modelcontext::schemars")]
/// struct Point {
///     x: i64,
///     y: i64,
/// }
/// ```
pub use schemars;

pub use client::{CallOptions, Client, ClientBuilder, EraMode, ResultCache, Subscription};
pub use error::{Error, ErrorKind};
pub use modelcontext_types::{CallToolResult, ContentBlock, McpError};
#[cfg(feature = "http")]
#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
pub use server::http::{HttpEndpoint, HttpOptions};
pub use server::{
    BusEvent, CacheHint, Cacheable, ChangeEvent, CompletionRequest, Context, Elicitation,
    ElicitationCompleter, Extensions, InMemoryBus, IntoToolOutput, IntoToolResult, Json, McpServer,
    PrincipalId, PromptDef, Question, ResourceDef, ResourceError, RootsChanged, Running,
    SubscriptionBus, ToolDef, ToolError, UrlElicitation,
};
#[cfg(feature = "http")]
#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
pub use transport::http::HttpTransport;
pub use transport::{ChildProcess, Connection, Stdio, Transport};

#[cfg(feature = "macros")]
#[cfg_attr(docsrs, doc(cfg(feature = "macros")))]
pub use modelcontext_macros::{prompt, resource, tool, tools};
