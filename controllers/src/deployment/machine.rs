//! One Deployment sync as a [`Core`] of the sync protocol: [`sync`]'s plan,
//! one step at a time, and what a refused write means, decided here as
//! upstream's `getNewReplicaSet` and `syncDeployment` do:
//! - the new ReplicaSet's create refused because the namespace is being
//!   deleted: the sync ends, with nothing to retry;
//! - refused because the name is taken: the ReplicaSet under that name is
//!   read live ([`Action::ReadReplicaSet`]); if it is this very one
//!   ([`is_same_replica_set`]: the cache was stale), the sync is retried;
//!   if not, the hash collided: `collisionCount` + 1
//!   ([`after_create_failure`]), then retried;
//! - refused otherwise: Progressing False `ReplicaSetCreateError` and a
//!   Warning event ([`after_create_failure`]), then retried;
//! - an adoption whose ReplicaSet is gone ends the sync to run again at
//!   once; any other refusal ends it with the error, retried.

use k8s_openapi::api::apps::v1::ReplicaSet;

use super::{CreateFailure, Error, Options, Snapshot, after_create_failure, is_same_replica_set, sync};
use crate::plan::{Action, NoOwnWrites, Plan, Step};
use crate::protocol::{Answer, Core, Finish, Refusal, Stepper, Summary, Told};

/// One Deployment sync in progress.
pub struct SyncMachine<'a> {
    snapshot: &'a Snapshot<'a>,
    steps: Stepper<NoOwnWrites>,
    state: State,
}

/// Where the sync is.
#[derive(Debug)]
enum State {
    /// Running the sync's plan.
    Syncing,
    /// The new ReplicaSet's name was taken: reading what holds it.
    ReadingNameHolder(Box<ReplicaSet>),
    /// The create failed so: recording it on the Deployment.
    AfterCreateFailure(CreateFailure),
    /// Over.
    Over(Finish),
}

impl<'a> SyncMachine<'a> {
    /// The sync of `snapshot`'s Deployment, not started.
    ///
    /// # Errors
    /// The Deployment cannot be synced as it is (an invalid selector):
    /// nothing is written until it changes.
    pub fn new(snapshot: &'a Snapshot<'a>, options: &Options) -> Result<Self, Error> {
        Ok(Self { snapshot, steps: Stepper::new(sync(snapshot, options)?), state: State::Syncing })
    }

    /// Runs `plan` next, in `state`.
    fn then(&mut self, plan: Plan, state: State) -> State {
        self.steps = Stepper::new(plan);
        state
    }

    /// The state after the new ReplicaSet's create failed so.
    fn create_failed(&mut self, failure: CreateFailure) -> State {
        let plan = after_create_failure(self.snapshot.deployment, &failure, self.snapshot.now);
        self.then(plan, State::AfterCreateFailure(failure))
    }

    /// The state after a step of the sync's plan was answered so.
    fn syncing_told(&mut self, answers: &[Told]) -> State {
        let step = self.steps.current();
        for (action, answer) in step.actions.iter().zip(answers) {
            if let (Action::CreateReplicaSet { namespace, replica_set }, Err(error)) = (action, answer) {
                let name = replica_set.metadata.name.clone().unwrap_or_default();
                return match error.refusal {
                    Refusal::NamespaceTerminating => State::Over(Finish::Done),
                    Refusal::AlreadyExists => {
                        let mut read = Plan::new();
                        read.push(Action::ReadReplicaSet { namespace: namespace.clone(), name });
                        let planned = replica_set.clone();
                        self.then(read, State::ReadingNameHolder(planned))
                    }
                    _ => self.create_failed(CreateFailure::Error { replica_set: name, message: error.message.clone() }),
                };
            }
        }
        let summary = Summary::of(step, answers, |never, _| match *never {});
        match summary.first_error {
            Some(error) => State::Over(Finish::Retry(error)),
            None if summary.stale => State::Over(Finish::Now),
            None => State::Syncing,
        }
    }
}

impl Core for SyncMachine<'_> {
    type Own = NoOwnWrites;

    fn poll(&mut self) -> Option<&Step> {
        if matches!(self.state, State::Over(_)) { None } else { self.steps.next_step() }
    }

    fn told(&mut self, answers: Vec<Told>) {
        self.state = match std::mem::replace(&mut self.state, State::Syncing) {
            State::Syncing => self.syncing_told(&answers),
            State::ReadingNameHolder(planned) => match answers.into_iter().next() {
                Some(Ok(Answer::ReplicaSet(existing))) if is_same_replica_set(&existing, &planned) => {
                    let name = planned.metadata.name.unwrap_or_default();
                    State::Over(Finish::Retry(format!(
                        "replica set {name} already exists and is this deployment's; waiting for the cache"
                    )))
                }
                Some(Ok(Answer::ReplicaSet(_))) => self.create_failed(CreateFailure::Collision),
                Some(Err(error)) => State::Over(Finish::Retry(error.message)),
                Some(Ok(_)) | None => State::Over(Finish::Retry(format!(
                    "the read of replica set {} answered no ReplicaSet",
                    planned.metadata.name.unwrap_or_default()
                ))),
            },
            State::AfterCreateFailure(failure) => match answers.into_iter().find_map(Result::err) {
                Some(error) => State::Over(Finish::Retry(format!(
                    "{failure}; recording it in the Deployment failed too: {}",
                    error.message
                ))),
                None => State::AfterCreateFailure(failure),
            },
            over @ State::Over(_) => over,
        };
    }

    fn finish(self) -> Finish {
        match self.state {
            State::Over(finish) => finish,
            State::AfterCreateFailure(failure) => Finish::Retry(failure.to_string()),
            State::ReadingNameHolder(planned) => Finish::Retry(format!(
                "the read of replica set {} was never answered",
                planned.metadata.name.unwrap_or_default()
            )),
            State::Syncing => self.steps.requeue_after().map_or(Finish::Done, Finish::After),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::deployment::testing::{DeploymentBuilder, World, created};
    use crate::protocol::WriteError;

    /// Drives a sync of `w` to its end, each action answered by `answer`.
    fn drive(w: &World, answer: impl Fn(&Action) -> Told) -> (Vec<String>, Finish) {
        let snapshot = Snapshot { deployment: &w.d, replica_sets: &w.rss, pods: &w.pods, now: w.now };
        crate::testing::drive(SyncMachine::new(&snapshot, &Options::default()).expect("valid"), answer)
    }

    fn refused(refusal: Refusal, message: &str) -> Told {
        Err(WriteError { refusal, message: message.into() })
    }

    /// A new Deployment: its first ReplicaSet is created, and the name it
    /// would take is answered by `holder` when read.
    fn create_refused(refusal: Refusal, holder: Option<ReplicaSet>) -> (World, String, Vec<String>, Finish) {
        let w = World::new(DeploymentBuilder::new(1), []);
        let name = created(&w.plan()).metadata.name.unwrap_or_default();
        let (lines, finish) = drive(&w, |action| match action {
            Action::CreateReplicaSet { .. } => refused(refusal, "no"),
            Action::ReadReplicaSet { .. } => match &holder {
                Some(rs) => Ok(Answer::ReplicaSet(Box::new(rs.clone()))),
                None => refused(Refusal::Other, "etcdserver: request timed out"),
            },
            _ => Ok(Answer::Done),
        });
        (w, name, lines, finish)
    }

    /// The name is taken by this very ReplicaSet (the cache had not shown
    /// it yet): nothing is recorded, and the sync is retried.
    #[test]
    fn a_name_held_by_the_planned_replica_set_is_retried_until_the_cache_shows_it() {
        let w = World::new(DeploymentBuilder::new(1), []);
        let planned = created(&w.plan());
        let (_, name, lines, finish) = create_refused(Refusal::AlreadyExists, Some(planned));
        assert_eq!(lines[lines.len() - 2..], [format!("create {name} 1"), format!("read {name}")]);
        assert_eq!(
            finish,
            Finish::Retry(format!("replica set {name} already exists and is this deployment's; waiting for the cache"))
        );
    }

    /// The name is taken by another ReplicaSet: the hash collided, so the
    /// collision count goes up by one and the sync is retried.
    #[test]
    fn a_name_held_by_another_replica_set_bumps_the_collision_count() {
        let w = World::new(DeploymentBuilder::new(1), []);
        let mut other = created(&w.plan());
        other.metadata.owner_references = None;
        let (_, name, lines, finish) = create_refused(Refusal::AlreadyExists, Some(other));
        let after_read = &lines[lines.iter().position(|l| *l == format!("read {name}")).expect("read") + 1..];
        assert_eq!(after_read.len(), 1, "{lines:?}");
        assert!(after_read[0].starts_with("status "), "{lines:?}");
        assert_eq!(finish, Finish::Retry(CreateFailure::Collision.to_string()));
    }

    /// The collision's status write carries the bumped count.
    #[test]
    fn the_collision_is_recorded_as_collision_count_one() {
        let w = World::new(DeploymentBuilder::new(1), []);
        let mut other = created(&w.plan());
        other.metadata.owner_references = None;
        let snapshot = Snapshot { deployment: &w.d, replica_sets: &w.rss, pods: &w.pods, now: w.now };
        let mut machine = SyncMachine::new(&snapshot, &Options::default()).expect("valid");
        let mut counts = Vec::new();
        while let Some(step) = machine.poll() {
            let answers = step
                .actions
                .iter()
                .map(|action| match action {
                    Action::CreateReplicaSet { .. } => refused(Refusal::AlreadyExists, "taken"),
                    Action::ReadReplicaSet { .. } => Ok(Answer::ReplicaSet(Box::new(other.clone()))),
                    Action::UpdateDeploymentStatus { deployment } => {
                        counts.push(deployment.status.as_ref().and_then(|s| s.collision_count));
                        Ok(Answer::Done)
                    }
                    _ => Ok(Answer::Done),
                })
                .collect();
            machine.told(answers);
        }
        assert_eq!(counts.last(), Some(&Some(1)), "{counts:?}");
    }

    /// A namespace being deleted refuses the create: the sync ends there
    /// with nothing to retry.
    #[test]
    fn a_create_refused_by_a_terminating_namespace_ends_the_sync() {
        let (_, name, lines, finish) = create_refused(Refusal::NamespaceTerminating, None);
        assert_eq!(lines.last(), Some(&format!("create {name} 1")));
        assert_eq!(finish, Finish::Done);
    }

    /// Any other refusal: Progressing False `ReplicaSetCreateError` and a
    /// Warning event, then a retry.
    #[test]
    fn another_refusal_is_recorded_on_the_deployment_and_retried() {
        let (_, name, lines, finish) = create_refused(Refusal::Forbidden, None);
        let after_create = &lines[lines.iter().position(|l| *l == format!("create {name} 1")).expect("create") + 1..];
        assert_eq!(after_create.len(), 2, "{lines:?}");
        assert!(after_create[0].ends_with("Progressing=ReplicaSetCreateError"), "{lines:?}");
        assert_eq!(
            after_create[1],
            format!("event ReplicaSetCreateError: Failed to create new replica set \"{name}\": no")
        );
        let failure = CreateFailure::Error { replica_set: name, message: "no".into() };
        assert_eq!(finish, Finish::Retry(failure.to_string()));
    }

    /// The read of the name's holder is refused: retried with its error.
    #[test]
    fn a_refused_read_of_the_holder_is_retried() {
        let (_, _, _, finish) = create_refused(Refusal::AlreadyExists, None);
        assert_eq!(finish, Finish::Retry("etcdserver: request timed out".into()));
    }

    /// An adoption whose ReplicaSet is gone: sync again at once.
    #[test]
    fn an_adoption_whose_replica_set_is_gone_syncs_again_at_once() {
        use crate::deployment::testing::RsB;
        let w = World::new(DeploymentBuilder::new(1), [RsB::new("orphan", 1).orphan()]);
        let (lines, finish) = drive(&w, |action| match action {
            Action::PatchReplicaSetOwnerRefs { .. } => refused(Refusal::NotFound, "gone"),
            _ => Ok(Answer::Done),
        });
        assert_eq!(lines, ["recheck", "adopt orphan"]);
        assert_eq!(finish, Finish::Now);
    }
}
