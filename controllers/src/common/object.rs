//! How the controllers name an object they act on: its queue key
//! (upstream `cache.MetaNamespaceKeyFunc`) and the [`ObjectRef`] events and
//! preconditions carry.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kcm_objects::{Uid, WholeMeta};

use crate::plan::ObjectRef;

/// What naming an object, claiming it or referring to it as an owner reads
/// of its metadata, in either form the caches keep it. An absent string is
/// empty.
pub trait Metadata {
    /// `metadata.name`.
    fn object_name(&self) -> &str;
    /// `metadata.namespace`.
    fn object_namespace(&self) -> &str;
    /// `metadata.uid`.
    fn object_uid(&self) -> Uid;
    /// Whether it has a `deletionTimestamp`.
    fn being_deleted(&self) -> bool;
}

impl Metadata for ObjectMeta {
    fn object_name(&self) -> &str {
        self.name.as_deref().unwrap_or_default()
    }
    fn object_namespace(&self) -> &str {
        self.namespace.as_deref().unwrap_or_default()
    }
    fn object_uid(&self) -> Uid {
        Uid::new(self.uid.as_deref().unwrap_or_default())
    }
    fn being_deleted(&self) -> bool {
        self.deletion_timestamp.is_some()
    }
}

impl Metadata for WholeMeta {
    fn object_name(&self) -> &str {
        &self.name
    }
    fn object_namespace(&self) -> &str {
        &self.namespace
    }
    fn object_uid(&self) -> Uid {
        self.uid.clone()
    }
    fn being_deleted(&self) -> bool {
        self.deletion_timestamp.is_some()
    }
}

/// `namespace/name` ([`object_key`](kcm_objects::object_key)).
pub(crate) fn key(meta: &impl Metadata) -> String {
    kcm_objects::object_key(Some(meta.object_namespace()), meta.object_name())
}

/// The object `meta` describes, of type `api_version`/`kind`.
pub(crate) fn object_ref(api_version: &str, kind: &str, meta: &impl Metadata) -> ObjectRef {
    let namespace = meta.object_namespace();
    ObjectRef {
        api_version: api_version.to_owned(),
        kind: kind.to_owned(),
        namespace: (!namespace.is_empty()).then(|| namespace.to_owned()),
        name: meta.object_name().to_owned(),
        uid: meta.object_uid().to_string(),
    }
}
