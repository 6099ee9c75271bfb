//! Resolving a controller reference against a cache (upstream
//! `resolveControllerRef`, which every workload controller writes for
//! itself): the cached object a dependent's controller reference names, if
//! it is that very object. A reference to another kind, a name not cached,
//! or a cached object of that name with another uid (the owner was deleted
//! and a new one took its name) resolves to nothing.

use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kcm_objects::{Cached, OwnerRef};

use super::Store;

/// What resolving a controller reference reads of it, from a slim
/// [`OwnerRef`] or a full [`OwnerReference`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ControllerRef<'a> {
    /// The owner's kind.
    pub kind: &'a str,
    /// The owner's name.
    pub name: &'a str,
    /// The owner's uid.
    pub uid: &'a str,
}

impl<'a> From<&'a OwnerRef> for ControllerRef<'a> {
    fn from(r: &'a OwnerRef) -> Self {
        Self { kind: &r.kind, name: &r.name, uid: &r.uid }
    }
}

impl<'a> From<&'a OwnerReference> for ControllerRef<'a> {
    fn from(r: &'a OwnerReference) -> Self {
        Self { kind: &r.kind, name: &r.name, uid: &r.uid }
    }
}

impl<K: Cached> Store<K> {
    /// The cached `kind` object in `namespace` that `cref` names, if it is
    /// that very object (same kind, name and uid).
    pub fn resolve_controller_ref<'a>(
        &self,
        kind: &str,
        namespace: Option<&str>,
        cref: impl Into<ControllerRef<'a>>,
    ) -> Option<Arc<K>> {
        let cref = cref.into();
        if cref.kind != kind {
            return None;
        }
        let owner = self.get_namespaced(namespace, cref.name)?;
        owner.uid().is_some_and(|uid| uid == cref.uid).then_some(owner)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::RwLock;

    use k8s_openapi::api::apps::v1::ReplicaSet;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    use super::*;
    use crate::informer::store::Cache;
    use crate::informer::synced::SyncSignal;

    fn cref(kind: &str, name: &str, uid: &str) -> OwnerReference {
        OwnerReference { kind: kind.into(), name: name.into(), uid: uid.into(), ..OwnerReference::default() }
    }

    #[test]
    fn only_the_very_object_resolves() {
        let mut cache = Cache::<ReplicaSet>::new();
        let meta = ObjectMeta {
            namespace: Some("ns".into()),
            name: Some("rs".into()),
            uid: Some("u1".into()),
            ..ObjectMeta::default()
        };
        cache.insert(Arc::new(ReplicaSet { metadata: meta, ..ReplicaSet::default() }));
        let store = Store::new(Arc::new(RwLock::new(cache)), SyncSignal::new(tokio::sync::watch::channel(true).1));
        let resolve = |kind, namespace, r: &OwnerReference| store.resolve_controller_ref(kind, namespace, r);
        assert!(resolve("ReplicaSet", Some("ns"), &cref("ReplicaSet", "rs", "u1")).is_some());
        assert!(resolve("ReplicaSet", Some("ns"), &cref("ReplicaSet", "rs", "u2")).is_none(), "another uid");
        assert!(resolve("ReplicaSet", Some("ns"), &cref("Deployment", "rs", "u1")).is_none(), "another kind");
        assert!(resolve("ReplicaSet", Some("other"), &cref("ReplicaSet", "rs", "u1")).is_none(), "not cached");
    }
}
