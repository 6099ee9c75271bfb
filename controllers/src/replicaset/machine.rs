//! One ReplicaSet sync as a [`Core`] of the sync protocol: [`sync`]'s plan,
//! one step at a time. What a refused write means is decided here, as
//! upstream's `syncReplicaSet` does after `manageReplicas` returns:
//! - a failed claim step (re-check, adopt, release) ends the sync with its
//!   error; an adoption whose pod is gone ends it to sync again at once;
//! - a failed create or delete step ends the plan there: the creations
//!   the cache will not see (the failed ones and the steps never run) are
//!   forgotten ([`Action::ForgetCreations`]), the status is written with
//!   `ReplicaFailure` ([`after_manage_error`], on the same snapshot, as
//!   upstream computes it from the same pods), and the sync ends with the
//!   error;
//! - a failed status write ends the sync with its error.

use super::{Options, Snapshot, after_manage_error, key, sync};
use crate::plan::{NoOwnWrites, Plan, Step};
use crate::protocol::{Core, Finish, Stepper, Summary, Told};

/// One ReplicaSet sync in progress.
pub struct SyncMachine<'a> {
    snapshot: &'a Snapshot<'a>,
    options: &'a Options,
    steps: Stepper<NoOwnWrites>,
    state: State,
}

/// Where the sync is.
#[derive(Debug)]
enum State {
    /// Running the sync's plan.
    Syncing,
    /// A create or delete failed with this error: writing the status.
    AfterManageError(String),
    /// Over.
    Over(Finish),
}

impl<'a> SyncMachine<'a> {
    /// The sync of `snapshot`'s ReplicaSet, not started.
    pub fn new(snapshot: &'a Snapshot<'a>, options: &'a Options) -> Self {
        Self { snapshot, options, steps: Stepper::new(sync(snapshot, options)), state: State::Syncing }
    }
}

impl Core for SyncMachine<'_> {
    type Own = NoOwnWrites;

    fn poll(&mut self) -> Option<&Step> {
        if matches!(self.state, State::Over(_)) { None } else { self.steps.next_step() }
    }

    fn told(&mut self, answers: Vec<Told>) {
        let summary = Summary::of(self.steps.current(), &answers, |never, _| match *never {});
        let forget = self.steps.forget_unseen_creations(&summary, key(self.snapshot.replica_set));
        let (manage, stale) = (summary.pod_write_failed(), summary.stale);
        self.state = match (std::mem::replace(&mut self.state, State::Syncing), summary.first_error) {
            (State::Syncing, Some(error)) if manage => {
                let mut plan = Plan::new();
                if let Some(forget) = forget {
                    plan.push(forget);
                }
                plan.steps.extend(after_manage_error(self.snapshot, self.options, &error).steps);
                self.steps = Stepper::new(plan);
                State::AfterManageError(error)
            }
            (State::AfterManageError(manage_error), Some(status_error)) => State::Over(Finish::Retry(format!(
                "{manage_error}; writing the ReplicaFailure status failed too: {status_error}"
            ))),
            (_, Some(error)) => State::Over(Finish::Retry(error)),
            (State::Syncing, None) if stale => State::Over(Finish::Now),
            (state, None) => state,
        };
    }

    fn finish(self) -> Finish {
        match self.state {
            State::Over(finish) => finish,
            State::AfterManageError(error) => Finish::Retry(error),
            State::Syncing => self.steps.requeue_after().map_or(Finish::Done, Finish::After),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;
    use crate::plan::{Action, OwnerRefPatch};
    use crate::protocol::{Answer, Refusal};
    use crate::replicaset::testing::{NOW, World, owned, rs_status};
    use crate::testing::{PodBuilder, RsBuilder, refused, ts};

    /// Drives a sync of `w` to its end, each action answered by `answer`.
    fn drive(w: &World, answer: impl Fn(&Action) -> Told) -> (Vec<String>, Finish) {
        let pods = || w.pods.clone();
        let snapshot = w.snapshot(&pods);
        crate::testing::drive(SyncMachine::new(&snapshot, &w.options), answer)
    }

    const QUOTA: &str = "pods \"web-x\" is forbidden: exceeded quota";

    /// Upstream's slow start stops at the failed batch: of 10 creations, the
    /// 2nd fails (in the step of 2), so the one failure and the 7 never
    /// issued are forgotten, the status says why, and the sync is retried.
    #[test]
    fn a_failed_create_forgets_what_will_not_be_seen_and_writes_replica_failure() {
        let w = World::new(RsBuilder::new(10));
        let creates = Cell::new(0);
        let (lines, finish) = drive(&w, |action| match action {
            Action::CreatePod { .. } => {
                creates.set(creates.get() + 1);
                if creates.get() == 2 { refused(Refusal::Forbidden, QUOTA) } else { Ok(Answer::Done) }
            }
            _ => Ok(Answer::Done),
        });
        assert_eq!(
            lines,
            ["expect +10", "create x1", "create x2", "forget +8", "status 0/0/0/0 gen=1 ReplicaFailure=FailedCreate"]
        );
        assert_eq!(creates.get(), 3, "the step of 2 finishes; the steps after it never run");
        assert_eq!(finish, Finish::Retry(QUOTA.into()));
    }

    /// A namespace being deleted refuses every creation: nothing to
    /// forget, retry or report.
    #[test]
    fn creations_refused_by_a_terminating_namespace_end_the_sync_quietly() {
        let w = World::new(RsBuilder::new(3));
        let (lines, finish) = drive(&w, |action| match action {
            Action::CreatePod { .. } => refused(Refusal::NamespaceTerminating, "namespace ns is being terminated"),
            _ => Ok(Answer::Done),
        });
        assert_eq!(lines, ["expect +3", "create x1", "create x2"]);
        assert_eq!(finish, Finish::Done);
    }

    /// A failed delete writes the status with `FailedDelete` and forgets no
    /// creation.
    #[test]
    fn a_failed_delete_writes_replica_failure_and_is_retried() {
        let w = World::new(RsBuilder::new(1)).pods([owned("a"), owned("b")]);
        let (lines, finish) = drive(&w, |action| match action {
            Action::DeletePod { .. } => refused(Refusal::Other, "etcdserver: request timed out"),
            _ => Ok(Answer::Done),
        });
        assert_eq!(lines.len(), 3, "{lines:?}");
        assert!(lines[0].starts_with("expect -ns/"), "{lines:?}");
        assert!(lines[1].starts_with("delete "), "{lines:?}");
        assert!(lines[2].ends_with("ReplicaFailure=FailedDelete"), "{lines:?}");
        assert_eq!(finish, Finish::Retry("etcdserver: request timed out".into()));
    }

    /// A delete of a pod already gone is done: the sync goes on.
    #[test]
    fn a_delete_of_a_pod_already_gone_is_done() {
        let w = World::new(RsBuilder::new(1)).pods([owned("a"), owned("b")]);
        let (lines, finish) = drive(&w, |action| match action {
            Action::DeletePod { .. } => refused(Refusal::NotFound, "pods \"b\" not found"),
            _ => Ok(Answer::Done),
        });
        assert!(!lines.iter().any(|l| l.contains("ReplicaFailure")), "{lines:?}");
        assert_eq!(finish, Finish::Done);
    }

    /// An adoption whose pod is gone had a stale snapshot: the sync ends
    /// there (no status from it) and runs again at once.
    #[test]
    fn an_adoption_whose_pod_is_gone_syncs_again_at_once() {
        let w = World::new(RsBuilder::new(3))
            .pods([owned("a"), PodBuilder::new("orphan").node("n1").ready_since(ts(NOW - 3600))]);
        let (lines, finish) = drive(&w, |action| match action {
            Action::PatchPodOwnerRefs { patch: OwnerRefPatch::Adopt(_), .. } => {
                refused(Refusal::NotFound, "pods \"orphan\" not found")
            }
            _ => Ok(Answer::Done),
        });
        assert_eq!(lines, ["recheck", "adopt orphan"]);
        assert_eq!(finish, Finish::Now);
    }

    /// The re-check before adopting finds the ReplicaSet being deleted:
    /// nothing else happens, and the error is retried.
    #[test]
    fn a_failed_recheck_ends_the_sync_before_anything_is_adopted() {
        let w = World::new(RsBuilder::new(3))
            .pods([owned("a"), PodBuilder::new("orphan").node("n1").ready_since(ts(NOW - 3600))]);
        let (lines, finish) = drive(&w, |action| match action {
            Action::RecheckOwner { .. } => refused(Refusal::NotFound, "ReplicaSet web has just been deleted"),
            _ => Ok(Answer::Done),
        });
        assert_eq!(lines, ["recheck"]);
        assert_eq!(finish, Finish::Retry("ReplicaSet web has just been deleted".into()));
    }

    /// Releasing a pod that no longer names the ReplicaSet (422) is done.
    #[test]
    fn a_release_refused_as_invalid_is_done() {
        let w = World::new(RsBuilder::new(1).status(rs_status(1, 1, 1))).pods([owned("a").labels(&[("app", "db")])]);
        let (lines, finish) = drive(&w, |action| match action {
            Action::PatchPodOwnerRefs { .. } => refused(Refusal::Invalid, "uid mismatch"),
            _ => Ok(Answer::Done),
        });
        assert_eq!(lines, ["release a", "expect +1", "create x1", "status 0/0/0/0 gen=1"]);
        assert_eq!(finish, Finish::Done);
    }

    /// A refused status write is retried with its error; when it follows
    /// a failed create, both errors are in the retry.
    #[test]
    fn a_refused_status_write_is_retried() {
        let conflict = "the object has been modified";
        let status = |action: &Action| matches!(action, Action::UpdateReplicaSetStatus { .. });
        let w = World::new(RsBuilder::new(1).status(rs_status(1, 1, 1))).pods([owned("a").labels(&[("app", "db")])]);
        let (_, finish) =
            drive(&w, |action| if status(action) { refused(Refusal::Conflict, conflict) } else { Ok(Answer::Done) });
        assert_eq!(finish, Finish::Retry(conflict.into()));

        let w = World::new(RsBuilder::new(1));
        let (lines, finish) = drive(&w, |action| match action {
            Action::CreatePod { .. } => refused(Refusal::Forbidden, QUOTA),
            a if status(a) => refused(Refusal::Conflict, conflict),
            _ => Ok(Answer::Done),
        });
        assert_eq!(lines, ["expect +1", "create x1", "forget +1", "status 0/0/0/0 gen=1 ReplicaFailure=FailedCreate"]);
        assert_eq!(finish, Finish::Retry(format!("{QUOTA}; writing the ReplicaFailure status failed too: {conflict}")));
    }
}
