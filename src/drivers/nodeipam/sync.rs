//! One node's sync (upstream `syncNode`, `AllocateOrOccupyCIDR` and
//! `updateCIDRsAllocation`): a node gone or being deleted is left; one
//! with `podCIDRs` has them occupied; one without gets the next free CIDR
//! of every cluster CIDR, written with upstream's strategic merge patch of
//! `spec.podCIDR` and `spec.podCIDRs`, tried three times.
//!
//! A cluster CIDR with none free records `CIDRNotAvailable` on the node
//! and fails the sync, which the queue retries with its backoff (5 ms
//! doubling to 1000 s), as upstream's `AddRateLimited`; the node changing
//! queues it again at once. A patch failing three times records
//! `CIDRAssignmentFailed`, gives the CIDRs back unless the server timed
//! out (the write may have landed: a restart recovers them) and fails the
//! sync.
//!
//! Stricter than upstream: a node whose CIDRs were written is given no
//! others until its cached copy shows them, so that a sync on a copy older
//! than the write (another update's event) does not allocate again.

use std::sync::Arc;

use k8s_openapi::api::core::v1::{Node as NodeObject, ObjectReference};
use kcm_controllers::nodeipam::allocator::{Assignment, assignment};
use kcm_controllers::nodeipam::cidr::Cidr;
use kcm_controllers::nodeipam::{
    CIDR_ASSIGNMENT_FAILED, CIDR_NOT_AVAILABLE, CIDR_UPDATE_RETRIES, node_status_change_message,
};
use kcm_objects::Node;
use kcm_runtime::events::{EventRecorder, EventType};
use kcm_runtime::informer::Store;
use kcm_runtime::runner::{Next, Reconcile, SyncError};
use kube::Client;
use kube::api::{Api, Patch, PatchParams};
use serde_json::json;

use super::Shared;
use crate::drivers::api_errors::reason;

/// The per-node sync.
pub(super) struct Syncer {
    /// Cached nodes.
    pub(super) nodes: Store<Node>,
    /// The controller's own client (`node-controller`).
    pub(super) client: Client,
    /// Records `CIDRNotAvailable` and `CIDRAssignmentFailed`.
    pub(super) recorder: EventRecorder,
    /// The allocator.
    pub(super) shared: Arc<Shared>,
}

impl Reconcile for Syncer {
    async fn sync(&self, key: &str) -> Result<Next, SyncError> {
        let Some(node) = self.nodes.get(key) else {
            tracing::debug!(node = key, "node has been deleted");
            return Ok(Next::Done);
        };
        if node.metadata.deletion_timestamp().is_some() {
            tracing::debug!(node = key, "node is being deleted");
            return Ok(Next::Done);
        }
        self.allocate_or_occupy(&node).await?;
        Ok(Next::Done)
    }
}

impl Syncer {
    /// Upstream `AllocateOrOccupyCIDR`.
    async fn allocate_or_occupy(&self, node: &Node) -> Result<(), SyncError> {
        let name = &node.metadata.name;
        let allocated = {
            let mut state = self.shared.lock();
            if !node.spec.pod_cidrs.is_empty() {
                state.written.remove(&**name);
                let occupied = state.allocator.occupy_cidrs(name, &node.spec.pod_cidrs);
                self.shared.report(&state.allocator, &[]);
                return Ok(occupied?);
            }
            if state.written.contains_key(&**name) {
                // Its own write's event brings the copy that shows them.
                tracing::debug!(node = %name, "Node's CIDRs are written and not cached yet");
                return Ok(());
            }
            let allocated = state.allocator.allocate();
            let tries: Vec<usize> = allocated.iter().flatten().map(|(_, tries)| *tries).collect();
            self.shared.report(&state.allocator, &tries);
            allocated
        };
        let allocated: Vec<Cidr> = match allocated {
            Ok(allocated) => allocated.into_iter().map(|(cidr, _)| cidr).collect(),
            Err(error) => {
                self.record_status_change(node, CIDR_NOT_AVAILABLE);
                return Err(error.into());
            }
        };
        tracing::debug!(node = %name, CIDRs = ?strings(&allocated), "Putting node with CIDR into the work queue");
        self.update_cidrs_allocation(name, &allocated).await
    }

    /// Upstream `updateCIDRsAllocation`: `allocated` written to the node
    /// unless it has CIDRs by now.
    async fn update_cidrs_allocation(&self, name: &str, allocated: &[Cidr]) -> Result<(), SyncError> {
        let cidrs = strings(allocated);
        let Some(node) = self.nodes.get(name) else {
            tracing::error!(node = name, "Failed while getting node for updating Node.Spec.PodCIDRs");
            self.give_back(allocated, name);
            return Err(format!("node \"{name}\" not found").into());
        };
        match assignment(&node.spec.pod_cidrs, allocated) {
            Assignment::AlreadySet => {
                tracing::debug!(node = name, CIDRs = ?cidrs, "Node already has allocated CIDR. It matches the proposed one");
                return Ok(());
            }
            Assignment::HasOthers => {
                tracing::error!(node = name, podCIDRs = ?node.spec.pod_cidrs, "Node already has a CIDR allocated. Releasing the new one");
                self.give_back(allocated, name);
                return Ok(());
            }
            Assignment::Write => {}
        }
        let mut last = None;
        for _ in 0..CIDR_UPDATE_RETRIES {
            match self.patch_node_cidrs(name, &cidrs).await {
                Ok(()) => {
                    tracing::info!(node = name, podCIDRs = ?cidrs, "Set node PodCIDR");
                    self.shared.lock().written.insert(name.to_owned(), allocated.to_vec());
                    return Ok(());
                }
                Err(error) => last = Some(error),
            }
        }
        let server_timeout = last.as_ref().is_some_and(|e| reason(e) == Some("ServerTimeout"));
        let error = last.map_or_else(String::new, |e| format!("failed to patch node CIDR: {e}"));
        tracing::error!(%error, node = name, podCIDRs = ?cidrs, "Failed to update node PodCIDR after multiple attempts");
        self.record_status_change(&node, CIDR_ASSIGNMENT_FAILED);
        // A timed-out write may have landed: the CIDRs stay taken (a
        // restart recovers them from the nodes) rather than risk two nodes
        // sharing one.
        if !server_timeout {
            tracing::error!(%error, node = name, "CIDR assignment for node failed. Releasing allocated CIDR");
            self.give_back(allocated, name);
        }
        Err(error.into())
    }

    /// Upstream `nodeutil.PatchNodeCIDRs`.
    async fn patch_node_cidrs(&self, name: &str, cidrs: &[String]) -> Result<(), kube::Error> {
        let patch = json!({"spec": {"podCIDR": cidrs[0], "podCIDRs": cidrs}});
        let api: Api<NodeObject> = Api::all(self.client.clone());
        api.patch(name, &PatchParams::default(), &Patch::Strategic(&patch)).await.map(drop)
    }

    /// CIDRs taken for `node` and not written, released.
    fn give_back(&self, allocated: &[Cidr], node: &str) {
        let mut state = self.shared.lock();
        for error in state.allocator.release_allocated(allocated) {
            tracing::error!(%error, node, "Error releasing allocated CIDR for node");
        }
        self.shared.report(&state.allocator, &[]);
    }

    /// Upstream `RecordNodeStatusChange`: a Normal event on the node.
    fn record_status_change(&self, node: &Node, status: &str) {
        let name = &node.metadata.name;
        tracing::info!(status, node = %name, "Recording status change event message for node");
        let reference = ObjectReference {
            api_version: Some("v1".into()),
            kind: Some("Node".into()),
            name: Some(name.to_string()),
            uid: Some(node.metadata.uid.to_string()),
            ..Default::default()
        };
        self.recorder.event(&reference, EventType::Normal, status, node_status_change_message(name, status));
    }
}

/// The CIDRs as written to the node.
fn strings(cidrs: &[Cidr]) -> Vec<String> {
    cidrs.iter().map(ToString::to_string).collect()
}
