//! What a listener serves on every connection, as one tower service: the connection code
//! (`http1.rs`, `http2.rs`, `tls.rs`, `serve.rs`) calls it and knows nothing of routes.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::body::Body;
use axum::response::Response;
use futures_util::future::Either;
use hyper::body::Incoming;

use super::{Shared, exchange};

/// What a listener serves on every connection: an axum router (the endpoint's own with more
/// routes, or an application's), or the endpoint alone at `/mcp`, which needs no router:
/// each request then skips the router's path lookup and its boxed, cloned route service.
#[derive(Clone)]
pub(super) enum Served {
    Router(axum::Router),
    Endpoint(Arc<Shared>),
}

/// The answer of one request to [`Served`].
type ServedFuture = Either<
    axum::routing::future::RouteFuture<Infallible>,
    Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>,
>;

impl tower::Service<hyper::Request<Incoming>> for Served {
    type Response = Response;
    type Error = Infallible;
    type Future = ServedFuture;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: hyper::Request<Incoming>) -> ServedFuture {
        match self {
            Served::Router(router) => Either::Left(router.call(request)),
            Served::Endpoint(shared) => {
                let shared = shared.clone();
                Either::Right(Box::pin(async move { Ok(endpoint_at_mcp(shared, request).await) }))
            }
        }
    }
}

/// The endpoint at `/mcp` and nothing else, as a router with that one route answers: 404
/// with an empty body for any other path.
async fn endpoint_at_mcp(shared: Arc<Shared>, request: hyper::Request<Incoming>) -> Response {
    if request.uri().path() != "/mcp" {
        let mut response = Response::new(Body::empty());
        *response.status_mut() = http::StatusCode::NOT_FOUND;
        return response;
    }
    exchange::handle(shared, request.map(Body::new)).await
}
