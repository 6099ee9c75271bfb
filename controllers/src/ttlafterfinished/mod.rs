//! The TTL-after-finished controller's decisions (upstream
//! `pkg/controller/ttlafterfinished/ttlafterfinished_controller.go`): a
//! Job that has finished (a `Complete` or `Failed` condition with status
//! `True`) and sets `spec.ttlSecondsAfterFinished` expires that many
//! seconds after the condition's `lastTransitionTime`, and is then deleted.
//!
//! Observe/decide rather than a [`Plan`](crate::plan::Plan): the driver
//! reports a Job it read (first the cached one, then, when that one has
//! expired, the one it reads live from the API server) and [`process_ttl`]
//! answers what to do with it: nothing ([`Decision::Ignore`]: being
//! deleted, not finished, or no TTL), look again when the TTL runs out
//! ([`Decision::Wait`]), or delete it ([`Decision::Expired`]: with the
//! cached Job, re-read it live first; with the live Job, delete it in the
//! foreground on the condition of its uid). The driver's handlers ask
//! [`needs_cleanup`] which Jobs to queue at all.
//!
//! A Job that finished 10 s ago with a TTL of 15 s waits 5 s more; with a
//! TTL of 0 it expires the moment it finishes. Time left at or below zero
//! is expired, as upstream's `*t <= 0`.

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::batch::v1::Job;

#[cfg(test)]
mod tests;

use crate::common::job_finished::finished;

/// Why a Job's expiry cannot be computed (upstream's errors of
/// `getFinishAndExpireTime` and `jobFinishTime`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// Asked of a Job that is not finished or has no TTL.
    #[error("job {namespace}/{name} should not be cleaned up")]
    NotToBeCleanedUp {
        /// The Job's namespace.
        namespace: String,
        /// Its name.
        name: String,
    },
    /// Its finished condition has no `lastTransitionTime`.
    #[error("unable to find the time when the Job {namespace}/{name} finished")]
    NoFinishTime {
        /// The Job's namespace.
        namespace: String,
        /// Its name.
        name: String,
    },
}

/// When a finished Job's TTL runs out, seen from some instant (upstream
/// `timeLeft`'s answers).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimeLeft {
    /// The finished condition's `lastTransitionTime`.
    pub finish_at: Timestamp,
    /// `finish_at` plus the TTL.
    pub expire_at: Timestamp,
    /// The instant asked about.
    pub since: Timestamp,
    /// `expire_at` minus `since`: at or below zero once expired.
    pub remaining: SignedDuration,
}

impl TimeLeft {
    /// Whether the Job finished after `since`: upstream warns that the
    /// cluster's clocks are likely skewed, and the cleanup waits.
    pub fn finished_in_the_future(&self) -> bool {
        self.finish_at > self.since
    }
}

/// What to do with a Job read from the cache or the API server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Being deleted, not finished, or no TTL: nothing.
    Ignore,
    /// Its TTL runs out later: look again after `remaining`.
    Wait(TimeLeft),
    /// Its TTL has run out.
    Expired(TimeLeft),
}

/// Upstream `needsCleanup`: the Job has finished and sets
/// `ttlSecondsAfterFinished`.
pub fn needs_cleanup(job: &Job) -> bool {
    ttl_seconds(job).is_some() && finished(job).is_some()
}

/// Upstream `jobFinishTime`: the `lastTransitionTime` of the Job's
/// finished condition; `None` when the Job has not finished.
///
/// # Errors
/// The condition has no `lastTransitionTime`.
pub fn finish_time(job: &Job) -> Option<Result<Timestamp, Error>> {
    let condition = finished(job)?;
    Some(
        condition
            .last_transition_time
            .as_ref()
            .map(|t| t.0)
            .ok_or_else(|| Error::NoFinishTime { namespace: namespace(job).to_owned(), name: name(job).to_owned() }),
    )
}

/// Upstream `timeLeft` (through `getFinishAndExpireTime`): when the Job
/// finished, when it expires, and how long from `since` until then.
///
/// # Errors
/// The Job does not need cleanup, or its finished condition has no
/// `lastTransitionTime`.
pub fn time_left(job: &Job, since: Timestamp) -> Result<TimeLeft, Error> {
    let (Some(ttl), Some(finished)) = (ttl_seconds(job), finish_time(job)) else {
        return Err(Error::NotToBeCleanedUp { namespace: namespace(job).to_owned(), name: name(job).to_owned() });
    };
    let finish_at = finished?;
    // Past the last representable instant (year 9999), never.
    let overflow = if ttl < 0 { Timestamp::MIN } else { Timestamp::MAX };
    let expire_at = finish_at.checked_add(SignedDuration::from_secs(i64::from(ttl))).unwrap_or(overflow);
    Ok(TimeLeft { finish_at, expire_at, since, remaining: expire_at.duration_since(since) })
}

/// Upstream `processTTL`: what to do with `job` at `now`.
///
/// # Errors
/// The Job has finished and has a TTL, but its finished condition has no
/// `lastTransitionTime` (upstream retries it with backoff).
pub fn process_ttl(job: &Job, now: Timestamp) -> Result<Decision, Error> {
    if job.metadata.deletion_timestamp.is_some() || !needs_cleanup(job) {
        return Ok(Decision::Ignore);
    }
    let left = time_left(job, now)?;
    Ok(if left.remaining.is_positive() { Decision::Wait(left) } else { Decision::Expired(left) })
}

fn ttl_seconds(job: &Job) -> Option<i32> {
    job.spec.as_ref().and_then(|s| s.ttl_seconds_after_finished)
}

fn namespace(job: &Job) -> &str {
    job.metadata.namespace.as_deref().unwrap_or_default()
}

fn name(job: &Job) -> &str {
    job.metadata.name.as_deref().unwrap_or_default()
}
