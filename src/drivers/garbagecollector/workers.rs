//! The two worker kinds (upstream `attemptToDeleteWorker`,
//! `attemptToOrphanWorker`): each item's decision loop with the core, and
//! the API calls it asks for (`operations`).

use std::collections::HashMap;
use std::sync::Arc;

use futures::future::join_all;
use kcm_controllers::garbagecollector::FINALIZER_ORPHAN;
use kcm_controllers::garbagecollector::decide::{self, Decision, Fetched, Lookup};
use kcm_controllers::garbagecollector::graph::NodeView;
use kube::Client;

use super::operations::{Calls, Error, Result};
use super::shared::Shared;
use crate::drivers::api_errors::code;
use kcm_runtime::runner::{Next, Reconcile, SyncError};

// === attemptToDelete ===

/// Upstream `attemptToDeleteWorker`: keys are node uids.
pub(super) struct AttemptToDelete {
    calls: Calls,
}

impl AttemptToDelete {
    pub(super) fn new(shared: Arc<Shared>, client: Client) -> Self {
        AttemptToDelete { calls: Calls { shared, client } }
    }

    async fn attempt(&self, uid: &str) -> Result<Next> {
        let shared = &self.calls.shared;
        // Gone from the graph: nothing to verify any more.
        let Some(item) = shared.graph().node(uid) else { return Ok(Next::Done) };
        let mut fetched = Fetched::NotYet;
        let mut lookups: HashMap<String, Lookup> = HashMap::new();
        loop {
            match decide::attempt_to_delete(&item, &fetched, &lookups) {
                Decision::Fetch => fetched = self.calls.get(&item.identity).await?,
                Decision::LookUp(references) => {
                    for reference in references {
                        let found = self.calls.lookup(&item.identity, &reference).await?;
                        lookups.insert(reference.uid, found);
                    }
                }
                Decision::VirtualDelete => {
                    tracing::debug!(item = %item.identity, "item not found, generating a virtual delete event");
                    shared.change(|graph| graph.virtual_delete(&item.identity));
                    return Ok(Next::Done);
                }
                Decision::Nothing(reason) => {
                    tracing::trace!(item = %item.identity, reason, "nothing to do");
                    break;
                }
                Decision::Invalid(reason) => {
                    tracing::info!(item = %item.identity, reason, "not retrying");
                    return Ok(Next::Done);
                }
                Decision::RemoveFinalizer(finalizer) => {
                    tracing::info!(item = %item.identity, finalizer, "removing finalizer: no blocking dependent left");
                    self.calls.remove_finalizer(&item.identity, finalizer).await?;
                    break;
                }
                Decision::AttemptDependents(uids) => {
                    for dependent in uids {
                        shared.attempt_to_delete.add(dependent);
                    }
                    break;
                }
                Decision::RemoveOwnerReferences(owner_uids) => {
                    tracing::info!(item = %item.identity, owners = ?owner_uids, "removing dangling and waiting references");
                    self.calls.remove_owner_refs(&item.identity, &owner_uids).await?;
                    break;
                }
                Decision::Delete { propagation, resource_version, owner_references, unblock_first } => {
                    if unblock_first {
                        self.unblock(&item).await?;
                    }
                    tracing::info!(item = %item.identity, propagation = propagation.as_str(), "deleting item");
                    let deleted = self
                        .calls
                        .delete(&item.identity, propagation, resource_version.as_deref(), &owner_references)
                        .await?;
                    if !deleted {
                        shared.change(|graph| graph.virtual_delete(&item.identity));
                        return Ok(Next::Done);
                    }
                    break;
                }
            }
        }
        if !item.observed {
            // Checked again until a watch reports it (upstream #56121).
            return Err(Error::NotObserved(Box::new(item.identity)));
        }
        Ok(Next::Done)
    }

    /// Sets `blockOwnerDeletion: false` on the item's blocking references.
    async fn unblock(&self, item: &NodeView) -> Result<()> {
        let strategic = decide::unblock_owner_refs_strategic(&item.identity.uid, &item.owners);
        self.calls.patch(&item.identity, strategic, decide::unblock_owner_refs_merge).await
    }
}

impl Reconcile for AttemptToDelete {
    async fn sync(&self, key: &str) -> Result<Next, SyncError> {
        self.attempt(key).await.map_err(|e| Box::new(e) as SyncError)
    }
}

// === attemptToOrphan ===

/// Upstream `attemptToOrphanWorker`: keys are owner uids.
pub(super) struct AttemptToOrphan {
    calls: Calls,
}

impl AttemptToOrphan {
    pub(super) fn new(shared: Arc<Shared>, client: Client) -> Self {
        AttemptToOrphan { calls: Calls { shared, client } }
    }

    /// Removes the owner's reference from every dependent, then the
    /// owner's `orphan` finalizer.
    async fn orphan(&self, uid: &str) -> Result<Next> {
        let Some(owner) = self.calls.shared.graph().node(uid) else { return Ok(Next::Done) };
        let owner_uid = [owner.identity.uid.clone()];
        let results =
            join_all(owner.dependents.iter().map(|d| self.calls.remove_owner_refs(&d.identity, &owner_uid))).await;
        let errors: Vec<String> = results
            .into_iter()
            .filter_map(Result::err)
            .filter(|e| !matches!(e, Error::Api { source, .. } if code(source.as_ref()) == Some(404)))
            .map(|e| e.to_string())
            .collect();
        if !errors.is_empty() {
            return Err(Error::Orphan { owner: Box::new(owner.identity), errors: errors.join(", ") });
        }
        self.calls.remove_finalizer(&owner.identity, FINALIZER_ORPHAN).await?;
        Ok(Next::Done)
    }
}

impl Reconcile for AttemptToOrphan {
    async fn sync(&self, key: &str) -> Result<Next, SyncError> {
        self.orphan(key).await.map_err(|e| Box::new(e) as SyncError)
    }
}
