//! Caching hints: the server's knobs per list and per resource, and the client that honours
//! them (a fresh result is not fetched again, `private` results are never shared between
//! clients, `list_changed` and `resources/updated` invalidate, an off switch per client).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use modelcontext::server::NoArgs;
use modelcontext::types::{CacheScope, SubscriptionFilter};
use modelcontext::{
    CacheHint, Cacheable, Client, EraMode, McpServer, ResourceDef, ResultCache, ToolDef,
};
use serde_json::json;

use crate::support::{TRANSPORTS, connect, in_both_eras};

const MINUTE: Duration = Duration::from_secs(60);

/// Counts the reads of each resource: `public`, `private` (both hinted for a minute) and
/// `fresh` (no hint: the default `ttlMs: 0`).
struct Counts {
    public: Arc<AtomicUsize>,
    private: Arc<AtomicUsize>,
    fresh: Arc<AtomicUsize>,
}

fn counted(uri: &str, count: &Arc<AtomicUsize>) -> ResourceDef {
    let count = Arc::clone(count);
    ResourceDef::new(uri, move || {
        let n = count.fetch_add(1, Ordering::SeqCst) + 1;
        async move { format!("read {n}") }
    })
}

fn server() -> (McpServer, Counts) {
    let counts = Counts { public: Arc::default(), private: Arc::default(), fresh: Arc::default() };
    let server = McpServer::new("cached")
        .cache_hint(Cacheable::Tools, CacheHint::new(MINUTE, CacheScope::Public))
        .tool(ToolDef::new("first", |_: NoArgs| async { "1" }))
        .and_then(|s| {
            let public = CacheHint::new(MINUTE, CacheScope::Public);
            s.resource(counted("data://public", &counts.public).cache_hint(public))
        })
        .and_then(|s| {
            let private = CacheHint::new(MINUTE, CacheScope::Private);
            s.resource(counted("data://private", &counts.private).cache_hint(private))
        })
        .and_then(|s| s.resource(counted("data://fresh", &counts.fresh)))
        .expect("registers");
    (server, counts)
}

async fn read_twice(client: &Client, uri: &str) {
    for _ in 0..2 {
        client.read_resource(uri).await.expect("read");
    }
}

#[tokio::test]
async fn the_hints_are_knobs_per_list_and_per_resource_in_the_modern_era_only() {
    let make = || server().0;
    let [old, new] = in_both_eras(make, "{}", "tools/list", "").await;
    assert_eq!(old["result"].get("ttlMs"), None, "{old}");
    assert_eq!(
        (&new["result"]["ttlMs"], &new["result"]["cacheScope"]),
        (&json!(60000), &json!("public"))
    );
    let read = r#""uri":"data://private""#;
    let [old, new] = in_both_eras(make, "{}", "resources/read", read).await;
    assert_eq!(old["result"].get("cacheScope"), None, "{old}");
    assert_eq!(
        (&new["result"]["ttlMs"], &new["result"]["cacheScope"]),
        (&json!(60000), &json!("private"))
    );
    let [_, new] = in_both_eras(make, "{}", "prompts/list", "").await;
    assert_eq!(
        (&new["result"]["ttlMs"], &new["result"]["cacheScope"]),
        (&json!(0), &json!("private"))
    );
}

#[tokio::test]
async fn a_fresh_result_is_not_fetched_again() {
    for &http in TRANSPORTS {
        let (hinted, counts) = server();
        let client = connect(hinted, Client::builder().era(EraMode::Modern), http).await;
        read_twice(&client, "data://private").await;
        read_twice(&client, "data://fresh").await;
        assert_eq!(counts.private.load(Ordering::SeqCst), 1, "cached (http: {http})");
        assert_eq!(counts.fresh.load(Ordering::SeqCst), 2, "ttlMs 0 is never reused");

        // The handshake era has no hints; a client with caching off always asks.
        for builder in [
            Client::builder().era(EraMode::Handshake),
            Client::builder().era(EraMode::Modern).caching(false),
        ] {
            let (fresh_server, counts) = server();
            let client = connect(fresh_server, builder, http).await;
            read_twice(&client, "data://private").await;
            assert_eq!(counts.private.load(Ordering::SeqCst), 2, "http: {http}");
        }
    }
}

#[tokio::test]
async fn private_results_are_never_shared_between_clients() {
    for &http in TRANSPORTS {
        let (server, counts) = server();
        let shared = ResultCache::new();
        let builder = || Client::builder().era(EraMode::Modern).cache(shared.clone());
        let first = connect(server.clone(), builder(), http).await;
        let second = connect(server, builder(), http).await;
        for client in [&first, &second] {
            client.read_resource("data://public").await.expect("read");
            client.read_resource("data://private").await.expect("read");
        }
        assert_eq!(counts.public.load(Ordering::SeqCst), 1, "shared (http: {http})");
        assert_eq!(counts.private.load(Ordering::SeqCst), 2, "one per client (http: {http})");
    }
}

#[tokio::test]
async fn list_changed_invalidates_a_cached_list() {
    for &http in TRANSPORTS {
        let (server, _) = server();
        let client = connect(server.clone(), Client::builder().era(EraMode::Modern), http).await;
        assert_eq!(client.list_all_tools().await.expect("tools").len(), 1);
        server.add_tool(ToolDef::new("second", |_: NoArgs| async { "2" })).expect("added");
        // Not listening, the client trusts the server's minute.
        assert_eq!(client.list_all_tools().await.expect("tools").len(), 1, "http: {http}");

        let mut changes = client
            .listen(SubscriptionFilter::default().with_tools_list_changed(true))
            .await
            .expect("listening");
        server.add_tool(ToolDef::new("third", |_: NoArgs| async { "3" })).expect("added");
        tokio::time::timeout(Duration::from_secs(5), changes.next())
            .await
            .expect("the change arrived within 5 s")
            .expect("a notification");
        assert_eq!(client.list_all_tools().await.expect("tools").len(), 3, "http: {http}");
    }
}
