//! Update: what a write through the main resource or one of its
//! subresources makes of the stored object (`rest.BeforeUpdate` and the
//! strategies' `PrepareForUpdate` and `ValidateUpdate`).

use serde_json::{Value, json};

use super::create::invalid;
use super::daemon_set::template_generation_on_update;
use super::endpoint_slice::drop_topology;
use super::kinds::{
    keep_namespace_finalizers, metadata_as_spec, set_or_remove, status_writes_metadata, tracks_generation,
};
use super::service::drop_type_dependent_fields;
use crate::error::{ApiError, ApiResult};
use crate::object;
use crate::resources::{Builtin, ResourceType, Subresource};
use crate::{defaults, omitempty, validation};

/// The object to store for an update of `current` with `incoming` through
/// `sub`, or `None` when nothing changes.
pub fn next_state(
    rt: &ResourceType,
    sub: Option<Subresource>,
    current: &Value,
    incoming: Value,
) -> ApiResult<Option<Value>> {
    let name = object::name(current).to_owned();
    let wanted_rv = object::resource_version(&incoming).to_owned();
    if !wanted_rv.is_empty() && wanted_rv != object::resource_version(current) {
        return Err(ApiError::conflict(
            rt,
            &name,
            "the object has been modified; please apply your changes to the latest version and try again",
        ));
    }
    let mut next = match sub {
        Some(Subresource::Status) if status_writes_metadata(rt) => {
            // Upstream's status strategies for these kinds reset only the
            // spec (and, for Deployments, the labels): the deployment
            // controller writes its revision annotation through `/status`.
            let mut next = incoming;
            set_or_remove(&mut next, "spec", current.get("spec").cloned());
            if rt.builtin == Some(Builtin::Deployment) {
                let labels = current.pointer("/metadata/labels").cloned();
                set_or_remove(&mut next["metadata"], "labels", labels);
            }
            keep_server_metadata(rt, &mut next, current)?;
            next
        }
        Some(Subresource::Status) => {
            let mut next = current.clone();
            set_or_remove(&mut next, "status", incoming.get("status").cloned());
            next
        }
        Some(Subresource::Finalize) => {
            let mut next = current.clone();
            let finalizers = incoming.pointer("/spec/finalizers").cloned().unwrap_or_else(|| json!([]));
            next["spec"]["finalizers"] = finalizers;
            next
        }
        Some(Subresource::Scale) => {
            let replicas = incoming.pointer("/spec/replicas").and_then(Value::as_i64).unwrap_or(0);
            if replicas < 0 {
                return Err(ApiError::invalid(
                    rt,
                    &name,
                    &[(
                        "FieldValueInvalid".into(),
                        format!("Invalid value: {replicas}: must be greater than or equal to 0"),
                        "spec.replicas".into(),
                    )],
                ));
            }
            let mut next = current.clone();
            next["spec"]["replicas"] = json!(replicas);
            next
        }
        None => {
            let mut next = incoming;
            if rt.has(Subresource::Status) {
                set_or_remove(&mut next, "status", current.get("status").cloned());
            }
            // The kinds' own `PrepareForUpdate` steps.
            match rt.builtin {
                Some(Builtin::Namespace) => keep_namespace_finalizers(&mut next, current),
                Some(Builtin::EndpointSlice) => drop_topology(&mut next, Some(current)),
                Some(Builtin::Service) => drop_type_dependent_fields(&mut next, current),
                _ => {}
            }
            keep_server_metadata(rt, &mut next, current)?;
            next
        }
    };
    if let Some(kind) = rt.builtin {
        defaults::apply(kind, &mut next);
        let causes = match sub {
            Some(Subresource::Status) => validation::validate_status_update(kind, current, &next),
            _ => validation::validate_update(kind, current, &next),
        };
        invalid(rt, &name, causes)?;
        omitempty::drop_empty(kind, &mut next);
        if kind == Builtin::DaemonSet {
            template_generation_on_update(&mut next, current, sub.is_none());
        }
    }
    let metadata_changed =
        |field: &str| current.pointer(&format!("/metadata/{field}")) != next.pointer(&format!("/metadata/{field}"));
    // Status writes never bump the generation.
    let bumps = match sub {
        None => spec_changed(current, &next) || metadata_as_spec(rt).is_some_and(metadata_changed),
        Some(Subresource::Scale) => spec_changed(current, &next),
        Some(_) => false,
    };
    if tracks_generation(rt) && bumps {
        let generation = current.pointer("/metadata/generation").and_then(Value::as_i64).unwrap_or(0);
        object::metadata_mut(&mut next).insert("generation".into(), json!(generation + 1));
    }
    let mut unchanged = next.clone();
    object::metadata_mut(&mut unchanged).insert("resourceVersion".into(), json!(object::resource_version(current)));
    if unchanged == *current {
        return Ok(None);
    }
    Ok(Some(next))
}

/// Copies the server-owned metadata of `current` into `next` (upstream
/// `BeforeUpdate`) and enforces what may not change during deletion (upstream `ValidateNoNewFinalizers`:
/// a 422 Invalid, not a 403).
fn keep_server_metadata(rt: &ResourceType, next: &mut Value, current: &Value) -> ApiResult<()> {
    if object::is_terminating(current) {
        let old = object::finalizers(current);
        let mut added: Vec<String> = object::finalizers(next).into_iter().filter(|f| !old.contains(f)).collect();
        if !added.is_empty() {
            added.sort();
            added.dedup();
            let shown: Vec<String> = added.iter().map(|f| format!("{f:?}")).collect();
            return Err(ApiError::invalid(
                rt,
                object::name(current),
                &[(
                    validation::FIELD_VALUE_FORBIDDEN.to_owned(),
                    format!(
                        "Forbidden: no new finalizers can be added if the object is being deleted, \
                         found new finalizers []string{{{}}}",
                        shown.join(", ")
                    ),
                    "metadata.finalizers".to_owned(),
                )],
            ));
        }
    }
    let md = object::metadata_mut(next);
    // Upstream `BeforeUpdate`: these are the stored ones whenever the
    // stored object has them; what a write sets that the stored object has
    // not (a deletion timestamp, a different grace period, another uid) is
    // left for validation to refuse as immutable.
    let stored = |field: &str| current.pointer(&format!("/metadata/{field}")).filter(|v| !v.is_null()).cloned();
    let unset = |md: &serde_json::Map<String, Value>, field: &str| {
        md.get(field).is_none_or(|v| v.is_null() || v.as_str() == Some(""))
    };
    for kept in ["creationTimestamp", "deletionTimestamp"] {
        if let Some(value) = stored(kept) {
            md.insert(kept.to_owned(), value);
        }
    }
    for filled in ["uid", "deletionGracePeriodSeconds"] {
        if let Some(value) = stored(filled)
            && unset(md, filled)
        {
            md.insert(filled.to_owned(), value);
        }
    }
    // The generation is the server's (the strategy bumps it afterwards).
    match stored("generation") {
        Some(generation) => md.insert("generation".to_owned(), generation),
        None => md.remove("generation"),
    };
    // An empty namespace is the URL's; a cluster-scoped object has none.
    if !rt.namespaced {
        md.remove("namespace");
    } else if let Some(namespace) = stored("namespace")
        && unset(md, "namespace")
    {
        md.insert("namespace".to_owned(), namespace);
    }
    md.remove("selfLink");
    md.remove("managedFields");
    Ok(())
}

/// Whether anything but metadata and status differs.
fn spec_changed(old: &Value, new: &Value) -> bool {
    let strip = |v: &Value| -> Value {
        let mut v = v.clone();
        if let Some(m) = v.as_object_mut() {
            m.remove("metadata");
            m.remove("status");
        }
        v
    };
    strip(old) != strip(new)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::resources::Registry;

    /// A Deployment as stored: defaulted.
    fn deployment() -> Value {
        let mut d = json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "default", "uid": "u1", "generation": 1, "resourceVersion": "5",
                "creationTimestamp": "2026-01-01T00:00:00Z"},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}},
            "status": {"replicas": 1}});
        defaults::apply(Builtin::Deployment, &mut d);
        d
    }

    fn rt() -> Arc<ResourceType> {
        Registry::default().builtin(Builtin::Deployment)
    }

    #[test]
    fn main_resource_writes_keep_status_and_bump_generation_on_spec_change() {
        let current = deployment();
        let mut incoming = current.clone();
        incoming["spec"]["replicas"] = json!(3);
        incoming["status"] = json!({"replicas": 99});
        let next = next_state(&rt(), None, &current, incoming).unwrap().unwrap();
        assert_eq!(next["status"], json!({"replicas": 1}));
        assert_eq!(next["metadata"]["generation"], 2);
    }

    #[test]
    fn deployment_status_writes_keep_spec_labels_and_generation() {
        let current = deployment();
        let mut incoming = current.clone();
        incoming["spec"]["replicas"] = json!(3);
        incoming["metadata"]["labels"] = json!({"x": "y"});
        incoming["status"] = json!({"replicas": 2});
        let next = next_state(&rt(), Some(Subresource::Status), &current, incoming).unwrap().unwrap();
        assert_eq!(next["spec"]["replicas"], 1);
        assert_eq!(next["metadata"]["generation"], 1);
        assert!(next["metadata"].get("labels").is_none());
        assert_eq!(next["status"]["replicas"], 2);
    }

    #[test]
    fn deployment_status_writes_take_annotations_but_not_labels() {
        let current = deployment();
        let mut incoming = current.clone();
        incoming["metadata"]["labels"] = json!({"x": "y"});
        incoming["metadata"]["annotations"] = json!({"deployment.kubernetes.io/revision": "2"});
        incoming["metadata"]["generation"] = json!(7);
        incoming["status"] = json!({"replicas": 2});
        let next = next_state(&rt(), Some(Subresource::Status), &current, incoming.clone()).unwrap().unwrap();
        assert_eq!(next["metadata"]["annotations"]["deployment.kubernetes.io/revision"], "2");
        assert!(next["metadata"].get("labels").is_none());
        assert_eq!((&next["metadata"]["uid"], &next["metadata"]["generation"]), (&json!("u1"), &json!(1)));
        assert_eq!(next["status"]["replicas"], 2);
        // The uid is not one of the metadata a status write may change.
        incoming["metadata"]["uid"] = json!("forged");
        let err = next_state(&rt(), Some(Subresource::Status), &current, incoming).unwrap_err();
        assert_eq!((err.code, err.reason), (422, "Invalid"));
        assert!(
            err.message.ends_with("metadata.uid: Invalid value: \"forged\": field is immutable"),
            "{}",
            err.message
        );
    }

    #[test]
    fn replica_set_status_writes_take_labels_and_annotations() {
        let rt = Registry::default().builtin(Builtin::ReplicaSet);
        let mut current = deployment();
        current["kind"] = json!("ReplicaSet");
        defaults::apply(Builtin::ReplicaSet, &mut current);
        let mut incoming = current.clone();
        incoming["metadata"]["labels"] = json!({"x": "y"});
        incoming["metadata"]["annotations"] = json!({"a": "b"});
        incoming["spec"]["replicas"] = json!(7);
        let next = next_state(&rt, Some(Subresource::Status), &current, incoming).unwrap().unwrap();
        assert_eq!(
            (&next["metadata"]["labels"]["x"], &next["metadata"]["annotations"]["a"]),
            (&json!("y"), &json!("b"))
        );
        assert_eq!((&next["spec"]["replicas"], &next["metadata"]["generation"]), (&json!(1), &json!(1)));
    }

    #[test]
    fn deployment_annotation_changes_bump_the_generation() {
        let current = deployment();
        let mut incoming = current.clone();
        incoming["metadata"]["annotations"] = json!({"note": "x"});
        let next = next_state(&rt(), None, &current, incoming).unwrap().unwrap();
        assert_eq!(next["metadata"]["generation"], 2);
    }

    #[test]
    fn label_changes_keep_generation_and_stale_versions_conflict() {
        let current = deployment();
        let mut incoming = current.clone();
        incoming["metadata"]["labels"] = json!({"x": "y"});
        let next = next_state(&rt(), None, &current, incoming.clone()).unwrap().unwrap();
        assert_eq!(next["metadata"]["generation"], 1);
        incoming["metadata"]["resourceVersion"] = json!("4");
        let err = next_state(&rt(), None, &current, incoming).unwrap_err();
        assert_eq!((err.code, err.reason), (409, "Conflict"));
    }

    #[test]
    fn new_finalizers_on_an_object_being_deleted_are_invalid() {
        let mut current = deployment();
        current["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
        current["metadata"]["finalizers"] = json!(["a"]);
        let mut incoming = current.clone();
        incoming["metadata"]["finalizers"] = json!(["a", "b"]);
        let err = next_state(&rt(), None, &current, incoming).unwrap_err();
        assert_eq!((err.code, err.reason), (422, "Invalid"));
        assert!(err.message.ends_with("found new finalizers []string{\"b\"}"), "{}", err.message);
        let mut removing = current.clone();
        removing["metadata"]["finalizers"] = json!([]);
        assert!(next_state(&rt(), None, &current, removing).is_ok());
    }

    #[test]
    fn namespace_updates_keep_the_finalizers() {
        let rt = Registry::default().builtin(Builtin::Namespace);
        let current = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n", "resourceVersion": "3"},
            "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}});
        let mut incoming = current.clone();
        incoming["spec"]["finalizers"] = json!([]);
        incoming["metadata"]["labels"] = json!({"x": "y"});
        let next = next_state(&rt, None, &current, incoming).unwrap().unwrap();
        assert_eq!(next["spec"]["finalizers"], json!(["kubernetes"]));
        assert_eq!(next["metadata"]["labels"]["x"], "y");
    }

    #[test]
    fn an_identical_write_changes_nothing() {
        let current = deployment();
        assert!(next_state(&rt(), None, &current, current.clone()).unwrap().is_none());
    }
}
