//! Rows of PersistentVolumeClaims (upstream `printPersistentVolumeClaim`):
//! the phase (Terminating once deleted), the bound volume, and for a bound
//! claim its capacity and access modes.

use jiff::Timestamp;
use serde_json::Value;

use super::access::{get, list, str_at, text};
use super::cells::{age, name};
use crate::object::BETA_STORAGE_CLASS_ANNOTATION;

pub(super) fn print_persistent_volume_claim(obj: &Value, now: Timestamp) -> Vec<Value> {
    let phase = match get(obj, &["metadata", "deletionTimestamp"]) {
        Some(_) => "Terminating",
        None => text(obj, &["status", "phase"]),
    };
    let volume = text(obj, &["spec", "volumeName"]);
    let (capacity, modes) = if volume.is_empty() {
        (String::new(), String::new())
    } else {
        (text(obj, &["status", "capacity", "storage"]).to_owned(), access_modes(list(obj, &["status", "accessModes"])))
    };
    let class = str_at(obj, &["metadata", "annotations", BETA_STORAGE_CLASS_ANNOTATION])
        .unwrap_or_else(|| text(obj, &["spec", "storageClassName"]));
    let attributes_class = str_at(obj, &["spec", "volumeAttributesClassName"]).unwrap_or("<unset>");
    let volume_mode = str_at(obj, &["spec", "volumeMode"]).unwrap_or("<unset>");
    vec![
        name(obj),
        Value::from(phase),
        Value::from(volume),
        Value::from(capacity),
        Value::from(modes),
        Value::from(class),
        Value::from(attributes_class),
        age(obj, now),
        Value::from(volume_mode),
    ]
}

/// Upstream `GetAccessModesAsString`: the modes present, abbreviated, in a
/// fixed order whatever the list's.
fn access_modes(modes: &[Value]) -> String {
    let has = |mode: &str| modes.iter().any(|m| m == mode);
    let order =
        [("ReadWriteOnce", "RWO"), ("ReadOnlyMany", "ROX"), ("ReadWriteMany", "RWX"), ("ReadWriteOncePod", "RWOP")];
    order.iter().filter(|(mode, _)| has(mode)).map(|(_, short)| *short).collect::<Vec<_>>().join(",")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn pending_and_bound_claims_print_as_kubectl_shows_them() {
        let now: Timestamp = "2024-06-01T12:00:00Z".parse().expect("valid time");
        let pending = json!({"metadata": {"name": "data", "creationTimestamp": "2024-06-01T11:59:00Z"},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}},
                "volumeMode": "Filesystem"},
            "status": {"phase": "Pending"}});
        assert_eq!(
            print_persistent_volume_claim(&pending, now),
            [
                json!("data"),
                json!("Pending"),
                json!(""),
                json!(""),
                json!(""),
                json!(""),
                json!("<unset>"),
                json!("60s"),
                json!("Filesystem")
            ]
        );
        let mut bound = pending.clone();
        bound["spec"]["volumeName"] = json!("pvc-1");
        bound["spec"]["storageClassName"] = json!("standard");
        bound["metadata"]["deletionTimestamp"] = json!("2024-06-01T12:00:00Z");
        bound["status"] = json!({"phase": "Bound", "capacity": {"storage": "1Gi"},
            "accessModes": ["ReadWriteMany", "ReadWriteOnce"]});
        assert_eq!(
            print_persistent_volume_claim(&bound, now)[1..7],
            [json!("Terminating"), json!("pvc-1"), json!("1Gi"), json!("RWO,RWX"), json!("standard"), json!("<unset>")]
        );
    }
}
