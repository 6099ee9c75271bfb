//! `TestSync` cases 4-x (volumes), `TestSyncBlockVolume` 14-x (volume
//! modes), and provisioning and reclaiming as kcm-rs does them without
//! in-tree plugins.

use super::*;

fn volume_case(
    name: &'static str,
    volumes: Vec<PersistentVolume>,
    expected_volumes: Vec<PersistentVolume>,
    claims: Vec<PersistentVolumeClaim>,
    expected_claims: Vec<PersistentVolumeClaim>,
    events: &'static [&'static str],
) -> Case {
    Case { name, volumes, expected_volumes, claims, expected_claims, events, of_claim: false, fails: false }
}

fn with_message(mut volume: PersistentVolume, message: &str) -> PersistentVolume {
    volume.status.get_or_insert_with(Default::default).message = Some(message.to_owned());
    volume
}

#[test]
fn volumes_follow_their_claims() {
    let cases = [
        volume_case(
            "4-1 - pending volume",
            vec![volume("volume4-1", "10Gi", "", "", "Available", R, "", &[])],
            vec![volume("volume4-1", "10Gi", "", "", "Available", R, "", &[])],
            vec![],
            vec![],
            &[],
        ),
        volume_case(
            "4-2 - pending prebound volume",
            vec![volume("volume4-2", "10Gi", "", "claim4-2", "Available", R, "", &[])],
            vec![volume("volume4-2", "10Gi", "", "claim4-2", "Available", R, "", &[])],
            vec![],
            vec![],
            &[],
        ),
        volume_case(
            "4-3 - bound volume with missing claim",
            vec![volume("volume4-3", "10Gi", "uid4-3", "claim4-3", "Bound", R, "", &[])],
            vec![volume("volume4-3", "10Gi", "uid4-3", "claim4-3", "Released", R, "", &[])],
            vec![],
            vec![],
            &[],
        ),
        volume_case(
            "4-4 - volume bound to claim with different UID",
            vec![volume("volume4-4", "10Gi", "uid4-4", "claim4-4", "Bound", R, "", &[])],
            vec![volume("volume4-4", "10Gi", "uid4-4", "claim4-4", "Released", R, "", &[])],
            vec![claim("claim4-4", "uid4-4-x", "10Gi", "volume4-4", "Bound", None, &[DONE])],
            vec![claim("claim4-4", "uid4-4-x", "10Gi", "volume4-4", "Bound", None, &[DONE])],
            &[],
        ),
        volume_case(
            "4-5 - volume bound by controller to unbound claim",
            vec![volume("volume4-5", "10Gi", "uid4-5", "claim4-5", "Bound", R, "", &[BY])],
            vec![volume("volume4-5", "10Gi", "uid4-5", "claim4-5", "Bound", R, "", &[BY])],
            vec![claim("claim4-5", "uid4-5", "10Gi", "", "Pending", None, &[])],
            vec![claim("claim4-5", "uid4-5", "10Gi", "", "Pending", None, &[])],
            &[],
        ),
        volume_case(
            "4-6 - volume bound by to bound claim",
            vec![volume("volume4-6", "10Gi", "uid4-6", "claim4-6", "Available", R, "", &[])],
            vec![volume("volume4-6", "10Gi", "uid4-6", "claim4-6", "Bound", R, "", &[])],
            vec![claim("claim4-6", "uid4-6", "10Gi", "volume4-6", "Bound", None, &[])],
            vec![claim("claim4-6", "uid4-6", "10Gi", "volume4-6", "Bound", None, &[])],
            &[],
        ),
        volume_case(
            "4-7 - volume bound by controller to claim bound somewhere else",
            vec![volume("volume4-7", "10Gi", "uid4-7", "claim4-7", "Bound", R, "", &[BY])],
            vec![volume("volume4-7", "10Gi", "", "", "Available", R, "", &[])],
            vec![claim("claim4-7", "uid4-7", "10Gi", "volume4-7-x", "Bound", None, &[])],
            vec![claim("claim4-7", "uid4-7", "10Gi", "volume4-7-x", "Bound", None, &[])],
            &[],
        ),
        volume_case(
            "4-8 - volume bound by user to claim bound somewhere else",
            vec![volume("volume4-8", "10Gi", "uid4-8", "claim4-8", "Bound", R, "", &[])],
            vec![volume("volume4-8", "10Gi", "", "claim4-8", "Available", R, "", &[])],
            vec![claim("claim4-8", "uid4-8", "10Gi", "volume4-8-x", "Bound", None, &[])],
            vec![claim("claim4-8", "uid4-8", "10Gi", "volume4-8-x", "Bound", None, &[])],
            &[],
        ),
        volume_case(
            "4-9 - volume bound to bound claim, with PersistentVolumeReclaimDelete",
            vec![volume("volume4-9", "10Gi", "uid4-9", "claim4-9", "Available", D, "", &[])],
            vec![volume("volume4-9", "10Gi", "uid4-9", "claim4-9", "Bound", D, "", &[])],
            vec![claim("claim4-9", "uid4-9", "10Gi", "volume4-9", "Bound", None, &[])],
            vec![claim("claim4-9", "uid4-9", "10Gi", "volume4-9", "Bound", None, &[])],
            &[],
        ),
        volume_case(
            "4-10 - volume bound to missing claim",
            vec![volume("volume4-10", "10Gi", "uid4-10", "claim4-10", "Available", D, "", &[])],
            vec![with_message(
                volume("volume4-10", "10Gi", "uid4-10", "claim4-10", "Failed", D, "", &[]),
                "error getting deleter volume plugin for volume \"volume4-10\": no volume plugin matched",
            )],
            vec![],
            vec![],
            &["Warning VolumeFailedDelete"],
        ),
    ];
    for case in cases {
        run(case, World::default());
    }
}

#[test]
fn a_volume_asks_the_api_server_for_a_claim_its_cache_lacks() {
    // 4-11: the claim is on the API server only.
    let mut world = World::default();
    let unseen = claim("claim4-11", "uid4-11", "10Gi", "volume4-11", "Bound", None, &[]);
    world.unseen_claims.insert(claim_key(&unseen), unseen);
    run(
        volume_case(
            "4-11 - volume bound to unknown claim",
            vec![volume("volume4-11", "10Gi", "uid4-11", "claim4-11", "Available", D, "", &[])],
            vec![volume("volume4-11", "10Gi", "uid4-11", "claim4-11", "Bound", D, "", &[])],
            vec![],
            vec![],
            &[],
        ),
        world,
    );
    // 4-12: the cache holds the claim's old incarnation, the API server the
    // new one the volume is bound to.
    let mut world = World::default();
    let newer = claim("claim4-12", "uid4-12-new", "10Gi", "volume4-12", "Bound", None, &[]);
    world.unseen_claims.insert(claim_key(&newer), newer);
    let older = claim("claim4-12", "uid4-12", "10Gi", "volume4-12", "Bound", None, &[]);
    run(
        volume_case(
            "4-12 - volume bound to newest claim but not updated to local cache",
            vec![volume("volume4-12", "10Gi", "uid4-12-new", "claim4-12", "Available", D, "", &[])],
            vec![volume("volume4-12", "10Gi", "uid4-12-new", "claim4-12", "Bound", D, "", &[])],
            vec![older.clone()],
            vec![older],
            &[],
        ),
        world,
    );
}

#[test]
fn volume_modes_must_match() {
    let block = |v| with_mode(v, "Block");
    let block_claim = |c| with_claim_mode(c, "Block");
    let cases = [
        Case {
            of_claim: true,
            ..volume_case(
                "14-1 - binding to volumeMode block",
                vec![block(volume("volume14-1", "10Gi", "", "", "Available", R, "", &[]))],
                vec![block(volume("volume14-1", "10Gi", "uid14-1", "claim14-1", "Bound", R, "", &[BY]))],
                vec![block_claim(claim("claim14-1", "uid14-1", "10Gi", "", "Pending", None, &[]))],
                vec![block_claim(claim("claim14-1", "uid14-1", "10Gi", "volume14-1", "Bound", None, &[BY, DONE]))],
                &[],
            )
        },
        Case {
            of_claim: true,
            ..volume_case(
                "14-3 - do not bind pv volumeMode filesystem and pvc volumeMode block",
                vec![volume("volume14-3", "10Gi", "", "", "Available", R, "", &[])],
                vec![volume("volume14-3", "10Gi", "", "", "Available", R, "", &[])],
                vec![block_claim(claim("claim14-3", "uid14-3", "10Gi", "", "Pending", None, &[]))],
                vec![block_claim(claim("claim14-3", "uid14-3", "10Gi", "", "Pending", None, &[]))],
                &["Normal FailedBinding"],
            )
        },
        Case {
            of_claim: true,
            ..volume_case(
                "14-8 - do not bind when pvc is prebound to pv with mismatching volumeModes",
                vec![block(volume("volume14-8", "10Gi", "", "", "Available", R, "", &[]))],
                vec![block(volume("volume14-8", "10Gi", "", "", "Available", R, "", &[]))],
                vec![claim("claim14-8", "uid14-8", "10Gi", "volume14-8", "Pending", None, &[])],
                vec![claim("claim14-8", "uid14-8", "10Gi", "volume14-8", "Pending", None, &[])],
                &["Warning VolumeMismatch"],
            )
        },
        volume_case(
            "14-13 - output warning when pv is prebound to pvc with different volumeModes",
            vec![block(volume("volume14-13", "10Gi", "uid14-13", "claim14-13", "Available", R, "", &[BY]))],
            vec![block(volume("volume14-13", "10Gi", "uid14-13", "claim14-13", "Available", R, "", &[BY]))],
            vec![claim("claim14-13", "uid14-13", "10Gi", "", "Pending", None, &[])],
            vec![claim("claim14-13", "uid14-13", "10Gi", "", "Pending", None, &[])],
            &["Warning VolumeMismatch", "Warning VolumeMismatch"],
        ),
    ];
    for case in cases {
        run(case, World::default());
    }
}

#[test]
fn a_volume_pre_bound_to_an_unbound_claim_queues_the_claim() {
    let mut world = World::default();
    world.volumes.insert(
        "volume14-14".to_owned(),
        with_mode(volume("volume14-14", "10Gi", "uid14-14", "claim14-14", "Available", R, "", &[BY]), "Block"),
    );
    let unbound = with_claim_mode(claim("claim14-14", "uid14-14", "10Gi", "", "Pending", None, &[]), "Block");
    world.claims.insert(claim_key(&unbound), unbound);
    let volume = world.volumes["volume14-14"].clone();
    world.sync(|view, cx| sync_volume(view, &volume, SETTINGS, cx)).unwrap();
    assert_eq!(world.queued, ["default/claim14-14"]);
    assert!(world.events.is_empty(), "{:?}", world.events);
}

/// Runs the claim's sync in `world` and returns what it left of the claim.
fn sync_one_claim(world: &mut World, claim: &PersistentVolumeClaim) -> PersistentVolumeClaim {
    world.claims.insert(claim_key(claim), claim.clone());
    world.sync(|view, cx| sync_claim(view, claim, SETTINGS, cx)).unwrap();
    world.claims[&claim_key(claim)].clone()
}

#[test]
fn a_claim_of_an_external_class_is_handed_to_its_provisioner() {
    let mut world =
        World { classes: vec![storage_class("external", "vendor.example.com/csi", "Immediate")], ..World::default() };
    let pending = claim("claim11-1", "uid11-1", "1Gi", "", "Pending", Some("external"), &[]);
    let claim = sync_one_claim(&mut world, &pending);
    let annotations = claim.metadata.annotations.unwrap_or_default();
    assert_eq!(annotations.get(ANN_STORAGE_PROVISIONER).map(String::as_str), Some("vendor.example.com/csi"));
    assert_eq!(annotations.get(ANN_BETA_STORAGE_PROVISIONER).map(String::as_str), Some("vendor.example.com/csi"));
    assert_eq!(world.events, ["Normal ExternalProvisioning"]);
}

#[test]
fn a_claim_of_a_migrated_in_tree_class_is_handed_to_its_csi_driver() {
    let mut world =
        World { classes: vec![storage_class("gp2", "kubernetes.io/aws-ebs", "Immediate")], ..World::default() };
    let pending = claim("claim11-2", "uid11-2", "1Gi", "", "Pending", Some("gp2"), &[]);
    let claim = sync_one_claim(&mut world, &pending);
    let annotations = claim.metadata.annotations.unwrap_or_default();
    assert_eq!(annotations.get(ANN_STORAGE_PROVISIONER).map(String::as_str), Some("ebs.csi.aws.com"));
    // Upstream's real migration manager does not count the CSI driver as
    // migrated, so the claim carries no `migrated-to`.
    assert_eq!(annotations.get(ANN_MIGRATED_TO), None);
    assert_eq!(world.events, ["Normal ExternalProvisioning"]);
}

#[test]
fn provisioning_fails_with_an_event_for_a_missing_class_or_in_tree_provisioner() {
    let classes = vec![
        storage_class("unknown-internal", "kubernetes.io/unknown", "Immediate"),
        storage_class("host-path", "kubernetes.io/host-path", "Immediate"),
    ];
    for class in ["missing", "unknown-internal", "host-path"] {
        let mut world = World { classes: classes.clone(), ..World::default() };
        let pending = claim("claim11-3", "uid11-3", "1Gi", "", "Pending", Some(class), &[]);
        let claim = sync_one_claim(&mut world, &pending);
        assert_eq!(world.events, ["Warning ProvisioningFailed"], "{class}");
        assert_eq!(claim_phase(&claim), "Pending", "{class}");
    }
}

#[test]
fn provisioning_is_skipped_when_disabled() {
    let mut world =
        World { classes: vec![storage_class("external", "vendor.example.com/csi", "Immediate")], ..World::default() };
    let pending = claim("claim11-4", "uid11-4", "1Gi", "", "Pending", Some("external"), &[]);
    world.claims.insert(claim_key(&pending), pending.clone());
    let settings = Settings { dynamic_provisioning: false, ..SETTINGS };
    world.sync(|view, cx| sync_claim(view, &pending, settings, cx)).unwrap();
    assert!(world.events.is_empty());
    assert_eq!(world.version, 0, "nothing written");
}

#[test]
fn a_claim_without_a_class_gets_the_newest_default_class() {
    let default = |name: &str, created: i64| {
        let mut class = storage_class(name, "vendor.example.com/csi", "Immediate");
        class.metadata.annotations =
            Some([("storageclass.kubernetes.io/is-default-class".to_owned(), "true".to_owned())].into());
        class.metadata.creation_timestamp =
            Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(jiff::Timestamp::from_second(created).unwrap()));
        class
    };
    let mut world = World {
        classes: vec![default("older", 10), default("newer", 20), storage_class("other", "x", "Immediate")],
        ..World::default()
    };
    let pending = claim("claim12-1", "uid12-1", "1Gi", "", "Pending", None, &[]);
    let claim = sync_one_claim(&mut world, &pending);
    assert_eq!(claim.spec.and_then(|s| s.storage_class_name).as_deref(), Some("newer"));
    assert!(world.events.is_empty());
}

#[test]
fn a_released_volume_is_deleted_by_its_external_provisioner_not_here() {
    let mut world = World::default();
    let mut released = volume("volume8-1", "1Gi", "uid8-1", "claim8-1", "Released", D, "", &[]);
    released.metadata.annotations =
        Some([(ANN_DYNAMICALLY_PROVISIONED.to_owned(), "vendor.example.com/csi".to_owned())].into());
    world.volumes.insert("volume8-1".to_owned(), released.clone());
    world.sync(|view, cx| sync_volume(view, &released, SETTINGS, cx)).unwrap();
    assert_eq!(world.volumes["volume8-1"], released, "left to the external provisioner");
    assert!(world.events.is_empty());
}

#[test]
fn recycling_fails_with_an_event_saying_why() {
    let mut world = World::default();
    let bound = volume("volume6-1", "1Gi", "uid6-1", "claim6-1", "Bound", "Recycle", "", &[]);
    world.volumes.insert("volume6-1".to_owned(), bound.clone());
    world.sync(|view, cx| sync_volume(view, &bound, SETTINGS, cx)).unwrap();
    let failed = &world.volumes["volume6-1"];
    assert_eq!(volume_phase(failed), "Failed");
    assert_eq!(
        failed.status.as_ref().and_then(|s| s.message.as_deref()),
        Some("No recycler plugin found for the volume!")
    );
    assert_eq!(world.events, ["Warning VolumeFailedRecycle"]);
}

#[test]
fn an_unknown_reclaim_policy_fails_the_volume() {
    let mut world = World::default();
    let bound = volume("volume7-1", "1Gi", "uid7-1", "claim7-1", "Bound", "Sometimes", "", &[]);
    world.volumes.insert("volume7-1".to_owned(), bound.clone());
    world.sync(|view, cx| sync_volume(view, &bound, SETTINGS, cx)).unwrap();
    assert_eq!(volume_phase(&world.volumes["volume7-1"]), "Failed");
    assert_eq!(world.events, ["Warning VolumeUnknownReclaimPolicy"]);
}
