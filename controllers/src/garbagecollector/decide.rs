//! What one `attemptToDelete` item needs (upstream `attemptToDeleteItem`,
//! `classifyReferences`, `processDeletingDependentsItem`), and the bodies
//! of the collector's writes.
//!
//! [`attempt_to_delete`] is called repeatedly as the driver learns more:
//! first with nothing fetched (it may answer at once, or ask for the
//! object's live metadata: [`Decision::Fetch`]), then with the live object
//! (it may ask for its owners' live state: [`Decision::LookUp`]), until it
//! answers with a write or nothing. Owners are always verified by a live
//! read (or the absent-owner cache, itself filled only by verified
//! absences), never judged from the graph: an owner merely not yet watched
//! is found present and its dependent kept.

use std::collections::HashMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use serde_json::{Value, json};

use super::graph::NodeView;
use super::{Deletion, FINALIZER_DELETE_DEPENDENTS};

/// An object's live metadata, as read before deciding.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Live {
    /// Its uid.
    pub uid: String,
    /// Its resourceVersion (the delete precondition).
    pub resource_version: Option<String>,
    /// Its ownerReferences.
    pub owner_references: Vec<OwnerReference>,
    /// Its finalizers.
    pub finalizers: Vec<String>,
    /// Whether it has a `deletionTimestamp`.
    pub being_deleted: bool,
}

impl Live {
    /// From an object's metadata.
    pub fn from_meta(meta: &ObjectMeta) -> Self {
        Live {
            uid: meta.uid.clone().unwrap_or_default(),
            resource_version: meta.resource_version.clone(),
            owner_references: meta.owner_references.clone().unwrap_or_default(),
            finalizers: meta.finalizers.clone().unwrap_or_default(),
            being_deleted: meta.deletion_timestamp.is_some(),
        }
    }

    fn deletion(&self) -> Deletion {
        Deletion::of(self.being_deleted, &self.finalizers)
    }
}

/// What the driver knows of the item's live state.
#[derive(Clone, Debug, PartialEq)]
pub enum Fetched {
    /// Not read yet.
    NotYet,
    /// The API server has no such object (404).
    Absent,
    /// The object as read (its uid may differ from the node's).
    Found(Live),
}

/// What a live lookup of one owner found (upstream `isDangling`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lookup {
    /// Not found, found with another uid, or recorded absent: dangling.
    Absent,
    /// Found with the referenced uid.
    Found {
        /// Being deleted with `foregroundDeletion`: waiting for its
        /// dependents.
        deleting_dependents: bool,
    },
    /// The owner's type is namespaced but the item is cluster-scoped: an
    /// invalid reference that retrying will not fix.
    NamespacedOwnerOfClusterScoped,
}

/// The delete propagation policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Propagation {
    /// Delete now; the collector deletes the dependents afterwards.
    Background,
    /// Delete the blocking dependents first.
    Foreground,
    /// Remove the references to the object from its dependents.
    Orphan,
}

impl Propagation {
    /// The API's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Propagation::Background => "Background",
            Propagation::Foreground => "Foreground",
            Propagation::Orphan => "Orphan",
        }
    }
}

/// What to do for one item.
#[derive(Clone, Debug, PartialEq)]
pub enum Decision {
    /// Nothing, for this reason.
    Nothing(&'static str),
    /// Read the item live, then decide again.
    Fetch,
    /// Look these owners up live (or in the absent-owner cache), then
    /// decide again.
    LookUp(Vec<OwnerReference>),
    /// The item does not exist (any more): tell the graph (upstream's
    /// virtual delete event).
    VirtualDelete,
    /// No blocking dependent is left: remove this finalizer.
    RemoveFinalizer(&'static str),
    /// The item waits for these dependents (uids): queue them.
    AttemptDependents(Vec<String>),
    /// Some owner is solid: remove only the references to these owners
    /// (dangling ones, and ones waiting for their dependents).
    RemoveOwnerReferences(Vec<String>),
    /// Delete the item.
    Delete {
        /// With this propagation.
        propagation: Propagation,
        /// Preconditions: the uid, and this resourceVersion.
        resource_version: Option<String>,
        /// The ownerReferences at that resourceVersion: on a conflict,
        /// the delete is retried with the uid alone if they are unchanged.
        owner_references: Vec<OwnerReference>,
        /// First set `blockOwnerDeletion: false` on the item's references
        /// (it and one of its dependents both wait for dependents: a
        /// possible cycle).
        unblock_first: bool,
    },
    /// A cluster-scoped item names a namespaced owner: not retried.
    Invalid(&'static str),
}

/// Upstream `attemptToDeleteItem` for `item`, given what was fetched and
/// looked up so far (`lookups` by owner uid).
pub fn attempt_to_delete(item: &NodeView, fetched: &Fetched, lookups: &HashMap<String, Lookup>) -> Decision {
    // Being deleted is a one-way trip: the dependents are processed when
    // it is gone.
    if item.being_deleted && !item.deleting_dependents {
        return Decision::Nothing("being deleted");
    }
    let live = match fetched {
        Fetched::NotYet => return Decision::Fetch,
        Fetched::Absent => return Decision::VirtualDelete,
        Fetched::Found(live) if live.uid != item.identity.uid => return Decision::VirtualDelete,
        Fetched::Found(live) => live,
    };
    if item.deleting_dependents {
        return deleting_dependents(item);
    }
    if live.owner_references.is_empty() {
        return Decision::Nothing("no owner");
    }
    let missing: Vec<OwnerReference> =
        live.owner_references.iter().filter(|r| !lookups.contains_key(&r.uid)).cloned().collect();
    if !missing.is_empty() {
        return Decision::LookUp(missing);
    }
    let (mut solid, mut dangling, mut waiting) = (Vec::new(), Vec::new(), Vec::new());
    for reference in &live.owner_references {
        match lookups.get(&reference.uid) {
            Some(Lookup::NamespacedOwnerOfClusterScoped) => {
                return Decision::Invalid("cluster-scoped objects cannot refer to namespaced owners");
            }
            Some(Lookup::Absent) | None => dangling.push(reference.uid.clone()),
            Some(Lookup::Found { deleting_dependents: true }) => waiting.push(reference.uid.clone()),
            Some(Lookup::Found { deleting_dependents: false }) => solid.push(reference.uid.clone()),
        }
    }
    if !solid.is_empty() {
        if dangling.is_empty() && waiting.is_empty() {
            return Decision::Nothing("at least one owner exists");
        }
        // A reference to an owner waiting for its dependents must go, or
        // that owner waits for ever.
        dangling.extend(waiting);
        return Decision::RemoveOwnerReferences(dangling);
    }
    let delete = |propagation, unblock_first| Decision::Delete {
        propagation,
        resource_version: live.resource_version.clone(),
        owner_references: live.owner_references.clone(),
        unblock_first,
    };
    if !waiting.is_empty() && !item.dependents.is_empty() {
        // Its own dependents go first: delete it in the foreground.
        let cycle = item.dependents.iter().any(|d| d.deleting_dependents);
        return delete(Propagation::Foreground, cycle);
    }
    let deletion = live.deletion();
    let propagation = if deletion.orphan {
        Propagation::Orphan
    } else if deletion.foreground {
        Propagation::Foreground
    } else {
        Propagation::Background
    };
    delete(propagation, false)
}

/// Upstream `processDeletingDependentsItem`.
fn deleting_dependents(item: &NodeView) -> Decision {
    let blocking: Vec<_> = item.dependents.iter().filter(|d| d.blocks_owner).collect();
    if blocking.is_empty() {
        return Decision::RemoveFinalizer(FINALIZER_DELETE_DEPENDENTS);
    }
    let pending: Vec<String> =
        blocking.iter().filter(|d| !d.deleting_dependents).map(|d| d.identity.uid.clone()).collect();
    if pending.is_empty() {
        return Decision::Nothing("every blocking dependent is deleting its own dependents");
    }
    Decision::AttemptDependents(pending)
}

// === patch bodies ===

/// Strategic merge patch removing the references to `owner_uids` from the
/// object `item_uid` (the uid makes the API server refuse the patch if the
/// object was replaced). Upstream `GenerateDeleteOwnerRefStrategicMergeBytes`.
pub fn delete_owner_refs_strategic(item_uid: &str, owner_uids: &[String]) -> Value {
    let deletes: Vec<Value> = owner_uids.iter().map(|u| json!({"$patch": "delete", "uid": u})).collect();
    json!({"metadata": {"ownerReferences": deletes, "uid": item_uid}})
}

/// JSON merge patch (for types without strategic merge, e.g. custom
/// resources) keeping `live`'s references except those to `owner_uids`,
/// at its resourceVersion. Upstream `deleteOwnerRefJSONMergePatch`.
pub fn delete_owner_refs_merge(live: &Live, owner_uids: &[String]) -> Value {
    let kept: Vec<&OwnerReference> = live.owner_references.iter().filter(|r| !owner_uids.contains(&r.uid)).collect();
    json!({"metadata": {"ownerReferences": kept, "resourceVersion": live.resource_version}})
}

/// Strategic merge patch setting `blockOwnerDeletion: false` on each of
/// `item`'s blocking references. Upstream
/// `unblockOwnerReferencesStrategicMergePatch`.
pub fn unblock_owner_refs_strategic(item_uid: &str, references: &[OwnerReference]) -> Value {
    let unblocked: Vec<OwnerReference> = references
        .iter()
        .filter(|r| r.block_owner_deletion == Some(true))
        .map(|r| OwnerReference { block_owner_deletion: Some(false), ..r.clone() })
        .collect();
    json!({"metadata": {"ownerReferences": unblocked, "uid": item_uid}})
}

/// JSON merge patch form of [`unblock_owner_refs_strategic`] on `live`.
/// Upstream `unblockOwnerReferencesJSONMergePatch`.
pub fn unblock_owner_refs_merge(live: &Live) -> Value {
    let all: Vec<OwnerReference> = live
        .owner_references
        .iter()
        .map(|r| {
            let block = if r.block_owner_deletion == Some(true) { Some(false) } else { r.block_owner_deletion };
            OwnerReference { block_owner_deletion: block, ..r.clone() }
        })
        .collect();
    json!({"metadata": {"ownerReferences": all, "resourceVersion": live.resource_version}})
}

/// JSON merge patch removing `finalizer` from `live` at its
/// resourceVersion, or `None` if it is not there. Upstream
/// `removeFinalizer`.
pub fn remove_finalizer_merge(live: &Live, finalizer: &str) -> Option<Value> {
    if !live.finalizers.iter().any(|f| f == finalizer) {
        return None;
    }
    let kept: Vec<&String> = live.finalizers.iter().filter(|f| *f != finalizer).collect();
    Some(json!({"metadata": {"finalizers": kept, "resourceVersion": live.resource_version}}))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::garbagecollector::FINALIZER_ORPHAN;
    use crate::garbagecollector::graph::DependentView;
    use crate::garbagecollector::testing::{POD, RS, ident, owner};

    // === utils ===

    fn view(deps: Vec<DependentView>) -> NodeView {
        NodeView {
            identity: ident(POD, "ns", "item"),
            observed: true,
            being_deleted: false,
            deleting_dependents: false,
            owners: vec![],
            dependents: deps,
        }
    }

    fn dep(name: &str, blocks: bool, deleting_dependents: bool) -> DependentView {
        DependentView { identity: ident(POD, "ns", name), deleting_dependents, blocks_owner: blocks }
    }

    fn live(owners: Vec<OwnerReference>, finalizers: &[&str]) -> Fetched {
        Fetched::Found(Live {
            uid: "uid-item".into(),
            resource_version: Some("7".into()),
            owner_references: owners,
            finalizers: finalizers.iter().map(|f| f.to_string()).collect(),
            being_deleted: false,
        })
    }

    fn lookups(pairs: &[(&str, Lookup)]) -> HashMap<String, Lookup> {
        pairs.iter().map(|(n, l)| (format!("uid-{n}"), *l)).collect()
    }

    const SOLID: Lookup = Lookup::Found { deleting_dependents: false };
    const WAITING: Lookup = Lookup::Found { deleting_dependents: true };

    fn delete(propagation: Propagation, owners: Vec<OwnerReference>, unblock_first: bool) -> Decision {
        Decision::Delete { propagation, resource_version: Some("7".into()), owner_references: owners, unblock_first }
    }

    /// (case, item, fetched, lookups, decision)
    type Case = (&'static str, NodeView, Fetched, HashMap<String, Lookup>, Decision);

    #[test]
    fn attempt_to_delete_follows_upstream() {
        let a = owner(RS, "a", true);
        let b = owner(RS, "b", false);
        let uids = |names: &[&str]| names.iter().map(|n| format!("uid-{n}")).collect::<Vec<_>>();
        let being_deleted = NodeView { being_deleted: true, ..view(vec![]) };
        let with_deps = view(vec![dep("d", true, false)]);
        let with_cycle = view(vec![dep("d", true, true)]);
        let cases: Vec<Case> = vec![
            (
                "being deleted: wait for it to go",
                being_deleted,
                Fetched::NotYet,
                lookups(&[]),
                Decision::Nothing("being deleted"),
            ),
            ("first read it live", view(vec![]), Fetched::NotYet, lookups(&[]), Decision::Fetch),
            ("gone: virtual delete", view(vec![]), Fetched::Absent, lookups(&[]), Decision::VirtualDelete),
            (
                "replaced (other uid): virtual delete",
                view(vec![]),
                Fetched::Found(Live { uid: "uid-new".into(), ..Live::default() }),
                lookups(&[]),
                Decision::VirtualDelete,
            ),
            ("no owner", view(vec![]), live(vec![], &[]), lookups(&[]), Decision::Nothing("no owner")),
            (
                "owners unknown: look them up",
                view(vec![]),
                live(vec![a.clone(), b.clone()], &[]),
                lookups(&[("a", SOLID)]),
                Decision::LookUp(vec![b.clone()]),
            ),
            (
                "owner present (e.g. not yet watched): keep",
                view(vec![]),
                live(vec![a.clone()], &[]),
                lookups(&[("a", SOLID)]),
                Decision::Nothing("at least one owner exists"),
            ),
            (
                "owner absent: background delete",
                view(vec![]),
                live(vec![a.clone()], &[]),
                lookups(&[("a", Lookup::Absent)]),
                delete(Propagation::Background, vec![a.clone()], false),
            ),
            (
                "one owner left: drop the dangling reference only",
                view(vec![]),
                live(vec![a.clone(), b.clone()], &[]),
                lookups(&[("a", Lookup::Absent), ("b", SOLID)]),
                Decision::RemoveOwnerReferences(uids(&["a"])),
            ),
            (
                "solid and waiting owner: drop the waiting reference",
                view(vec![]),
                live(vec![a.clone(), b.clone()], &[]),
                lookups(&[("a", WAITING), ("b", SOLID)]),
                Decision::RemoveOwnerReferences(uids(&["a"])),
            ),
            (
                "all owners gone: delete",
                view(vec![]),
                live(vec![a.clone(), b.clone()], &[]),
                lookups(&[("a", Lookup::Absent), ("b", Lookup::Absent)]),
                delete(Propagation::Background, vec![a.clone(), b.clone()], false),
            ),
            (
                "owner waiting, item without dependents: background",
                view(vec![]),
                live(vec![a.clone()], &[]),
                lookups(&[("a", WAITING)]),
                delete(Propagation::Background, vec![a.clone()], false),
            ),
            (
                "owner waiting, item with dependents: foreground",
                with_deps,
                live(vec![a.clone()], &[]),
                lookups(&[("a", WAITING)]),
                delete(Propagation::Foreground, vec![a.clone()], false),
            ),
            (
                "owner and a dependent waiting: unblock, then foreground",
                with_cycle,
                live(vec![a.clone()], &[]),
                lookups(&[("a", WAITING)]),
                delete(Propagation::Foreground, vec![a.clone()], true),
            ),
            (
                "orphan finalizer on the item is honoured",
                view(vec![]),
                live(vec![a.clone()], &[FINALIZER_ORPHAN]),
                lookups(&[("a", Lookup::Absent)]),
                delete(Propagation::Orphan, vec![a.clone()], false),
            ),
            (
                "foreground finalizer on the item is honoured",
                view(vec![]),
                live(vec![a.clone()], &[FINALIZER_DELETE_DEPENDENTS]),
                lookups(&[("a", Lookup::Absent)]),
                delete(Propagation::Foreground, vec![a.clone()], false),
            ),
            (
                "cluster-scoped item, namespaced owner: invalid",
                view(vec![]),
                live(vec![a.clone()], &[]),
                lookups(&[("a", Lookup::NamespacedOwnerOfClusterScoped)]),
                Decision::Invalid("cluster-scoped objects cannot refer to namespaced owners"),
            ),
        ];
        for (case, item, fetched, lookups, want) in cases {
            assert_eq!(attempt_to_delete(&item, &fetched, &lookups), want, "{case}");
        }
    }

    #[test]
    fn an_item_deleting_its_dependents_waits_for_the_blocking_ones() {
        let deleting = |deps| NodeView { being_deleted: true, deleting_dependents: true, ..view(deps) };
        let found = live(vec![], &[FINALIZER_DELETE_DEPENDENTS]);
        // (dependents, decision)
        let cases = [
            (vec![], Decision::RemoveFinalizer(FINALIZER_DELETE_DEPENDENTS)),
            (vec![dep("x", false, false)], Decision::RemoveFinalizer(FINALIZER_DELETE_DEPENDENTS)),
            (vec![dep("x", true, false), dep("y", false, false)], Decision::AttemptDependents(vec!["uid-x".into()])),
            (vec![dep("x", true, true)], Decision::Nothing("every blocking dependent is deleting its own dependents")),
        ];
        for (deps, want) in cases {
            let item = deleting(deps.clone());
            assert_eq!(attempt_to_delete(&item, &found, &HashMap::new()), want, "{deps:?}");
        }
    }

    #[test]
    fn patch_bodies_are_upstream_s() {
        let a = owner(RS, "a", true);
        let b = owner(RS, "b", false);
        let l = Live {
            uid: "uid-item".into(),
            resource_version: Some("7".into()),
            owner_references: vec![a.clone(), b.clone()],
            finalizers: vec![FINALIZER_ORPHAN.into(), "x".into()],
            being_deleted: true,
        };
        assert_eq!(
            delete_owner_refs_strategic("uid-item", &["uid-a".into()]),
            json!({"metadata": {"ownerReferences": [{"$patch": "delete", "uid": "uid-a"}], "uid": "uid-item"}})
        );
        assert_eq!(
            delete_owner_refs_merge(&l, &["uid-a".into()]),
            json!({"metadata": {"ownerReferences": [b], "resourceVersion": "7"}})
        );
        let unblocked = OwnerReference { block_owner_deletion: Some(false), ..a.clone() };
        assert_eq!(
            unblock_owner_refs_strategic("uid-item", &l.owner_references),
            json!({"metadata": {"ownerReferences": [unblocked.clone()], "uid": "uid-item"}})
        );
        assert_eq!(
            unblock_owner_refs_merge(&l),
            json!({"metadata": {"ownerReferences": [unblocked, b], "resourceVersion": "7"}})
        );
        assert_eq!(
            remove_finalizer_merge(&l, FINALIZER_ORPHAN),
            Some(json!({"metadata": {"finalizers": ["x"], "resourceVersion": "7"}}))
        );
        assert_eq!(remove_finalizer_merge(&l, FINALIZER_DELETE_DEPENDENTS), None);
    }
}
