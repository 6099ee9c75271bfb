//! The garbage collector's decisions (upstream
//! `pkg/controller/garbagecollector`), without I/O.
//!
//! The collector follows `metadata.ownerReferences`. It keeps a dependency
//! graph of every object it watches (metadata only), and for each object
//! whose owners may be gone, or that waits for its dependents, decides what
//! to write. The driver (`kcm-rs` `drivers::garbagecollector`) feeds the
//! graph from its watches, runs the two upstream workqueues and performs the
//! API calls.
//!
//! # Layout
//! - [`graph`]: the dependency [`Graph`](graph::Graph) (upstream
//!   `GraphBuilder.uidToNode` and `processGraphChanges`): objects keyed by
//!   uid, owners referenced but not observed as *virtual* nodes; each change
//!   returns the [`Effect`](graph::Effect)s upstream has (items for the
//!   `attemptToDelete` and `attemptToOrphan` queues, the
//!   `OwnerRefInvalidNamespace` event);
//! - [`decide`]: what one `attemptToDelete` item needs
//!   ([`attempt_to_delete`](decide::attempt_to_delete): nothing, a live
//!   read, owner lookups, delete with which propagation, remove these
//!   ownerReferences, remove the `foregroundDeletion` finalizer), and the
//!   patch bodies of every write;
//! - [`absent`]: the bounded cache of owners verified absent
//!   (`absentOwnerCache`);
//! - [`uid`]: a compact uid for the graph's memory footprint.
//!
//! # Propagation, as upstream
//! - *Background*: the owner is gone; each dependent whose owners are all
//!   gone (dangling) is deleted.
//! - *Foreground*: the owner carries `foregroundDeletion` and a
//!   `deletionTimestamp`; its dependents are deleted (those that have
//!   dependents of their own with foreground propagation) and, once no
//!   dependent with `blockOwnerDeletion` remains, the finalizer is removed.
//! - *Orphan*: the owner carries `orphan`; its reference is removed from
//!   each dependent, then the finalizer.

pub mod absent;
pub mod decide;
pub mod graph;

use std::fmt;

/// The finalizer asking the collector to orphan the dependents
/// (`metav1.FinalizerOrphanDependents`).
pub const FINALIZER_ORPHAN: &str = "orphan";

/// The finalizer asking the collector to delete the blocking dependents
/// first (`metav1.FinalizerDeleteDependents`).
pub const FINALIZER_DELETE_DEPENDENTS: &str = "foregroundDeletion";

/// Event reason for an ownerReference naming an owner in another namespace.
pub const REASON_OWNER_REF_INVALID_NAMESPACE: &str = "OwnerRefInvalidNamespace";

/// An object's coordinates as the collector knows it (upstream
/// `objectReference`): an ownerReference's coordinates plus a namespace
/// (empty: cluster-scoped).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Identity {
    /// `apps/v1`, `v1`, ...
    pub api_version: String,
    /// `ReplicaSet`, ...
    pub kind: String,
    /// Empty for cluster-scoped objects.
    pub namespace: String,
    /// Name.
    pub name: String,
    /// Uid.
    pub uid: String,
}

impl fmt::Display for Identity {
    /// Upstream's `objectReference.String()`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "[{}/{}, namespace: {}, name: {}, uid: {}]",
            self.api_version, self.kind, self.namespace, self.name, self.uid
        )
    }
}

/// The finalizers and deletion state of an object, as observed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Deletion {
    /// `metadata.deletionTimestamp` is set.
    pub being_deleted: bool,
    /// `orphan` is among the finalizers.
    pub orphan: bool,
    /// `foregroundDeletion` is among the finalizers.
    pub foreground: bool,
}

impl Deletion {
    /// The state of an object with these metadata fields.
    pub fn of(being_deleted: bool, finalizers: &[String]) -> Self {
        Deletion {
            being_deleted,
            orphan: finalizers.iter().any(|f| f == FINALIZER_ORPHAN),
            foreground: finalizers.iter().any(|f| f == FINALIZER_DELETE_DEPENDENTS),
        }
    }

    /// Upstream `isDeletingDependents`: being deleted with
    /// `foregroundDeletion`.
    pub fn deleting_dependents(self) -> bool {
        self.being_deleted && self.foreground
    }
}

#[cfg(test)]
mod testing;
