//! The owner algorithms (upstream `graph_builder.go`): linking a
//! dependent to its owners and creating the virtual ones
//! (`addDependentToOwners`, `removeDependentFromOwners`), checking the
//! references dependents give an owner (`partitionDependents`,
//! `getAlternateOwnerIdentity`, `reportInvalidNamespaceOwnerRef`), and how
//! an object's references changed (`referencesDiffs`).

use std::collections::HashSet;

use super::interner::EMPTY;
use super::store::{Effect, Graph, Node, Owner, shared};
use crate::garbagecollector::{Identity, REASON_OWNER_REF_INVALID_NAMESPACE};
use kcm_objects::Uid;

impl Graph {
    /// Upstream `addDependentToOwners`: links `dependent` to each owner,
    /// creating virtual owners (queued for verification), and queues the
    /// dependent if a reference does not match what is known of its owner.
    pub(super) fn add_dependent_to_owners(&mut self, dependent: &Uid, owners: &[Owner], fx: &mut Vec<Effect>) {
        let Some(dep_namespace) = self.nodes.get(dependent).map(|n| n.namespace) else { return };
        let mut suspicious = false;
        let mut invalid_namespace = Vec::new();
        for owner in owners {
            let Some(node) = self.nodes.get_mut(&owner.uid) else {
                self.nodes.insert(
                    owner.uid.clone(),
                    Node {
                        api_version: owner.api_version,
                        kind: owner.kind,
                        namespace: dep_namespace,
                        name: owner.name.clone(),
                        owners: shared(&[]),
                        dependents: vec![dependent.clone()],
                        flags: 0,
                    },
                );
                fx.push(Effect::AttemptToDelete(owner.uid.to_string()));
                continue;
            };
            if !node.dependents.contains(dependent) {
                node.dependents.push(dependent.clone());
            }
            if suspicious {
                continue;
            }
            let namespaced = node.namespace != EMPTY;
            if namespaced && node.namespace != dep_namespace {
                // A namespaced owner in another namespace: if observed, it
                // is definitely wrong.
                if node.observed() {
                    invalid_namespace.push(owner.uid.clone());
                }
                suspicious = true;
            } else if (node.api_version, node.kind, &node.name) != (owner.api_version, owner.kind, &owner.name) {
                suspicious = true;
            } else if !namespaced && node.namespace != dep_namespace && !node.observed() {
                // A virtual cluster-scoped owner of a namespaced dependent
                // may be a missing namespaced object (upstream #98040).
                suspicious = true;
            }
        }
        for owner in invalid_namespace {
            fx.extend(self.invalid_namespace(dependent, &owner));
        }
        if suspicious {
            fx.push(Effect::AttemptToDelete(dependent.to_string()));
        }
    }

    pub(super) fn remove_dependent_from_owners(&mut self, dependent: &Uid, owners: &[Owner]) {
        for owner in owners {
            if let Some(node) = self.nodes.get_mut(&owner.uid) {
                node.dependents.retain(|d| d != dependent);
            }
        }
    }

    /// Upstream `reportInvalidNamespaceOwnerRef`.
    pub(super) fn invalid_namespace(&self, dependent: &Uid, owner: &Uid) -> Option<Effect> {
        let node = self.nodes.get(dependent)?;
        let reference = node.owners.iter().find(|o| o.uid == *owner)?;
        let namespace = self.syms.name(node.namespace);
        let invalid = self.owner_identity(reference, namespace);
        Some(Effect::Warning {
            regarding: self.identity(dependent, node),
            reason: REASON_OWNER_REF_INVALID_NAMESPACE,
            message: format!("ownerRef {invalid} does not exist in namespace {namespace:?}"),
        })
    }

    /// Upstream `partitionDependents`: dependents whose reference to
    /// `owner.uid` matches `owner`'s coordinates, and those with one that
    /// does not (a dependent can be in both).
    pub(super) fn partition(&self, dependents: &[Uid], owner: &Identity) -> (Vec<Uid>, Vec<Uid>) {
        let (mut matching, mut nonmatching) = (Vec::new(), Vec::new());
        let owner_uid = Uid::new(&owner.uid);
        for uid in dependents {
            let Some(dep) = self.nodes.get(uid) else { continue };
            let (mut found_match, mut found_mismatch) = (false, false);
            if !owner.namespace.is_empty() && owner.namespace != self.syms.name(dep.namespace) {
                found_mismatch = true;
            } else {
                for reference in dep.owners.iter().filter(|o| o.uid == owner_uid) {
                    if self.matches(reference, owner) {
                        found_match = true;
                    } else {
                        found_mismatch = true;
                    }
                }
            }
            if found_match {
                matching.push(uid.clone());
            }
            if found_mismatch {
                nonmatching.push(uid.clone());
            }
        }
        (matching, nonmatching)
    }

    /// Upstream `getAlternateOwnerIdentity`: among the other coordinates
    /// dependents give `absent.uid`, the first after `absent` in upstream's
    /// order (kind, apiVersion, namespace, name, uid), else the first.
    pub(super) fn alternate_identity(&self, dependents: &[Uid], absent: &Identity) -> Option<Identity> {
        let cluster_scoped = absent.namespace.is_empty();
        let absent_uid = Uid::new(&absent.uid);
        let order = |i: &Identity| (i.kind.clone(), i.api_version.clone(), i.namespace.clone(), i.name.clone());
        let mut seen = HashSet::from([absent.clone()]);
        let (mut first, mut first_following): (Option<Identity>, Option<Identity>) = (None, None);
        for uid in dependents {
            let Some(dep) = self.nodes.get(uid) else { continue };
            let dep_namespace = self.syms.name(dep.namespace);
            for reference in dep.owners.iter().filter(|o| o.uid == absent_uid) {
                if self.matches(reference, absent) && (cluster_scoped || absent.namespace == dep_namespace) {
                    continue;
                }
                // The reference's uid is absent's (a Uid prints back as given).
                let mut candidate = self.owner_identity(reference, dep_namespace);
                if cluster_scoped && candidate.api_version == absent.api_version && candidate.kind == absent.kind {
                    candidate.namespace.clear();
                }
                if !seen.insert(candidate.clone()) {
                    continue;
                }
                if first.as_ref().is_none_or(|f| order(&candidate) < order(f)) {
                    first = Some(candidate.clone());
                }
                if order(absent) < order(&candidate)
                    && first_following.as_ref().is_none_or(|f| order(&candidate) < order(f))
                {
                    first_following = Some(candidate);
                }
            }
        }
        first_following.or(first)
    }
}

/// Upstream `referencesDiffs`: references added, removed, and changed
/// (same uid, other fields) between `old` and `new`.
#[allow(clippy::type_complexity)]
pub(super) fn diff(old: &[Owner], new: &[Owner]) -> (Vec<Owner>, Vec<Owner>, Vec<(Owner, Owner)>) {
    let (mut added, mut changed) = (Vec::new(), Vec::new());
    let mut remaining: Vec<&Owner> = old.iter().collect();
    for reference in new {
        match remaining.iter().position(|o| o.uid == reference.uid) {
            Some(i) => {
                let before = remaining.swap_remove(i);
                if before != reference {
                    changed.push((before.clone(), reference.clone()));
                }
            }
            None => added.push(reference.clone()),
        }
    }
    (added, remaining.into_iter().cloned().collect(), changed)
}
