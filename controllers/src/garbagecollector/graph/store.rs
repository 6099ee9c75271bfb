//! The graph core (upstream `graph.go`): what a change asks of the driver
//! ([`Effect`]), the nodes keyed by uid with their ownerReferences and
//! flags, the [`Graph`] itself and how workers read it ([`NodeView`]).

use std::sync::LazyLock;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kcm_objects::{Pool, SharedList, SlabMap, Uid};

use super::interner::{Interner, Sym};
use crate::garbagecollector::absent::AbsentOwnerCache;
use crate::garbagecollector::{Deletion, Identity};

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

pub(super) type Result<T, E = Error> = std::result::Result<T, E>;

pub(super) const OBSERVED: u8 = 1;
pub(super) const BEING_DELETED: u8 = 2;
pub(super) const DELETING_DEPENDENTS: u8 = 4;
pub(super) const ORPHAN_FINALIZER: u8 = 8;
pub(super) const FOREGROUND_FINALIZER: u8 = 16;

/// One object (or virtual owner).
#[derive(Debug)]
pub(super) struct Node {
    pub(super) api_version: Sym,
    pub(super) kind: Sym,
    pub(super) namespace: Sym,
    pub(super) name: Box<str>,
    /// Its ownerReferences as last observed, one shared copy per distinct
    /// list (a ReplicaSet's pods name the same owner).
    pub(super) owners: SharedList<Owner>,
    /// Uids of the nodes naming this one as an owner.
    pub(super) dependents: Vec<Uid>,
    /// `OBSERVED`, `BEING_DELETED`, ... ; the finalizer bits are as last
    /// observed, for the transitions.
    pub(super) flags: u8,
}

/// Distinct ownerReferences lists of the process's graph.
static OWNER_LISTS: LazyLock<Pool<[Owner], SharedList<Owner>>> = LazyLock::new(Pool::new);

/// The shared copy of `owners`.
pub(super) fn shared(owners: &[Owner]) -> SharedList<Owner> {
    OWNER_LISTS.intern(owners)
}

/// One ownerReference.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) struct Owner {
    pub(super) uid: Uid,
    pub(super) api_version: Sym,
    pub(super) kind: Sym,
    pub(super) name: Box<str>,
    pub(super) controller: Option<bool>,
    pub(super) block_owner_deletion: Option<bool>,
}

impl Owner {
    pub(super) fn blocks(&self) -> bool {
        self.block_owner_deletion == Some(true)
    }
}

impl Node {
    pub(super) fn has(&self, flag: u8) -> bool {
        self.flags & flag != 0
    }

    pub(super) fn observed(&self) -> bool {
        self.has(OBSERVED)
    }

    /// The observed deletion state (nothing for a virtual node).
    pub(super) fn deletion(&self) -> Deletion {
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
    pub(super) nodes: SlabMap<Uid, Node>,
    /// Strings the nodes share.
    pub(super) syms: Interner,
    /// Owners verified absent.
    pub(super) absent: AbsentOwnerCache,
}

// === impl Graph: reads ===

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

    // --- for the changes ---

    /// Upstream `ownerReferenceMatchesCoordinates`.
    pub(super) fn matches(&self, reference: &Owner, identity: &Identity) -> bool {
        self.syms.name(reference.api_version) == identity.api_version
            && self.syms.name(reference.kind) == identity.kind
            && *reference.name == *identity.name
            && reference.uid.to_string() == identity.uid
    }

    /// The coordinates `reference` gives its owner, in `namespace`.
    pub(super) fn owner_identity(&self, reference: &Owner, namespace: &str) -> Identity {
        Identity {
            api_version: self.syms.name(reference.api_version).to_owned(),
            kind: self.syms.name(reference.kind).to_owned(),
            namespace: namespace.to_owned(),
            name: reference.name.to_string(),
            uid: reference.uid.to_string(),
        }
    }

    pub(super) fn identity(&self, uid: &Uid, node: &Node) -> Identity {
        Identity {
            api_version: self.syms.name(node.api_version).to_owned(),
            kind: self.syms.name(node.kind).to_owned(),
            namespace: self.syms.name(node.namespace).to_owned(),
            name: node.name.to_string(),
            uid: uid.to_string(),
        }
    }

    pub(super) fn owner_reference(&self, owner: &Owner) -> OwnerReference {
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
    pub(super) fn owners_of(&mut self, meta: &ObjectMeta) -> SharedList<Owner> {
        let owners: Vec<Owner> = meta
            .owner_references
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
            .collect();
        shared(&owners)
    }
}

pub(super) fn flags_of(deletion: Deletion) -> u8 {
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
