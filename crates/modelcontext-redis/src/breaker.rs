//! A circuit breaker: after a run of failed Redis calls, fail at once for a cool-down instead
//! of making every request wait out its timeout, then let one call through to see whether
//! Redis is back.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::time::Instant;

/// Consecutive failures (errors or timeouts) that open the breaker.
pub const DEFAULT_BREAKER_THRESHOLD: u32 = 3;
/// How long an open breaker fails calls at once before it lets one through.
pub const DEFAULT_BREAKER_COOL_DOWN: Duration = Duration::from_millis(500);

/// What a breaker has done since it was made ([`RedisSessionStore::stats`]).
///
/// [`RedisSessionStore::stats`]: crate::RedisSessionStore::stats
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct BreakerStats {
    /// Calls that went to Redis and failed or timed out.
    pub failures: u64,
    /// Times the breaker opened (a run of failures began an outage).
    pub opened: u64,
    /// Calls failed at once, without going to Redis, while the breaker was open.
    pub short_circuited: u64,
}

pub(crate) struct Breaker {
    threshold: u32,
    cool_down: Duration,
    state: Mutex<State>,
    failures: AtomicU64,
    opened: AtomicU64,
    short_circuited: AtomicU64,
}

#[derive(Default)]
struct State {
    /// Failures in a row since the last success.
    run: u32,
    /// While set and in the future, calls fail at once. Once it has passed, the next call
    /// goes through (half-open) and pushes it one cool-down on, so only that call probes.
    open_until: Option<Instant>,
}

impl Breaker {
    pub(crate) fn new(threshold: u32, cool_down: Duration) -> Breaker {
        Breaker {
            threshold: threshold.max(1),
            cool_down,
            state: Mutex::default(),
            failures: AtomicU64::new(0),
            opened: AtomicU64::new(0),
            short_circuited: AtomicU64::new(0),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether a call may go to Redis now.
    pub(crate) fn admit(&self) -> bool {
        let mut state = self.lock();
        let Some(until) = state.open_until else { return true };
        let now = Instant::now();
        if now < until {
            drop(state);
            self.short_circuited.fetch_add(1, Ordering::Relaxed);
            return false;
        }
        // Half-open: this call probes; the others keep failing fast until it is answered.
        state.open_until = Some(now + self.cool_down);
        true
    }

    /// Records how an admitted call went.
    pub(crate) fn record(&self, ok: bool) {
        let mut state = self.lock();
        if ok {
            if state.open_until.take().is_some() {
                tracing::info!("Redis answers again: the circuit breaker is closed");
            }
            state.run = 0;
            return;
        }
        self.failures.fetch_add(1, Ordering::Relaxed);
        state.run = state.run.saturating_add(1);
        let was_open = state.open_until.is_some();
        if state.run >= self.threshold {
            state.open_until = Some(Instant::now() + self.cool_down);
            if !was_open {
                self.opened.fetch_add(1, Ordering::Relaxed);
                tracing::warn!(
                    failures = state.run,
                    cool_down = ?self.cool_down,
                    "Redis keeps failing: the circuit breaker is open, calls fail at once"
                );
            }
        }
    }

    /// `answer` within `timeout`, unless the breaker is open (then an error at once); its
    /// outcome is recorded. The error says what went wrong, for the store's own error type.
    pub(crate) async fn call<T>(
        &self,
        timeout: Duration,
        answer: impl Future<Output = redis::RedisResult<T>>,
    ) -> Result<T, String> {
        if !self.admit() {
            return Err("redis: failing fast after repeated failures".to_owned());
        }
        let outcome = timed(timeout, answer).await;
        self.record(outcome.is_ok());
        outcome
    }

    pub(crate) fn stats(&self) -> BreakerStats {
        BreakerStats {
            failures: self.failures.load(Ordering::Relaxed),
            opened: self.opened.load(Ordering::Relaxed),
            short_circuited: self.short_circuited.load(Ordering::Relaxed),
        }
    }
}

/// Redis's answer within `timeout`; an error or silence is said in a sentence.
pub(crate) async fn timed<T>(
    timeout: Duration,
    answer: impl Future<Output = redis::RedisResult<T>>,
) -> Result<T, String> {
    match tokio::time::timeout(timeout, answer).await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(error)) => Err(format!("redis: {error}")),
        Err(_) => Err("redis: no answer in time".to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn opens_after_the_threshold_fails_fast_then_lets_one_probe_through() {
        let breaker = Breaker::new(2, Duration::from_secs(1));
        assert!(breaker.admit());
        breaker.record(false);
        assert!(breaker.admit(), "one failure is not an outage");
        breaker.record(false);
        assert!(!breaker.admit(), "open: fails at once");
        tokio::time::advance(Duration::from_secs(1)).await;
        assert!(breaker.admit(), "half-open: one probe");
        assert!(!breaker.admit(), "only one");
        breaker.record(true);
        assert!(breaker.admit(), "closed again");
        let stats = breaker.stats();
        assert_eq!((stats.failures, stats.opened, stats.short_circuited), (2, 1, 2));
    }

    #[tokio::test(start_paused = true)]
    async fn a_failed_probe_opens_it_again() {
        let breaker = Breaker::new(1, Duration::from_secs(1));
        breaker.record(false);
        tokio::time::advance(Duration::from_secs(1)).await;
        assert!(breaker.admit());
        breaker.record(false);
        assert!(!breaker.admit());
        assert_eq!(breaker.stats().opened, 1, "one outage, opened once");
    }
}
