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

/// The ACL of `docs::deployment`: a user limited to its deployment's keys, channels and the
/// commands of the bus and the session store runs the store, events included.
#[tokio::test]
async fn a_user_limited_to_its_deployment_runs_the_session_store() {
    use futures_util::StreamExt;
    use modelcontext::server::http::{SessionChange, SessionEvent};
    let Some(redis) = RedisServer::start().await else { return };
    let rules = "on >s3cret resetchannels &modelcontext:shop:* resetkeys ~modelcontext:shop:* \
                 -@all +publish +subscribe +ping +eval +exists +hset +hgetall +smembers +sadd \
                 +srem +pttl +pexpire +del";
    redis.add_user("shop", rules).await;
    let url = redis.url().replace("redis://", "redis://shop:s3cret@");
    let deployment = || modelcontext_redis::Deployment::new(&url, "shop").expect("deployment");
    let a = deployment().session_store().expect("store");
    contracts::session_store(&a).await;
    // Another instance hears A's changes, once its subscription is in place.
    let b = deployment().session_store().expect("store");
    let mut events = b.events();
    subscribed(&redis, "modelcontext:shop:sessions").await;
    let idle = std::time::Duration::from_secs(60);
    assert!(a.create(SessionRecord::new("s1", "2025-11-25", "{}"), idle).await.expect("create"));
    assert!(a.update("s1", SessionChange::LogLevel("error".into())).await.expect("update"));
    let change = SessionChange::LogLevel("error".into());
    assert_eq!(events.next().await, Some(SessionEvent::Changed { id: "s1".into(), change }));
    a.delete("s1").await.expect("delete");
    assert_eq!(events.next().await, Some(SessionEvent::Deleted { id: "s1".into() }));
}

/// Waits until somebody is subscribed to `channel`.
async fn subscribed(redis: &RedisServer, channel: &str) {
    let client = redis::Client::open(redis.url()).expect("url");
    let mut connection = client.get_multiplexed_async_connection().await.expect("connected");
    for _ in 0..500 {
        let (_, count): (String, u64) = redis::cmd("PUBSUB")
            .arg("NUMSUB")
            .arg(channel)
            .query_async(&mut connection)
            .await
            .expect("PUBSUB NUMSUB");
        if count > 0 {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    panic!("nobody subscribed to {channel} within 5 s");
}
