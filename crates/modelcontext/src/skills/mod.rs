//! Agent Skills over MCP (`io.modelcontextprotocol/skills`, SEP-2640): what servers and hosts
//! share. A server publishes skills with [`McpServer::skill`](crate::McpServer::skill) and
//! [`McpServer::skills_dir`](crate::McpServer::skills_dir); a host finds and loads them with
//! [`Client::list_skills`](crate::Client::list_skills) and
//! [`Client::load_skill`](crate::Client::load_skill), which verify what they read. The wire
//! types are in [`types::skills`](crate::types::skills).

mod digest;
mod frontmatter;

pub use digest::digest;
pub use frontmatter::{FrontmatterError, parse_frontmatter};
