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

/// A client that floods the notification starts one run at a time, plus one more for the
/// changes that came during it: never a task per message.
#[tokio::test]
async fn a_flood_of_notifications_runs_the_hook_once_more_at_most() {
    let gate = std::sync::Arc::new(tokio::sync::Semaphore::new(0));
    let (events, mut seen) = mpsc::unbounded_channel();
    let server = {
        let gate = std::sync::Arc::clone(&gate);
        McpServer::new("roots").on_roots_changed(move |_| {
            let (gate, events) = (std::sync::Arc::clone(&gate), events.clone());
            async move {
                let _ = events.send("started");
                gate.acquire().await.expect("open").forget();
                let _ = events.send("finished");
            }
        })
    };
    let client = connect(server, rooted_client(), false).await;
    client.notify_roots_changed().await.expect("sent");
    assert_eq!(seen.recv().await, Some("started"));
    for _ in 0..50 {
        client.notify_roots_changed().await.expect("sent");
    }
    client.ping().await.expect("the server read every notification before this");
    gate.add_permits(10);
    let mut order = Vec::new();
    while order.len() < 3 {
        order.push(seen.recv().await.expect("an event"));
    }
    assert_eq!(order, ["finished", "started", "finished"]);
    assert!(seen.try_recv().is_err(), "no third run");
}
