//! A node's health in the monitor pass: the core's assessment from the
//! node and its Lease, and the status write it asks for (conditions set to
//! `Unknown` when the kubelet stopped posting), retried on a fresh read of
//! the node (upstream `tryUpdateNodeHealth`).

use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::Node;
use kcm_controllers::node::NODE_LEASE_NAMESPACE;
use kcm_controllers::node::health::Assessment;
use kube::ResourceExt;
use kube::api::PostParams;

use super::shared::Inner;

/// Tries of a node status write, each on a fresh read of the node
/// (upstream `NodeHealthUpdateRetry`).
const STATUS_UPDATE_TRIES: u32 = 5;

/// Pause between status write tries (upstream `retrySleepTime`).
const STATUS_RETRY_SLEEP: Duration = Duration::from_millis(20);

impl Inner {
    /// Assesses the node and writes its status if needed, retrying on a
    /// fresh read (upstream's `PollImmediate` around `tryUpdateNodeHealth`).
    /// `None`: the node is skipped this pass ("no pods will be evicted").
    pub(super) async fn settle_health(&self, cached: Arc<Node>) -> Option<(Node, Assessment)> {
        let name = cached.name_any();
        let mut node = Arc::unwrap_or_clone(cached);
        for attempt in 1..=STATUS_UPDATE_TRIES {
            let lease = self.leases.get_namespaced(Some(NODE_LEASE_NAMESPACE), &name);
            let now = Timestamp::now();
            let mut assessment = self.lock().assess(&node, lease.as_deref(), now);
            let Some(status) = assessment.status_update.clone() else {
                self.lock().remember(&name, assessment.health.clone());
                return Some((node, assessment));
            };
            let mut updated = node.clone();
            updated.status = Some(status);
            match self.nodes_api().replace_status(&name, &PostParams::default(), &updated).await {
                Ok(written) => {
                    assessment.written(now, lease.as_deref());
                    self.lock().remember(&name, assessment.health.clone());
                    tracing::info!(node = %name, "node stopped posting status; conditions set to Unknown");
                    return Some((written, assessment));
                }
                Err(e) => {
                    self.lock().remember(&name, assessment.health.clone());
                    tracing::warn!(node = %name, attempt, error = %e, "error updating node status");
                    if attempt == STATUS_UPDATE_TRIES {
                        break;
                    }
                    tokio::time::sleep(STATUS_RETRY_SLEEP).await;
                    match self.nodes_api().get(&name).await {
                        Ok(fresh) => node = fresh,
                        Err(e) => {
                            tracing::warn!(node = %name, error = %e, "failed while getting a Node to retry updating node health");
                            return None;
                        }
                    }
                }
            }
        }
        tracing::error!(node = %name, "update health of Node from Controller error, skipping - no pods will be evicted");
        None
    }
}
