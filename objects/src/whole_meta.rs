//! [`WholeMeta`]: an object's whole metadata but `managedFields`, its maps
//! and lists shared as the slim [`Meta`](crate::Meta)'s are. What the cache
//! keeps of a ReplicaSet's and a Deployment's metadata.
//!
//! k8s-openapi's `ObjectMeta` is 360 bytes inline, and each of its maps
//! (labels, annotations) a 544-byte B-tree node plus a heap string per key
//! and value. Here a map is a pointer to one shared, sorted list per
//! distinct map, of shared strings: a ReplicaSet's labels are also its
//! selector's and its template's, and every ReplicaSet of one revision
//! carries the same annotations.

use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};

use crate::atom::{Atom, SharedList};
use crate::meta::{Labels, OwnerRef, shared_owner_list};
use crate::uid::Uid;

/// An object's metadata, every field of `ObjectMeta` but `managedFields`.
/// A string field the object does not have is empty.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WholeMeta {
    /// `metadata.name`.
    pub name: Box<str>,
    /// `metadata.namespace`, empty for cluster-scoped objects.
    pub namespace: Atom,
    /// `metadata.uid`.
    pub uid: Uid,
    /// `metadata.resourceVersion`.
    pub resource_version: Box<str>,
    /// `metadata.generateName`.
    pub generate_name: Option<Atom>,
    /// `metadata.generation`.
    pub generation: Option<i64>,
    /// `metadata.creationTimestamp`.
    pub creation_timestamp: Option<Timestamp>,
    /// `metadata.deletionTimestamp`.
    pub deletion_timestamp: Option<Timestamp>,
    /// `metadata.deletionGracePeriodSeconds`.
    pub deletion_grace_period_seconds: Option<i64>,
    /// `metadata.labels`.
    pub labels: Labels,
    /// `metadata.annotations`, all of them.
    pub annotations: Labels,
    /// `metadata.ownerReferences`, one shared copy per distinct list.
    pub owner_references: SharedList<OwnerRef>,
    /// `metadata.finalizers`.
    pub finalizers: Box<[Atom]>,
    /// `metadata.selfLink` (no longer set by the API server, kept if given).
    pub self_link: Option<Box<str>>,
}

impl WholeMeta {
    /// Keeps `meta` but its `managedFields`.
    pub fn new(meta: &ObjectMeta) -> Self {
        let ObjectMeta {
            annotations,
            creation_timestamp,
            deletion_grace_period_seconds,
            deletion_timestamp,
            finalizers,
            generate_name,
            generation,
            labels,
            managed_fields: _,
            name,
            namespace,
            owner_references,
            resource_version,
            self_link,
            uid,
        } = meta;
        let text = |s: &Option<String>| s.as_deref().unwrap_or_default().into();
        let owners: Vec<OwnerRef> = owner_references.iter().flatten().map(OwnerRef::new).collect();
        WholeMeta {
            name: text(name),
            namespace: Atom::new(namespace.as_deref().unwrap_or_default()),
            uid: Uid::new(uid.as_deref().unwrap_or_default()),
            resource_version: text(resource_version),
            generate_name: generate_name.as_deref().map(Atom::new),
            generation: *generation,
            creation_timestamp: creation_timestamp.as_ref().map(|t| t.0),
            deletion_timestamp: deletion_timestamp.as_ref().map(|t| t.0),
            deletion_grace_period_seconds: *deletion_grace_period_seconds,
            labels: labels.as_ref().map(Labels::from).unwrap_or_default(),
            annotations: annotations.as_ref().map(Labels::from).unwrap_or_default(),
            owner_references: shared_owner_list(&owners),
            finalizers: finalizers.iter().flatten().map(|f| Atom::new(f)).collect(),
            self_link: self_link.as_deref().map(Into::into),
        }
    }

    /// The API's form. An empty string, map or list is absent, as the API
    /// server serves it.
    pub fn to_object_meta(&self) -> ObjectMeta {
        let text = |s: &str| (!s.is_empty()).then(|| s.to_owned());
        let map = |l: &Labels| (!l.is_empty()).then(|| l.to_map());
        ObjectMeta {
            annotations: map(&self.annotations),
            creation_timestamp: self.creation_timestamp.map(Time),
            deletion_grace_period_seconds: self.deletion_grace_period_seconds,
            deletion_timestamp: self.deletion_timestamp.map(Time),
            finalizers: (!self.finalizers.is_empty()).then(|| self.finalizers.iter().map(|f| f.to_string()).collect()),
            generate_name: self.generate_name.as_deref().map(str::to_owned),
            generation: self.generation,
            labels: map(&self.labels),
            managed_fields: None,
            name: text(&self.name),
            namespace: text(&self.namespace),
            owner_references: (!self.owner_references.is_empty())
                .then(|| self.owner_references.iter().map(OwnerRef::to_owner_reference).collect()),
            resource_version: text(&self.resource_version),
            self_link: self.self_link.as_deref().map(str::to_owned),
            uid: text(&self.uid.to_string()),
        }
    }

    /// The ownerReference marked `controller: true`, if any (upstream
    /// `GetControllerOf`).
    pub fn controller(&self) -> Option<&OwnerRef> {
        self.owner_references.iter().find(|r| r.controller == Some(true))
    }

    /// The cache key: `namespace/name`, or `name` when cluster-scoped.
    pub fn key(&self) -> String {
        crate::object_key(Some(&self.namespace), &self.name)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn object_meta(name: &str, hash: &str) -> ObjectMeta {
        serde_json::from_value(json!({
            "name": name, "namespace": "apps", "uid": format!("uid-{name}"), "resourceVersion": "7",
            "generation": 3, "generateName": "web-", "creationTimestamp": "2026-12-01T08:00:00Z",
            "deletionTimestamp": "2026-12-01T09:00:00Z", "deletionGracePeriodSeconds": 0,
            "labels": {"app": "web", "pod-template-hash": hash},
            "annotations": {"deployment.kubernetes.io/revision": "2", "example.com/note": "kept"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": "d-1",
                "controller": true, "blockOwnerDeletion": true}],
            "finalizers": ["foregroundDeletion"], "selfLink": "/apis/apps/v1/namespaces/apps/replicasets/web",
            "managedFields": [{"manager": "kube-controller-manager", "operation": "Update"}],
        }))
        .expect("metadata")
    }

    #[test]
    fn gives_back_every_field_but_managed_fields() {
        let meta = WholeMeta::new(&object_meta("web-1", "7c5d"));
        let mut want = object_meta("web-1", "7c5d");
        want.managed_fields = None;
        assert_eq!(meta.to_object_meta(), want);
        assert_eq!(meta.annotations.get("example.com/note"), Some("kept"), "every annotation, not only some");
        assert_eq!((meta.key(), meta.controller().map(|r| r.name.as_str())), ("apps/web-1".into(), Some("web")));
    }

    #[test]
    fn an_absent_field_stays_absent() {
        let meta = WholeMeta::new(&ObjectMeta { name: Some("bare".into()), ..ObjectMeta::default() });
        assert_eq!(meta.to_object_meta(), ObjectMeta { name: Some("bare".into()), ..ObjectMeta::default() });
        assert_eq!(meta.key(), "bare");
    }

    #[test]
    fn equal_maps_and_owner_lists_are_held_once() {
        let (a, b) = (WholeMeta::new(&object_meta("web-1", "7c5d")), WholeMeta::new(&object_meta("web-2", "7c5d")));
        assert!(a.labels.shares(&b.labels) && a.annotations.shares(&b.annotations));
        assert!(SharedList::ptr_eq(&a.owner_references, &b.owner_references));
        let mut changed = a.clone();
        changed.annotations.insert("deployment.kubernetes.io/revision", "3");
        assert!(changed.annotations.remove("example.com/note"));
        assert_eq!(changed.annotations.iter().collect::<Vec<_>>(), [("deployment.kubernetes.io/revision", "3")]);
        assert_eq!(a.annotations.get("deployment.kubernetes.io/revision"), Some("2"), "the shared map is unchanged");
    }
}
