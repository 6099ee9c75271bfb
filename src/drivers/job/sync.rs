//! The Job controller's syncs: a Job (its snapshot of the caches and the
//! controller's memory, the core driven by the executor's loop with its
//! own writes performed here, the sync metrics) and an orphan pod (its
//! finalizer removed when no Job will count it).

use std::sync::Arc;
use std::time::Instant;

use jiff::Timestamp;
use kcm_controllers::job::backoff::BackoffStore;
use kcm_controllers::job::finalizers::FinalizerExpectations;
use kcm_controllers::job::finished::FinishedJobExpectations;
use kcm_controllers::job::orphan::remove_orphan_finalizer;
use kcm_controllers::job::{self as core, Snapshot, SyncMachine};
use kcm_controllers::protocol::Refusal;
use kcm_objects::Job;
use kcm_objects::Pod;
use kcm_runtime::informer::Store;
use kcm_runtime::runner::{Next, Reconcile, SyncError};
use kube::Client;

use super::metrics::{JobMetrics, Memory};
use super::writes::{JobWriter, remove_tracking_finalizer};
use crate::drivers::execute::{Executor, next_after};
use crate::drivers::owners;

/// The Job syncs, shared by the workers.
pub(super) struct Syncer {
    /// Cached pods (all namespaces).
    pub pods: Store<Pod>,
    /// Cached Jobs.
    pub jobs: Store<Job>,
    /// Expectations, finalizer removals, backoff records, Jobs written
    /// finished.
    pub memory: Memory,
    /// Drives the core, performing its shared writes.
    pub executor: Executor,
    /// `job_controller_*`, when registered.
    pub metrics: Option<JobMetrics>,
}

impl Reconcile for Syncer {
    /// One sync of the Job `key` (upstream `syncJob`).
    async fn sync(&self, key: &str) -> Result<Next, SyncError> {
        let started = Instant::now();
        let Some(job) = self.jobs.get(key) else {
            tracing::debug!(%key, "Job has been deleted");
            self.memory.expectations.lock().delete(key);
            self.memory.finalizers().delete(key);
            self.memory.backoff().remove(key);
            return Ok(Next::Done);
        };
        if let Some(controller) = core::conditions::managed_by_external(&job) {
            tracing::debug!(%key, controller, "skipping the Job: it is managed by an external controller");
        }
        let synced = self.plan(key, &job);
        if synced.finished {
            self.memory.backoff().remove(key);
            if let Some(uid) = &job.metadata.uid {
                self.memory.finished().observed(uid);
            }
        }
        let (completion_mode, action) = (synced.completion_mode, synced.action);
        let writer = JobWriter { executor: &self.executor, memory: &self.memory, metrics: self.metrics.as_ref() };
        let finish = self.executor.drive(SyncMachine::new(synced), &self.memory.expectations, &writer).await;
        let next = next_after(finish);
        if let (Some(action), Some(m)) = (action, &self.metrics) {
            let result = if next.is_ok() { "success" } else { "error" };
            let labels = [completion_mode.as_str(), result, action.as_str()];
            m.sync_duration.with_label_values(&labels).observe(started.elapsed().as_secs_f64());
            m.syncs.with_label_values(&labels).inc();
        }
        next
    }
}

impl Syncer {
    /// The core's plan on a snapshot of the caches and of this Job's part
    /// of the memory, taken now.
    fn plan(&self, key: &str, job: &Job) -> core::Synced {
        let namespace = job.metadata.namespace.as_deref().unwrap_or("");
        let pods = owners::claimable(&self.pods, job.metadata.uid.as_deref(), namespace);
        let expectations = self.memory.expectations.lock().of(key);
        let mut finalizers = FinalizerExpectations::new();
        finalizers.expect_removals(key, self.memory.finalizers().expected(key));
        let mut backoff = BackoffStore::default();
        if let Some(record) = self.memory.backoff().get(key) {
            backoff.update(key, record.clone());
        }
        let mut finished = FinishedJobExpectations::new();
        if let Some(uid) = job.metadata.uid.as_deref().filter(|uid| self.memory.finished().pending(uid)) {
            finished.expect(uid);
        }
        core::sync(&Snapshot {
            job,
            pods: &pods,
            expectations: &expectations,
            finalizer_expectations: &finalizers,
            finished_expectations: &finished,
            backoff: &backoff,
            now: Timestamp::now(),
        })
    }
}

/// The orphan pod syncs (upstream `syncOrphanPod`).
pub(super) struct OrphanSyncer {
    /// Cached pods.
    pub pods: Store<Pod>,
    /// Cached Jobs.
    pub jobs: Store<Job>,
    /// Removes the finalizer.
    pub client: Client,
}

impl Reconcile for OrphanSyncer {
    async fn sync(&self, key: &str) -> Result<Next, SyncError> {
        let Some(pod) = self.pods.get(key) else {
            tracing::debug!(pod = %key, "orphan pod has been deleted");
            return Ok(Next::Done);
        };
        let job: Option<Arc<Job>> =
            pod.metadata.controller().and_then(|r| self.jobs.get_namespaced(Some(&pod.metadata.namespace), &r.name));
        if !remove_orphan_finalizer(&pod, job.as_deref().map(|j| &**j)) {
            return Ok(Next::Done);
        }
        match remove_tracking_finalizer(&self.client, &pod.metadata.namespace, &pod.metadata.name).await {
            Err(error) if error.refusal != Refusal::NotFound => {
                Err(format!("removing tracking finalizer: {}", error.message).into())
            }
            _ => Ok(Next::Done),
        }
    }
}
