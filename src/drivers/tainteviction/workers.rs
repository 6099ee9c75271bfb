//! The three worker kinds: the node and pod queues' judges (decisions
//! only, no API call) and the deletion queue's.

use std::sync::Arc;

use super::evictor::Evictor;
use kcm_runtime::runner::{Next, Reconcile, SyncError};

/// `noexec_taint_node` (every pod on a node, upstream `handleNodeUpdate`)
/// and `noexec_taint_pod` (one pod, upstream `handlePodUpdate`): decisions
/// only, no API call, so they never fail.
pub(super) struct Judge {
    /// What decides.
    pub(super) evictor: Arc<Evictor>,
    /// [`Evictor::node_changed`] or [`Evictor::pod_changed`].
    pub(super) on: fn(&Evictor, &str),
}

impl Reconcile for Judge {
    async fn sync(&self, key: &str) -> Result<Next, SyncError> {
        (self.on)(&self.evictor, key);
        Ok(Next::Done)
    }
}

/// The deletion queue: a scheduled deletion that may be due.
pub(super) struct DeletionSync(pub(super) Arc<Evictor>);

impl Reconcile for DeletionSync {
    async fn sync(&self, key: &str) -> Result<Next, SyncError> {
        self.0.fire(key).await
    }
}
