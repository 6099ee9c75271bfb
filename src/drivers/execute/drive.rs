//! The one loop that drives a controller core ([`Core`]): poll it for a
//! step, perform the step's actions at once, tell it their answers, until
//! it is over; [`Executor::answer`], what one shared action answered,
//! typed ([`Told`]); and [`OwnWriter`], what performs a core's own writes.

use k8s_openapi::api::apps::v1::ReplicaSet;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kcm_controllers::common::history;
use kcm_controllers::plan::{Action, NoOwnWrites};
use kcm_controllers::protocol::{Answer, Core, Finish, Told};
use kcm_objects::object_key;
use kcm_runtime::runner::{Next, SyncError};

use super::bookkeeping::Bookkeeping;
use super::executor::{Executor, Versions};

/// Performs a driven core's own writes ([`Action::Own`]) and says what
/// each answered: the controller's driver, which holds what they need (a
/// controller's memory, its metrics), or the executor.
pub trait OwnWriter<W>: Sync {
    /// Performs `write`; `versions` are the resourceVersions the sync's
    /// writes returned so far.
    fn write(&self, write: &W, versions: &Versions) -> impl Future<Output = Told> + Send;
}

impl OwnWriter<NoOwnWrites> for Executor {
    async fn write(&self, write: &NoOwnWrites, _: &Versions) -> Told {
        match *write {}
    }
}

impl Executor {
    /// Runs `core` to its end: each step it hands out is performed (its
    /// actions concurrently; its own writes by `own`) and the answers told
    /// to it in the step's order.
    pub async fn drive<C: Core>(&self, mut core: C, book: &dyn Bookkeeping, own: &impl OwnWriter<C::Own>) -> Finish {
        let versions = &Versions::default();
        while let Some(step) = core.poll() {
            let answers =
                futures::future::join_all(step.actions.iter().map(|action| self.answer(action, book, own, versions)))
                    .await;
            core.told(answers);
        }
        core.finish()
    }

    /// Performs `action` (an own write by `own`) and says what it
    /// answered. Bookkeeping and events answer `Ok` at once.
    pub(super) async fn answer<W>(
        &self,
        action: &Action<W>,
        book: &dyn Bookkeeping,
        own: &impl OwnWriter<W>,
        versions: &Versions,
    ) -> Told {
        match action {
            Action::RecheckOwner { owner } => self.recheck_owner(owner).await,
            Action::ExpectCreations { key, count } => {
                book.expect_creations(key, *count);
                Ok(Answer::Done)
            }
            Action::ExpectDeletions { key, pod_keys } => {
                book.expect_deletions(key, pod_keys);
                Ok(Answer::Done)
            }
            Action::ForgetCreations { key, count } => {
                book.creations_skipped(key, *count);
                Ok(Answer::Done)
            }
            Action::CreatePod { namespace, pod, owner } => self.create_pod(namespace, pod, owner, book).await,
            Action::DeletePod { namespace, name, uid, owner } => {
                self.delete_pod(namespace, name, uid, owner, book).await
            }
            Action::PatchPodOwnerRefs { namespace, name, uid, patch } => {
                self.patch_owner_refs::<Pod>(namespace, name, uid, patch, versions).await
            }
            Action::PatchReplicaSetOwnerRefs { namespace, name, uid, patch } => {
                self.patch_owner_refs::<ReplicaSet>(namespace, name, uid, patch, versions).await
            }
            Action::CreateReplicaSet { namespace, replica_set } => {
                let told = self.create_replica_set(namespace, replica_set, versions).await;
                if told.is_ok() {
                    report_created(book, &replica_set.metadata);
                }
                told
            }
            Action::ReadReplicaSet { namespace, name } => self.read_replica_set(namespace, name).await,
            Action::UpdateReplicaSet { replica_set } => self.replace(&**replica_set, false, versions).await,
            Action::DeleteReplicaSet { namespace, name, uid } => self.delete_replica_set(namespace, name, uid).await,
            Action::UpdateDeploymentStatus { deployment } => self.replace(&**deployment, true, versions).await,
            Action::UpdateDeployment { deployment } => self.replace(&**deployment, false, versions).await,
            Action::UpdateReplicaSetStatus { namespace, name, resource_version, status } => {
                self.update_replica_set_status(namespace, name, resource_version.as_deref(), status).await
            }
            Action::Event(event) => {
                self.record(event);
                Ok(Answer::Done)
            }
            Action::ControllerRevision(write) => {
                let told = self.revision(write, versions).await;
                if let (Ok(_), history::Write::Create { revision }) = (&told, write) {
                    report_created(book, &revision.metadata);
                }
                told
            }
            Action::Own(write) => own.write(write, versions).await,
        }
    }
}

/// The worker's next step after a sync that ended so.
///
/// # Errors
/// A failed sync's error, for the worker's backoff.
pub fn next_after(finish: Finish) -> Result<Next, SyncError> {
    match finish {
        Finish::Done => Ok(Next::Done),
        Finish::After(after) => Ok(Next::After(after)),
        Finish::Now => Ok(Next::After(std::time::Duration::ZERO)),
        Finish::Retry(error) => Err(error.into()),
    }
}

/// Reports an accepted create of an object a controller owns (by its
/// controller reference) to that controller's bookkeeping.
fn report_created(book: &dyn Bookkeeping, meta: &ObjectMeta) {
    let namespace = meta.namespace.as_deref();
    let Some(owner) = meta.owner_references.iter().flatten().find(|r| r.controller == Some(true)) else { return };
    let key = object_key(namespace, meta.name.as_deref().unwrap_or(""));
    book.owned_created(&object_key(namespace, &owner.name), &key);
}
