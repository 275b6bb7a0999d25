//! Host names to addresses for the connector (hyper-util's `HttpConnector` takes any
//! `Service<Name>`): the system's resolver, or fixed addresses in tests.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
#[cfg(test)]
use std::sync::Arc;
use std::task::{Context, Poll};

use hyper_util::client::legacy::connect::dns::{GaiResolver, Name};

/// The system's resolver (`getaddrinfo`, off the runtime's threads), or fixed addresses.
#[derive(Clone)]
pub(crate) enum Resolver {
    System(GaiResolver),
    #[cfg(test)]
    Fixed(Arc<Vec<SocketAddr>>),
}

impl Resolver {
    pub(crate) fn system() -> Resolver {
        Resolver::System(GaiResolver::new())
    }
}

impl tower::Service<Name> for Resolver {
    type Response = std::vec::IntoIter<SocketAddr>;
    type Error = io::Error;
    type Future = Pin<Box<dyn Future<Output = io::Result<Self::Response>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, name: Name) -> Self::Future {
        match self {
            Resolver::System(system) => {
                let lookup = system.call(name);
                Box::pin(async move { Ok(lookup.await?.collect::<Vec<_>>().into_iter()) })
            }
            #[cfg(test)]
            Resolver::Fixed(addrs) => {
                let addrs = addrs.to_vec();
                Box::pin(async move { Ok(addrs.into_iter()) })
            }
        }
    }
}
