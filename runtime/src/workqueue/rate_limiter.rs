//! Rate limiters deciding how long a failed key waits before it is queued again.
//!
//! The [`RateLimiter`] trait is client-go's `TypedRateLimiter`: [`when`](RateLimiter::when) is
//! asked on every [`add_rate_limited`](super::WorkQueue::add_rate_limited) and may count a
//! failure, [`forget`](RateLimiter::forget) clears that count, and
//! [`num_requeues`](RateLimiter::num_requeues) reads it. This module has the pieces
//! kube-controller-manager combines:
//!
//! - [`ItemExponentialFailureRateLimiter`]: per key, `base · 2^failures`, capped.
//! - [`BucketRateLimiter`]: one token bucket shared by all keys, reservation style
//!   (golang.org/x/time/rate `Reserve().Delay()`).
//! - [`MaxOfRateLimiter`]: the longest delay of several limiters.
//!
//! [`default_controller_rate_limiter`] and [`namespace_controller_rate_limiter`] build the two
//! combinations the controllers use. Time is `tokio::time`, so paused-clock tests are exact;
//! [`BucketRateLimiter::reserve_at`] also takes the instant explicitly.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use kcm_gotime::TokenBucket;
use tokio::time::Instant;

/// Decides how long a key waits before it is queued again after a failure.
#[doc(alias = "TypedRateLimiter")]
pub trait RateLimiter<K>: Send + Sync {
    /// How long `item` should wait now. Limiters that count failures count this call as one.
    fn when(&self, item: &K) -> Duration;
    /// Stops tracking `item` (it succeeded, or the caller gave up on it).
    fn forget(&self, item: &K);
    /// How many failures `item` has had since it was last forgotten.
    fn num_requeues(&self, item: &K) -> u32;
}

impl<K, L: RateLimiter<K> + ?Sized> RateLimiter<K> for Box<L> {
    fn when(&self, item: &K) -> Duration {
        (**self).when(item)
    }
    fn forget(&self, item: &K) {
        (**self).forget(item);
    }
    fn num_requeues(&self, item: &K) -> u32 {
        (**self).num_requeues(item)
    }
}

impl<K, L: RateLimiter<K> + ?Sized> RateLimiter<K> for Arc<L> {
    fn when(&self, item: &K) -> Duration {
        (**self).when(item)
    }
    fn forget(&self, item: &K) {
        (**self).forget(item);
    }
    fn num_requeues(&self, item: &K) -> u32 {
        (**self).num_requeues(item)
    }
}

/// client-go's `DefaultControllerRateLimiter`: the maximum of a per-key exponential backoff
/// (5 ms · 2^failures, capped at 1000 s) and an overall token bucket of 10 qps with a burst of 100.
#[doc(alias = "DefaultControllerRateLimiter")]
pub fn default_controller_rate_limiter<K: Clone + Eq + Hash + Send + Sync + 'static>() -> MaxOfRateLimiter<K> {
    MaxOfRateLimiter::new(vec![
        Box::new(ItemExponentialFailureRateLimiter::new(Duration::from_millis(5), Duration::from_secs(1000))),
        Box::new(BucketRateLimiter::new(10.0, 100)),
    ])
}

/// The namespace controller's limiter: like [`default_controller_rate_limiter`] but the per-key
/// backoff is capped at 60 s.
pub fn namespace_controller_rate_limiter<K: Clone + Eq + Hash + Send + Sync + 'static>() -> MaxOfRateLimiter<K> {
    MaxOfRateLimiter::new(vec![
        Box::new(ItemExponentialFailureRateLimiter::new(Duration::from_millis(5), Duration::from_secs(60))),
        Box::new(BucketRateLimiter::new(10.0, 100)),
    ])
}

/// Locks `mutex`, carrying on with the data if a previous holder panicked: every critical
/// section here leaves the map or bucket consistent.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

// === impl ItemExponentialFailureRateLimiter ===

/// Per-key exponential backoff: the n-th failure since the key was last forgotten waits
/// `base · 2^(n-1)`, capped at `max`.
///
/// With base 5 ms and max 1000 s: 5 ms, 10 ms, 20 ms, … and 1000 s from the 19th failure on
/// (5 ms · 2^18 = 1310.72 s).
#[derive(Debug)]
pub struct ItemExponentialFailureRateLimiter<K> {
    /// Failures per key; an entry exists from the first `when` until `forget`.
    failures: Mutex<HashMap<K, u32>>,
    base_delay: Duration,
    max_delay: Duration,
}

impl<K> ItemExponentialFailureRateLimiter<K> {
    /// A limiter whose first delay is `base_delay`, doubling up to `max_delay`.
    pub fn new(base_delay: Duration, max_delay: Duration) -> Self {
        Self { failures: Mutex::new(HashMap::new()), base_delay, max_delay }
    }

    /// client-go's `DefaultItemBasedRateLimiter`: 1 ms doubling up to 1000 s.
    #[doc(alias = "DefaultItemBasedRateLimiter")]
    pub fn default_item_based() -> Self {
        Self::new(Duration::from_millis(1), Duration::from_secs(1000))
    }
}

impl<K: Clone + Eq + Hash + Send + Sync> RateLimiter<K> for ItemExponentialFailureRateLimiter<K> {
    fn when(&self, item: &K) -> Duration {
        let exp = {
            let mut failures = lock(&self.failures);
            let count = failures.entry(item.clone()).or_insert(0);
            let exp = *count;
            *count = count.saturating_add(1);
            exp
        };
        // Computed in floating point so that large exponents saturate instead of overflowing.
        let backoff = self.base_delay.as_nanos() as f64 * 2f64.powf(f64::from(exp));
        if backoff > self.max_delay.as_nanos() as f64 || backoff > u64::MAX as f64 {
            return self.max_delay;
        }
        Duration::from_nanos(backoff as u64)
    }

    fn forget(&self, item: &K) {
        lock(&self.failures).remove(item);
    }

    fn num_requeues(&self, item: &K) -> u32 {
        lock(&self.failures).get(item).copied().unwrap_or(0)
    }
}

// === impl BucketRateLimiter ===

/// One token bucket for all keys: `qps` tokens per second, at most `burst` stored, full at start.
///
/// Every [`when`](RateLimiter::when) reserves a token, even one that is not there yet: the
/// bucket goes into debt and the returned delay is the time until the debt is paid. So the first
/// `burst` calls return zero and, without pause, each further call waits `1/qps` more than the
/// previous one (10 qps: 100 ms, 200 ms, …). It never counts failures.
#[derive(Debug)]
pub struct BucketRateLimiter(Mutex<TokenBucket<std::time::Instant>>);

impl BucketRateLimiter {
    /// A bucket refilled at `qps` tokens per second holding at most `burst` tokens.
    ///
    /// `qps` must be positive and finite, and `burst` at least 1.
    pub fn new(qps: f64, burst: u32) -> Self {
        debug_assert!(qps > 0.0 && qps.is_finite(), "qps must be positive and finite");
        debug_assert!(burst >= 1, "burst must be at least 1");
        Self(Mutex::new(TokenBucket::new(qps, burst)))
    }

    /// Reserves one token at `now` and returns how long to wait until it is available.
    pub fn reserve_at(&self, now: Instant) -> Duration {
        lock(&self.0).reserve(now.into_std())
    }
}

impl<K> RateLimiter<K> for BucketRateLimiter {
    fn when(&self, _item: &K) -> Duration {
        self.reserve_at(Instant::now())
    }

    fn forget(&self, _item: &K) {}

    fn num_requeues(&self, _item: &K) -> u32 {
        0
    }
}

// === impl MaxOfRateLimiter ===

/// Asks every limiter and keeps the worst answer.
///
/// Every limiter sees every call, so with a token bucket inside, keys that another limiter
/// delays longer still spend bucket tokens (as upstream, the burst can then seem exceeded).
pub struct MaxOfRateLimiter<K> {
    limiters: Vec<Box<dyn RateLimiter<K>>>,
}

impl<K> MaxOfRateLimiter<K> {
    /// Combines `limiters`; with none, every delay is zero.
    pub fn new(limiters: Vec<Box<dyn RateLimiter<K>>>) -> Self {
        Self { limiters }
    }
}

impl<K> std::fmt::Debug for MaxOfRateLimiter<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MaxOfRateLimiter").field("limiters", &self.limiters.len()).finish()
    }
}

impl<K> RateLimiter<K> for MaxOfRateLimiter<K> {
    fn when(&self, item: &K) -> Duration {
        // Not a short-circuiting max: every limiter must record the call.
        self.limiters.iter().map(|limiter| limiter.when(item)).fold(Duration::ZERO, Duration::max)
    }

    fn forget(&self, item: &K) {
        for limiter in &self.limiters {
            limiter.forget(item);
        }
    }

    fn num_requeues(&self, item: &K) -> u32 {
        self.limiters.iter().map(|limiter| limiter.num_requeues(item)).max().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn exponential_doubles_from_base_and_caps() {
        let limiter = ItemExponentialFailureRateLimiter::new(5 * MS, Duration::from_secs(1000));
        let key = "ns/a".to_owned();
        let delays: Vec<_> = (0..21).map(|_| limiter.when(&key)).collect();
        let expected: Vec<_> =
            (0..21).map(|n| (5 * MS * 2u32.pow(n)).min(Duration::from_secs(1000))).collect::<Vec<_>>();
        assert_eq!(delays, expected);
        assert_eq!(delays[..4], [5 * MS, 10 * MS, 20 * MS, 40 * MS]);
        assert_eq!(delays[17], Duration::from_micros(655_360_000));
        assert_eq!(delays[18], Duration::from_secs(1000), "the 19th retry reaches the cap");
        assert_eq!(limiter.num_requeues(&key), 21);
    }

    #[test]
    fn exponential_is_per_key_and_forget_resets() {
        let limiter = ItemExponentialFailureRateLimiter::new(MS, Duration::from_secs(1));
        let (a, b) = ("a".to_owned(), "b".to_owned());
        assert_eq!(limiter.when(&a), MS);
        assert_eq!(limiter.when(&a), 2 * MS);
        assert_eq!(limiter.when(&b), MS);
        assert_eq!((limiter.num_requeues(&a), limiter.num_requeues(&b)), (2, 1));
        limiter.forget(&a);
        assert_eq!(limiter.num_requeues(&a), 0);
        assert_eq!(limiter.when(&a), MS);
        assert_eq!(limiter.num_requeues(&b), 1);
    }

    #[test]
    fn exponential_never_overflows() {
        let limiter = ItemExponentialFailureRateLimiter::new(Duration::from_secs(1), Duration::MAX);
        let key = 7u8;
        for _ in 0..200 {
            limiter.when(&key);
        }
        assert_eq!(limiter.when(&key), Duration::MAX);
    }

    #[test]
    fn namespace_limiter_caps_at_a_minute() {
        let limiter = namespace_controller_rate_limiter::<String>();
        let key = "kube-system".to_owned();
        for _ in 0..19 {
            limiter.when(&key);
        }
        let last = limiter.when(&key);
        assert_eq!(last, Duration::from_secs(60));
    }

    #[tokio::test(start_paused = true)]
    async fn bucket_allows_burst_then_spaces_by_one_over_qps() {
        let bucket = BucketRateLimiter::new(10.0, 100);
        let now = Instant::now();
        for _ in 0..100 {
            assert_eq!(bucket.reserve_at(now), Duration::ZERO);
        }
        for n in 1..=5u32 {
            assert_eq!(bucket.reserve_at(now), 100 * MS * n);
        }
        // 500 ms later the five outstanding reservations are paid: the next waits 100 ms again.
        assert_eq!(bucket.reserve_at(now + 500 * MS), 100 * MS);
        // After a long pause the bucket is full again, never more than `burst`.
        let later = now + Duration::from_secs(3600);
        for _ in 0..100 {
            assert_eq!(bucket.reserve_at(later), Duration::ZERO);
        }
        assert_eq!(bucket.reserve_at(later), 100 * MS);
    }

    #[tokio::test(start_paused = true)]
    async fn bucket_uses_tokio_time() {
        let bucket = BucketRateLimiter::new(1.0, 1);
        assert_eq!(RateLimiter::<()>::when(&bucket, &()), Duration::ZERO);
        assert_eq!(RateLimiter::<()>::when(&bucket, &()), Duration::from_secs(1));
        tokio::time::advance(Duration::from_secs(3)).await;
        // Debt of one token paid after 1 s, then refilled to the burst of 1.
        assert_eq!(RateLimiter::<()>::when(&bucket, &()), Duration::ZERO);
        assert_eq!(RateLimiter::<()>::num_requeues(&bucket, &()), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn max_of_takes_the_longest_and_forgets_everywhere() {
        let limiter = default_controller_rate_limiter::<String>();
        let key = "ns/a".to_owned();
        // Per-key backoff dominates while the bucket has tokens.
        assert_eq!(limiter.when(&key), 5 * MS);
        assert_eq!(limiter.when(&key), 10 * MS);
        // 98 other keys use up the rest of the burst; the bucket then dominates a fresh key.
        for i in 0..98 {
            limiter.when(&format!("other/{i}"));
        }
        assert_eq!(limiter.when(&"fresh".to_owned()), 100 * MS);
        assert_eq!(limiter.num_requeues(&key), 2);
        limiter.forget(&key);
        assert_eq!(limiter.num_requeues(&key), 0);
        // The bucket still remembers its debt: the next reservation waits 200 ms.
        assert_eq!(limiter.when(&key), 200 * MS);
    }

    #[test]
    fn empty_max_of_is_zero() {
        let limiter = MaxOfRateLimiter::<u8>::new(Vec::new());
        assert_eq!(limiter.when(&1), Duration::ZERO);
        assert_eq!(limiter.num_requeues(&1), 0);
    }
}
