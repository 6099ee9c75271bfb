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
//! - [`backoff`]: the delay before failed pods are replaced, and when a
//!   pod finished.

pub mod backoff;
pub mod pod_failure_policy;
