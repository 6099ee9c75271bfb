//! The Job controller (upstream `pkg/controller/job`): runs a Job's pods
//! to completion, counting successes and failures through the
//! `batch.kubernetes.io/job-tracking` finalizer, for NonIndexed and Indexed
//! Jobs, with `backoffLimit`, `backoffLimitPerIndex`, the pod failure and
//! success policies, `activeDeadlineSeconds`, suspension and
//! `podReplacementPolicy`.
//!
//! # Layout
//! - [`pod_failure_policy`]: a failed pod against `spec.podFailurePolicy`
//!   (FailJob, FailIndex, Ignore, Count);
//! - [`intervals`]: sets of indexes as ordered intervals, and their
//!   `"1,3-5"` form in `status.completedIndexes` and `failedIndexes`;
//! - [`indexed`]: an Indexed Job's pods by index (succeeded and failed
//!   indexes, the next to start, duplicates, per-index failure counts and
//!   backoff);
//! - [`index_template`]: the pod template of one index (its variable,
//!   annotation, label, hostname and name);
//! - [`success_policy`]: an Indexed Job's succeeded indexes against
//!   `spec.successPolicy`;
//! - [`backoff`]: the delay before failed pods are replaced, and when a
//!   pod finished.

pub mod backoff;
pub mod index_template;
pub mod indexed;
pub mod intervals;
pub mod pod_failure_policy;
pub mod success_policy;
