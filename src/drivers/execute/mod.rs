//! The plan executor: performs a [`Plan`]'s writes against the API server,
//! in order, following the contract written in `kcm_controllers::plan` and
//! in each controller core's module doc.
//!
//! It owns the I/O of every [`Action`] (pod, ReplicaSet, ControllerRevision
//! and StatefulSet writes; creates, deletes
//! with a uid precondition, ownerReference patches, object and status
//! updates, the live re-check before adoption, events) and error
//! classification (NotFound, Invalid, AlreadyExists, terminating namespace).
//! Within one plan, an object written twice is sent the second time with the
//! resourceVersion the first write returned. What a controller remembers
//! between syncs (the ReplicaSet controller's expectations) stays with the
//! controller: the executor reports through [`Bookkeeping`].
//!
//! # Layout
//! - this module: [`Executor::run`] (the steps in order, each step's
//!   actions at once) and how a run ended, [`Executed`];
//! - `executor`: [`Executor`] itself, its events, and what the actions of
//!   one run share;
//! - `bookkeeping`: [`Bookkeeping`], what the executor reports;
//! - `claims`: the owner re-check and the ownerReference patches;
//! - `daemonsets`: the DaemonSet controller's status write and pod relabel;
//! - `jobs`: the Job controller's adoption, status and finalizer writes,
//!   and its bookkeeping;
//! - `pods`: pod creates and deletes;
//! - `replicasets`: ReplicaSet creates and deletes;
//! - `revisions`: ControllerRevision writes (DaemonSet and StatefulSet
//!   history), with the create's name-collision step;
//! - `statefulsets`: the StatefulSet controller's pod, claim and status
//!   writes;
//! - `updates`: object and status updates.
//!
//! The API errors are read with `drivers::api_errors`.

mod bookkeeping;
mod claims;
mod daemonsets;
mod executor;
mod jobs;
mod pods;
mod replicasets;
mod revisions;
mod statefulsets;
#[cfg(test)]
mod testing;
mod updates;

use std::time::Duration;

use futures::future::join_all;
use k8s_openapi::api::apps::v1::{ControllerRevision, ReplicaSet};
use k8s_openapi::api::core::v1::Pod;
use kcm_controllers::common::history;
use kcm_controllers::deployment::CreateFailure;
use kcm_controllers::job;
use kcm_controllers::plan::{Action, Plan};

use executor::{Outcome, Versions};
use kcm_runtime::runner::{Next, SyncError};
use pods::owner_key;

pub use bookkeeping::{Bookkeeping, NoBookkeeping};
pub use executor::{Executor, object_reference};

/// How running a plan ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Executed {
    /// Every step succeeded: honour [`Plan::requeue_after`].
    Done(Option<Duration>),
    /// An adoption found its pod gone: the snapshot was stale, sync again
    /// at once (no error).
    Stale,
    /// A claim step (re-check, adopt, release) failed: requeue with rate
    /// limiting, nothing else.
    ClaimFailed(String),
    /// A create or delete step (for a StatefulSet, any pod or claim write)
    /// failed with this first error: the caller writes the status (with
    /// `ReplicaFailure` for a ReplicaSet) and requeues with rate limiting.
    ManageFailed(String),
    /// Another step (status update) failed.
    Failed(String),
    /// Creating a ReplicaSet failed: the caller plans the Deployment's
    /// `after_create_failure` and requeues with rate limiting.
    CreateReplicaSetFailed(CreateFailure),
    /// A create was refused because the namespace is terminating: the plan
    /// stopped there, and there is nothing to retry (upstream forgets the
    /// key on a `NamespaceTerminating` cause).
    Halted,
    /// A ControllerRevision create was renamed after a name collision and
    /// the plan stopped after it: the caller records this collision count
    /// (the StatefulSet's `after_failure`) and syncs again.
    RevisionRenamed(i32),
    /// The current revision's create found its name taken by this
    /// revision, read live ([`OnAlreadyExists::Report`]): the plan stopped
    /// there; the caller judges it (the DaemonSet's `after_already_exists`)
    /// and requeues with rate limiting.
    ///
    /// [`OnAlreadyExists::Report`]: kcm_controllers::common::history::OnAlreadyExists::Report
    RevisionExists(Box<ControllerRevision>),
}

impl Executed {
    /// The worker's next step for a plan that ran so, when the controller
    /// has nothing of its own to do about it: success honours the plan's
    /// requeue, a stale snapshot syncs again at once, a halted plan waits
    /// for a change, and a failure is retried with backoff.
    ///
    /// # Errors
    /// The first failed step's error, for the worker's backoff.
    pub fn into_next(self) -> Result<Next, SyncError> {
        match self {
            Executed::Done(after) => Ok(after.map_or(Next::Done, Next::After)),
            Executed::Stale | Executed::RevisionRenamed(_) => Ok(Next::After(Duration::ZERO)),
            Executed::Halted => Ok(Next::Done),
            Executed::ClaimFailed(error) | Executed::ManageFailed(error) | Executed::Failed(error) => Err(error.into()),
            Executed::CreateReplicaSetFailed(failure) => Err(failure.to_string().into()),
            Executed::RevisionExists(existing) => {
                Err(format!("controller revision {} already exists", existing.metadata.name.unwrap_or_default()).into())
            }
        }
    }
}

impl Executor {
    /// Runs `plan`'s steps in order (the actions of one step concurrently)
    /// and stops after the first failed step.
    pub async fn run(&self, plan: &Plan, book: &dyn Bookkeeping) -> Executed {
        let versions = Versions::default();
        for (index, step) in plan.steps.iter().enumerate() {
            let outcomes = join_all(step.actions.iter().map(|a| self.perform(a, book, &versions))).await;
            let mut first_error = None;
            let mut failed_creates = 0;
            let mut stale = false;
            for (action, outcome) in step.actions.iter().zip(outcomes) {
                match outcome {
                    Outcome::Ok => {}
                    Outcome::Stale => stale = true,
                    Outcome::Halt => return Executed::Halted,
                    Outcome::Renamed(count) => return Executed::RevisionRenamed(count),
                    Outcome::RevisionExists(existing) => return Executed::RevisionExists(existing),
                    Outcome::CreateFailed(failure) => return Executed::CreateReplicaSetFailed(failure),
                    Outcome::Failed(error) => {
                        if matches!(action, Action::CreatePod { .. }) {
                            failed_creates += 1;
                        }
                        first_error.get_or_insert(error);
                    }
                }
            }
            if let Some(error) = first_error {
                let claim = step.actions.iter().any(|a| {
                    matches!(
                        a,
                        Action::RecheckOwner { .. }
                            | Action::PatchPodOwnerRefs { .. }
                            | Action::PatchReplicaSetOwnerRefs { .. }
                            | Action::ControllerRevision(history::Write::PatchOwnerRefs { .. })
                            | Action::Job(job::Write::AdoptPod { .. } | job::Write::ReleasePod { .. })
                    )
                });
                let manage = step.actions.iter().any(|a| match a {
                    Action::CreatePod { .. } | Action::DeletePod { .. } => true,
                    Action::StatefulSet(write) => statefulsets::is_pod_write(write),
                    Action::Job(write) => matches!(write, job::Write::RemoveFinalizerAndDelete { .. }),
                    _ => false,
                });
                if manage {
                    if let Some(owner) = step.actions.iter().find_map(created_by) {
                        book.creations_skipped(&owner, failed_creates + plan.creations_after(index));
                    }
                    return Executed::ManageFailed(error);
                }
                return if claim { Executed::ClaimFailed(error) } else { Executed::Failed(error) };
            }
            if stale {
                return Executed::Stale;
            }
        }
        Executed::Done(plan.requeue_after)
    }

    /// Performs one action.
    async fn perform(&self, action: &Action, book: &dyn Bookkeeping, versions: &Versions) -> Outcome {
        match action {
            Action::RecheckOwner { owner } => self.recheck_owner(owner).await,
            Action::ExpectCreations { key, count } => {
                book.expect_creations(key, *count);
                Outcome::Ok
            }
            Action::ExpectDeletions { key, pod_keys } => {
                book.expect_deletions(key, pod_keys);
                Outcome::Ok
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
                self.create_replica_set(namespace, replica_set, versions).await
            }
            Action::UpdateReplicaSet { replica_set } => self.replace(&**replica_set, false, versions).await,
            Action::DeleteReplicaSet { namespace, name, uid } => self.delete_replica_set(namespace, name, uid).await,
            Action::UpdateDeploymentStatus { deployment } => self.replace(&**deployment, true, versions).await,
            Action::UpdateDeployment { deployment } => self.replace(&**deployment, false, versions).await,
            Action::UpdateReplicaSetStatus { namespace, name, resource_version, status } => {
                self.update_replica_set_status(namespace, name, resource_version.as_deref(), status).await
            }
            Action::Event(event) => {
                self.record(event);
                Outcome::Ok
            }
            Action::DaemonSet(write) => self.daemon_set(write).await,
            Action::ControllerRevision(write) => self.write_revision(write, versions).await,
            Action::StatefulSet(write) => self.write_stateful_set(write).await,
            Action::Job(write) => self.write_job(write, book, versions).await,
        }
    }
}

/// The queue key of the owner a create or delete is for.
fn created_by(action: &Action) -> Option<String> {
    match action {
        Action::CreatePod { owner, .. } => Some(owner_key(owner)),
        _ => None,
    }
}
