//! What the certificate controllers' drivers share, as upstream's
//! `pkg/controller/certificates/certificate_controller.go` gives the
//! approver and each signer one loop of the same shape: the queue's name
//! and its rate limiter.

use std::time::Duration;

use kcm_runtime::workqueue::{BucketRateLimiter, ItemExponentialFailureRateLimiter, MaxOfRateLimiter};

/// The workqueue's name (the `name` label of the `workqueue_*` metrics),
/// upstream's `NewCertificateController` queue, the same for every loop.
pub const QUEUE_NAME: &str = "certificate";

/// Upstream's certificate controller limiter: the larger of a per-key
/// exponential backoff (200 ms · 2^failures, capped at 1000 s) and a
/// token bucket of 10 qps with a burst of 100.
pub fn rate_limiter() -> MaxOfRateLimiter<String> {
    MaxOfRateLimiter::new(vec![
        Box::new(ItemExponentialFailureRateLimiter::new(Duration::from_millis(200), Duration::from_secs(1000))),
        Box::new(BucketRateLimiter::new(10.0, 100)),
    ])
}

#[cfg(test)]
mod tests {
    //! The queue's limiter, as upstream's `NewCertificateController` sets it.

    use kcm_runtime::workqueue::RateLimiter;

    use super::*;

    #[test]
    fn a_failing_request_backs_off_from_200ms_doubling_to_1000s() {
        let limiter = rate_limiter();
        let key = "csr-1".to_owned();
        let delays: Vec<Duration> = (0..3).map(|_| limiter.when(&key)).collect();
        assert_eq!(delays, [200, 400, 800].map(Duration::from_millis));
        for _ in 0..30 {
            limiter.when(&key);
        }
        assert_eq!(limiter.when(&key), Duration::from_secs(1000));
        limiter.forget(&key);
        assert_eq!(limiter.when(&key), Duration::from_millis(200), "forgotten once a sync succeeds");
    }
}
