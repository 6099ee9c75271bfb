//! The protocol between a controller core and the loop that drives it: a
//! sync is a state machine ([`Core`]) that hands out its next [`Step`] of
//! writes, is told what each write answered ([`Told`], typed by
//! [`Refusal`]), and decides what follows itself, until it is over and says
//! how ([`Finish`]). It is quinn-proto's shape: the core does no I/O, the
//! driver's one loop does nothing but perform and report, and a core's tests
//! drive it with canned answers.
//!
//! What a refusal of a shared [`Action`] means is written once, in
//! [`judge`]: a core asks it, and adds what is its own (a status write after
//! a failed create, a rename after a collision).

use std::time::Duration;

use k8s_openapi::api::apps::v1::{ControllerRevision, ReplicaSet};
use k8s_openapi::api::core::v1::Pod;

use crate::common::history;
use crate::plan::{Action, OwnerRefPatch, Plan, Step};

/// Why the API server refused a write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// 404: the object (or its namespace) is not there.
    NotFound,
    /// 409 `Conflict`: a resourceVersion or uid precondition failed.
    Conflict,
    /// 409 `AlreadyExists`: the name is taken.
    AlreadyExists,
    /// 403 with the `NamespaceTerminating` cause: nothing may be created
    /// in a namespace being deleted.
    NamespaceTerminating,
    /// 403 otherwise.
    Forbidden,
    /// 422: the object (or patch) is invalid.
    Invalid,
    /// Anything else: a server error, a timeout, a lost connection.
    Other,
}

/// A refused write: why, and the message events and conditions show.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WriteError {
    /// Why.
    pub refusal: Refusal,
    /// The API server's message (or the client's, for a transport error).
    pub message: String,
}

/// What an accepted action answered.
#[derive(Clone, Debug, PartialEq)]
pub enum Answer {
    /// Done: a write was accepted (or bookkeeping recorded).
    Done,
    /// A read answered with this ReplicaSet.
    ReplicaSet(Box<ReplicaSet>),
    /// A read answered with this ControllerRevision.
    ControllerRevision(Box<ControllerRevision>),
    /// A read answered with this pod, whole (a write made from it drops
    /// no field).
    Pod(Box<Pod>),
}

/// What one action answered: accepted, or refused.
pub type Told = Result<Answer, WriteError>;

/// How a sync ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Finish {
    /// Nothing more to do until something changes.
    Done,
    /// Sync again after this long (upstream `AddAfter`).
    After(Duration),
    /// Sync again at once: the snapshot was stale (upstream requeues a
    /// claim that found its dependent gone).
    Now,
    /// Failed with this error: retried with the queue's backoff.
    Retry(String),
}

/// One sync of one key, as a state machine the driver's loop runs:
/// `poll` for a step, perform its actions (concurrently), `told` their
/// answers in the step's order, again until `poll` says `None`; then
/// `finish`.
pub trait Core {
    /// The controller's own writes ([`Action::Own`]).
    type Own;

    /// The next step to perform, or `None` once the sync is over.
    fn poll(&mut self) -> Option<&Step<Self::Own>>;

    /// The answers to the actions of the step `poll` last handed out, in
    /// its order.
    fn told(&mut self, answers: Vec<Told>);

    /// How the sync ended; called once `poll` has returned `None`.
    fn finish(self) -> Finish;
}

/// What a refusal means for a shared action, per its contract in
/// [`Action`]'s documentation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Done, or refused in a way the action tolerates.
    Fine,
    /// An adoption found its dependent gone: the snapshot was stale.
    Stale,
    /// Failed with this message.
    Failed(String),
}

/// The verdict on `answer` to `action`: a shared action's by its
/// contract, the controller's own write's by `own`.
pub fn judge<W>(action: &Action<W>, answer: &Told, own: impl FnOnce(&W, &WriteError) -> Verdict) -> Verdict {
    let Err(error) = answer else { return Verdict::Fine };
    let tolerated = match action {
        Action::Own(write) => return own(write, error),
        // Any creation fails in a terminating namespace: nothing to retry.
        Action::CreatePod { .. } => error.refusal == Refusal::NamespaceTerminating,
        Action::DeletePod { .. }
        | Action::DeleteReplicaSet { .. }
        | Action::ControllerRevision(history::Write::Delete { .. }) => error.refusal == Refusal::NotFound,
        Action::PatchPodOwnerRefs { patch, .. }
        | Action::PatchReplicaSetOwnerRefs { patch, .. }
        | Action::ControllerRevision(history::Write::PatchOwnerRefs { patch, .. }) => {
            return judge_owner_ref_patch(patch, error);
        }
        _ => false,
    };
    if tolerated { Verdict::Fine } else { Verdict::Failed(error.message.clone()) }
}

/// The verdict on an ownerReferences patch refused with `error` (of a pod,
/// a ReplicaSet or a ControllerRevision): an adoption that finds its
/// dependent gone had a stale snapshot; a release of a dependent that is
/// gone, or no longer references the owner (422), is done.
pub fn judge_owner_ref_patch(patch: &OwnerRefPatch, error: &WriteError) -> Verdict {
    match patch {
        OwnerRefPatch::Adopt(_) if error.refusal == Refusal::NotFound => Verdict::Stale,
        OwnerRefPatch::Release { .. } if matches!(error.refusal, Refusal::NotFound | Refusal::Invalid) => Verdict::Fine,
        _ => Verdict::Failed(error.message.clone()),
    }
}

/// What the answers to one step add up to, by [`judge`].
#[derive(Debug)]
pub struct Summary<'a, W> {
    /// The first failure's message.
    pub first_error: Option<String>,
    /// The actions that failed, in the step's order.
    pub failed: Vec<&'a Action<W>>,
    /// An adoption found its dependent gone: the snapshot was stale.
    pub stale: bool,
    /// A ControllerRevision create found its name taken: the revision it
    /// sent (the core reads the one there and decides).
    pub taken: Option<&'a ControllerRevision>,
    /// A ControllerRevision create was refused because the namespace is
    /// terminating: the sync ends, with nothing to retry.
    pub namespace_terminating: bool,
}

impl<'a, W> Summary<'a, W> {
    /// Sums up `answers` to `step`'s actions, the own writes' by `own`.
    pub fn of(step: &'a Step<W>, answers: &[Told], own: impl Fn(&W, &WriteError) -> Verdict) -> Self {
        let mut summary =
            Summary { first_error: None, failed: Vec::new(), stale: false, taken: None, namespace_terminating: false };
        for (action, answer) in step.actions.iter().zip(answers) {
            if let (Action::ControllerRevision(history::Write::Create { revision }), Err(error)) = (action, answer) {
                summary.taken = summary.taken.or((error.refusal == Refusal::AlreadyExists).then_some(&**revision));
                summary.namespace_terminating |= error.refusal == Refusal::NamespaceTerminating;
            }
            match judge(action, answer, &own) {
                Verdict::Fine => {}
                Verdict::Stale => summary.stale = true,
                Verdict::Failed(error) => {
                    summary.failed.push(action);
                    summary.first_error.get_or_insert(error);
                }
            }
        }
        summary
    }

    /// Whether a pod create or delete failed (upstream's `manageReplicas`
    /// returned an error).
    pub fn pod_write_failed(&self) -> bool {
        self.failed.iter().any(|a| matches!(a, Action::CreatePod { .. } | Action::DeletePod { .. }))
    }
}

/// Whether `action` creates a pod.
fn creates_pod<W>(action: &Action<W>) -> bool {
    matches!(action, Action::CreatePod { .. })
}

/// A plan handed out one step at a time, as a [`Core`] does.
#[derive(Debug)]
pub struct Stepper<W> {
    plan: Plan<W>,
    /// Steps handed out so far.
    handed: usize,
}

impl<W> Stepper<W> {
    /// Hands out `plan`'s steps in order.
    pub fn new(plan: Plan<W>) -> Self {
        Self { plan, handed: 0 }
    }

    /// The next step, if any is left.
    pub fn next_step(&mut self) -> Option<&Step<W>> {
        let step = self.plan.steps.get(self.handed)?;
        self.handed += 1;
        Some(step)
    }

    /// The step handed out last.
    ///
    /// # Panics
    /// Before the first [`Stepper::next_step`].
    pub fn current(&self) -> &Step<W> {
        &self.plan.steps[self.handed - 1]
    }

    /// The steps not handed out yet.
    pub fn rest(&self) -> &[Step<W>] {
        &self.plan.steps[self.handed..]
    }

    /// After the current step was answered so (`summary`), when it created
    /// pods: forget under `key` the creations the cache will never show,
    /// the failed ones and those of the steps never handed out (upstream's
    /// `CreationObserved` for each skipped pod).
    pub fn forget_unseen_creations(&self, summary: &Summary<'_, W>, key: String) -> Option<Action<W>> {
        if !self.current().actions.iter().any(creates_pod) {
            return None;
        }
        let failed = summary.failed.iter().filter(|a| creates_pod(a)).count();
        let never_issued = self.rest().iter().flat_map(|s| &s.actions).filter(|a| creates_pod(a)).count();
        let count = failed + never_issued;
        (count > 0).then_some(Action::ForgetCreations { key, count })
    }

    /// The plan's requeue ([`Plan::requeue_after`]).
    pub fn requeue_after(&self) -> Option<Duration> {
        self.plan.requeue_after
    }
}
