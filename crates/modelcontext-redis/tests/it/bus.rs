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

/// The ACL of `docs::deployment`: a user limited to its deployment's channels and to the
/// commands the bus sends runs the bus, and cannot reach another deployment's channel.
#[tokio::test]
async fn a_user_limited_to_its_deployment_runs_the_bus() {
    use futures_util::StreamExt;
    use modelcontext::{BusEvent, ChangeEvent, SubscriptionBus};
    let Some(redis) = RedisServer::start().await else { return };
    redis
        .add_user(
            "shop",
            "on >s3cret resetchannels &modelcontext:shop:* -@all +publish +subscribe +ping",
        )
        .await;
    let url = redis.url().replace("redis://", "redis://shop:s3cret@");
    let deployment = || modelcontext_redis::Deployment::new(&url, "shop").expect("deployment");
    let a = deployment().bus().await.expect("bus a as the limited user");
    let b = deployment().bus().await.expect("bus b as the limited user");
    let mut on_b = b.subscribe();
    a.publish(ChangeEvent::ToolsListChanged);
    assert_eq!(on_b.next().await, Some(BusEvent::Change(ChangeEvent::ToolsListChanged)));
    let other = modelcontext_redis::Deployment::new(&url, "other")
        .expect("well formed")
        .command_timeout(std::time::Duration::from_millis(300));
    let refused = other.bus().await.expect_err("another deployment's channel");
    // The probe's PUBLISH is refused by name; a user who may publish but not subscribe
    // would hear no probe back, and the error would ask whether it may subscribe.
    assert!(refused.to_string().contains("no permissions"), "{refused}");
}

/// redis-rs takes a refused `SUBSCRIBE` for a success; the bus's probe does not.
#[tokio::test]
async fn a_user_who_may_publish_but_not_subscribe_is_refused_at_startup() {
    let Some(redis) = RedisServer::start().await else { return };
    redis
        .add_user("mute", "on >s3cret resetchannels &modelcontext:shop:* -@all +publish +ping")
        .await;
    let url = redis.url().replace("redis://", "redis://mute:s3cret@");
    let deployment = modelcontext_redis::Deployment::new(&url, "shop")
        .expect("well formed")
        .command_timeout(std::time::Duration::from_millis(300));
    let refused = deployment.bus().await.expect_err("may not subscribe");
    assert!(refused.to_string().contains("may this user subscribe"), "{refused}");
}

/// `rediss://`: the bus over TLS, trusting a private CA through `Deployment::from_client`; a
/// client that does not trust it fails at startup.
#[cfg(feature = "tls")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bus_runs_over_tls_and_an_untrusted_certificate_fails_at_startup() {
    let Some((redis, root)) = RedisServer::start_tls().await else { return };
    assert!(redis.url().starts_with("rediss://"));
    let trusted = || {
        let certificates =
            redis::TlsCertificates { client_tls: None, root_cert: Some(root.clone().into_bytes()) };
        let client = redis::Client::build_with_tls(redis.url(), certificates).expect("tls client");
        modelcontext_redis::Deployment::from_client(client, "tls").expect("deployment")
    };
    let a = trusted().bus().await.expect("bus a over TLS");
    let b = trusted().bus().await.expect("bus b over TLS");
    contracts::subscription_bus(&a, &b).await;
    let untrusted = redis
        .deployment("tls")
        .command_timeout(std::time::Duration::from_secs(1))
        .bus()
        .await
        .expect_err("the system does not trust the test CA");
    assert!(untrusted.to_string().starts_with("redis"), "{untrusted}");
}

/// A subscription that stops answering (here Redis pauses every client; in life a NAT or a
/// proxy dropped the connection without a word) is noticed by its ping, made again once Redis
/// answers, and reported as a gap.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscription_that_stops_answering_is_made_again_and_reported_as_a_gap() {
    use futures_util::StreamExt;
    use modelcontext::{BusEvent, SubscriptionBus};
    use std::time::Duration;
    let Some(redis) = RedisServer::start().await else { return };
    let bus = redis
        .deployment("quiet")
        .command_timeout(Duration::from_millis(300))
        .health_check_interval(Duration::from_millis(100))
        .bus()
        .await
        .expect("bus");
    let mut stream = bus.subscribe();
    let admin = redis::Client::open(redis.url()).expect("url");
    let mut admin = admin.get_multiplexed_async_connection().await.expect("admin");
    let () = redis::cmd("CLIENT")
        .arg(&["PAUSE", "1000", "ALL"])
        .query_async(&mut admin)
        .await
        .expect("CLIENT PAUSE");
    let heard = tokio::time::timeout(Duration::from_secs(10), stream.next()).await;
    assert_eq!(heard.expect("a gap within 10 s"), Some(BusEvent::Gap));
    assert!(bus.stats().reconnects >= 1, "{:?}", bus.stats());
}
