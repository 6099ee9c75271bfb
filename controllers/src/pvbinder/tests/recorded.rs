//! What the syncs ask the metrics to record (upstream's `metrics.Record*`
//! calls in `pv_controller.go`): the retroactive default class, and the
//! provisioning and deletion timed end to end.

use super::*;
use crate::pvbinder::metrics::{Metric, Operation};

fn started(key: &str, plugin: &str, operation: Operation) -> Metric {
    Metric::OperationStarted { key: key.to_owned(), plugin: plugin.to_owned(), operation }
}

fn ended(key: &str, failed: bool) -> Metric {
    Metric::OperationEnded { key: key.to_owned(), failed }
}

fn sync_one_claim(world: &mut World, claim: &PersistentVolumeClaim) {
    world.claims.insert(claim_key(claim), claim.clone());
    world.sync(|view, cx| sync_claim(view, claim, SETTINGS, cx)).unwrap();
}

#[test]
fn a_provisioning_is_timed_from_the_hand_over_to_the_binding() {
    let mut world =
        World { classes: vec![storage_class("external", "vendor.example.com/csi", "Immediate")], ..World::default() };
    let pending = claim("claim1", "uid1", "1Gi", "", "Pending", Some("external"), &[]);
    sync_one_claim(&mut world, &pending);
    assert_eq!(world.metrics, [started("default/claim1", "vendor.example.com/csi", Operation::Provision)]);
    // Its provisioner made a volume; the next sync binds the claim to it.
    let made = volume("pv1", "1Gi", "", "", "Available", D, "external", &[]);
    world.volumes.insert("pv1".to_owned(), made);
    world.metrics.clear();
    let annotated = world.claims["default/claim1"].clone();
    sync_one_claim(&mut world, &annotated);
    assert_eq!(world.metrics, [ended("default/claim1", false)]);
}

#[test]
fn a_migrated_class_is_timed_by_its_csi_driver_and_host_path_fails() {
    let classes = vec![
        storage_class("gp2", "kubernetes.io/aws-ebs", "Immediate"),
        storage_class("hp", "kubernetes.io/host-path", "Immediate"),
    ];
    let mut world = World { classes, ..World::default() };
    sync_one_claim(&mut world, &claim("claim2", "uid2", "1Gi", "", "Pending", Some("gp2"), &[]));
    assert_eq!(world.metrics, [started("default/claim2", "ebs.csi.aws.com", Operation::Provision)]);
    world.metrics.clear();
    sync_one_claim(&mut world, &claim("claim3", "uid3", "1Gi", "", "Pending", Some("hp"), &[]));
    let want =
        [started("default/claim3", "kubernetes.io/host-path", Operation::Provision), ended("default/claim3", true)];
    assert_eq!(world.metrics, want);
}

#[test]
fn no_provisioning_is_timed_without_a_provisioner() {
    let mut world = World::default();
    sync_one_claim(&mut world, &claim("claim4", "uid4", "1Gi", "", "Pending", Some("missing"), &[]));
    assert!(world.metrics.is_empty(), "{:?}", world.metrics);
}

#[test]
fn the_default_class_written_retroactively_is_counted() {
    let mut class = storage_class("standard", "vendor.example.com/csi", "Immediate");
    class.metadata.annotations =
        Some([("storageclass.kubernetes.io/is-default-class".to_owned(), "true".to_owned())].into());
    let mut world = World { classes: vec![class], ..World::default() };
    sync_one_claim(&mut world, &claim("claim5", "uid5", "1Gi", "", "Pending", None, &[]));
    assert_eq!(world.metrics, [Metric::RetroactiveClass { ok: true }]);
}

#[test]
fn a_deletion_is_timed_by_the_provisioner_of_the_volumes_class() {
    let mut world =
        World { classes: vec![storage_class("external", "vendor.example.com/csi", "Immediate")], ..World::default() };
    let mut released = volume("pv6", "1Gi", "uid6", "claim6", "Released", D, "external", &[]);
    released.metadata.annotations =
        Some([(ANN_DYNAMICALLY_PROVISIONED.to_owned(), "vendor.example.com/csi".to_owned())].into());
    world.volumes.insert("pv6".to_owned(), released.clone());
    world.sync(|view, cx| sync_volume(view, &released, SETTINGS, cx)).unwrap();
    assert_eq!(world.metrics, [started("pv6", "vendor.example.com/csi", Operation::Delete)]);
}

#[test]
fn a_deletion_no_plugin_can_do_counts_an_error() {
    let mut world = World::default();
    // A GCE PD volume of no class, provisioned by no one: no deleter.
    let released = volume("pv7", "1Gi", "uid7", "claim7", "Released", D, "", &[]);
    world.volumes.insert("pv7".to_owned(), released.clone());
    world.sync(|view, cx| sync_volume(view, &released, SETTINGS, cx)).unwrap();
    assert_eq!(world.metrics, [started("pv7", "N/A", Operation::Delete), ended("pv7", true)]);
}
