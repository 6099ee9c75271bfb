//! The Recreate strategy (upstream `recreate.go`): scale every old
//! ReplicaSet to 0, wait until none of their pods runs, then create (or
//! scale up) the new one.

use k8s_openapi::api::core::v1::Pod;

use super::Error;
use super::conditions::actual_count;
use super::replicas;
use super::sync::{Planner, Rs};
use crate::common::controller_ref::controller_of;
use crate::common::pod::is_pod_terminal;

impl Planner<'_> {
    /// Upstream `rolloutRecreate`.
    pub(super) fn rollout_recreate(&mut self) -> Result<(), Error> {
        let (mut new, mut old) = self.get_all_replica_sets_and_sync_revision(false)?;
        let mut scaled_down = false;
        for rs in self.active(&old) {
            scaled_down |= self.scale_and_record(rs, 0);
        }
        if scaled_down || self.old_pods_running(new, &old) {
            self.sync_rollout_status(new, &old);
            return Ok(());
        }
        if new.is_none() {
            (new, old) = self.get_all_replica_sets_and_sync_revision(true)?;
        }
        if let Some(rs) = new {
            self.scale_and_record(rs, replicas(&self.d));
        }
        if self.stored_status_complete() {
            self.cleanup(&old);
        }
        self.sync_rollout_status(new, &old);
        Ok(())
    }

    /// Whether an old ReplicaSet still reports pods, or a pod of any
    /// ReplicaSet but the new one is not terminal (upstream
    /// `oldPodsRunning`). Pods being deleted, and phase Unknown, count as
    /// running.
    fn old_pods_running(&self, new: Option<Rs>, old: &[Rs]) -> bool {
        if actual_count(&self.refs(None, old)) > 0 {
            return true;
        }
        let new_uid = new.and_then(|i| self.rss[i].metadata.uid.as_deref());
        self.pods.iter().any(|p: &&Pod| {
            let owner = controller_of(&p.metadata).map(|r| r.uid.as_str());
            (new_uid.is_none() || owner != new_uid) && !is_pod_terminal(p)
        })
    }
}
