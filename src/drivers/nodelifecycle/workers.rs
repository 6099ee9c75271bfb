//! The two worker kinds: the node worker (the `NoSchedule` condition
//! taints and the beta os/arch labels; failures are logged, not retried,
//! as upstream) and the pod worker (a pod bound to a node that is not
//! ready is marked not ready; rate-limited retries).

use std::sync::Arc;

use kcm_controllers::node::monitor::PodStep;
use kcm_controllers::node::taints;

use super::shared::Inner;
use crate::drivers::nodes::node_of;
use kcm_runtime::runner::{Next, Reconcile, SyncError};

/// The node worker (upstream `doNodeProcessingPassWorker`).
pub(super) struct NodeSyncer(pub(super) Arc<Inner>);

impl Reconcile for NodeSyncer {
    async fn sync(&self, key: &str) -> Result<Next, SyncError> {
        let Some(node) = self.0.nodes.get(key) else { return Ok(Next::Done) };
        // Failures are logged, not retried: the next node change or
        // monitor pass brings the node back (upstream).
        if let Some(swap) = taints::no_schedule_swap(&node)
            && let Err(e) = self.0.swap_taints(&node, &swap).await
        {
            tracing::warn!(node = key, error = %e, "failed to taint NoSchedule on node");
        }
        let labels = taints::beta_labels(&node);
        if !labels.is_empty()
            && let Err(e) = self.0.patch_labels(&node, &labels).await
        {
            tracing::warn!(node = key, error = %e, "failed to reconcile labels for node");
        }
        Ok(Next::Done)
    }
}

/// The pod worker (upstream `processPod`).
pub(super) struct PodSyncer(pub(super) Arc<Inner>);

impl Reconcile for PodSyncer {
    async fn sync(&self, key: &str) -> Result<Next, SyncError> {
        let Some(pod) = self.0.pods.get(key) else { return Ok(Next::Done) };
        let Some(node_name) = node_of(&pod).map(str::to_owned) else { return Ok(Next::Done) };
        let cached = self.0.nodes.get(&node_name).is_some();
        let step = self.0.lock().pod_step(&node_name, cached);
        match step {
            PodStep::Nothing => Ok(Next::Done),
            PodStep::NodeNotCached => Err(format!("node {node_name} of pod {key} is not in the cache").into()),
            PodStep::MarkNotReady => {
                self.0.mark_pod_not_ready(&pod, &node_name).await.map_err(|e| Box::new(e) as SyncError)?;
                Ok(Next::Done)
            }
        }
    }
}
