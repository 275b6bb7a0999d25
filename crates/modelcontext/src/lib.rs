//! modelcontext: the Model Context Protocol SDK for Rust.
//!
//! A plain function becomes a tool an agent can call; a host talks to any server. Both
//! protocol eras are served by one server object: the handshake era (2024-11-05 ..
//! 2025-11-25, `initialize`) and the stateless modern era (2026-07-28, `_meta` on every
//! request). Transports: stdio, child processes and in-memory.
//!
//! - [`McpServer`]: register tools, resources and prompts, then [`McpServer::run_stdio`].
//! - [`Client`]: [`Client::connect`] to [`McpServer::in_memory`], a [`ChildProcess`], or any
//!   [`Transport`].
//! - [`docs`]: the guide chapters, starting with handling errors.
//!
//! Features: `macros` (default) enables `#[tool]`, `#[resource]`, `#[prompt]` and `#[tools]`.

#[cfg(feature = "auth")]
pub mod auth;
mod base64;
pub mod client;
pub mod docs;
mod engine;
mod error;
pub mod server;
pub mod transport;

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;

/// The protocol types (re-export of `modelcontext-types`), including every error code.
pub mod types {
    pub use modelcontext_types::*;
}

pub use client::{Client, ClientBuilder, EraMode};
pub use error::{Error, ErrorKind};
pub use modelcontext_types::{CallToolResult, ContentBlock, McpError};
pub use server::{
    Context, IntoToolOutput, IntoToolResult, Json, McpServer, PromptDef, ResourceDef,
    ResourceError, ToolDef, ToolError,
};
pub use transport::{ChildProcess, Connection, Stdio, Transport};

#[cfg(feature = "macros")]
pub use modelcontext_macros::{prompt, resource, tool, tools};
