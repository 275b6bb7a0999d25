//! The integration tests: one crate, through public API and wire bytes only.

mod apps;
#[cfg(feature = "auth")]
mod auth;
#[cfg(feature = "auth")]
mod auth_client;
mod batches;
mod caching;
mod calls;
mod changes;
mod completion;
mod compose;
mod context;
mod corpus;
#[cfg(feature = "auth")]
mod dpop;
mod elicitation_forms;
mod engine;
#[cfg(feature = "http")]
mod faults;
#[cfg(feature = "http")]
mod fleet_example;
#[cfg(feature = "fuzzing")]
mod fuzz_corpus;
#[cfg(feature = "http")]
mod http_client;
#[cfg(feature = "http")]
mod http_modes;
#[cfg(feature = "http")]
mod http_peer_router;
#[cfg(feature = "http")]
mod http_server;
#[cfg(feature = "http")]
mod http_shared_sessions;
mod input;
mod json_suite;
mod layers;
mod lifespan;
#[cfg(feature = "http")]
mod limits;
mod metadata;
mod middleware;
mod mrtr;
mod negotiation;
mod observe;
#[cfg(feature = "otel")]
mod otel;
#[cfg(all(feature = "otel", feature = "http"))]
mod otlp;
mod pagination;
#[cfg(feature = "tls")]
mod proxy_schemes;
mod roots;
mod seed;
mod skills;
mod stdio;
mod structured;
mod support;
mod task_fleet;
mod tasks;
#[cfg(feature = "tls")]
mod test_ca;
#[cfg(feature = "tls")]
mod tls_client;
#[cfg(feature = "tls")]
mod tls_server;
#[cfg(feature = "http")]
mod tower_layers;
mod url_elicitation;
