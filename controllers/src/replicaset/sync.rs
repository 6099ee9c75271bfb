//! One sync of a ReplicaSet: claim, manage, status, in upstream's order
//! (`syncReplicaSet`); how the plan is run is in the module above.

use std::collections::HashSet;
use std::sync::Arc;

use kcm_objects::Pod;

use super::status::{calculate_status, needs_update, requeue_after};
use super::{Options, Snapshot, key, manage, object_ref};
use crate::common::controller_ref::{claim_all, new_controller_ref};
use crate::common::pod::{is_pod_active, is_pod_terminating};
use crate::common::selector::Selector;
use crate::plan::{Action, OwnerRefPatch, Plan};

/// Plans one sync of the snapshot's ReplicaSet. An invalid selector plans
/// nothing (upstream logs it and drops the key).
#[doc(alias = "syncReplicaSet")]
pub fn sync(snapshot: &Snapshot<'_>, options: &Options) -> Plan {
    let rs = snapshot.replica_set;
    let Some(view) = View::new(snapshot, options) else { return Plan::new() };
    let key = key(rs);
    let owner = object_ref(rs);
    let needs_sync = snapshot.expectations.satisfied(&key, snapshot.now);
    let mut plan = Plan::new();

    let claims = claim_all(&rs.metadata, &view.selector, view.active.iter().copied());
    plan.push_concurrent(
        claims.release.iter().map(|p| patch(p, OwnerRefPatch::Release { owner_uid: owner.uid.clone() })).collect(),
    );
    if !claims.adopt.is_empty() {
        plan.push(Action::RecheckOwner { owner: owner.clone() });
        let cref = new_controller_ref(&rs.metadata, "apps/v1", "ReplicaSet");
        plan.push_concurrent(claims.adopt.iter().map(|p| patch(p, OwnerRefPatch::Adopt(cref.clone()))).collect());
    }

    if needs_sync && rs.metadata.deletion_timestamp.is_none() {
        let related = || related_pods(snapshot);
        manage::manage_replicas(
            &manage::Input {
                rs,
                key: &key,
                owner: &owner,
                claimed: &claims.claimed,
                related: &related,
                cached: snapshot.pods,
                record: snapshot.expectations.get(&key),
                cache_rv: snapshot.pods_resource_version,
                now: snapshot.now,
                burst_replicas: options.burst_replicas,
            },
            &mut plan,
        );
    }
    finish_with_status(snapshot, &view, &claims.claimed, None, plan)
}

/// The rest of the sync once a create or delete step failed with
/// `error` (its message): the status with `ReplicaFailure`, and the
/// `minReadySeconds` requeue. The executor then also requeues the key with
/// rate limiting.
pub fn after_manage_error(snapshot: &Snapshot<'_>, options: &Options, error: &str) -> Plan {
    let Some(view) = View::new(snapshot, options) else { return Plan::new() };
    let claims = claim_all(&snapshot.replica_set.metadata, &view.selector, view.active.iter().copied());
    finish_with_status(snapshot, &view, &claims.claimed, Some(error), Plan::new())
}

/// The parts of a snapshot both planners derive first.
struct View<'a> {
    selector: Selector,
    /// Active pods of the ReplicaSet's namespace.
    active: Vec<&'a Pod>,
    /// Terminating pods this ReplicaSet controls, if counted.
    terminating: Option<usize>,
}

impl<'a> View<'a> {
    fn new(snapshot: &Snapshot<'a>, options: &Options) -> Option<Self> {
        let rs = snapshot.replica_set;
        let selector = Selector::of_spec(&rs.spec.selector).ok()?;
        let in_namespace = snapshot.pods.iter().map(|p| &**p).filter(|p| p.metadata.namespace == rs.metadata.namespace);
        let active = in_namespace.clone().filter(|p| is_pod_active(p)).collect();
        let terminating = options.terminating_replicas.then(|| {
            in_namespace
                .filter(|p| is_pod_terminating(p))
                .filter(|p| p.metadata.controller().is_some_and(|r| rs.metadata.uid == *r.uid))
                .filter(|p| selector.matches(&p.metadata.labels))
                .count()
        });
        Some(Self { selector, active, terminating })
    }
}

fn finish_with_status(
    snapshot: &Snapshot<'_>,
    view: &View<'_>,
    claimed: &[&Pod],
    error: Option<&str>,
    mut plan: Plan,
) -> Plan {
    let rs = snapshot.replica_set;
    let status = calculate_status(rs, claimed, view.terminating, error, snapshot.now);
    plan.requeue_after = requeue_after(rs, &status, claimed, snapshot.now);
    if needs_update(rs, &status) {
        plan.push(Action::UpdateReplicaSetStatus {
            namespace: rs.metadata.namespace.to_string(),
            name: rs.metadata.name.to_string(),
            resource_version: Some(rs.metadata.resource_version.to_string()),
            status: Box::new(status),
        });
    }
    plan
}

fn patch(pod: &Pod, patch: OwnerRefPatch) -> Action {
    Action::PatchPodOwnerRefs {
        namespace: pod.metadata.namespace.to_string(),
        name: pod.metadata.name.to_string(),
        uid: pod.metadata.uid.to_string(),
        patch,
    }
}

/// Pods matching the selector of any ReplicaSet with the same controller as
/// this one, itself included, each once (upstream
/// `getIndirectlyRelatedPods`); none when it has no controller.
fn related_pods(snapshot: &Snapshot<'_>) -> Vec<Arc<Pod>> {
    let rs = snapshot.replica_set;
    let Some(controller) = rs.metadata.controller() else { return Vec::new() };
    let siblings = snapshot
        .replica_sets
        .iter()
        .map(|r| &**r)
        .filter(|r| r.metadata.uid != rs.metadata.uid)
        .filter(|r| r.metadata.controller().is_some_and(|c| c.uid == controller.uid));
    let in_namespace = (snapshot.namespace_pods.0)();
    let mut seen = HashSet::new();
    let mut related = Vec::new();
    for sibling in std::iter::once(rs).chain(siblings) {
        let Ok(selector) = Selector::of_spec(&sibling.spec.selector) else { continue };
        for pod in &in_namespace {
            if pod.metadata.namespace == sibling.metadata.namespace
                && selector.matches(&pod.metadata.labels)
                && seen.insert(pod.metadata.uid.clone())
            {
                related.push(pod.clone());
            }
        }
    }
    related
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use k8s_openapi::api::apps::v1::{ReplicaSetCondition, ReplicaSetStatus};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

    use super::*;
    use crate::common::expectations::Expectations;
    use crate::replicaset::testing::{NOW, RS_UID, World, owned, rs_status};
    use crate::replicaset::{FAILED_CREATE, REPLICA_FAILURE};
    use crate::testing::{PodBuilder, RsBuilder, describe_step, ts};

    // === utils ===

    // === scale up ===

    #[test]
    fn scale_up_from_zero_uses_slow_start() {
        let w = World::new(RsBuilder::new(10));
        assert_eq!(w.steps(), ["expect +10", "create x1", "create x2", "create x4", "create x3"]);
    }

    #[test]
    fn scale_up_is_capped_by_the_burst_limit() {
        let w = World::new(RsBuilder::new(1000));
        assert_eq!(
            w.steps(),
            [
                "expect +500",
                "create x1",
                "create x2",
                "create x4",
                "create x8",
                "create x16",
                "create x32",
                "create x64",
                "create x128",
                "create x245"
            ]
        );
    }

    #[test]
    fn created_pods_come_from_the_template_with_a_controller_ref() {
        let w = World::new(RsBuilder::new(1));
        let plan = w.plan();
        let Some(Action::CreatePod { namespace, pod, owner }) = plan.actions().nth(1) else { panic!("{plan:?}") };
        assert_eq!(namespace, "ns");
        assert_eq!(owner, &object_ref(&w.rs));
        assert_eq!(pod.metadata.generate_name.as_deref(), Some("web-"));
        let template = w.rs.template();
        assert_eq!(pod.metadata.labels, template.metadata.as_ref().unwrap().labels);
        assert!(template.spec.is_some());
        assert_eq!(pod.spec, template.spec);
        let refs = pod.metadata.owner_references.as_ref().unwrap();
        assert_eq!(refs.len(), 1);
        let r = &refs[0];
        assert_eq!(
            (r.api_version.as_str(), r.kind.as_str(), r.name.as_str(), r.uid.as_str()),
            ("apps/v1", "ReplicaSet", "web", RS_UID)
        );
        assert_eq!((r.controller, r.block_owner_deletion), (Some(true), Some(true)));
    }

    /// Reference scenario 37: the 2nd create overall fails (in the step of
    /// 2): 2 pods exist, expectations are lowered to 2, the status gets
    /// ReplicaFailure FailedCreate.
    #[test]
    fn failed_batch_stops_creation_and_lowers_expectations() {
        let w = World::new(RsBuilder::new(10));
        let plan = w.plan();
        let failed_step = 2; // steps: expect, create x1, create x2, ...
        assert_eq!(describe_step(&plan.steps[failed_step]), "create x2");
        let never_issued = plan.steps[failed_step + 1..].iter().flat_map(|s| &s.actions);
        let skipped = 1 + never_issued.filter(|a| matches!(a, Action::CreatePod { .. })).count();
        assert_eq!(skipped, 8);

        let mut exp = Expectations::new();
        exp.expect_creations("ns/web", 10, w.now);
        exp.creations_skipped("ns/web", skipped);
        assert_eq!(exp.get("ns/web").unwrap().add(), 2);
        exp.creation_observed("ns/web", "ns/web-a");
        assert!(!exp.satisfied("ns/web", w.now));
        exp.creation_observed("ns/web", "ns/web-b");
        assert!(exp.satisfied("ns/web", w.now));

        let rest = after_manage_error(
            &w.snapshot(&|| w.pods.clone()),
            &w.options,
            "pods \"web-x\" is forbidden: exceeded quota",
        );
        assert_eq!(
            rest.steps.iter().map(describe_step).collect::<Vec<_>>(),
            ["status 0/0/0/0 gen=1 ReplicaFailure=FailedCreate"]
        );
        let Some(Action::UpdateReplicaSetStatus { status, .. }) = rest.actions().next() else { panic!() };
        let c = &status.conditions.as_ref().unwrap()[0];
        assert_eq!(c.message.as_deref(), Some("pods \"web-x\" is forbidden: exceeded quota"));
        assert_eq!(c.last_transition_time, Some(Time(w.now)));
    }

    // === scale down ===

    /// Reference scenario 39 through a whole sync.
    #[test]
    fn scale_down_deletes_by_ranking() {
        let pods = || {
            [
                PodBuilder::new("p1").owned_by(RS_UID).phase("Pending"),
                PodBuilder::new("p2").owned_by(RS_UID).node("A").phase("Running").not_ready(),
                PodBuilder::new("p3").owned_by(RS_UID).node("A").ready_since(ts(NOW - 600)),
                PodBuilder::new("p4").owned_by(RS_UID).node("B").ready_since(ts(NOW - 60)),
            ]
        };
        let status = ReplicaSetStatus { fully_labeled_replicas: Some(4), ..rs_status(4, 2, 2) };
        let cases = [
            ("under a deployment, 4 -> 2", 2, true, "delete p1,p2"),
            ("under a deployment, 4 -> 1", 1, true, "delete p1,p2,p3"),
            ("standalone, 4 -> 1", 1, false, "delete p1,p2,p4"),
            ("4 -> 0 deletes all", 0, false, "delete p4,p3,p2,p1"),
        ];
        for (name, replicas, deployment, want) in cases {
            let mut rs = RsBuilder::new(replicas).status(status.clone());
            if deployment {
                rs = rs.controlled_by("dep-uid");
            }
            let mut w = World::new(rs).pods(pods().into_iter().rev());
            w.replica_sets = vec![Arc::new(w.rs.clone())];
            let steps = w.steps();
            assert_eq!(steps[1], want, "{name}");
            assert!(steps[0].starts_with("expect -ns/"), "{name}: {steps:?}");
        }
    }

    #[test]
    fn ranking_counts_pods_of_sibling_replica_sets() {
        // Our pods a (node A) and b (node B); a sibling's pod c also runs on
        // B, so b is doubled up and goes first.
        let mut w = World::new(RsBuilder::new(1).controlled_by("dep-uid").status(rs_status(2, 2, 2))).pods([
            owned("a").node("A"),
            owned("b").node("B"),
            PodBuilder::new("c").labels(&[("app", "old")]).node("B"),
        ]);
        let mut sibling = RsBuilder::new(1).controlled_by("dep-uid").build();
        sibling.metadata.uid = "old-uid".into();
        sibling.metadata.name = "web-old".into();
        sibling.spec.selector.match_labels = [("app", "old")].into_iter().collect();
        w.replica_sets = vec![Arc::new(w.rs.clone()), Arc::new(sibling)];
        assert_eq!(w.steps(), ["expect -ns/b", "delete b"]);
    }

    // === expectations ===

    #[test]
    fn pending_expectations_plan_only_status() {
        let mut w = World::new(RsBuilder::new(3)).pods([owned("a")]);
        w.expectations.expect_creations("ns/web", 3, ts(NOW - 10));
        w.expectations.creation_observed("ns/web", "ns/a");
        assert_eq!(w.steps(), ["status 1/1/1/1 gen=1"]);
    }

    #[test]
    fn fulfilled_expectations_with_nothing_to_do_plan_nothing() {
        let mut w = World::new(RsBuilder::new(1).status(rs_status(1, 1, 1))).pods([owned("a")]);
        w.expectations.expect_creations("ns/web", 1, ts(NOW - 10));
        w.expectations.creation_observed("ns/web", "ns/a");
        assert!(w.plan().is_empty());
    }

    #[test]
    fn expired_expectations_plan_again() {
        let mut w = World::new(RsBuilder::new(3));
        w.expectations.expect_creations("ns/web", 3, ts(NOW - 301));
        assert_eq!(w.steps(), ["expect +3", "create x1", "create x2"]);
    }

    /// The design note: after expiry, creations the API server accepted
    /// still hold their slots until the pod cache has passed their
    /// resourceVersion.
    #[test]
    fn expired_expectations_still_count_unseen_creations() {
        let cases = [
            ("cache version unknown: all three in flight", None, vec![]),
            (
                "cache at rv 21: a and b would have been seen, c is in flight",
                Some(21),
                vec!["expect +2", "create x1", "create x1"],
            ),
            ("cache past every create: none in flight", Some(30), vec!["expect +3", "create x1", "create x2"]),
        ];
        for (name, rv, want) in cases {
            let mut w = World::new(RsBuilder::new(3));
            w.pods_rv = rv;
            w.expectations.expect_creations("ns/web", 3, ts(NOW - 301));
            for (pod, rv) in [("ns/web-a", 20), ("ns/web-b", 21), ("ns/web-c", 22)] {
                w.expectations.creation_succeeded("ns/web", pod, Some(rv));
            }
            assert_eq!(w.steps(), want, "{name}");
        }
    }

    #[test]
    fn a_created_pod_the_cache_shows_in_any_state_is_no_longer_in_flight() {
        let mut w =
            World::new(RsBuilder::new(1)).pods([PodBuilder::new("web-a").owned_by(RS_UID).deleting(ts(NOW - 1))]);
        w.expectations.expect_creations("ns/web", 1, ts(NOW - 301));
        w.expectations.creation_succeeded("ns/web", "ns/web-a", Some(20));
        assert_eq!(w.steps(), ["expect +1", "create x1"]);
    }

    #[test]
    fn expired_expectations_still_count_unseen_deletions() {
        // p1's delete was accepted but the cache still shows it; upstream
        // would delete one more pod after expiry.
        let mut w =
            World::new(RsBuilder::new(2).status(rs_status(3, 3, 3))).pods([owned("p1"), owned("p2"), owned("p3")]);
        w.expectations.expect_deletions("ns/web", ["ns/p1".to_string()], ts(NOW - 301));
        assert_eq!(w.steps(), Vec::<String>::new());
    }

    // === claim ===

    #[test]
    fn matching_orphans_are_adopted_and_counted() {
        let w = World::new(RsBuilder::new(2).status(rs_status(2, 2, 2)))
            .pods([owned("a"), PodBuilder::new("orphan").node("n1").ready_since(ts(NOW - 3600))]);
        assert_eq!(w.steps(), ["recheck", "adopt orphan"]);
        let plan = w.plan();
        let Some(Action::PatchPodOwnerRefs { uid, patch, .. }) = plan.actions().nth(1) else { panic!() };
        assert_eq!(
            patch.body(uid),
            serde_json::json!({"metadata": {"ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                "name": "web", "uid": RS_UID, "controller": true, "blockOwnerDeletion": true}], "uid": "uid-orphan"}})
        );
    }

    #[test]
    fn a_deleting_replica_set_adopts_releases_and_manages_nothing() {
        let w = World::new(RsBuilder::new(3).deleting(ts(NOW - 5)).status(rs_status(1, 1, 1))).pods([
            owned("a"),
            owned("relabelled").labels(&[("app", "db")]),
            PodBuilder::new("orphan"),
        ]);
        assert_eq!(w.steps(), Vec::<String>::new());
    }

    #[test]
    fn owned_pods_that_no_longer_match_are_released_and_replaced() {
        let w = World::new(RsBuilder::new(1).status(rs_status(1, 1, 1))).pods([owned("a").labels(&[("app", "db")])]);
        assert_eq!(w.steps(), ["release a", "expect +1", "create x1", "status 0/0/0/0 gen=1"]);
    }

    /// Reference scenario 40: terminating and terminal orphans, and pods of
    /// other controllers, are left alone and not counted.
    #[test]
    fn terminating_terminal_and_foreign_pods_are_ignored() {
        let w = World::new(RsBuilder::new(1)).pods([
            PodBuilder::new("deleting-orphan").deleting(ts(NOW - 1)),
            PodBuilder::new("done-orphan").phase("Succeeded"),
            PodBuilder::new("foreign").owned_by("other-uid").ready_since(ts(0)),
        ]);
        assert_eq!(w.steps(), ["expect +1", "create x1"]);
    }

    #[test]
    fn a_gracefully_deleted_pod_is_replaced_at_once() {
        let w = World::new(RsBuilder::new(2).status(rs_status(2, 2, 2)))
            .pods([owned("a"), owned("b").deleting(ts(NOW - 1))]);
        assert_eq!(w.steps(), ["expect +1", "create x1", "status 1/1/1/1 gen=1"]);
    }

    // === status ===

    /// Reference scenario 40, last part: Ready at t0 with minReadySeconds 10.
    #[test]
    fn min_ready_seconds_delays_availability_and_requeues() {
        let t0 = NOW - 3;
        let mut w = World::new(RsBuilder::new(1).min_ready_seconds(10))
            .pods([PodBuilder::new("a").owned_by(RS_UID).ready_since(ts(t0))]);
        let plan = w.plan();
        assert_eq!(plan.steps.iter().map(describe_step).collect::<Vec<_>>(), ["status 1/1/1/0 gen=1"]);
        assert_eq!(plan.requeue_after, Some(Duration::from_secs(7)));

        w.rs.status = Some(rs_status(1, 1, 0));
        w.now = ts(t0 + 10);
        let plan = w.plan();
        assert!(plan.steps.is_empty(), "not yet available at exactly t0+10");
        assert!(plan.requeue_after.is_some());

        w.now = ts(t0 + 11);
        let plan = w.plan();
        assert_eq!(plan.steps.iter().map(describe_step).collect::<Vec<_>>(), ["status 1/1/1/1 gen=1"]);
        assert_eq!(plan.requeue_after, None);
    }

    #[test]
    fn replica_failure_is_cleared_by_a_sync_without_errors() {
        let failing = ReplicaSetStatus {
            conditions: Some(vec![ReplicaSetCondition {
                type_: Some(REPLICA_FAILURE.into()),
                status: Some("True".into()),
                reason: Some(FAILED_CREATE.into()),
                message: Some("quota".into()),
                last_transition_time: Some(Time(ts(0))),
            }]),
            ..rs_status(1, 1, 1)
        };
        // Expectations pending: manage is skipped, which counts as no error.
        let mut w = World::new(RsBuilder::new(3).status(failing)).pods([owned("a")]);
        w.expectations.expect_creations("ns/web", 2, ts(NOW - 10));
        assert_eq!(w.steps(), ["status 1/1/1/1 gen=1"]);
    }

    #[test]
    fn status_is_written_only_when_it_changes() {
        let cases = [
            ("unchanged", RsBuilder::new(1).status(rs_status(1, 1, 1)), vec![]),
            ("stale counts", RsBuilder::new(1).status(rs_status(1, 0, 0)), vec!["status 1/1/1/1 gen=1"]),
            (
                "new generation",
                RsBuilder::new(1).generation(2).status(rs_status(1, 1, 1)),
                vec!["status 1/1/1/1 gen=2"],
            ),
        ];
        for (name, rs, want) in cases {
            assert_eq!(World::new(rs).pods([owned("a")]).steps(), want, "{name}");
        }
    }

    #[test]
    fn terminating_replicas_are_counted_when_enabled() {
        let mut w = World::new(RsBuilder::new(1).status(rs_status(1, 1, 1))).pods([
            owned("a"),
            owned("b").deleting(ts(NOW - 1)),
            PodBuilder::new("c").deleting(ts(NOW - 1)),
        ]);
        assert!(w.plan().is_empty(), "gate off: the field stays unset");
        w.options.terminating_replicas = true;
        let plan = w.plan();
        let Some(Action::UpdateReplicaSetStatus { status, .. }) = plan.actions().next() else { panic!("{plan:?}") };
        assert_eq!(status.terminating_replicas, Some(1));
    }

    #[test]
    fn an_invalid_selector_plans_nothing() {
        let mut rs = RsBuilder::new(3).build();
        rs.spec.selector.match_expressions =
            Some(vec![k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelectorRequirement {
                key: "app".into(),
                operator: "Near".into(),
                values: None,
            }]);
        let mut w = World::new(RsBuilder::new(3));
        w.rs = rs;
        assert!(w.plan().is_empty());
    }
}
