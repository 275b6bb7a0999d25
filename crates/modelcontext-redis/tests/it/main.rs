//! The Redis backends against a real `redis-server` on loopback, started by each test on a
//! free port with nothing saved to disk ([`support::RedisServer`]). Without the binary the
//! tests print why and pass, unless `CI` is set: there a missing binary fails.

mod bus;
#[cfg(feature = "cluster")]
mod cluster;
mod events;
mod fleet;
mod handshake;
mod peers;
mod proxy;
mod resume;
#[cfg(feature = "sentinel")]
mod sentinel;
mod sessions;
mod support;
mod task_updates;
mod tasks;
