//! Upstream's `stateful_set_control_test.go`, `stateful_set_test.go` and
//! `stateful_pod_control_test.go` scenarios, named as there, run sync after
//! sync on a [`World`] that applies each plan as the cluster would.

use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::Action;
use super::testing::{SetBuilder, World, member, pod_ref, set_ref};
use super::{Options, POD_NAME_LABEL, REVISION_LABEL, Write};
use crate::testing::ts;

// === utils ===

/// A world whose set was synced until every pod runs and is ready.
fn settled(set: SetBuilder) -> World {
    let mut w = World::new(set);
    w.settle(50);
    w
}

fn status(w: &World) -> (i32, i32, i32, i32, i32) {
    let s = w.set.status.clone().unwrap_or_default();
    let n = |v: Option<i32>| v.unwrap_or(0);
    (s.replicas, n(s.ready_replicas), n(s.available_replicas), n(s.current_replicas), n(s.updated_replicas))
}

fn update_revision(w: &World) -> String {
    w.set.status.clone().unwrap_or_default().update_revision.unwrap_or_default()
}

fn current_revision(w: &World) -> String {
    w.set.status.clone().unwrap_or_default().current_revision.unwrap_or_default()
}

fn set_image(w: &mut World, image: &str) {
    w.set.spec.template.spec.as_mut().unwrap().containers[0].image = Some(image.into());
    w.set.metadata.generation = Some(w.set.metadata.generation.unwrap_or(0) + 1);
}

// === creation, scaling, replacement ===

/// `TestStatefulSetControlCreatesPods` (OrderedReady): one pod per sync, in
/// ordinal order, each once its predecessor is ready.
#[test]
fn test_stateful_set_control_creates_pods() {
    let mut w = World::new(SetBuilder::new(3));
    let first = w.lines();
    assert!(first[0].starts_with("revision create foo-"), "{first:?}");
    assert_eq!(first[1], "create foo-0");
    assert!(first[2].starts_with("status 0/0/0/0/0 "), "{first:?}");
    let syncs = w.settle(10);
    assert_eq!(syncs, [vec!["create foo-0"], vec!["create foo-1"], vec!["create foo-2"]]);
    assert_eq!(status(&w), (3, 3, 3, 3, 3));
    assert_eq!(w.set.status.as_ref().unwrap().observed_generation, Some(1));
    assert_eq!(w.set.status.as_ref().unwrap().collision_count, Some(0));
    for name in w.names() {
        assert!(w.has_identity(&name), "{name}");
        let pod = &w.pods[&name];
        let spec = pod.spec.as_ref().unwrap();
        assert_eq!(spec.hostname.as_deref(), Some(name.as_str()));
        assert_eq!(spec.subdomain.as_deref(), Some("governingsvc"));
        assert_eq!(pod.metadata.owner_references.as_ref().unwrap()[0].kind, "StatefulSet");
    }
}

/// `TestStatefulSetControlScaleUp`.
#[test]
fn test_stateful_set_control_scale_up() {
    let mut w = settled(SetBuilder::new(3));
    w.set.spec.replicas = Some(4);
    assert_eq!(w.settle(10), [vec!["create foo-3"]]);
    assert_eq!(status(&w).0, 4);
}

/// `TestStatefulSetControlScaleDown`: condemned pods go one per sync,
/// highest ordinal first.
#[test]
fn test_stateful_set_control_scale_down() {
    let mut w = settled(SetBuilder::new(3));
    w.set.spec.replicas = Some(0);
    assert_eq!(w.settle(10), [vec!["delete foo-2"], vec!["delete foo-1"], vec!["delete foo-0"]]);
    assert_eq!(status(&w), (0, 0, 0, 0, 0));
}

/// `TestStatefulSetControlReplacesPods`: deleted pods come back, lowest
/// ordinal first.
#[test]
fn test_stateful_set_control_replaces_pods() {
    let mut w = settled(SetBuilder::new(5));
    w.pods.remove("foo-0");
    w.pods.remove("foo-2");
    assert_eq!(w.settle(10), [vec!["create foo-0"], vec!["create foo-2"]]);
    assert_eq!(w.names(), ["foo-0", "foo-1", "foo-2", "foo-3", "foo-4"]);
}

/// `TestStatefulSetControlRecreatesFailedPod` and
/// `TestStatefulSetControlRecreatesSucceededPod`: a terminal pod is deleted,
/// and created again by the next sync.
#[test]
fn test_stateful_set_control_recreates_failed_and_succeeded_pods() {
    for phase in ["Failed", "Succeeded"] {
        let mut w = settled(SetBuilder::new(3));
        let pod = member(&w.set, 0).revision(&w.pod_revision("foo-0")).phase(phase).api();
        w.pods.insert("foo-0".into(), pod);
        assert_eq!(w.step().iter().filter(|l| !l.starts_with("status")).collect::<Vec<_>>(), ["delete foo-0"]);
        assert_eq!(w.pod_lines(), ["create foo-0"], "{phase}");
    }
}

/// OrderedReady halts on a pod that is not Running and Ready: no create
/// after it, no condemned deleted (upstream "waiting for Pod to be Running
/// and Ready").
#[test]
fn test_stateful_set_control_halts_on_unhealthy_pod() {
    let mut w = World::new(SetBuilder::new(3));
    w.step();
    assert!(w.pod_lines().is_empty(), "foo-0 is Pending: {:?}", w.pod_lines());
    let mut w = settled(SetBuilder::new(3));
    let pod = member(&w.set, 0).revision(&w.pod_revision("foo-0")).api();
    w.pods.insert("foo-0".into(), pod);
    w.set.spec.replicas = Some(2);
    assert!(w.pod_lines().is_empty(), "foo-0 is not ready: foo-2 waits {:?}", w.pod_lines());
    w.make_ready();
    assert_eq!(w.pod_lines(), ["delete foo-2"]);
}

/// The first unhealthy pod, when condemned, may still be deleted (upstream
/// `processCondemned`'s `firstUnhealthyPod` exception).
#[test]
fn test_stateful_set_control_deletes_first_unhealthy_condemned_pod() {
    let mut w = settled(SetBuilder::new(3));
    let pod = member(&w.set, 2).revision(&w.pod_revision("foo-2")).api();
    w.pods.insert("foo-2".into(), pod);
    w.set.spec.replicas = Some(2);
    assert_eq!(w.pod_lines(), ["delete foo-2"]);
}

/// `TestParallelScale` (stateful_set_test.go): Parallel creates every pod
/// in one sync, in slow-start steps of 1, 2, 4, ..., without waiting, and
/// deletes every condemned pod at once.
#[test]
fn test_parallel_scale() {
    let mut w = World::new(SetBuilder::new(5).parallel());
    let plan = w.plan();
    let creates: Vec<usize> = plan
        .steps
        .iter()
        .map(|s| s.actions.iter().filter(|a| matches!(a, Action::Own(Write::CreatePod { .. }))).count())
        .filter(|&n| n > 0)
        .collect();
    assert_eq!(creates, [1, 2, 2]);
    w.step();
    assert!(w.pod_lines().is_empty(), "pending pods are left alone: {:?}", w.pod_lines());
    w.make_ready();
    w.set.spec.replicas = Some(2);
    let mut deletes = w.pod_lines();
    deletes.sort();
    assert_eq!(deletes, ["delete foo-2", "delete foo-3", "delete foo-4"]);
}

/// `TestStatefulSetControlWithStartOrdinal`: `spec.ordinals.start` shifts
/// the names; moving it condemns the pods left outside.
#[test]
fn test_stateful_set_control_with_start_ordinal() {
    let mut w = settled(SetBuilder::new(3).start(2));
    assert_eq!(w.names(), ["foo-2", "foo-3", "foo-4"]);
    w.set.spec.ordinals.as_mut().unwrap().start = Some(3);
    assert_eq!(w.settle(10), [vec!["create foo-5"], vec!["delete foo-2"]]);
    assert_eq!(w.names(), ["foo-3", "foo-4", "foo-5"]);
}

/// `TestScaleUpStatefulSetWithMinReadySeconds` and
/// `TestStatefulSetAvailability`: a ready pod not yet available blocks the
/// next create and schedules a look after `minReadySeconds`.
#[test]
fn test_scale_up_stateful_set_with_min_ready_seconds() {
    let mut w = World::new(SetBuilder::new(2).min_ready_seconds(30));
    w.step();
    w.make_ready();
    let plan = w.plan();
    assert!(w.pod_lines().is_empty(), "{:?}", w.pod_lines());
    assert_eq!(plan.requeue_after, Some(Duration::from_secs(30)));
    w.step();
    assert_eq!(status(&w), (1, 1, 0, 1, 1));
    w.now = ts(super::testing::NOW + 31);
    assert_eq!(w.pod_lines(), ["create foo-1"]);
}

// === updates ===

/// `TestStatefulSetControlRollingUpdate`: outdated pods are replaced one at
/// a time from the highest ordinal, and the update revision becomes
/// current once all are updated and ready.
#[test]
fn test_stateful_set_control_rolling_update() {
    let mut w = settled(SetBuilder::new(3));
    let v1 = update_revision(&w);
    set_image(&mut w, "v2");
    let first = w.lines();
    assert!(first[0].starts_with("revision create foo-"), "{first:?}");
    assert_eq!(first[1], "delete foo-2");
    assert!(first[2].starts_with("status 3/3/3/2/0 "), "currentReplicas drops by the deleted pod: {first:?}");
    let syncs = w.settle(20);
    assert_eq!(
        syncs,
        [
            vec!["delete foo-2"],
            vec!["create foo-2"],
            vec!["delete foo-1"],
            vec!["create foo-1"],
            vec!["delete foo-0"],
            vec!["create foo-0"]
        ]
    );
    let v2 = update_revision(&w);
    assert_ne!(v1, v2);
    assert_eq!(current_revision(&w), v2, "the rollover");
    assert_eq!(status(&w), (3, 3, 3, 3, 3));
    assert!(w.names().iter().all(|n| w.pod_revision(n) == v2));
}

/// `TestStatefulSetControlRollingUpdateWithPartition`: only ordinals at or
/// above the partition are updated; the current revision stays.
#[test]
fn test_stateful_set_control_rolling_update_with_partition() {
    let mut w = settled(SetBuilder::new(5).partition(2));
    let v1 = update_revision(&w);
    set_image(&mut w, "v2");
    w.settle(30);
    let v2 = update_revision(&w);
    let revisions: Vec<String> = w.names().iter().map(|n| w.pod_revision(n)).collect();
    assert_eq!(revisions, [v1.clone(), v1.clone(), v2.clone(), v2.clone(), v2]);
    assert_eq!(current_revision(&w), v1);
    assert_eq!(status(&w), (5, 5, 5, 2, 3));
    // A pod below the partition that is recreated keeps the current revision.
    w.pods.remove("foo-0");
    w.step();
    assert_eq!(w.pod_revision("foo-0"), v1);
}

/// A template changed again mid-rollout: the pods of the revision in
/// between are neither current nor updated, so deleting one leaves
/// `currentReplicas` as it was. Upstream takes one off whatever the pod's
/// revision: 0 here, and -1 once no pod is left at the current revision,
/// which the API server refuses.
#[test]
fn deleting_a_pod_of_neither_revision_keeps_current_replicas() {
    let mut w = settled(SetBuilder::new(3).partition(1));
    set_image(&mut w, "v2");
    w.settle(30);
    assert_eq!(status(&w), (3, 3, 3, 1, 2), "foo-0 stays at the current revision");
    set_image(&mut w, "v3");
    let first = w.lines();
    assert_eq!(first[1], "delete foo-2");
    assert!(first[2].starts_with("status 3/3/3/1/0 "), "foo-0 is still current: {first:?}");
}

/// A rollout to a third revision once no pod is left at the current one:
/// deleting the pod of the revision in between leaves `currentReplicas`
/// at 0, where upstream writes -1.
#[test]
fn current_replicas_never_goes_below_zero() {
    let mut w = settled(SetBuilder::new(2));
    set_image(&mut w, "v2");
    assert_eq!(w.step()[1], "delete foo-1");
    assert_eq!(w.step()[0], "create foo-1");
    w.make_ready();
    w.pods.remove("foo-0");
    set_image(&mut w, "v3");
    assert_eq!(w.pod_lines(), ["create foo-0"]);
    w.step();
    w.make_ready();
    let lines = w.lines();
    assert_eq!(lines[0], "delete foo-1");
    assert!(lines[1].starts_with("status 2/2/2/0/1 "), "{lines:?}");
}

/// `TestStatefulSetControlOnDeleteUpdate`: nothing is deleted for an
/// update; a pod deleted by hand comes back at the update revision.
#[test]
fn test_stateful_set_control_on_delete_update() {
    let mut w = settled(SetBuilder::new(3).on_delete());
    let v1 = update_revision(&w);
    set_image(&mut w, "v2");
    assert!(w.settle(10).is_empty());
    let v2 = update_revision(&w);
    assert_ne!(v1, v2);
    assert_eq!(current_revision(&w), v1);
    w.pods.remove("foo-1");
    w.step();
    assert_eq!(w.pod_revision("foo-1"), v2);
    assert_eq!(w.pod_revision("foo-0"), v1);
}

/// `TestUpdateStatefulSetWithMaxUnavailable` (gate on): OrderedReady
/// deletes `maxUnavailable` outdated pods at once, highest first; with the
/// gate off, one.
#[test]
fn test_update_stateful_set_with_max_unavailable() {
    let mut w = settled(SetBuilder::new(5).max_unavailable(IntOrString::Int(2)));
    set_image(&mut w, "v2");
    assert_eq!(w.pod_lines(), ["delete foo-4", "delete foo-3"]);
    w.options = Options { max_unavailable: false };
    assert_eq!(w.pod_lines(), ["delete foo-4"]);

    let mut w = settled(SetBuilder::new(5).max_unavailable(IntOrString::String("40%".into())));
    set_image(&mut w, "v2");
    let mut rounds = Vec::new();
    for _ in 0..10 {
        let deletes: Vec<String> = w.step().into_iter().filter(|l| l.starts_with("delete")).collect();
        w.make_ready();
        if !deletes.is_empty() {
            rounds.push(deletes);
        }
    }
    assert_eq!(
        rounds,
        [vec!["delete foo-4", "delete foo-3"], vec!["delete foo-2", "delete foo-1"], vec!["delete foo-0"]]
    );
}

/// The 1.35 regression (kubernetes#137409) fixed in 1.37: a Parallel set
/// whose only pod is outdated and never becomes available still gets it
/// replaced, although it alone uses up `maxUnavailable`.
#[test]
fn test_parallel_max_unavailable_replaces_broken_outdated_pods() {
    let mut w = World::new(SetBuilder::new(1).parallel());
    w.step();
    let v1 = w.pod_revision("foo-0");
    set_image(&mut w, "v2");
    assert_eq!(w.pod_lines(), ["delete foo-0"], "Pending at v1, replaced at once");
    w.step();
    w.step();
    assert_ne!(w.pod_revision("foo-0"), v1);

    // Available outdated pods stay within the budget left by broken ones.
    let mut w = settled(SetBuilder::new(4).parallel().max_unavailable(IntOrString::Int(2)));
    set_image(&mut w, "v2");
    let broken = member(&w.set, 0).revision(&w.pod_revision("foo-0")).api();
    w.pods.insert("foo-0".into(), broken);
    assert_eq!(w.pod_lines(), ["delete foo-0", "delete foo-3"]);
}

/// `TestStatefulSetControlRollback`: back on an earlier template, the
/// earlier revision is reused and renumbered, no new one is created.
#[test]
fn test_stateful_set_control_rollback() {
    let mut w = settled(SetBuilder::new(3));
    let v1 = update_revision(&w);
    set_image(&mut w, "v2");
    w.settle(20);
    set_image(&mut w, "v1");
    let lines = w.lines();
    assert_eq!(lines[0], format!("revision update {v1} 3"), "{lines:?}");
    w.settle(20);
    assert_eq!(update_revision(&w), v1);
    assert_eq!(current_revision(&w), v1);
    assert_eq!(w.revisions.len(), 2);
}

/// `TestStatefulSetHonorRevisionHistoryLimit` / `TestStatefulSetControlLimitsHistory`:
/// revisions no pod runs beyond the limit are deleted, oldest first.
#[test]
fn test_stateful_set_control_limits_history() {
    let mut w = settled(SetBuilder::new(2).history(2));
    for image in ["v2", "v3", "v4", "v5"] {
        set_image(&mut w, image);
        w.settle(20);
    }
    assert_eq!(w.revisions.len(), 4, "the rollover's sync still counts the old current revision live");
    w.step();
    assert_eq!(w.revisions.len(), 3, "the live one and two of history");
    let numbers: Vec<i64> = w.revisions.iter().filter_map(|r| r.revision).collect();
    assert!(numbers.iter().all(|&n| n >= 3), "{numbers:?}");
}

// === claims ===

/// `TestStatefulPodControlCreatesPods` with claims: a pod's claims are
/// created with it, once; `TestStatefulPodControlCreatePodPvcCreateFailure`
/// is the executor's.
#[test]
fn test_stateful_pod_control_creates_pods_with_claims() {
    let mut w = World::new(SetBuilder::new(2).claim("datadir"));
    let first = w.step();
    assert_eq!(first[1], "create foo-0 +datadir-foo-0");
    w.make_ready();
    assert_eq!(w.pod_lines(), ["create foo-1 +datadir-foo-1"]);
    let claim = w.claims[0].clone();
    assert_eq!(claim.metadata.labels.as_ref().unwrap().get("app").map(String::as_str), Some("foo"));
    let pod = &w.pods["foo-0"];
    let volume = &pod.spec.as_ref().unwrap().volumes.as_ref().unwrap()[0];
    assert_eq!(volume.persistent_volume_claim.as_ref().unwrap().claim_name, "datadir-foo-0");
}

/// A Pending pod whose claim is missing gets it created (upstream
/// `createMissingPersistentVolumeClaims`).
#[test]
fn test_pending_pod_gets_missing_claims() {
    let mut w = World::new(SetBuilder::new(1).claim("datadir"));
    w.step();
    w.claims.clear();
    assert_eq!(w.pod_lines(), ["claims +datadir-foo-0"]);
}

/// A claim being deleted blocks its pod's creation with upstream's error
/// and FailedCreate event.
#[test]
fn test_claim_being_deleted_fails_the_create() {
    let mut w = World::new(SetBuilder::new(1).claim("datadir"));
    let mut claim = super::claims_for(&w.set, 0).remove(0);
    claim.metadata.deletion_timestamp = Some(Time(ts(1)));
    w.claims.push(claim.into());
    assert_eq!(
        w.pod_lines(),
        [
            "event FailedCreate: create Pod foo-0 in StatefulSet foo failed error: pvc datadir-foo-0 is being deleted",
            "fail pvc datadir-foo-0 is being deleted"
        ]
    );
}

/// `TestStatefulSetControl_PodClaimIsStale` / `TestPodClaimIsStale`: with
/// `whenScaled: Delete`, a claim still owned by an earlier pod of the name
/// blocks the create until the garbage collector removes it.
#[test]
fn test_pod_claim_is_stale() {
    let mut w = World::new(SetBuilder::new(1).claim("datadir").retention("Delete", "Retain"));
    let mut claim = super::claims_for(&w.set, 0).remove(0);
    claim.metadata.owner_references = Some(vec![pod_ref("foo-0", "old-pod")]);
    w.claims.push(claim.into());
    assert!(w.pod_lines().is_empty(), "{:?}", w.pod_lines());
    let mut w = World::new(SetBuilder::new(1).claim("datadir").retention("Retain", "Retain"));
    let mut claim = super::claims_for(&w.set, 0).remove(0);
    claim.metadata.owner_references = Some(vec![pod_ref("foo-0", "old-pod")]);
    w.claims.push(claim.into());
    assert_eq!(w.pod_lines(), ["create foo-0"], "claims are reused under Retain");
}

/// `TestStatefulSetControl_ClaimRetentionPolicy`-style: `whenDeleted:
/// Delete` gives each claim the set as controller; `whenScaled: Delete`
/// moves a condemned pod's claim to the pod before the pod is deleted.
#[test]
fn test_claim_retention_policy() {
    let mut w = settled(SetBuilder::new(2).claim("datadir").retention("Delete", "Delete"));
    for claim in &w.claims {
        assert_eq!(claim.metadata.owner_references, Some(vec![set_ref(&w.set)]), "{:?}", claim.metadata.name);
    }
    w.set.spec.replicas = Some(1);
    assert_eq!(w.pod_lines(), ["claim datadir-foo-1 [Pod]", "delete foo-1"]);
    w.step();
    let claim = w.claims.iter().find(|c| c.metadata.name.as_deref() == Some("datadir-foo-1")).unwrap();
    assert_eq!(claim.metadata.owner_references, Some(vec![pod_ref("foo-1", "uid-foo-1")]));
}

// === identity, ownership, deletion ===

/// `TestStatefulPodControlUpdatesIdentity`: a pod without its identity
/// label is repaired.
#[test]
fn test_stateful_pod_control_updates_identity() {
    let mut w = settled(SetBuilder::new(2));
    w.pods.get_mut("foo-1").unwrap().metadata.labels.as_mut().unwrap().remove(POD_NAME_LABEL);
    assert_eq!(w.pod_lines(), ["repair foo-1"]);
}

/// `TestStatefulSetControllerAdoptsPods` / `ReleasesPods` /
/// `TestGetPodsForStatefulSetAdopt`: an orphan member is adopted, a pod that
/// is not a member is released, an orphan revision is adopted.
#[test]
fn test_stateful_set_controller_adopts_and_releases() {
    let mut w = settled(SetBuilder::new(2));
    let orphan = member(&w.set, 1).revision(&w.pod_revision("foo-1")).ready_since(ts(0)).orphan().api();
    w.pods.insert("foo-1".into(), orphan);
    let stranger = member(&w.set, 0).name("bar-0").api();
    w.pods.insert("bar-0".into(), stranger);
    let lines = w.lines();
    assert_eq!(lines[..3], ["release bar-0", "recheck", "adopt foo-1"]);

    let mut w = settled(SetBuilder::new(1));
    let mut revision = (*w.revisions[0]).clone();
    revision.metadata.owner_references = None;
    w.revisions = vec![revision.into()];
    assert_eq!(w.lines()[..2], ["recheck".to_string(), format!("revision adopt {}", update_revision(&w))]);
}

/// `TestStatefulSetControlDeletionTimestamp`-style: a set being deleted
/// only has its status written.
#[test]
fn test_stateful_set_being_deleted_only_updates_status() {
    let mut w = World::new(SetBuilder::new(3));
    w.set.metadata.deletion_timestamp = Some(Time(ts(1)));
    let lines = w.lines();
    assert!(lines.iter().all(|l| l.starts_with("status") || l.starts_with("revision")), "{lines:?}");
}

/// `TestStatefulSetStatusUpdate`: a steady state writes nothing; the
/// pods' revision label is the revision's name.
#[test]
fn test_steady_state_is_quiet() {
    let w = settled(SetBuilder::new(3));
    assert!(w.plan().is_empty(), "{:?}", w.lines());
    let pod = &w.pods["foo-0"];
    assert_eq!(pod.metadata.labels.as_ref().unwrap().get(REVISION_LABEL), Some(&update_revision(&w)));
}

// === upstream's tables, Monotonic and Burst ===

/// `TestStatefulSetControl`: every case as upstream runs it, OrderedReady
/// ("Monotonic") and Parallel ("Burst"); the `*Failure` cases refuse one
/// write (the executor's error), let the driver finish with
/// `after_failure`, and check the next syncs recover.
#[test]
fn test_stateful_set_control() {
    type Case = (&'static str, fn(SetBuilder) -> World);
    let cases: [Case; 9] = [
        ("CreatesPods", |set| {
            let w = settled(set.clone());
            assert_eq!(status(&w), (3, 3, 3, 3, 3));
            w
        }),
        ("ScalesUp", |set| {
            let mut w = settled(set);
            w.set.spec.replicas = Some(4);
            w.settle(10);
            assert_eq!(status(&w), (4, 4, 4, 4, 4));
            w
        }),
        ("ScalesDown", |set| {
            let mut w = settled(set);
            w.set.spec.replicas = Some(0);
            w.settle(10);
            assert_eq!(status(&w), (0, 0, 0, 0, 0));
            w
        }),
        ("ReplacesPods", |set| {
            let mut w = settled(set.replicas(5));
            for name in ["foo-0", "foo-2", "foo-4"] {
                w.pods.remove(name);
            }
            w.settle(10);
            assert_eq!(status(&w).0, 5);
            w
        }),
        ("RecreatesFailedPod", |set| {
            let mut w = settled(set);
            let failed = member(&w.set, 0).revision(&w.pod_revision("foo-0")).phase("Failed").api();
            w.pods.insert("foo-0".into(), failed);
            w.step();
            assert!(!w.pods.contains_key("foo-0"), "the failed pod is deleted");
            w
        }),
        ("CreatePodFailure", |set| {
            let mut w = World::new(set);
            let failed = (0..3).any(|_| {
                let failed = w.step_failing("create foo-1");
                w.make_ready();
                failed
            });
            assert!(failed);
            w.settle(10);
            assert_eq!(status(&w), (3, 3, 3, 3, 3));
            w
        }),
        ("UpdatePodFailure", |set| {
            let mut w = settled(set);
            w.pods.get_mut("foo-0").unwrap().metadata.labels.as_mut().unwrap().remove(POD_NAME_LABEL);
            assert!(w.step_failing("repair foo-0"));
            assert_eq!(w.pod_lines(), ["repair foo-0"], "tried again next sync");
            w.step();
            assert!(w.pod_lines().is_empty());
            w
        }),
        ("UpdateSetStatusFailure", |set| {
            let mut w = World::new(set);
            w.step();
            w.make_ready();
            assert!(w.step_failing("status"));
            w.make_ready();
            w.settle(10);
            assert_eq!(status(&w), (3, 3, 3, 3, 3));
            w
        }),
        ("PodRecreateDeleteFailure", |set| {
            let mut w = settled(set);
            let failed = member(&w.set, 0).revision(&w.pod_revision("foo-0")).phase("Failed").api();
            w.pods.insert("foo-0".into(), failed);
            assert!(w.step_failing("delete foo-0"));
            assert!(w.pods.contains_key("foo-0"));
            w.step();
            assert!(!w.pods.contains_key("foo-0"), "deleted on the retry");
            w.settle(10);
            assert_eq!(status(&w), (3, 3, 3, 3, 3));
            w
        }),
    ];
    for (name, case) in cases {
        for (mode, set) in [("Monotonic", SetBuilder::new(3)), ("Burst", SetBuilder::new(3).parallel())] {
            let w = case(set);
            for pod in w.names() {
                assert!(w.has_identity(&pod), "{name}/{mode}: {pod}");
            }
        }
    }
}

/// `TestStatefulSetControlScaleDownDeleteError`.
#[test]
fn test_stateful_set_control_scale_down_delete_error() {
    let mut w = settled(SetBuilder::new(3));
    w.set.spec.replicas = Some(0);
    assert!(w.step_failing("delete foo-2"));
    w.settle(10);
    assert_eq!(status(&w), (0, 0, 0, 0, 0));
}

/// `TestStatefulSetControl_getSetRevisions`: the revisions after one sync
/// of each case.
#[test]
fn test_stateful_set_control_get_set_revisions() {
    let set = SetBuilder::new(3).build();
    let mut set1 = SetBuilder::new(3).image("foo").build();
    let rev0 = super::new_revision(&set, 1, 0);
    set1.status.get_or_insert_default().current_revision = rev0.metadata.name.clone();
    let rev1 = super::new_revision(&set1, 2, 0);
    let mut set2 = set1.clone();
    set2.spec.template.metadata.as_mut().unwrap().labels.as_mut().unwrap().insert("new".into(), "label".into());
    let rev2 = super::new_revision(&set2, 3, 0);
    let name = |r: &k8s_openapi::api::apps::v1::ControllerRevision| r.metadata.name.clone().unwrap();
    type Case<'a> = (
        &'a str,
        Vec<&'a k8s_openapi::api::apps::v1::ControllerRevision>,
        &'a k8s_openapi::api::apps::v1::StatefulSet,
        usize,
        String,
        (String, i64),
    );
    let cases: [Case; 4] = [
        ("creates initial revision", vec![], &set, 1, name(&rev0), (name(&rev0), 1)),
        ("creates revision on update", vec![&rev0], &set1, 2, name(&rev0), (name(&rev1), 2)),
        ("must not recreate a new revision of same set", vec![&rev0, &rev1], &set1, 2, name(&rev0), (name(&rev1), 2)),
        ("must rollback to a previous revision", vec![&rev0, &rev1, &rev2], &set1, 3, name(&rev0), (name(&rev1), 4)),
    ];
    for (case, existing, set, count, current, update) in cases {
        let existing: Vec<_> = existing.into_iter().map(|r| super::testing::stored(r.clone())).collect();
        let refs: Vec<_> = existing.iter().collect();
        let got = super::revisions::stateful_set_revisions(set, &refs);
        let created = usize::from(matches!(got.write, Some(crate::common::history::Write::Create { .. })));
        assert_eq!(existing.len() + created, count, "{case}");
        assert_eq!(got.current.metadata.name.unwrap(), current, "{case}");
        assert_eq!((got.update.metadata.name.unwrap(), got.update.revision.unwrap()), update, "{case}");
    }
}

/// The cases of `TestStatefulSetControlRollingUpdate` and
/// `TestStatefulSetControlOnDeleteUpdate`: name, replicas before and after
/// the image change, Parallel.
const UPDATE_CASES: [(&str, i32, i32, bool); 6] = [
    ("monotonic image update", 3, 3, false),
    ("monotonic image update and scale up", 3, 5, false),
    ("monotonic image update and scale down", 5, 3, false),
    ("burst image update", 3, 3, true),
    ("burst image update and scale up", 3, 5, true),
    ("burst image update and scale down", 5, 3, true),
];

/// `TestStatefulSetControlRollingUpdate`: after an image change (and a
/// scale), every pod ends at the new image, Monotonic and Burst.
#[test]
fn test_stateful_set_control_rolling_update_table() {
    for (case, initial, replicas, burst) in UPDATE_CASES {
        let set = SetBuilder::new(initial);
        let mut w = settled(if burst { set.parallel() } else { set });
        w.set.spec.replicas = Some(replicas);
        set_image(&mut w, "foo");
        w.settle(40);
        assert_eq!(w.names().len(), usize::try_from(replicas).unwrap(), "{case}");
        for pod in w.names() {
            assert_eq!(w.image(&pod), "foo", "{case}: {pod}");
        }
        assert_eq!(current_revision(&w), update_revision(&w), "{case}");
    }
}

/// `TestStatefulSetControlOnDeleteUpdate`: the update leaves existing pods
/// at the old image (new ordinals get the new one); after a scale to 0 and
/// back every pod has the new image.
#[test]
fn test_stateful_set_control_on_delete_update_table() {
    for (case, initial, replicas, burst) in UPDATE_CASES {
        let set = SetBuilder::new(initial).on_delete();
        let mut w = settled(if burst { set.parallel() } else { set });
        w.set.spec.replicas = Some(replicas);
        set_image(&mut w, "foo");
        w.settle(40);
        for (i, pod) in w.names().iter().enumerate() {
            let want = if i < usize::try_from(initial).unwrap() { "v1" } else { "foo" };
            assert_eq!(w.image(pod), want, "{case}: {pod}");
        }
        w.set.spec.replicas = Some(0);
        w.settle(40);
        w.set.spec.replicas = Some(replicas);
        w.settle(40);
        for pod in w.names() {
            assert_eq!(w.image(&pod), "foo", "{case} after restart: {pod}");
        }
    }
}

/// `TestStatefulPodControlNoOpUpdate`: a pod with its identity and storage
/// is not touched.
#[test]
fn test_stateful_pod_control_no_op_update() {
    let w = settled(SetBuilder::new(2).claim("datadir"));
    assert!(w.pod_lines().is_empty(), "{:?}", w.pod_lines());
}

/// `TestStatefulPodControlUpdatesPodStorage`: a pod not mounting its
/// claim is repaired, and the claim the cache lacks is created first.
#[test]
fn test_stateful_pod_control_updates_pod_storage() {
    let mut w = settled(SetBuilder::new(2).claim("datadir"));
    w.pods.get_mut("foo-1").unwrap().spec.as_mut().unwrap().volumes = None;
    w.claims.retain(|c| c.metadata.name.as_deref() != Some("datadir-foo-1"));
    assert_eq!(w.pod_lines(), ["repair foo-1 +datadir-foo-1"]);
    w.step();
    assert!(w.pod_lines().is_empty(), "{:?}", w.pod_lines());
}

/// `TestStatefulPodControlRetainDeletionPolicyUpdate`-style: a claim another
/// controller controls keeps it, loses our references, and each time
/// upstream would rewrite it a Warning `ConflictingController` is recorded.
#[test]
fn test_claim_with_conflicting_controller() {
    let mut w = World::new(SetBuilder::new(1).claim("datadir").retention("Retain", "Delete"));
    let mut claim = super::claims_for(&w.set, 0).remove(0);
    let mut other = set_ref(&w.set);
    (other.kind, other.name, other.uid) = ("ReplicaSet".into(), "rs".into(), "rs-uid".into());
    claim.metadata.owner_references = Some(vec![other.clone(), set_ref(&w.set)]);
    w.claims.push(claim.into());
    let lines = w.pod_lines();
    assert_eq!(lines[0], "create foo-0");
    assert_eq!(
        lines[1],
        "event ConflictingController: PersistentVolumeClaim datadir-foo-0 has a conflicting OwnerReference that \
         acts as a manging controller, the retention policy is ignored for this claim"
    );
    assert_eq!(lines[2], "claim datadir-foo-0 [ReplicaSet]");
    w.step();
    let claim = w.claims.iter().find(|c| c.metadata.name.as_deref() == Some("datadir-foo-0")).unwrap();
    assert_eq!(claim.metadata.owner_references, Some(vec![other]));
}

/// A Pending pod whose claim is being deleted fails the sync without an
/// event (upstream's `createMissingPersistentVolumeClaims` records none).
#[test]
fn test_pending_pod_with_claim_being_deleted() {
    let mut w = World::new(SetBuilder::new(1).claim("datadir"));
    w.step();
    let mut claim = (*w.claims[0]).clone();
    claim.metadata.deletion_timestamp = Some(Time(ts(1)));
    w.claims = vec![claim.into()];
    assert_eq!(w.pod_lines(), ["fail pvc datadir-foo-0 is being deleted"]);
}
