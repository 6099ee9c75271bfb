//! Pods by controller: the indexes the ReplicaSet and Deployment drivers
//! read instead of scanning their namespace's pods on every sync (upstream
//! lists the namespace and filters, which grows with the namespace).
//!
//! A ReplicaSet may claim only the pods it controls and the orphans of its
//! namespace, so those two indexes give every pod its sync can act on.

use std::sync::Arc;

use kcm_objects::Pod;
use kcm_runtime::informer::{self, SharedInformer, Store};

/// Index of pods by the uid of their controller (pods with none are not in
/// it).
pub const CONTROLLER_UID_INDEX: &str = "controllerUID";

/// Index of the pods with no controller, by namespace.
pub const ORPHANS_INDEX: &str = "orphansByNamespace";

/// Registers both indexes on the shared pod informer, unless another
/// controller already did.
///
/// # Errors
/// An index cannot be added (the informer has started).
pub fn register(pods: &SharedInformer<Pod>) -> Result<(), informer::Error> {
    let controller = |pod: &Pod| pod.metadata.controller().map(|r| r.uid.to_string()).into_iter().collect();
    let orphan = |pod: &Pod| {
        if pod.metadata.controller().is_none() { vec![pod.metadata.namespace.to_string()] } else { Vec::new() }
    };
    for result in [pods.add_index(CONTROLLER_UID_INDEX, controller), pods.add_index(ORPHANS_INDEX, orphan)] {
        match result {
            Ok(()) | Err(informer::Error::IndexConflict(_)) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// The cached pods controlled by the owner with `uid`.
pub fn controlled_by(pods: &Store<Pod>, uid: &str) -> Vec<Arc<Pod>> {
    pods.by_index(CONTROLLER_UID_INDEX, uid).unwrap_or_else(|e| unreachable!("{e}: registered with the driver"))
}

/// The cached pods of `namespace` with no controller.
pub fn orphans(pods: &Store<Pod>, namespace: &str) -> Vec<Arc<Pod>> {
    pods.by_index(ORPHANS_INDEX, namespace).unwrap_or_else(|e| unreachable!("{e}: registered with the driver"))
}
