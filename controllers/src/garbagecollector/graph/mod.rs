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
use super::uid::Uid;
use super::{Deletion, Identity};

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
            .filter(|(uid, n)| n.observed() && n.api_version == api_version && n.kind == kind && !listed.contains(uid))
            .map(|(uid, n)| (uid.clone(), self.identity(uid, n)))
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
                if !matching.is_empty() {
                    self.absent.add(deleted.clone());
                    fx.extend(matching.iter().map(|d| Effect::AttemptToDelete(d.to_string())));
                }
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
            if !matching.is_empty() {
                self.absent.add(deleted.clone());
                fx.extend(matching.iter().map(|d| Effect::AttemptToDelete(d.to_string())));
            }
        }
        if remove {
            self.remove(&uid, deleted.clone(), &mut fx);
        }
        fx
    }

    /// Removes a node: its dependents are checked, owners deleting their
    /// dependents are looked at again.
    fn remove(&mut self, uid: &Uid, identity: Identity, fx: &mut Vec<Effect>) {
        let Some(node) = self.nodes.remove(uid) else { return };
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
