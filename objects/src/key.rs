//! An object's cache and queue key, as client-go's `MetaNamespaceKeyFunc`
//! spells it: `namespace/name`, or just `name` for a cluster-scoped object
//! (no namespace, or an empty one). The informers' caches, the controllers'
//! queues, their expectations and the event recorder all key by it, so a key
//! one of them computes finds what another stored.

use std::hash::Hasher;
use std::sync::Arc;

use crate::cached::Cached;
use crate::slab::Keyed;

/// `namespace/name`, or `name` when `namespace` is absent or empty.
pub fn object_key(namespace: Option<&str>, name: &str) -> String {
    match namespace {
        Some(ns) if !ns.is_empty() => format!("{ns}/{name}"),
        _ => name.to_owned(),
    }
}

/// The parts of `obj`'s key: its namespace, unless empty, and its name.
fn key_parts<K: Cached>(obj: &K) -> (Option<&str>, &str) {
    (obj.namespace().filter(|ns| !ns.is_empty()), obj.name())
}

/// A cached object is under its [`object_key`], which it holds in pieces:
/// an informer's slab keeps no copy of the key beside it.
impl<K: Cached> Keyed for Arc<K> {
    type Key = str;

    fn hash_own_key<H: Hasher>(&self, state: &mut H) {
        let (namespace, name) = key_parts(&**self);
        if let Some(namespace) = namespace {
            state.write(namespace.as_bytes());
            state.write(b"/");
        }
        state.write(name.as_bytes());
    }

    fn hash_key<H: Hasher>(key: &str, state: &mut H) {
        state.write(key.as_bytes());
    }

    fn has_key(&self, key: &str) -> bool {
        match key_parts(&**self) {
            (Some(namespace), name) => {
                key.strip_prefix(namespace).and_then(|rest| rest.strip_prefix('/')) == Some(name)
            }
            (None, name) => key == name,
        }
    }

    fn same_key(&self, other: &Self) -> bool {
        key_parts(&**self) == key_parts(&**other)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namespaced_or_cluster_scoped() {
        assert_eq!(object_key(Some("ns"), "a"), "ns/a");
        assert_eq!(object_key(Some(""), "a"), "a");
        assert_eq!(object_key(None, "a"), "a");
    }

    fn pod(namespace: &str, name: &str) -> Arc<k8s_openapi::api::core::v1::Pod> {
        let metadata = k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
            namespace: Some(namespace.into()),
            name: Some(name.into()),
            ..Default::default()
        };
        Arc::new(k8s_openapi::api::core::v1::Pod { metadata, ..Default::default() })
    }

    /// Keys of many lengths, so that the pieces an object hashes cross the
    /// hasher's 8-byte words at every offset.
    #[test]
    fn a_slab_finds_an_object_by_its_key() {
        let mut slab = crate::Slab::new();
        let names: Vec<(String, String)> =
            (0..20).flat_map(|i| (0..20).map(move |j| ("n".repeat(i), format!("p{}", "x".repeat(j))))).collect();
        for (namespace, name) in &names {
            assert!(slab.insert(pod(namespace, name)).1.is_none());
        }
        for (namespace, name) in &names {
            let key = object_key(Some(namespace), name);
            let (id, held) = (slab.id(key.as_str()), slab.get(key.as_str()));
            assert_eq!(
                held.map(|p| object_key(p.metadata.namespace.as_deref(), p.metadata.name.as_deref().unwrap())),
                Some(key.clone())
            );
            assert_eq!(slab.insert(pod(namespace, name)).0, id.unwrap(), "an update keeps its slot");
        }
        assert_eq!(slab.len(), names.len());
        assert!(slab.get("nn/p").is_some() && slab.get("nn/q").is_none() && slab.get("nn").is_none());
        assert!(slab.remove("p").is_some(), "the empty namespace: the key is the name");
        assert!(slab.get("p").is_none());
    }
}
