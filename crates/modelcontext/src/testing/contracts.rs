//! Contract suites: what every implementation of a seam must do, as async functions that panic
//! with a sentence naming the broken rule. Each takes implementations you built, so a suite runs
//! the same against memory, Redis or your own backend.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! use modelcontext::InMemoryBus;
//!
//! // Two handles on one deployment: for the in-memory bus, clones of one bus.
//! let bus = InMemoryBus::default();
//! modelcontext::testing::contracts::subscription_bus(&bus, &bus.clone()).await;
//! # }
//! ```

use std::time::{Duration, Instant, SystemTime};

use futures_util::StreamExt;
use futures_util::stream::BoxStream;

use crate::server::{BusEvent, ChangeEvent, SubscriptionBus};

/// How long a suite waits for an event that should arrive, before it calls it lost.
const DELIVERY_DEADLINE: Duration = Duration::from_secs(5);

/// How many events the slow-subscriber check publishes: more than a bounded buffer holds.
const FLOOD: usize = 2_000;

/// The [`SubscriptionBus`] contract. `a` and `b` are two handles on one deployment, as two
/// server instances would hold them (two connections to one backend; for a bus that only
/// lives in the process, the same bus twice). Each must be ready to deliver when passed in
/// (a networked bus has finished subscribing). Checks, in order:
///
/// 1. every subscriber, on either handle, hears each event published on either handle, in
///    the publisher's order, and no [`BusEvent::Gap`] when nothing was lost;
/// 2. a subscriber that was dropped does not disturb the others;
/// 3. `publish` returns at once while a subscriber never reads (2,000 events well
///    within a second), and that subscriber then hears every event in order, or a `Gap`
///    where some are missing: never a silent hole.
pub async fn subscription_bus(a: &dyn SubscriptionBus, b: &dyn SubscriptionBus) {
    every_subscriber_hears_every_event_in_order(a, b).await;
    a_dropped_subscriber_disturbs_nobody(a, b).await;
    a_slow_subscriber_hears_a_gap_never_a_silent_hole(a, b).await;
}

/// A change event that names its run and position, so order and loss can be read off it.
fn numbered(run: &str, n: usize) -> ChangeEvent {
    ChangeEvent::ResourceUpdated(format!("contract://{run}/{n}"))
}

/// The position of a numbered event of `run`; `None` for anything else (another run's events
/// on a shared backend are not this check's business).
fn position(run: &str, event: &ChangeEvent) -> Option<usize> {
    match event {
        ChangeEvent::ResourceUpdated(uri) => {
            uri.strip_prefix("contract://")?.strip_prefix(run)?.strip_prefix('/')?.parse().ok()
        }
        _ => None,
    }
}

/// A name no other run of a suite shares, so runs against one backend don't mix.
fn fresh_run(check: &str) -> String {
    let mut bytes = [0u8; 6];
    // Without randomness the runs share a name; that only mixes concurrent runs' events.
    let _ = getrandom::fill(&mut bytes);
    let suffix: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!("{check}-{suffix}")
}

/// The next thing `stream` hears that concerns `run` (a numbered event or a gap).
async fn next_for(run: &str, stream: &mut BoxStream<'static, BusEvent>, who: &str) -> BusEvent {
    let deadline = tokio::time::Instant::now() + DELIVERY_DEADLINE;
    loop {
        let heard = tokio::time::timeout_at(deadline, stream.next()).await;
        match heard {
            Err(_) => panic!("{who}: nothing arrived within {DELIVERY_DEADLINE:?}"),
            Ok(None) => panic!("{who}: the subscription ended while the bus was alive"),
            Ok(Some(BusEvent::Change(event))) if position(run, &event).is_none() => continue,
            Ok(Some(heard)) => return heard,
        }
    }
}

async fn every_subscriber_hears_every_event_in_order(
    a: &dyn SubscriptionBus,
    b: &dyn SubscriptionBus,
) {
    let run = fresh_run("order");
    let mut subscribers = [
        ("first subscriber on a", a.subscribe()),
        ("second subscriber on a", a.subscribe()),
        ("subscriber on b", b.subscribe()),
    ];
    for n in 0..3 {
        a.publish(numbered(&run, n));
    }
    for n in 3..6 {
        b.publish(numbered(&run, n));
    }
    for (who, stream) in &mut subscribers {
        // Each publisher's order holds; a's and b's events may interleave.
        let mut from_a = Vec::new();
        let mut from_b = Vec::new();
        while from_a.len() + from_b.len() < 6 {
            match next_for(&run, stream, who).await {
                BusEvent::Change(event) => {
                    let n = position(&run, &event).unwrap_or(usize::MAX);
                    if n < 3 { from_a.push(n) } else { from_b.push(n) }
                }
                other => panic!("{who}: heard {other:?} though nothing was lost"),
            }
        }
        assert_eq!(from_a, [0, 1, 2], "{who}: a's events, in a's order");
        assert_eq!(from_b, [3, 4, 5], "{who}: b's events, in b's order");
    }
}

async fn a_dropped_subscriber_disturbs_nobody(a: &dyn SubscriptionBus, b: &dyn SubscriptionBus) {
    let run = fresh_run("drop");
    let dropped = a.subscribe();
    let mut kept = a.subscribe();
    let mut remote = b.subscribe();
    drop(dropped);
    b.publish(numbered(&run, 0));
    a.publish(numbered(&run, 1));
    for (who, stream) in [("kept subscriber on a", &mut kept), ("subscriber on b", &mut remote)] {
        let mut heard = Vec::new();
        while heard.len() < 2 {
            match next_for(&run, stream, who).await {
                BusEvent::Change(event) => heard.extend(position(&run, &event)),
                other => panic!("{who}: heard {other:?} after another subscriber left"),
            }
        }
        heard.sort_unstable();
        assert_eq!(heard, [0, 1], "{who}: both events after another subscriber left");
    }
}

async fn a_slow_subscriber_hears_a_gap_never_a_silent_hole(
    a: &dyn SubscriptionBus,
    b: &dyn SubscriptionBus,
) {
    let run = fresh_run("flood");
    let mut slow = a.subscribe();
    let mut remote = b.subscribe();
    let started = Instant::now();
    for n in 0..FLOOD {
        a.publish(numbered(&run, n));
    }
    let took = started.elapsed();
    assert!(took < Duration::from_secs(1), "publishing {FLOOD} events took {took:?}");
    for (who, stream) in [("slow subscriber on a", &mut slow), ("subscriber on b", &mut remote)] {
        let mut expected = 0;
        let mut gap_pending = false;
        while expected < FLOOD {
            match next_for(&run, stream, who).await {
                BusEvent::Gap => gap_pending = true,
                BusEvent::Change(event) => {
                    let n = position(&run, &event).unwrap_or(usize::MAX);
                    assert!(n >= expected, "{who}: event {n} after {expected}: out of order");
                    assert!(
                        n == expected || gap_pending,
                        "{who}: events {expected}..{n} missing without a gap"
                    );
                    expected = n + 1;
                    gap_pending = false;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::InMemoryBus;

    #[tokio::test]
    async fn the_in_memory_bus_meets_the_subscription_bus_contract() {
        let bus = InMemoryBus::default();
        super::subscription_bus(&bus, &bus.clone()).await;
    }
}

/// The idle time the session-store checks give a record that must expire: short, so the
/// suite is quick; long enough for a networked store's round trips.
#[cfg(feature = "http")]
const SHORT_IDLE: Duration = Duration::from_millis(600);

/// The [`SessionStore`](crate::server::http::SessionStore) contract, on a store you built
/// (empty or not: each check uses fresh ids). Checks, in order:
///
/// 1. `create` stores a record that `load` returns unchanged; a second `create` with the same
///    id is refused and changes nothing;
/// 2. `update` applies each kind of change, and reports `false` for an unknown id;
/// 3. `touch` keeps a record alive past its first idle time; an untouched one expires, and
///    then `load`, `update` and `touch` all see nothing (an update never revives it), and its
///    id may be created again;
/// 4. `delete` forgets a record, and deleting it again is not an error.
///
/// Check 3 waits about a second of real time: expiry is the subject.
#[cfg(feature = "http")]
pub async fn session_store(store: &dyn crate::server::http::SessionStore) {
    use crate::server::http::{SessionChange, SessionRecord};
    let id = fresh_run("session");
    let long = Duration::from_secs(60);
    let record =
        SessionRecord::new(&id, "2025-11-25", r#"{"capabilities":{}}"#).with_principal("alice");
    let stored = |what: &str| format!("{what} (session {id})");

    assert!(store.create(record.clone(), long).await.expect("create"), "{}", stored("create"));
    assert_eq!(store.load(&id).await.expect("load"), Some(record.clone()), "load returns it");
    let other = SessionRecord::new(&id, "2025-06-18", "{}");
    assert!(!store.create(other, long).await.expect("create"), "a second create is refused");
    assert_eq!(store.load(&id).await.expect("load"), Some(record.clone()), "and changes nothing");

    let mut expected = record;
    for change in [
        SessionChange::Initialized,
        SessionChange::LogLevel("debug".into()),
        SessionChange::Subscribe("books://Dune".into()),
        SessionChange::Subscribe("books://Emma".into()),
        SessionChange::Unsubscribe("books://Dune".into()),
    ] {
        assert!(store.update(&id, change.clone()).await.expect("update"), "{change:?}");
        expected.apply(&change);
        assert_eq!(store.load(&id).await.expect("load"), Some(expected.clone()), "{change:?}");
    }
    let unknown = fresh_run("unknown");
    assert!(!store.update(&unknown, SessionChange::Initialized).await.expect("update"));
    assert!(!store.touch(&unknown, long).await.expect("touch"), "touching an unknown id");
    assert_eq!(store.load(&unknown).await.expect("load"), None);

    let kept = SessionRecord::new(fresh_run("kept"), "2025-11-25", "{}");
    let dropped = SessionRecord::new(fresh_run("dropped"), "2025-11-25", "{}");
    assert!(store.create(kept.clone(), SHORT_IDLE).await.expect("create"));
    assert!(store.create(dropped.clone(), SHORT_IDLE).await.expect("create"));
    tokio::time::sleep(SHORT_IDLE / 2).await;
    assert!(store.touch(&kept.id, SHORT_IDLE).await.expect("touch"), "touch a live record");
    tokio::time::sleep(SHORT_IDLE / 2 + SHORT_IDLE / 4).await;
    assert_eq!(store.load(&kept.id).await.expect("load"), Some(kept.clone()), "touched: alive");
    assert_eq!(store.load(&dropped.id).await.expect("load"), None, "untouched: expired");
    let revive = SessionChange::Subscribe("books://Dune".into());
    assert!(!store.update(&dropped.id, revive).await.expect("update"), "no update after expiry");
    assert!(!store.touch(&dropped.id, long).await.expect("touch"), "no touch after expiry");
    assert_eq!(store.load(&dropped.id).await.expect("load"), None, "an update never revives");
    assert!(store.create(dropped.clone(), long).await.expect("create"), "an expired id is free");

    for gone in [&id, &kept.id, &dropped.id] {
        store.delete(gone).await.expect("delete");
        assert_eq!(store.load(gone).await.expect("load"), None, "deleted");
        store.delete(gone).await.expect("deleting twice is not an error");
        assert!(!store.update(gone, SessionChange::Initialized).await.expect("update"));
    }
}

/// The [`PeerRouter`](crate::server::http::PeerRouter) contract. `a` and `b` are the routers
/// of two instances of one deployment; the suite takes each one's
/// [`incoming`](crate::server::http::PeerRouter::incoming) (call it on neither before).
/// Checks, in order:
///
/// 1. each instance name is valid ([`valid_instance`](crate::server::http::valid_instance))
///    and the two differ;
/// 2. a message `a` forwards to `b` reaches `b`, unchanged (its
///    [`Direction`](crate::server::http::Direction) too, any of them; a broadcast
///    `TaskUpdate` keeps its own), and not `a`;
/// 3. a message `b` broadcasts reaches `a`, and not `b` itself;
/// 4. forwarding to an instance nobody runs is not an error;
/// 5. a session's standalone-stream claim: a free one is taken, its holder may renew it,
///    another ticket is refused while it lives, either side sees who holds it, only the
///    holder's release frees it, an expired one is free again, and of two claims at once
///    exactly one wins.
///
/// Delivery is at most once and a networked router may still be subscribing when the suite
/// starts, so each check sends again (a fresh message) until one arrives, for up to five
/// seconds. The expiry check waits about a second.
#[cfg(feature = "http")]
pub async fn peer_router(
    a: &dyn crate::server::http::PeerRouter,
    b: &dyn crate::server::http::PeerRouter,
) {
    use crate::server::http::{Direction, Routed, valid_instance};
    for router in [a, b] {
        assert!(valid_instance(router.instance()), "instance name {:?}", router.instance());
    }
    assert_ne!(a.instance(), b.instance(), "two instances share a name");
    let (mut a_in, mut b_in) = (a.incoming(), b.incoming());
    let run = fresh_run("peer");

    let mut attempt = 0;
    let forwarded = until_delivered(&mut b_in, || {
        attempt += 1;
        let routed = Routed::new(&run, format!(r#"{{"forwarded":{attempt}}}"#));
        async move { a.forward(b.instance(), routed.clone()).await.map(|()| routed) }
    })
    .await;
    assert!(forwarded.message.starts_with(r#"{"forwarded":"#), "forward delivers: {forwarded:?}");

    let mut attempt = 0;
    let to_client = until_delivered(&mut b_in, || {
        attempt += 1;
        let routed = Routed::to_client(&run, format!(r#"{{"forwarded_to_client":{attempt}}}"#));
        async move { a.forward(b.instance(), routed.clone()).await.map(|()| routed) }
    })
    .await;
    assert_eq!(to_client.direction, Direction::ToClient, "the direction is kept: {to_client:?}");

    let mut attempt = 0;
    let updated = until_delivered(&mut b_in, || {
        attempt += 1;
        let routed = Routed::task_updated(&run, format!(r#"{{"task_updated":{attempt}}}"#));
        async move { a.forward(b.instance(), routed.clone()).await.map(|()| routed) }
    })
    .await;
    assert_eq!(updated.direction, Direction::TaskUpdated, "the direction is kept: {updated:?}");
    let mut attempt = 0;
    let update = until_delivered(&mut a_in, || {
        attempt += 1;
        let routed = Routed::task_update(&run, format!(r#"{{"task_update":{attempt}}}"#));
        async move { b.broadcast(routed.clone()).await.map(|()| routed) }
    })
    .await;
    assert_eq!(update.direction, Direction::TaskUpdate, "the direction is kept: {update:?}");

    let mut attempt = 0;
    let broadcast = until_delivered(&mut a_in, || {
        attempt += 1;
        let routed = Routed::new(&run, format!(r#"{{"broadcast":{attempt}}}"#));
        async move { b.broadcast(routed.clone()).await.map(|()| routed) }
    })
    .await;
    assert!(broadcast.message.starts_with(r#"{"broadcast":"#), "broadcast delivers: {broadcast:?}");

    a.forward("no-such-instance", Routed::new(&run, "{}"))
        .await
        .expect("forwarding to an instance nobody runs is not an error");
    // What reached the wrong side: `a`'s own forward, or `b`'s own broadcast.
    let stray = |routed: &Routed| routed.session == run;
    let quiet = Duration::from_millis(200);
    if let Ok(Some(routed)) = tokio::time::timeout(quiet, a_in.next()).await {
        assert!(!stray(&routed) || routed.message.contains("broadcast"), "a heard {routed:?}");
    }
    if let Ok(Some(routed)) = tokio::time::timeout(quiet, b_in.next()).await {
        assert!(!stray(&routed) || routed.message.contains("forwarded"), "b heard {routed:?}");
    }
    standalone_claims(a, b).await;
}

/// Check 5 of [`peer_router`].
#[cfg(feature = "http")]
async fn standalone_claims(
    a: &dyn crate::server::http::PeerRouter,
    b: &dyn crate::server::http::PeerRouter,
) {
    let (session, ttl) = (fresh_run("claim"), Duration::from_secs(30));
    let (ta, tb) = (format!("{}/1", a.instance()), format!("{}/1", b.instance()));
    let holder = |router: &str, found: Result<Option<String>, crate::server::http::RouteError>| {
        found.unwrap_or_else(|e| panic!("{router}: standalone_holder failed: {e}"))
    };
    assert_eq!(holder("a", a.standalone_holder(&session).await), None, "nobody holds it yet");
    assert!(a.claim_standalone(&session, &ta, ttl).await.expect("claim"), "a free stream is taken");
    assert!(a.claim_standalone(&session, &ta, ttl).await.expect("claim"), "its holder renews it");
    let refused = b.claim_standalone(&session, &tb, ttl).await.expect("claim");
    assert!(!refused, "a stream held by one ticket is refused to another");
    assert_eq!(holder("b", b.standalone_holder(&session).await), Some(ta.clone()), "seen from b");
    b.release_standalone(&session, &tb).await.expect("release");
    assert_eq!(
        holder("a", a.standalone_holder(&session).await),
        Some(ta.clone()),
        "a release by another ticket leaves the claim"
    );
    a.release_standalone(&session, &ta).await.expect("release");
    assert_eq!(holder("b", b.standalone_holder(&session).await), None, "released by its holder");
    assert!(b.claim_standalone(&session, &tb, ttl).await.expect("claim"), "free again");
    b.release_standalone(&session, &tb).await.expect("release");

    let (expiring, short) = (fresh_run("claim"), Duration::from_millis(300));
    assert!(a.claim_standalone(&expiring, &ta, short).await.expect("claim"), "taken");
    tokio::time::sleep(short * 3).await;
    assert_eq!(holder("b", b.standalone_holder(&expiring).await), None, "an expired claim");
    assert!(b.claim_standalone(&expiring, &tb, ttl).await.expect("claim"), "taken after expiry");
    b.release_standalone(&expiring, &tb).await.expect("release");

    let raced = fresh_run("claim");
    let (x, y) =
        tokio::join!(a.claim_standalone(&raced, &ta, ttl), b.claim_standalone(&raced, &tb, ttl));
    let (x, y) = (x.expect("claim"), y.expect("claim"));
    assert!(x != y, "of two claims at once exactly one wins (a: {x}, b: {y})");
    let winner = if x { (a, &ta) } else { (b, &tb) };
    winner.0.release_standalone(&raced, winner.1).await.expect("release");
}

/// The [`PeerRouter`](crate::server::http::PeerRouter) contract for an instance that dies
/// holding a session's standalone GET stream: `a` claims a stream for a minute, then every
/// handle on `a` is dropped (pass the last one) without releasing it, as a crash would leave
/// it; `b` must be granted the stream within `within`, well before the claim would expire.
/// Checks too that while `a` lives its claim is refused to `b`.
#[cfg(feature = "http")]
pub async fn peer_router_takeover(
    a: std::sync::Arc<dyn crate::server::http::PeerRouter>,
    b: &dyn crate::server::http::PeerRouter,
    within: Duration,
) {
    let (session, ttl) = (fresh_run("takeover"), Duration::from_secs(60));
    let (ta, tb) = (format!("{}/1", a.instance()), format!("{}/1", b.instance()));
    assert!(a.claim_standalone(&session, &ta, ttl).await.expect("claim"), "a free stream is taken");
    let refused = b.claim_standalone(&session, &tb, ttl).await.expect("claim");
    assert!(!refused, "the claim of an instance that lives is refused to another");
    drop(a);
    let died = Instant::now();
    loop {
        if b.claim_standalone(&session, &tb, ttl).await.is_ok_and(|taken| taken) {
            break;
        }
        assert!(died.elapsed() < within, "a dead holder's claim still refused after {within:?}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    b.release_standalone(&session, &tb).await.expect("release");
}

/// Sends fresh messages with `send` until one comes out of `incoming` (each unchanged), for
/// up to [`DELIVERY_DEADLINE`]; returns it.
#[cfg(feature = "http")]
async fn until_delivered<F>(
    incoming: &mut BoxStream<'static, crate::server::http::Routed>,
    mut send: impl FnMut() -> F,
) -> crate::server::http::Routed
where
    F: Future<Output = Result<crate::server::http::Routed, crate::server::http::RouteError>>,
{
    let started = Instant::now();
    let mut sent = Vec::new();
    loop {
        assert!(
            started.elapsed() < DELIVERY_DEADLINE,
            "nothing delivered within {DELIVERY_DEADLINE:?}"
        );
        sent.push(send().await.expect("the router takes the message"));
        let heard = tokio::time::timeout(Duration::from_millis(100), incoming.next()).await;
        if let Ok(Some(routed)) = heard {
            assert!(sent.contains(&routed), "delivered changed or unknown: {routed:?}");
            return routed;
        }
    }
}

#[cfg(all(test, feature = "http"))]
mod http_seam_tests {
    use crate::server::http::MemorySessionStore;

    #[tokio::test]
    async fn the_in_memory_session_store_meets_the_session_store_contract() {
        super::session_store(&MemorySessionStore::default()).await;
    }

    #[tokio::test]
    async fn the_in_memory_peer_router_meets_the_peer_router_contract() {
        let router = crate::server::http::MemoryPeerRouter::new();
        super::peer_router(&*router.instance("a"), &*router.instance("b")).await;
    }

    #[tokio::test]
    async fn the_in_memory_peer_router_frees_a_dead_holders_claim_at_once() {
        let router = crate::server::http::MemoryPeerRouter::new();
        let within = std::time::Duration::from_millis(1);
        super::peer_router_takeover(router.instance("a"), &*router.instance("b"), within).await;
    }
}

/// The [`EventStore`](crate::server::http::EventStore) contract. `a` and `b` are two handles
/// on one store, as two server instances would hold them (for the in-memory store, clones of
/// one store). Checks, in order:
///
/// 1. `append` gives ids `<stream>-<position>` that are distinct, on either handle, and
///    `follow` from `"0"` on the other handle gives every event once, in order, with those ids;
///    from an id's position it gives only what came after;
/// 2. a feed follows live: events appended on either handle after `follow` returned arrive,
///    in order, while the feed is read;
/// 3. another session's stream, a stream never written and a malformed position are unknown
///    (`None`), never an empty feed of someone else's events;
/// 4. `end_session` forgets the session's streams (a new `follow` is `None`) and ends the feeds
///    that follow them, and leaves other sessions alone.
#[cfg(feature = "http")]
pub async fn event_store(
    a: &dyn crate::server::http::EventStore,
    b: &dyn crate::server::http::EventStore,
) {
    use crate::server::http::{EventFeed, StreamId};
    use modelcontext_types::{Message, Notification};

    let note = |n: u32| {
        let params = serde_json::value::to_raw_value(&serde_json::json!({ "n": n })).ok();
        Message::Notification(Notification { method: "notifications/message".into(), params })
    };
    let number = |message: &Message| match message {
        Message::Notification(n) => n.params.as_ref().map(|p| p.get().to_owned()),
        _ => None,
    };
    async fn next(feed: &mut EventFeed) -> crate::server::http::StoredEvent {
        let event = tokio::time::timeout(DELIVERY_DEADLINE, feed.next()).await;
        let event = event.expect("a stored event arrives in time");
        event.expect("the feed goes on").expect("the store answers")
    }
    let session = fresh_run("events");
    let other = fresh_run("events-other");
    let post = StreamId { instance: 0x5eed, number: 1 };
    let standalone = StreamId::STANDALONE;

    let mut ids = Vec::new();
    for n in 1..=6u32 {
        let store = if n % 2 == 0 { b } else { a };
        let id = store.append(&session, post, &note(n)).stored().await.expect("append");
        assert!(id.starts_with(&format!("{post}-")), "an id names its stream: {id}");
        ids.push(id);
    }
    let other_stream = a.append(&session, standalone, &note(99)).stored().await.expect("append");
    assert!(!ids.contains(&other_stream), "ids of two streams differ");
    let mut unique = ids.clone();
    unique.dedup();
    assert_eq!(unique.len(), ids.len(), "ids are distinct: {ids:?}");

    let follow = |store: &dyn crate::server::http::EventStore, session: &str, after: &str| {
        store.follow(session, post, after)
    };
    let mut all = follow(b, &session, "0").await.expect("follow").expect("a known stream");
    for (n, id) in (1..=6u32).zip(&ids) {
        let event = next(&mut all).await;
        assert_eq!(&event.id, id, "event {n}: the id append gave");
        assert_eq!(number(&event.message), number(&note(n)), "event {n} in order");
    }
    let position = |id: &str| id.split_once('-').map(|(_, p)| p.to_owned()).expect("an id");
    let mut later = follow(a, &session, &position(&ids[3])).await.expect("follow").expect("known");
    assert_eq!(next(&mut later).await.id, ids[4], "after event 4 comes event 5");
    assert_eq!(next(&mut later).await.id, ids[5]);

    for n in 7..=9u32 {
        let store = if n % 2 == 0 { a } else { b };
        let id = store.append(&session, post, &note(n)).stored().await.expect("append");
        for feed in [&mut all, &mut later] {
            let event = next(feed).await;
            assert_eq!(event.id, id, "event {n} appended after follow arrives live");
            assert_eq!(number(&event.message), number(&note(n)));
        }
    }

    assert!(follow(a, &other, "0").await.expect("follow").is_none(), "another session's stream");
    let never = StreamId { instance: 0x5eed, number: 2 };
    assert!(a.follow(&session, never, "0").await.expect("follow").is_none(), "never written");
    let bad = follow(a, &session, "not a position\n").await;
    assert!(bad.map(|feed| feed.is_none()).unwrap_or(true), "a malformed position");

    a.append(&other, post, &note(1)).stored().await.expect("append");
    b.end_session(&session).await.expect("end_session");
    for feed in [&mut all, &mut later] {
        let ended = tokio::time::timeout(DELIVERY_DEADLINE, feed.next()).await;
        assert!(matches!(ended, Ok(None)), "a feed of an ended session ends");
    }
    assert!(follow(a, &session, "0").await.expect("follow").is_none(), "ended: forgotten");
    assert!(follow(b, &other, "0").await.expect("follow").is_some(), "other sessions stay");
    a.end_session(&other).await.expect("end_session");
}

#[cfg(all(test, feature = "http"))]
mod event_store_tests {
    use crate::server::http::MemoryEventStore;

    #[tokio::test]
    async fn the_in_memory_event_store_meets_the_event_store_contract() {
        let store = MemoryEventStore::default();
        super::event_store(&store, &store.clone()).await;
    }
}

/// The TTL the task-store checks give a task that must expire: short, so the suite is quick;
/// long enough for a networked store's round trips.
const SHORT_TASK_TTL: Duration = Duration::from_millis(600);

/// The [`TaskStore`](crate::server::TaskStore) contract, on a store you built (empty or not:
/// each check uses fresh ids and owners, and leaves at most two unfinished tasks per owner).
/// Times in the records are whole milliseconds, as a store may keep them. Checks, in order:
///
/// 1. `create` stores a record that `get` returns unchanged, its owner included; a second
///    `create` with the same id is refused with [`TaskStoreError::Exists`] and changes
///    nothing; an unknown id is `None`;
/// 2. `update` replaces a record and says so (`true`); a terminal record is never replaced
///    (the first end wins) and an update of an unknown id stores nothing: both are `false`;
/// 3. `get` never returns an expired record: not one created past its TTL, nor one whose TTL
///    passes while it is stored, and an update after expiry does not revive it (`false`).
///
/// Capacity and per-owner bounds are each store's own: test them with the store. Check 3
/// waits about a second of real time: expiry is the subject.
///
/// [`TaskStoreError::Exists`]: crate::server::TaskStoreError::Exists
pub async fn task_store(store: &dyn crate::server::TaskStore) {
    use crate::server::TaskStoreError;
    use modelcontext_types::TaskStatus;

    let owner = fresh_run("owner");
    let record = task_record(&fresh_run("task"), Some(&owner), TaskStatus::Working, None);
    let id = record.task.task.task_id.clone();
    store.create(record.clone()).await.expect("create");
    assert_eq!(store.get(&id).await.expect("get"), Some(record.clone()), "get returns it");
    let other = task_record(&id, None, TaskStatus::Completed, None);
    assert_eq!(store.create(other).await, Err(TaskStoreError::Exists), "a second create");
    assert_eq!(store.get(&id).await.expect("get"), Some(record.clone()), "and changes nothing");
    assert_eq!(store.get(&fresh_run("unknown")).await.expect("get"), None, "an unknown id");

    let mut asking = record.clone();
    asking.task.task.status = TaskStatus::InputRequired;
    assert!(store.update(asking.clone()).await.expect("update"), "an update says it replaced");
    assert_eq!(store.get(&id).await.expect("get"), Some(asking), "an update replaces it");
    let mut completed = record.clone();
    completed.task.task.status = TaskStatus::Completed;
    completed.task.result = serde_json::json!({"content": []}).as_object().cloned();
    assert!(store.update(completed.clone()).await.expect("update"), "the end is stored");
    let mut cancelled = record.clone();
    cancelled.task.task.status = TaskStatus::Cancelled;
    assert!(!store.update(cancelled).await.expect("update"), "a second end is refused");
    assert_eq!(store.get(&id).await.expect("get"), Some(completed), "the first end wins");
    let stranger = task_record(&fresh_run("stranger"), Some(&owner), TaskStatus::Working, None);
    assert!(!store.update(stranger.clone()).await.expect("update"), "an unknown id: refused");
    assert_eq!(store.get(&stranger.task.task.task_id).await.expect("get"), None, "no upsert");

    let past = SystemTime::now() - Duration::from_secs(3600);
    let mut old = task_record(&fresh_run("old"), Some(&owner), TaskStatus::Completed, None);
    old.task.task.ttl_ms = Some(60_000);
    old.created = whole_millis(past);
    store.create(old.clone()).await.expect("create a task past its TTL");
    assert_eq!(store.get(&old.task.task.task_id).await.expect("get"), None, "past its TTL");
    let ttl = Some(SHORT_TASK_TTL);
    let short = task_record(&fresh_run("short"), Some(&owner), TaskStatus::Working, ttl);
    let short_id = short.task.task.task_id.clone();
    store.create(short.clone()).await.expect("create");
    assert_eq!(store.get(&short_id).await.expect("get"), Some(short.clone()), "alive");
    tokio::time::sleep(SHORT_TASK_TTL + SHORT_TASK_TTL / 4).await;
    assert_eq!(store.get(&short_id).await.expect("get"), None, "expired");
    assert!(!store.update(short).await.expect("update"), "an expired task: refused");
    assert_eq!(store.get(&short_id).await.expect("get"), None, "an update never revives it");
}

/// A task record created now (to the millisecond), with a TTL if given.
fn task_record(
    id: &str,
    owner: Option<&str>,
    status: modelcontext_types::TaskStatus,
    ttl: Option<Duration>,
) -> crate::server::TaskRecord {
    use modelcontext_types::{DetailedTask, Task};
    let stamp = "2026-07-28T00:00:00.000Z";
    let ttl_ms = ttl.map(|ttl| u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX));
    let mut task = Task::new(id, status, stamp, stamp, ttl_ms);
    task.poll_interval_ms = Some(500);
    let created = whole_millis(SystemTime::now());
    crate::server::TaskRecord::new(DetailedTask::from(task), owner.map(str::to_owned), created)
}

/// `time` with its sub-millisecond part dropped.
fn whole_millis(time: SystemTime) -> SystemTime {
    let since = time.duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let millis = u64::try_from(since.as_millis()).unwrap_or(u64::MAX);
    std::time::UNIX_EPOCH + Duration::from_millis(millis)
}

#[cfg(test)]
mod task_store_tests {
    use crate::server::InMemoryTaskStore;

    #[tokio::test]
    async fn the_in_memory_task_store_meets_the_task_store_contract() {
        super::task_store(&InMemoryTaskStore::default()).await;
    }
}
