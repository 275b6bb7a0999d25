//! Helpers for testing what you plug into the SDK (feature `testing`).
//!
//! [`contracts`] holds one suite per seam the SDK lets you replace (the
//! [`SubscriptionBus`](crate::SubscriptionBus), the [`TaskStore`](crate::server::TaskStore), and
//! with feature `http` the `server::http::SessionStore` and `server::http::EventStore`): run it
//! against your implementation in your own tests, as `modelcontext-redis` does against a real
//! Redis, and as the SDK does against its in-memory default.

pub mod contracts;
