//! Secrets and ConfigMaps as the cache keeps them.
//!
//! A cluster's Secrets and ConfigMaps are mostly data no controller reads:
//! Helm keeps each release in a Secret (up to a megabyte), `kubectl apply`
//! copies the whole object into an annotation. kcm-rs's controllers read
//! the data of a few of them only:
//! - Secrets of type `kubernetes.io/service-account-token` (the token
//!   controller fills them; the legacy token cleaner labels and deletes
//!   them) and `bootstrap.kubernetes.io/token` (the token cleaner reads
//!   their expiration, the bootstrap signer their token);
//! - the `kube-root-ca.crt` ConfigMap of every namespace (the root CA
//!   publisher compares and rewrites it) and `kube-public/cluster-info`
//!   (the bootstrap signer signs it).
//!
//! Those are kept whole (without `managedFields`), so that a controller that
//! updates one from its cache, as upstream does, writes every field back.
//! Any other Secret or ConfigMap is kept as its metadata without
//! annotations, its type (Secrets) and `immutable`: what the garbage
//! collector and the informers need. No controller writes one of those.

use std::ops::Deref;

use k8s_openapi::api::core::v1 as api;

/// The type of the Secrets the token controller fills.
pub const SERVICE_ACCOUNT_TOKEN_TYPE: &str = "kubernetes.io/service-account-token";

/// The type of bootstrap token Secrets.
pub const BOOTSTRAP_TOKEN_TYPE: &str = "bootstrap.kubernetes.io/token";

/// The ConfigMap the root CA publisher keeps in every namespace.
pub const ROOT_CA_CONFIG_MAP: &str = "kube-root-ca.crt";

/// The namespace and name of the ConfigMap the bootstrap signer signs.
pub const CLUSTER_INFO: (&str, &str) = ("kube-public", "cluster-info");

/// A cached Secret: the whole object for the types whose data controllers
/// read ([`Secret::is_kept`]), otherwise its metadata without annotations
/// and its type. Dereferences to the k8s-openapi object.
#[derive(Clone, Debug)]
pub struct Secret(api::Secret);

impl Secret {
    /// Keeps `secret` as the cache does.
    pub fn new(mut secret: api::Secret) -> Self {
        secret.metadata.managed_fields = None;
        if !Self::is_kept(&secret) {
            secret.metadata.annotations = None;
            secret.data = None;
            secret.string_data = None;
        }
        Secret(secret)
    }

    /// Whether the cache keeps `secret` whole.
    pub fn is_kept(secret: &api::Secret) -> bool {
        matches!(secret.type_.as_deref(), Some(SERVICE_ACCOUNT_TOKEN_TYPE | BOOTSTRAP_TOKEN_TYPE))
    }
}

impl Deref for Secret {
    type Target = api::Secret;

    fn deref(&self) -> &api::Secret {
        &self.0
    }
}

/// A cached ConfigMap: the whole object for those controllers read
/// ([`ConfigMap::is_kept`]), otherwise its metadata without annotations.
/// Dereferences to the k8s-openapi object.
#[derive(Clone, Debug)]
pub struct ConfigMap(api::ConfigMap);

impl ConfigMap {
    /// Keeps `config_map` as the cache does.
    pub fn new(mut config_map: api::ConfigMap) -> Self {
        config_map.metadata.managed_fields = None;
        if !Self::is_kept(&config_map) {
            config_map.metadata.annotations = None;
            config_map.data = None;
            config_map.binary_data = None;
        }
        ConfigMap(config_map)
    }

    /// Whether the cache keeps `config_map` whole.
    pub fn is_kept(config_map: &api::ConfigMap) -> bool {
        let meta = &config_map.metadata;
        let (namespace, name) =
            (meta.namespace.as_deref().unwrap_or_default(), meta.name.as_deref().unwrap_or_default());
        name == ROOT_CA_CONFIG_MAP || (namespace, name) == CLUSTER_INFO
    }
}

impl Deref for ConfigMap {
    type Target = api::ConfigMap;

    fn deref(&self) -> &api::ConfigMap {
        &self.0
    }
}

crate::cached::cached_trimmed!(Secret, api::Secret);
crate::cached::cached_trimmed!(ConfigMap, api::ConfigMap);

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use k8s_openapi::ByteString;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ManagedFieldsEntry, ObjectMeta};

    use super::*;
    use crate::Cached;

    fn meta(namespace: &str, name: &str) -> ObjectMeta {
        ObjectMeta {
            namespace: Some(namespace.into()),
            name: Some(name.into()),
            resource_version: Some("7".into()),
            labels: Some(BTreeMap::from([("app".into(), "web".into())])),
            annotations: Some(BTreeMap::from([(
                "kubectl.kubernetes.io/last-applied-configuration".into(),
                "{}".into(),
            )])),
            managed_fields: Some(vec![ManagedFieldsEntry { manager: Some("kubectl".into()), ..Default::default() }]),
            ..Default::default()
        }
    }

    fn secret(type_: &str) -> api::Secret {
        api::Secret {
            metadata: meta("apps", "s"),
            type_: Some(type_.into()),
            data: Some(BTreeMap::from([("release".into(), ByteString(vec![7; 64]))])),
            ..Default::default()
        }
    }

    fn config_map(namespace: &str, name: &str) -> api::ConfigMap {
        api::ConfigMap {
            metadata: meta(namespace, name),
            data: Some(BTreeMap::from([("ca.crt".into(), "PEM".into())])),
            binary_data: Some(BTreeMap::from([("blob".into(), ByteString(vec![1]))])),
            ..Default::default()
        }
    }

    #[test]
    fn token_secrets_are_kept_whole_but_for_managed_fields() {
        for type_ in [SERVICE_ACCOUNT_TOKEN_TYPE, BOOTSTRAP_TOKEN_TYPE] {
            let cached = Secret::from_wire(secret(type_));
            let mut want = secret(type_);
            want.metadata.managed_fields = None;
            assert_eq!(*cached, want, "{type_}");
        }
    }

    #[test]
    fn other_secrets_keep_metadata_without_annotations_and_their_type() {
        for type_ in ["Opaque", "helm.sh/release.v1", "kubernetes.io/tls"] {
            let cached = Secret::from_wire(secret(type_));
            assert_eq!((cached.data.as_ref(), cached.metadata.annotations.as_ref()), (None, None), "{type_}");
            assert_eq!(cached.type_.as_deref(), Some(type_));
            assert_eq!(cached.metadata.labels, meta("apps", "s").labels);
            assert_eq!((cached.namespace(), cached.name(), cached.resource_version()), (Some("apps"), "s", Some("7")));
            assert_eq!(cached.object_meta().managed_fields, None);
        }
    }

    #[test]
    fn the_root_ca_and_cluster_info_config_maps_are_kept_whole() {
        for (namespace, name) in [("apps", ROOT_CA_CONFIG_MAP), ("kube-system", ROOT_CA_CONFIG_MAP), CLUSTER_INFO] {
            let cached = ConfigMap::from_wire(config_map(namespace, name));
            let mut want = config_map(namespace, name);
            want.metadata.managed_fields = None;
            assert_eq!(*cached, want, "{namespace}/{name}");
        }
    }

    #[test]
    fn other_config_maps_keep_metadata_without_annotations() {
        for (namespace, name) in [("apps", "settings"), ("kube-system", "cluster-info"), ("kube-public", "other")] {
            let cached = ConfigMap::from_wire(config_map(namespace, name));
            let kept = (cached.data.as_ref(), cached.binary_data.as_ref(), cached.metadata.annotations.as_ref());
            assert_eq!(kept, (None, None, None), "{namespace}/{name}");
            assert_eq!((cached.namespace(), cached.name()), (Some(namespace), name));
        }
    }
}
