//! `--verbose`: every JSON-RPC message sent and received, on stderr, as it crosses the wire.
//!
//! The tap sits between the client's engine and the transport, so it sees exactly what the
//! SDK sends and what it is given, whatever the transport (a child's pipes or HTTP).

use modelcontext::types::Message;
use modelcontext::{Connection, Transport};
use tokio::sync::mpsc;

/// A transport whose messages are printed on their way through.
pub struct Tapped<T>(pub T);

impl<T: Transport> Transport for Tapped<T> {
    fn open(self) -> Connection {
        let Connection { sender, mut receiver, shutdown } = self.0.open();
        let (to_peer, mut outgoing) = mpsc::channel::<Message>(64);
        tokio::spawn(async move {
            while let Some(message) = outgoing.recv().await {
                say!("mcp: --> {}", message.encode());
                if sender.send(message).await.is_err() {
                    break;
                }
            }
        });
        let (to_engine, incoming) = mpsc::channel(64);
        tokio::spawn(async move {
            while let Some(message) = receiver.recv().await {
                match &message {
                    Ok(message) => say!("mcp: <-- {}", message.encode()),
                    Err(err) => say!("mcp: <-- (undecodable: {err})"),
                }
                if to_engine.send(message).await.is_err() {
                    break;
                }
            }
        });
        Connection { sender: to_peer, receiver: incoming, shutdown }
    }

    fn network_transport(&self) -> &'static str {
        self.0.network_transport()
    }
}
