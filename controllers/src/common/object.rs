//! How the controllers name an object they act on: its queue key
//! (upstream `cache.MetaNamespaceKeyFunc`) and the [`ObjectRef`] events and
//! preconditions carry.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::plan::ObjectRef;

/// `namespace/name` ([`object_key`](kcm_objects::object_key)).
pub(crate) fn key(meta: &ObjectMeta) -> String {
    kcm_objects::object_key(meta.namespace.as_deref(), meta.name.as_deref().unwrap_or(""))
}

/// The object `meta` describes, of type `api_version`/`kind`.
pub(crate) fn object_ref(api_version: &str, kind: &str, meta: &ObjectMeta) -> ObjectRef {
    ObjectRef {
        api_version: api_version.to_owned(),
        kind: kind.to_owned(),
        namespace: meta.namespace.clone(),
        name: meta.name.clone().unwrap_or_default(),
        uid: meta.uid.clone().unwrap_or_default(),
    }
}
