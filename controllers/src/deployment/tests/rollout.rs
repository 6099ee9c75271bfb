//! RollingUpdate and Recreate steps, the steady state, huge counts.

use super::*;

// === rolling update ===

/// Scenario 3: the rollout starts: new RS at 3 (surge), old 10 → 8.
#[test]
fn rollout_start_creates_within_surge_and_scales_old_within_availability() {
    let w = World::new(DeploymentBuilder::new(10), [RsB::new("old", 10).revision("1").sized(10, 13)]);
    let new = hashed("v2");
    assert_eq!(
        w.writes(),
        [
            format!("create {new} 3"),
            format!("event ScalingReplicaSet: Scaled up replica set {new} from 0 to 3"),
            "update old 8".into(),
            "event ScalingReplicaSet: Scaled down replica set old from 10 to 8".into(),
        ]
    );
    let plan = w.plan();
    let rs = created(&plan);
    let a = rs.metadata.annotations.clone().unwrap();
    assert_eq!(a[REVISION_ANNOTATION], "2");
    assert_eq!(a[DESIRED_REPLICAS_ANNOTATION], "10");
    assert_eq!(a[MAX_REPLICAS_ANNOTATION], "13");
    let hash = new.trim_start_matches("d-");
    assert_eq!(rs.metadata.labels.as_ref().unwrap()[POD_TEMPLATE_HASH_LABEL], hash);
    let spec = rs.spec.as_ref().unwrap();
    assert_eq!(spec.selector.match_labels.as_ref().unwrap()[POD_TEMPLATE_HASH_LABEL], hash);
    assert_eq!(
        spec.template.as_ref().unwrap().metadata.as_ref().unwrap().labels.as_ref().unwrap()[POD_TEMPLATE_HASH_LABEL],
        hash
    );
    assert_eq!(rs.metadata.owner_references.as_ref().unwrap()[0].uid, D_UID);
    let d = w.last_deployment().unwrap();
    assert_eq!(d.metadata.annotations.unwrap()[REVISION_ANNOTATION], "2");
    let first_status = plan.actions().find_map(|a| match a {
        Action::UpdateDeploymentStatus { deployment } => deployment.status.clone(),
        _ => None,
    });
    assert!(conditions(&first_status.unwrap()).contains(&cond(PROGRESSING, "True", NEW_RS_REASON)));
}

/// Scenario 4: continuing: new 3 → 5 once its pods are available; then
/// old 8 → 5.
#[test]
fn rollout_continues_in_two_syncs() {
    let new = hashed("v2");
    let w = World::new(
        DeploymentBuilder::new(10),
        [
            RsB::new("old", 8).revision("1").sized(10, 13),
            RsB::new(&new, 3).image("v2").revision("2").sized(10, 13).created(10),
        ],
    );
    assert_eq!(
        w.writes()[..2],
        [format!("update {new} 5"), format!("event ScalingReplicaSet: Scaled up replica set {new} from 3 to 5")]
    );
    let w = World::new(
        DeploymentBuilder::new(10),
        [
            RsB::new("old", 8).revision("1").sized(10, 13),
            RsB::new(&new, 5).image("v2").revision("2").sized(10, 13).created(10).available(3, 3),
        ],
    );
    assert_eq!(w.writes()[..2], ["update old 5", "event ScalingReplicaSet: Scaled down replica set old from 8 to 5"]);
}

/// Scenario 5: new pods never become Ready: the state settles at new 5,
/// old 8, and nothing more is scaled.
#[test]
fn stuck_rollout_settles() {
    let new = hashed("v2");
    let w = World::new(
        DeploymentBuilder::new(10),
        [
            RsB::new("old", 8).revision("1").sized(10, 13),
            RsB::new(&new, 5).image("v2").revision("2").sized(10, 13).created(10).available(5, 0),
        ],
    );
    assert!(w.writes().iter().all(|l| !l.starts_with("update") && !l.starts_with("create")), "{:?}", w.writes());
    let status = w.last_status().unwrap();
    assert!(conditions(&status).contains(&cond(AVAILABLE, "True", MINIMUM_REPLICAS_AVAILABLE)));
}

/// Scenario 6 (upstream `TestReconcileOldReplicaSets` shape): unhealthy old
/// replicas go first; 13 − 8 − 3 = 2.
#[test]
fn unhealthy_old_replicas_are_cleaned_first() {
    let new = hashed("v2");
    let w = World::new(
        DeploymentBuilder::new(10).surge(3),
        [
            RsB::new("old", 10).revision("1").sized(10, 13).available(10, 6),
            RsB::new(&new, 3).image("v2").revision("2").sized(10, 13).created(10).available(3, 0),
        ],
    );
    assert_eq!(w.writes(), ["update old 8", "event ScalingReplicaSet: Scaled down replica set old from 10 to 8"]);
}

/// Scenario 7/8: both fenceposts resolve to 0 surge: the new RS is created
/// at 0 (no event) and the old one goes 1 → 0 in the same sync.
#[test]
fn zero_surge_creates_empty_then_scales_old() {
    let w = World::new(
        DeploymentBuilder::new(1).fenceposts(IntOrString::Int(0), IntOrString::String("10%".into())),
        [RsB::new("old", 1).revision("1").sized(1, 1)],
    );
    let new = hashed("v2");
    assert_eq!(
        w.writes(),
        [
            format!("create {new} 0"),
            "update old 0".into(),
            "event ScalingReplicaSet: Scaled down replica set old from 1 to 0".into()
        ]
    );
}

/// Scenario 7, next sync: with the old ReplicaSet at 0, the new one goes
/// 0 → 1.
#[test]
fn zero_surge_second_sync_scales_new_up() {
    let new = hashed("v2");
    let w = World::new(
        DeploymentBuilder::new(1).fenceposts(IntOrString::Int(0), IntOrString::String("10%".into())),
        [
            RsB::new("old", 0).revision("1").sized(1, 1),
            RsB::new(&new, 0).image("v2").revision("2").sized(1, 1).created(5),
        ],
    );
    assert_eq!(
        w.writes(),
        [format!("update {new} 1"), format!("event ScalingReplicaSet: Scaled up replica set {new} from 0 to 1")]
    );
}

/// The new ReplicaSet above replicas is scaled down to them.
#[test]
fn new_replica_set_above_replicas_is_scaled_down() {
    let new = hashed("v2");
    let w = World::new(DeploymentBuilder::new(3), [RsB::new(&new, 5).image("v2").revision("1").sized(3, 4)]);
    assert_eq!(
        w.writes()[..2],
        [format!("update {new} 3"), format!("event ScalingReplicaSet: Scaled down replica set {new} from 5 to 3")]
    );
}

// === recreate ===

/// Scenario 19: Recreate scales old to 0 first, no new RS.
#[test]
fn recreate_scales_old_down_first() {
    let w = World::new(DeploymentBuilder::new(3).recreate(), [RsB::new("old", 3).revision("1")]);
    assert_eq!(w.writes(), ["update old 0", "event ScalingReplicaSet: Scaled down replica set old from 3 to 0"]);
}

/// Scenarios 19–20: Recreate waits while old pods run (terminating,
/// Unknown, or reported by status); Failed pods do not block.
#[test]
fn recreate_waits_for_old_pods() {
    let d = || DeploymentBuilder::new(3).recreate();
    let old = || RsB::new("old", 0).revision("1").available(0, 0);
    let pod = |name: &str| PodBuilder::new(name).owned_by("uid-old");
    let cases = [
        ("running", vec![pod("p").phase("Running")], true),
        ("terminating", vec![pod("p").phase("Running").deleting(ts(NOW - 1))], true),
        ("unknown", vec![pod("p").phase("Unknown")], true),
        ("pending", vec![pod("p").phase("Pending")], true),
        ("failed", vec![pod("p").phase("Failed")], false),
        ("succeeded", vec![pod("p").phase("Succeeded")], false),
        ("none", vec![], false),
    ];
    for (name, pods, waits) in cases {
        let w = World::new(d(), [old()]).pods(pods);
        let creates = w.lines().iter().any(|l| l.starts_with("create"));
        assert_eq!(creates, !waits, "{name}: {:?}", w.lines());
    }
    let w = World::new(d(), [RsB::new("old", 0).revision("1").available(1, 0)]);
    assert!(!w.lines().iter().any(|l| l.starts_with("create")), "status.replicas > 0 blocks");
    let w = World::new(d(), [old()]);
    assert_eq!(
        w.writes()[..2],
        [
            format!("create {} 3", hashed("v2")),
            format!("event ScalingReplicaSet: Scaled up replica set {} from 0 to 3", hashed("v2"))
        ]
    );
}

/// A steady state writes nothing.
#[test]
fn steady_state_is_quiet() {
    let new = hashed("v2");
    let w = World::new(DeploymentBuilder::new(3), [RsB::new(&new, 3).image("v2").revision("1").sized(3, 4)]);
    let plan = w.plan();
    let d2 = w.last_deployment().unwrap();
    let w2 = World { d: d2, rss: w.rss.clone(), pods: vec![], now: ts(NOW + 5) };
    assert!(w2.plan().is_empty(), "{:?} after {:?}", w2.lines(), describe_plan(&plan));
}

/// Counts near `i32::MAX` (valid, if absurd) plan without overflowing,
/// whatever the path.
#[test]
fn huge_counts_do_not_overflow() {
    let max = i32::MAX;
    let worlds = [
        World::new(DeploymentBuilder::new(max), [RsB::new("old", max).revision("1").sized(max, max)]),
        World::new(
            DeploymentBuilder::new(max).paused(),
            [RsB::new("old", max).revision("1"), RsB::new("b", max).image("v2").created(3)],
        ),
        World::new(
            DeploymentBuilder::new(max - 1),
            [RsB::new("old", max).revision("1").sized(max, max), RsB::new("b", max).image("v2").created(3)],
        ),
        World::new(DeploymentBuilder::new(max).recreate(), [RsB::new("old", max).revision("1")]),
    ];
    for w in worlds {
        let _ = w.plan();
    }
}
