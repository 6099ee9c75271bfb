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
//!   protocol (`kcm_controllers::protocol`), and each shared action's
//!   typed answer;
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
//!   history) and the live read of one;
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
mod jobs;
mod pods;
mod replicasets;
mod revisions;
mod statefulsets;
#[cfg(test)]
mod testing;
mod updates;

use std::time::Duration;

use futures::future::{BoxFuture, join_all};
use kcm_controllers::plan::{Action, NoOwnWrites, Plan};
use kcm_controllers::protocol::{Told, Verdict, judge};

pub use executor::{Outcome, Versions};
use kcm_runtime::runner::{Next, SyncError};
use pods::owner_key;

pub use bookkeeping::{Bookkeeping, NoBookkeeping};
pub use drive::{next_after, not_driven_yet};
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
    /// A create or delete step (of pods, or of what
    /// [`OwnWrites::is_manage`] names) failed with this first error: the
    /// caller writes the status and requeues with rate limiting.
    ManageFailed(String),
    /// Another step (status update) failed.
    Failed(String),
    /// A create was refused because the namespace is terminating: the plan
    /// stopped there, and there is nothing to retry (upstream forgets the
    /// key on a `NamespaceTerminating` cause).
    Halted,
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
            Executed::Stale => Ok(Next::After(Duration::ZERO)),
            Executed::Halted => Ok(Next::Done),
            Executed::ClaimFailed(error) | Executed::ManageFailed(error) | Executed::Failed(error) => Err(error.into()),
        }
    }
}

/// How the executor performs a controller's own writes
/// ([`Action::Own`]), and which of them are part of its claim or its
/// management of pods (what a failed step of them means for
/// [`Executor::run`]).
pub trait OwnWrites<W>: Sync {
    /// Performs `write` and says what it answered, typed, for a core the
    /// executor drives ([`Executor::drive`]). A controller still run as a
    /// plan keeps the default: an error saying so.
    fn answer<'a>(&'a self, _write: &'a W, _: &'a dyn Bookkeeping, _: &'a Versions) -> BoxFuture<'a, Told> {
        Box::pin(async { Err(not_driven_yet()) })
    }

    /// Performs `write` for [`Executor::run`]. A driven controller keeps
    /// the default: a failure saying it is not run as a plan.
    fn perform<'a>(&'a self, _write: &'a W, _: &'a dyn Bookkeeping, _: &'a Versions) -> BoxFuture<'a, Outcome> {
        Box::pin(async { Outcome::Failed("kcm-rs: this controller's core is driven, not run as a plan".into()) })
    }

    /// Whether `write` adopts or releases (a failed claim ends the sync).
    fn is_claim(_write: &W) -> bool {
        false
    }

    /// Whether `write` creates or deletes what the controller manages.
    fn is_manage(_write: &W) -> bool {
        false
    }
}

impl OwnWrites<NoOwnWrites> for Executor {
    fn answer<'a>(&'a self, write: &'a NoOwnWrites, _: &'a dyn Bookkeeping, _: &'a Versions) -> BoxFuture<'a, Told> {
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
                    ) || matches!(a, Action::Own(write) if Self::is_claim(write))
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
