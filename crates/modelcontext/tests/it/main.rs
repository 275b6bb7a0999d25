//! The integration tests: one crate, through public API and wire bytes only.

mod apps;
#[cfg(feature = "auth")]
mod auth;
#[cfg(feature = "auth")]
mod auth_client;
mod calls;
mod changes;
mod context;
mod corpus;
mod engine;
#[cfg(feature = "http")]
mod faults;
#[cfg(feature = "fuzzing")]
mod fuzz_corpus;
#[cfg(feature = "http")]
mod http_client;
#[cfg(feature = "http")]
mod http_server;
mod input;
mod json_suite;
#[cfg(feature = "http")]
mod limits;
mod mrtr;
mod pagination;
mod seed;
mod stdio;
mod support;
mod tasks;
#[cfg(feature = "tls")]
mod test_ca;
#[cfg(feature = "tls")]
mod tls_client;
#[cfg(feature = "tls")]
mod tls_server;
