//! Scaling events, proportional scaling and paused Deployments.

use super::*;

// === scaling events ===

/// Scenario 9: a scaling event beats the rollout: no new RS, v2 → 10,
/// v1 → 4 (surge 0).
#[test]
fn scaling_beats_rollout() {
    let w = World::new(
        DeploymentBuilder::new(14).image("v3").fenceposts(IntOrString::Int(0), IntOrString::Int(1)),
        [
            RsB::new("v1", 3).revision("1").sized(10, 10),
            RsB::new("v2", 7).image("v2").revision("2").sized(10, 10).created(10),
        ],
    );
    assert_eq!(
        w.writes(),
        [
            "update v2 10",
            "event ScalingReplicaSet: Scaled up replica set v2 from 7 to 10",
            "update v1 4",
            "event ScalingReplicaSet: Scaled up replica set v1 from 3 to 4",
        ]
    );
}

/// Scenarios 10–14: proportional scaling, upstream `TestScale` numbers.
#[test]
fn proportional_scaling_table() {
    // (name, replicas, surge, new (name,size,max), olds oldest-first, want sizes new-then-olds)
    type Case = (&'static str, i32, i32, (i32, i32), Vec<(i32, i32)>, Vec<i32>);
    let cases: Vec<Case> = vec![
        ("5 → 10", 10, 0, (2, 5), vec![(3, 5)], vec![4, 6]),
        ("5 → 3", 3, 0, (2, 5), vec![(3, 5)], vec![1, 2]),
        ("9 → 4", 4, 0, (8, 9), vec![(1, 9)], vec![4, 0]),
        ("7 → 10", 10, 0, (2, 7), vec![(2, 7), (3, 7)], vec![3, 3, 4]),
        ("13 → 8", 8, 0, (2, 13), vec![(3, 13), (8, 13)], vec![1, 2, 5]),
        ("leftover up", 4, 0, (1, 3), vec![(1, 3), (1, 3)], vec![2, 1, 1]),
        ("leftover down", 2, 0, (1, 3), vec![(1, 3), (1, 3)], vec![1, 0, 1]),
        ("10 → 20, surge 2", 20, 2, (6, 12), vec![(6, 12)], vec![11, 11]),
        ("10 (surge 3) → 50 (surge 6)", 50, 6, (5, 13), vec![(8, 13)], vec![22, 34]),
        ("mid-rollout → 20", 20, 3, (5, 13), vec![(8, 13)], vec![9, 14]),
        ("mid-rollout → 5", 5, 3, (5, 13), vec![(8, 13)], vec![3, 5]),
        ("→ 0", 0, 3, (5, 13), vec![(8, 13)], vec![0, 0]),
    ];
    for (name, replicas, surge, (new_size, new_max), olds, want) in cases {
        let mut rss = Vec::new();
        for (i, (size, max)) in olds.iter().enumerate() {
            rss.push(
                RsB::new(&format!("old{i}"), *size)
                    .image(&format!("o{i}"))
                    .revision(&(i + 1).to_string())
                    .sized(*max - surge.min(*max), *max)
                    .created(i64::try_from(i).unwrap()),
            );
        }
        rss.push(RsB::new("new", new_size).image("v2").revision("9").sized(0, new_max).created(100));
        let w = World::new(DeploymentBuilder::new(replicas).surge(surge).paused(), rss);
        let plan = w.plan();
        let size = |n: &str| {
            plan.actions()
                .filter_map(|a| match a {
                    Action::UpdateReplicaSet { replica_set } if replica_set.metadata.name.as_deref() == Some(n) => {
                        replica_set.spec.as_ref().and_then(|s| s.replicas)
                    }
                    _ => None,
                })
                .last()
        };
        let mut got = vec![size("new").unwrap_or(new_size)];
        for (i, (s, _)) in olds.iter().enumerate() {
            got.push(size(&format!("old{i}")).unwrap_or(*s));
        }
        assert_eq!(got, want, "{name}: {:?}", describe_plan(&plan));
    }
}

/// Scenario 13: proportional scaling refreshes the annotations.
#[test]
fn proportional_scaling_writes_annotations() {
    let w = World::new(
        DeploymentBuilder::new(20).surge(2).paused(),
        [
            RsB::new("old", 6).revision("1").sized(10, 12),
            RsB::new("new", 6).image("v2").revision("2").sized(10, 12).created(5),
        ],
    );
    let plan = w.plan();
    let sized: Vec<(String, i32, String, String)> = plan
        .actions()
        .filter_map(|a| match a {
            Action::UpdateReplicaSet { replica_set } => {
                let an = replica_set.metadata.annotations.as_ref().unwrap();
                Some((
                    replica_set.metadata.name.clone().unwrap(),
                    replica_set.spec.as_ref().unwrap().replicas.unwrap(),
                    an[DESIRED_REPLICAS_ANNOTATION].clone(),
                    an[MAX_REPLICAS_ANNOTATION].clone(),
                ))
            }
            _ => None,
        })
        .collect();
    let row = |name: &str| (name.to_string(), 11, "20".to_string(), "22".to_string());
    assert_eq!(sized, [row("new"), row("old")]);
}

/// Scenario 15: from zero, the new RS (the latest) takes everything.
#[test]
fn scale_from_zero_scales_the_latest() {
    let new = hashed("v2");
    let w = World::new(
        DeploymentBuilder::new(6).paused(),
        [
            RsB::new("a", 0).image("a").revision("1").created(1),
            RsB::new("b", 0).image("b").revision("2").created(2),
            RsB::new(&new, 0).image("v2").revision("3").created(3),
        ],
    );
    assert_eq!(
        w.writes(),
        [format!("update {new} 6"), format!("event ScalingReplicaSet: Scaled up replica set {new} from 0 to 6")]
    );
}

/// Scenario 16: a saturated new RS scales the old ones to 0; broken
/// saturation (nothing available) does nothing.
#[test]
fn saturated_new_replica_set_drops_old_ones() {
    let new = hashed("v2");
    let w = World::new(
        DeploymentBuilder::new(10).paused(),
        [
            RsB::new("old", 2).revision("1").sized(10, 13),
            RsB::new(&new, 10).image("v2").revision("2").sized(10, 13).created(5),
        ],
    );
    assert_eq!(w.writes(), ["update old 0", "event ScalingReplicaSet: Scaled down replica set old from 2 to 0"]);
    // Upstream "saturated but broken new replica set does not affect old
    // pods": replicas 2, surge 1, unavailable 1; new at 2 with none
    // available, old at 1: not saturated, and 3 = 2 + 1 leaves nothing to
    // add.
    let w = World::new(
        DeploymentBuilder::new(2).fenceposts(IntOrString::Int(1), IntOrString::Int(1)).paused(),
        [
            RsB::new("old", 1).revision("1").sized(2, 3),
            RsB::new(&new, 2).image("v2").revision("2").sized(2, 3).created(5).available(2, 0),
        ],
    );
    assert!(w.writes().iter().all(|l| !l.starts_with("update")), "{:?}", w.writes());
}

// === paused ===

/// Scenario 17: paused with an edited template: scaling applies, no new
/// RS; Progressing Unknown DeploymentPaused.
#[test]
fn paused_scales_without_rolling_out() {
    let w = World::new(DeploymentBuilder::new(12).paused(), [RsB::new("old", 10).revision("1").sized(10, 13)]);
    let lines = w.lines();
    assert!(!lines.iter().any(|l| l.starts_with("create")), "{lines:?}");
    assert!(lines.contains(&"update old 12".to_string()), "{lines:?}");
    let first = w.plan().actions().find_map(|a| match a {
        Action::UpdateDeploymentStatus { deployment } => deployment.status.clone(),
        _ => None,
    });
    assert!(conditions(&first.unwrap()).contains(&cond(PROGRESSING, "Unknown", PAUSED_DEPLOY_REASON)));
}

/// Scenario 17 (resume): DeploymentResumed, then the rollout proceeds in
/// the same sync.
#[test]
fn resume_marks_the_condition_then_rolls_out() {
    let w = World::new(
        DeploymentBuilder::new(10).condition(PROGRESSING, "Unknown", PAUSED_DEPLOY_REASON, NOW - 100),
        [RsB::new("old", 10).revision("1").sized(10, 13)],
    );
    let lines = w.lines();
    assert!(lines[0].contains(&format!("{PROGRESSING}={RESUMED_DEPLOY_REASON}")), "{lines:?}");
    assert!(lines.iter().any(|l| l.starts_with("create")), "{lines:?}");
}

/// Scenario 18: while paused, history beyond the limit is cleaned.
#[test]
fn paused_cleans_history() {
    let mut rss: Vec<RsB> = (1..=5)
        .map(|i| RsB::new(&format!("r{i}"), 0).image(&format!("i{i}")).revision(&i.to_string()).created(i))
        .collect();
    rss.push(RsB::new("cur", 3).image("v2").revision("6").created(10));
    let w = World::new(DeploymentBuilder::new(3).paused().history(2), rss);
    let deletes: Vec<String> = w.lines().into_iter().filter(|l| l.starts_with("delete")).collect();
    assert_eq!(deletes, ["delete r1", "delete r2", "delete r3"]);
}
