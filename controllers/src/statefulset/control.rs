//! The pods of one sync (upstream `updateStatefulSet`, `processReplica`,
//! `processCondemned`, `runForAll`): each ordinal the set runs gets a slot
//! (its pod, or the pod to create at the right revision), pods outside the
//! range are condemned (highest ordinal first), and the slots and then the
//! condemned are processed.
//!
//! `OrderedReady` ("monotonic") processes one slot at a time and stops at
//! the first that needs waiting: a pod just planned, a pod terminating, or a
//! pod not Running, Ready and available; so with 3 replicas and none
//! created, one sync creates `web-0` only, the next (once `web-0` is
//! available) `web-1`. Condemned pods go one per sync, highest first, and
//! only once every slot is healthy. `Parallel` processes slots in slow-start
//! batches (1, 2, 4, ... at most 500) and never waits.

use std::sync::Arc;

use k8s_openapi::api::apps::v1::{StatefulSet, StatefulSetStatus};
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod as ApiPod};
use kcm_objects::Pod;

use super::identity::{Repair, identity_matches, ordinal, start_ordinal, storage_matches};
use super::pod_state::{
    is_failed, is_healthy, is_pending, is_running_and_available, is_running_and_ready, is_succeeded, is_terminating,
    pod_revision,
};
use super::status::count_pods;
use super::write::Write;
use super::{Action, Plan};
use super::{REVISION_LABEL, allows_burst, min_ready_seconds, replicas, strategy_type};
use crate::common::controller_ref::new_controller_ref;
use crate::common::pod_control::pod_from_template;
use crate::plan::ObjectRef;

/// Most writes one `Parallel` batch sends at once (upstream `MaxBatchSize`).
pub const MAX_BATCH_SIZE: usize = 500;

/// What one ordinal's slot holds.
pub(super) enum Slot<'a> {
    /// The cached pod.
    Pod(&'a Pod),
    /// No pod: this one is to be created.
    New(Box<ApiPod>),
}

impl Slot<'_> {
    pub(super) fn pod(&self) -> Option<&Pod> {
        match self {
            Slot::Pod(p) => Some(p),
            Slot::New(_) => None,
        }
    }
    /// Running, Ready, not terminating; a planned pod is not.
    pub(super) fn healthy(&self) -> bool {
        self.pod().is_some_and(is_healthy)
    }
    pub(super) fn terminating(&self) -> bool {
        self.pod().is_some_and(is_terminating)
    }
    pub(super) fn revision(&self) -> &str {
        match self {
            Slot::Pod(p) => pod_revision(p),
            Slot::New(p) => p.metadata.labels.as_ref().and_then(|l| l.get(REVISION_LABEL)).map_or("", String::as_str),
        }
    }
}

/// The revisions one sync works with.
pub(super) struct Versions<'a> {
    /// The set as the current revision's template makes it.
    pub current_set: &'a StatefulSet,
    /// The set as the update revision's template makes it.
    pub update_set: &'a StatefulSet,
    pub current_name: &'a str,
    pub update_name: &'a str,
}

/// The state of the pod phase of one sync.
pub(super) struct Control<'a> {
    pub set: &'a StatefulSet,
    pub versions: Versions<'a>,
    pub claims: &'a [Arc<PersistentVolumeClaim>],
    pub owner: ObjectRef,
    pub now: jiff::Timestamp,
    /// Slots for ordinals `start..=end`, by `ordinal - start`.
    pub slots: Vec<Slot<'a>>,
    /// Pods with ordinals outside the range, highest first.
    pub condemned: Vec<&'a Pod>,
    pub status: StatefulSetStatus,
    pub plan: Plan,
}

impl<'a> Control<'a> {
    /// Sorts the claimed pods into slots and condemned, and counts them.
    pub(super) fn new(
        set: &'a StatefulSet,
        versions: Versions<'a>,
        pods: &[&'a Pod],
        claims: &'a [Arc<PersistentVolumeClaim>],
        status: StatefulSetStatus,
        now: jiff::Timestamp,
    ) -> Self {
        let start = start_ordinal(set);
        let count = usize::try_from(replicas(set)).unwrap_or(0);
        let mut found: Vec<Option<&'a Pod>> = vec![None; count];
        let mut condemned = Vec::new();
        for pod in pods.iter().copied() {
            let Some(o) = ordinal(pod) else { continue };
            match usize::try_from(i64::from(o) - i64::from(start)).ok().filter(|&i| i < count) {
                Some(i) => found[i] = Some(pod),
                None => condemned.push(pod),
            }
        }
        condemned.sort_by_key(|p| std::cmp::Reverse(ordinal(p)));
        let mut control = Self {
            set,
            claims,
            owner: super::object_ref(set),
            now,
            slots: Vec::new(),
            condemned,
            status,
            plan: Plan::new(),
            versions,
        };
        control.slots = found
            .into_iter()
            .zip(0i32..)
            .map(|(pod, i)| pod.map_or_else(|| Slot::New(Box::new(control.versioned_pod(start + i))), Slot::Pod))
            .collect();
        control
    }

    /// Recounts the status from the slots and the condemned (upstream
    /// `updateStatus(replicas, condemned)`).
    pub(super) fn recount(&mut self) {
        let pods = self.slots.iter().filter_map(Slot::pod).chain(self.condemned.iter().copied());
        count_pods(&mut self.status, pods, min_ready_seconds(self.set), self.now);
    }

    /// Plans the slots and the condemned; false when the sync stops there
    /// (monotonic and waiting).
    pub(super) fn run(&mut self) -> bool {
        let monotonic = !allows_burst(self.set);
        let first_unhealthy = self.first_unhealthy();
        let replicas = (0..self.slots.len()).map(|i| self.process_replica(i, monotonic)).collect();
        if !self.run_for_all(monotonic, replicas) {
            return false;
        }
        let claims = self
            .condemned
            .iter()
            .map(|p| (self.claim_updates(self.versions.update_set, p, ordinal(p), false), false))
            .collect();
        self.run_for_all(monotonic, claims);
        let condemned =
            (0..self.condemned.len()).map(|i| self.process_condemned(i, first_unhealthy, monotonic)).collect();
        self.run_for_all(monotonic, condemned)
    }

    /// Appends one phase (upstream `runForAll`): each item's writes and
    /// whether a monotonic sync stops after them. Monotonic, the items'
    /// writes go one per step up to the first item that stops the sync
    /// (false then); otherwise they go in slow-start batches, the k-th
    /// writes of a batch's items together in the batch's k-th step.
    fn run_for_all(&mut self, monotonic: bool, items: Vec<(Vec<Action>, bool)>) -> bool {
        if monotonic {
            for (chain, exit) in items {
                chain.into_iter().for_each(|a| self.plan.push(a));
                if exit {
                    return false;
                }
            }
            return true;
        }
        let mut chains = items.into_iter().map(|(chain, _)| chain);
        for size in burst_batches(chains.len()) {
            let batch: Vec<Vec<Action>> = chains.by_ref().take(size).collect();
            let depth = batch.iter().map(Vec::len).max().unwrap_or(0);
            let mut batch: Vec<std::vec::IntoIter<Action>> = batch.into_iter().map(Vec::into_iter).collect();
            for _ in 0..depth {
                self.plan.push_concurrent(batch.iter_mut().filter_map(Iterator::next).collect());
            }
        }
        true
    }

    /// The first slot, else the lowest condemned pod, that is not healthy
    /// (by its index among the condemned).
    fn first_unhealthy(&self) -> Option<usize> {
        if self.slots.iter().any(|s| !s.healthy()) {
            return None;
        }
        (0..self.condemned.len()).rev().find(|&i| !is_healthy(self.condemned[i]))
    }

    /// Upstream `processReplica` for slot `i`: the writes, in order, and
    /// whether a monotonic sync stops after them.
    fn process_replica(&self, i: usize, monotonic: bool) -> (Vec<Action>, bool) {
        let pod = match &self.slots[i] {
            Slot::New(pod) => return (self.create(pod), true),
            Slot::Pod(pod) => *pod,
        };
        if is_failed(pod) || is_succeeded(pod) {
            let chain = if is_terminating(pod) { Vec::new() } else { vec![self.delete(pod)] };
            return (chain, true);
        }
        let mrs = min_ready_seconds(self.set);
        let mut chain = Vec::new();
        if is_pending(pod) {
            chain.extend(self.missing_claims(pod));
            chain.extend(self.claim_updates(self.versions.update_set, pod, ordinal(pod), true));
        }
        let waiting =
            is_terminating(pod) || !is_running_and_ready(pod) || !is_running_and_available(pod, mrs, self.now);
        if monotonic && waiting {
            return (chain, true);
        }
        let update_set = self.versions.update_set;
        let identity = identity_matches(self.set, pod);
        let storage = storage_matches(self.set, pod);
        let retention = self.claim_updates(update_set, pod, ordinal(pod), false);
        if identity && storage && retention.is_empty() {
            return (chain, false);
        }
        chain.extend(retention);
        if !identity || !storage {
            let o = ordinal(pod).unwrap_or_default();
            let claims = if storage_matches(update_set, pod) { Vec::new() } else { self.absent_claims(update_set, o) };
            let repair = Repair::new(update_set, o);
            chain.push(Action::Own(Write::RepairPod { set: self.owner.clone(), repair, claims }));
        }
        (chain, false)
    }

    /// Upstream `processCondemned` for condemned pod `i`.
    fn process_condemned(&self, i: usize, first_unhealthy: Option<usize>, monotonic: bool) -> (Vec<Action>, bool) {
        let pod = self.condemned[i];
        if is_terminating(pod) {
            return (Vec::new(), monotonic);
        }
        let mrs = min_ready_seconds(self.set);
        let blocked = !is_running_and_ready(pod) || !is_running_and_available(pod, mrs, self.now);
        if monotonic && blocked && first_unhealthy != Some(i) {
            return (Vec::new(), true);
        }
        (vec![self.delete(pod)], true)
    }

    pub(super) fn delete(&self, pod: &Pod) -> Action {
        Action::Own(Write::DeletePod {
            set: self.owner.clone(),
            namespace: pod.metadata.namespace.to_string(),
            name: pod.metadata.name.to_string(),
            uid: pod.metadata.uid.to_string(),
        })
    }

    pub(super) fn slot_ordinal(&self, pod: &ApiPod) -> i32 {
        pod.metadata.name.as_deref().and_then(super::parent_and_ordinal).map_or(start_ordinal(self.set), |(_, o)| o)
    }

    /// The pod for `ordinal`, at the current revision below the partition
    /// and the update revision from it (upstream `newVersionedStatefulSetPod`).
    fn versioned_pod(&self, ordinal: i32) -> ApiPod {
        let current = self.versions.current_set;
        let start = i64::from(start_ordinal(current));
        let strategy = current.spec.update_strategy.as_ref();
        let rolling = strategy.and_then(|s| s.rolling_update.as_ref());
        let o = i64::from(ordinal);
        let below = match rolling {
            None => {
                strategy_type(current) == "RollingUpdate"
                    && o < start + i64::from(current.status.as_ref().and_then(|s| s.current_replicas).unwrap_or(0))
            }
            Some(r) => o < start + i64::from(r.partition.unwrap_or(0)),
        };
        let (set, revision) = if below {
            (current, self.versions.current_name)
        } else {
            (self.versions.update_set, self.versions.update_name)
        };
        let mut pod = new_stateful_set_pod(set, ordinal);
        pod.metadata.labels.get_or_insert_default().insert(REVISION_LABEL.to_owned(), revision.to_owned());
        pod
    }
}

/// A new member of `set` with `ordinal` (upstream `newStatefulSetPod`): the
/// template, the set as controller, its identity, hostname `<set>-<ordinal>`
/// and subdomain `serviceName` (set only at creation), and its claims.
pub fn new_stateful_set_pod(set: &StatefulSet, ordinal: i32) -> ApiPod {
    let cref = new_controller_ref(&set.metadata, "apps/v1", "StatefulSet");
    let mut pod = pod_from_template(&set.spec.template, super::name(set), cref);
    let repair = Repair::new(set, ordinal);
    repair.update_identity(&mut pod);
    let spec = pod.spec.get_or_insert_default();
    spec.hostname = Some(repair.name.clone());
    spec.subdomain = set.spec.service_name.clone().filter(|s| !s.is_empty());
    repair.update_storage(&mut pod);
    pod
}

/// Slow-start batch sizes for `count` items: 1, 2, 4, ... capped at
/// [`MAX_BATCH_SIZE`], the last what remains.
fn burst_batches(count: usize) -> Vec<usize> {
    let mut sizes = Vec::new();
    let (mut remaining, mut size) = (count, count.min(1));
    while size > 0 {
        sizes.push(size);
        remaining -= size;
        size = (2 * size).min(remaining).min(MAX_BATCH_SIZE);
    }
    sizes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn burst_batches_double_up_to_500() {
        assert_eq!(burst_batches(0), Vec::<usize>::new());
        assert_eq!(burst_batches(5), [1, 2, 2]);
        assert_eq!(burst_batches(1200), [1, 2, 4, 8, 16, 32, 64, 128, 256, 500, 189]);
    }
}
