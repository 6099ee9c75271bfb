//! One StatefulSet sync as a [`Core`] of the sync protocol: [`sync`]'s
//! plan, one step at a time. What a refused write means is decided here,
//! as upstream's `sync` and `UpdateStatefulSet` do with the errors they
//! get back:
//! - a failed pod or claim write ends the plan there; upstream still
//!   writes the status and truncates the history ([`after_failure`], on the
//!   same snapshot), and the sync ends with that write's error;
//! - a failed claim (adoption, release) or revision write ends the sync
//!   with its error, as upstream returns before the status then; an
//!   adoption whose pod is gone ends it to sync again at once;
//! - the update revision's create refused because its name is taken runs
//!   upstream `CreateControllerRevision`'s collision loop: the revision
//!   holding the name is read live and [`history::after_already_exists`]
//!   decides. The same data is the revision: the plan goes on. Other data
//!   is a collision: the revision is created under the next count's name,
//!   and once it is, the plan ends there, [`after_failure`] records the
//!   count, and the sync runs again at once;
//! - a create refused because the namespace is terminating ends the sync
//!   with nothing to retry.
//!
//! A failed write of [`after_failure`] ends it there, unreported: the sync
//! already ends with the first error.

use k8s_openapi::api::apps::v1::ControllerRevision;

use super::call::Call;
use super::expand::Expansion;
use super::{Action, Options, Plan, Snapshot, Write, after_failure, name, sync};
use crate::common::history::{self, AfterAlreadyExists};
use crate::plan::Step;
use crate::protocol::{Answer, Core, Finish, Refusal, Stepper, Summary, Told, Verdict};

/// One StatefulSet sync in progress.
pub struct SyncMachine<'a> {
    snapshot: &'a Snapshot<'a>,
    /// The sync's plan, then [`after_failure`]'s.
    steps: Stepper<Write>,
    /// The collision loop's read or create, handed out between two steps
    /// of the plan.
    detour: Stepper<Write>,
    /// The plan step being performed, as single calls.
    calls: Expansion,
    state: State,
}

/// Where the sync is.
#[derive(Debug)]
enum State {
    /// Running the sync's plan.
    Syncing,
    /// The collision loop has handed out the read of the revision holding
    /// the name of `Renaming::planned`.
    ReadingTaken(Renaming),
    /// The collision loop has handed out the create of `Renaming::planned`
    /// under a new name.
    Creating(Renaming),
    /// Writing the status and truncating the history; the sync ends so.
    AfterFailure(Finish),
    /// Over.
    Over(Finish),
}

/// The collision loop of one revision create.
#[derive(Debug)]
struct Renaming {
    /// The revision last sent.
    planned: ControllerRevision,
    /// The count its name was hashed with.
    count: i32,
    /// The count the plan's create was hashed with.
    first: i32,
}

impl<'a> SyncMachine<'a> {
    /// The sync of `snapshot`'s StatefulSet, not started.
    pub fn new(snapshot: &'a Snapshot<'a>, options: &Options) -> Self {
        Self {
            snapshot,
            steps: Stepper::new(sync(snapshot, options)),
            detour: Stepper::new(Plan::new()),
            calls: Expansion::idle(),
            state: State::Syncing,
        }
    }

    /// Hands out `action` alone before the plan's next step, in `state`.
    fn detour(&mut self, action: history::Write, state: State) -> State {
        let mut plan = Plan::new();
        plan.push(Action::ControllerRevision(action));
        self.detour = Stepper::new(plan);
        state
    }

    /// Ends the plan here: [`after_failure`] (with the collision count a
    /// rename ended with), then the sync ends with `finish`.
    fn after_failure(&mut self, collision_count: Option<i32>, finish: Finish) -> State {
        self.steps = Stepper::new(after_failure(self.snapshot, collision_count));
        State::AfterFailure(finish)
    }

    /// Whether a write of the step handed out last failed.
    fn failed(&self, answers: &[Told]) -> bool {
        let summary = Summary::of(self.steps.current(), answers, |_, error| Verdict::Failed(error.message.clone()));
        summary.first_error.is_some()
    }

    /// The next state after a step of the sync's plan was answered so.
    fn after_sync_step(&mut self, answers: &[Told]) -> State {
        let summary = Summary::of(self.steps.current(), answers, |_, error| Verdict::Failed(error.message.clone()));
        if summary.namespace_terminating {
            return State::Over(Finish::Done);
        }
        let manage =
            summary.failed.iter().any(|a| matches!(a, Action::Own(write) if !matches!(write, Write::UpdateStatus(_))));
        if let Some(planned) = summary.taken.cloned() {
            let first = self.snapshot.set.status.as_ref().and_then(|s| s.collision_count).unwrap_or(0);
            let read = history::get(&planned);
            return self.detour(read, State::ReadingTaken(Renaming { planned, count: first, first }));
        }
        match summary.first_error {
            None if summary.stale => State::Over(Finish::Now),
            Some(error) if manage => self.after_failure(None, Finish::Retry(error)),
            Some(error) => State::Over(Finish::Retry(error)),
            None => State::Syncing,
        }
    }

    /// The next state once the revision holding the planned name was read.
    fn after_read(&mut self, renaming: Renaming, answer: Option<&Told>) -> State {
        let existing = match answer {
            Some(Ok(Answer::ControllerRevision(existing))) => existing,
            Some(Err(error)) => return State::Over(Finish::Retry(error.message.clone())),
            _ => return State::Over(Finish::Retry("the revision read answered no revision".into())),
        };
        let Renaming { planned, count, first } = renaming;
        match history::after_already_exists(name(self.snapshot.set), &planned, existing, count) {
            AfterAlreadyExists::Existing if count == first => State::Syncing,
            AfterAlreadyExists::Existing => self.after_failure(Some(count), Finish::Now),
            AfterAlreadyExists::Retry { revision, collision_count } => {
                let create = history::Write::Create { revision: revision.clone() };
                self.detour(create, State::Creating(Renaming { planned: *revision, count: collision_count, first }))
            }
        }
    }

    /// The next state once the renamed create was answered.
    fn after_create(&mut self, renaming: Renaming, answer: Option<&Told>) -> State {
        match answer.map(|told| told.as_ref().map_err(|error| error.refusal)) {
            Some(Ok(_)) => self.after_failure(Some(renaming.count), Finish::Now),
            Some(Err(Refusal::AlreadyExists)) => {
                let read = history::get(&renaming.planned);
                self.detour(read, State::ReadingTaken(renaming))
            }
            Some(Err(Refusal::NamespaceTerminating)) => State::Over(Finish::Done),
            _ => {
                let error = answer.and_then(|told| told.as_ref().err()).map(|error| error.message.clone());
                State::Over(Finish::Retry(error.unwrap_or_default()))
            }
        }
    }
}

impl SyncMachine<'_> {
    /// The plan's next step: the sync's, or the collision loop's.
    fn next_plan_step(&mut self) -> Option<&Step<Write>> {
        match self.state {
            State::Over(_) => None,
            State::ReadingTaken(_) | State::Creating(_) => self.detour.next_step(),
            _ if self.steps.rest().is_empty() => None,
            _ => self.steps.next_step(),
        }
    }

    /// The answers to the plan step handed out last, in its order.
    fn plan_step_told(&mut self, answers: &[Told]) {
        self.state = match std::mem::replace(&mut self.state, State::Syncing) {
            State::Syncing => self.after_sync_step(answers),
            State::ReadingTaken(renaming) => self.after_read(renaming, answers.first()),
            State::Creating(renaming) => self.after_create(renaming, answers.first()),
            State::AfterFailure(finish) if self.failed(answers) => State::Over(finish),
            state => state,
        };
    }
}

impl Core for SyncMachine<'_> {
    type Own = Call;

    fn poll(&mut self) -> Option<&Step<Call>> {
        while self.calls.step().is_none() {
            let mut calls = Expansion::new(self.next_plan_step()?);
            match calls.step() {
                Some(_) => self.calls = calls,
                None => {
                    let answers = calls.told(Vec::new()).unwrap_or_default();
                    self.plan_step_told(&answers);
                }
            }
        }
        self.calls.step()
    }

    fn told(&mut self, answers: Vec<Told>) {
        if let Some(answers) = self.calls.told(answers) {
            self.plan_step_told(&answers);
        }
    }

    fn finish(self) -> Finish {
        match self.state {
            State::Over(finish) | State::AfterFailure(finish) => finish,
            State::ReadingTaken(_) | State::Creating(_) => {
                Finish::Retry("the revision's collision loop was not finished".into())
            }
            State::Syncing => self.steps.requeue_after().map_or(Finish::Done, Finish::After),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;
    use std::sync::Arc;

    use kcm_objects::Pod;

    use super::*;
    use crate::statefulset::testing::{SetBuilder, World};
    use crate::testing::{drive, refused};

    /// An action as the machine hands it out.
    type Handed = crate::plan::Action<Call>;

    const QUOTA: &str = "pods \"web-0\" is forbidden: exceeded quota";

    /// Drives a sync of `w` with `answer`.
    fn run(w: &World, answer: impl Fn(&Handed) -> Told) -> (Vec<String>, Finish) {
        let pods: Vec<Arc<Pod>> = w.pods.values().map(|p| Arc::new(crate::testing::slim(p))).collect();
        let snapshot = Snapshot { set: &w.set, pods: &pods, claims: &w.claims, revisions: &w.revisions, now: w.now };
        drive(SyncMachine::new(&snapshot, &w.options), answer)
    }

    /// The update revision the sync creates first.
    fn planned(w: &World) -> ControllerRevision {
        let created = w.plan().actions().find_map(|a| match a {
            Action::ControllerRevision(history::Write::Create { revision }) => Some((**revision).clone()),
            _ => None,
        });
        created.expect("the update revision is created")
    }

    fn revision_name(revision: &ControllerRevision) -> String {
        revision.metadata.name.clone().unwrap_or_default()
    }

    /// The collision count of the status write `action` is, if it is one.
    fn collisions(action: &Handed) -> Option<i32> {
        match action {
            Handed::Own(Call::UpdateStatus(update)) => update.status.collision_count,
            _ => None,
        }
    }

    /// Upstream writes the status even when a pod write failed: the plan
    /// ends at the failed create (its `FailedCreate` event recorded), the
    /// status of the pods as they are is written, and the sync is retried
    /// with the create's error.
    #[test]
    fn a_failed_pod_create_still_writes_the_status() {
        let w = World::new(SetBuilder::new(3));
        let name = revision_name(&planned(&w));
        let (lines, finish) = run(&w, |action| match action {
            Handed::Own(Call::CreatePod { .. }) => refused(Refusal::Forbidden, QUOTA),
            _ => Ok(Answer::Done),
        });
        let status = format!("status 0/0/0/0/0 {name}->{name}");
        let event = format!("event FailedCreate: create Pod foo-0 in StatefulSet foo failed error: {QUOTA}");
        assert_eq!(lines, [format!("revision create {name} 1"), "create foo-0".into(), event, status]);
        assert_eq!(finish, Finish::Retry(QUOTA.into()));
    }

    /// Upstream `CreateControllerRevision` against a name taken by other
    /// data: the revision there is read, the create is sent again under the
    /// next count's name, and once it is created the plan ends there: the
    /// status records the count, and the sync runs again at once.
    #[test]
    fn a_taken_name_renames_the_create_and_records_the_count() {
        let w = World::new(SetBuilder::new(3));
        let planned = planned(&w);
        let mut squatter = planned.clone();
        squatter.data.0["other"] = true.into();
        let name = revision_name(&planned);
        let renamed = match history::after_already_exists("foo", &planned, &squatter, 0) {
            AfterAlreadyExists::Retry { revision, .. } => revision_name(&revision),
            AfterAlreadyExists::Existing => panic!("other data is a collision"),
        };
        let recorded = Cell::new(None);
        let (lines, finish) = run(&w, |action| match action {
            Handed::ControllerRevision(history::Write::Create { revision }) if **revision == planned => {
                refused(Refusal::AlreadyExists, "already exists")
            }
            Handed::ControllerRevision(history::Write::Get { .. }) => {
                Ok(Answer::ControllerRevision(Box::new(squatter.clone())))
            }
            status => {
                recorded.set(collisions(status).or(recorded.get()));
                Ok(Answer::Done)
            }
        });
        assert_eq!(
            lines,
            [
                format!("revision create {name} 1"),
                format!("revision get {name}"),
                format!("revision create {renamed} 1"),
                format!("status 0/0/0/0/0 {name}->{name}")
            ]
        );
        assert_eq!(recorded.get(), Some(1));
        assert_eq!(finish, Finish::Now);
    }

    /// The name is taken by the same data (a create that succeeded before,
    /// or a cache behind): that is the revision, and the plan goes on.
    #[test]
    fn a_name_taken_by_the_same_revision_goes_on_with_the_plan() {
        let w = World::new(SetBuilder::new(3));
        let planned = planned(&w);
        let (lines, finish) = run(&w, |action| match action {
            Handed::ControllerRevision(history::Write::Create { .. }) => {
                refused(Refusal::AlreadyExists, "already exists")
            }
            Handed::ControllerRevision(history::Write::Get { .. }) => {
                Ok(Answer::ControllerRevision(Box::new(planned.clone())))
            }
            _ => Ok(Answer::Done),
        });
        let name = revision_name(&planned);
        assert_eq!(
            lines,
            [
                format!("revision create {name} 1"),
                format!("revision get {name}"),
                "create foo-0".into(),
                "event SuccessfulCreate: create Pod foo-0 in StatefulSet foo successful".into(),
                format!("status 0/0/0/0/0 {name}->{name}")
            ]
        );
        assert_eq!(finish, Finish::Done);
    }

    /// A failed write of `after_failure` ends the sync there: the status
    /// write is refused, so the history cleanup after it is not handed out.
    #[test]
    fn a_failed_status_write_after_a_failure_ends_the_sync_there() {
        let old = crate::statefulset::new_revision(&SetBuilder::new(3).image("old").build(), 1, 0);
        let mut w = World::new(SetBuilder::new(3).history(0));
        w.revisions.push(Arc::new(crate::statefulset::testing::stored(old.clone())));
        let delete_old = format!("revision delete {}", revision_name(&old));
        let all_accepted = run(&w, |action| match action {
            Handed::Own(Call::CreatePod { .. }) => refused(Refusal::Forbidden, QUOTA),
            _ => Ok(Answer::Done),
        });
        assert!(all_accepted.0.contains(&delete_old), "{all_accepted:?}");
        let (lines, finish) = run(&w, |action| match action {
            Handed::Own(Call::CreatePod { .. }) => refused(Refusal::Forbidden, QUOTA),
            Handed::Own(Call::UpdateStatus(_)) => refused(Refusal::Conflict, "the object has been modified"),
            _ => Ok(Answer::Done),
        });
        assert!(lines.last().is_some_and(|l| l.starts_with("status")), "{lines:?}");
        assert!(!lines.contains(&delete_old), "{lines:?}");
        assert_eq!(finish, Finish::Retry(QUOTA.into()));
    }
}
