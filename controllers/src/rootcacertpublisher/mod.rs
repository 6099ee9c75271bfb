//! The root CA certificate publisher's decisions (upstream
//! `pkg/controller/certificates/rootcacertpublisher/publisher.go`): every
//! namespace holds the ConfigMap [`ROOT_CA_CONFIG_MAP`] whose only data is
//! `ca.crt`, the CA bundle pods use to verify the API server, annotated
//! with [`DESCRIPTION_ANNOTATION`]; deleted, it is created again; edited,
//! its data and annotation are put back.
//!
//! A plan-returning core of the smallest kind: [`sync`] takes the cached
//! ConfigMap of a namespace and answers the one write to make, if any. An
//! update starts from the cached object (its labels, other annotations and
//! resourceVersion kept), as upstream's does; a conflict is a retry.
//!
//! Which events queue a namespace ([`queues_on_namespace_update`],
//! [`queues_on_config_map_change`]) is decided here too, so that
//! upstream's handler filters are tested beside the sync.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

/// The ConfigMap's name (upstream `RootCACertConfigMapName`).
pub const ROOT_CA_CONFIG_MAP: &str = kcm_objects::ROOT_CA_CONFIG_MAP;

/// The data key holding the bundle.
pub const CA_CERT_KEY: &str = "ca.crt";

/// The annotation describing the ConfigMap (upstream `DescriptionAnnotation`).
pub const DESCRIPTION_ANNOTATION: &str = "kubernetes.io/description";

/// Its text, upstream's `Description`, word for word.
pub const DESCRIPTION: &str = "Contains a CA bundle that can be used to verify the kube-apiserver when using internal \
                               endpoints such as the internal service IP or kubernetes.default.svc. No other usage is \
                               guaranteed across distributions of Kubernetes clusters.";

/// What one namespace's sync writes.
#[derive(Debug, Clone, PartialEq)]
pub enum Write {
    /// Nothing: the ConfigMap holds the bundle and a description.
    None,
    /// The ConfigMap is missing: create this one. A NotFound (namespace
    /// gone) or a refusal because the namespace is terminating is not
    /// retried.
    Create(ConfigMap),
    /// The ConfigMap was edited: replace it with this (the cached object,
    /// data and description put back).
    Update(ConfigMap),
}

/// The write that makes `existing` (the cached `kube-root-ca.crt` of
/// namespace `namespace`) publish `root_ca`. The data must be exactly
/// `{ca.crt: root_ca}` (a key added is removed) and the description
/// annotation non-empty (any text is kept; a missing one gets upstream's).
pub fn sync(namespace: &str, existing: Option<&ConfigMap>, root_ca: &str) -> Write {
    let data = BTreeMap::from([(CA_CERT_KEY.to_owned(), root_ca.to_owned())]);
    let Some(existing) = existing else {
        return Write::Create(ConfigMap {
            metadata: ObjectMeta {
                name: Some(ROOT_CA_CONFIG_MAP.to_owned()),
                namespace: Some(namespace.to_owned()),
                annotations: Some(BTreeMap::from([(DESCRIPTION_ANNOTATION.to_owned(), DESCRIPTION.to_owned())])),
                ..ObjectMeta::default()
            },
            data: Some(data),
            ..ConfigMap::default()
        });
    };
    let described = existing
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(DESCRIPTION_ANNOTATION))
        .is_some_and(|text| !text.is_empty());
    if existing.data.as_ref() == Some(&data) && described {
        return Write::None;
    }
    let mut restored = existing.clone();
    restored.data = Some(data);
    restored
        .metadata
        .annotations
        .get_or_insert_with(BTreeMap::new)
        .insert(DESCRIPTION_ANNOTATION.to_owned(), DESCRIPTION.to_owned());
    Write::Update(restored)
}

/// Whether an added or updated namespace is queued: an add always (upstream
/// `namespaceAdded`), an update only while the namespace is `Active`
/// (`namespaceUpdated`).
pub fn queues_on_namespace_update(namespace: &Namespace) -> bool {
    namespace.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Active")
}

/// Whether an updated or deleted ConfigMap queues its namespace: only
/// `kube-root-ca.crt` does.
pub fn queues_on_config_map_change(config_map: &ConfigMap) -> bool {
    config_map.metadata.name.as_deref() == Some(ROOT_CA_CONFIG_MAP)
}

#[cfg(test)]
mod tests {
    //! Upstream's `TestConfigMapCreation`, with its case names: the handler
    //! filter of each event, then the sync of the namespace it queues,
    //! with the root CA `fake-root-ca`.

    use k8s_openapi::api::core::v1::NamespaceStatus;

    use super::*;

    // === utils ===

    const ROOT_CA: &str = "fake-root-ca";

    /// The published ConfigMap with `ca` as its bundle, as a cache holds it.
    fn ca_config_map(ca: &str) -> ConfigMap {
        match sync("default", None, ca) {
            Write::Create(mut cm) => {
                cm.metadata.resource_version = Some("1".into());
                cm
            }
            other => panic!("{other:?}"),
        }
    }

    fn other_config_map(data: &[(&str, &str)]) -> ConfigMap {
        ConfigMap {
            metadata: ObjectMeta {
                name: Some("other".into()),
                namespace: Some("default".into()),
                resource_version: Some("1".into()),
                ..ObjectMeta::default()
            },
            data: (!data.is_empty()).then(|| data.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()),
            ..ConfigMap::default()
        }
    }

    fn namespace(name: &str, phase: &str) -> Namespace {
        Namespace {
            metadata: ObjectMeta { name: Some(name.into()), ..ObjectMeta::default() },
            status: Some(NamespaceStatus { phase: Some(phase.into()), ..NamespaceStatus::default() }),
            ..Namespace::default()
        }
    }

    /// "create", "update" or "" for what a sync with `cached` does.
    fn verb(cached: Option<&ConfigMap>) -> &'static str {
        match sync("default", cached, ROOT_CA) {
            Write::None => "",
            Write::Create(_) => "create",
            Write::Update(_) => "update",
        }
    }

    // === tests ===

    #[test]
    fn create_new_namesapce() {
        let created = sync("new", None, ROOT_CA);
        let Write::Create(cm) = created else { panic!("{created:?}") };
        assert_eq!(cm.metadata.name.as_deref(), Some("kube-root-ca.crt"));
        assert_eq!(cm.metadata.namespace.as_deref(), Some("new"));
        assert_eq!(cm.data, Some(BTreeMap::from([("ca.crt".to_owned(), ROOT_CA.to_owned())])));
        let annotations = cm.metadata.annotations.unwrap_or_default();
        assert_eq!(annotations.get("kubernetes.io/description").map(String::as_str), Some(DESCRIPTION));
    }

    #[test]
    fn delete_other_configmap() {
        assert!(!queues_on_config_map_change(&other_config_map(&[])));
    }

    #[test]
    fn delete_ca_configmap() {
        assert!(queues_on_config_map_change(&ca_config_map(ROOT_CA)));
        assert_eq!(verb(None), "create");
    }

    #[test]
    fn update_ca_configmap_with_adding_field() {
        let mut added = ca_config_map(ROOT_CA);
        added.data.get_or_insert_with(BTreeMap::new).insert("test".into(), "test".into());
        assert!(queues_on_config_map_change(&added));
        let Write::Update(restored) = sync("default", Some(&added), ROOT_CA) else { panic!("no update") };
        assert_eq!(restored, ca_config_map(ROOT_CA), "the added key removed, the resourceVersion kept");
    }

    #[test]
    fn update_ca_configmap_with_modifying_field() {
        let modified = ca_config_map("abc");
        assert!(queues_on_config_map_change(&modified));
        assert_eq!(verb(Some(&modified)), "update");
    }

    #[test]
    fn update_with_other_configmap() {
        assert!(!queues_on_config_map_change(&other_config_map(&[("aa", "bb")])));
    }

    #[test]
    fn update_namespace_with_terminating_state() {
        assert!(!queues_on_namespace_update(&namespace("default", "Terminating")));
        assert!(queues_on_namespace_update(&namespace("default", "Active")));
    }

    #[test]
    fn the_published_configmap_is_left_alone() {
        assert_eq!(verb(Some(&ca_config_map(ROOT_CA))), "");
    }

    #[test]
    fn a_removed_description_is_put_back_and_other_annotations_kept() {
        let mut edited = ca_config_map(ROOT_CA);
        edited.metadata.annotations = Some(BTreeMap::from([("team".to_owned(), "a".to_owned())]));
        let Write::Update(restored) = sync("default", Some(&edited), ROOT_CA) else { panic!("no update") };
        let annotations = restored.metadata.annotations.unwrap_or_default();
        assert_eq!(annotations.get("team").map(String::as_str), Some("a"));
        assert_eq!(annotations.get(DESCRIPTION_ANNOTATION).map(String::as_str), Some(DESCRIPTION));
    }

    #[test]
    fn a_description_of_its_own_is_kept() {
        let mut described = ca_config_map(ROOT_CA);
        described.metadata.annotations = Some(BTreeMap::from([(DESCRIPTION_ANNOTATION.to_owned(), "ours".to_owned())]));
        assert_eq!(verb(Some(&described)), "");
    }
}
