//! What an informer's cache can hold: a full typed object (k8s-openapi's
//! types, trimmed of `managedFields`), or a slim projection decoded from the
//! wire through [`Wire`].

use std::borrow::Cow;
use std::fmt::Debug;
use std::hash::Hasher;
use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube_core::Resource;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize};

use crate::meta::Meta;
use crate::slab::Keyed;
use crate::uid::Uid;

/// A type an informer caches: what its list and watch decode
/// ([`Wire`](Cached::Wire)), what the cache keeps of it, and the metadata
/// the informer itself needs.
pub trait Cached: Clone + Debug + Send + Sync + 'static {
    /// What the list and watch responses decode into.
    type Wire: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + 'static;

    /// What the cache keeps of a decoded object.
    fn from_wire(wire: Self::Wire) -> Self;

    /// `metadata.namespace`, `None` or empty when cluster-scoped.
    fn namespace(&self) -> Option<&str>;

    /// `metadata.name`.
    fn name(&self) -> &str;

    /// `metadata.resourceVersion`.
    fn resource_version(&self) -> Option<&str>;

    /// `metadata.uid`.
    fn uid(&self) -> Option<Uid>;

    /// The object's metadata, for consumers of any type's metadata (the
    /// garbage collector). A projection gives what it keeps.
    fn object_meta(&self) -> Cow<'_, ObjectMeta>;
}

impl<K> Cached for K
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
{
    type Wire = K;

    /// The object without `metadata.managedFields`, which no controller
    /// reads (kube-controller-manager's informer transform does the same).
    fn from_wire(mut wire: K) -> K {
        wire.meta_mut().managed_fields = None;
        wire
    }

    fn namespace(&self) -> Option<&str> {
        self.meta().namespace.as_deref()
    }

    fn name(&self) -> &str {
        self.meta().name.as_deref().unwrap_or_default()
    }

    fn resource_version(&self) -> Option<&str> {
        self.meta().resource_version.as_deref()
    }

    fn uid(&self) -> Option<Uid> {
        self.meta().uid.as_deref().map(Uid::new)
    }

    fn object_meta(&self) -> Cow<'_, ObjectMeta> {
        Cow::Borrowed(self.meta())
    }
}

/// The parts of `obj`'s key: its namespace, unless empty, and its name.
fn key_parts<K: Cached>(obj: &K) -> (Option<&str>, &str) {
    (obj.namespace().filter(|ns| !ns.is_empty()), obj.name())
}

/// A cached object is under its [`object_key`](crate::object_key), which it holds in pieces:
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

/// A slim projection of a Kubernetes kind.
pub trait Projection: DeserializeOwned + Clone + Debug + Send + Sync + 'static {
    /// The full k8s-openapi type it projects (its group, version, kind and
    /// plural are the projection's).
    type Full: k8s_openapi::Resource;

    /// The projection's metadata.
    fn meta(&self) -> &Meta;
}

/// The projection of an object read in full, such as the live read a
/// write starts from, so that what a controller judges from it is what it
/// would judge from the cache.
///
/// # Errors
/// The object's JSON does not decode as the projection (a field the
/// projection keeps has the wrong type).
pub fn project<P: Projection>(full: &P::Full) -> Result<P, serde_json::Error>
where
    P::Full: Serialize,
{
    serde_json::to_value(full).and_then(P::deserialize)
}

/// The decoded form of a projection on its way into the cache: the
/// projection, and the `ObjectMeta` (name, namespace, resourceVersion
/// only) that kube's watcher reads to resume. The informer keeps the
/// projection alone.
#[derive(Debug, Clone)]
pub struct Wire<P> {
    meta: ObjectMeta,
    object: P,
}

impl<P> Wire<P> {
    /// The projection.
    pub fn into_inner(self) -> P {
        self.object
    }
}

impl<'de, P: Projection> Deserialize<'de> for Wire<P> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let object = P::deserialize(deserializer)?;
        let m = object.meta();
        let meta = ObjectMeta {
            name: Some(m.name.to_string()),
            namespace: (!m.namespace.is_empty()).then(|| m.namespace.to_string()),
            resource_version: Some(m.resource_version.to_string()),
            ..ObjectMeta::default()
        };
        Ok(Wire { meta, object })
    }
}

impl<P: Projection> k8s_openapi::Resource for Wire<P> {
    const API_VERSION: &'static str = <P::Full as k8s_openapi::Resource>::API_VERSION;
    const GROUP: &'static str = <P::Full as k8s_openapi::Resource>::GROUP;
    const KIND: &'static str = <P::Full as k8s_openapi::Resource>::KIND;
    const VERSION: &'static str = <P::Full as k8s_openapi::Resource>::VERSION;
    const URL_PATH_SEGMENT: &'static str = <P::Full as k8s_openapi::Resource>::URL_PATH_SEGMENT;
    type Scope = <P::Full as k8s_openapi::Resource>::Scope;
}

impl<P: Projection> k8s_openapi::Metadata for Wire<P> {
    type Ty = ObjectMeta;
    fn metadata(&self) -> &ObjectMeta {
        &self.meta
    }
    fn metadata_mut(&mut self) -> &mut ObjectMeta {
        &mut self.meta
    }
}

/// Marks a projection as cached through [`Wire`].
macro_rules! cached_projection {
    ($projection:ty, $full:ty) => {
        impl $crate::cached::Projection for $projection {
            type Full = $full;
            fn meta(&self) -> &$crate::meta::Meta {
                &self.metadata
            }
        }

        $crate::cached::cached_by_slim_meta!($projection, $crate::cached::Wire<$projection>, |wire| wire.into_inner());
    };
}

pub(crate) use cached_projection;

/// Marks a wrapper of a full object, trimmed as its `new` trims it, as
/// cached: the k8s-openapi type on the wire, the wrapper in the cache.
macro_rules! cached_trimmed {
    ($cached:ty, $full:ty) => {
        impl $crate::cached::Cached for $cached {
            type Wire = $full;
            fn from_wire(wire: $full) -> Self {
                <$cached>::new(wire)
            }
            fn namespace(&self) -> Option<&str> {
                self.metadata.namespace.as_deref()
            }
            fn name(&self) -> &str {
                self.metadata.name.as_deref().unwrap_or_default()
            }
            fn resource_version(&self) -> Option<&str> {
                self.metadata.resource_version.as_deref()
            }
            fn uid(&self) -> Option<$crate::Uid> {
                self.metadata.uid.as_deref().map($crate::Uid::new)
            }
            fn object_meta(&self) -> std::borrow::Cow<'_, k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta> {
                std::borrow::Cow::Borrowed(&self.metadata)
            }
        }
    };
}

pub(crate) use cached_trimmed;

/// Marks a wrapper of a full object whose metadata is a
/// [`WholeMeta`](crate::WholeMeta) as cached: the k8s-openapi type on the
/// wire, the wrapper (made by its `new`) in the cache.
macro_rules! cached_whole {
    ($cached:ty, $full:ty) => {
        $crate::cached::cached_by_slim_meta!($cached, $full, |wire| <$cached>::new(wire));
    };
}

pub(crate) use cached_whole;

/// The [`Cached`] impl of a type whose `metadata` holds its name,
/// namespace, resourceVersion and uid as strings (a [`Meta`] or a
/// [`WholeMeta`](crate::WholeMeta)), decoded as `$wire` and kept as
/// `$make` makes it of `$w`.
macro_rules! cached_by_slim_meta {
    ($cached:ty, $wire:ty, |$w:ident| $make:expr) => {
        impl $crate::cached::Cached for $cached {
            type Wire = $wire;
            fn from_wire($w: $wire) -> Self {
                $make
            }
            fn namespace(&self) -> Option<&str> {
                Some(&self.metadata.namespace)
            }
            fn name(&self) -> &str {
                &self.metadata.name
            }
            fn resource_version(&self) -> Option<&str> {
                Some(&self.metadata.resource_version)
            }
            fn uid(&self) -> Option<$crate::Uid> {
                Some(self.metadata.uid.clone())
            }
            fn object_meta(&self) -> std::borrow::Cow<'_, k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta> {
                std::borrow::Cow::Owned(self.metadata.to_object_meta())
            }
        }
    };
}

pub(crate) use cached_by_slim_meta;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::object_key;

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
