//! Creating and deleting pods to reach `spec.replicas` (upstream
//! `manageReplicas`, `getPodsToDelete`); the steps' sizes are
//! [`slow_start_batches`]'s.
//!
//! Worked example, `replicas: 10`, no pods, nothing in flight: diff = -10,
//! so the plan records 10 expected creations and creates in steps of 1, 2,
//! 4 and 3 pods. If a pod of the step of 2 fails, that step finishes and
//! the sync stops: 2 pods exist (1 + 1), and the expectations are lowered
//! by 1 (the failure) + 7 (the steps of 4 and 3 never run) = 8
//! ([`super::SyncMachine`]), so only the 2 real creations are awaited.
//! With `replicas: 1000` one sync creates 500 (steps 1, 2, ... 128, then
//! 245); the rest come once those 500 are observed.

use kcm_objects::Pod;
use kcm_objects::ReplicaSet;

use crate::common::controller_ref::new_controller_ref;
use crate::common::expectations::Record;
use crate::common::pod_control::pod_from_template;
use crate::common::ranking::{colocation_ranks, sort_for_deletion};
use crate::common::replica_set::replicas;
use crate::common::slow_start::slow_start_batches;
use crate::plan::{Action, ObjectRef, Plan};

/// What `manage_replicas` reads.
pub(super) struct Input<'a> {
    pub rs: &'a ReplicaSet,
    pub key: &'a str,
    pub owner: &'a ObjectRef,
    /// Active pods this ReplicaSet controls after the claim.
    pub claimed: &'a [&'a Pod],
    /// Pods of every ReplicaSet under the same controller (ranking input),
    /// read only when pods are deleted.
    pub related: &'a dyn Fn() -> Vec<std::sync::Arc<Pod>>,
    /// The snapshot's pods, active or not: a created pod the cache holds in
    /// any state is no longer in flight (it carries this ReplicaSet's
    /// controller reference, so it is among them).
    pub cached: &'a [std::sync::Arc<Pod>],
    pub record: Option<&'a Record>,
    pub cache_rv: Option<u64>,
    pub now: jiff::Timestamp,
    pub burst_replicas: usize,
}

/// Appends to `plan` the creations or deletions that bring the ReplicaSet to
/// `spec.replicas`, counting what is already in flight.
pub(super) fn manage_replicas(input: &Input<'_>, plan: &mut Plan) {
    let pod_key = |p: &Pod| p.metadata.key();
    // Pods whose deletion we issued and the cache has not caught up with are
    // as good as gone; pods we created and the cache has not shown yet are as
    // good as there (see the design note in the module above).
    let candidates: Vec<&Pod> =
        input.claimed.iter().copied().filter(|p| !input.record.is_some_and(|r| r.is_deleting(&pod_key(p)))).collect();
    let unseen = input.record.map_or(0, |r| {
        let cached: std::collections::HashSet<String> = input.cached.iter().map(|p| pod_key(p)).collect();
        r.unseen_creations(|k| cached.contains(k), input.cache_rv)
    });
    let current = i64::try_from(candidates.len() + unseen).unwrap_or(i64::MAX);
    let diff = current - i64::from(replicas(input.rs));
    let burst = i64::try_from(input.burst_replicas).unwrap_or(i64::MAX);

    if diff < 0 {
        let count = usize::try_from((-diff).min(burst)).unwrap_or(0);
        plan_creations(input, count, plan);
    } else if diff > 0 {
        let count = usize::try_from(diff.min(burst)).unwrap_or(0).min(candidates.len());
        let victims = pods_to_delete(&candidates, input.related, count, input.now);
        plan.push(Action::ExpectDeletions {
            key: input.key.to_owned(),
            pod_keys: victims.iter().map(|p| pod_key(p)).collect(),
        });
        plan.push_concurrent(
            victims
                .iter()
                .map(|p| Action::DeletePod {
                    namespace: p.metadata.namespace.to_string(),
                    name: p.metadata.name.to_string(),
                    uid: p.metadata.uid.to_string(),
                    owner: input.owner.clone(),
                })
                .collect(),
        );
    }
}

/// Expect `count` creations, then create in slow-start steps 1, 2, 4, ...
fn plan_creations(input: &Input<'_>, count: usize, plan: &mut Plan) {
    if count == 0 {
        return;
    }
    let rs = input.rs;
    let template = rs.template();
    let cref = new_controller_ref(&rs.metadata, "apps/v1", "ReplicaSet");
    let pod = pod_from_template(&template, &rs.metadata.name, cref);
    let namespace = rs.metadata.namespace.to_string();
    plan.push(Action::ExpectCreations { key: input.key.to_owned(), count });
    for size in slow_start_batches(count) {
        let creates = (0..size)
            .map(|_| Action::CreatePod {
                namespace: namespace.clone(),
                pod: Box::new(pod.clone()),
                owner: input.owner.clone(),
            })
            .collect();
        plan.push_concurrent(creates);
    }
}

/// The `count` pods to delete first by upstream's ranking; no sorting when
/// all of them go.
fn pods_to_delete<'a>(
    candidates: &[&'a Pod],
    related: &dyn Fn() -> Vec<std::sync::Arc<Pod>>,
    count: usize,
    now: jiff::Timestamp,
) -> Vec<&'a Pod> {
    if count >= candidates.len() {
        return candidates.to_vec();
    }
    let related = related();
    let related: Vec<&Pod> = related.iter().map(|p| &**p).collect();
    let ranks = colocation_ranks(candidates, &related);
    let mut ranked: Vec<(&Pod, usize)> = candidates.iter().copied().zip(ranks).collect();
    sort_for_deletion(&mut ranked, now);
    ranked.into_iter().take(count).map(|(p, _)| p).collect()
}
