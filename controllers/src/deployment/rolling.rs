//! The RollingUpdate strategy (upstream `rolling.go`): scale the new
//! ReplicaSet up within maxSurge, then the old ones down within
//! maxUnavailable, unhealthy old replicas first.

use super::Error;
use super::conditions::available_count;
use super::fenceposts::new_rs_new_replicas;
use super::max_unavailable;
use super::replicas;
use super::sync::{Planner, Rs};
use crate::replicaset::replicas as rs_replicas;

impl Planner<'_> {
    /// Upstream `rolloutRolling`: at most one of "scale the new ReplicaSet
    /// up" and "scale old ones down" per sync, then the status; history is
    /// cleaned once the stored status shows the rollout complete.
    pub(super) fn rollout_rolling(&mut self) -> Result<(), Error> {
        let (new, old) = self.get_all_replica_sets_and_sync_revision(true)?;
        // With `create`, a new ReplicaSet is always found or planned.
        let Some(new) = new else { return Ok(()) };
        if self.reconcile_new_replica_set(new, &old)? {
            self.sync_rollout_status(Some(new), &old);
            return Ok(());
        }
        let active_old = self.active(&old);
        if self.reconcile_old_replica_sets(new, &active_old) {
            self.sync_rollout_status(Some(new), &old);
            return Ok(());
        }
        if self.stored_status_complete() {
            self.cleanup(&old);
        }
        self.sync_rollout_status(Some(new), &old);
        Ok(())
    }

    /// Upstream `reconcileNewReplicaSet`: down to `spec.replicas` if above,
    /// else up as far as [`new_rs_new_replicas`] allows.
    fn reconcile_new_replica_set(&mut self, new: Rs, old: &[Rs]) -> Result<bool, Error> {
        let desired = replicas(&self.d);
        let current = rs_replicas(&self.rss[new]);
        if current == desired {
            return Ok(false);
        }
        if current > desired {
            return Ok(self.scale_and_record(new, desired));
        }
        let all = self.refs(Some(new), old);
        let count = new_rs_new_replicas(&self.d, &all, &self.rss[new])?;
        Ok(self.scale_and_record(new, count))
    }

    /// Upstream `reconcileOldReplicaSets`: how many old replicas may go
    /// without breaking availability, taken first from unhealthy old
    /// replicas, then from the oldest ReplicaSets.
    ///
    /// Example (upstream's): replicas 10, maxUnavailable 2 (min available
    /// 8), maxSurge 3 (at most 13). Old ReplicaSets at 10 with 2 unhealthy,
    /// new at 3 with none available: 13 − 8 − 3 = 2 may go, both from the
    /// unhealthy ones; the healthy ones stay until the new pods are
    /// available.
    fn reconcile_old_replica_sets(&mut self, new: Rs, active_old: &[Rs]) -> bool {
        let old_count: i32 = active_old.iter().map(|&i| rs_replicas(&self.rss[i])).sum();
        if old_count == 0 {
            return false;
        }
        let all_count: i32 = self.refs(Some(new), active_old).iter().map(|rs| rs_replicas(rs)).sum();
        let min_available = replicas(&self.d) - max_unavailable(&self.d);
        let new_rs = &self.rss[new];
        let new_unavailable =
            rs_replicas(new_rs) - new_rs.status.as_ref().and_then(|s| s.available_replicas).unwrap_or(0);
        let max_scaled_down = all_count - min_available - new_unavailable;
        if max_scaled_down <= 0 {
            return false;
        }
        let Some(cleaned) = self.cleanup_unhealthy_replicas(active_old, max_scaled_down) else { return false };
        let Some(scaled) = self.scale_down_old_replica_sets(new, active_old, min_available) else { return false };
        cleaned + scaled > 0
    }

    /// Upstream `cleanupUnhealthyReplicas`: oldest first, scale each old
    /// ReplicaSet down by its unavailable replicas, `max_cleanup` in all.
    /// `None` is upstream's error (a ReplicaSet with more available than
    /// desired replicas), which ends the step.
    fn cleanup_unhealthy_replicas(&mut self, old: &[Rs], max_cleanup: i32) -> Option<i32> {
        let mut total = 0;
        for rs in self.by_creation(old.to_vec()) {
            if total >= max_cleanup {
                break;
            }
            let spec = rs_replicas(&self.rss[rs]);
            let available = self.rss[rs].status.as_ref().and_then(|s| s.available_replicas).unwrap_or(0);
            if spec == 0 || spec == available {
                continue;
            }
            let count = (max_cleanup - total).min(spec - available);
            if count < 0 {
                return None;
            }
            self.scale_and_record(rs, spec - count);
            total += count;
        }
        Some(total)
    }

    /// Upstream `scaleDownOldReplicaSetsForRollingUpdate`: the available
    /// pods above `min_available` (by the ReplicaSets' status before this
    /// sync) go, from the oldest ReplicaSets first.
    fn scale_down_old_replica_sets(&mut self, new: Rs, old: &[Rs], min_available: i32) -> Option<i32> {
        let available = available_count(&self.refs(Some(new), old));
        if available <= min_available {
            return Some(0);
        }
        let budget = available - min_available;
        let mut total = 0;
        for rs in self.by_creation(old.to_vec()) {
            if total >= budget {
                break;
            }
            let spec = rs_replicas(&self.rss[rs]);
            if spec == 0 {
                continue;
            }
            let count = spec.min(budget - total);
            self.scale_and_record(rs, spec - count);
            total += count;
        }
        Some(total)
    }
}
