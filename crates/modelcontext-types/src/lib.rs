//! Sans-IO types for the Model Context Protocol: the JSON-RPC envelope ([`jsonrpc`]) and every
//! MCP message of both protocol eras, the handshake era (2024-11-05 .. 2025-11-25) and the
//! stateless modern era (2026-07-28).
//!
//! Only serde: no tokio, no IO. Field names follow the official schema (`camelCase` on the
//! wire, `snake_case` in Rust); type names are the schema's `$defs` names. One Rust type covers
//! a definition in every revision: fields a revision lacks are `Option`s that stay absent.
//! Unknown members of `_meta` and of extension objects are kept and survive a round trip.

pub mod jsonrpc;
pub mod version;

pub use jsonrpc::*;
pub use version::*;
