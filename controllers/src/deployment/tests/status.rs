//! Status, conditions, the progress deadline, and claims.

use super::*;

// === status and conditions ===

/// Scenario 33: status arithmetic.
#[test]
fn status_counts() {
    let d = DeploymentBuilder::new(10).build();
    let new = RsB::new("new", 5).image("v2").available(3, 3).build();
    let old = rs("old", 8);
    let s = crate::deployment::status::calculate_status(&d, &[&old, &new], Some(&new), false, ts(NOW));
    let n = |v: Option<i32>| v.unwrap_or(0);
    assert_eq!(
        (n(s.replicas), n(s.updated_replicas), n(s.ready_replicas), n(s.available_replicas), n(s.unavailable_replicas)),
        (11, 3, 11, 11, 2)
    );
    assert_eq!(s.observed_generation, Some(1));
}

/// Scenario 30: Available True iff available ≥ replicas − maxUnavailable.
#[test]
fn available_condition_table() {
    let cases = [
        (DeploymentBuilder::new(10), 8, "True"),
        (DeploymentBuilder::new(10), 7, "False"),
        (DeploymentBuilder::new(10).recreate(), 9, "False"),
        (DeploymentBuilder::new(0), 0, "True"),
    ];
    for (d, available, want) in cases {
        let d = d.build();
        let rs = RsB::new("new", crate::deployment::replicas(&d)).image("v2").available(available, available).build();
        let status = crate::deployment::status::calculate_status(&d, &[&rs], Some(&rs), false, ts(NOW));
        let got = conditions::get_condition(&status, AVAILABLE).unwrap().status.clone();
        assert_eq!(got, want, "{d:?} {available}");
    }
}

/// Scenario 29: complete: NewReplicaSetAvailable with the RS's name, no
/// requeue; a later drop in availability keeps it.
#[test]
fn completion_and_its_guard() {
    let new = hashed("v2");
    let rss = || [RsB::new(&new, 10).image("v2").revision("1").sized(10, 13)];
    let w = World::new(DeploymentBuilder::new(10).condition(PROGRESSING, "True", RS_UPDATED_REASON, NOW - 10), rss());
    let s = w.last_status().unwrap();
    let p = s.conditions.iter().flatten().find(|c| c.type_ == PROGRESSING).unwrap();
    assert_eq!(p.reason.as_deref(), Some(NEW_RS_AVAILABLE_REASON));
    assert_eq!(p.message.as_deref(), Some(format!("ReplicaSet \"{new}\" has successfully progressed.").as_str()));
    assert_eq!(w.plan().requeue_after, None);

    let complete = DeploymentStatus {
        observed_generation: Some(1),
        replicas: Some(10),
        updated_replicas: Some(10),
        ready_replicas: Some(10),
        available_replicas: Some(10),
        unavailable_replicas: Some(0),
        ..Default::default()
    };
    let w = World::new(
        DeploymentBuilder::new(10)
            .status(complete)
            .condition(AVAILABLE, "True", MINIMUM_REPLICAS_AVAILABLE, NOW - 100)
            .condition(PROGRESSING, "True", NEW_RS_AVAILABLE_REASON, NOW - 100)
            .annotation(REVISION_ANNOTATION, "1"),
        [RsB::new(&new, 10).image("v2").revision("1").sized(10, 13).available(10, 5)],
    );
    let s = w.last_status().unwrap();
    assert!(conditions(&s).contains(&cond(PROGRESSING, "True", NEW_RS_AVAILABLE_REASON)), "{s:?}");
}

/// Scenario 5 (deadline): no progress for 600 s: ProgressDeadlineExceeded;
/// before it, an unchanged status requeues one second after the deadline.
#[test]
fn progress_deadline() {
    let new = hashed("v2");
    let stuck = DeploymentStatus {
        observed_generation: Some(1),
        replicas: Some(13),
        updated_replicas: Some(5),
        ready_replicas: Some(8),
        available_replicas: Some(8),
        unavailable_replicas: Some(5),
        ..Default::default()
    };
    let world = |now: i64| {
        World::new(
            DeploymentBuilder::new(10)
                .status(stuck.clone())
                .condition(AVAILABLE, "True", MINIMUM_REPLICAS_AVAILABLE, NOW - 1000)
                .condition(PROGRESSING, "True", RS_UPDATED_REASON, NOW)
                .annotation(REVISION_ANNOTATION, "2"),
            [
                RsB::new("old", 8).revision("1").sized(10, 13),
                RsB::new(&new, 5).image("v2").revision("2").sized(10, 13).created(5).available(5, 0),
            ],
        )
        .at(now)
    };
    let w = world(NOW + 30);
    assert_eq!(w.lines(), Vec::<String>::new());
    assert_eq!(w.plan().requeue_after, Some(std::time::Duration::from_secs(571)));
    let w = world(NOW + 600);
    assert!(w.lines().is_empty(), "not strictly after yet: {:?}", w.lines());
    let w = world(NOW + 601);
    let s = w.last_status().unwrap();
    let p = s.conditions.iter().flatten().find(|c| c.type_ == PROGRESSING).unwrap();
    assert_eq!((p.status.as_str(), p.reason.as_deref()), ("False", Some(TIMED_OUT_REASON)));
    assert_eq!(p.message.as_deref(), Some(format!("ReplicaSet \"{new}\" has timed out progressing.").as_str()));
}

/// Scenario 31: without a deadline there is no Progressing condition, and
/// pausing writes none.
#[test]
fn no_deadline_no_progressing() {
    let w = World::new(
        DeploymentBuilder::new(10).deadline(None).paused(),
        [RsB::new("old", 10).revision("1").sized(10, 13)],
    );
    assert!(w.plan().actions().all(|a| match a {
        Action::UpdateDeploymentStatus { deployment } =>
            !conditions(deployment.status.as_ref().unwrap()).iter().any(|c| c.0 == PROGRESSING),
        _ => true,
    }));
    for pds in [None, Some(i32::MAX)] {
        let w = World::new(
            DeploymentBuilder::new(10).deadline(pds).condition(PROGRESSING, "True", RS_UPDATED_REASON, NOW - 5),
            [RsB::new("old", 10).revision("1").sized(10, 13)],
        );
        let s = w.last_status().unwrap();
        assert!(!conditions(&s).iter().any(|c| c.0 == PROGRESSING), "{pds:?}: {s:?}");
    }
}

/// Scenario 32: ReplicaFailure mirrored from the new RS.
#[test]
fn replica_failure_is_mirrored() {
    let new = hashed("v2");
    let w = World::new(
        DeploymentBuilder::new(3),
        [RsB::new(&new, 3).image("v2").revision("1").sized(3, 4).available(1, 1).failure("FailedCreate", "quota")],
    );
    let s = w.last_status().unwrap();
    assert!(conditions(&s).contains(&cond(REPLICA_FAILURE, "True", "FailedCreate")), "{s:?}");
}

// === claims ===

/// Scenario 34: an orphan with the current template is adopted (after the
/// re-check) and used as the new RS: FoundNewReplicaSet.
#[test]
fn orphan_is_adopted_as_the_new_replica_set() {
    let w = World::new(DeploymentBuilder::new(2), [RsB::new("mine", 2).image("v2").orphan()]);
    let lines = w.lines();
    assert_eq!(lines[..2], ["recheck", "adopt mine"]);
    assert!(!lines.iter().any(|l| l.starts_with("create")), "{lines:?}");
    let s = w.last_status().unwrap();
    assert!(conditions(&s).iter().any(|c| c.0 == PROGRESSING), "{s:?}");
    let first_status = w.plan().actions().find_map(|a| match a {
        Action::UpdateDeploymentStatus { deployment } => deployment.status.clone(),
        _ => None,
    });
    assert!(conditions(&first_status.unwrap()).contains(&cond(PROGRESSING, "True", FOUND_NEW_RS_REASON)));
    // Deleting orphans and other owners' ReplicaSets are left alone.
    let w = World::new(DeploymentBuilder::new(2), [RsB::new("x", 2).image("v2").orphan().deleting()]);
    assert!(!w.lines().iter().any(|l| l.starts_with("adopt")));
}

/// Scenario 35: an owned RS relabelled away is released.
#[test]
fn non_matching_owned_replica_set_is_released() {
    let w = World::new(
        DeploymentBuilder::new(1),
        [RsB::new("gone", 1).labels(&[("app", "other")]), RsB::new("cur", 1).image("v2")],
    );
    assert_eq!(w.lines()[0], "release gone");
}

/// Scenario 36: being deleted: status only; empty selector: SelectingAll.
#[test]
fn deleting_and_selecting_all() {
    let mut d = DeploymentBuilder::new(10).build();
    d.metadata.deletion_timestamp = Some(Time(ts(NOW - 1)));
    let w = World { d, rss: vec![Arc::new(rs("old", 10))], pods: vec![], now: ts(NOW) };
    assert!(w.lines().iter().all(|l| l.starts_with("status")), "{:?}", w.lines());

    let mut d = DeploymentBuilder::new(10).build();
    d.spec.as_mut().unwrap().selector = LabelSelector::default();
    d.metadata.generation = Some(2);
    let w = World { d, rss: vec![], pods: vec![], now: ts(NOW) };
    assert_eq!(
        w.lines(),
        [
            "event SelectingAll: This deployment is selecting all pods. A non-empty selector is required.",
            "status 0/0/0/0/0"
        ]
    );
}
