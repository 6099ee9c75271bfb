//! The metadata a slim object keeps: identity, labels, the annotations some
//! controller reads, owners, finalizers and the deletion state; not
//! `managedFields`, not the other annotations.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::LazyLock;

use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference, Time};
use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, Visitor};

use crate::atom::{Atom, Pool, SharedList};
use crate::seconds::Seconds;
use crate::uid::Uid;

/// Annotations the slim objects keep; every other annotation is skipped
/// while decoding. A controller reading an annotation of a pod or node
/// adds it here.
pub const KEPT_ANNOTATIONS: &[&str] = &[
    // ReplicaSet scale-down ranking (upstream `PodDeletionCost`).
    "controller.kubernetes.io/pod-deletion-cost",
    // The Job controller: a pod's index in an Indexed Job, and the failures
    // of that index before it (`backoffLimitPerIndex`).
    "batch.kubernetes.io/job-completion-index",
    "batch.kubernetes.io/job-index-failure-count",
    "batch.kubernetes.io/job-index-ignored-failure-count",
    // The TTL controller: the TTL a node carries (`v1.ObjectTTLAnnotationKey`).
    "node.alpha.kubernetes.io/ttl",
    // The attach/detach controller: a node whose kubelet hands it the
    // attaching (`volumeutil.ControllerManagedAttachAnnotation`).
    "volumes.kubernetes.io/controller-managed-attach-detach",
];

/// Metadata of a slim object, decoded as `ObjectMeta` is (camelCase JSON).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(from = "WireMeta")]
pub struct Meta {
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
    /// `metadata.creationTimestamp`, to the second.
    created: Seconds,
    /// `metadata.labels`.
    pub labels: Labels,
    /// The annotations named in [`KEPT_ANNOTATIONS`] that the object has.
    pub annotations: Labels,
    /// `metadata.ownerReferences`, one shared copy per distinct list.
    pub owner_references: SharedList<OwnerRef>,
    /// The deletion state and finalizers, out of line: most objects have
    /// none of them and pay a pointer.
    rare: Option<Box<RareMeta>>,
}

/// The fields of `metadata` most objects do not set.
#[derive(Debug, Clone, Default, PartialEq)]
struct RareMeta {
    deletion_timestamp: Option<Timestamp>,
    deletion_grace_period_seconds: Option<i64>,
    finalizers: Box<[Atom]>,
}

/// `metadata` as decoded.
#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct WireMeta {
    name: Box<str>,
    #[serde(deserialize_with = "nullable")]
    namespace: Atom,
    uid: Uid,
    resource_version: Box<str>,
    generate_name: Option<Atom>,
    creation_timestamp: Seconds,
    deletion_timestamp: Option<Timestamp>,
    deletion_grace_period_seconds: Option<i64>,
    #[serde(deserialize_with = "nullable")]
    labels: Labels,
    #[serde(deserialize_with = "kept_annotations")]
    annotations: Labels,
    #[serde(deserialize_with = "shared_owners")]
    owner_references: SharedList<OwnerRef>,
    #[serde(deserialize_with = "nullable")]
    finalizers: Box<[Atom]>,
}

impl From<WireMeta> for Meta {
    fn from(wire: WireMeta) -> Self {
        let mut meta = Meta {
            name: wire.name,
            namespace: wire.namespace,
            uid: wire.uid,
            resource_version: wire.resource_version,
            generate_name: wire.generate_name,
            created: wire.creation_timestamp,
            labels: wire.labels,
            annotations: wire.annotations,
            owner_references: wire.owner_references,
            rare: None,
        };
        meta.set_rare(RareMeta {
            deletion_timestamp: wire.deletion_timestamp,
            deletion_grace_period_seconds: wire.deletion_grace_period_seconds,
            finalizers: wire.finalizers,
        });
        meta
    }
}

impl Meta {
    /// The ownerReference marked `controller: true`, if any (upstream
    /// `GetControllerOf`).
    pub fn controller(&self) -> Option<&OwnerRef> {
        self.owner_references.iter().find(|r| r.controller == Some(true))
    }

    /// `metadata.creationTimestamp`.
    pub fn creation_timestamp(&self) -> Option<Timestamp> {
        self.created.get()
    }

    /// `metadata.deletionTimestamp`.
    pub fn deletion_timestamp(&self) -> Option<Timestamp> {
        self.rare.as_ref().and_then(|r| r.deletion_timestamp)
    }

    /// `metadata.deletionGracePeriodSeconds`.
    pub fn deletion_grace_period_seconds(&self) -> Option<i64> {
        self.rare.as_ref().and_then(|r| r.deletion_grace_period_seconds)
    }

    /// `metadata.finalizers`.
    pub fn finalizers(&self) -> &[Atom] {
        self.rare.as_ref().map_or(&[], |r| &r.finalizers)
    }

    /// Sets `metadata.deletionTimestamp`.
    pub fn set_deletion_timestamp(&mut self, at: Option<Timestamp>) {
        self.change_rare(|rare| rare.deletion_timestamp = at);
    }

    /// Sets `metadata.finalizers`.
    pub fn set_finalizers(&mut self, finalizers: impl IntoIterator<Item = Atom>) {
        self.change_rare(|rare| rare.finalizers = finalizers.into_iter().collect());
    }

    /// Changes the rare part (made empty if there was none).
    fn change_rare(&mut self, change: impl FnOnce(&mut RareMeta)) {
        let mut rare = self.rare.take().map_or_else(RareMeta::default, |r| *r);
        change(&mut rare);
        self.set_rare(rare);
    }

    /// Keeps `rare` out of line, or nothing when it is all unset.
    fn set_rare(&mut self, rare: RareMeta) {
        self.rare = (rare != RareMeta::default()).then(|| Box::new(rare));
    }

    /// The cache key: `namespace/name`, or `name` when cluster-scoped.
    pub fn key(&self) -> String {
        crate::object_key(Some(&self.namespace), &self.name)
    }

    /// The same metadata as an `ObjectMeta`, for code that reads any
    /// type's metadata (the fields not kept are absent).
    pub fn to_object_meta(&self) -> ObjectMeta {
        let some = |s: &str| (!s.is_empty()).then(|| s.to_owned());
        let map = |l: &Labels| (!l.is_empty()).then(|| l.to_map());
        ObjectMeta {
            name: some(&self.name),
            namespace: some(&self.namespace),
            uid: some(&self.uid.to_string()),
            resource_version: some(&self.resource_version),
            generate_name: self.generate_name.as_deref().map(str::to_owned),
            creation_timestamp: self.creation_timestamp().map(Time),
            deletion_timestamp: self.deletion_timestamp().map(Time),
            deletion_grace_period_seconds: self.deletion_grace_period_seconds(),
            labels: map(&self.labels),
            annotations: map(&self.annotations),
            owner_references: (!self.owner_references.is_empty())
                .then(|| self.owner_references.iter().map(OwnerRef::to_owner_reference).collect()),
            finalizers: (!self.finalizers().is_empty())
                .then(|| self.finalizers().iter().map(|f| f.to_string()).collect()),
            ..ObjectMeta::default()
        }
    }
}

/// An ownerReference, its strings shared (a ReplicaSet's pods all name it).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OwnerRef {
    /// `apiVersion` of the owner.
    pub api_version: Atom,
    /// `kind` of the owner.
    pub kind: Atom,
    /// `name` of the owner.
    pub name: Atom,
    /// `uid` of the owner.
    pub uid: Atom,
    /// Whether the owner is the managing controller.
    #[serde(default)]
    pub controller: Option<bool>,
    /// Whether the owner's foreground deletion waits for this object.
    #[serde(default)]
    pub block_owner_deletion: Option<bool>,
}

impl OwnerRef {
    /// Of the API's form.
    pub fn new(r: &OwnerReference) -> Self {
        let OwnerReference { api_version, kind, name, uid, controller, block_owner_deletion } = r;
        OwnerRef {
            api_version: Atom::new(api_version),
            kind: Atom::new(kind),
            name: Atom::new(name),
            uid: Atom::new(uid),
            controller: *controller,
            block_owner_deletion: *block_owner_deletion,
        }
    }

    /// The API's form.
    pub fn to_owner_reference(&self) -> OwnerReference {
        OwnerReference {
            api_version: self.api_version.to_string(),
            kind: self.kind.to_string(),
            name: self.name.to_string(),
            uid: self.uid.to_string(),
            controller: self.controller,
            block_owner_deletion: self.block_owner_deletion,
        }
    }
}

/// Distinct label sets of the process (a ReplicaSet's pods all carry the
/// same one).
static LABEL_SETS: LazyLock<Pool<[Pair], SharedList<Pair>>> = LazyLock::new(Pool::new);

/// A label or annotation: key and value.
type Pair = (Atom, Atom);

/// Distinct ownerReferences lists of the process (a ReplicaSet's pods all
/// carry the same one).
static OWNER_LISTS: LazyLock<Pool<[OwnerRef], SharedList<OwnerRef>>> = LazyLock::new(Pool::new);

/// A small string map (labels, kept annotations): pairs sorted by key,
/// one shared copy per distinct map.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Labels(SharedList<(Atom, Atom)>);

impl Default for Labels {
    /// The empty map (shared too).
    fn default() -> Self {
        Labels(LABEL_SETS.intern(&[]))
    }
}

impl Labels {
    /// The value under `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0.binary_search_by(|(k, _)| k.as_str().cmp(key)).ok().map(|i| self.0[i].1.as_str())
    }

    /// Every pair, by key.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// Pairs held.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether `other` is this very copy.
    #[cfg(test)]
    pub(crate) fn shares(&self, other: &Labels) -> bool {
        SharedList::ptr_eq(&self.0, &other.0)
    }

    /// Whether `key` is held.
    pub fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// The API's form.
    pub fn to_map(&self) -> BTreeMap<String, String> {
        self.iter().map(|(k, v)| (k.to_owned(), v.to_owned())).collect()
    }

    /// Sets `key` to `value` (the map is shared: this makes another).
    pub fn insert(&mut self, key: &str, value: &str) {
        if self.get(key) != Some(value) {
            let mut pairs = self.0.to_vec();
            pairs.push((Atom::new(key), Atom::new(value)));
            *self = Labels::from_pairs(pairs);
        }
    }

    /// Removes `key`, returning whether it was held.
    pub fn remove(&mut self, key: &str) -> bool {
        let held = self.contains_key(key);
        if held {
            *self = Labels::from_pairs(self.0.iter().filter(|(k, _)| k.as_str() != key).cloned().collect());
        }
        held
    }

    /// Sorts `pairs` by key; a repeated key keeps its last value, as a
    /// JSON object's does.
    fn from_pairs(mut pairs: Vec<(Atom, Atom)>) -> Self {
        pairs.reverse();
        pairs.sort_by(|a, b| a.0.cmp(&b.0));
        pairs.dedup_by(|later, earlier| later.0 == earlier.0);
        Labels(LABEL_SETS.intern(&pairs))
    }
}

impl From<&BTreeMap<String, String>> for Labels {
    fn from(map: &BTreeMap<String, String>) -> Self {
        map.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect()
    }
}

impl<'a> FromIterator<(&'a str, &'a str)> for Labels {
    fn from_iter<I: IntoIterator<Item = (&'a str, &'a str)>>(iter: I) -> Self {
        Labels::from_pairs(iter.into_iter().map(|(k, v)| (Atom::new(k), Atom::new(v))).collect())
    }
}

impl fmt::Debug for Labels {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl<'de> Deserialize<'de> for Labels {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(PairsVisitor { keep: |_: &str| true })
    }
}

/// Decodes a JSON object of strings into [`Labels`], keeping the keys
/// `keep` accepts and skipping the others' values unread.
struct PairsVisitor<F> {
    keep: F,
}

impl<'de, F: Fn(&str) -> bool> Visitor<'de> for PairsVisitor<F> {
    type Value = Labels;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a map of strings")
    }
    fn visit_unit<E: de::Error>(self) -> Result<Labels, E> {
        Ok(Labels::default())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Labels, A::Error> {
        let mut pairs = Vec::new();
        while let Some(key) = map.next_key::<Atom>()? {
            if (self.keep)(&key) {
                pairs.push((key, map.next_value::<Atom>()?));
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(Labels::from_pairs(pairs))
    }
}

/// `metadata.annotations`, keeping only [`KEPT_ANNOTATIONS`].
fn kept_annotations<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Labels, D::Error> {
    deserializer.deserialize_option(OptionalPairs)
}

/// `null` or an annotations object.
struct OptionalPairs;

impl<'de> Visitor<'de> for OptionalPairs {
    type Value = Labels;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a map of strings or null")
    }
    fn visit_none<E: de::Error>(self) -> Result<Labels, E> {
        Ok(Labels::default())
    }
    fn visit_unit<E: de::Error>(self) -> Result<Labels, E> {
        Ok(Labels::default())
    }
    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Labels, D::Error> {
        deserializer.deserialize_map(PairsVisitor { keep: |k: &str| KEPT_ANNOTATIONS.contains(&k) })
    }
}

/// Decodes `metadata.ownerReferences` into the shared copy of the list.
fn shared_owners<'de, D: Deserializer<'de>>(deserializer: D) -> Result<SharedList<OwnerRef>, D::Error> {
    let list: Vec<OwnerRef> = nullable(deserializer)?;
    Ok(shared_owner_list(&list))
}

/// The shared copy of an ownerReferences list.
pub(crate) fn shared_owner_list(list: &[OwnerRef]) -> SharedList<OwnerRef> {
    OWNER_LISTS.intern(list)
}

/// Decodes `null` as the type's default, as Go's decoder leaves a field
/// it reads `null` for at its zero value.
pub(crate) fn nullable<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn decodes_what_it_keeps_and_skips_the_rest() {
        let meta: Meta = serde_json::from_value(json!({
            "name": "web-1", "namespace": "default", "uid": "u-1", "resourceVersion": "42",
            "generateName": "web-", "creationTimestamp": "2026-12-01T10:00:00Z",
            "labels": {"b": "2", "a": "1"},
            "annotations": {"controller.kubernetes.io/pod-deletion-cost": "5", "kubectl.kubernetes.io/last-applied-configuration": "{}"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web", "uid": "rs-1", "controller": true}],
            "finalizers": ["example.com/f"],
            "managedFields": [{"manager": "kubectl"}],
        }))
        .unwrap();
        assert_eq!(meta.key(), "default/web-1");
        assert_eq!(meta.labels.iter().collect::<Vec<_>>(), [("a", "1"), ("b", "2")]);
        assert_eq!(meta.annotations.iter().collect::<Vec<_>>(), [("controller.kubernetes.io/pod-deletion-cost", "5")]);
        assert_eq!(meta.controller().map(|r| r.name.as_str()), Some("web"));
        let full = meta.to_object_meta();
        assert_eq!(full.finalizers, Some(vec!["example.com/f".to_owned()]));
        assert_eq!(full.owner_references.unwrap()[0].controller, Some(true));
        assert_eq!(full.creation_timestamp.unwrap().0.to_string(), "2026-12-01T10:00:00Z");
    }

    #[test]
    fn null_collections_decode_as_empty() {
        let meta: Meta = serde_json::from_value(json!({
            "name": "n", "labels": null, "annotations": null, "ownerReferences": null, "finalizers": null,
        }))
        .unwrap();
        assert!(meta.labels.is_empty() && meta.annotations.is_empty() && meta.owner_references.is_empty());
        assert_eq!(meta.key(), "n");
    }

    #[test]
    fn objects_with_equal_labels_and_owners_share_one_copy_of_each() {
        let meta = |name: &str, labels: serde_json::Value| -> Meta {
            serde_json::from_value(json!({
                "name": name, "namespace": "default", "labels": labels,
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web", "uid": "rs-1", "controller": true}],
            }))
            .unwrap()
        };
        let a = meta("web-a", json!({"app": "web", "pod-template-hash": "7c5d"}));
        let b = meta("web-b", json!({"pod-template-hash": "7c5d", "app": "web"}));
        let c = meta("web-c", json!({"app": "web", "pod-template-hash": "9f00"}));
        assert!(a.labels.shares(&b.labels), "the same map in another order");
        assert!(!a.labels.shares(&c.labels));
        assert_eq!(c.labels.get("pod-template-hash"), Some("9f00"));
        assert!(SharedList::ptr_eq(&a.owner_references, &c.owner_references));
        assert_eq!(c.controller().map(|r| r.uid.as_str()), Some("rs-1"));
    }

    #[test]
    fn a_repeated_label_key_keeps_its_last_value() {
        let labels: Labels = serde_json::from_str(r#"{"a": "1", "a": "2"}"#).unwrap();
        assert_eq!(labels.get("a"), Some("2"));
        assert_eq!(labels.len(), 1);
    }
}
