//! One Job sync as a [`Core`] of the sync protocol: [`sync`]'s plan, one
//! step at a time. What the answers mean is decided here, as upstream's
//! `syncJob` does after each call:
//! - a refused claim step (re-check, adopt, release) ends the sync with
//!   its error; an adoption whose pod is gone ends it to sync again at
//!   once;
//! - a refused create or delete step ends the plan there; the creations
//!   the cache will not see (the refused ones and those of the steps never
//!   run) are forgotten ([`Action::ForgetCreations`]) and the sync ends
//!   with the error (upstream writes the status first; kcm-rs retries the
//!   sync, which writes the same status from the cache);
//! - a refused finalizer removal ends the plan there, and the removals
//!   refused are no longer expected
//!   ([`Write::ForgetFinalizerRemovals`]);
//! - a refused status write ends the sync with its error;
//! - every pod create answered is counted in `job_pods_creation_total`
//!   ([`Count::PodsCreated`]), but for those a terminating namespace
//!   refused.
//!
//! What the sync forgets and counts is handed out in one last step of
//! bookkeeping, whether the plan ran to its end or not.
//!
//! [`sync`]: super::sync

use std::collections::BTreeMap;

use super::write::{Count, Write};
use super::{Action, Plan, Synced};
use crate::plan::Step;
use crate::protocol::{Core, Finish, Refusal, Stepper, Summary, Told, Verdict, WriteError};

/// One Job sync in progress.
#[derive(Debug)]
pub struct SyncMachine {
    steps: Stepper<Write>,
    /// The `reason` label of the pods the plan creates.
    creation_reason: &'static str,
    /// What the answers so far call for, handed out last.
    closing: Closing,
    state: State,
}

/// Where the sync is.
#[derive(Debug)]
enum State {
    /// Running the sync's plan.
    Syncing,
    /// The plan is over, so: handing out the closing bookkeeping, then
    /// finishing so.
    Closing(Finish),
}

/// The bookkeeping the answers call for.
#[derive(Debug, Default)]
struct Closing {
    /// Pod creates accepted.
    created: u64,
    /// Pod creates refused (but by a terminating namespace).
    creations_failed: u64,
    /// The creations to forget ([`Action::ForgetCreations`]).
    forget_creations: Option<Action>,
    /// The refused finalizer removals, pod uids by the Job's queue key.
    failed_removals: BTreeMap<String, Vec<String>>,
}

impl SyncMachine {
    /// The sync that runs `synced`'s plan, not started.
    pub fn new(synced: Synced) -> Self {
        Self {
            steps: Stepper::new(synced.plan),
            creation_reason: synced.creation_reason,
            closing: Closing::default(),
            state: State::Syncing,
        }
    }

    /// Ends the plan: what follows is the closing bookkeeping, then
    /// `finish`.
    fn close(&mut self, finish: Finish) {
        let closing = std::mem::take(&mut self.closing);
        let mut actions = Vec::new();
        actions.extend(closing.forget_creations);
        for (key, uids) in closing.failed_removals {
            actions.push(Action::Own(Write::ForgetFinalizerRemovals { key, uids }));
        }
        for (status, n) in [("succeeded", closing.created), ("failed", closing.creations_failed)] {
            if n > 0 {
                let reason = self.creation_reason;
                actions.push(Action::Own(Write::Count(Count::PodsCreated { reason, status, n })));
            }
        }
        let mut plan = Plan::new();
        if !actions.is_empty() {
            plan.steps.push(Step { actions });
        }
        self.steps = Stepper::new(plan);
        self.state = State::Closing(finish);
    }
}

impl Core for SyncMachine {
    type Own = Write;

    fn poll(&mut self) -> Option<&Step<Write>> {
        if matches!(self.state, State::Syncing) && self.steps.rest().is_empty() {
            self.close(self.steps.requeue_after().map_or(Finish::Done, Finish::After));
        }
        self.steps.next_step()
    }

    fn told(&mut self, answers: Vec<Told>) {
        if !matches!(self.state, State::Syncing) {
            // The closing bookkeeping: nothing follows it.
            return;
        }
        let step = self.steps.current();
        let mut owner = None;
        for (action, answer) in step.actions.iter().zip(&answers) {
            if let Action::CreatePod { owner: job, .. } = action {
                owner.get_or_insert_with(|| kcm_objects::object_key(job.namespace.as_deref(), &job.name));
                match answer {
                    Ok(_) => self.closing.created += 1,
                    Err(error) if error.refusal != Refusal::NamespaceTerminating => {
                        self.closing.creations_failed += 1;
                    }
                    Err(_) => {}
                }
            }
        }
        let summary = Summary::of(step, &answers, judge_own);
        for action in &summary.failed {
            if let Action::Own(Write::RemoveFinalizer { key, uid, .. }) = action {
                self.closing.failed_removals.entry(key.clone()).or_default().push(uid.clone());
            }
        }
        if let Some(error) = summary.first_error.clone() {
            self.closing.forget_creations = owner.and_then(|key| self.steps.forget_unseen_creations(&summary, key));
            self.close(Finish::Retry(error));
        } else if summary.stale {
            self.close(Finish::Now);
        }
    }

    fn finish(self) -> Finish {
        match self.state {
            State::Closing(finish) => finish,
            State::Syncing => self.steps.requeue_after().map_or(Finish::Done, Finish::After),
        }
    }
}

/// What a refusal of one of the Job's own writes means, per its contract
/// in [`Write`]'s documentation.
fn judge_own(write: &Write, error: &WriteError) -> Verdict {
    let tolerated = match write {
        // The pod to adopt is gone: the snapshot was stale.
        Write::AdoptPod { .. } if error.refusal == Refusal::NotFound => return Verdict::Stale,
        // Gone, or (422) recreated under the name or no longer
        // referencing the Job: nothing is left to release.
        Write::ReleasePod { .. } => matches!(error.refusal, Refusal::NotFound | Refusal::Invalid),
        Write::RemoveFinalizer { .. } | Write::RemoveFinalizerAndDelete { .. } => error.refusal == Refusal::NotFound,
        _ => false,
    };
    if tolerated { Verdict::Fine } else { Verdict::Failed(error.message.clone()) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::tests::{World, job, pod, pods};
    use crate::protocol::Answer;
    use crate::testing::{self, describe, refused};

    /// Drives a sync of `w` to its end, each action answered by `answer`:
    /// the steps handed out (one line each, see [`line`]) and how the
    /// sync finished.
    fn drive(w: &World, answer: impl Fn(&Action) -> Told) -> (Vec<String>, Finish) {
        testing::drive_with(SyncMachine::new(w.sync()), line, answer)
    }

    /// A step's actions: `create x<n>` for its pod creates, the Job's own
    /// writes in short, the shared ones as [`describe`] has them.
    fn line(step: &Step<Write>) -> String {
        let creates = step.actions.iter().filter(|a| matches!(a, Action::CreatePod { .. })).count();
        if creates > 0 {
            return format!("create x{creates}");
        }
        let own = |write: &Write| match write {
            Write::UpdateStatus { .. } => "status".to_owned(),
            Write::AdoptPod { name, .. } => format!("adopt {name}"),
            Write::ReleasePod { name, .. } => format!("release {name}"),
            Write::ExpectFinalizerRemovals { uids, .. } => format!("expect removals {}", uids.join(",")),
            Write::RemoveFinalizer { name, .. } => format!("remove finalizer {name}"),
            Write::RemoveFinalizerAndDelete { name, .. } => format!("delete {name}"),
            Write::ForgetFinalizerRemovals { uids, .. } => format!("forget removals {}", uids.join(",")),
            Write::RecordBackoff { .. } => "backoff".to_owned(),
            Write::ExpectFinished { .. } => "finished".to_owned(),
            Write::Count(Count::PodsCreated { reason, status, n }) => format!("count {reason} {status} {n}"),
            Write::Count(_) => "count".to_owned(),
        };
        let lines: Vec<String> = step
            .actions
            .iter()
            .map(|a| match a {
                Action::Own(write) => own(write),
                shared => describe(shared),
            })
            .collect();
        lines.join(" ")
    }

    fn is_status(action: &Action) -> bool {
        matches!(action, Action::Own(Write::UpdateStatus { .. }))
    }

    const QUOTA: &str = "pods \"foobar-x\" is forbidden: exceeded quota";

    /// Every write accepted: the plan runs to its end, then the pods
    /// created are counted.
    #[test]
    fn an_accepted_plan_runs_to_its_end_and_counts_the_creations() {
        let w = World::new(job(2, Some(5), 6), vec![]);
        let (lines, finish) = drive(&w, |_| Ok(Answer::Done));
        assert_eq!(lines, ["expect +2", "create x1", "create x1", "status", "backoff", "count new succeeded 2"]);
        assert_eq!(finish, Finish::Done);
    }

    /// Upstream's slow start stops at the failed batch: of 5 creations, the
    /// 3rd fails (in the step of 2), so the one failure and the 2 never
    /// issued are forgotten, the answered creates counted, no status
    /// written, and the sync is retried.
    #[test]
    fn a_refused_create_forgets_what_will_not_be_seen_and_is_retried() {
        let w = World::new(job(5, Some(5), 6), vec![]);
        let creates = std::cell::Cell::new(0);
        let (lines, finish) = drive(&w, |action| match action {
            Action::CreatePod { .. } => {
                creates.set(creates.get() + 1);
                if creates.get() == 3 { refused(Refusal::Forbidden, QUOTA) } else { Ok(Answer::Done) }
            }
            _ => Ok(Answer::Done),
        });
        assert_eq!(
            lines,
            ["expect +5", "create x1", "create x2", "forget +3 count new succeeded 2 count new failed 1"]
        );
        assert_eq!(finish, Finish::Retry(QUOTA.into()));
    }

    /// A namespace being deleted refuses every creation: nothing to
    /// forget, count or retry; the sync goes on.
    #[test]
    fn creates_refused_by_a_terminating_namespace_are_not_failures() {
        let w = World::new(job(2, Some(5), 6), vec![]);
        let (lines, finish) = drive(&w, |action| match action {
            Action::CreatePod { .. } => refused(Refusal::NamespaceTerminating, "namespace ns is being terminated"),
            _ => Ok(Answer::Done),
        });
        assert_eq!(lines, ["expect +2", "create x1", "create x1", "status", "backoff"]);
        assert_eq!(finish, Finish::Done);
    }

    /// An adoption whose pod is gone had a stale snapshot: the sync ends
    /// there and runs again at once.
    #[test]
    fn an_adoption_whose_pod_is_gone_syncs_again_at_once() {
        let mut orphan = pod("orphan", "Running");
        orphan.metadata.owner_references = None;
        let w = World::new(job(1, Some(5), 6), vec![orphan]);
        let (lines, finish) = drive(&w, |action| match action {
            Action::Own(Write::AdoptPod { .. }) => refused(Refusal::NotFound, "pods \"orphan\" not found"),
            _ => Ok(Answer::Done),
        });
        assert_eq!(lines, ["recheck", "adopt orphan"]);
        assert_eq!(finish, Finish::Now);
    }

    /// A refused finalizer removal ends the plan (the counts after it are
    /// not handed out) and is no longer expected; one of a pod already
    /// gone is done.
    #[test]
    fn a_refused_finalizer_removal_is_forgotten_and_retried() {
        let w = World::new(job(2, Some(5), 6), pods(2, 0, 2, 0));
        let conflict = "the object has been modified";
        let (lines, finish) = drive(&w, |action| match action {
            Action::Own(Write::RemoveFinalizer { name, .. }) if name == "succeeded-0" => {
                refused(Refusal::Conflict, &format!("removing tracking finalizer: {conflict}"))
            }
            Action::Own(Write::RemoveFinalizer { .. }) => refused(Refusal::NotFound, "pods \"succeeded-1\" not found"),
            _ => Ok(Answer::Done),
        });
        let removals = lines.iter().position(|l| l.starts_with("remove finalizer")).expect("removals");
        assert_eq!(lines[removals], "remove finalizer succeeded-0 remove finalizer succeeded-1");
        assert_eq!(lines[removals + 1..], ["forget removals uid-succeeded-0"]);
        assert_eq!(finish, Finish::Retry(format!("removing tracking finalizer: {conflict}")));
    }

    /// A refused status write ends the sync with its error: what was to
    /// follow it (the counts, the backoff record) is not handed out.
    #[test]
    fn a_refused_status_write_is_retried() {
        let w = World::new(job(2, Some(5), 6), pods(2, 0, 1, 1));
        let conflict = "the object has been modified";
        let (all, _) = drive(&w, |_| Ok(Answer::Done));
        let (lines, finish) =
            drive(&w, |action| if is_status(action) { refused(Refusal::Conflict, conflict) } else { Ok(Answer::Done) });
        let first_status = all.iter().position(|l| l.contains("status")).expect("a status write");
        assert!(all.len() > first_status + 1, "{all:?}");
        assert_eq!(lines, all[..=first_status]);
        assert_eq!(finish, Finish::Retry(conflict.into()));
    }

    /// A Job with more active pods than its parallelism deletes the
    /// surplus; a delete of a pod already gone is done, any other refusal
    /// ends the sync with its error (no creation to forget).
    #[test]
    fn a_refused_delete_is_retried_and_one_already_gone_is_done() {
        let w = World::new(job(1, Some(5), 6), pods(2, 0, 0, 0));
        let delete = |action: &Action| matches!(action, Action::Own(Write::RemoveFinalizerAndDelete { .. }));
        let (lines, finish) = drive(&w, |action| {
            if delete(action) { refused(Refusal::NotFound, "pods \"active-1\" not found") } else { Ok(Answer::Done) }
        });
        let deletes = lines.iter().position(|l| l.starts_with("delete ")).expect("a delete");
        assert!(lines.len() > deletes + 1, "{lines:?}");
        assert_eq!(finish, Finish::Done);

        let timeout = "etcdserver: request timed out";
        let (refused_lines, finish) =
            drive(&w, |action| if delete(action) { refused(Refusal::Other, timeout) } else { Ok(Answer::Done) });
        assert_eq!(refused_lines, lines[..=deletes]);
        assert_eq!(finish, Finish::Retry(timeout.into()));
    }
}
