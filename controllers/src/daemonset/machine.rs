//! One DaemonSet sync as a [`Core`] of the sync protocol: [`sync`]'s plan,
//! one step at a time. What a refused write means is decided here, as
//! upstream's `syncDaemonSet` does with the errors it gets back:
//! - a failed claim step, or any other failed write, ends the sync with its
//!   error; an adoption whose pod is gone ends it to sync again at once;
//! - a failed create or delete step ends the plan there: the creations the
//!   cache will not see (the failed ones and the steps never run) are
//!   forgotten ([`Action::ForgetCreations`]), the status upstream still
//!   writes is written ([`after_manage_error`], on the same snapshot), and
//!   the sync ends with the create's or delete's error;
//! - the current revision's create refused because its name is taken: the
//!   revision holding the name is read live and judged
//!   ([`after_already_exists`]: the cache was behind, or a hash collision
//!   that bumps `status.collisionCount`), and the sync ends with
//!   `controller revision <name> already exists`;
//! - the create refused because the namespace is terminating ends the sync
//!   with nothing to retry;
//! - [`Outcome::error`] (an invalid selector or maxUnavailable/maxSurge)
//!   is the sync's error when nothing else failed.
//!
//! A failed status write after a failed create or a collision is not
//! reported: the sync already ends with the first error.

use super::{Action, Options, Outcome, Plan, Snapshot, Write, after_already_exists, after_manage_error, key, sync};
use crate::common::history;
use crate::plan::Step;
use crate::protocol::{Answer, Core, Finish, Stepper, Summary, Told, Verdict};

/// One DaemonSet sync in progress.
pub struct SyncMachine<'a> {
    snapshot: &'a Snapshot<'a>,
    steps: Stepper<Write>,
    /// Failed-pod backoff keys the driver steps before driving the sync.
    backoff_next: Vec<String>,
    /// The error the sync returns when nothing else failed.
    error: Option<String>,
    state: State,
}

/// Where the sync is.
#[derive(Debug)]
enum State {
    /// Running the sync's plan.
    Syncing,
    /// A create or delete failed with this error: writing the status.
    AfterManageError(String),
    /// The current revision's name is taken: reading the revision there.
    ReadingTaken,
    /// The revision holding the name was judged: writing what that asked
    /// for; the sync ends with this error.
    AfterTaken(String),
    /// Over.
    Over(Finish),
}

impl<'a> SyncMachine<'a> {
    /// The sync of `snapshot`'s DaemonSet, not started.
    pub fn new(snapshot: &'a Snapshot<'a>, options: &Options) -> Self {
        let Outcome { plan, backoff_next, error } = sync(snapshot, options);
        Self { snapshot, steps: Stepper::new(plan), backoff_next, error, state: State::Syncing }
    }

    /// The failed-pod backoff keys to step
    /// ([`FailedPodsBackoff::next`](super::FailedPodsBackoff::next)) at the
    /// snapshot's `now`, before the sync is driven.
    pub fn backoff_next(&self) -> &[String] {
        &self.backoff_next
    }

    /// Hands out `plan` next, in `state`.
    fn then(&mut self, plan: Plan, state: State) -> State {
        self.steps = Stepper::new(plan);
        state
    }

    /// The next state after a step of the sync's plan was answered so.
    fn after_sync_step(&mut self, answers: &[Told]) -> State {
        let step = self.steps.current();
        let summary = Summary::of(step, answers, |_, error| Verdict::Failed(error.message.clone()));
        if summary.namespace_terminating {
            return State::Over(Finish::Done);
        }
        let manage = summary.pod_write_failed();
        let forget = self.steps.forget_unseen_creations(&summary, key(self.snapshot.daemon_set));
        if let Some(read) = summary.taken.map(history::get) {
            let mut plan = Plan::new();
            plan.push(Action::ControllerRevision(read));
            return self.then(plan, State::ReadingTaken);
        }
        match summary.first_error {
            None if summary.stale => State::Over(Finish::Now),
            Some(error) if manage => {
                let mut plan = Plan::new();
                if let Some(forget) = forget {
                    plan.push(forget);
                }
                plan.steps.extend(after_manage_error(self.snapshot).steps);
                self.then(plan, State::AfterManageError(error))
            }
            Some(error) => State::Over(Finish::Retry(error)),
            None => State::Syncing,
        }
    }

    /// The next state once the revision holding the current revision's
    /// name was read.
    fn after_read(&mut self, answer: Option<&Told>) -> State {
        match answer {
            Some(Ok(Answer::ControllerRevision(existing))) => {
                let name = existing.metadata.name.as_deref().unwrap_or("");
                let error = format!("controller revision {name} already exists");
                let plan = after_already_exists(self.snapshot.daemon_set, existing);
                self.then(plan, State::AfterTaken(error))
            }
            Some(Err(error)) => State::Over(Finish::Retry(error.message.clone())),
            _ => State::Over(Finish::Retry("the revision read answered no revision".into())),
        }
    }
}

impl Core for SyncMachine<'_> {
    type Own = Write;

    fn poll(&mut self) -> Option<&Step<Write>> {
        if matches!(self.state, State::Over(_)) || self.steps.rest().is_empty() {
            return None;
        }
        self.steps.next_step()
    }

    fn told(&mut self, answers: Vec<Told>) {
        self.state = match std::mem::replace(&mut self.state, State::Syncing) {
            State::Syncing => self.after_sync_step(&answers),
            State::ReadingTaken => self.after_read(answers.first()),
            state => state,
        };
    }

    fn finish(self) -> Finish {
        let finish = match self.state {
            State::Over(Finish::Retry(error)) | State::AfterManageError(error) | State::AfterTaken(error) => {
                return Finish::Retry(error);
            }
            State::Over(finish) => finish,
            State::ReadingTaken => Finish::Retry("the revision holding the name was not read".into()),
            State::Syncing => self.steps.requeue_after().map_or(Finish::Done, Finish::After),
        };
        self.error.map_or(finish, Finish::Retry)
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use k8s_openapi::api::apps::v1::ControllerRevision;

    use super::*;
    use crate::daemonset::testing::{World, new_daemon_set};
    use crate::protocol::{Answer, Refusal};
    use crate::testing::{drive, refused};

    const QUOTA: &str = "pods is forbidden: exceeded quota";

    /// A DaemonSet `foo` over three nodes, without pods or revisions.
    fn world() -> World {
        let mut w = World::new(new_daemon_set("foo"));
        w.add_nodes(0, 3, &[]);
        w
    }

    /// The revision create the sync hands out first.
    fn planned(w: &World) -> ControllerRevision {
        let plan = w.sync().plan;
        let created = plan.actions().find_map(|a| match a {
            Action::ControllerRevision(history::Write::Create { revision }) => Some((**revision).clone()),
            _ => None,
        });
        created.expect("the current revision is created")
    }

    /// The revision create answered by `create`, the rest accepted; a read
    /// answered with `existing`.
    fn answers(create: impl Fn() -> Told, existing: Option<ControllerRevision>) -> impl Fn(&Action) -> Told {
        move |action| match action {
            Action::ControllerRevision(history::Write::Create { .. }) => create(),
            Action::ControllerRevision(history::Write::Get { .. }) => match &existing {
                Some(existing) => Ok(Answer::ControllerRevision(Box::new(existing.clone()))),
                None => refused(Refusal::NotFound, "not found"),
            },
            _ => Ok(Answer::Done),
        }
    }

    /// Upstream's slow start stops at the failed batch: of three creations
    /// the first fails, so it and the two never issued are forgotten, the
    /// status is written, and the sync is retried with the create's error.
    #[test]
    fn a_failed_create_forgets_what_will_not_be_seen_and_writes_the_status() {
        let w = world();
        let name = planned(&w).metadata.name.unwrap();
        let (lines, finish) = drive(SyncMachine::new(&w.snapshot(), &w.options), |action| match action {
            Action::CreatePod { .. } => refused(Refusal::Forbidden, QUOTA),
            _ => Ok(Answer::Done),
        });
        assert_eq!(
            lines,
            [
                format!("revision create {name} 1"),
                "expect +3".into(),
                "create x1".into(),
                "forget +3".into(),
                "status 3/0/0/0/0/0/3 gen=1 collisions=0".into()
            ]
        );
        assert_eq!(finish, Finish::Retry(QUOTA.into()));
    }

    /// The current revision's name is taken by other data: the revision
    /// there is read, `collisionCount` is raised by one (a status write),
    /// and the sync is retried; nothing after the create is handed out.
    #[test]
    fn a_taken_revision_name_bumps_the_collision_count() {
        let w = world();
        let planned = planned(&w);
        let name = planned.metadata.name.clone().unwrap();
        let mut squatter = planned.clone();
        squatter.data.0["spec"]["template"]["spec"]["hostname"] = "other".into();
        let taken = || refused(Refusal::AlreadyExists, "already exists");
        let (lines, finish) = drive(SyncMachine::new(&w.snapshot(), &w.options), answers(taken, Some(squatter)));
        assert_eq!(
            lines,
            [
                format!("revision create {name} 1"),
                format!("revision get {name}"),
                "status 0/0/0/0/0/0/0 gen=0 collisions=1".into()
            ]
        );
        assert_eq!(finish, Finish::Retry(format!("controller revision {name} already exists")));
    }

    /// The name is taken by this very revision (the cache was behind):
    /// nothing is written, and the sync is retried.
    #[test]
    fn a_revision_name_taken_by_the_same_revision_is_retried() {
        let w = world();
        let planned = planned(&w);
        let name = planned.metadata.name.clone().unwrap();
        let taken = || refused(Refusal::AlreadyExists, "already exists");
        let (lines, finish) = drive(SyncMachine::new(&w.snapshot(), &w.options), answers(taken, Some(planned)));
        assert_eq!(lines, [format!("revision create {name} 1"), format!("revision get {name}")]);
        assert_eq!(finish, Finish::Retry(format!("controller revision {name} already exists")));
    }

    /// The read of the revision holding the name fails: retried with that
    /// error.
    #[test]
    fn a_failed_read_of_the_taken_name_is_retried() {
        let w = world();
        let taken = || refused(Refusal::AlreadyExists, "already exists");
        let (lines, finish) = drive(SyncMachine::new(&w.snapshot(), &w.options), answers(taken, None));
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert_eq!(finish, Finish::Retry("not found".into()));
    }

    /// A namespace being deleted refuses the revision: the sync ends there
    /// with nothing to retry.
    #[test]
    fn a_terminating_namespace_ends_the_sync_quietly() {
        let w = world();
        let terminating = || refused(Refusal::NamespaceTerminating, "namespace is being terminated");
        let (lines, finish) = drive(SyncMachine::new(&w.snapshot(), &w.options), answers(terminating, None));
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert_eq!(finish, Finish::Done);
    }

    /// A failed status write (no create failed) is retried with its error.
    #[test]
    fn a_failed_status_write_is_retried() {
        let w = world();
        let statuses = Cell::new(0);
        let (_, finish) = drive(SyncMachine::new(&w.snapshot(), &w.options), |action| match action {
            Action::Own(Write::UpdateStatus { .. }) => {
                statuses.set(statuses.get() + 1);
                refused(Refusal::Conflict, "the object has been modified")
            }
            _ => Ok(Answer::Done),
        });
        assert_eq!(statuses.get(), 1);
        assert_eq!(finish, Finish::Retry("the object has been modified".into()));
    }

    /// The sync's own error (an invalid maxUnavailable) is its finish once
    /// every write is done.
    #[test]
    fn the_syncs_own_error_is_retried_after_its_writes() {
        let mut w = world();
        crate::daemonset::testing::rolling_update(
            &mut w.ds,
            k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::String("many".into()),
            None,
        );
        for node in ["node-0", "node-1", "node-2"] {
            w.add_pods(node, &[("name", "simple-daemon"), ("type", "production")], Some(&w.ds.clone()), 1);
        }
        let (_, finish) = drive(SyncMachine::new(&w.snapshot(), &w.options), |_| Ok(Answer::Done));
        let Finish::Retry(error) = finish else { panic!("{finish:?}") };
        assert!(error.starts_with("couldn't get unavailable numbers"), "{error}");
    }
}
