//! Handshake-era (2025-11-25 and older) sessions over Streamable HTTP.
//!
//! `initialize` without a session starts one: its [`ServerSession`] state, its `Peer`, and an
//! id minted from the OS CSPRNG, returned in `Mcp-Session-Id`. Each later POST dispatches its
//! own request on the session's state and runs the handler's first poll in its own task: an
//! answer ready then goes back as JSON from there. Notifications and the client's answers to
//! our requests are taken there too. Only a handler that is not done needs the session's
//! engine, started then (an idle session has no task of its own). What the session sends is
//! delivered by the task that sends it, to an HTTP stream:
//! - a response goes to the POST that carried its request;
//! - a progress notification goes to the POST whose request carried its token;
//! - anything else the server initiates (log messages, requests to the client) goes to the
//!   most recent POST still waiting, else to the standalone GET stream.
//!
//! Each POST's SSE stream and the GET stream are resumable: every event is stored in the
//! endpoint's [`EventStore`](super::EventStore) before it goes out, with the id the store
//! gave it; a `GET` with `Last-Event-ID` follows that stream in the store (its missed events,
//! then the rest as they are stored, whichever instance stores them).
//! A client that disconnects does not cancel anything (spec 2025-11-25).
//!
//! A session has one standalone GET stream at a time: a second GET is 409 Conflict. With a
//! [`PeerRouter`] that holds across the deployment: the instance that opens the stream claims
//! it ([`PeerRouter::claim_standalone`]) while it is open, a GET on another instance meanwhile
//! is 409, and what the session sends outside a request on an instance that does not hold the
//! stream is forwarded to the holder ([`Routed::to_client`]), which sends it there. Change
//! notifications (`*/list_changed`, `resources/updated`) are not forwarded: every instance
//! hears them from the [`SubscriptionBus`](crate::SubscriptionBus), the holder included.
//!
//! With a [`SessionStore`] ([`HttpOptions::session_store`](super::HttpOptions)), sessions are
//! shared by the instances of a deployment. `initialize` stores the session's record; a
//! request for a session this instance does not hold loads the record and rebuilds the
//! session from it (no `initialize` replayed into user code); `logging/setLevel`,
//! `resources/(un)subscribe` and `notifications/initialized` update it before they are
//! answered; DELETE deletes it. What other instances change arrives through
//! [`SessionStore::events`] and is applied to the sessions held here, so a request on a
//! session held here costs no store call (the idle time is pushed to the store at most once
//! per sweep period, in the background). After a [`SessionEvent::Gap`] each held session is
//! checked against the store on its next request. A store that cannot answer makes a request
//! whose session it had to load a 503 with `Retry-After`, never a 404.
//!
//! [`ServerSession`]: crate::server

mod get_stream;
mod post;
mod refusals;
mod routes;
mod session;
mod table;

pub(crate) use get_stream::{endpoint_stream_slot, get};
pub(crate) use post::{called_tool, delete, post};
pub(crate) use session::{SESSION_HEADER, Session};
pub(crate) use table::Sessions;
