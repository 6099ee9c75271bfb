//! Dependents by controller: the indexes the ReplicaSet and Deployment
//! drivers read instead of scanning their namespace on every sync
//! (upstream lists the namespace and claims, which grows with the
//! namespace).
//!
//! A claim ignores every dependent another controller owns, so the
//! dependents it controls and the orphans of its namespace are all a sync
//! can act on: pods for a ReplicaSet, ReplicaSets for a Deployment. The
//! ReplicaSet sync also reads the ReplicaSets under its own controller
//! (to rank a scale-down) from the same index.

use std::sync::Arc;

use kcm_objects::ReplicaSet;
use kcm_objects::{Cached, Pod};
use kcm_runtime::informer::{self, SharedInformer, Store};

/// Index of dependents by the uid of their controller (those with none are
/// not in it).
pub const CONTROLLER_UID_INDEX: &str = "controllerUID";

/// Index of the dependents with no controller, by namespace.
pub const ORPHANS_INDEX: &str = "orphansByNamespace";

/// A cached kind some controller claims.
pub trait Controlled: Cached {
    /// The uid of its controller, if it has one.
    fn controller_uid(&self) -> Option<&str>;
}

impl Controlled for Pod {
    fn controller_uid(&self) -> Option<&str> {
        self.metadata.controller().map(|r| r.uid.as_str())
    }
}

impl Controlled for ReplicaSet {
    fn controller_uid(&self) -> Option<&str> {
        self.metadata.controller().map(|r| r.uid.as_str())
    }
}

/// Registers both indexes on a shared informer, unless another controller
/// already did.
///
/// # Errors
/// An index cannot be added (the informer has started).
pub fn register<K: Controlled>(informer: &SharedInformer<K>) -> Result<(), informer::Error> {
    let controller = |obj: &K| obj.controller_uid().map(str::to_owned).into_iter().collect();
    let orphan = |obj: &K| match obj.controller_uid() {
        Some(_) => Vec::new(),
        None => vec![obj.namespace().unwrap_or_default().to_owned()],
    };
    for added in [informer.add_index(CONTROLLER_UID_INDEX, controller), informer.add_index(ORPHANS_INDEX, orphan)] {
        match added {
            Ok(()) | Err(informer::Error::IndexConflict(_)) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// What the owner with `uid` (if known) in `namespace` may claim: the
/// cached dependents it controls, then the orphans of its namespace.
pub fn claimable<K: Controlled>(store: &Store<K>, uid: Option<&str>, namespace: &str) -> Vec<Arc<K>> {
    let lookup = |index: &str, value: &str| {
        store.by_index(index, value).unwrap_or_else(|e| unreachable!("{e}: registered with the driver"))
    };
    let mut dependents = uid.map(|uid| lookup(CONTROLLER_UID_INDEX, uid)).unwrap_or_default();
    dependents.extend(lookup(ORPHANS_INDEX, namespace));
    dependents
}

/// The cached ReplicaSets whose controller is `rs`'s (itself included);
/// none when it has none.
pub fn under_same_controller(store: &Store<ReplicaSet>, rs: &ReplicaSet) -> Vec<Arc<ReplicaSet>> {
    let Some(uid) = rs.controller_uid() else { return Vec::new() };
    store.by_index(CONTROLLER_UID_INDEX, uid).unwrap_or_else(|e| unreachable!("{e}: registered with the driver"))
}
