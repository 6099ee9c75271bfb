//! The Job controller's own writes
//! ([`Action::Own`](kcm_controllers::plan::Action::Own)): the adoption
//! patch that adds the tracking finalizer and the release patch that
//! removes it, the status written on the whole
//! Job at the latest version of the run, the tracking finalizer's removal
//! (alone, or before a delete), and the bookkeeping the Job controller
//! keeps (finalizer removals in flight, the recreation backoff, the Jobs
//! written finished, metrics).

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Pod;
use kcm_controllers::common::pod_control;
use kcm_controllers::job::Write;
use kcm_controllers::job::pods::remove_tracking_finalizer_patch;
use kcm_controllers::job::write::{adopt_patch, release_patch};
use kube::Api;
use kube::api::{Patch, PatchParams};

use super::OwnWrites;
use super::bookkeeping::Bookkeeping;
use super::executor::{Executor, Outcome, Versions};
use super::pods::owner_key;
use crate::drivers::api_errors::{code, error_message};
use futures::future::BoxFuture;

impl OwnWrites<Write> for Executor {
    fn perform<'a>(
        &'a self,
        write: &'a Write,
        book: &'a dyn Bookkeeping,
        versions: &'a Versions,
    ) -> BoxFuture<'a, Outcome> {
        Box::pin(self.write_job(write, book, versions))
    }

    fn is_claim(write: &Write) -> bool {
        matches!(write, Write::AdoptPod { .. } | Write::ReleasePod { .. })
    }

    fn is_manage(write: &Write) -> bool {
        matches!(write, Write::RemoveFinalizerAndDelete { .. })
    }
}

impl Executor {
    async fn write_job(&self, write: &Write, book: &dyn Bookkeeping, versions: &Versions) -> Outcome {
        match write {
            Write::UpdateStatus { job } => self.replace::<Job>(job, true, versions).await.into(),
            Write::AdoptPod { namespace, name, uid, controller_ref } => {
                let api: Api<Pod> = Api::namespaced(self.client.clone(), namespace);
                let body = adopt_patch(controller_ref, uid);
                match api.patch(name, &PatchParams::default(), &Patch::Strategic(body)).await {
                    Ok(_) => Outcome::Ok,
                    Err(error) if code(&error) == Some(404) => Outcome::Stale,
                    Err(error) => Outcome::Failed(error_message(&error)),
                }
            }
            Write::ReleasePod { namespace, name, uid, owner_uid } => {
                let api: Api<Pod> = Api::namespaced(self.client.clone(), namespace);
                let body = release_patch(owner_uid, uid);
                match api.patch(name, &PatchParams::default(), &Patch::Strategic(body)).await {
                    Ok(_) => Outcome::Ok,
                    // Gone, or (422) recreated under the name or no longer
                    // referencing the Job: nothing is left to release.
                    Err(error) if matches!(code(&error), Some(404 | 422)) => Outcome::Ok,
                    Err(error) => Outcome::Failed(error_message(&error)),
                }
            }
            Write::ExpectFinalizerRemovals { key, uids } => {
                book.expect_finalizer_removals(key, uids);
                Outcome::Ok
            }
            Write::RemoveFinalizer { key, namespace, name, uid } => {
                match self.remove_finalizer(namespace, name).await {
                    Ok(()) => Outcome::Ok,
                    Err(error) => {
                        book.finalizer_removal_failed(key, uid);
                        Outcome::Failed(format!("removing tracking finalizer: {error}"))
                    }
                }
            }
            Write::RemoveFinalizerAndDelete { namespace, name, uid, has_finalizer, job } => {
                let pod_key = format!("{namespace}/{name}");
                if *has_finalizer && let Err(error) = self.remove_finalizer(namespace, name).await {
                    book.deletion_failed(&owner_key(job), &pod_key);
                    return Outcome::Failed(format!("removing completion finalizer: {error}"));
                }
                match self.delete_with_uid::<Pod>(namespace, name, uid).await {
                    Ok(true) => {
                        self.record(&pod_control::successful_delete(job, name));
                        Outcome::Ok
                    }
                    Ok(false) => {
                        book.deletion_failed(&owner_key(job), &pod_key);
                        Outcome::Ok
                    }
                    Err(error) => {
                        let message = error_message(&error);
                        book.deletion_failed(&owner_key(job), &pod_key);
                        self.record(&pod_control::failed_delete(job, &message));
                        Outcome::Failed(message)
                    }
                }
            }
            Write::RecordBackoff { key, record } => {
                book.record_backoff(key, record);
                Outcome::Ok
            }
            Write::ExpectFinished { uid } => {
                book.expect_job_finished(uid);
                Outcome::Ok
            }
            Write::Count(count) => {
                book.count(count);
                Outcome::Ok
            }
        }
    }

    /// Removes the tracking finalizer from a pod; a pod already gone
    /// counts as done.
    async fn remove_finalizer(&self, namespace: &str, name: &str) -> Result<(), String> {
        let api: Api<Pod> = Api::namespaced(self.client.clone(), namespace);
        match api.patch(name, &PatchParams::default(), &Patch::Strategic(remove_tracking_finalizer_patch())).await {
            Ok(_) => Ok(()),
            Err(error) if code(&error) == Some(404) => Ok(()),
            Err(error) => Err(error_message(&error)),
        }
    }
}
