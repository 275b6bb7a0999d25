//! The integration tests: one crate, through public API and wire bytes only.

#[cfg(feature = "auth")]
mod auth;
#[cfg(feature = "auth")]
mod auth_client;
mod calls;
mod changes;
mod context;
mod corpus;
mod engine;
mod faults;
#[cfg(feature = "fuzzing")]
mod fuzz_corpus;
mod http_client;
mod http_server;
mod input;
mod json_suite;
mod limits;
mod mrtr;
mod pagination;
mod seed;
mod stdio;
mod support;
