//! The token bucket of `golang.org/x/time/rate`, as client-go uses it
//! (`flowcontrol.NewTokenBucketRateLimiter` for the API client and the node
//! eviction queues, `workqueue.BucketRateLimiter`, the event spam filter).
//!
//! A bucket holds at most `burst` tokens, starts full and refills at `qps`
//! tokens per second. Two ways to take a token, as upstream's two callers
//! take them:
//! - [`TokenBucket::reserve`] (`Limiter.Reserve`) always takes one, going
//!   into debt when none is there, and says how long until the token is
//!   really available: waiters are then served in the order they asked.
//!   With 10 qps and a burst of 100, the first 100 reservations wait
//!   nothing and, without pause, each further one waits 100 ms more than
//!   the one before (100 ms, 200 ms, ...).
//! - [`TokenBucket::try_take`] (`Limiter.Allow`) takes one only if it is
//!   there.
//!
//! Credit is counted in whole nanoseconds, so refills over many small
//! steps are exact. Time is always an argument ([`Moment`]): the bucket
//! reads no clock, so the sans-IO cores can hold one too.

use std::time::Duration;

/// A point in time a bucket can measure elapsed time between.
pub trait Moment: Copy {
    /// How long after `earlier` this is (zero if it is not after it).
    fn since(self, earlier: Self) -> Duration;
}

impl Moment for std::time::Instant {
    fn since(self, earlier: Self) -> Duration {
        self.saturating_duration_since(earlier)
    }
}

impl Moment for jiff::Timestamp {
    fn since(self, earlier: Self) -> Duration {
        Duration::try_from(self.duration_since(earlier)).unwrap_or(Duration::ZERO)
    }
}

/// A token bucket: see the module documentation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenBucket<T> {
    /// Nanoseconds of refill one token costs (`1 / qps`); `None` when the
    /// rate is not positive and the bucket never refills.
    cost: Option<u128>,
    /// Most credit the bucket holds: `burst` tokens' worth.
    capacity: i128,
    /// Credit at `last`, in nanoseconds; negative while reservations are
    /// outstanding.
    credit: i128,
    /// When `credit` was brought up to date; `None` until first used, when
    /// the bucket is full.
    last: Option<T>,
}

impl<T: Moment> TokenBucket<T> {
    /// A full bucket of `burst` tokens (at least one) refilled at `qps`
    /// tokens per second. A rate that is not positive and finite gives a
    /// bucket that never refills and whose reservations never come due
    /// (`rate.Limit(0)` refuses everything).
    pub fn new(qps: f64, burst: u32) -> Self {
        let cost = (qps > 0.0 && qps.is_finite()).then(|| (1e9 / qps).round().max(1.0) as u128);
        let per_token = cost.map_or(0, |c| i128::try_from(c).unwrap_or(i128::MAX));
        let capacity = per_token.saturating_mul(i128::from(burst.max(1)));
        TokenBucket { cost, capacity, credit: capacity, last: None }
    }

    /// Takes a token at `now`, going into debt if none is there, and returns
    /// how long to wait before using it (zero when one was there).
    pub fn reserve(&mut self, now: T) -> Duration {
        let Some(cost) = self.cost else {
            return Duration::MAX;
        };
        self.refill(now);
        self.credit -= i128::try_from(cost).unwrap_or(i128::MAX);
        if self.credit >= 0 {
            return Duration::ZERO;
        }
        u64::try_from(-self.credit).map_or(Duration::MAX, Duration::from_nanos)
    }

    /// Takes a token at `now` if one is there.
    pub fn try_take(&mut self, now: T) -> bool {
        let Some(cost) = self.cost else {
            return false;
        };
        self.refill(now);
        let cost = i128::try_from(cost).unwrap_or(i128::MAX);
        if self.credit >= cost {
            self.credit -= cost;
            true
        } else {
            false
        }
    }

    /// Brings the credit up to `now`, never above the capacity.
    fn refill(&mut self, now: T) {
        if let Some(last) = self.last {
            let elapsed = i128::try_from(now.since(last).as_nanos()).unwrap_or(i128::MAX);
            self.credit = self.credit.saturating_add(elapsed).min(self.capacity);
        }
        self.last = Some(now);
    }
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn reservations_wait_in_order_once_the_burst_is_spent() {
        let now = Instant::now();
        let mut bucket = TokenBucket::new(10.0, 100);
        for _ in 0..100 {
            assert_eq!(bucket.reserve(now), Duration::ZERO);
        }
        for n in 1..=5 {
            assert_eq!(bucket.reserve(now), 100 * MS * n);
        }
        // Half a second pays back five tokens of debt: the next waits one token.
        assert_eq!(bucket.reserve(now + 500 * MS), 100 * MS);
        // After a long pause the bucket is full again, never more than the burst.
        let later = now + Duration::from_secs(3600);
        for _ in 0..100 {
            assert_eq!(bucket.reserve(later), Duration::ZERO);
        }
        assert_eq!(bucket.reserve(later), 100 * MS);
    }

    #[test]
    fn taking_only_what_is_there_refills_exactly_over_small_steps() {
        let start = jiff::Timestamp::UNIX_EPOCH;
        let mut bucket = TokenBucket::new(3.0, 1);
        assert!(bucket.try_take(start));
        assert!(!bucket.try_take(start));
        // A third of a second in 1,000 steps refills exactly one token.
        let step = jiff::SignedDuration::from_nanos(333_333);
        let mut now = start;
        for _ in 0..1_000 {
            now += step;
            assert!(!bucket.try_take(now), "before a whole token");
        }
        now += jiff::SignedDuration::from_nanos(1_000);
        assert!(bucket.try_take(now));
    }

    #[test]
    fn a_rate_that_is_not_positive_never_grants() {
        let now = Instant::now();
        for qps in [0.0, -1.0, f64::NAN] {
            let mut bucket = TokenBucket::new(qps, 10);
            assert!(!bucket.try_take(now), "{qps}");
            assert_eq!(bucket.reserve(now), Duration::MAX, "{qps}");
        }
    }

    #[test]
    fn time_going_backwards_refills_nothing() {
        let now = Instant::now() + Duration::from_secs(10);
        let mut bucket = TokenBucket::new(1.0, 1);
        assert!(bucket.try_take(now));
        assert!(!bucket.try_take(now - Duration::from_secs(5)));
    }
}
