//! Controller references: who controls a dependent, and the claim decision
//! (adopt orphans that match, release owned dependents that no longer match,
//! leave everything else alone), as upstream's `controller_ref_manager.go`
//! `ClaimObject` decides it, and the plan steps that carry it out
//! ([`plan_claim_patches`]). The patches themselves are [`OwnerRefPatch`];
//! the live re-check of the owner before adopting is
//! [`Action::RecheckOwner`](crate::plan::Action).

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kcm_objects::ReplicaSet;

use super::object::Metadata;
use super::selector::{LabelSet, Selector};
use crate::plan::{Action, ObjectRef, OwnerRefPatch, Plan};

/// The ownerReference marked `controller: true`, if any (upstream `GetControllerOf`).
pub fn controller_of(meta: &ObjectMeta) -> Option<&OwnerReference> {
    meta.owner_references.iter().flatten().find(|r| r.controller == Some(true))
}

/// A controller reference to `owner` (upstream `NewControllerRef`): the
/// dependent is controlled by it and blocks its foreground deletion.
pub fn new_controller_ref(owner: &impl Metadata, api_version: &str, kind: &str) -> OwnerReference {
    OwnerReference {
        api_version: api_version.to_owned(),
        kind: kind.to_owned(),
        name: owner.object_name().to_owned(),
        uid: owner.object_uid().to_string(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

/// What a controller does with one candidate dependent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Claim {
    /// Ours and matching: counted as ours.
    Owned,
    /// An orphan that matches: patch in our controller reference, then it
    /// counts as ours.
    Adopt,
    /// Ours but no longer matching: patch our reference away; not ours.
    Release,
    /// Someone else's, or an orphan we may not take: not ours, no write.
    Ignore,
}

/// Decides the claim of `owner` over one dependent (upstream `ClaimObject`):
///
/// | dependent's controller | selector matches | owner deleting | decision |
/// |---|---|---|---|
/// | another uid | any | any | Ignore |
/// | ours | yes | any | Owned |
/// | ours | no | no | Release |
/// | ours | no | yes | Ignore |
/// | none | yes | no (and dependent not deleting, same namespace) | Adopt |
/// | none | otherwise | | Ignore |
pub fn claim(owner: &impl Metadata, selector: &Selector, dependent: &DependentView<'_>) -> Claim {
    let owner_deleting = owner.being_deleted();
    let matches = selector.matches(dependent.labels);
    match dependent.controller_uid {
        Some(uid) if owner.object_uid() != uid => Claim::Ignore,
        Some(_) if matches => Claim::Owned,
        Some(_) if owner_deleting => Claim::Ignore,
        Some(_) => Claim::Release,
        None if owner_deleting || !matches => Claim::Ignore,
        None if dependent.deleting => Claim::Ignore,
        None if dependent.namespace != owner.object_namespace() => Claim::Ignore,
        None => Claim::Adopt,
    }
}

/// What a claim reads of a dependent.
pub struct DependentView<'a> {
    /// Its namespace.
    pub namespace: &'a str,
    /// The uid of its controller, if it has one.
    pub controller_uid: Option<&'a str>,
    /// Whether it is being deleted.
    pub deleting: bool,
    /// Its labels.
    pub labels: &'a dyn LabelSet,
}

/// Something a controller claims: ReplicaSets (by Deployments), cached
/// pods (by ReplicaSets, DaemonSets), ControllerRevisions (by DaemonSets
/// and StatefulSets).
pub trait Dependent {
    /// What [`claim`] reads of it.
    fn dependent(&self) -> DependentView<'_>;
}

impl Dependent for ObjectMeta {
    fn dependent(&self) -> DependentView<'_> {
        DependentView {
            namespace: self.namespace.as_deref().unwrap_or_default(),
            controller_uid: controller_of(self).map(|r| r.uid.as_str()),
            deleting: self.deletion_timestamp.is_some(),
            labels: &self.labels,
        }
    }
}

impl Dependent for ReplicaSet {
    fn dependent(&self) -> DependentView<'_> {
        let meta = &self.metadata;
        DependentView {
            namespace: &meta.namespace,
            controller_uid: meta.controller().map(|r| r.uid.as_str()),
            deleting: meta.deletion_timestamp.is_some(),
            labels: &meta.labels,
        }
    }
}

impl Dependent for ControllerRevision {
    fn dependent(&self) -> DependentView<'_> {
        self.metadata.dependent()
    }
}

impl Dependent for kcm_objects::Pod {
    fn dependent(&self) -> DependentView<'_> {
        let meta = &self.metadata;
        DependentView {
            namespace: &meta.namespace,
            controller_uid: meta.controller().map(|r| r.uid.as_str()),
            deleting: meta.deletion_timestamp().is_some(),
            labels: &meta.labels,
        }
    }
}

/// The claim decisions over a set of candidates, in input order.
#[derive(Debug)]
pub struct Claims<'a, T> {
    /// Dependents that are ours after the claim (owned and adopted).
    pub claimed: Vec<&'a T>,
    /// Orphans to adopt (also in `claimed`).
    pub adopt: Vec<&'a T>,
    /// Owned dependents to release (not in `claimed`).
    pub release: Vec<&'a T>,
}

/// Runs [`claim`] over every candidate.
pub fn claim_all<'a, T>(
    owner: &impl Metadata,
    selector: &Selector,
    candidates: impl IntoIterator<Item = &'a T>,
) -> Claims<'a, T>
where
    T: Dependent + 'a,
{
    let mut claims = Claims { claimed: Vec::new(), adopt: Vec::new(), release: Vec::new() };
    for obj in candidates {
        match claim(owner, selector, &obj.dependent()) {
            Claim::Owned => claims.claimed.push(obj),
            Claim::Adopt => {
                claims.claimed.push(obj);
                claims.adopt.push(obj);
            }
            Claim::Release => claims.release.push(obj),
            Claim::Ignore => {}
        }
    }
    claims
}

/// Appends the writes of `claims` to `plan`, each patch built by `patch`:
/// the releases (concurrently), then, if anything is adopted, the live
/// re-check of `owner` and the adoptions with `controller_ref`
/// (concurrently). A failed step ends the sync, as upstream returns the
/// claim's error before doing anything else.
pub fn plan_claim_patches<T, W>(
    plan: &mut Plan<W>,
    owner: &ObjectRef,
    controller_ref: &OwnerReference,
    claims: &Claims<'_, T>,
    patch: impl Fn(&T, OwnerRefPatch) -> Action<W>,
) {
    plan.push_concurrent(
        claims.release.iter().map(|d| patch(d, OwnerRefPatch::Release { owner_uid: owner.uid.clone() })).collect(),
    );
    if !claims.adopt.is_empty() {
        plan.push(Action::RecheckOwner { owner: owner.clone() });
        plan.push_concurrent(
            claims.adopt.iter().map(|d| patch(d, OwnerRefPatch::Adopt(controller_ref.clone()))).collect(),
        );
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, Time};

    use super::*;
    use crate::testing::ts;

    fn meta(ns: &str, uid: &str, app: &str, controller: Option<&str>, deleting: bool) -> ObjectMeta {
        ObjectMeta {
            namespace: Some(ns.into()),
            uid: Some(uid.into()),
            name: Some(uid.into()),
            labels: Some(BTreeMap::from([("app".to_string(), app.to_string())])),
            owner_references: controller
                .map(|u| vec![OwnerReference { uid: u.into(), controller: Some(true), ..Default::default() }]),
            deletion_timestamp: deleting.then(|| Time(ts(0))),
            ..Default::default()
        }
    }

    #[test]
    fn claim_table() {
        let selector = Selector::new(Some(&LabelSelector {
            match_labels: Some(BTreeMap::from([("app".to_string(), "web".to_string())])),
            ..Default::default()
        }))
        .unwrap();
        let live = meta("ns", "rs", "web", None, false);
        let dying = meta("ns", "rs", "web", None, true);
        let cases = [
            ("owned by other", &live, meta("ns", "p", "web", Some("other"), false), Claim::Ignore),
            ("owned, matching", &live, meta("ns", "p", "web", Some("rs"), false), Claim::Owned),
            ("owned, matching, owner deleting", &dying, meta("ns", "p", "web", Some("rs"), false), Claim::Owned),
            ("owned, not matching", &live, meta("ns", "p", "db", Some("rs"), false), Claim::Release),
            ("owned, not matching, owner deleting", &dying, meta("ns", "p", "db", Some("rs"), false), Claim::Ignore),
            ("orphan matching", &live, meta("ns", "p", "web", None, false), Claim::Adopt),
            ("orphan matching, owner deleting", &dying, meta("ns", "p", "web", None, false), Claim::Ignore),
            ("orphan not matching", &live, meta("ns", "p", "db", None, false), Claim::Ignore),
            ("orphan deleting", &live, meta("ns", "p", "web", None, true), Claim::Ignore),
            ("orphan other namespace", &live, meta("other", "p", "web", None, false), Claim::Ignore),
        ];
        for (name, owner, dep, want) in cases {
            assert_eq!(claim(owner, &selector, &dep.dependent()), want, "{name}");
        }
    }

    #[test]
    fn controller_ref_blocks_owner_deletion() {
        let r = new_controller_ref(&meta("ns", "rs-uid", "web", None, false), "apps/v1", "ReplicaSet");
        assert_eq!(r.uid, "rs-uid");
        assert_eq!(r.kind, "ReplicaSet");
        assert_eq!(r.controller, Some(true));
        assert_eq!(r.block_owner_deletion, Some(true));
    }
}
