//! `persistentVolumeClaimRetentionPolicy`: which owner references a pod's
//! claims carry so that the garbage collector deletes them when the set is
//! deleted (`whenDeleted: Delete`: the set controls the claim) or when the
//! pod is scaled away (`whenScaled: Delete`: the condemned pod controls it)
//! (upstream `claimOwnerMatchesSetAndPod`, `updateClaimOwnerRefForSetAndPod`,
//! `hasStaleOwnerRef`, `hasUnexpectedController`; gate
//! `StatefulSetAutoDeletePVC`, GA).
//!
//! | whenScaled | whenDeleted | pod in range | pod condemned |
//! |---|---|---|---|
//! | Retain | Retain | no reference | no reference |
//! | Retain | Delete | the set | the set |
//! | Delete | Retain | no reference | the pod |
//! | Delete | Delete | the set | the pod |
//!
//! References to the set or pod are controller references. A claim with a
//! stale reference (to an earlier set or pod of the same name) is left to
//! the garbage collector; a claim another controller controls only loses
//! our references.

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::PersistentVolumeClaim;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;

use super::identity::in_ordinal_range;
use crate::common::controller_ref::new_controller_ref;

/// `Retain`/`Delete`, as the API spells them.
const RETAIN: &str = "Retain";
const DELETE: &str = "Delete";

/// The pod a claim belongs to, as far as owner references go.
#[derive(Clone, Copy, Debug)]
pub struct PodOwner<'a> {
    /// The pod's name.
    pub name: &'a str,
    /// The pod's uid, `""` for a pod not yet created.
    pub uid: &'a str,
    /// The pod's ordinal.
    pub ordinal: Option<i32>,
}

/// `(whenScaled is Delete, whenDeleted is Delete)`; `Retain` when unset
/// (upstream `getPersistentVolumeClaimRetentionPolicy`). An unknown value
/// counts as `Retain`, as upstream treats an unknown policy.
pub fn policy(set: &StatefulSet) -> (bool, bool) {
    let p = set.spec.persistent_volume_claim_retention_policy.as_ref();
    let delete = |v: Option<&String>| v.map(String::as_str).unwrap_or(RETAIN) == DELETE;
    (delete(p.and_then(|p| p.when_scaled.as_ref())), delete(p.and_then(|p| p.when_deleted.as_ref())))
}

/// Whether `whenScaled` is `Delete`: only then can a claim be stale.
pub fn deletes_when_scaled(set: &StatefulSet) -> bool {
    policy(set).0
}

fn is_set_ref(r: &OwnerReference, set: &StatefulSet) -> bool {
    r.api_version == "apps/v1" && r.kind == "StatefulSet" && Some(&r.name) == set.metadata.name.as_ref()
}

fn is_pod_ref(r: &OwnerReference, pod: &PodOwner<'_>) -> bool {
    r.api_version == "v1" && r.kind == "Pod" && r.name == pod.name
}

fn refs(claim: &PersistentVolumeClaim) -> &[OwnerReference] {
    claim.metadata.owner_references.as_deref().unwrap_or_default()
}

fn has_owner_ref(claim: &PersistentVolumeClaim, uid: &str) -> bool {
    refs(claim).iter().any(|r| r.uid == uid)
}

fn set_uid(set: &StatefulSet) -> &str {
    set.metadata.uid.as_deref().unwrap_or_default()
}

/// Whether the claim's first reference to the pod's name names another uid
/// (upstream `hasStaleOwnerRef` for a pod): an earlier pod of that name
/// owns it, and a pod not yet created matches no uid.
pub fn has_stale_pod_ref(claim: &PersistentVolumeClaim, pod: &PodOwner<'_>) -> bool {
    refs(claim).iter().find(|r| is_pod_ref(r, pod)).is_some_and(|r| r.uid != pod.uid)
}

fn has_stale_set_ref(claim: &PersistentVolumeClaim, set: &StatefulSet) -> bool {
    refs(claim).iter().find(|r| is_set_ref(r, set)).is_some_and(|r| r.uid != set_uid(set))
}

/// Whether, under a policy that deletes claims, something other than this
/// set or pod controls the claim, or a reference to the set's or pod's name
/// has another uid (upstream `hasUnexpectedController`).
pub(super) fn has_unexpected_controller(claim: &PersistentVolumeClaim, set: &StatefulSet, pod: &PodOwner<'_>) -> bool {
    if policy(set) == (false, false) {
        return false;
    }
    refs(claim).iter().any(|r| {
        if is_set_ref(r, set) {
            r.uid != set_uid(set)
        } else if is_pod_ref(r, pod) {
            r.uid != pod.uid
        } else {
            r.controller == Some(true)
        }
    })
}

/// Whether the set or pod owns the claim without controlling it (upstream
/// `hasNonControllerOwner`): an older controller wrote it; it is rewritten.
fn has_non_controller_owner(claim: &PersistentVolumeClaim, set: &StatefulSet, pod: &PodOwner<'_>) -> bool {
    refs(claim).iter().any(|r| (r.uid == set_uid(set) || r.uid == pod.uid) && r.controller != Some(true))
}

/// Whether the claim's references agree with the policy for this pod
/// (upstream `claimOwnerMatchesSetAndPod`, now `isClaimOwnerUpToDate`). Stale references, and an
/// unexpected controller with none of ours, count as agreeing: such claims
/// are not touched.
#[doc(alias = "isClaimOwnerUpToDate")]
pub fn claim_owner_matches_set_and_pod(claim: &PersistentVolumeClaim, set: &StatefulSet, pod: &PodOwner<'_>) -> bool {
    if has_stale_set_ref(claim, set) || has_stale_pod_ref(claim, pod) {
        return true;
    }
    let (set_ref, pod_ref) = (has_owner_ref(claim, set_uid(set)), has_owner_ref(claim, pod.uid));
    if has_unexpected_controller(claim, set, pod) {
        return !(set_ref || pod_ref);
    }
    if has_non_controller_owner(claim, set, pod) {
        return false;
    }
    let scaled_down = !in_ordinal_range(set, pod.ordinal);
    match policy(set) {
        (false, false) => !set_ref && !pod_ref,
        (false, true) => set_ref && !pod_ref,
        (true, false) => !set_ref && scaled_down == pod_ref,
        (true, true) => scaled_down != set_ref && scaled_down == pod_ref,
    }
}

/// Rewrites the claim's references to the set and pod for the policy
/// (upstream `updateClaimOwnerRefForSetAndPod`): ours are removed, then,
/// unless another controller controls the claim, the set or the pod is added
/// as its controller as the table in the module above says.
pub fn update_claim_owner_ref_for_set_and_pod(
    claim: &mut PersistentVolumeClaim,
    set: &StatefulSet,
    pod: &PodOwner<'_>,
) {
    let unexpected = has_unexpected_controller(claim, set, pod);
    let mut refs: Vec<OwnerReference> =
        refs(claim).iter().filter(|r| !is_set_ref(r, set) && !is_pod_ref(r, pod)).cloned().collect();
    if !unexpected {
        let scaled_down = !in_ordinal_range(set, pod.ordinal);
        let (pod_owns, set_owns) = match policy(set) {
            (false, false) => (false, false),
            (false, true) => (false, true),
            (true, false) => (scaled_down, false),
            (true, true) => (scaled_down, !scaled_down),
        };
        if set_owns {
            refs.push(new_controller_ref(&set.metadata, "apps/v1", "StatefulSet"));
        }
        if pod_owns {
            refs.push(OwnerReference {
                api_version: "v1".into(),
                kind: "Pod".into(),
                name: pod.name.to_owned(),
                uid: pod.uid.to_owned(),
                controller: Some(true),
                block_owner_deletion: Some(true),
            });
        }
    }
    claim.metadata.owner_references = (!refs.is_empty()).then_some(refs);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::statefulset::testing::{SetBuilder, claim_with_refs, pod_ref, set_ref};

    const POD_UID: &str = "pod-uid";

    fn pod(ordinal: i32) -> PodOwner<'static> {
        let name: &'static str = Box::leak(format!("foo-{ordinal}").into_boxed_str());
        PodOwner { name, uid: POD_UID, ordinal: Some(ordinal) }
    }

    /// Upstream `TestClaimOwnerMatchesSetAndPod`: every policy, a pod in
    /// range (ordinal 1 of 3) and a condemned one (ordinal 3), with every
    /// combination of set and pod references.
    #[test]
    fn test_claim_owner_matches_set_and_pod() {
        type Case = ((&'static str, &'static str), i32, bool, bool, bool);
        let cases: [Case; 16] = [
            (("Retain", "Retain"), 1, false, false, true),
            (("Retain", "Retain"), 1, true, false, false),
            (("Retain", "Retain"), 1, false, true, false),
            (("Retain", "Delete"), 1, true, false, true),
            (("Retain", "Delete"), 1, false, false, false),
            (("Retain", "Delete"), 3, true, true, false),
            (("Delete", "Retain"), 1, false, false, true),
            (("Delete", "Retain"), 3, false, true, true),
            (("Delete", "Retain"), 3, false, false, false),
            (("Delete", "Retain"), 1, true, false, false),
            (("Delete", "Delete"), 1, true, false, true),
            (("Delete", "Delete"), 3, false, true, true),
            (("Delete", "Delete"), 3, true, false, false),
            (("Delete", "Delete"), 1, false, true, false),
            (("Delete", "Delete"), 1, false, false, false),
            (("Delete", "Delete"), 3, true, true, false),
        ];
        for ((scaled, deleted), ordinal, with_set, with_pod, want) in cases {
            let set = SetBuilder::new(3).retention(scaled, deleted).build();
            let mut refs = Vec::new();
            if with_set {
                refs.push(set_ref(&set));
            }
            if with_pod {
                refs.push(pod_ref(&format!("foo-{ordinal}"), POD_UID));
            }
            let claim = claim_with_refs(refs);
            let got = claim_owner_matches_set_and_pod(&claim, &set, &pod(ordinal));
            assert_eq!(got, want, "{scaled}/{deleted} ordinal {ordinal} set={with_set} pod={with_pod}");
        }
    }

    /// Upstream `TestUpdateClaimOwnerRefForSetAndPod`: after the update the
    /// claim matches the policy, whatever it started with.
    #[test]
    fn test_update_claim_owner_ref_for_set_and_pod() {
        for (scaled, deleted) in
            [("Retain", "Retain"), ("Retain", "Delete"), ("Delete", "Retain"), ("Delete", "Delete")]
        {
            let set = SetBuilder::new(3).retention(scaled, deleted).build();
            for ordinal in [1, 3] {
                for refs in [vec![], vec![set_ref(&set)], vec![pod_ref(&format!("foo-{ordinal}"), POD_UID)]] {
                    let mut claim = claim_with_refs(refs);
                    update_claim_owner_ref_for_set_and_pod(&mut claim, &set, &pod(ordinal));
                    assert!(
                        claim_owner_matches_set_and_pod(&claim, &set, &pod(ordinal)),
                        "{scaled}/{deleted} {ordinal}"
                    );
                    for r in claim.metadata.owner_references.iter().flatten() {
                        assert_eq!(r.controller, Some(true), "our references are controller references");
                    }
                }
            }
        }
    }

    /// Upstream `TestHasOwnerRef`/`TestHasUnexpectedController` cases: a
    /// claim another controller controls keeps that controller and loses
    /// ours; a stale reference (earlier set uid) leaves the claim alone.
    #[test]
    fn test_has_unexpected_controller() {
        let set = SetBuilder::new(3).retention("Delete", "Delete").build();
        let other = OwnerReference {
            api_version: "apps/v1".into(),
            kind: "ReplicaSet".into(),
            name: "rs".into(),
            uid: "rs-uid".into(),
            controller: Some(true),
            block_owner_deletion: None,
        };
        let mut claim = claim_with_refs(vec![other.clone(), set_ref(&set)]);
        assert!(!claim_owner_matches_set_and_pod(&claim, &set, &pod(1)));
        update_claim_owner_ref_for_set_and_pod(&mut claim, &set, &pod(1));
        assert_eq!(claim.metadata.owner_references, Some(vec![other.clone()]));
        assert!(claim_owner_matches_set_and_pod(&claim, &set, &pod(1)));

        let mut stale = set_ref(&set);
        stale.uid = "old-set".into();
        assert!(claim_owner_matches_set_and_pod(&claim_with_refs(vec![stale]), &set, &pod(1)));
        let retain = SetBuilder::new(3).build();
        assert!(!has_unexpected_controller(&claim_with_refs(vec![other]), &retain, &pod(1)));
    }

    /// Upstream `TestHasStaleOwnerRef`.
    #[test]
    fn test_has_stale_owner_ref() {
        let fresh = claim_with_refs(vec![pod_ref("foo-1", POD_UID)]);
        assert!(!has_stale_pod_ref(&fresh, &pod(1)));
        let stale = claim_with_refs(vec![pod_ref("foo-1", "old-uid")]);
        assert!(has_stale_pod_ref(&stale, &pod(1)));
        let not_created = PodOwner { name: "foo-1", uid: "", ordinal: Some(1) };
        assert!(has_stale_pod_ref(&fresh, &not_created), "a pod not yet created matches no uid");
        assert!(!has_stale_pod_ref(&claim_with_refs(vec![]), &not_created));
    }
}
