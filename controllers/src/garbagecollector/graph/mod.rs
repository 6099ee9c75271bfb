//! The dependency graph (upstream `GraphBuilder`: `uidToNode`,
//! `processGraphChanges`, `addDependentToOwners`, `processTransitions`).
//!
//! Every watched object is a node keyed by uid, holding its coordinates,
//! its ownerReferences, the uids of its dependents and a few flags. An
//! owner referenced but not (yet) observed is a *virtual* node: it is
//! queued for `attemptToDelete`, whose live read either finds it (nothing
//! to do until it is observed) or confirms it absent (a virtual delete
//! removes it and queues its dependents).
//!
//! Each change returns the [`Effect`]s upstream's graph builder has; the
//! driver applies them (queues, events). Nothing here performs I/O.
//!
//! # Layout
//! - this module: the changes (upstream `processGraphChanges`: observe,
//!   delete, relist, virtual delete) and `processTransitions`;
//! - `store`: the graph core: [`Effect`], [`Graph`], its nodes and
//!   [`NodeView`], the reads;
//! - `owners`: the owner algorithms (dependents and owners, virtual
//!   owners, partitioning dependents by the references they give);
//! - `interner`: the string table.
//!
//! # Memory
//! Metadata only, and little of it: apiVersion, kind and namespace are
//! interned (4 bytes each), canonical UUIDs packed into 16 bytes
//! ([`Uid`]); no labels, annotations, resourceVersion or timestamps.

mod interner;
mod owners;
mod store;

use std::collections::HashSet;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use self::interner::EMPTY;
use self::owners::diff;
use self::store::{BEING_DELETED, DELETING_DEPENDENTS, Node, OBSERVED, Result, flags_of};
pub use self::store::{DependentView, Effect, Error, Graph, NodeView};
use super::{Deletion, Identity};
use kcm_objects::Uid;

// === impl Graph: changes ===

impl Graph {
    /// An add or update from a watch (upstream `processGraphChanges` for
    /// add/update events).
    ///
    /// # Errors
    /// [`Error::NoUid`]: the object is skipped.
    pub fn observe(&mut self, api_version: &str, kind: &str, meta: &ObjectMeta) -> Result<Vec<Effect>> {
        let uid = uid_of(kind, meta)?;
        let mut fx = Vec::new();
        let api_version = self.syms.id(api_version);
        let kind = self.syms.id(kind);
        let namespace = self.syms.id(meta.namespace.as_deref().unwrap_or(""));
        let name: Box<str> = meta.name.as_deref().unwrap_or("").into();
        let deletion = Deletion::of(meta.deletion_timestamp.is_some(), meta.finalizers.as_deref().unwrap_or(&[]));
        let owners = self.owners_of(meta);
        let Some(existing) = self.nodes.get(&uid) else {
            self.nodes.insert(
                uid.clone(),
                Node {
                    api_version,
                    kind,
                    namespace,
                    name,
                    owners: owners.clone(),
                    dependents: Vec::new(),
                    flags: OBSERVED | flags_of(deletion),
                },
            );
            self.add_dependent_to_owners(&uid, &owners, &mut fx);
            self.process_transitions(&uid, Deletion::default(), deletion, &mut fx);
            return Ok(fx);
        };
        let old = existing.deletion();
        if !existing.observed() {
            let seen = (api_version, kind, namespace, &name);
            if seen != (existing.api_version, existing.kind, existing.namespace, &existing.name) {
                // Dependents that named this owner otherwise may be wrong:
                // let attemptToDelete verify them.
                let observed = Identity {
                    api_version: self.syms.name(api_version).to_owned(),
                    kind: self.syms.name(kind).to_owned(),
                    namespace: self.syms.name(namespace).to_owned(),
                    name: name.to_string(),
                    uid: uid.to_string(),
                };
                let (_, suspicious) = self.partition(&existing.dependents, &observed);
                for dep in suspicious {
                    if namespace != EMPTY
                        && let Some(d) = self.nodes.get(&dep)
                        && d.namespace != namespace
                    {
                        fx.extend(self.invalid_namespace(&dep, &uid));
                    }
                    fx.push(Effect::AttemptToDelete(dep.to_string()));
                }
            }
        }
        let node = self.nodes.get_mut(&uid).unwrap_or_else(|| unreachable!("looked up above"));
        node.api_version = api_version;
        node.kind = kind;
        node.namespace = namespace;
        node.name = name;
        let (added, removed, changed) = diff(&node.owners, &owners);
        let owners_changed = !(added.is_empty() && removed.is_empty() && changed.is_empty());
        if owners_changed {
            node.owners = owners;
        }
        node.flags = (node.flags & (BEING_DELETED | DELETING_DEPENDENTS)) | OBSERVED | flags_of(deletion);
        if owners_changed {
            // Owners waiting on a blocking reference that went away.
            for owner in removed.iter().filter(|o| o.blocks()) {
                if self.nodes.contains_key(&owner.uid) {
                    fx.push(Effect::AttemptToDelete(owner.uid.to_string()));
                }
            }
            for (before, after) in &changed {
                if before.blocks() && !after.blocks() && self.nodes.contains_key(&after.uid) {
                    fx.push(Effect::AttemptToDelete(after.uid.to_string()));
                }
            }
            self.add_dependent_to_owners(&uid, &added, &mut fx);
            self.remove_dependent_from_owners(&uid, &removed);
        }
        self.process_transitions(&uid, old, deletion, &mut fx);
        Ok(fx)
    }

    /// A deletion from a watch.
    ///
    /// # Errors
    /// [`Error::NoUid`]: nothing is done.
    pub fn observe_delete(&mut self, api_version: &str, kind: &str, meta: &ObjectMeta) -> Result<Vec<Effect>> {
        let uid = uid_of(kind, meta)?;
        let identity = Identity {
            api_version: api_version.to_owned(),
            kind: kind.to_owned(),
            namespace: meta.namespace.clone().unwrap_or_default(),
            name: meta.name.clone().unwrap_or_default(),
            uid: uid.to_string(),
        };
        let mut fx = Vec::new();
        self.remove(&uid, identity, &mut fx);
        Ok(fx)
    }

    /// A relist of `api_version`/`kind` completed: every observed node of
    /// that type it did not name was deleted meanwhile.
    pub fn remove_unlisted(&mut self, api_version: &str, kind: &str, listed: &HashSet<String>) -> Vec<Effect> {
        let (api_version, kind) = (self.syms.id(api_version), self.syms.id(kind));
        let listed: HashSet<Uid> = listed.iter().map(|u| Uid::new(u)).collect();
        let gone: Vec<(Uid, Identity)> = self
            .nodes
            .iter()
            .filter(|(_, uid, n)| {
                n.observed() && n.api_version == api_version && n.kind == kind && !listed.contains(uid)
            })
            .map(|(_, uid, n)| (uid.clone(), self.identity(uid, n)))
            .collect();
        let mut fx = Vec::new();
        for (uid, identity) in gone {
            self.remove(&uid, identity, &mut fx);
        }
        fx
    }

    /// A worker found `deleted` absent from the API server (upstream's
    /// virtual delete event).
    pub fn virtual_delete(&mut self, deleted: &Identity) -> Vec<Effect> {
        let uid = Uid::new(&deleted.uid);
        let mut fx = Vec::new();
        let Some(existing) = self.nodes.get(&uid) else { return fx };
        let current = self.identity(&uid, existing);
        let observed = existing.observed();
        let (matching, nonmatching) = self.partition(&existing.dependents, deleted);
        let mut remove = true;
        if !observed {
            if !nonmatching.is_empty() {
                // Some dependents name this uid with other coordinates: the
                // node stays for them.
                remove = false;
                self.verify_matching(deleted, &matching, &mut fx);
                if current == *deleted
                    && let Some(alternate) = self.alternate_identity(&nonmatching, deleted)
                {
                    let node = self.nodes.get_mut(&uid).unwrap_or_else(|| unreachable!("looked up above"));
                    node.api_version = self.syms.id(&alternate.api_version);
                    node.kind = self.syms.id(&alternate.kind);
                    node.namespace = self.syms.id(&alternate.namespace);
                    node.name = alternate.name.as_str().into();
                    fx.push(Effect::AttemptToDeleteRateLimited(uid.to_string()));
                }
            }
        } else if current != *deleted {
            // An observed object is not removed on another identity's
            // account; dependents naming that identity are checked.
            remove = false;
            self.verify_matching(deleted, &matching, &mut fx);
        }
        if remove {
            self.remove(&uid, deleted.clone(), &mut fx);
        }
        fx
    }

    /// `deleted` is absent for the dependents whose references match it:
    /// it is recorded absent and they are checked.
    fn verify_matching(&mut self, deleted: &Identity, matching: &[Uid], fx: &mut Vec<Effect>) {
        if !matching.is_empty() {
            self.absent.add(deleted.clone());
            fx.extend(matching.iter().map(|d| Effect::AttemptToDelete(d.to_string())));
        }
    }

    /// Removes a node: its dependents are checked, owners deleting their
    /// dependents are looked at again.
    fn remove(&mut self, uid: &Uid, identity: Identity, fx: &mut Vec<Effect>) {
        let Some((_, node)) = self.nodes.remove(uid) else { return };
        self.remove_dependent_from_owners(uid, &node.owners);
        if !node.dependents.is_empty() {
            self.absent.add(identity);
        }
        fx.extend(node.dependents.iter().map(|d| Effect::AttemptToDelete(d.to_string())));
        for owner in node.owners.iter() {
            if self.nodes.get(&owner.uid).is_some_and(|o| o.has(DELETING_DEPENDENTS)) {
                fx.push(Effect::AttemptToDelete(owner.uid.to_string()));
            }
        }
    }

    /// Upstream `processTransitions`: an object starting to be deleted with
    /// `orphan` goes to `attemptToOrphan`; with `foregroundDeletion`, it and
    /// its dependents go to `attemptToDelete`.
    fn process_transitions(&mut self, uid: &Uid, old: Deletion, new: Deletion, fx: &mut Vec<Effect>) {
        let starts = |was: bool, is: bool| new.being_deleted && is && !(old.being_deleted && was);
        if starts(old.orphan, new.orphan) {
            fx.push(Effect::AttemptToOrphan(uid.to_string()));
            return;
        }
        if starts(old.foreground, new.foreground)
            && let Some(node) = self.nodes.get_mut(uid)
        {
            node.flags |= DELETING_DEPENDENTS;
            fx.extend(node.dependents.iter().map(|d| Effect::AttemptToDelete(d.to_string())));
            fx.push(Effect::AttemptToDelete(uid.to_string()));
        }
    }
}

fn uid_of(kind: &str, meta: &ObjectMeta) -> Result<Uid> {
    match meta.uid.as_deref() {
        Some(uid) if !uid.is_empty() => Ok(Uid::new(uid)),
        _ => Err(Error::NoUid {
            kind: kind.to_owned(),
            namespace: meta.namespace.clone().unwrap_or_default(),
            name: meta.name.clone().unwrap_or_default(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference, Time};

    use super::*;
    use crate::garbagecollector::testing::{POD, RS, ident, owner};
    use crate::garbagecollector::{FINALIZER_DELETE_DEPENDENTS, FINALIZER_ORPHAN, REASON_OWNER_REF_INVALID_NAMESPACE};

    // === utils ===

    const NODE: (&str, &str) = ("v1", "Node");

    fn meta(ns: &str, name: &str, owners: Vec<OwnerReference>) -> ObjectMeta {
        ObjectMeta {
            namespace: (!ns.is_empty()).then(|| ns.to_owned()),
            name: Some(name.into()),
            uid: Some(format!("uid-{name}")),
            resource_version: Some("7".into()),
            owner_references: (!owners.is_empty()).then_some(owners),
            ..ObjectMeta::default()
        }
    }

    fn deleting(mut m: ObjectMeta, finalizer: &str) -> ObjectMeta {
        m.deletion_timestamp = Some(Time(jiff::Timestamp::from_second(1).unwrap()));
        m.finalizers = Some(vec![finalizer.to_owned()]);
        m
    }

    fn del(name: &str) -> Effect {
        Effect::AttemptToDelete(format!("uid-{name}"))
    }

    fn observe(graph: &mut Graph, kind: (&str, &str), m: ObjectMeta) -> Vec<Effect> {
        graph.observe(kind.0, kind.1, &m).expect("has a uid")
    }

    fn set(effects: Vec<Effect>) -> HashSet<String> {
        effects.into_iter().map(|e| format!("{e:?}")).collect()
    }

    // === graph ===

    #[test]
    fn a_dependent_of_an_unseen_owner_creates_a_virtual_owner_queued_for_verification() {
        let mut g = Graph::new();
        let fx = observe(&mut g, POD, meta("ns", "p", vec![owner(RS, "rs", true)]));
        assert_eq!(fx, [del("rs")]);
        let rs = g.node("uid-rs").unwrap();
        assert!(!rs.observed);
        assert_eq!(rs.identity, ident(RS, "ns", "rs"));
        assert_eq!(rs.dependents.len(), 1);
        assert!(rs.dependents[0].blocks_owner);
        // Observing the owner makes it real and queues nothing.
        assert_eq!(observe(&mut g, RS, meta("ns", "rs", vec![])), []);
        assert!(g.node("uid-rs").unwrap().observed);
        assert_eq!(g.len(), 2);
    }

    #[test]
    fn an_observed_owner_deleted_queues_its_dependents_and_is_recorded_absent() {
        let mut g = Graph::new();
        observe(&mut g, RS, meta("ns", "rs", vec![]));
        assert_eq!(observe(&mut g, POD, meta("ns", "a", vec![owner(RS, "rs", true)])), []);
        observe(&mut g, POD, meta("ns", "b", vec![owner(RS, "rs", true)]));
        let fx = g.observe_delete(RS.0, RS.1, &meta("ns", "rs", vec![])).unwrap();
        assert_eq!(set(fx), set(vec![del("a"), del("b")]));
        assert!(!g.contains("uid-rs"));
        assert!(g.absent_owners().contains(&ident(RS, "ns", "rs")));
        // The dependents keep their references: nothing else changed.
        assert_eq!(g.node("uid-a").unwrap().owners.len(), 1);
        // Both name the same owner, and hold one copy of the list.
        let owners = |name: &str| g.nodes.get(&Uid::new(&format!("uid-{name}"))).expect("a node").owners.clone();
        assert!(kcm_objects::SharedList::ptr_eq(&owners("a"), &owners("b")));
    }

    #[test]
    fn a_deleted_dependent_requeues_an_owner_deleting_its_dependents() {
        let mut g = Graph::new();
        observe(&mut g, RS, meta("ns", "rs", vec![]));
        observe(&mut g, POD, meta("ns", "a", vec![owner(RS, "rs", true)]));
        observe(&mut g, RS, deleting(meta("ns", "rs", vec![]), FINALIZER_DELETE_DEPENDENTS));
        let fx = g.observe_delete(POD.0, POD.1, &meta("ns", "a", vec![owner(RS, "rs", true)])).unwrap();
        assert_eq!(fx, [del("rs")]);
        assert!(g.node("uid-rs").unwrap().dependents.is_empty());
    }

    #[test]
    fn deletion_transitions_queue_as_upstream() {
        // (finalizer, expected effects when the owner starts being deleted)
        let cases = [
            (FINALIZER_ORPHAN, vec![Effect::AttemptToOrphan("uid-rs".into())]),
            (FINALIZER_DELETE_DEPENDENTS, vec![del("a"), del("rs")]),
            ("example.com/other", vec![]),
        ];
        for (finalizer, want) in cases {
            let mut g = Graph::new();
            observe(&mut g, RS, meta("ns", "rs", vec![]));
            observe(&mut g, POD, meta("ns", "a", vec![owner(RS, "rs", true)]));
            let fx = observe(&mut g, RS, deleting(meta("ns", "rs", vec![]), finalizer));
            assert_eq!(fx, want, "{finalizer}");
            assert_eq!(g.node("uid-rs").unwrap().deleting_dependents, finalizer == FINALIZER_DELETE_DEPENDENTS);
            // The same state observed again is no new transition.
            assert_eq!(observe(&mut g, RS, deleting(meta("ns", "rs", vec![]), finalizer)), [], "{finalizer}");
        }
    }

    #[test]
    fn an_object_first_seen_being_deleted_with_a_finalizer_transitions_at_once() {
        let mut g = Graph::new();
        let fx = observe(&mut g, RS, deleting(meta("ns", "rs", vec![]), FINALIZER_ORPHAN));
        assert_eq!(fx, [Effect::AttemptToOrphan("uid-rs".into())]);
    }

    #[test]
    fn removing_or_unblocking_a_blocking_reference_requeues_the_owner() {
        let blocking = owner(RS, "rs", true);
        let unblocked = OwnerReference { block_owner_deletion: Some(false), ..blocking.clone() };
        // (new references of the dependent, expected effects)
        let cases = [(vec![], vec![del("rs")]), (vec![unblocked], vec![del("rs")]), (vec![blocking.clone()], vec![])];
        for (after, want) in cases {
            let mut g = Graph::new();
            observe(&mut g, RS, meta("ns", "rs", vec![]));
            observe(&mut g, POD, meta("ns", "a", vec![blocking.clone()]));
            let fx = observe(&mut g, POD, meta("ns", "a", after.clone()));
            assert_eq!(fx, want, "{after:?}");
            assert_eq!(g.node("uid-rs").unwrap().dependents.len(), after.len());
        }
    }

    #[test]
    fn a_reference_to_an_observed_owner_in_another_namespace_is_reported_and_verified() {
        let mut g = Graph::new();
        observe(&mut g, RS, meta("other", "rs", vec![]));
        let fx = observe(&mut g, POD, meta("ns", "a", vec![owner(RS, "rs", true)]));
        assert_eq!(
            fx,
            [
                Effect::Warning {
                    regarding: ident(POD, "ns", "a"),
                    reason: REASON_OWNER_REF_INVALID_NAMESPACE,
                    message: "ownerRef [apps/v1/ReplicaSet, namespace: ns, name: rs, uid: uid-rs] does not exist in \
                          namespace \"ns\""
                        .into(),
                },
                del("a"),
            ]
        );
    }

    #[test]
    fn the_owner_observed_after_a_dependent_in_another_namespace_reports_it() {
        let mut g = Graph::new();
        observe(&mut g, POD, meta("ns", "a", vec![owner(RS, "rs", true)]));
        let fx = observe(&mut g, RS, meta("other", "rs", vec![]));
        assert_eq!(fx.len(), 2, "{fx:?}");
        assert!(matches!(&fx[0], Effect::Warning { reason: REASON_OWNER_REF_INVALID_NAMESPACE, .. }));
        assert_eq!(fx[1], del("a"));
    }

    #[test]
    fn namespaced_dependents_of_cluster_scoped_owners_are_valid_once_the_owner_is_observed() {
        let mut g = Graph::new();
        observe(&mut g, NODE, meta("", "n1", vec![]));
        assert_eq!(observe(&mut g, POD, meta("ns", "a", vec![owner(NODE, "n1", false)])), []);
        // A virtual cluster-scoped owner first named from a namespace: a second
        // namespaced dependent is verified (upstream #98040).
        let mut g = Graph::new();
        observe(&mut g, POD, meta("ns", "a", vec![owner(NODE, "n1", false)]));
        assert_eq!(observe(&mut g, POD, meta("other", "b", vec![owner(NODE, "n1", false)])), [del("b")]);
    }

    #[test]
    fn references_with_other_coordinates_than_the_owner_are_verified() {
        let mut g = Graph::new();
        observe(&mut g, RS, meta("ns", "rs", vec![]));
        let wrong_name = OwnerReference { name: "other".into(), ..owner(RS, "rs", true) };
        assert_eq!(observe(&mut g, POD, meta("ns", "a", vec![wrong_name])), [del("a")]);
    }

    #[test]
    fn a_virtual_delete_removes_a_virtual_owner_and_queues_its_dependents() {
        let mut g = Graph::new();
        observe(&mut g, POD, meta("ns", "a", vec![owner(RS, "rs", true)]));
        let fx = g.virtual_delete(&ident(RS, "ns", "rs"));
        assert_eq!(fx, [del("a")]);
        assert!(!g.contains("uid-rs"));
        assert!(g.absent_owners().contains(&ident(RS, "ns", "rs")));
    }

    #[test]
    fn a_virtual_delete_keeps_a_virtual_owner_other_dependents_name_differently() {
        let mut g = Graph::new();
        observe(&mut g, POD, meta("ns", "a", vec![owner(RS, "rs", true)]));
        let as_deployment = OwnerReference { kind: "Deployment".into(), ..owner(RS, "rs", true) };
        observe(&mut g, POD, meta("ns", "b", vec![as_deployment]));
        let fx = g.virtual_delete(&ident(RS, "ns", "rs"));
        assert_eq!(fx, [del("a"), Effect::AttemptToDeleteRateLimited("uid-rs".into())]);
        // The node now carries the other identity, to be verified in turn.
        assert_eq!(g.node("uid-rs").unwrap().identity.kind, "Deployment");
    }

    #[test]
    fn a_virtual_delete_never_removes_an_observed_node() {
        let mut g = Graph::new();
        observe(&mut g, RS, meta("ns", "rs", vec![]));
        observe(&mut g, POD, meta("ns", "a", vec![owner(RS, "rs", true)]));
        let stale = Identity { name: "old-name".into(), ..ident(RS, "ns", "rs") };
        assert_eq!(g.virtual_delete(&stale), []);
        assert!(g.contains("uid-rs"));
    }

    #[test]
    fn a_relist_removes_the_observed_nodes_of_its_type_it_did_not_name() {
        let mut g = Graph::new();
        observe(&mut g, RS, meta("ns", "rs", vec![]));
        observe(&mut g, RS, meta("ns", "kept", vec![]));
        observe(&mut g, POD, meta("ns", "a", vec![owner(RS, "rs", true)]));
        let listed = HashSet::from(["uid-kept".to_owned()]);
        assert_eq!(g.remove_unlisted(RS.0, RS.1, &listed), [del("a")]);
        assert!(!g.contains("uid-rs") && g.contains("uid-kept") && g.contains("uid-a"));
    }

    #[test]
    fn objects_without_a_uid_are_refused() {
        let mut g = Graph::new();
        let mut m = meta("ns", "a", vec![]);
        m.uid = None;
        assert!(g.observe(POD.0, POD.1, &m).is_err());
        assert!(g.is_empty());
    }
}
