//! Upstream's `TestPVProtectionController`, row by row (the rows about a
//! failing write are the driver's retry, left to the runtime's tests).

use serde_json::{Value, json};

use super::*;

fn pv(metadata: Value, phase: Option<&str>) -> PersistentVolume {
    let mut object = json!({"metadata": metadata});
    if let Some(phase) = phase {
        object["status"] = json!({"phase": phase});
    }
    serde_json::from_value(object).expect("a PersistentVolume")
}

fn finalizers(decision: &Decision) -> Option<Vec<String>> {
    match decision {
        Decision::RemoveFinalizer(pv) | Decision::AddFinalizer(pv) => pv.metadata.finalizers.clone(),
        Decision::Nothing | Decision::KeepBound => None,
    }
}

const DELETED: &str = "2026-01-01T00:00:00Z";

#[test]
fn pv_without_finalizer_gets_it() {
    let decision = decide(&pv(json!({"name": "pv1"}), Some("Available")));
    assert!(matches!(decision, Decision::AddFinalizer(_)));
    assert_eq!(finalizers(&decision), Some(vec![PV_PROTECTION_FINALIZER.to_owned()]));
}

#[test]
fn pv_with_finalizer_needs_nothing() {
    let object = pv(json!({"name": "pv1", "finalizers": [PV_PROTECTION_FINALIZER]}), Some("Available"));
    assert!(!should_queue(&object));
    assert_eq!(decide(&object), Decision::Nothing);
}

#[test]
fn deleted_pv_with_finalizer_loses_it() {
    let object =
        pv(json!({"name": "pv1", "finalizers": [PV_PROTECTION_FINALIZER], "deletionTimestamp": DELETED}), None);
    assert!(should_queue(&object));
    let decision = decide(&object);
    assert!(matches!(decision, Decision::RemoveFinalizer(_)));
    assert_eq!(finalizers(&decision), None);
}

#[test]
fn deleted_bound_pv_keeps_finalizer() {
    let metadata = json!({"name": "pv1", "finalizers": [PV_PROTECTION_FINALIZER], "deletionTimestamp": DELETED});
    assert_eq!(decide(&pv(metadata.clone(), Some("Bound"))), Decision::KeepBound);
    for phase in ["Available", "Released", "Failed", "Pending"] {
        assert!(matches!(decide(&pv(metadata.clone(), Some(phase))), Decision::RemoveFinalizer(_)), "{phase}");
    }
}

#[test]
fn deleted_pv_keeps_other_finalizers() {
    let metadata =
        json!({"name": "pv1", "finalizers": ["other", PV_PROTECTION_FINALIZER], "deletionTimestamp": DELETED});
    assert_eq!(finalizers(&decide(&pv(metadata, Some("Released")))), Some(vec!["other".to_owned()]));
}

#[test]
fn deleted_pv_without_finalizer_is_not_queued() {
    let object = pv(json!({"name": "pv1", "finalizers": ["other"], "deletionTimestamp": DELETED}), None);
    assert!(!should_queue(&object));
    assert_eq!(decide(&object), Decision::Nothing);
}
