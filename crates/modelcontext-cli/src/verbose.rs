//! `--verbose`: every JSON-RPC message sent and received, as it crosses the wire. The same
//! tap feeds `mcp ui`'s message pane.
//!
//! The tap sits between the client's engine and the transport, so it sees exactly what the
//! SDK sends and what it is given, whatever the transport (a child's pipes or HTTP).

use std::sync::Arc;

use modelcontext::transport::{SessionIdWatch, Settled};
use modelcontext::types::Message;
use modelcontext::{Connection, Transport};
use tokio::sync::mpsc;

/// Which way a message went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// From us to the server.
    Sent,
    /// From the server to us.
    Received,
}

/// Where tapped messages go: the direction and the message as JSON text (or, for something
/// received that did not decode, why not).
pub type Sink = Arc<dyn Fn(Direction, String) + Send + Sync>;

/// The `--verbose` sink: `mcp: --> {..}` and `mcp: <-- {..}` on stderr.
pub fn to_stderr() -> Sink {
    Arc::new(|direction, text| match direction {
        Direction::Sent => say!("mcp: --> {text}"),
        Direction::Received => say!("mcp: <-- {text}"),
    })
}

/// A transport whose messages are handed to a sink on their way through.
pub struct Tapped<T>(pub T, pub Sink);

impl<T: Transport> Transport for Tapped<T> {
    fn network_transport(&self) -> &'static str {
        self.0.network_transport()
    }

    fn session_id_watch(&self) -> Option<SessionIdWatch> {
        self.0.session_id_watch()
    }

    fn settled(&self) -> Option<Settled> {
        self.0.settled()
    }

    fn open(self) -> Connection {
        let Tapped(inner, sink) = self;
        let Connection { sender, mut receiver, shutdown } = inner.open();
        let (to_peer, mut outgoing) = mpsc::channel::<Message>(64);
        let sent = sink.clone();
        tokio::spawn(async move {
            while let Some(message) = outgoing.recv().await {
                sent(Direction::Sent, message.encode());
                if sender.send(message).await.is_err() {
                    break;
                }
            }
        });
        let (to_engine, incoming) = mpsc::channel(64);
        tokio::spawn(async move {
            while let Some(message) = receiver.recv().await {
                match &message {
                    Ok(message) => sink(Direction::Received, message.encode()),
                    Err(err) => sink(Direction::Received, format!("(undecodable: {err})")),
                }
                if to_engine.send(message).await.is_err() {
                    break;
                }
            }
        });
        Connection { sender: to_peer, receiver: incoming, shutdown }
    }
}
