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
//! # Memory
//! Metadata only, and little of it: apiVersion, kind and namespace are
//! interned (4 bytes each), canonical UUIDs packed into 16 bytes
//! ([`Uid`]); no labels, annotations, resourceVersion or timestamps.

use std::collections::{HashMap, HashSet};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};

use super::absent::AbsentOwnerCache;
use super::uid::Uid;
use super::{Deletion, Identity, REASON_OWNER_REF_INVALID_NAMESPACE};

/// What a graph change asks of the driver.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Effect {
    /// Add this uid to the `attemptToDelete` queue.
    AttemptToDelete(String),
    /// Add this uid to the `attemptToDelete` queue, rate limited.
    AttemptToDeleteRateLimited(String),
    /// Add this uid to the `attemptToOrphan` queue.
    AttemptToOrphan(String),
    /// Record a Warning event on `regarding`.
    Warning {
        /// The object the event is about.
        regarding: Identity,
        /// Upstream's reason.
        reason: &'static str,
        /// Upstream's message.
        message: String,
    },
}

/// Why an object cannot join the graph.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The object has no `metadata.uid`.
    #[error("{kind} {namespace}/{name} has no uid")]
    NoUid {
        /// Its kind.
        kind: String,
        /// Its namespace.
        namespace: String,
        /// Its name.
        name: String,
    },
}

type Result<T, E = Error> = std::result::Result<T, E>;

/// An interned string (apiVersion, kind or namespace).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Sym(u32);

/// The empty string: the namespace of cluster-scoped objects.
const EMPTY: Sym = Sym(0);

/// The graph's string table: few distinct values, many uses.
#[derive(Debug)]
struct Interner {
    names: Vec<Box<str>>,
    ids: HashMap<Box<str>, Sym>,
}

impl Default for Interner {
    fn default() -> Self {
        let mut interner = Interner { names: Vec::new(), ids: HashMap::new() };
        interner.id("");
        interner
    }
}

impl Interner {
    fn id(&mut self, s: &str) -> Sym {
        if let Some(id) = self.ids.get(s) {
            return *id;
        }
        let id = Sym(u32::try_from(self.names.len()).unwrap_or(u32::MAX));
        self.names.push(s.into());
        self.ids.insert(s.into(), id);
        id
    }

    fn name(&self, id: Sym) -> &str {
        self.names.get(id.0 as usize).map_or("", |s| s)
    }
}

const OBSERVED: u8 = 1;
const BEING_DELETED: u8 = 2;
const DELETING_DEPENDENTS: u8 = 4;
const ORPHAN_FINALIZER: u8 = 8;
const FOREGROUND_FINALIZER: u8 = 16;

/// One object (or virtual owner).
#[derive(Debug)]
struct Node {
    api_version: Sym,
    kind: Sym,
    namespace: Sym,
    name: Box<str>,
    /// Its ownerReferences as last observed.
    owners: Box<[Owner]>,
    /// Uids of the nodes naming this one as an owner.
    dependents: Vec<Uid>,
    /// `OBSERVED`, `BEING_DELETED`, ... ; the finalizer bits are as last
    /// observed, for the transitions.
    flags: u8,
}

/// One ownerReference.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Owner {
    uid: Uid,
    api_version: Sym,
    kind: Sym,
    name: Box<str>,
    controller: Option<bool>,
    block_owner_deletion: Option<bool>,
}

impl Owner {
    fn blocks(&self) -> bool {
        self.block_owner_deletion == Some(true)
    }
}

impl Node {
    fn has(&self, flag: u8) -> bool {
        self.flags & flag != 0
    }

    fn observed(&self) -> bool {
        self.has(OBSERVED)
    }

    /// The observed deletion state (nothing for a virtual node).
    fn deletion(&self) -> Deletion {
        if !self.observed() {
            return Deletion::default();
        }
        Deletion {
            being_deleted: self.has(BEING_DELETED),
            orphan: self.has(ORPHAN_FINALIZER),
            foreground: self.has(FOREGROUND_FINALIZER),
        }
    }
}

/// A node as the workers read it.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeView {
    /// Coordinates (for a virtual node: as its first dependent named it).
    pub identity: Identity,
    /// Seen through a watch (not virtual).
    pub observed: bool,
    /// Has a `deletionTimestamp`.
    pub being_deleted: bool,
    /// Being deleted with `foregroundDeletion` (upstream
    /// `isDeletingDependents`).
    pub deleting_dependents: bool,
    /// Its ownerReferences as last observed.
    pub owners: Vec<OwnerReference>,
    /// The nodes naming it as an owner.
    pub dependents: Vec<DependentView>,
}

/// A dependent as its owner's worker sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DependentView {
    /// Its coordinates.
    pub identity: Identity,
    /// It is itself deleting its dependents.
    pub deleting_dependents: bool,
    /// Its reference to the owner has `blockOwnerDeletion: true`.
    pub blocks_owner: bool,
}

/// The dependency graph.
#[derive(Debug, Default)]
pub struct Graph {
    /// Every node by uid (upstream `uidToNode`).
    nodes: HashMap<Uid, Node>,
    /// Strings the nodes share.
    syms: Interner,
    /// Owners verified absent.
    absent: AbsentOwnerCache,
}

// === impl Graph ===

impl Graph {
    /// An empty graph.
    pub fn new() -> Self {
        Self::default()
    }

    /// Nodes, virtual ones included.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether the graph has no node.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Whether a node with this uid exists.
    pub fn contains(&self, uid: &str) -> bool {
        self.nodes.contains_key(&Uid::new(uid))
    }

    /// Owners verified absent (shared with the workers' lookups).
    pub fn absent_owners(&mut self) -> &mut AbsentOwnerCache {
        &mut self.absent
    }

    /// The node `uid`, resolved for a worker.
    pub fn node(&self, uid: &str) -> Option<NodeView> {
        let uid = Uid::new(uid);
        let node = self.nodes.get(&uid)?;
        let dependents = node
            .dependents
            .iter()
            .filter_map(|d| {
                let dep = self.nodes.get(d)?;
                Some(DependentView {
                    identity: self.identity(d, dep),
                    deleting_dependents: dep.has(DELETING_DEPENDENTS),
                    blocks_owner: dep.owners.iter().any(|o| o.uid == uid && o.blocks()),
                })
            })
            .collect();
        Some(NodeView {
            identity: self.identity(&uid, node),
            observed: node.observed(),
            being_deleted: node.has(BEING_DELETED),
            deleting_dependents: node.has(DELETING_DEPENDENTS),
            owners: node.owners.iter().map(|o| self.owner_reference(o)).collect(),
            dependents,
        })
    }

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

    // --- internals ---

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

    /// Upstream `addDependentToOwners`: links `dependent` to each owner,
    /// creating virtual owners (queued for verification), and queues the
    /// dependent if a reference does not match what is known of its owner.
    fn add_dependent_to_owners(&mut self, dependent: &Uid, owners: &[Owner], fx: &mut Vec<Effect>) {
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
                        owners: Box::new([]),
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

    fn remove_dependent_from_owners(&mut self, dependent: &Uid, owners: &[Owner]) {
        for owner in owners {
            if let Some(node) = self.nodes.get_mut(&owner.uid) {
                node.dependents.retain(|d| d != dependent);
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

    /// Upstream `reportInvalidNamespaceOwnerRef`.
    fn invalid_namespace(&self, dependent: &Uid, owner: &Uid) -> Option<Effect> {
        let node = self.nodes.get(dependent)?;
        let reference = node.owners.iter().find(|o| o.uid == *owner)?;
        let namespace = self.syms.name(node.namespace).to_owned();
        let invalid = Identity {
            api_version: self.syms.name(reference.api_version).to_owned(),
            kind: self.syms.name(reference.kind).to_owned(),
            namespace: namespace.clone(),
            name: reference.name.to_string(),
            uid: reference.uid.to_string(),
        };
        Some(Effect::Warning {
            regarding: self.identity(dependent, node),
            reason: REASON_OWNER_REF_INVALID_NAMESPACE,
            message: format!("ownerRef {invalid} does not exist in namespace {namespace:?}"),
        })
    }

    /// Upstream `partitionDependents`: dependents whose reference to
    /// `owner.uid` matches `owner`'s coordinates, and those with one that
    /// does not (a dependent can be in both).
    fn partition(&self, dependents: &[Uid], owner: &Identity) -> (Vec<Uid>, Vec<Uid>) {
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
    fn alternate_identity(&self, dependents: &[Uid], absent: &Identity) -> Option<Identity> {
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
                let mut candidate = Identity {
                    api_version: self.syms.name(reference.api_version).to_owned(),
                    kind: self.syms.name(reference.kind).to_owned(),
                    namespace: dep_namespace.to_owned(),
                    name: reference.name.to_string(),
                    uid: absent.uid.clone(),
                };
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

    /// Upstream `ownerReferenceMatchesCoordinates`.
    fn matches(&self, reference: &Owner, identity: &Identity) -> bool {
        self.syms.name(reference.api_version) == identity.api_version
            && self.syms.name(reference.kind) == identity.kind
            && *reference.name == *identity.name
            && reference.uid.to_string() == identity.uid
    }

    fn identity(&self, uid: &Uid, node: &Node) -> Identity {
        Identity {
            api_version: self.syms.name(node.api_version).to_owned(),
            kind: self.syms.name(node.kind).to_owned(),
            namespace: self.syms.name(node.namespace).to_owned(),
            name: node.name.to_string(),
            uid: uid.to_string(),
        }
    }

    fn owner_reference(&self, owner: &Owner) -> OwnerReference {
        OwnerReference {
            api_version: self.syms.name(owner.api_version).to_owned(),
            kind: self.syms.name(owner.kind).to_owned(),
            name: owner.name.to_string(),
            uid: owner.uid.to_string(),
            controller: owner.controller,
            block_owner_deletion: owner.block_owner_deletion,
        }
    }

    /// The object's ownerReferences (those without a uid are ignored: the
    /// API server requires one).
    fn owners_of(&mut self, meta: &ObjectMeta) -> Box<[Owner]> {
        meta.owner_references
            .iter()
            .flatten()
            .filter(|r| !r.uid.is_empty())
            .map(|r| Owner {
                uid: Uid::new(&r.uid),
                api_version: self.syms.id(&r.api_version),
                kind: self.syms.id(&r.kind),
                name: r.name.as_str().into(),
                controller: r.controller,
                block_owner_deletion: r.block_owner_deletion,
            })
            .collect()
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

fn flags_of(deletion: Deletion) -> u8 {
    let mut flags = 0;
    if deletion.being_deleted {
        flags |= BEING_DELETED;
    }
    if deletion.deleting_dependents() {
        flags |= DELETING_DEPENDENTS;
    }
    if deletion.orphan {
        flags |= ORPHAN_FINALIZER;
    }
    if deletion.foreground {
        flags |= FOREGROUND_FINALIZER;
    }
    flags
}

/// Upstream `referencesDiffs`: references added, removed, and changed
/// (same uid, other fields) between `old` and `new`.
#[allow(clippy::type_complexity)]
fn diff(old: &[Owner], new: &[Owner]) -> (Vec<Owner>, Vec<Owner>, Vec<(Owner, Owner)>) {
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
