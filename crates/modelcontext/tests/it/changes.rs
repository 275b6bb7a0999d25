//! Change notifications: `list_changed` and `resources/subscribe` in the handshake era,
//! `subscriptions/listen` streams (acknowledgement first, tagged, filtered) in the modern era.

use crate::support::{MODERN_META, Wire, bookshop};

#[tokio::test]
async fn handshake_clients_hear_list_changes_and_their_subscribed_resources() {
    let server = bookshop();
    let mut wire = Wire::start(server.clone(), "2025-11-25");
    wire.initialize().await;
    server.notify_tools_changed();
    assert_eq!(
        wire.recv().await,
        r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{}}"#
    );
    let subscribe = r#"{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"books://Dune"}}"#;
    assert_eq!(wire.call(subscribe).await, r#"{"jsonrpc":"2.0","id":1,"result":{}}"#);
    server.notify_resource_updated("books://Neuromancer");
    server.notify_resource_updated("books://Dune");
    assert_eq!(
        wire.recv().await,
        r#"{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"books://Dune"}}"#
    );
    let unsubscribe = subscribe.replace(
        r#""id":1,"method":"resources/subscribe""#,
        r#""id":2,"method":"resources/unsubscribe""#,
    );
    assert_eq!(wire.call(&unsubscribe).await, r#"{"jsonrpc":"2.0","id":2,"result":{}}"#);
    server.notify_resource_updated("books://Dune");
    // Nothing for the unsubscribed URI: the next line is the answer to the next request.
    wire.assert_alive().await;
    let unknown = wire
        .call(r#"{"jsonrpc":"2.0","id":3,"method":"resources/subscribe","params":{"uri":"nowhere://x"}}"#)
        .await;
    assert_eq!(
        unknown,
        r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"Unknown resource: nowhere://x","data":{"uri":"nowhere://x"}}}"#
    );
}

#[tokio::test]
async fn a_listen_stream_is_acknowledged_first_then_filtered_and_tagged() {
    let server = bookshop();
    let mut wire = Wire::start(server.clone(), "2026-07-28");
    let listen = format!(
        r#"{{"jsonrpc":"2.0","id":"listen-1","method":"subscriptions/listen","params":{{"notifications":{{"toolsListChanged":true,"promptsListChanged":false,"resourceSubscriptions":["books://Dune"]}},{MODERN_META}}}}}"#
    );
    assert_eq!(
        wire.call(&listen).await,
        r#"{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"listen-1"},"notifications":{"toolsListChanged":true,"resourceSubscriptions":["books://Dune"]}}}"#
    );
    server.notify_prompts_changed();
    server.notify_resource_updated("books://Neuromancer");
    server.notify_tools_changed();
    server.notify_resource_updated("books://Dune");
    assert_eq!(
        wire.recv().await,
        r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"listen-1"}}}"#
    );
    assert_eq!(
        wire.recv().await,
        r#"{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"listen-1"},"uri":"books://Dune"}}"#
    );
    // The client ends the stream with notifications/cancelled; it gets no answer.
    wire.send(
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"listen-1"}}"#,
    )
    .await;
    wire.assert_alive().await;
    server.notify_tools_changed();
    wire.assert_alive().await;
}

#[tokio::test]
async fn an_open_listen_stream_does_not_keep_a_stdio_server_alive() {
    let mut wire = Wire::start(bookshop(), "2026-07-28");
    let listen = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{{"notifications":{{"toolsListChanged":true}},{MODERN_META}}}}}"#
    );
    wire.call(&listen).await;
    assert_eq!(wire.finish().await, Vec::<String>::new());
}

#[tokio::test]
async fn the_client_listens_in_both_eras() {
    use modelcontext::types::{ServerNotification, SubscriptionFilter};
    use modelcontext::{Client, EraMode};
    for mode in [EraMode::Handshake, EraMode::Modern] {
        let server = bookshop();
        let client = Client::builder().era(mode).connect(server.in_memory()).await.expect("up");
        let filter = SubscriptionFilter::default()
            .with_tools_list_changed(true)
            .with_resource_subscriptions(vec!["books://Dune".into()]);
        let mut changes = client.listen(filter.clone()).await.expect("listening");
        assert_eq!(changes.agreed(), &filter, "{mode:?}");
        server.notify_prompts_changed();
        server.notify_tools_changed();
        server.notify_resource_updated("books://Neuromancer");
        server.notify_resource_updated("books://Dune");
        let first = changes.next().await.expect("tools changed");
        assert!(matches!(first, ServerNotification::ToolListChanged(_)), "{mode:?}: {first:?}");
        match changes.next().await.expect("updated") {
            ServerNotification::ResourceUpdated(params) => assert_eq!(params.uri, "books://Dune"),
            other => panic!("{mode:?}: {other:?}"),
        }
        drop(changes);
        // The connection still serves after the subscription ended.
        client.list_tools(None).await.expect("still serving");
    }
}

/// Over Streamable HTTP each modern request has its own engine whose input ends at once: a
/// listen stream must outlive that and end only when the client lets go. A change published
/// right after connecting reaches the client in both eras.
#[cfg(feature = "http")]
#[tokio::test]
async fn the_client_listens_over_http_in_both_eras() {
    use modelcontext::transport::http::HttpTransport;
    use modelcontext::types::{ServerNotification, SubscriptionFilter};
    use modelcontext::{Client, EraMode};
    let server = bookshop();
    let (addr, serve) = server.http_endpoint().bind("127.0.0.1:0").await.expect("bind");
    tokio::spawn(serve);
    for mode in [EraMode::Modern, EraMode::Handshake] {
        let transport = HttpTransport::new(&format!("http://{addr}/mcp")).expect("url");
        let client = Client::builder().era(mode).connect(transport).await.expect("up");
        let filter = SubscriptionFilter::default().with_tools_list_changed(true);
        let mut changes = client.listen(filter).await.expect("listening");
        // Handshake era: the notification rides the session's GET stream. The client is
        // connected only once that stream is open, so a change published at once reaches it.
        server.notify_tools_changed();
        let first = tokio::time::timeout(std::time::Duration::from_secs(5), changes.next())
            .await
            .unwrap_or_else(|_| panic!("{mode:?}: no notification in time"))
            .expect("a notification");
        assert!(matches!(first, ServerNotification::ToolListChanged(_)), "{mode:?}: {first:?}");
    }
}

#[tokio::test]
async fn adding_and_removing_while_serving_reaches_connected_clients() {
    use modelcontext::{PromptDef, ResourceDef, ToolDef};
    let server = bookshop();
    let mut wire = Wire::start(server.clone(), "2025-11-25");
    wire.initialize().await;

    let shout = ToolDef::new("shout", || async { "HEY" });
    server.add_tool(shout).expect("a new name");
    assert_eq!(
        wire.recv().await,
        r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{}}"#
    );
    let call = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"shout"}}"#;
    assert_eq!(
        wire.call(call).await,
        r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"HEY"}]}}"#
    );
    assert!(
        server.add_tool(ToolDef::new("shout", || async { "again" })).is_err(),
        "duplicates stay errors"
    );

    assert!(server.remove_tool("shout"));
    assert_eq!(
        wire.recv().await,
        r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{}}"#
    );
    let gone = wire.call(&call.replace(r#""id":1"#, r#""id":2"#)).await;
    assert_eq!(
        gone,
        r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"Unknown tool: shout"}}"#
    );
    assert!(!server.remove_tool("shout"));

    server
        .add_resource(ResourceDef::new("notes://today", || async { "buy milk" }))
        .expect("resource");
    assert_eq!(
        wire.recv().await,
        r#"{"jsonrpc":"2.0","method":"notifications/resources/list_changed","params":{}}"#
    );
    assert!(server.remove_resource("notes://today"));
    assert_eq!(
        wire.recv().await,
        r#"{"jsonrpc":"2.0","method":"notifications/resources/list_changed","params":{}}"#
    );

    server.add_prompt(PromptDef::new("hello", || async { "Say hello." })).expect("prompt");
    assert_eq!(
        wire.recv().await,
        r#"{"jsonrpc":"2.0","method":"notifications/prompts/list_changed","params":{}}"#
    );
    assert!(server.remove_prompt("hello"));
    assert_eq!(
        wire.recv().await,
        r#"{"jsonrpc":"2.0","method":"notifications/prompts/list_changed","params":{}}"#
    );
    wire.assert_alive().await;
}

/// A bus whose test can say "you may have missed something", as a networked bus does after a
/// reconnect or a hole in an origin's sequence numbers.
#[derive(Clone)]
struct GappyBus(tokio::sync::broadcast::Sender<modelcontext::BusEvent>);

impl GappyBus {
    fn new() -> GappyBus {
        GappyBus(tokio::sync::broadcast::channel(16).0)
    }

    fn gap(&self) {
        let _ = self.0.send(modelcontext::BusEvent::Gap);
    }
}

impl modelcontext::SubscriptionBus for GappyBus {
    fn publish(&self, event: modelcontext::ChangeEvent) {
        let _ = self.0.send(modelcontext::BusEvent::Change(event));
    }

    fn subscribe(&self) -> futures_util::stream::BoxStream<'static, modelcontext::BusEvent> {
        use futures_util::StreamExt;
        let receiver = self.0.subscribe();
        futures_util::stream::unfold(receiver, |mut receiver| async move {
            receiver.recv().await.ok().map(|heard| (heard, receiver))
        })
        .boxed()
    }
}

#[tokio::test]
async fn a_gap_re_notifies_everything_a_listen_stream_asked_for() {
    let bus = GappyBus::new();
    let server = bookshop().subscription_bus(bus.clone());
    let mut wire = Wire::start(server, "2026-07-28");
    let listen = format!(
        r#"{{"jsonrpc":"2.0","id":"l","method":"subscriptions/listen","params":{{"notifications":{{"toolsListChanged":true,"resourcesListChanged":true,"resourceSubscriptions":["books://Dune","books://Emma"]}},{MODERN_META}}}}}"#
    );
    let ack = wire.call(&listen).await;
    assert!(ack.contains("subscriptions/acknowledged"), "{ack}");
    bus.gap();
    let tag = r#""_meta":{"io.modelcontextprotocol/subscriptionId":"l"}"#;
    for expected in [
        format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{{{tag}}}}}"#
        ),
        format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/resources/list_changed","params":{{{tag}}}}}"#
        ),
        format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{{{tag},"uri":"books://Dune"}}}}"#
        ),
        format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{{{tag},"uri":"books://Emma"}}}}"#
        ),
    ] {
        assert_eq!(wire.recv().await, expected);
    }
    // Nothing the filter left out (prompts): the next line answers the next request.
    wire.assert_alive().await;
}

#[tokio::test]
async fn a_gap_re_notifies_a_handshake_client_every_list_and_its_subscribed_uris() {
    let bus = GappyBus::new();
    let server = bookshop().subscription_bus(bus.clone());
    let mut wire = Wire::start(server, "2025-11-25");
    wire.initialize().await;
    let subscribe = r#"{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"books://Dune"}}"#;
    assert_eq!(wire.call(subscribe).await, r#"{"jsonrpc":"2.0","id":1,"result":{}}"#);
    bus.gap();
    for expected in [
        r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/prompts/list_changed","params":{}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/resources/list_changed","params":{}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"books://Dune"}}"#,
    ] {
        assert_eq!(wire.recv().await, expected);
    }
    wire.assert_alive().await;
}
