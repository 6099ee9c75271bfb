//! Revisions, rollback, history cleanup, naming and collisions.

use super::*;

// === revisions and rollback ===

/// Scenario 21: template set back to an old revision: that RS is reused
/// (revision 3, history "1"), no create.
#[test]
fn template_rollback_reuses_the_old_replica_set() {
    let w = World::new(
        DeploymentBuilder::new(3).image("v1"),
        [
            RsB::new("rs1", 0).revision("1").sized(3, 4),
            RsB::new("rs2", 3).image("v2").revision("2").sized(3, 4).created(5),
        ],
    );
    let plan = w.plan();
    let lines = describe_plan(&plan);
    assert!(!lines.iter().any(|l| l.starts_with("create")), "{lines:?}");
    let Some(Action::UpdateReplicaSet { replica_set }) = plan.actions().next() else { panic!("{lines:?}") };
    let a = replica_set.metadata.annotations.as_ref().unwrap();
    assert_eq!(replica_set.metadata.name.as_deref(), Some("rs1"));
    assert_eq!((a[REVISION_ANNOTATION].as_str(), a[REVISION_HISTORY_ANNOTATION].as_str()), ("3", "1"));
    // The next sync (annotations written) sets the Deployment's revision
    // and scales rs1 up under the rolling rules.
    let w = World::new(
        DeploymentBuilder::new(3).image("v1"),
        [
            RsB::new("rs1", 0).revision("3").annotation(REVISION_HISTORY_ANNOTATION, "1").sized(3, 4),
            RsB::new("rs2", 3).image("v2").revision("2").sized(3, 4).created(5),
        ],
    );
    let lines = w.lines();
    assert!(lines.contains(&"update rs1 1".to_string()), "{lines:?}");
    assert_eq!(w.last_deployment().unwrap().metadata.annotations.unwrap()[REVISION_ANNOTATION], "3");
}

/// Scenario 24: revisions {1, 4, x}: the new RS gets 5.
#[test]
fn new_revision_is_one_above_the_max() {
    let w = World::new(
        DeploymentBuilder::new(1),
        [
            RsB::new("a", 0).revision("1"),
            RsB::new("b", 0).image("b").revision("4"),
            RsB::new("c", 1).image("c").revision("x"),
        ],
    );
    let rs = created(&w.plan());
    assert_eq!(rs.metadata.annotations.unwrap()[REVISION_ANNOTATION], "5");
    assert_eq!(w.last_deployment().unwrap().metadata.annotations.unwrap()[REVISION_ANNOTATION], "5");
}

/// Scenario 22: the deprecated rollback annotation.
#[test]
fn deprecated_rollback_annotation() {
    let rss = || {
        [
            RsB::new("r1", 0).image("i1").revision("1"),
            RsB::new("r2", 0).image("i2").revision("2").created(1),
            RsB::new("r3", 3).image("v2").revision("3").created(2),
        ]
    };
    let w = World::new(DeploymentBuilder::new(3).annotation(ROLLBACK_TO_ANNOTATION, "0"), rss());
    assert_eq!(
        w.writes(),
        ["update deployment", "event DeploymentRollback: Rolled back deployment \"d\" to revision 2"]
    );
    let d = w.last_deployment().unwrap();
    assert_eq!(d.spec.unwrap().template, template("i2"));
    assert!(!d.metadata.annotations.unwrap().contains_key(ROLLBACK_TO_ANNOTATION));

    let w = World::new(DeploymentBuilder::new(3).annotation(ROLLBACK_TO_ANNOTATION, "7"), rss());
    assert_eq!(
        w.writes(),
        ["event DeploymentRollbackRevisionNotFound: Unable to find the revision to rollback to.", "update deployment"]
    );
    assert_eq!(w.last_deployment().unwrap().spec.unwrap().template, template("v2"));

    let w = World::new(DeploymentBuilder::new(3).annotation(ROLLBACK_TO_ANNOTATION, "3"), rss());
    assert_eq!(
        w.writes(),
        [
            "event DeploymentRollbackTemplateUnchanged: The rollback revision contains the same template as current deployment \"d\"",
            "update deployment"
        ]
    );

    let w = World::new(DeploymentBuilder::new(3).annotation(ROLLBACK_TO_ANNOTATION, "bogus"), rss());
    assert!(!w.writes().contains(&"update deployment".to_string()), "unparsable: ignored");
}

// === history ===

/// Scenario 23: limit 0, rollout complete: old RSes at 0 with no pods and
/// an observed generation are deleted; one still reporting a pod is kept.
#[test]
fn history_limit_zero_deletes_finished_old_replica_sets() {
    let new = hashed("v2");
    let complete = DeploymentStatus {
        observed_generation: Some(1),
        replicas: Some(2),
        updated_replicas: Some(2),
        available_replicas: Some(2),
        ready_replicas: Some(2),
        ..Default::default()
    };
    let w = World::new(
        DeploymentBuilder::new(2).history(0).status(complete),
        [
            RsB::new("gone", 0).revision("1"),
            RsB::new("lingering", 0).image("x").revision("2").available(1, 0),
            RsB::new("unobserved", 0).image("y").revision("3").generation(2),
            RsB::new(&new, 2).image("v2").revision("4").sized(2, 3).created(5),
        ],
    );
    let deletes: Vec<String> = w.lines().into_iter().filter(|l| l.starts_with("delete")).collect();
    assert_eq!(deletes, ["delete gone"]);
}

// === history (upstream TestDeploymentController_cleanupDeployment) ===

/// (old ReplicaSets as (spec, status replicas), limit, deletions).
#[test]
fn cleanup_deployment_table() {
    type Case = (&'static str, Vec<(i32, i32)>, i32, usize);
    let cases: Vec<Case> = vec![
        ("three empty, limit 1", vec![(0, 0), (0, 0), (0, 0)], 1, 2),
        ("only spec = status = 0 goes", vec![(0, 0), (0, 1), (1, 0), (1, 1)], 0, 1),
        ("two empty, limit 0", vec![(0, 0), (0, 0)], 0, 2),
        ("two busy, limit 0", vec![(1, 1), (1, 1)], 0, 0),
        ("none", vec![], 0, 0),
    ];
    let options = Options::default();
    for (name, olds, limit, want) in cases {
        let rss = olds
            .iter()
            .enumerate()
            .map(|(i, &(spec, st))| {
                RsB::new(&format!("foo-{i}"), spec)
                    .image(&format!("i{i}"))
                    .revision(&i.to_string())
                    .available(st, st)
                    .build()
            })
            .collect();
        let mut p = planner(DeploymentBuilder::new(1).history(limit).build(), rss, &options);
        let old: Vec<usize> = (0..olds.len()).collect();
        p.cleanup(&old);
        let deletes = p.plan.actions().filter(|a| matches!(a, Action::DeleteReplicaSet { .. })).count();
        assert_eq!(deletes, want, "{name}");
    }
    // Being deleted, or with an unobserved generation: kept.
    let rss =
        vec![RsB::new("deleting", 0).deleting().build(), RsB::new("unobserved", 0).image("x").generation(2).build()];
    let mut p = planner(DeploymentBuilder::new(1).history(0).build(), rss, &options);
    p.cleanup(&[0, 1]);
    assert!(p.plan.is_empty(), "{:?}", describe_plan(&p.plan));
    // No limit (unset or MaxInt32): nothing is cleaned.
    let mut d = DeploymentBuilder::new(1).build();
    d.spec.as_mut().unwrap().revision_history_limit = None;
    let mut p = planner(d, vec![rs("a", 0)], &options);
    p.cleanup(&[0]);
    assert!(p.plan.is_empty());
}

/// Upstream `TestFindNewReplicaSet`: the oldest ReplicaSet with the
/// template (ignoring the hash label) is the new one; ties by name.
#[test]
fn find_new_replica_set() {
    let mut with_hash = RsB::new("b-hashed", 1).image("v2").created(5).build();
    with_hash
        .spec
        .as_mut()
        .unwrap()
        .template
        .as_mut()
        .unwrap()
        .metadata
        .as_mut()
        .unwrap()
        .labels
        .as_mut()
        .unwrap()
        .insert(POD_TEMPLATE_HASH_LABEL.into(), "upstream".into());
    let cases = [
        ("older wins", vec![RsB::new("z", 1).image("v2").created(1).build(), with_hash.clone()], Some("z")),
        ("hash label ignored", vec![with_hash.clone(), RsB::new("old", 1).build()], Some("b-hashed")),
        (
            "same time: by name",
            vec![RsB::new("b", 1).image("v2").created(1).build(), RsB::new("a", 1).image("v2").created(1).build()],
            Some("a"),
        ),
        ("none", vec![RsB::new("old", 1).build()], None),
    ];
    let options = Options::default();
    for (name, rss, want) in cases {
        let mut p = planner(DeploymentBuilder::new(1).build(), rss, &options);
        let (new, _) = p.get_all_replica_sets_and_sync_revision(false).unwrap();
        assert_eq!(new.map(|i| p.name(i)).as_deref(), want, "{name}");
    }
}

// === collisions ===

/// Scenario 27: a collision bumps collisionCount nil → 1 → 2, and the next
/// sync hashes with it.
#[test]
fn collision_bumps_the_count() {
    let d = DeploymentBuilder::new(1).build();
    let plan = after_create_failure(&d, &CreateFailure::Collision, ts(NOW));
    let Some(Action::UpdateDeploymentStatus { deployment }) = plan.actions().next() else { panic!() };
    assert_eq!(deployment.status.as_ref().unwrap().collision_count, Some(1));
    let bumped = DeploymentBuilder::new(1).status(DeploymentStatus {
        collision_count: Some(1),
        observed_generation: Some(1),
        ..Default::default()
    });
    let w = World::new(bumped, []);
    let want = format!("d-{}", compute_hash(&template("v2"), Some(1)));
    assert_eq!(created(&w.plan()).metadata.name, Some(want));
}

/// Scenario 28 (the executor's check): an existing RS with our controller
/// and template is ours; anything else collides.
#[test]
fn already_exists_check() {
    let w = World::new(DeploymentBuilder::new(1), []);
    let planned = created(&w.plan());
    let mut same = planned.clone();
    same.metadata.uid = Some("x".into());
    assert!(is_same_replica_set(&same, &planned));
    let mut other_owner = planned.clone();
    other_owner.metadata.owner_references = None;
    assert!(!is_same_replica_set(&other_owner, &planned));
    let other_template = RsB::new("x", 1).image("v9").build();
    assert!(!is_same_replica_set(&other_template, &planned));
}

/// Other create errors: Progressing False ReplicaSetCreateError and a
/// Warning.
#[test]
fn create_error_sets_the_condition() {
    let d = DeploymentBuilder::new(1).build();
    let failure = CreateFailure::Error { replica_set: "d-x".into(), message: "quota".into() };
    let lines = describe_plan(&after_create_failure(&d, &failure, ts(NOW)));
    assert_eq!(
        lines,
        [
            format!("status 0/0/0/0/0 {PROGRESSING}={RS_CREATE_ERROR_REASON}"),
            "event ReplicaSetCreateError: Failed to create new replica set \"d-x\": quota".into()
        ]
    );
}
