//! `RedisBus` against the `SubscriptionBus` contract, and its failure rules.

use modelcontext::testing::contracts;

use crate::support::RedisServer;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_redis_bus_meets_the_subscription_bus_contract() {
    let Some(redis) = RedisServer::start().await else { return };
    let a = redis.deployment("contract").bus().await.expect("bus a");
    let b = redis.deployment("contract").bus().await.expect("bus b");
    contracts::subscription_bus(&a, &b).await;
    let (sa, sb) = (a.stats(), b.stats());
    assert_eq!((sa.lost, sb.lost, sa.gaps, sb.gaps), (0, 0, 0, 0), "{sa:?} {sb:?}");
}

#[tokio::test]
async fn deployments_on_one_redis_do_not_hear_each_other() {
    use futures_util::StreamExt;
    use modelcontext::{BusEvent, ChangeEvent, SubscriptionBus};
    let Some(redis) = RedisServer::start().await else { return };
    let prod = redis.deployment("prod").bus().await.expect("bus");
    let prod_too = redis.deployment("prod").bus().await.expect("bus");
    let staging = redis.deployment("staging").bus().await.expect("bus");
    let mut in_staging = staging.subscribe();
    let mut in_prod = prod_too.subscribe();
    prod.publish(ChangeEvent::ToolsListChanged);
    staging.publish(ChangeEvent::PromptsListChanged);
    // Within one deployment it arrives; the staging stream hears only staging's own event.
    assert_eq!(in_prod.next().await, Some(BusEvent::Change(ChangeEvent::ToolsListChanged)));
    assert_eq!(in_staging.next().await, Some(BusEvent::Change(ChangeEvent::PromptsListChanged)));
    prod.publish(ChangeEvent::ResourcesListChanged);
    assert_eq!(in_prod.next().await, Some(BusEvent::Change(ChangeEvent::ResourcesListChanged)));
    assert_eq!(staging.stats().received, 0);
}

#[tokio::test]
async fn a_bad_address_or_name_fails_at_startup_with_a_clear_error() {
    let error = modelcontext_redis::Deployment::new("http://nope", "x").expect_err("not redis");
    assert!(error.to_string().contains("redis backend configuration"), "{error}");
    let error = modelcontext_redis::Deployment::new("redis://127.0.0.1:1/", "a b")
        .expect_err("a space in the name");
    assert!(error.to_string().contains("deployment name"), "{error}");
    let nobody = modelcontext_redis::Deployment::new("redis://127.0.0.1:1/", "x")
        .expect("well formed")
        .command_timeout(std::time::Duration::from_millis(500));
    let error = nobody.bus().await.expect_err("nobody listens on port 1");
    assert!(error.to_string().starts_with("redis"), "{error}");
}
