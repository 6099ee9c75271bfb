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
//!   actions at once) and how a run ended, [`Executed`], for the cores
//!   that still return a whole plan;
//! - `drive`: [`Executor::drive`], the loop that runs a core of the sync
//!   protocol (`kcm_controllers::protocol`), each shared action's typed
//!   answer, and [`OwnWriter`], what performs a driven core's own writes;
//! - `executor`: [`Executor`] itself, its events, and what the actions of
//!   one run share;
//! - `bookkeeping`: [`Bookkeeping`], what the executor reports;
//! - `claims`: the owner re-check and the ownerReference patches;
//! - `daemonsets`: the DaemonSet controller's status write and pod relabel;
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
mod drive;
mod executor;
mod pods;
mod replicasets;
mod revisions;
mod statefulsets;
#[cfg(test)]
mod testing;
mod updates;

use std::time::Duration;

use futures::future::{BoxFuture, join_all};
use k8s_openapi::api::apps::v1::ControllerRevision;
use kcm_controllers::common::history;
use kcm_controllers::deployment::CreateFailure;
use kcm_controllers::plan::{Action, NoOwnWrites, Plan};
use kcm_controllers::protocol::{Verdict, judge};

pub use executor::{Outcome, Versions};
use kcm_runtime::runner::{Next, SyncError};
use pods::owner_key;

pub use bookkeeping::{Bookkeeping, NoBookkeeping};
pub use drive::{OwnWriter, next_after};
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

/// How the executor performs a controller's own writes
/// ([`Action::Own`]) in a plan run, and which of them are part of its
/// management of pods (what a failed step of them means for the run).
pub trait OwnWrites<W>: Sync {
    /// Performs `write`.
    fn perform<'a>(&'a self, write: &'a W, book: &'a dyn Bookkeeping, versions: &'a Versions)
    -> BoxFuture<'a, Outcome>;

    /// Whether `write` creates or deletes what the controller manages.
    fn is_manage(_write: &W) -> bool {
        false
    }
}

impl OwnWrites<NoOwnWrites> for Executor {
    fn perform<'a>(
        &'a self,
        write: &'a NoOwnWrites,
        _: &'a dyn Bookkeeping,
        _: &'a Versions,
    ) -> BoxFuture<'a, Outcome> {
        match *write {}
    }
}

impl Executor {
    /// Runs `plan`'s steps in order (the actions of one step concurrently)
    /// and stops after the first failed step.
    pub async fn run<W>(&self, plan: &Plan<W>, book: &dyn Bookkeeping) -> Executed
    where
        Self: OwnWrites<W>,
    {
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
                    )
                });
                let manage = step.actions.iter().any(|a| match a {
                    Action::CreatePod { .. } | Action::DeletePod { .. } => true,
                    Action::Own(write) => Self::is_manage(write),
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
    async fn perform<W>(&self, action: &Action<W>, book: &dyn Bookkeeping, versions: &Versions) -> Outcome
    where
        Self: OwnWrites<W>,
    {
        match action {
            Action::CreateReplicaSet { namespace, replica_set } => {
                self.create_replica_set(namespace, replica_set, versions).await
            }
            Action::ControllerRevision(write) => self.write_revision(write, versions).await,
            Action::Own(write) => OwnWrites::perform(self, write, book, versions).await,
            shared => {
                let answer = self.answer(shared, book, versions).await;
                Outcome::of(judge(shared, &answer, |_, error| Verdict::Failed(error.message.clone())))
            }
        }
    }
}

/// The queue key of the owner a create or delete is for.
fn created_by<W>(action: &Action<W>) -> Option<String> {
    match action {
        Action::CreatePod { owner, .. } => Some(owner_key(owner)),
        _ => None,
    }
}
