//! A load balancer without stickiness: each HTTP request goes to the next backend in turn,
//! unless the test pins it to one backend with the [`PIN`] header.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioIo};

/// The header naming the backend (its index) a request must go to, whatever the turn: how a
/// test forces, say, a resumption onto the instance that did not serve the stream.
pub const PIN: &str = "x-test-backend";

/// Serves on a loopback port until the test ends; returns its address.
pub async fn round_robin(backends: Vec<SocketAddr>) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("address");
    // No Nagle on either side, as a load balancer in front of SSE does: an SSE answer is
    // written in several small pieces, and Nagle's wait for the peer's delayed ACK would add
    // ~40 ms to each (what the `fleet_latency` example measures would be that wait).
    let mut connector = HttpConnector::new();
    connector.set_nodelay(true);
    let client: Client<HttpConnector, Incoming> =
        Client::builder(TokioExecutor::new()).build(connector);
    let next = Arc::new(AtomicUsize::new(0));
    let backends = Arc::new(backends);
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            let _ = socket.set_nodelay(true);
            let (client, next, backends) =
                (client.clone(), Arc::clone(&next), Arc::clone(&backends));
            let service = service_fn(move |mut request: hyper::Request<Incoming>| {
                let pinned = request.headers().get(PIN).and_then(|v| v.to_str().ok()?.parse().ok());
                let turn = pinned.unwrap_or_else(|| next.fetch_add(1, Ordering::Relaxed));
                let backend = backends[turn % backends.len()];
                let path = request.uri().path_and_query().map_or("/", |p| p.as_str()).to_owned();
                *request.uri_mut() = format!("http://{backend}{path}").parse().expect("a uri");
                let client = client.clone();
                async move { client.request(request).await }
            });
            tokio::spawn(async move {
                let connection = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(socket), service);
                let _ = connection.await;
            });
        }
    });
    addr
}
