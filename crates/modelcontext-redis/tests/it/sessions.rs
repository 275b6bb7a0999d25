//! `RedisSessionStore` against the `SessionStore` contract, and what it leaves in Redis.

use modelcontext::server::http::{SessionRecord, SessionStore};
use modelcontext::testing::contracts;

use crate::support::RedisServer;

/// The keys of deployment `name` still in Redis.
async fn keys_of(redis: &RedisServer, name: &str) -> Vec<String> {
    let client = redis::Client::open(redis.url()).expect("url");
    let mut connection = client.get_multiplexed_async_connection().await.expect("connected");
    let pattern = format!("modelcontext:{name}:*");
    redis::cmd("KEYS").arg(pattern).query_async(&mut connection).await.expect("KEYS")
}

#[tokio::test]
async fn the_redis_session_store_meets_the_contract_and_leaves_no_key_behind() {
    let Some(redis) = RedisServer::start().await else { return };
    let store = redis.deployment("sessions").session_store().expect("store");
    contracts::session_store(&store).await;
    assert_eq!(keys_of(&redis, "sessions").await, Vec::<String>::new());
}

#[tokio::test]
async fn one_instance_sees_what_another_stored_and_ids_with_braces_are_refused() {
    let Some(redis) = RedisServer::start().await else { return };
    let a = redis.deployment("shop").session_store().expect("store");
    let b = redis.deployment("shop").session_store().expect("store");
    let record = SessionRecord::new("s1", "2025-11-25", "{}");
    let idle = std::time::Duration::from_secs(60);
    assert!(a.create(record.clone(), idle).await.expect("created on A"));
    assert_eq!(b.load("s1").await.expect("loaded on B"), Some(record));
    let braces = SessionRecord::new("s{1}", "2025-11-25", "{}");
    assert!(a.create(braces, idle).await.is_err());
    assert_eq!(a.load("s{1}").await.expect("load"), None);
    let staging = redis.deployment("staging").session_store().expect("store");
    assert_eq!(staging.load("s1").await.expect("load"), None, "another deployment's session");
}

#[tokio::test]
async fn redis_away_is_an_error_never_a_missing_session() {
    let Some(mut redis) = RedisServer::start().await else { return };
    let store = redis
        .deployment("down")
        .command_timeout(std::time::Duration::from_millis(300))
        .session_store()
        .expect("store");
    redis.kill().await;
    let error = store.load("s1").await.expect_err("Redis is down");
    assert!(error.to_string().starts_with("session store unavailable"), "{error}");
}
