//! Per-call client options: timeouts (reset by progress, capped), progress callbacks, extra
//! `_meta`, cancellation by dropping the call, and the notification handler.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use modelcontext::client::CallOptions;
use modelcontext::server::NoArgs;
use modelcontext::{Client, Context, EraMode, ErrorKind, McpServer, ToolDef};
use serde_json::json;
use tokio::sync::oneshot;

/// `ticks` reports progress every 80 ms, five times, then answers.
fn ticking_server() -> McpServer {
    let ticks = ToolDef::new("ticks", |cx: Context, _: NoArgs| async move {
        for step in 1..=5 {
            tokio::time::sleep(Duration::from_millis(80)).await;
            cx.report_progress(f64::from(step), Some(5.0), None).await;
        }
        tokio::time::sleep(Duration::from_millis(80)).await;
        "done"
    });
    let meta = ToolDef::new("meta", |cx: Context, _: NoArgs| async move {
        let meta = cx.meta().map(|m| (m.other.clone(), m.progress_token.clone()));
        format!("{meta:?}")
    });
    McpServer::new("ticks").tool(ticks).expect("ticks").tool(meta).expect("meta")
}

#[tokio::test(start_paused = true)]
async fn progress_resets_the_timeout_up_to_the_maximum() {
    for mode in [EraMode::Handshake, EraMode::Modern] {
        let client =
            Client::builder().era(mode).connect(ticking_server().in_memory()).await.expect("up");
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&seen);
        let options = CallOptions::new()
            .timeout(Duration::from_millis(100))
            .reset_timeout_on_progress(Duration::from_secs(10))
            .on_progress(move |p| log.lock().expect("lock").push(p.progress));
        let result = client.call_tool_with("ticks", json!({}), &options).await.expect("answered");
        assert_eq!(result.is_error, None);
        assert_eq!(*seen.lock().expect("lock"), [1.0, 2.0, 3.0, 4.0, 5.0], "{mode:?}");

        let no_reset = CallOptions::new().timeout(Duration::from_millis(100)).on_progress(|_| {});
        let err = client.call_tool_with("ticks", json!({}), &no_reset).await.expect_err("late");
        assert_eq!(err.kind(), ErrorKind::Timeout);

        let capped = options.clone().reset_timeout_on_progress(Duration::from_millis(250));
        let err = client.call_tool_with("ticks", json!({}), &capped).await.expect_err("capped");
        assert_eq!(err.kind(), ErrorKind::Timeout);
    }
}

#[tokio::test]
async fn extra_meta_and_the_progress_token_reach_the_handler() {
    let client = Client::connect(ticking_server().in_memory()).await.expect("up");
    let options = CallOptions::new().meta("traceparent", "00-abc-01").on_progress(|_| {});
    let result = client.call_tool_with("meta", json!({}), &options).await.expect("ok");
    let text = serde_json::to_value(&result.content).expect("json")[0]["text"].clone();
    let text = text.as_str().expect("text");
    assert!(text.contains(r#""traceparent": String("00-abc-01")"#), "{text}");
    assert!(text.contains("Some(Number("), "a numeric progress token: {text}");
}

#[tokio::test]
async fn dropping_a_call_cancels_it_at_the_server() {
    let (started_tx, started_rx) = oneshot::channel::<()>();
    let (dropped_tx, dropped_rx) = oneshot::channel::<()>();
    let signals = Arc::new(Mutex::new((Some(started_tx), Some(dropped_tx))));
    let wait = ToolDef::new("wait", move || {
        let mut signals = signals.lock().expect("lock");
        let _ = signals.0.take().map(|tx| tx.send(()));
        let guard = DropSignal(signals.1.take());
        async move {
            let _guard = guard;
            std::future::pending::<()>().await;
        }
    });
    let server = McpServer::new("waiter").tool(wait).expect("registers");
    let client = Client::connect(server.in_memory()).await.expect("up");
    let call = client.call_tool("wait", json!({}));
    tokio::select! {
        _ = call => panic!("the call cannot finish"),
        _ = started_rx => {}
    }
    // The call future is gone: the server hears `notifications/cancelled` and drops it.
    tokio::time::timeout(Duration::from_secs(5), dropped_rx)
        .await
        .expect("the handler was dropped")
        .expect("signal");
}

struct DropSignal(Option<oneshot::Sender<()>>);

impl Drop for DropSignal {
    fn drop(&mut self) {
        if let Some(tx) = self.0.take() {
            let _ = tx.send(());
        }
    }
}

#[tokio::test]
async fn the_notification_handler_sees_every_server_notification() {
    let say = ToolDef::new("say", |cx: Context, _: NoArgs| async move {
        cx.info("hello").await;
        "said"
    });
    let server = McpServer::new("say").tool(say).expect("registers");
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let client = Client::builder()
        .era(EraMode::Handshake)
        .on_notification(move |n| {
            let _ = tx.send((n.method, n.params.map(|p| p.get().to_owned())));
        })
        .connect(server.in_memory())
        .await
        .expect("up");
    client.call_tool("say", json!({})).await.expect("said");
    assert_eq!(
        rx.try_recv().expect("one notification"),
        ("notifications/message".to_owned(), Some(r#"{"level":"info","data":"hello"}"#.to_owned()))
    );
}

#[tokio::test]
async fn work_handed_off_by_a_handler_sees_the_cancellation() {
    let (seen_tx, seen_rx) = oneshot::channel::<bool>();
    let seen = Arc::new(Mutex::new(Some(seen_tx)));
    let (started_tx, started_rx) = oneshot::channel::<()>();
    let started = Arc::new(Mutex::new(Some(started_tx)));
    let slow = ToolDef::new("slow", move |cx: Context, _: NoArgs| {
        let (seen, started) = (Arc::clone(&seen), Arc::clone(&started));
        async move {
            let worker = cx.clone();
            tokio::spawn(async move {
                worker.cancelled().await;
                let _ = seen.lock().expect("lock").take().map(|tx| tx.send(worker.is_cancelled()));
            });
            let _ = started.lock().expect("lock").take().map(|tx| tx.send(()));
            std::future::pending::<()>().await;
        }
    });
    let server = McpServer::new("slow").tool(slow).expect("registers");
    let client = Client::connect(server.in_memory()).await.expect("up");
    tokio::select! {
        _ = client.call_tool("slow", json!({})) => panic!("cannot finish"),
        _ = started_rx => {}
    }
    let seen = tokio::time::timeout(Duration::from_secs(5), seen_rx).await.expect("in time");
    assert!(seen.expect("signal"), "is_cancelled agrees");
}

#[tokio::test]
async fn every_progress_update_sent_before_the_answer_reaches_the_callback() {
    let burst = ToolDef::new("burst", |cx: Context, _: NoArgs| async move {
        for step in 1..=50 {
            cx.report_progress(f64::from(step), None, None).await;
        }
        "done"
    });
    let server = McpServer::new("burst").tool(burst).expect("registers");
    for mode in [EraMode::Handshake, EraMode::Modern] {
        let client = Client::builder().era(mode).connect(server.in_memory()).await.expect("up");
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&seen);
        let options =
            CallOptions::new().on_progress(move |p| log.lock().expect("lock").push(p.progress));
        client.call_tool_with("burst", json!({}), &options).await.expect("done");
        let expected: Vec<f64> = (1..=50).map(f64::from).collect();
        assert_eq!(*seen.lock().expect("lock"), expected, "{mode:?}");
    }
}

#[tokio::test(start_paused = true)]
async fn an_initialize_that_times_out_is_not_cancelled() {
    use modelcontext::Stdio;
    use tokio::io::{AsyncBufReadExt, BufReader};
    let (client_write, server_read) = tokio::io::duplex(1 << 16);
    let (_server_write, client_read) = tokio::io::duplex(1 << 16);
    let transport = Stdio::new(BufReader::new(client_read), client_write);
    let err = Client::builder()
        .era(EraMode::Handshake)
        .timeout(Some(Duration::from_millis(100)))
        .connect(transport)
        .await
        .expect_err("nobody answers");
    assert_eq!(err.kind(), ErrorKind::Timeout);
    let mut lines = BufReader::new(server_read).lines();
    let first = lines.next_line().await.expect("read").expect("the initialize request");
    assert!(first.contains(r#""method":"initialize""#), "{first}");
    // The spec forbids cancelling initialize: the client closes without another word.
    assert_eq!(lines.next_line().await.expect("read"), None);
}

/// An SDK error a tool returns (a failed nested call, say) reaches the model with its causes,
/// although its `Display` alone is one layer ("I/O error").
#[tokio::test]
async fn an_sdk_error_from_a_tool_reaches_the_model_with_its_causes() {
    let read_disk = ToolDef::new("read_disk", |_: NoArgs| async {
        Err::<String, _>(modelcontext::Error::from(std::io::Error::other("disk on fire")))
    });
    let server = McpServer::new("disk").tool(read_disk).expect("registers");
    let client = Client::connect(server.in_memory()).await.expect("up");
    let result = client.call_tool("read_disk", json!({})).await.expect("a tool error");
    assert_eq!(result.is_error, Some(true));
    let text = serde_json::to_value(&result.content).expect("json")[0]["text"].clone();
    assert_eq!(text, "Error executing tool read_disk: I/O error: disk on fire");
}

/// Progress sent just before the answer reaches the caller before the answer, on every
/// transport and in both eras: the last update is not lost to the result overtaking it.
#[tokio::test]
async fn progress_sent_right_before_the_answer_arrives_first() {
    let quick = ToolDef::new("quick", |cx: Context, _: NoArgs| async move {
        // Not answered in the first poll: the answer and the updates take the streamed path.
        tokio::time::sleep(Duration::from_millis(2)).await;
        for step in 1..=3 {
            cx.report_progress(f64::from(step), Some(3.0), None).await;
        }
        "done"
    });
    let server = McpServer::new("quick").tool(quick).expect("registers");
    crate::support::check_progress_comes_first(&server, "quick", json!({}), 30).await;
}
