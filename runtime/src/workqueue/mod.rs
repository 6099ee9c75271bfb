//! client-go's workqueue, rewritten for async Rust.
//!
//! Controllers turn watch events into keys (`"namespace/name"`), [`add`](WorkQueue::add) them,
//! and run workers that loop on [`get`](WorkQueue::get) / [`done`](WorkQueue::done). The queue
//! keeps client-go's contract exactly: duplicates collapse, a key is never held by two workers,
//! a key added while being processed is processed again afterwards, failed keys come back after
//! a per-key exponential backoff bounded by an overall token bucket, and shutdown can drain.
//!
//! # Layout
//!
//! - [`queue`]: [`WorkQueue`], the FIFO + dirty set + processing set, shutdown and drain, and
//!   the rate-limited entry points.
//! - [`delaying`]: [`WorkQueue::add_after`] and the background task that adds keys when their
//!   instant comes.
//! - [`rate_limiter`]: the [`RateLimiter`] trait, per-key exponential backoff, the token bucket,
//!   max-of, and the controllers' default combinations.
//! - [`metrics`]: the `workqueue_*` Prometheus metrics, labelled by queue `name`.
//!
//! Time is `tokio::time`, so tests run on a paused clock.

pub mod delaying;
pub mod metrics;
pub mod queue;
pub mod rate_limiter;

#[cfg(test)]
mod proptests;

pub use metrics::{Error, QueueMetrics, Result};
pub use queue::WorkQueue;
pub use rate_limiter::{
    BucketRateLimiter, ItemExponentialFailureRateLimiter, MaxOfRateLimiter, RateLimiter,
    default_controller_rate_limiter, namespace_controller_rate_limiter,
};
