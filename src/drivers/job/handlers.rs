//! The Job controller's handlers (upstream `addPod`, `updatePod`,
//! `deletePod`, `addJob`, `updateJob`, `deleteJob`): which Job a change
//! concerns, what it tells the expectations, and which orphan pods still
//! carry the tracking finalizer.

use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;
use kcm_controllers::common::pod::is_pod_terminal;
use kcm_controllers::common::selector::Selector;
use kcm_controllers::job::conditions::{is_finished, managed_by_external};
use kcm_controllers::job::pods::has_tracking_finalizer;
use kcm_controllers::job::{SYNC_JOB_BATCH_PERIOD, key};
use kcm_objects::Job;
use kcm_objects::{OwnerRef, Pod};
use kcm_runtime::informer::{EventHandler, Store};
use kcm_runtime::workqueue::WorkQueue;

use super::metrics::{JobMetrics, Memory};

/// Pod changes: the Job controlling the pod, batched; an orphan's
/// possible adopters; orphans with the finalizer to the orphan queue.
pub(super) struct PodHandler {
    pub queue: WorkQueue<String>,
    pub orphan_queue: WorkQueue<String>,
    pub jobs: Store<Job>,
    pub memory: Memory,
    pub metrics: Option<JobMetrics>,
}

impl EventHandler<Pod> for PodHandler {
    fn on_add(&self, pod: &Arc<Pod>) {
        self.record_finished(None, Some(pod));
        if pod.metadata.deletion_timestamp().is_some() {
            // Seen first while being deleted (a restart): not a creation.
            self.deleted(pod, false);
            return;
        }
        if let Some(cref) = pod.metadata.controller() {
            if let Some(job) = self.resolve(pod, cref) {
                let key = key(&job);
                self.memory.expectations.lock().creation_observed(&key, &pod.metadata.key());
                self.queue.add_after(key, SYNC_JOB_BATCH_PERIOD);
            }
            return;
        }
        if has_tracking_finalizer(pod) {
            self.orphan_queue.add(pod.metadata.key());
        }
        self.enqueue_adopters(pod);
    }

    fn on_update(&self, old: &Arc<Pod>, new: &Arc<Pod>) {
        self.record_finished(Some(old), Some(new));
        if old.metadata.resource_version == new.metadata.resource_version {
            return;
        }
        if new.metadata.deletion_timestamp().is_some() {
            // A graceful deletion began: a replacement may be due now.
            self.deleted(new, false);
            return;
        }
        let finalizer_removed = !has_tracking_finalizer(new);
        let (old_ref, new_ref) = (old.metadata.controller(), new.metadata.controller());
        let ref_changed = old_ref != new_ref;
        if ref_changed && let Some(job) = old_ref.and_then(|r| self.resolve(old, r)) {
            let key = key(&job);
            if finalizer_removed {
                self.memory.finalizers().removal_observed(&key, &new.metadata.uid.to_string());
            }
            self.queue.add_after(key, SYNC_JOB_BATCH_PERIOD);
        }
        if let Some(cref) = new_ref {
            if let Some(job) = self.resolve(new, cref) {
                let key = key(&job);
                if finalizer_removed {
                    self.memory.finalizers().removal_observed(&key, &new.metadata.uid.to_string());
                }
                self.queue.add_after(key, SYNC_JOB_BATCH_PERIOD);
            }
            return;
        }
        if has_tracking_finalizer(new) {
            self.orphan_queue.add(new.metadata.key());
        }
        if old.metadata.labels != new.metadata.labels || ref_changed {
            self.enqueue_adopters(new);
        }
    }

    fn on_delete(&self, pod: &Arc<Pod>) {
        self.record_finished(Some(pod), None);
        self.deleted(pod, true);
    }
}

impl PodHandler {
    /// A pod deleted (`is_final`) or being deleted (upstream `deletePod`).
    fn deleted(&self, pod: &Pod, is_final: bool) {
        let has_finalizer = has_tracking_finalizer(pod);
        let Some(cref) = pod.metadata.controller() else {
            // The garbage collector may have removed a Job's reference.
            if has_finalizer {
                self.orphan_queue.add(pod.metadata.key());
            }
            return;
        };
        let job = self.resolve(pod, cref).filter(|j| !is_finished(j));
        let Some(job) = job else {
            // No sync will remove this finalizer.
            if has_finalizer {
                self.orphan_queue.add(pod.metadata.key());
            }
            return;
        };
        let key = key(&job);
        self.memory.expectations.lock().deletion_observed(&key, &pod.metadata.key());
        if is_final || !has_finalizer {
            self.memory.finalizers().removal_observed(&key, &pod.metadata.uid.to_string());
        }
        self.queue.add_after(key, SYNC_JOB_BATCH_PERIOD);
    }

    /// The cached Job `cref` names, if it is that very object (upstream
    /// `resolveControllerRef`).
    fn resolve(&self, pod: &Pod, cref: &OwnerRef) -> Option<Arc<Job>> {
        self.jobs.resolve_controller_ref("Job", Some(&pod.metadata.namespace), cref)
    }

    /// Every Job of the pod's namespace whose selector matches it, batched
    /// (upstream `getPodJobs`): one may adopt it.
    fn enqueue_adopters(&self, pod: &Pod) {
        for job in self.jobs.list_namespace(&pod.metadata.namespace) {
            let selector = job.spec.as_ref().and_then(|s| s.selector.as_ref());
            let Ok(selector) = Selector::new(selector) else { continue };
            if !selector.is_everything() && selector.matches(&pod.metadata.labels) {
                self.queue.add_after(key(&job), SYNC_JOB_BATCH_PERIOD);
            }
        }
    }

    /// `terminated_pods_tracking_finalizer_total`: a finished pod with the
    /// finalizer appeared (`add`) or stopped being one (`delete`).
    fn record_finished(&self, old: Option<&Pod>, new: Option<&Pod>) {
        let finished = |p: Option<&Pod>| p.is_some_and(|p| is_pod_terminal(p) && has_tracking_finalizer(p));
        let (was, is) = (finished(old), finished(new));
        if was != is
            && let Some(m) = &self.metrics
        {
            m.tracking_finalizer.with_label_values(&[if is { "add" } else { "delete" }]).inc();
        }
    }
}

/// Job changes: sync at once (a status-only change batched); a finished
/// or deleted Job's pods with the finalizer to the orphan queue; a new
/// `activeDeadlineSeconds` checked when due; a deleted Job's finished
/// expectation forgotten.
pub(super) struct JobHandler {
    pub queue: WorkQueue<String>,
    pub orphan_queue: WorkQueue<String>,
    pub pods: Store<Pod>,
    pub memory: Memory,
    pub metrics: Option<JobMetrics>,
}

impl EventHandler<Job> for JobHandler {
    fn on_add(&self, job: &Arc<Job>) {
        self.queue.add(key(job));
        if let (Some(name), Some(m)) = (managed_by_external(job), &self.metrics) {
            m.by_external_controller.with_label_values(&[name]).inc();
        }
    }

    fn on_update(&self, old: &Arc<Job>, new: &Arc<Job>) {
        let key = key(new);
        if old.metadata.generation == new.metadata.generation {
            self.queue.add_after(key.clone(), SYNC_JOB_BATCH_PERIOD);
        } else {
            self.queue.add(key.clone());
        }
        if is_finished(new) {
            // A backup: the Job's own sync removes these finalizers first.
            self.cleanup_pod_finalizers(new);
        }
        let Some(start) = new.status.as_ref().and_then(|s| s.start_time.as_ref()) else { return };
        let deadline = |j: &Job| j.spec.as_ref().and_then(|s| s.active_deadline_seconds);
        let Some(seconds) = deadline(new) else { return };
        if deadline(old) != Some(seconds) {
            let passed = start.0.duration_until(Timestamp::now());
            let left = jiff::SignedDuration::from_secs(seconds) - passed;
            self.queue.add_after(key, Duration::try_from(left).unwrap_or(Duration::ZERO));
        }
    }

    fn on_delete(&self, job: &Arc<Job>) {
        self.queue.add(key(job));
        if let Some(uid) = &job.metadata.uid {
            self.memory.finished().observed(uid);
        }
        self.cleanup_pod_finalizers(job);
    }
}

impl JobHandler {
    /// Queues the Job's pods that still carry the finalizer as orphans
    /// (upstream `cleanupPodFinalizers`).
    fn cleanup_pod_finalizers(&self, job: &Job) {
        let Ok(selector) = Selector::new(job.spec.as_ref().and_then(|s| s.selector.as_ref())) else { return };
        let namespace = job.metadata.namespace.as_deref().unwrap_or_default();
        for pod in self.pods.list_namespace(namespace) {
            let controlled = pod.metadata.controller().is_some_and(|r| Some(&*r.uid) == job.metadata.uid.as_deref());
            if controlled && selector.matches(&pod.metadata.labels) && has_tracking_finalizer(&pod) {
                self.orphan_queue.add(pod.metadata.key());
            }
        }
    }
}
