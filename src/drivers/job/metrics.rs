//! The Job controller's metrics, as upstream names them
//! (`pkg/controller/job/metrics`, subsystem `job_controller`), and the
//! controller's memory (pod expectations, finalizer removals in flight,
//! backoff records, Jobs written finished).

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use kcm_controllers::job::Count;
use kcm_controllers::job::backoff::BackoffStore;
use kcm_controllers::job::finalizers::FinalizerExpectations;
use kcm_controllers::job::finished::FinishedJobExpectations;
use prometheus::{HistogramOpts, HistogramVec, IntCounterVec, Opts, Registry, exponential_buckets};

use crate::drivers::expectations::SharedExpectations;

/// `job_controller_*`.
#[derive(Clone)]
pub struct JobMetrics {
    /// `job_sync_duration_seconds{completion_mode, result, action}`.
    pub(super) sync_duration: HistogramVec,
    /// `job_syncs_total{completion_mode, result, action}`.
    pub(super) syncs: IntCounterVec,
    /// `jobs_finished_total{completion_mode, result, reason}`.
    finished: IntCounterVec,
    /// `jobs_by_external_controller_total{controller_name}`.
    pub(super) by_external_controller: IntCounterVec,
    /// `job_pods_finished_total{completion_mode, result}`.
    pods_finished: IntCounterVec,
    /// `pod_failures_handled_by_failure_policy_total{action}`.
    failure_policy_actions: IntCounterVec,
    /// `terminated_pods_tracking_finalizer_total{event}`.
    pub(super) tracking_finalizer: IntCounterVec,
    /// `job_finished_indexes_total{status, backoffLimit}`.
    finished_indexes: IntCounterVec,
    /// `job_pods_creation_total{reason, status}`.
    pods_creation: IntCounterVec,
}

fn name(metric: &str) -> String {
    format!("job_controller_{metric}")
}

impl JobMetrics {
    /// Registers the metrics in `registry`.
    ///
    /// # Errors
    /// A metric of the same name is registered already.
    pub fn register(registry: &Registry) -> prometheus::Result<Self> {
        let counter =
            |metric: &str, help: &str, labels: &[&str]| IntCounterVec::new(Opts::new(name(metric), help), labels);
        let metrics = Self {
            sync_duration: HistogramVec::new(
                HistogramOpts::new(name("job_sync_duration_seconds"), "The time it took to sync a job")
                    .buckets(exponential_buckets(0.004, 2.0, 15)?),
                &["completion_mode", "result", "action"],
            )?,
            syncs: counter("job_syncs_total", "The number of job syncs", &["completion_mode", "result", "action"])?,
            finished: counter(
                "jobs_finished_total",
                "The number of finished jobs",
                &["completion_mode", "result", "reason"],
            )?,
            by_external_controller: counter(
                "jobs_by_external_controller_total",
                "The number of Jobs managed by an external controller",
                &["controller_name"],
            )?,
            pods_finished: counter(
                "job_pods_finished_total",
                "The number of finished Pods that are fully tracked",
                &["completion_mode", "result"],
            )?,
            failure_policy_actions: counter(
                "pod_failures_handled_by_failure_policy_total",
                "The number of failed Pods handled by failure policy with respect to the failure policy action applied based on the matched rule. Possible values of the action label correspond to the possible values for the failure policy rule action, which are: \"FailJob\", \"Ignore\" and \"Count\".",
                &["action"],
            )?,
            tracking_finalizer: counter(
                "terminated_pods_tracking_finalizer_total",
                "The number of terminated pods (phase=Failed|Succeeded) that have the finalizer batch.kubernetes.io/job-tracking The event label can be \"add\" or \"delete\".",
                &["event"],
            )?,
            finished_indexes: counter(
                "job_finished_indexes_total",
                "The number of finished indexes. Possible values for the status label are: \"succeeded\", \"failed\". Possible values for the backoffLimit label are: \"perIndex\" and \"global\"",
                &["status", "backoffLimit"],
            )?,
            pods_creation: counter(
                "job_pods_creation_total",
                "The number of Pods created by the Job controller labelled with a reason for the Pod creation. This metric also distinguishes between Pods created using different PodReplacementPolicy settings. Possible values of the \"reason\" label are: \"new\", \"recreate_terminating_or_failed\", \"recreate_failed\". Possible values of the \"status\" label are: \"succeeded\", \"failed\".",
                &["reason", "status"],
            )?,
        };
        registry.register(Box::new(metrics.sync_duration.clone()))?;
        registry.register(Box::new(metrics.syncs.clone()))?;
        registry.register(Box::new(metrics.finished.clone()))?;
        registry.register(Box::new(metrics.by_external_controller.clone()))?;
        registry.register(Box::new(metrics.pods_finished.clone()))?;
        registry.register(Box::new(metrics.failure_policy_actions.clone()))?;
        registry.register(Box::new(metrics.tracking_finalizer.clone()))?;
        registry.register(Box::new(metrics.finished_indexes.clone()))?;
        registry.register(Box::new(metrics.pods_creation.clone()))?;
        Ok(metrics)
    }

    /// Counts `count`.
    pub(super) fn count(&self, count: &Count) {
        match count {
            Count::PodsFinished { completion_mode, result, n } => {
                self.pods_finished.with_label_values(&[completion_mode, result]).inc_by(*n);
            }
            Count::FinishedIndexes { status, backoff_limit, n } => {
                self.finished_indexes.with_label_values(&[status, backoff_limit]).inc_by(*n);
            }
            Count::FailurePolicyAction { action, n } => {
                self.failure_policy_actions.with_label_values(&[action.as_str()]).inc_by(*n);
            }
            Count::PodsCreated { reason, status, n } => {
                self.pods_creation.with_label_values(&[reason, status]).inc_by(*n);
            }
            Count::JobFinished { completion_mode, result, reason } => {
                self.finished.with_label_values(&[completion_mode, result, reason.as_str()]).inc();
            }
        }
    }
}

/// What the Job controller remembers between syncs, shared by the
/// handlers, the workers and the executor's loop; no lock is held across
/// an await.
#[derive(Clone, Default)]
pub(super) struct Memory {
    /// Pod creations and deletions in flight.
    pub expectations: SharedExpectations,
    /// Finalizer removals in flight.
    pub finalizers: Arc<Mutex<FinalizerExpectations>>,
    /// Recreation backoff records.
    pub backoff: Arc<Mutex<BackoffStore>>,
    /// Jobs written finished that the cache may still show unfinished.
    pub finished: Arc<Mutex<FinishedJobExpectations>>,
}

impl Memory {
    pub fn finalizers(&self) -> MutexGuard<'_, FinalizerExpectations> {
        // Every critical section leaves the record whole.
        self.finalizers.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub fn backoff(&self) -> MutexGuard<'_, BackoffStore> {
        self.backoff.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub fn finished(&self) -> MutexGuard<'_, FinishedJobExpectations> {
        self.finished.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
