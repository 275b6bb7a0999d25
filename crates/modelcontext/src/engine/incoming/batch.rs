//! JSON-RPC batches on a connection the loop reads message by message (stdio, in memory), for
//! the one revision that has them (2025-03-26; the HTTP server takes its batches in
//! `server::http::batch`).
//!
//! A batch's elements go where they would go alone, in order: requests to the dispatch (the
//! same admission, running concurrently), notifications and responses as usual. Each request
//! gets a [`BatchSlot`] instead of the wire; once every slot is filled (or dropped, as a
//! cancelled request's is), the answers go out as one array. What handlers send meanwhile
//! (progress, logs, requests of their own) goes out on its own, as JSON-RPC has it.

use futures_util::future::join_all;
use modelcontext_types::{McpError, Message, Response, method};
use tokio::sync::oneshot;
use tracing::Instrument;

use super::{Dispatch, Engine, Incoming, Unsettled, settle};

/// Where the answer to one request of a batch goes.
pub(crate) struct BatchSlot(oneshot::Sender<Response>);

impl BatchSlot {
    /// A slot, and the answer it will receive (an error if the slot is dropped unfilled).
    fn new() -> (BatchSlot, oneshot::Receiver<Response>) {
        let (tx, rx) = oneshot::channel();
        (BatchSlot(tx), rx)
    }

    pub(crate) fn fill(self, response: Response) {
        // The collector is gone only if the connection is: nobody is left to answer.
        let _ = self.0.send(response);
    }
}

/// A slot already filled with `response` (a refusal the batch answers without a handler).
fn answered(response: Response) -> oneshot::Receiver<Response> {
    let (slot, answer) = BatchSlot::new();
    slot.fill(response);
    answer
}

impl<D: Dispatch> Engine<D> {
    /// Handles a batch the dispatch accepts (see [`Dispatch::accepts_batches`]).
    pub(super) async fn handle_batch(&mut self, items: Vec<Incoming>) {
        if items.is_empty() {
            // JSON-RPC 2.0: an empty array is answered with one error, not an array.
            let error = McpError::invalid_request("Invalid request: an empty batch");
            let _ = self.peer.send(Response::error(None, error).into()).await;
            return;
        }
        let mut answers = Vec::new();
        for item in items {
            let message = match item {
                Ok(message) => message,
                // A malformed element (a nested array too) gets its own error in the answer.
                Err(err) => {
                    answers.push(answered(err.to_response()));
                    continue;
                }
            };
            match settle(&self.peer, message, |n| self.dispatch.notification(n, &self.peer)) {
                Unsettled::Nothing => {}
                Unsettled::Request(request) if request.method == method::INITIALIZE => {
                    let error = McpError::invalid_request("initialize must not be part of a batch");
                    answers.push(answered(Response::error(Some(request.id), error)));
                }
                Unsettled::Request(request) => {
                    let (slot, answer) = BatchSlot::new();
                    answers.push(answer);
                    self.handle_request(request, Some(slot)).await;
                }
                Unsettled::Cancelled(cancelled) => self.cancel(cancelled.params.as_deref()),
            }
        }
        if answers.is_empty() {
            return;
        }
        let outgoing = self.peer.outgoing();
        let collect = async move {
            let responses: Vec<Response> =
                join_all(answers).await.into_iter().filter_map(Result::ok).collect();
            if !responses.is_empty() {
                let _ = outgoing.send(Message::BatchResponse(responses)).await;
            }
        };
        tokio::spawn(collect.in_current_span());
    }
}
