//! A node's health in the monitor pass: the core's assessment from the
//! node and its Lease, and the status write it asks for (conditions set to
//! `Unknown` when the kubelet stopped posting), made on the node read live
//! and retried on a fresh read (upstream `tryUpdateNodeHealth`).

use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::Node as FullNode;
use kcm_controllers::node::NODE_LEASE_NAMESPACE;
use kcm_controllers::node::health::Assessment;
use kcm_objects::{Node, project};
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
    ///
    /// The cache holds slim nodes: a write is made on the node read live
    /// (judged again from that read), so the status fields the cache does
    /// not keep are written back as they are. Upstream's first try writes
    /// its cached full node.
    pub(super) async fn settle_health(&self, cached: Arc<Node>) -> Option<(Node, Assessment)> {
        let name = cached.metadata.name.to_string();
        let mut node = Arc::unwrap_or_clone(cached);
        let mut live: Option<FullNode> = None;
        let mut attempt = 0;
        loop {
            let lease = self.leases.get_namespaced(Some(NODE_LEASE_NAMESPACE), &name);
            let now = Timestamp::now();
            let mut assessment = self.lock().assess(&node, lease.as_deref(), now);
            let Some(conditions) = assessment.status_update.clone() else {
                self.lock().remember(&name, assessment.health.clone());
                return Some((node, assessment));
            };
            let Some(mut full) = live.take() else {
                (node, live) = self.read_live(&name).await?;
                continue;
            };
            attempt += 1;
            full.status.get_or_insert_default().conditions = Some(conditions);
            let written = self.nodes_api().replace_status(&name, &PostParams::default(), &full).await;
            self.lock().remember(&name, assessment.health.clone());
            match written.map(|w| project::<Node>(&w)) {
                Ok(Ok(written)) => {
                    assessment.written(now, lease.as_deref());
                    self.lock().remember(&name, assessment.health.clone());
                    tracing::info!(node = %name, "node stopped posting status; conditions set to Unknown");
                    return Some((written, assessment));
                }
                Ok(Err(e)) => {
                    tracing::warn!(node = %name, error = %e, "the written node does not decode; skipping it this pass");
                    return None;
                }
                Err(e) => {
                    tracing::warn!(node = %name, attempt, error = %e, "error updating node status");
                    if attempt == STATUS_UPDATE_TRIES {
                        break;
                    }
                    tokio::time::sleep(STATUS_RETRY_SLEEP).await;
                    (node, live) = self.read_live(&name).await?;
                }
            }
        }
        tracing::error!(node = %name, "update health of Node from Controller error, skipping - no pods will be evicted");
        None
    }

    /// The node read live, whole and as the cache would hold it; `None`
    /// (logged) if the read fails.
    async fn read_live(&self, name: &str) -> Option<(Node, Option<FullNode>)> {
        let fresh = match self.nodes_api().get(name).await {
            Ok(fresh) => fresh,
            Err(e) => {
                tracing::warn!(node = %name, error = %e, "failed while getting a Node to retry updating node health");
                return None;
            }
        };
        match project::<Node>(&fresh) {
            Ok(slim) => Some((slim, Some(fresh))),
            Err(e) => {
                tracing::warn!(node = %name, error = %e, "the node read does not decode; skipping it this pass");
                None
            }
        }
    }
}
