//! `notifications/roots/list_changed` reaches the server's hook (handshake era), which asks
//! the client for the new roots; in memory and over HTTP.

use std::time::Duration;

use modelcontext::types::Root;
use modelcontext::{Client, EraMode, McpServer};
use tokio::sync::mpsc;

use crate::support::{TRANSPORTS, connect};

fn watching_server(seen: mpsc::UnboundedSender<Vec<String>>) -> McpServer {
    McpServer::new("roots").on_roots_changed(move |changed| {
        let seen = seen.clone();
        async move {
            let roots = changed.list_roots().await.expect("the client lists its roots");
            let _ = seen.send(roots.into_iter().map(|r| r.uri).collect());
        }
    })
}

fn rooted_client() -> modelcontext::ClientBuilder {
    Client::builder()
        .era(EraMode::Handshake)
        .on_roots(|| async { Ok(vec![Root::new("file:///work/project")]) })
}

#[tokio::test]
async fn a_roots_change_reaches_the_hook_which_lists_them() {
    for &http in TRANSPORTS {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let client = connect(watching_server(tx), rooted_client(), http).await;
        client.notify_roots_changed().await.expect("sent");
        let roots = tokio::time::timeout(Duration::from_secs(5), rx.recv())
            .await
            .expect("the hook ran within 5 s")
            .expect("a list");
        assert_eq!(roots, ["file:///work/project"], "http: {http}");
        client.close().await;
    }
}

#[tokio::test]
async fn a_modern_client_sends_no_roots_notification_and_the_hook_stays_quiet() {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let builder = rooted_client().era(EraMode::Modern);
    let client = connect(watching_server(tx), builder, false).await;
    client.notify_roots_changed().await.expect("a no-op");
    client.list_tools(None).await.expect("still serving");
    assert!(rx.try_recv().is_err(), "2026-07-28 has no roots notification");
}
