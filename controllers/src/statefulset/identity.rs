//! A StatefulSet pod's stable identity and storage (upstream
//! `stateful_set_utils.go`): its name `<set>-<ordinal>`, the ordinals the
//! set runs (`spec.ordinals.start` up to `start + replicas - 1`), the
//! `statefulset.kubernetes.io/pod-name` and `apps.kubernetes.io/pod-index`
//! labels, the hostname and subdomain (from `serviceName`) set once at
//! creation, and one PersistentVolumeClaim per `volumeClaimTemplates` entry,
//! named `<template>-<set>-<ordinal>`.
//!
//! The checks (`identity_matches`, `storage_matches`) read the cached
//! projection of a pod; the repairs (`update_identity`, `update_storage`)
//! write the API's form, which is what a new pod is built from and what
//! an existing pod's live copy is repaired with ([`Repair`]).

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::{
    PersistentVolumeClaim, PersistentVolumeClaimVolumeSource, Pod as ApiPod, Volume as ApiVolume,
};
use kcm_objects::Pod;

use super::{POD_INDEX_LABEL, POD_NAME_LABEL, name, namespace, replicas};

/// The parent name and ordinal of a pod named `<parent>-<ordinal>` (upstream
/// `getParentNameAndOrdinal`): the ordinal is the trailing run of digits
/// after the last dash that parses as an `i32`; `None` for any other name.
pub fn parent_and_ordinal(pod_name: &str) -> Option<(&str, i32)> {
    let (parent, digits) = pod_name.rsplit_once('-')?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((parent, digits.parse().ok()?))
}

/// A pod's ordinal, if its name has one (upstream `getOrdinal`, -1 there).
pub fn ordinal(pod: &Pod) -> Option<i32> {
    parent_and_ordinal(&pod.metadata.name).map(|(_, o)| o)
}

/// The first ordinal the set runs (`spec.ordinals.start`, 0 when unset;
/// upstream `getStartOrdinal`, gate `StatefulSetStartOrdinal`, GA).
pub fn start_ordinal(set: &StatefulSet) -> i32 {
    set.spec.ordinals.as_ref().and_then(|o| o.start).unwrap_or(0)
}

/// The last ordinal the set runs, `start + replicas - 1` (upstream
/// `getEndOrdinal`); below the start when there are no replicas.
pub fn end_ordinal(set: &StatefulSet) -> i64 {
    i64::from(start_ordinal(set)) + i64::from(replicas(set)) - 1
}

/// Whether the pod's ordinal is one the set runs now (upstream
/// `podInOrdinalRange`); pods outside it are condemned.
pub fn in_ordinal_range(set: &StatefulSet, ordinal: Option<i32>) -> bool {
    ordinal.is_some_and(|o| o >= start_ordinal(set) && i64::from(o) <= end_ordinal(set))
}

/// `<set>-<ordinal>` (upstream `getPodName`).
pub fn pod_name(set: &StatefulSet, ordinal: i32) -> String {
    format!("{}-{ordinal}", name(set))
}

/// `<template>-<set>-<ordinal>` (upstream `getPersistentVolumeClaimName`).
pub fn claim_name(set: &StatefulSet, template: &PersistentVolumeClaim, ordinal: i32) -> String {
    format!("{}-{}-{ordinal}", template.metadata.name.as_deref().unwrap_or_default(), name(set))
}

/// Whether `claim` is the name of one of the set's claims, that of a
/// template for some ordinal (the inverse of [`claim_name`]).
pub fn names_claim(set: &StatefulSet, claim: &str) -> bool {
    let Some((prefix, _)) = parent_and_ordinal(claim) else { return false };
    let Some(template) = prefix.strip_suffix(name(set)).and_then(|p| p.strip_suffix('-')) else { return false };
    templates(set).iter().any(|t| t.metadata.name.as_deref() == Some(template))
}

/// Whether the pod's name makes it a member of the set (upstream
/// `isMemberOf`): only members are claimed.
pub fn is_member_of(set: &StatefulSet, pod: &Pod) -> bool {
    parent_and_ordinal(&pod.metadata.name).is_some_and(|(parent, _)| parent == name(set))
}

/// Whether the pod carries the identity of its ordinal in the set (upstream
/// `identityMatches`): its name, namespace and pod-name label. The hostname
/// and subdomain are immutable and only set at creation, so not checked.
pub fn identity_matches(set: &StatefulSet, pod: &Pod) -> bool {
    let Some((parent, ordinal)) = parent_and_ordinal(&pod.metadata.name) else { return false };
    ordinal >= 0
        && parent == name(set)
        && *pod.metadata.name == pod_name(set, ordinal)
        && pod.metadata.namespace == namespace(set)
        && pod.metadata.labels.get(POD_NAME_LABEL) == Some(&*pod.metadata.name)
}

/// Whether the pod mounts, for every claim template, a volume of the
/// template's name backed by its ordinal's claim (upstream `storageMatches`).
pub fn storage_matches(set: &StatefulSet, pod: &Pod) -> bool {
    let Some(ordinal) = ordinal(pod) else { return false };
    templates(set).iter().all(|t| {
        let volume = t.metadata.name.as_deref().unwrap_or_default();
        pod.spec.rare().claim_volumes.iter().any(|v| &*v.name == volume && *v.claim_name == claim_name(set, t, ordinal))
    })
}

/// `spec.volumeClaimTemplates`.
pub fn templates(set: &StatefulSet) -> &[PersistentVolumeClaim] {
    set.spec.volume_claim_templates.as_deref().unwrap_or_default()
}

/// The claims the pod with `ordinal` mounts, in template order (upstream
/// `getPersistentVolumeClaims`): each template named for the ordinal, in the
/// set's namespace, its labels overlaid with the set's `matchLabels`.
pub fn claims_for(set: &StatefulSet, ordinal: i32) -> Vec<PersistentVolumeClaim> {
    templates(set)
        .iter()
        .map(|t| {
            let mut claim = t.clone();
            claim.metadata.name = Some(claim_name(set, t, ordinal));
            claim.metadata.namespace = set.metadata.namespace.clone();
            let labels = claim.metadata.labels.get_or_insert_default();
            labels.extend(set.spec.selector.match_labels.clone().unwrap_or_default());
            if labels.is_empty() && set.spec.selector.match_labels.is_none() && t.metadata.labels.is_none() {
                claim.metadata.labels = None;
            }
            claim
        })
        .collect()
}

/// What makes a pod the member `<set>-<ordinal>`: applied to a new pod, and
/// by the sync to the live copy of a pod whose identity or storage does
/// not match (upstream `updateIdentity` and `updateStorage`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Repair {
    /// `<set>-<ordinal>`.
    pub name: String,
    /// The set's namespace.
    pub namespace: String,
    /// The ordinal, for the pod-index label.
    pub ordinal: i32,
    /// `(template name, claim name)` per claim template, in template order.
    pub volumes: Vec<(String, String)>,
}

impl Repair {
    /// The repair of the member with `ordinal`.
    pub fn new(set: &StatefulSet, ordinal: i32) -> Self {
        let volumes = templates(set)
            .iter()
            .map(|t| (t.metadata.name.clone().unwrap_or_default(), claim_name(set, t, ordinal)))
            .collect();
        Self { name: pod_name(set, ordinal), namespace: namespace(set).to_owned(), ordinal, volumes }
    }

    /// Gives `pod` its identity and storage; true if anything changed, so
    /// the sync updates the pod only then (and re-applies this to the
    /// fresh copy after a conflict, as upstream's `RetryOnConflict` does).
    pub fn apply(&self, pod: &mut ApiPod) -> bool {
        let before = pod.clone();
        self.update_identity(pod);
        self.update_storage(pod);
        *pod != before
    }

    /// Name, namespace, and the pod-name and pod-index labels (upstream
    /// `updateIdentity`; gate `PodIndexLabel` is GA).
    pub fn update_identity(&self, pod: &mut ApiPod) {
        pod.metadata.name = Some(self.name.clone());
        pod.metadata.namespace = Some(self.namespace.clone());
        let labels = pod.metadata.labels.get_or_insert_default();
        labels.insert(POD_NAME_LABEL.to_owned(), self.name.clone());
        labels.insert(POD_INDEX_LABEL.to_owned(), self.ordinal.to_string());
    }

    /// One `persistentVolumeClaim` volume per template, replacing any volume
    /// of the same name, then the pod's other volumes (upstream
    /// `updateStorage`).
    pub fn update_storage(&self, pod: &mut ApiPod) {
        if self.volumes.is_empty() {
            return;
        }
        let spec = pod.spec.get_or_insert_default();
        let current = spec.volumes.take().unwrap_or_default();
        let mut volumes: Vec<ApiVolume> = self
            .volumes
            .iter()
            .map(|(volume, claim)| ApiVolume {
                name: volume.clone(),
                // Upstream's `ReadOnly: false`, which its encoding leaves out:
                // a pod that has the volume already is not changed by the
                // repair (an API server refuses volume changes).
                persistent_volume_claim: Some(PersistentVolumeClaimVolumeSource {
                    claim_name: claim.clone(),
                    read_only: None,
                }),
                ..Default::default()
            })
            .collect();
        volumes.extend(current.into_iter().filter(|v| !self.volumes.iter().any(|(name, _)| *name == v.name)));
        spec.volumes = Some(volumes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::statefulset::testing::{SetBuilder, member};

    /// A member missing only its identity labels, whose claim volume has
    /// no `readOnly` (as any pod created from the set has it), is repaired
    /// in its labels alone: its volumes are left as they are.
    #[test]
    fn repair_of_a_member_with_its_storage_changes_no_volume() {
        let set = SetBuilder::new(2).claim("data").build();
        let mut pod = member(&set, 1).no_labels().volume("data", "data-foo-1").api();
        let volumes = pod.spec.as_ref().and_then(|s| s.volumes.clone());
        assert!(Repair::new(&set, 1).apply(&mut pod), "the labels are repaired");
        assert_eq!(pod.spec.and_then(|s| s.volumes), volumes);
    }

    #[test]
    fn test_get_parent_name_and_ordinal() {
        assert_eq!(parent_and_ordinal("foo-1"), Some(("foo", 1)));
        assert_eq!(parent_and_ordinal("my-set-12"), Some(("my-set", 12)));
        assert_eq!(parent_and_ordinal("foo"), None);
        assert_eq!(parent_and_ordinal("foo-"), None);
        assert_eq!(parent_and_ordinal("foo-bar"), None);
        assert_eq!(parent_and_ordinal("foo-99999999999"), None);
        let set = SetBuilder::new(3).build();
        assert!(is_member_of(&set, &member(&set, 1).build()));
        let other = SetBuilder::new(3).name("bar").build();
        assert!(!is_member_of(&other, &member(&set, 1).build()));
    }

    #[test]
    fn test_get_claim_pvc_name() {
        let set = SetBuilder::new(3).claim("datadir").build();
        assert_eq!(claim_name(&set, &templates(&set)[0], 2), "datadir-foo-2");
    }

    #[test]
    fn a_claim_is_named_by_the_set_whose_template_and_name_it_carries() {
        let set = SetBuilder::new(3).claim("data-dir").build();
        assert!(names_claim(&set, "data-dir-foo-7"), "any ordinal, a template name with a dash");
        assert!(!names_claim(&set, "data-dir-foo"), "no ordinal");
        assert!(!names_claim(&set, "datadir-foo-1"), "another template");
        assert!(!names_claim(&set, "data-dir-xfoo-1"), "another set");
        assert!(!names_claim(&set, "data-dirfoo-1"), "no dash between template and set");
        assert!(!names_claim(&SetBuilder::new(3).build(), "data-dir-foo-1"), "no templates");
    }

    #[test]
    fn test_identity_matches() {
        let set = SetBuilder::new(3).build();
        assert!(identity_matches(&set, &member(&set, 1).build()), "newly created pod");
        assert!(!identity_matches(&set, &member(&set, 1).name("foo-x").build()), "no ordinal");
        assert!(!identity_matches(&set, &member(&set, 1).name("bar-1").build()), "other parent");
        assert!(!identity_matches(&set, &member(&set, 1).namespace("other").build()), "other namespace");
        assert!(!identity_matches(&set, &member(&set, 1).label(POD_NAME_LABEL, "foo-2").build()), "label");
        assert!(!identity_matches(&set, &member(&set, 1).no_labels().build()), "no labels");
    }

    #[test]
    fn test_storage_matches() {
        let set = SetBuilder::new(3).claim("datadir").build();
        assert!(storage_matches(&set, &member(&set, 1).build()), "newly created pod");
        assert!(!storage_matches(&set, &member(&set, 1).no_volumes().build()), "no volumes");
        assert!(!storage_matches(&set, &member(&set, 1).volume("datadir", "datadir-foo-2").build()), "wrong claim");
        assert!(!storage_matches(&set, &member(&set, 1).name("foo-x").build()), "no ordinal");
        assert!(storage_matches(&SetBuilder::new(3).build(), &member(&set, 1).no_volumes().build()), "no templates");
    }

    #[test]
    fn test_update_identity() {
        let set = SetBuilder::new(3).build();
        let mut pod = member(&set, 1).api();
        pod.metadata.labels = None;
        pod.metadata.namespace = Some("other".into());
        let repair = Repair::new(&set, 1);
        assert!(repair.apply(&mut pod));
        let labels = pod.metadata.labels.clone().unwrap();
        assert_eq!(labels.get(POD_NAME_LABEL).map(String::as_str), Some("foo-1"));
        assert_eq!(labels.get(POD_INDEX_LABEL).map(String::as_str), Some("1"));
        assert_eq!(pod.metadata.namespace.as_deref(), Some("ns"));
        assert!(!repair.apply(&mut pod), "a repaired pod needs nothing more");
    }

    #[test]
    fn test_update_storage() {
        let set = SetBuilder::new(3).claim("datadir").claim("logs").build();
        let mut pod = member(&set, 1).api();
        pod.spec.get_or_insert_default().volumes = Some(vec![
            ApiVolume { name: "datadir".into(), ..Default::default() },
            ApiVolume { name: "scratch".into(), ..Default::default() },
        ]);
        Repair::new(&set, 1).update_storage(&mut pod);
        let volumes = pod.spec.unwrap().volumes.unwrap();
        let got: Vec<(String, Option<String>)> =
            volumes.into_iter().map(|v| (v.name, v.persistent_volume_claim.map(|c| c.claim_name))).collect();
        assert_eq!(
            got,
            [
                ("datadir".into(), Some("datadir-foo-1".into())),
                ("logs".into(), Some("logs-foo-1".into())),
                ("scratch".into(), None)
            ]
        );
    }

    #[test]
    fn test_get_persistent_volume_claims() {
        let set = SetBuilder::new(3).claim("datadir").claim_labels(&[("a", "b")]).build();
        let claims = claims_for(&set, 1);
        assert_eq!(claims.len(), 1);
        assert_eq!(claims[0].metadata.name.as_deref(), Some("datadir-foo-1"));
        assert_eq!(claims[0].metadata.namespace.as_deref(), Some("ns"));
        let labels = claims[0].metadata.labels.clone().unwrap();
        assert_eq!(labels.get("a").map(String::as_str), Some("b"));
        assert_eq!(labels.get("app").map(String::as_str), Some("foo"));
    }

    #[test]
    fn test_ordinal_range_with_start() {
        let set = SetBuilder::new(3).start(5).build();
        assert_eq!((start_ordinal(&set), end_ordinal(&set)), (5, 7));
        let cases = [(Some(4), false), (Some(5), true), (Some(7), true), (Some(8), false), (None, false)];
        for (ordinal, want) in cases {
            assert_eq!(in_ordinal_range(&set, ordinal), want, "{ordinal:?}");
        }
    }
}
