//! The API server's encoding of built-in objects: it decodes a write into
//! its Go types and encodes what it stores from them, so an optional list
//! or map left empty (`ownerReferences: []` after a patch removed the last
//! owner, `labels: {}`) is not stored: its field is `omitempty`. kube-sim
//! stores JSON, so it drops those fields itself.
//!
//! Which fields are optional comes from the k8s-openapi schemas (the type
//! tree `crate::patch` walks for strategic merge patch): a field in its
//! type's `required` list is written always (`PodSpec.containers`), any
//! other is `omitempty`, except the few upstream tags differently
//! ([`ALWAYS_WRITTEN`]). An empty struct is still written by Go (`status:
//! {}`). For scalars the schema does not say whether the Go field is a
//! pointer (a pointer's `0` or `""` is kept, a plain field's is not): the
//! plain `omitempty` ones are listed in [`zeros`], taken from the Go types,
//! and their zero values dropped (a DaemonSet status's
//! `updatedNumberScheduled: 0` is not stored, a ReplicaSet status's
//! `terminatingReplicas: 0` is). Custom resources are stored as written,
//! as the API server keeps unstructured JSON.

use serde_json::Value;

use crate::patch::Ty;
use crate::resources::Builtin;

mod zeros;

/// Optional in the schema, but tagged without `omitempty` in the Go type:
/// (definition, field). An empty list of these stays.
const ALWAYS_WRITTEN: &[(&str, &str)] = &[
    ("io.k8s.api.rbac.v1.ClusterRole", "rules"),
    ("io.k8s.api.rbac.v1.Role", "rules"),
    ("io.k8s.api.core.v1.ContainerImage", "names"),
    ("io.k8s.api.discovery.v1.EndpointSlice", "endpoints"),
    ("io.k8s.api.discovery.v1.EndpointSlice", "ports"),
];

/// [`ALWAYS_WRITTEN`] lists that Go writes as `null` when unset (a nil
/// slice): an EndpointSlice without endpoints reads `endpoints: null`.
const NULL_WHEN_UNSET: &[(&str, &str)] =
    &[("io.k8s.api.discovery.v1.EndpointSlice", "endpoints"), ("io.k8s.api.discovery.v1.EndpointSlice", "ports")];

/// Drops the empty optional lists and maps of an object of `kind`, at any
/// depth.
pub fn drop_empty(kind: Builtin, object: &mut Value) {
    walk(object, Ty::root(kind));
}

/// Drops the empty optional collections under `value`, of type `ty`.
fn walk(value: &mut Value, ty: Ty) {
    match value {
        Value::Array(items) => {
            let item_ty = ty.items();
            for item in items {
                walk(item, item_ty);
            }
        }
        Value::Object(fields) => {
            let Some(schema) = ty.schema else { return };
            let is_struct = schema.get("properties").is_some();
            fields.retain(|key, child| {
                if !(child.is_array() || child.is_object()) {
                    // Most scalars are not zero: the table is looked up last.
                    let omitted =
                        is_struct && is_zero(child) && ty.name.is_some_and(|name| zeros::is_zero_omitted(name, key));
                    return !omitted;
                }
                let field_ty = ty.field_type(key);
                walk(child, field_ty);
                !(is_struct && is_empty_collection(child, field_ty) && omitted(ty, schema, key))
            });
            for (_, key) in NULL_WHEN_UNSET.iter().filter(|(name, _)| ty.name == Some(*name)) {
                fields.entry(*key).or_insert(Value::Null);
            }
        }
        _ => {}
    }
}

/// Whether the scalar `value` is Go's zero value: `0`, `""` or `false`.
fn is_zero(value: &Value) -> bool {
    match value {
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty(),
        Value::Bool(b) => !b,
        _ => false,
    }
}

/// Whether `value` is an empty list, or an empty map of a map type.
fn is_empty_collection(value: &Value, ty: Ty) -> bool {
    match value {
        Value::Array(items) => items.is_empty(),
        Value::Object(fields) => {
            fields.is_empty()
                && ty.schema.is_some_and(|s| s.get("properties").is_none() && s.get("additionalProperties").is_some())
        }
        _ => false,
    }
}

/// Whether field `key` of the struct type `ty` is `omitempty`.
fn omitted(ty: Ty, schema: &Value, key: &str) -> bool {
    let required = schema.get("required").and_then(Value::as_array).is_some_and(|r| r.iter().any(|f| f == key));
    let always = ty.name.is_some_and(|name| ALWAYS_WRITTEN.contains(&(name, key)));
    !required && !always
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn endpoint_slice_lists_are_written_even_unset() {
        let mut slice = json!({"metadata": {"name": "s"}, "addressType": "IPv4", "ports": []});
        drop_empty(Builtin::EndpointSlice, &mut slice);
        assert_eq!(slice, json!({"metadata": {"name": "s"}, "addressType": "IPv4", "ports": [], "endpoints": null}));
    }

    #[test]
    fn empty_optional_lists_and_maps_go_at_any_depth() {
        let mut rs = json!({"metadata": {"name": "r", "ownerReferences": [], "labels": {}, "annotations": {"a": ""}},
            "spec": {"selector": {"matchLabels": {"app": "r"}, "matchExpressions": []},
                "template": {"metadata": {"labels": {"app": "r"}},
                    "spec": {"containers": [{"name": "c", "image": "i", "env": [], "resources": {"limits": {}}}],
                        "volumes": []}}},
            "status": {}});
        drop_empty(Builtin::ReplicaSet, &mut rs);
        assert_eq!(
            rs,
            json!({"metadata": {"name": "r", "annotations": {"a": ""}},
                "spec": {"selector": {"matchLabels": {"app": "r"}},
                    "template": {"metadata": {"labels": {"app": "r"}},
                        "spec": {"containers": [{"name": "c", "image": "i", "resources": {}}]}}},
                "status": {}})
        );
    }

    #[test]
    fn required_fields_and_upstream_exceptions_stay_empty() {
        let mut pod = json!({"spec": {"containers": []}});
        drop_empty(Builtin::Pod, &mut pod);
        assert_eq!(pod, json!({"spec": {"containers": []}}));
        let mut role = json!({"metadata": {"name": "r"}, "rules": []});
        drop_empty(Builtin::ClusterRole, &mut role);
        assert_eq!(role["rules"], json!([]));
    }

    #[test]
    fn zero_values_of_plain_omitempty_scalars_go_and_those_of_pointers_stay() {
        // DaemonSetStatus: updatedNumberScheduled, numberAvailable,
        // numberUnavailable and observedGeneration are plain int32/int64
        // omitempty; currentNumberScheduled is always written.
        let mut ds = json!({"metadata": {"name": "d", "namespace": "default", "generation": 1},
            "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "", "imagePullPolicy": ""}],
                "hostNetwork": false}}},
            "status": {"currentNumberScheduled": 0, "numberMisscheduled": 0, "desiredNumberScheduled": 0,
                "numberReady": 0, "observedGeneration": 0, "updatedNumberScheduled": 0, "numberAvailable": 0,
                "numberUnavailable": 0, "collisionCount": 0}});
        drop_empty(Builtin::DaemonSet, &mut ds);
        assert_eq!(
            ds,
            json!({"metadata": {"name": "d", "namespace": "default", "generation": 1},
                "spec": {"template": {"spec": {"containers": [{"name": "c"}]}}},
                "status": {"currentNumberScheduled": 0, "numberMisscheduled": 0, "desiredNumberScheduled": 0,
                    "numberReady": 0, "collisionCount": 0}})
        );
        // ReplicaSetStatus: terminatingReplicas is a pointer, replicas is
        // always written; readyReplicas and availableReplicas are not.
        let mut rs = json!({"status": {"replicas": 0, "readyReplicas": 0, "availableReplicas": 0,
            "fullyLabeledReplicas": 0, "terminatingReplicas": 0}});
        drop_empty(Builtin::ReplicaSet, &mut rs);
        assert_eq!(rs, json!({"status": {"replicas": 0, "terminatingReplicas": 0}}));
    }

    #[test]
    fn the_zero_omitted_table_is_sorted() {
        assert!(zeros::ZERO_OMITTED_CORE.is_sorted(), "binary search needs it sorted");
        assert!(zeros::ZERO_OMITTED_GROUPS.is_sorted(), "binary search needs it sorted");
    }

    #[test]
    fn controller_revision_data_is_kept_as_written() {
        let data =
            json!({"spec": {"template": {"metadata": {"labels": {}}, "spec": {"volumes": []}, "$patch": "replace"}}});
        let mut revision = json!({"metadata": {"name": "r", "labels": {}}, "data": data.clone(), "revision": 1});
        drop_empty(Builtin::ControllerRevision, &mut revision);
        assert_eq!(revision, json!({"metadata": {"name": "r"}, "data": data, "revision": 1}));
    }
}
