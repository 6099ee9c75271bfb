//! Which ControllerRevisions a parent owns (upstream
//! `ControllerRevisionControllerRefManager.ClaimControllerRevisions`): the
//! claim decision of [`claim`](crate::common::controller_ref::claim) over
//! revisions, and the patches that carry it out.
//!
//! Adopting follows upstream's guards: only an orphan of the parent's
//! namespace that the selector matches, not being deleted, by a parent not
//! being deleted, after the parent has been re-read live
//! ([`Action::RecheckOwner`]). Releasing removes the parent's reference from
//! an owned revision the selector no longer matches.

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};

use super::Write;
use crate::common::controller_ref::{Claims, claim_all, plan_claim_patches};
use crate::common::selector::Selector;
use crate::plan::{Action, ObjectRef, OwnerRefPatch, Plan};

/// The claim of `parent` over `revisions` (its namespace's, or any: those
/// of other namespaces are ignored).
pub fn claim_controller_revisions<'a>(
    parent: &ObjectMeta,
    selector: &Selector,
    revisions: impl IntoIterator<Item = &'a ControllerRevision>,
) -> Claims<'a, ControllerRevision> {
    claim_all(parent, selector, revisions)
}

/// Appends the writes of `claims` to `plan`: the releases, then, if
/// anything is adopted, the live re-check of `owner` and the adoptions with
/// `controller_ref` (see
/// [`plan_claim_patches`](crate::common::controller_ref::plan_claim_patches)).
pub fn plan_claims<W>(
    plan: &mut Plan<W>,
    owner: &ObjectRef,
    controller_ref: &OwnerReference,
    claims: &Claims<'_, ControllerRevision>,
) {
    let patch = |cr: &ControllerRevision, patch: OwnerRefPatch| {
        Action::ControllerRevision(Write::PatchOwnerRefs {
            namespace: cr.metadata.namespace.clone().unwrap_or_default(),
            name: cr.metadata.name.clone().unwrap_or_default(),
            uid: cr.metadata.uid.clone().unwrap_or_default(),
            patch,
        })
    };
    plan_claim_patches(plan, owner, controller_ref, claims, patch);
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

    use super::*;
    use crate::common::controller_ref::new_controller_ref;
    use crate::common::history::testing::{revision, selector, stateful_set};
    use crate::common::object::object_ref;
    use crate::testing::ts;

    fn name(cr: &ControllerRevision) -> String {
        cr.metadata.name.clone().unwrap_or_default()
    }

    /// Upstream `TestRealHistory_AdoptControllerRevision` and
    /// `TestFakeHistory_AdoptControllerRevision`: an orphan is adopted; a
    /// revision owned by another parent is not (upstream's error); one that
    /// is not there is not either (the executor's NotFound).
    #[test]
    fn adopt_controller_revision() {
        let ss1 = stateful_set("ss1", "ss1", &[("foo", "bar")]);
        let ss2 = stateful_set("ss2", "ss2", &[("foo", "bar")]);
        let mut ss1_rev2 = revision(&ss1, 2, Some(0));
        ss1_rev2.metadata.owner_references = Some(vec![]);
        let ss2_rev1 = revision(&ss2, 1, Some(0));

        let claims = claim_controller_revisions(&ss1.metadata, &selector(&ss1), [&ss1_rev2, &ss2_rev1]);
        assert_eq!(
            claims.adopt.iter().map(|c| name(c)).collect::<Vec<_>>(),
            [name(&ss1_rev2)],
            "adopting an orphan succeeds"
        );
        assert_eq!(claims.claimed.len(), 1, "adopting an owned revision fails");

        let owner = object_ref("apps/v1", "StatefulSet", &ss1.metadata);
        let cref = new_controller_ref(&ss1.metadata, "apps/v1", "StatefulSet");
        let mut plan = Plan::new();
        plan_claims(&mut plan, &owner, &cref, &claims);
        let actions: Vec<&Action> = plan.actions().collect();
        assert_eq!(actions[0], &Action::RecheckOwner { owner: owner.clone() });
        let Action::ControllerRevision(Write::PatchOwnerRefs { name: patched, patch, .. }) = actions[1] else {
            panic!("{actions:?}")
        };
        assert_eq!(patched, &name(&ss1_rev2));
        assert_eq!(patch, &OwnerRefPatch::Adopt(cref));
        assert_eq!(actions.len(), 2);

        let none: [&ControllerRevision; 0] = [];
        let claims = claim_controller_revisions(&ss1.metadata, &selector(&ss1), none);
        assert!(claims.adopt.is_empty(), "adopting a non-existent revision fails");
    }

    /// Upstream `TestRealHistory_ReleaseControllerRevision` and
    /// `TestFakeHistory_ReleaseControllerRevision`: an owned revision the
    /// selector no longer matches is released; an orphan and another
    /// parent's revision are left alone (upstream's patch would be refused
    /// as Invalid and tolerated); nothing is written for a revision that is
    /// not there.
    #[test]
    fn release_controller_revision() {
        let ss1 = stateful_set("ss1", "ss1", &[("foo", "bar")]);
        let ss2 = stateful_set("ss2", "ss2", &[("goo", "car")]);
        let mut ss1_rev1 = revision(&ss1, 1, None);
        ss1_rev1.metadata.labels = Some([("foo".to_string(), "other".to_string())].into());
        let mut ss1_rev2 = revision(&ss1, 2, None);
        ss1_rev2.metadata.owner_references = Some(vec![]);
        ss1_rev2.metadata.labels = None;
        let ss2_rev1 = revision(&ss2, 1, None);
        let claims = claim_controller_revisions(&ss1.metadata, &selector(&ss1), [&ss1_rev1, &ss1_rev2, &ss2_rev1]);
        assert_eq!(claims.release.iter().map(|c| name(c)).collect::<Vec<_>>(), [name(&ss1_rev1)]);
        assert!(claims.claimed.is_empty() && claims.adopt.is_empty());

        let owner = object_ref("apps/v1", "StatefulSet", &ss1.metadata);
        let cref = new_controller_ref(&ss1.metadata, "apps/v1", "StatefulSet");
        let mut plan = Plan::new();
        plan_claims(&mut plan, &owner, &cref, &claims);
        let actions: Vec<&Action> = plan.actions().collect();
        assert!(matches!(
            actions.as_slice(),
            [Action::ControllerRevision(Write::PatchOwnerRefs { patch: OwnerRefPatch::Release { owner_uid }, .. })]
                if owner_uid == "ss1"
        ));
    }

    /// A parent being deleted adopts nothing and releases nothing, and a
    /// revision being deleted is not adopted (upstream `ClaimObject`).
    #[test]
    fn deleting_parent_or_revision() {
        let mut ss1 = stateful_set("ss1", "ss1", &[("foo", "bar")]);
        let mut orphan = revision(&ss1, 1, None);
        orphan.metadata.owner_references = None;
        let mut dying = orphan.clone();
        dying.metadata.deletion_timestamp = Some(Time(ts(0)));
        let claims = claim_controller_revisions(&ss1.metadata, &selector(&ss1), [&dying]);
        assert!(claims.adopt.is_empty());
        ss1.metadata.deletion_timestamp = Some(Time(ts(0)));
        let claims = claim_controller_revisions(&ss1.metadata, &selector(&ss1), [&orphan]);
        assert!(claims.adopt.is_empty() && claims.claimed.is_empty());
    }
}
