//! Lifespan: async start-up and shutdown around serving, the state start-up builds read by
//! handlers, and a failed start-up that leaks nothing.

use std::sync::{Arc, Mutex};

use modelcontext::server::NoArgs;
use modelcontext::{Client, Context, EraMode, McpServer, ToolDef};
use serde_json::json;

use crate::support::{TRANSPORTS, connect};

/// Stands for a connection pool.
struct Pool {
    name: &'static str,
}

type Log = Arc<Mutex<Vec<String>>>;

fn server(log: &Log) -> McpServer {
    let (opened, closed) = (Arc::clone(log), Arc::clone(log));
    let which = ToolDef::new("which_pool", |cx: Context, _: NoArgs| async move {
        cx.lifespan::<Pool>().map_or("no pool".to_owned(), |pool| pool.name.to_owned())
    });
    McpServer::new("pooled")
        .lifespan(
            move || {
                let log = Arc::clone(&opened);
                async move {
                    tokio::task::yield_now().await;
                    log.lock().expect("lock").push("open".into());
                    Ok::<_, std::io::Error>(Pool { name: "main" })
                }
            },
            move |pool: Arc<Pool>| {
                let log = Arc::clone(&closed);
                async move { log.lock().expect("lock").push(format!("close {}", pool.name)) }
            },
        )
        .tool(which)
        .expect("registers")
}

async fn which(client: &Client) -> serde_json::Value {
    let result = client.call_tool("which_pool", json!({})).await.expect("answered");
    serde_json::to_value(&result.content).expect("json")[0]["text"].clone()
}

#[tokio::test]
async fn handlers_see_the_state_start_up_built_until_shutdown() {
    for mode in [EraMode::Handshake, EraMode::Modern] {
        for &http in TRANSPORTS {
            let log = Log::default();
            let server = server(&log);
            let client = connect(server.clone(), Client::builder().era(mode), http).await;
            assert_eq!(which(&client).await, "no pool", "not started yet");
            let running = server.start().await.expect("starts");
            assert_eq!(which(&client).await, "main", "{mode:?} {http}");
            running.shutdown().await;
            assert_eq!(which(&client).await, "no pool", "withdrawn at shutdown");
            assert_eq!(*log.lock().expect("lock"), ["open", "close main"]);
        }
    }
}

#[tokio::test]
async fn a_failed_start_up_stops_what_started_and_returns_the_error() {
    let log = Log::default();
    let server = server(&log)
        .lifespan(|| async { Err::<(), _>("the database is down") }, |_: Arc<()>| async {});
    let err = server.start().await.expect_err("start-up fails");
    assert!(format!("{err:#}").contains("the database is down"), "{err:#}");
    assert_eq!(*log.lock().expect("lock"), ["open", "close main"]);
}
