//! The Job controller's own writes ([`Write`]), performed here for the
//! executor's loop ([`OwnWriter`]), each answered typed: the adoption patch
//! that adds the tracking finalizer and the release patch that removes it,
//! the status written on the whole Job at the latest version of the sync,
//! the tracking finalizer's removal (alone, or before a delete), and the
//! bookkeeping the controller keeps in its memory (finalizer removals in
//! flight, the recreation backoff, the Jobs written finished) and its
//! metrics. What a refusal means is the core's to decide
//! (`kcm_controllers::job::SyncMachine`).

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Pod;
use kcm_controllers::common::pod_control;
use kcm_controllers::job::Write;
use kcm_controllers::job::pods::remove_tracking_finalizer_patch;
use kcm_controllers::job::write::{adopt_patch, release_patch};
use kcm_controllers::protocol::{Answer, Refusal, Told, WriteError};
use kube::api::{Patch, PatchParams};
use kube::{Api, Client};

use super::metrics::{JobMetrics, Memory};
use crate::drivers::api_errors::write_error;
use crate::drivers::execute::{Bookkeeping, Executor, OwnWriter, Versions};

/// What the Job's own writes of one sync are performed with.
pub(super) struct JobWriter<'a> {
    /// Writes the status, deletes pods, records events.
    pub executor: &'a Executor,
    /// The controller's memory, which the bookkeeping writes update.
    pub memory: &'a Memory,
    /// `job_controller_*`, when registered.
    pub metrics: Option<&'a JobMetrics>,
}

impl OwnWriter<Write> for JobWriter<'_> {
    async fn write(&self, write: &Write, versions: &Versions) -> Told {
        self.perform(write, versions).await
    }
}

impl JobWriter<'_> {
    async fn perform(&self, write: &Write, versions: &Versions) -> Told {
        let client = &self.executor.client;
        match write {
            Write::UpdateStatus { job } => self.executor.replace::<Job>(job, true, versions).await,
            Write::AdoptPod { namespace, name, uid, controller_ref } => {
                patch(client, namespace, name, adopt_patch(controller_ref, uid)).await
            }
            Write::ReleasePod { namespace, name, uid, owner_uid } => {
                patch(client, namespace, name, release_patch(owner_uid, uid)).await
            }
            Write::RemoveFinalizer { namespace, name, .. } => {
                remove_tracking_finalizer(client, namespace, name).await.map_err(|e| prefixed("tracking", e))
            }
            Write::RemoveFinalizerAndDelete { namespace, name, uid, has_finalizer, job } => {
                let pod_key = format!("{namespace}/{name}");
                let job_key = kcm_objects::object_key(job.namespace.as_deref(), &job.name);
                let lower = || self.memory.expectations.deletion_failed(&job_key, &pod_key);
                if *has_finalizer
                    && let Err(error) = remove_tracking_finalizer(client, namespace, name).await
                    && error.refusal != Refusal::NotFound
                {
                    lower();
                    return Err(prefixed("completion", error));
                }
                match self.executor.delete_with_uid::<Pod>(namespace, name, uid).await {
                    Ok(true) => {
                        self.executor.record(&pod_control::successful_delete(job, name));
                        Ok(Answer::Done)
                    }
                    Ok(false) => {
                        lower();
                        Err(WriteError { refusal: Refusal::NotFound, message: format!("pods \"{name}\" not found") })
                    }
                    Err(error) => {
                        let error = write_error(&error);
                        lower();
                        self.executor.record(&pod_control::failed_delete(job, &error.message));
                        Err(error)
                    }
                }
            }
            Write::ExpectFinalizerRemovals { key, uids } => {
                self.memory.finalizers().expect_removals(key, uids.iter().cloned());
                Ok(Answer::Done)
            }
            Write::ForgetFinalizerRemovals { key, uids } => {
                let mut finalizers = self.memory.finalizers();
                for uid in uids {
                    finalizers.removal_observed(key, uid);
                }
                Ok(Answer::Done)
            }
            Write::RecordBackoff { key, record } => {
                self.memory.backoff().update(key, record.clone());
                Ok(Answer::Done)
            }
            Write::ExpectFinished { uid } => {
                self.memory.finished().expect(uid);
                Ok(Answer::Done)
            }
            Write::Count(count) => {
                if let Some(m) = self.metrics {
                    m.count(count);
                }
                Ok(Answer::Done)
            }
        }
    }
}

/// A strategic merge patch of the pod `namespace/name`.
async fn patch(client: &Client, namespace: &str, name: &str, body: serde_json::Value) -> Told {
    let api: Api<Pod> = Api::namespaced(client.clone(), namespace);
    match api.patch(name, &PatchParams::default(), &Patch::Strategic(body)).await {
        Ok(_) => Ok(Answer::Done),
        Err(error) => Err(write_error(&error)),
    }
}

/// Removes the tracking finalizer from the pod `namespace/name`, keeping
/// its other finalizers.
///
/// # Errors
/// The refusal, NotFound for a pod already gone.
pub(super) async fn remove_tracking_finalizer(client: &Client, namespace: &str, name: &str) -> Told {
    patch(client, namespace, name, remove_tracking_finalizer_patch()).await
}

/// `error`, its message saying which finalizer's removal it refused.
fn prefixed(finalizer: &str, error: WriteError) -> WriteError {
    WriteError { message: format!("removing {finalizer} finalizer: {}", error.message), ..error }
}
