//! Upstream's `TestVACProtectionController`, row by row: each row's class,
//! volume or claim event goes through [`should_queue`] or the names the
//! object referred to ([`released`] for an update, all of them for a
//! delete), each queued class through [`decide`] with the row's cached
//! claims and volumes, and the writes made are compared with upstream's
//! expected actions (the rows about a failing write are the driver's
//! retry, left to the runtime's tests).

use serde_json::{Value, json};

use super::*;

// === fixtures (upstream's) ===

const DELETED: &str = "2026-01-01T00:00:00Z";

fn vac(finalizer: bool, deleted: bool) -> VolumeAttributesClass {
    let mut metadata = json!({"name": "vac1"});
    if finalizer {
        metadata["finalizers"] = json!([VAC_PROTECTION_FINALIZER]);
    }
    if deleted {
        metadata["deletionTimestamp"] = json!(DELETED);
    }
    serde_json::from_value(json!({"metadata": metadata, "driverName": "csi.example.com"})).expect("a class")
}

fn pv(name: &str, class: &str) -> PersistentVolume {
    serde_json::from_value(json!({"metadata": {"name": name}, "spec": {"volumeAttributesClassName": class}}))
        .expect("a volume")
}

fn pvc(name: &str, spec: &str, status: Value) -> PersistentVolumeClaim {
    serde_json::from_value(json!({"metadata": {"name": name, "namespace": "default"},
        "spec": {"volumeAttributesClassName": spec}, "status": status}))
    .expect("a claim")
}

/// The cache and the one event of a row.
#[derive(Default)]
struct Row {
    vac: Option<VolumeAttributesClass>,
    pvs: Vec<PersistentVolume>,
    pvcs: Vec<PersistentVolumeClaim>,
    event: Option<Event>,
}

enum Event {
    Vac,
    PvUpdated(Box<(PersistentVolume, PersistentVolume)>),
    PvDeleted(Box<PersistentVolume>),
    PvcUpdated(Box<(PersistentVolumeClaim, PersistentVolumeClaim)>),
    PvcDeleted(Box<PersistentVolumeClaim>),
}

/// What the controller writes for the row: `Some(finalizers)` of the one
/// class update it makes, `None` when it makes none.
fn run(row: Row) -> Option<Option<Vec<String>>> {
    let Row { vac, mut pvs, mut pvcs, event } = row;
    let queued: Vec<String> = match event.expect("an event") {
        Event::Vac => vac.iter().filter(|v| should_queue(v)).filter_map(|v| v.metadata.name.clone()).collect(),
        Event::PvUpdated(pair) => {
            let (old, new) = *pair;
            let names = released(&pv_class_names(&old), &pv_class_names(&new));
            pvs.push(new);
            names
        }
        Event::PvDeleted(old) => pv_class_names(&old),
        Event::PvcUpdated(pair) => {
            let (old, new) = *pair;
            let names = released(&pvc_class_names(&old), &pvc_class_names(&new));
            pvcs.push(new);
            names
        }
        Event::PvcDeleted(old) => pvc_class_names(&old),
    };
    let mut writes = Vec::new();
    for name in queued {
        let Some(vac) = vac.as_ref().filter(|v| v.metadata.name.as_deref() == Some(&name)) else { continue };
        let in_use = pvs.iter().any(|p| pv_class_names(p).contains(&name))
            || pvcs.iter().any(|p| pvc_class_names(p).contains(&name));
        match decide(vac, in_use) {
            Decision::RemoveFinalizer(v) | Decision::AddFinalizer(v) => writes.push(v.metadata.finalizers),
            Decision::Nothing | Decision::KeepInUse => {}
        }
    }
    assert!(writes.len() <= 1, "{writes:?}");
    writes.pop()
}

fn removed() -> Option<Option<Vec<String>>> {
    Some(None)
}

// === class events ===

#[test]
fn vac_without_finalizer_gets_it() {
    let row = Row { vac: Some(vac(false, false)), event: Some(Event::Vac), ..Row::default() };
    assert_eq!(run(row), Some(Some(vec![VAC_PROTECTION_FINALIZER.to_owned()])));
}

#[test]
fn vac_with_finalizer_needs_nothing() {
    let row = Row { vac: Some(vac(true, false)), event: Some(Event::Vac), ..Row::default() };
    assert_eq!(run(row), None);
}

#[test]
fn deleted_vac_with_finalizer_loses_it() {
    let row = Row { vac: Some(vac(true, true)), event: Some(Event::Vac), ..Row::default() };
    assert_eq!(run(row), removed());
}

#[test]
fn deleted_vac_referenced_by_a_pv_keeps_it() {
    let row =
        Row { vac: Some(vac(true, true)), pvs: vec![pv("pv1", "vac1")], event: Some(Event::Vac), ..Row::default() };
    assert_eq!(run(row), None);
}

#[test]
fn deleted_vac_referenced_by_a_pvc_keeps_it() {
    let pvcs = vec![pvc("pvc1", "vac1", json!({}))];
    let row = Row { vac: Some(vac(true, true)), pvcs, event: Some(Event::Vac), ..Row::default() };
    assert_eq!(run(row), None);
}

// === volume events ===

#[test]
fn pv_changing_class_frees_the_deleted_one() {
    let event = Event::PvUpdated(Box::new((pv("pv1", "vac1"), pv("pv1", "vac2"))));
    assert_eq!(run(Row { vac: Some(vac(true, true)), event: Some(event), ..Row::default() }), removed());
}

#[test]
fn pv_deleted_frees_the_deleted_class() {
    let event = Event::PvDeleted(Box::new(pv("pv1", "vac1")));
    assert_eq!(run(Row { vac: Some(vac(true, true)), event: Some(event), ..Row::default() }), removed());
}

#[test]
fn pv_deleted_but_another_pv_holds_the_class() {
    let row = Row {
        vac: Some(vac(true, true)),
        pvs: vec![pv("pv2", "vac1")],
        event: Some(Event::PvDeleted(Box::new(pv("pv1", "vac1")))),
        ..Row::default()
    };
    assert_eq!(run(row), None);
}

#[test]
fn pv_deleted_but_a_pvc_holds_the_class() {
    let row = Row {
        vac: Some(vac(true, true)),
        pvcs: vec![pvc("pvc1", "vac1", json!({}))],
        event: Some(Event::PvDeleted(Box::new(pv("pv1", "vac1")))),
        ..Row::default()
    };
    assert_eq!(run(row), None);
}

// === claim events ===

#[test]
fn pvc_changing_class_frees_the_deleted_one() {
    let event = Event::PvcUpdated(Box::new((pvc("pvc1", "vac1", json!({})), pvc("pvc1", "vac2", json!({})))));
    assert_eq!(run(Row { vac: Some(vac(true, true)), event: Some(event), ..Row::default() }), removed());
}

#[test]
fn pvc_changing_class_while_its_status_still_names_it() {
    let current = pvc("pvc1", "vac2", json!({"currentVolumeAttributesClassName": "vac1"}));
    let event = Event::PvcUpdated(Box::new((pvc("pvc1", "vac1", json!({})), current)));
    assert_eq!(run(Row { vac: Some(vac(true, true)), event: Some(event), ..Row::default() }), None);
}

#[test]
fn pvc_changing_class_while_its_target_status_still_names_it() {
    let target = pvc(
        "pvc1",
        "vac2",
        json!({"modifyVolumeStatus": {"targetVolumeAttributesClassName": "vac1", "status": "InProgress"}}),
    );
    let event = Event::PvcUpdated(Box::new((pvc("pvc1", "vac1", json!({})), target)));
    assert_eq!(run(Row { vac: Some(vac(true, true)), event: Some(event), ..Row::default() }), None);
}

#[test]
fn pvc_deleted_but_another_pvc_holds_the_class() {
    let row = Row {
        vac: Some(vac(true, true)),
        pvcs: vec![pvc("pvc2", "vac1", json!({}))],
        event: Some(Event::PvcDeleted(Box::new(pvc("pvc1", "vac1", json!({}))))),
        ..Row::default()
    };
    assert_eq!(run(row), None);
}

#[test]
fn pvc_deleted_but_a_pv_holds_the_class() {
    let row = Row {
        vac: Some(vac(true, true)),
        pvs: vec![pv("pv1", "vac1")],
        event: Some(Event::PvcDeleted(Box::new(pvc("pvc1", "vac1", json!({}))))),
        ..Row::default()
    };
    assert_eq!(run(row), None);
}

// === beyond upstream's table ===

#[test]
fn a_claim_names_each_class_once_and_other_finalizers_stay() {
    let claim = pvc(
        "pvc1",
        "gold",
        json!({"currentVolumeAttributesClassName": "gold", "modifyVolumeStatus": {"targetVolumeAttributesClassName": "silver", "status": "InProgress"}}),
    );
    assert_eq!(pvc_class_names(&claim), ["gold", "silver"]);
    assert!(pv_class_names(&pv("pv1", "")).is_empty());
    let mut class = vac(true, true);
    class.metadata.finalizers = Some(vec!["other".to_owned(), VAC_PROTECTION_FINALIZER.to_owned()]);
    let Decision::RemoveFinalizer(freed) = decide(&class, false) else { panic!("removed") };
    assert_eq!(freed.metadata.finalizers, Some(vec!["other".to_owned()]));
    assert_eq!(decide(&class, true), Decision::KeepInUse);
}
