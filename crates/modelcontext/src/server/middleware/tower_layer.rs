//! Any tower [`Layer`](tower::Layer) as a [`Middleware`] (feature `http`, where tower is
//! already a dependency): [`from_layer`].

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use modelcontext_types::McpError;
use tower::{Layer, Service, ServiceExt};

use super::middleware::{Middleware, Next, Request, Response, ResponseFuture};

/// A middleware made of a tower [`Layer`](tower::Layer): tower's own (`TimeoutLayer`,
/// `ConcurrencyLimitLayer`, a `ServiceBuilder` of several) or yours. The layer wraps a
/// [`NextService`], the rest of the chain as a tower service taking a middleware [`Request`]
/// and returning its [`Response`]; the service it makes must do the same. Add the result like
/// any middleware: for the whole server, or for one tool, resource or prompt.
///
/// The layer is applied once per request, around that request's [`Next`]: a layer that keeps
/// state across requests (a concurrency limit, a rate limit) must share it between the
/// services it makes, as tower's own do (they hold it in an `Arc`). An error from the
/// service becomes a -32603 response carrying the error's message.
///
/// ```
/// use modelcontext::server::middleware::{Request, from_layer};
/// use modelcontext::{McpServer, ToolDef};
/// use tower::util::MapRequestLayer;
///
/// // Every call of `search` asks for 10 results at most.
/// let at_most_ten = MapRequestLayer::new(|mut request: Request| {
///     if let Some(arguments) = request.arguments_mut() {
///         arguments.insert("limit".into(), 10.into());
///     }
///     request
/// });
/// let search = ToolDef::new("search", |_: serde_json::Value| async { "results" })
///     .middleware(from_layer(at_most_ten));
/// let server = McpServer::new("bounded").tool(search)?;
/// # Ok::<(), modelcontext::Error>(())
/// ```
pub fn from_layer<L>(layer: L) -> FromLayer<L>
where
    L: Layer<NextService> + Send + Sync + 'static,
    L::Service: Service<Request, Response = Response> + Send + 'static,
    <L::Service as Service<Request>>::Future: Send + 'static,
    <L::Service as Service<Request>>::Error: std::fmt::Display,
{
    FromLayer(layer)
}

/// The middleware [`from_layer`] makes.
#[derive(Clone, Debug)]
pub struct FromLayer<L>(L);

impl<L> Middleware for FromLayer<L>
where
    L: Layer<NextService> + Send + Sync + 'static,
    L::Service: Service<Request, Response = Response> + Send + 'static,
    <L::Service as Service<Request>>::Future: Send + 'static,
    <L::Service as Service<Request>>::Error: std::fmt::Display,
{
    fn handle(&self, request: Request, next: Next) -> ResponseFuture {
        let service = self.0.layer(NextService(next));
        Box::pin(async move {
            match service.oneshot(request).await {
                Ok(response) => response,
                Err(error) => Response::error(McpError::internal(error.to_string())),
            }
        })
    }
}

/// The rest of a request's chain, then its handler, as the tower service a [`from_layer`]
/// layer wraps. Each call runs the rest of the chain anew, so a layer may call it (or a clone
/// of it) again: a retry.
#[derive(Clone, Debug)]
pub struct NextService(Next);

impl Service<Request> for NextService {
    type Response = Response;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send + 'static>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let next = self.0.clone();
        Box::pin(async move { Ok(next.run(request).await) })
    }
}
