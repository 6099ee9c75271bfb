//! What a StatefulSet [`Write`] comes down to: single API calls
//! ([`Call`]), sent one after the other ([`Lane`]), each answer judged and
//! its event recorded as upstream's `StatefulPodControl` does
//! (`CreateStatefulPod`, `UpdateStatefulPod`, `DeleteStatefulPod`,
//! `UpdatePodClaimForRetentionPolicy`, `recordPodEvent`,
//! `recordClaimEvent`): a pod's claims first, an existing claim left as it
//! is; a pod's identity and storage given to its live copy, updated only
//! if that changed it, and again on a fresh read after a conflict.

use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};

use super::identity::Repair;
use super::write::{StatusUpdate, Write, claim_event, pod_event};
use crate::plan::{Event, ObjectRef};
use crate::protocol::{Answer, Refusal, Told, WriteError};

/// How many times a pod's repair is sent before a conflict fails it
/// (upstream `retry.RetryOnConflict` with `retry.DefaultConflictRetry`:
/// five steps).
pub const REPAIR_ATTEMPTS: usize = 5;

/// One API call of a StatefulSet sync, which the driver performs as it is.
#[derive(Clone, Debug, PartialEq)]
pub enum Call {
    /// Create a claim.
    CreateClaim {
        /// The claim to send.
        claim: Box<PersistentVolumeClaim>,
    },
    /// Create a pod, named in full.
    CreatePod {
        /// The pod to send.
        pod: Box<Pod>,
    },
    /// Read a pod live from the API server; it answers with the whole pod
    /// ([`Answer::Pod`]).
    ReadPod {
        /// Namespace of the pod.
        namespace: String,
        /// Name of the pod.
        name: String,
    },
    /// Replace a pod at the resourceVersion it carries (a live read's).
    UpdatePod {
        /// The pod to send.
        pod: Box<Pod>,
    },
    /// Replace a claim at the resourceVersion it carries (the cache's).
    UpdateClaim {
        /// The claim to send.
        claim: Box<PersistentVolumeClaim>,
    },
    /// Delete a pod with its cached uid as precondition.
    DeletePod {
        /// Namespace of the pod.
        namespace: String,
        /// Name of the pod.
        name: String,
        /// Uid it had in the cache.
        uid: String,
    },
    /// Write the set's status, as [`StatusUpdate`] says (the driver
    /// retries a conflict).
    UpdateStatus(StatusUpdate),
}

/// One [`Write`] in progress: the calls it still has to send, and how it
/// ended.
#[derive(Debug)]
pub(super) struct Lane {
    /// The set events are recorded on.
    set: ObjectRef,
    /// The pod the write is for, named in its events.
    pod: String,
    /// The calls still to send, the next one last.
    calls: Vec<Call>,
    /// A pod repair's identity and storage, with the sends it has left.
    repair: Option<(Repair, usize)>,
    /// How the write ended, once it has.
    ended: Option<Told>,
}

impl Lane {
    /// The calls of `write`, none sent yet.
    pub(super) fn new(write: Write) -> Self {
        let claims = |claims: Vec<PersistentVolumeClaim>| claims.into_iter().rev().map(Box::new);
        let (set, pod, calls, repair) = match write {
            Write::CreatePod { set, claims: c, pod } => {
                let name = pod.metadata.name.clone().unwrap_or_default();
                let calls =
                    std::iter::once(Call::CreatePod { pod }).chain(claims(c).map(|claim| Call::CreateClaim { claim }));
                (set, name, calls.collect(), None)
            }
            Write::CreateClaims { set, pod_name, claims: c } => {
                (set, pod_name, claims(c).map(|claim| Call::CreateClaim { claim }).collect(), None)
            }
            Write::RepairPod { set, repair, claims: c } => {
                let read = Call::ReadPod { namespace: repair.namespace.clone(), name: repair.name.clone() };
                let calls = std::iter::once(read).chain(claims(c).map(|claim| Call::CreateClaim { claim }));
                (set, repair.name.clone(), calls.collect(), Some((repair, REPAIR_ATTEMPTS)))
            }
            Write::UpdateClaim { set, pod_name, claim } => (set, pod_name, vec![Call::UpdateClaim { claim }], None),
            Write::DeletePod { set, namespace, name, uid } => {
                (set, name.clone(), vec![Call::DeletePod { namespace, name, uid }], None)
            }
            Write::UpdateStatus(update) => (update.set.clone(), String::new(), vec![Call::UpdateStatus(update)], None),
            Write::Fail { set, error } => {
                let ended = Some(Err(WriteError { refusal: Refusal::Other, message: error }));
                return Self { set, pod: String::new(), calls: Vec::new(), repair: None, ended };
            }
        };
        let ended = calls.is_empty().then_some(Ok(Answer::Done));
        Self { set, pod, calls, repair, ended }
    }

    /// The next call to send; `None` once the write has ended.
    pub(super) fn next(&self) -> Option<&Call> {
        self.calls.last()
    }

    /// How the write ended; `None` while it has calls to send.
    pub(super) fn ended(&self) -> Option<&Told> {
        self.ended.as_ref()
    }

    /// Tells the lane what its next call answered; the events that records.
    pub(super) fn told(&mut self, answer: Told) -> Vec<Event> {
        let Some(call) = self.calls.pop() else { return Vec::new() };
        let (set, pod) = (&self.set, self.pod.as_str());
        let mut events = Vec::new();
        let ended = match (call, answer) {
            (Call::CreateClaim { claim }, Ok(_)) => {
                events.push(claim_event(set, "create", claim_name(&claim), pod, None));
                None
            }
            (Call::CreateClaim { .. }, Err(error)) if error.refusal == Refusal::AlreadyExists => None,
            (Call::CreateClaim { claim }, Err(error)) => {
                let name = claim_name(&claim);
                events.push(claim_event(set, "create", name, pod, Some(&error.message)));
                let message = format!("failed to create PVC {name}: {}", error.message);
                events.push(pod_event(set, "create", pod, Some(&message)));
                Some(WriteError { message, ..error })
            }
            (Call::CreatePod { .. }, Ok(_)) => {
                events.push(pod_event(set, "create", pod, None));
                None
            }
            (Call::CreatePod { .. }, Err(error)) => {
                if error.refusal != Refusal::AlreadyExists {
                    events.push(pod_event(set, "create", pod, Some(&error.message)));
                }
                Some(error)
            }
            (Call::ReadPod { .. }, Ok(Answer::Pod(mut live))) => {
                if self.repair.as_ref().is_some_and(|(repair, _)| repair.apply(&mut live)) {
                    self.calls.push(Call::UpdatePod { pod: live });
                }
                None
            }
            (Call::ReadPod { .. }, Ok(_)) => {
                Some(WriteError { refusal: Refusal::Other, message: format!("reading pod {pod} answered no pod") })
            }
            (Call::ReadPod { .. } | Call::UpdateStatus(_), Err(error)) => Some(error),
            (Call::UpdatePod { .. }, Ok(_)) => {
                events.push(pod_event(set, "update", pod, None));
                None
            }
            (Call::UpdatePod { .. }, Err(error)) if error.refusal == Refusal::Conflict && retry(&mut self.repair) => {
                let read = self
                    .repair
                    .as_ref()
                    .map(|(r, _)| Call::ReadPod { namespace: r.namespace.clone(), name: r.name.clone() });
                self.calls.extend(read);
                None
            }
            (Call::UpdatePod { .. }, Err(error)) => {
                events.push(pod_event(set, "update", pod, Some(&error.message)));
                Some(error)
            }
            (Call::UpdateClaim { .. } | Call::UpdateStatus(_), Ok(_)) => None,
            (Call::UpdateClaim { claim }, Err(error)) => {
                let name = claim_name(&claim);
                let message = format!("could not update claim {name} for delete policy ownerRefs: {}", error.message);
                events.push(pod_event(set, "update", pod, Some(&message)));
                Some(WriteError { message, ..error })
            }
            (Call::DeletePod { .. }, Ok(_)) => {
                events.push(pod_event(set, "delete", pod, None));
                None
            }
            (Call::DeletePod { .. }, Err(error)) if error.refusal == Refusal::NotFound => None,
            (Call::DeletePod { .. }, Err(error)) => {
                events.push(pod_event(set, "delete", pod, Some(&error.message)));
                Some(error)
            }
        };
        match ended {
            Some(error) => {
                self.calls.clear();
                self.ended = Some(Err(error));
            }
            None if self.calls.is_empty() => self.ended = Some(Ok(Answer::Done)),
            None => {}
        }
        events
    }
}

/// Whether a repair has a send left after a conflict (and takes it).
fn retry(repair: &mut Option<(Repair, usize)>) -> bool {
    match repair {
        Some((_, left)) if *left > 1 => {
            *left -= 1;
            true
        }
        _ => false,
    }
}

fn claim_name(claim: &PersistentVolumeClaim) -> &str {
    claim.metadata.name.as_deref().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::apps::v1::StatefulSet;

    use super::*;
    use crate::statefulset::control::new_stateful_set_pod;
    use crate::statefulset::testing::{SetBuilder, member};
    use crate::statefulset::{claims_for, object_ref};
    use crate::testing::{describe, refused};

    /// Sends `write`'s calls, each answered by `answer`: the calls sent,
    /// the events recorded, and how the write ended.
    fn run(write: Write, mut answer: impl FnMut(&Call) -> Told) -> (Vec<String>, Vec<String>, Told) {
        let mut lane = Lane::new(write);
        let (mut calls, mut events) = (Vec::new(), Vec::new());
        while let Some(call) = lane.next().cloned() {
            calls.push(describe(&crate::plan::Action::Own(call.clone())));
            let recorded = lane.told(answer(&call));
            events.extend(recorded.into_iter().map(|e| format!("{}: {}", e.reason, e.message)));
        }
        (calls, events, lane.ended().cloned().expect("the write ended"))
    }

    fn set() -> StatefulSet {
        SetBuilder::new(3).claim("data").build()
    }

    /// The create of member 0 with its claim.
    fn create(set: &StatefulSet) -> Write {
        let pod = Box::new(new_stateful_set_pod(set, 0));
        Write::CreatePod { set: object_ref(set), claims: claims_for(set, 0), pod }
    }

    /// The repair of member 1, its claims all there.
    fn repair(set: &StatefulSet) -> Write {
        Write::RepairPod { set: object_ref(set), repair: Repair::new(set, 1), claims: Vec::new() }
    }

    /// Upstream `TestStatefulPodControlCreatesPods`: the claim, then the
    /// pod, each with its success event.
    #[test]
    fn a_pod_is_created_after_its_claims() {
        let set = set();
        let (calls, events, ended) = run(create(&set), |_| Ok(Answer::Done));
        assert_eq!(calls, ["claim create data-foo-0", "create foo-0"]);
        assert_eq!(
            events,
            [
                "SuccessfulCreate: create Claim data-foo-0 Pod foo-0 in StatefulSet foo success",
                "SuccessfulCreate: create Pod foo-0 in StatefulSet foo successful"
            ]
        );
        assert_eq!(ended, Ok(Answer::Done));
    }

    /// Upstream `TestStatefulPodControlCreatePodPvcCreateFailure`: a
    /// refused claim fails the pod's create before the pod is sent, with
    /// the claim's event and the pod's; an existing claim is left.
    #[test]
    fn a_refused_claim_fails_the_create_and_an_existing_one_is_left() {
        let set = set();
        let (calls, events, ended) = run(create(&set), |call| match call {
            Call::CreateClaim { .. } => refused(Refusal::Forbidden, "exceeded quota"),
            _ => Ok(Answer::Done),
        });
        assert_eq!(calls, ["claim create data-foo-0"]);
        assert_eq!(
            events,
            [
                "FailedCreate: create Claim data-foo-0 for Pod foo-0 in StatefulSet foo failed error: exceeded quota",
                "FailedCreate: create Pod foo-0 in StatefulSet foo failed error: failed to create PVC data-foo-0: \
                 exceeded quota"
            ]
        );
        let message = "failed to create PVC data-foo-0: exceeded quota".to_owned();
        assert_eq!(ended, Err(WriteError { refusal: Refusal::Forbidden, message }));
        let (calls, events, ended) = run(create(&set), |call| match call {
            Call::CreateClaim { .. } => refused(Refusal::AlreadyExists, "already exists"),
            _ => Ok(Answer::Done),
        });
        assert_eq!(calls, ["claim create data-foo-0", "create foo-0"]);
        assert_eq!(events, ["SuccessfulCreate: create Pod foo-0 in StatefulSet foo successful"]);
        assert_eq!(ended, Ok(Answer::Done));
    }

    /// Upstream `UpdateStatefulPod`: the live pod is given its identity and
    /// updated; a conflict starts again from a fresh read.
    #[test]
    fn a_repair_is_sent_on_the_live_pod_and_again_after_a_conflict() {
        let set = set();
        let write = repair(&set);
        let live = member(&set, 1).no_labels().api();
        let conflicts = std::cell::Cell::new(0);
        let (calls, events, ended) = run(write, |call| match call {
            Call::ReadPod { .. } => Ok(Answer::Pod(Box::new(live.clone()))),
            Call::UpdatePod { pod } => {
                let labels = pod.metadata.labels.clone().unwrap_or_default();
                assert_eq!(labels.get("statefulset.kubernetes.io/pod-name").map(String::as_str), Some("foo-1"));
                conflicts.set(conflicts.get() + 1);
                if conflicts.get() == 1 { refused(Refusal::Conflict, "modified") } else { Ok(Answer::Done) }
            }
            _ => Ok(Answer::Done),
        });
        assert_eq!(calls, ["read foo-1", "update foo-1", "read foo-1", "update foo-1"]);
        assert_eq!(events, ["SuccessfulUpdate: update Pod foo-1 in StatefulSet foo successful"]);
        assert_eq!(ended, Ok(Answer::Done));
    }

    /// A live pod that already carries its identity is not updated, and
    /// a repair that conflicts every time fails after upstream's five
    /// sends, with the last conflict in its event.
    #[test]
    fn a_repair_of_a_sound_pod_sends_nothing_and_conflicts_end_after_five_sends() {
        let set = set();
        let write = repair(&set);
        let sound = member(&set, 1).api();
        let (calls, events, ended) = run(write.clone(), |_| Ok(Answer::Pod(Box::new(sound.clone()))));
        assert_eq!((calls, events, ended), (vec!["read foo-1".to_owned()], Vec::new(), Ok(Answer::Done)));
        let broken = member(&set, 1).no_labels().api();
        let (calls, events, ended) = run(write, |call| match call {
            Call::ReadPod { .. } => Ok(Answer::Pod(Box::new(broken.clone()))),
            _ => refused(Refusal::Conflict, "modified"),
        });
        assert_eq!(calls.iter().filter(|c| c.starts_with("update")).count(), REPAIR_ATTEMPTS);
        assert_eq!(events, ["FailedUpdate: update Pod foo-1 in StatefulSet foo failed error: modified"]);
        assert_eq!(ended, refused(Refusal::Conflict, "modified"));
    }

    /// Upstream `DeleteStatefulPod`: a pod already gone is no failure and
    /// records nothing; another refusal records `FailedDelete`.
    #[test]
    fn a_delete_of_a_gone_pod_is_done_without_an_event() {
        let set = set();
        let write = Write::DeletePod {
            set: object_ref(&set),
            namespace: "default".into(),
            name: "foo-2".into(),
            uid: "u".into(),
        };
        let gone = run(write.clone(), |_| refused(Refusal::NotFound, "not found"));
        assert_eq!(gone, (vec!["delete foo-2".to_owned()], Vec::new(), Ok(Answer::Done)));
        let (_, events, ended) = run(write, |_| refused(Refusal::Forbidden, "no"));
        assert_eq!(events, ["FailedDelete: delete Pod foo-2 in StatefulSet foo failed error: no"]);
        assert_eq!(ended, refused(Refusal::Forbidden, "no"));
    }
}
