//! Validation of PersistentVolumeClaims (upstream
//! `ValidatePersistentVolumeClaim`, `ValidatePersistentVolumeClaimUpdate`
//! and `ValidatePersistentVolumeClaimStatusUpdate`), with the feature gates
//! of 1.37 (RecoverVolumeExpansionFailure and VolumeAttributesClass on).
//!
//! A claim needs at least one access mode (of the four, ReadWriteOncePod
//! alone) and a positive storage request. Once created its spec is
//! immutable except that the volume name may be set once (the binding), a
//! bound claim's storage request may change (grow, or shrink while it stays
//! above its capacity), the volume attributes class may change (but not back to
//! unset or empty), and a storage class given by the old beta annotation
//! may move to `storageClassName`. As with pods, the `spec: Forbidden`
//! refusal ends with the paths that differ where upstream prints a
//! `cmp.Diff`. Not checked: data sources, and the allocated resources and
//! resize statuses of `/status`.

use serde_json::Value;

use super::access::{at, list, map, text};
use super::errors::{Errors, IMMUTABLE};
use super::meta::label_selector;
use super::pod_update::differences;
use super::quantity;
use super::render::go_quote;
use super::syntax::dns1123_subdomain;
use crate::object::BETA_STORAGE_CLASS_ANNOTATION;

/// `supportedAccessModes`, sorted as `sets.List` gives them.
const ACCESS_MODES: [&str; 4] = ["ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"];
/// `supportedVolumeModes`, sorted.
const VOLUME_MODES: [&str; 2] = ["Block", "Filesystem"];

/// `ValidatePersistentVolumeClaimSpec`, at `spec`.
pub(super) fn claim_spec(errs: &mut Errors, spec: &Value, path: &str) {
    let modes = list(spec, "accessModes");
    if modes.is_empty() {
        errs.required(&format!("{path}.accessModes"), "at least 1 access mode is required");
    }
    if !at(spec, "selector").is_null() {
        label_selector(errs, at(spec, "selector"), &format!("{path}.selector"));
    }
    let (mut once_pod, mut others) = (false, false);
    for mode in modes.iter().map(|m| m.as_str().unwrap_or("")) {
        if !ACCESS_MODES.contains(&mode) {
            errs.not_supported(&format!("{path}.accessModes"), go_quote(mode), &ACCESS_MODES);
        } else if mode == "ReadWriteOncePod" {
            once_pod = true;
        } else {
            others = true;
        }
    }
    if once_pod && others {
        errs.forbidden(&format!("{path}.accessModes"), "may not use ReadWriteOncePod with other access modes");
    }
    let storage_path = format!("{path}.resources[storage]");
    match at(at(at(spec, "resources"), "requests"), "storage").as_str() {
        None => errs.required(&storage_path, ""),
        Some(storage) if quantity::value(storage).is_some_and(|v| v <= 0.0) => {
            errs.invalid(&storage_path, go_quote(storage), "must be greater than zero");
        }
        Some(_) => {}
    }
    for field in ["storageClassName", "volumeAttributesClassName"] {
        let class = text(spec, field);
        if !class.is_empty() {
            for msg in dns1123_subdomain(class) {
                errs.invalid(&format!("{path}.{field}"), go_quote(class), &msg);
            }
        }
    }
    let mode = at(spec, "volumeMode");
    if let Some(mode) = mode.as_str().filter(|m| !VOLUME_MODES.contains(m)) {
        errs.not_supported(&format!("{path}.volumeMode"), go_quote(mode), &VOLUME_MODES);
    }
}

/// The spec rules of an update of the claim `old` to `new` (whole objects).
pub(super) fn claim_update(errs: &mut Errors, old: &Value, new: &Value) {
    let (old_spec, new_spec) = (at(old, "spec"), at(new, "spec"));
    let mut before = old_spec.clone();
    let mut after = new_spec.clone();
    // The PV controller binds a claim by setting its volume name, once.
    if text(old_spec, "volumeName").is_empty() {
        set(&mut before, "volumeName", at(new_spec, "volumeName"));
    }
    storage_class_update(errs, old, new, &mut after);
    if text(at(new, "status"), "phase") == "Bound" && !at(at(new_spec, "resources"), "requests").is_null() {
        after["resources"]["requests"]["storage"] = at(at(at(old_spec, "resources"), "requests"), "storage").clone();
    }
    set(&mut after, "volumeAttributesClassName", at(&before, "volumeAttributesClassName"));
    if before != after {
        let mut paths = Vec::new();
        differences(&before, &after, "spec", &mut paths);
        errs.forbidden(
            "spec",
            &format!(
                "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n{}",
                paths.join("\n")
            ),
        );
    }
    let requested = |spec: &Value| storage(at(at(spec, "resources"), "requests"));
    let new_size = requested(new_spec);
    if new_size < requested(old_spec) && new_size <= storage(at(at(old, "status"), "capacity")) {
        errs.forbidden("spec.resources.requests.storage", "field can not be less than status.capacity");
    }
    if at(new_spec, "volumeMode") != at(old_spec, "volumeMode") {
        errs.invalid("volumeMode", go_quote(text(new_spec, "volumeMode")), IMMUTABLE);
    }
    let (old_class, new_class) = (at(old_spec, "volumeAttributesClassName"), at(new_spec, "volumeAttributesClassName"));
    if !old_class.is_null() && old_class != new_class {
        let path = "spec.volumeAttributesClassName";
        match new_class.as_str() {
            None => errs.forbidden(path, "update from non-nil value to nil is forbidden"),
            Some("") => errs.forbidden(path, "update from non-nil value to an empty string is forbidden"),
            Some(_) => {}
        }
    }
}

/// The storage class moves of an update: from the beta annotation to the
/// field (`validateStorageClassUpgradeFromAnnotation`), or from unset to
/// set (`validateStorageClassUpgradeFromNil`); either is put back in
/// `after` for the spec comparison. Otherwise the annotation is immutable.
fn storage_class_update(errs: &mut Errors, old: &Value, new: &Value, after: &mut Value) {
    let annotation =
        |claim: &Value| map(at(claim, "metadata"), "annotations").get(BETA_STORAGE_CLASS_ANNOTATION).cloned();
    let (old_annotation, new_annotation) = (annotation(old), annotation(new));
    let old_class = at(at(old, "spec"), "storageClassName");
    let new_class = at(at(new, "spec"), "storageClassName");
    let from_annotation = old_annotation.as_ref().is_some_and(|old_value| {
        old_class.is_null()
            && new_class == old_value
            && new_annotation.as_ref().is_none_or(|new_value| new_value == old_value)
    });
    if from_annotation {
        set(after, "storageClassName", &Value::Null);
        return;
    }
    if old_annotation != new_annotation {
        let shown = new_annotation.as_ref().and_then(Value::as_str).unwrap_or("");
        errs.invalid(&format!("metadata.annotations.{BETA_STORAGE_CLASS_ANNOTATION}"), go_quote(shown), IMMUTABLE);
    }
    let from_nil = !new_class.is_null()
        && old_class.is_null()
        && old_annotation.as_ref().is_none_or(|old_value| new_class == old_value);
    if from_nil {
        set(after, "storageClassName", &Value::Null);
    }
}

/// `ValidatePersistentVolumeClaimStatusUpdate` beyond the metadata: access
/// modes still there (upstream's path is `Spec.accessModes`), and no
/// negative capacity.
pub(super) fn claim_status_update(errs: &mut Errors, new: &Value) {
    if list(at(new, "spec"), "accessModes").is_empty() {
        errs.required("Spec.accessModes", "");
    }
    for (resource, amount) in map(at(new, "status"), "capacity") {
        if let Some(negative) = amount.as_str().and_then(quantity::value).filter(|v| *v < 0.0) {
            // Upstream shows `Quantity.Value()`, the amount rounded up.
            let shown = format!("{}", negative.ceil());
            errs.invalid(&format!("status.capacity[{resource}]"), shown, "must be a valid resource quantity");
        }
    }
}

/// The `storage` quantity of a resource list (0 when absent or malformed).
fn storage(resources: &Value) -> f64 {
    at(resources, "storage").as_str().and_then(quantity::value).unwrap_or(0.0)
}

/// Sets `field` of an object to `value`, or removes it for null.
fn set(object: &mut Value, field: &str, value: &Value) {
    if let Some(fields) = object.as_object_mut() {
        if value.is_null() {
            fields.remove(field);
        } else {
            fields.insert(field.to_owned(), value.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    //! Upstream's `TestValidatePersistentVolumeClaim` and
    //! `TestValidatePersistentVolumeClaimUpdate` cases, as messages.

    use serde_json::json;

    use super::*;
    use crate::resources::Builtin;
    use crate::validation::{validate_create, validate_status_update, validate_update};

    // === utils ===

    /// A defaulted claim with `spec` (merged over one asking for 10Gi,
    /// ReadWriteOnce).
    fn claim(spec: Value) -> Value {
        let mut object = json!({"metadata": {"name": "data", "namespace": "default"},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "10Gi"}}}});
        if let (Some(fields), Some(extra)) = (object["spec"].as_object_mut(), spec.as_object()) {
            for (key, value) in extra {
                fields.insert(key.clone(), value.clone());
            }
        }
        crate::defaults::apply(Builtin::PersistentVolumeClaim, &mut object);
        object
    }

    /// `claim` bound to a volume with that capacity.
    fn bound(spec: Value, capacity: &str) -> Value {
        let mut object = claim(spec);
        object["spec"]["volumeName"] = json!("pvc-1");
        object["status"] = json!({"phase": "Bound", "capacity": {"storage": capacity}});
        object
    }

    fn create(object: &Value) -> Vec<String> {
        validate_create(Builtin::PersistentVolumeClaim, object).iter().map(ToString::to_string).collect()
    }

    fn update(old: &Value, new: &Value) -> Vec<String> {
        validate_update(Builtin::PersistentVolumeClaim, old, new).iter().map(ToString::to_string).collect()
    }

    // === tests ===

    #[test]
    fn claim_specs() {
        let cases: Vec<(Value, Vec<&str>)> = vec![
            (claim(json!({})), vec![]),
            (claim(json!({"accessModes": ["ReadWriteOncePod"], "storageClassName": "fast"})), vec![]),
            (
                claim(json!({"accessModes": []})),
                vec!["spec.accessModes: Required value: at least 1 access mode is required"],
            ),
            (
                claim(json!({"accessModes": ["fakemode"]})),
                vec![
                    "spec.accessModes: Unsupported value: \"fakemode\": supported values: \"ReadOnlyMany\", \"ReadWriteMany\", \"ReadWriteOnce\", \"ReadWriteOncePod\"",
                ],
            ),
            (
                claim(json!({"accessModes": ["ReadWriteOncePod", "ReadWriteMany"]})),
                vec!["spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes"],
            ),
            (claim(json!({"resources": {"requests": {}}})), vec!["spec.resources[storage]: Required value"]),
            (
                claim(json!({"resources": {"requests": {"storage": "0"}}})),
                vec!["spec.resources[storage]: Invalid value: \"0\": must be greater than zero"],
            ),
            (
                claim(json!({"volumeMode": "Fake"})),
                vec!["spec.volumeMode: Unsupported value: \"Fake\": supported values: \"Block\", \"Filesystem\""],
            ),
            (
                claim(json!({"selector": {"matchExpressions": [{"key": "k", "operator": "In"}]}})),
                vec![
                    "spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
                ],
            ),
        ];
        for (object, want) in cases {
            assert_eq!(create(&object), want, "{object}");
        }
        let bad_class = create(&claim(json!({"storageClassName": "Fast_Disks"})));
        assert_eq!(bad_class.len(), 1);
        assert!(bad_class[0].starts_with("spec.storageClassName: Invalid value: \"Fast_Disks\": a lowercase RFC 1123"));
    }

    #[test]
    fn the_volume_name_may_be_set_once_and_the_rest_of_the_spec_stays() {
        let old = claim(json!({}));
        assert!(update(&old, &claim(json!({"volumeName": "pvc-1"}))).is_empty());
        let named = claim(json!({"volumeName": "pvc-1"}));
        assert_eq!(
            update(&named, &claim(json!({"volumeName": "pvc-2"}))),
            [
                "spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n  spec.volumeName: \"pvc-1\" -> \"pvc-2\""
            ]
        );
        assert_eq!(
            update(&old, &claim(json!({"accessModes": ["ReadWriteMany"]}))),
            [
                "spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n  spec.accessModes[0]: \"ReadWriteOnce\" -> \"ReadWriteMany\""
            ]
        );
        let block = update(&old, &claim(json!({"volumeMode": "Block"})));
        assert_eq!(block.last().map(String::as_str), Some("volumeMode: Invalid value: \"Block\": field is immutable"));
    }

    #[test]
    fn a_bound_claims_request_may_grow_and_shrink_to_above_its_capacity() {
        let old = bound(json!({}), "10Gi");
        let resized = |size: &str| {
            let mut new = bound(json!({"resources": {"requests": {"storage": size}}}), "10Gi");
            new["status"] = old["status"].clone();
            update(&old, &new)
        };
        assert!(resized("20Gi").is_empty());
        assert_eq!(
            resized("5Gi"),
            ["spec.resources.requests.storage: Forbidden: field can not be less than status.capacity"]
        );
        let grown = bound(json!({"resources": {"requests": {"storage": "20Gi"}}}), "10Gi");
        let retried = bound(json!({"resources": {"requests": {"storage": "15Gi"}}}), "10Gi");
        assert!(update(&grown, &retried).is_empty(), "a failed expansion may be retried smaller");
        assert_eq!(update(&grown, &old).len(), 1, "but not down to the capacity");
        let pending = claim(json!({}));
        assert_eq!(
            update(&pending, &claim(json!({"resources": {"requests": {"storage": "20Gi"}}}))),
            [
                "spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n  spec.resources.requests.storage: \"10Gi\" -> \"20Gi\""
            ],
            "an unbound claim may not be resized"
        );
    }

    #[test]
    fn storage_classes_and_attribute_classes_move_only_as_upstream_allows() {
        let mut annotated = claim(json!({}));
        annotated["metadata"]["annotations"] = json!({BETA_STORAGE_CLASS_ANNOTATION: "gold"});
        let mut moved = claim(json!({"storageClassName": "gold"}));
        moved["metadata"]["annotations"] = annotated["metadata"]["annotations"].clone();
        assert!(update(&annotated, &moved).is_empty());
        let mut relabelled = annotated.clone();
        relabelled["metadata"]["annotations"][BETA_STORAGE_CLASS_ANNOTATION] = json!("silver");
        assert_eq!(
            update(&annotated, &relabelled),
            [
                "metadata.annotations.volume.beta.kubernetes.io/storage-class: Invalid value: \"silver\": field is immutable"
            ]
        );
        assert!(update(&claim(json!({})), &claim(json!({"storageClassName": "gold"}))).is_empty());
        let classed = claim(json!({"storageClassName": "gold"}));
        assert_eq!(update(&classed, &claim(json!({"storageClassName": "silver"}))).len(), 1);

        let with_class = claim(json!({"volumeAttributesClassName": "fast"}));
        assert!(update(&with_class, &claim(json!({"volumeAttributesClassName": "faster"}))).is_empty());
        assert_eq!(
            update(&with_class, &claim(json!({}))),
            ["spec.volumeAttributesClassName: Forbidden: update from non-nil value to nil is forbidden"]
        );
    }

    #[test]
    fn status_updates_need_access_modes_and_nonnegative_capacity() {
        let old = claim(json!({}));
        let mut new = old.clone();
        new["status"] = json!({"phase": "Bound", "capacity": {"storage": "-1Gi"}});
        let causes: Vec<String> = validate_status_update(Builtin::PersistentVolumeClaim, &old, &new)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(causes, ["status.capacity[storage]: Invalid value: -1073741824: must be a valid resource quantity"]);
    }
}
