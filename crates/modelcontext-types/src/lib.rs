//! Sans-IO types for the Model Context Protocol: the JSON-RPC envelope ([`jsonrpc`]) and every
//! MCP message of both protocol eras, the handshake era (2024-11-05 .. 2025-11-25) and the
//! stateless modern era (2026-07-28), and the RFC 6570 URI templates of resource templates
//! ([`uri_template`]).
//!
//! Only serde: no tokio, no IO. Field names follow the official schema (`camelCase` on the
//! wire, `snake_case` in Rust); type names are the schema's `$defs` names. One Rust type covers
//! a definition in every revision: fields a revision lacks are `Option`s that stay absent.
//! Unknown members of `_meta` and of extension objects are kept and survive a round trip.
//!
//! # Building messages
//!
//! A later revision can add members to any protocol object, so the wire structs and the enums
//! a revision can grow are `#[non_exhaustive]`: no struct literals outside this crate, and a
//! `match` needs a wildcard arm. Build a struct with `new(required members...)`, or `default()`
//! when every member is optional, and chain `with_<member>(value)` setters for the optional
//! ones (`result_type` aside: servers stamp it). Fields stay public for reading, and for
//! assigning an `Option` as is.
//!
//! These stay exhaustive, because JSON-RPC 2.0, an RFC or every schema revision fixes them:
//! the envelope ([`Message`]'s three kinds, [`Request`], [`Notification`], [`Response`], the
//! error object [`McpError`], and [`DecodeError`], which is -32700 or -32600), the
//! string-or-integer ids ([`RequestId`], [`ProgressToken`]), the open newtype [`ErrorCode`],
//! RFC 5424's eight [`LoggingLevel`]s, [`Role`] (`user` or `assistant` in every revision; a
//! system prompt has its own member), JSON Schema's two numeric types ([`NumberType`]),
//! [`ElicitMode`] (the one value form params carry; other modes get their own params type) and
//! [`SamplingContent`] (one block or a list: the only two JSON shapes).

mod bytes;
#[macro_use]
mod setters;

pub mod apps;
pub mod capabilities;
pub mod completion;
pub mod content;
pub mod elicitation;
pub mod errors;
pub mod jsonrpc;
pub mod lifecycle;
pub mod logging;
pub mod messages;
pub mod meta;
pub mod mrtr;
pub mod notifications;
mod num;
pub mod percent;
pub mod prompts;
pub mod resources;
pub mod result;
pub mod roots;
pub mod sampling;
pub mod schema;
pub mod skills;
pub mod subscriptions;
pub mod tasks;
pub mod tools;
pub mod uri_template;
pub mod version;
pub mod x_mcp_header;

pub use apps::*;
pub use capabilities::*;
pub use completion::*;
pub use content::*;
pub use elicitation::*;
pub use errors::*;
pub use jsonrpc::*;
pub use lifecycle::*;
pub use logging::*;
pub use messages::*;
pub use meta::*;
pub use mrtr::*;
pub use notifications::*;
pub use prompts::*;
pub use resources::*;
pub use result::*;
pub use roots::*;
pub use sampling::*;
pub use schema::*;
pub use skills::*;
pub use subscriptions::*;
pub use tasks::*;
pub use tools::*;
pub use version::*;
pub use x_mcp_header::*;
