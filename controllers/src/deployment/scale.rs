//! Scaling (upstream `sync.go`): one ReplicaSet with its replicas
//! annotations and event (`scaleReplicaSetAndRecordEvent`,
//! `scaleReplicaSet`), the scaling event (`isScalingEvent`), and
//! proportional scaling (`scale` and `GetProportion`): when `spec.replicas`
//! changes mid-rollout (or while paused), the change is spread over the
//! active ReplicaSets in proportion to their size, so the rollout's shape
//! is kept.

use std::cmp::Ordering;

use super::counts::total;
use super::fenceposts::max_replicas;
use super::planner::{Planner, Rs, by_creation, event};
use super::revision::{
    desired_replicas_annotation, max_replicas_annotation, replicas_annotations_need_update, set_replicas_annotations,
};
use super::{Error, SCALING_REPLICA_SET, replicas, strategy_type};
use crate::plan::{Action, EventType};
use crate::replicaset::replicas as rs_replicas;

impl Planner<'_> {
    /// Upstream `scale`.
    ///
    /// Example (scenario 14): replicas 10 → 20 with maxSurge 3; new at 5
    /// and old at 8, both annotated max 13. 23 − 13 = 10 to add, larger
    /// first: old gets round(8 · 23 / 13) − 8 = 6 (14), new gets
    /// round(5 · 23 / 13) − 5 = 4 (9); nothing is left over.
    pub(super) fn scale(&mut self, new: Option<Rs>, old: &[Rs]) {
        let desired = replicas(&self.d);
        if let Some(rs) = self.find_active_or_latest(new, old) {
            if rs_replicas(&self.rss[rs]) != desired {
                self.scale_and_record(rs, desired);
            }
            return;
        }
        if self.is_saturated(new) {
            for rs in self.active(old) {
                self.scale_and_record(rs, 0);
            }
            return;
        }
        if strategy_type(&self.d) != "RollingUpdate" {
            return;
        }
        let mut all = self.active(&old.iter().copied().chain(new).collect::<Vec<_>>());
        let current = total(all.iter().map(|&i| rs_replicas(&self.rss[i])));
        let allowed = if desired > 0 { max_replicas(&self.d) } else { 0 };
        let to_add = allowed.saturating_sub(current);
        let op = match to_add.cmp(&0) {
            Ordering::Greater => {
                // Larger first; among equals the newer.
                all.sort_by(|&a, &b| self.by_size(a, b).then_with(|| by_creation(&self.rss[b], &self.rss[a])));
                "up"
            }
            Ordering::Less => {
                // Larger first; among equals the older.
                all.sort_by(|&a, &b| self.by_size(a, b).then_with(|| by_creation(&self.rss[a], &self.rss[b])));
                "down"
            }
            Ordering::Equal => "",
        };
        let mut added = 0;
        let mut sizes = Vec::with_capacity(all.len());
        for &rs in &all {
            let proportion = if to_add != 0 { self.proportion(rs, to_add, added) } else { 0 };
            sizes.push(rs_replicas(&self.rss[rs]).saturating_add(proportion));
            added += proportion;
        }
        if to_add != 0
            && let Some(first) = sizes.first_mut()
        {
            *first = first.saturating_add(to_add.saturating_sub(added)).max(0);
        }
        for (&rs, size) in all.iter().zip(sizes) {
            self.scale_replica_set(rs, size, op);
        }
    }

    fn by_size(&self, a: Rs, b: Rs) -> Ordering {
        rs_replicas(&self.rss[b]).cmp(&rs_replicas(&self.rss[a]))
    }

    /// The only active ReplicaSet, or the latest one if none is active; `None`
    /// with several active (upstream `FindActiveOrLatest`).
    fn find_active_or_latest(&self, new: Option<Rs>, old: &[Rs]) -> Option<Rs> {
        if new.is_none() && old.is_empty() {
            return None;
        }
        let mut newest_first = self.by_creation(old.to_vec());
        newest_first.reverse();
        let all: Vec<Rs> = newest_first.iter().copied().chain(new).collect();
        match self.active(&all).as_slice() {
            [] => new.or_else(|| newest_first.first().copied()),
            [only] => Some(*only),
            _ => None,
        }
    }

    /// The new ReplicaSet is at `spec.replicas`, sized for it, and fully
    /// available (upstream `IsSaturated`).
    fn is_saturated(&self, new: Option<Rs>) -> bool {
        let Some(rs) = new.map(|i| &self.rss[i]) else { return false };
        let desired = replicas(&self.d);
        rs_replicas(rs) == desired
            && desired_replicas_annotation(rs) == Some(desired)
            && rs.status.as_ref().and_then(|s| s.available_replicas).unwrap_or(0) == desired
    }

    /// How many replicas `rs` gets of `to_add`, `added` being handed out
    /// already (upstream `GetProportion`).
    fn proportion(&self, rs: Rs, to_add: i32, added: i32) -> i32 {
        let spec = rs_replicas(&self.rss[rs]);
        if spec == 0 || to_add == 0 || to_add == added {
            return 0;
        }
        let fraction = self.fraction(rs);
        let allowed = to_add.saturating_sub(added);
        if to_add > 0 { fraction.min(allowed) } else { fraction.max(allowed) }
    }

    /// `round(spec · (replicas + maxSurge) / annotated max) − spec`, half
    /// away from zero (upstream `getReplicaSetFraction`); the annotated max
    /// defaults to the Deployment's `status.replicas`. An annotated max of 0
    /// (upstream divides by zero) gives 0.
    fn fraction(&self, rs: Rs) -> i32 {
        let spec = rs_replicas(&self.rss[rs]);
        let desired = replicas(&self.d);
        if desired == 0 {
            return -spec;
        }
        let target = max_replicas(&self.d);
        let annotated = max_replicas_annotation(&self.rss[rs])
            .unwrap_or_else(|| self.d.status.as_ref().and_then(|s| s.replicas).unwrap_or(0));
        if annotated == 0 {
            return 0;
        }
        let size = f64::from(spec) * f64::from(target) / f64::from(annotated);
        (size.round() as i32).saturating_sub(spec)
    }
}

// === impl Planner: one ReplicaSet ===

impl Planner<'_> {
    /// Scales `rs` to `new_scale` if it differs (upstream
    /// `scaleReplicaSetAndRecordEvent`); returns whether it scaled.
    pub(super) fn scale_and_record(&mut self, rs: Rs, new_scale: i32) -> bool {
        let current = rs_replicas(&self.rss[rs]);
        if current == new_scale {
            return false;
        }
        let op = if current < new_scale { "up" } else { "down" };
        self.scale_replica_set(rs, new_scale, op)
    }

    /// Sets `spec.replicas` and the replicas annotations if either differs
    /// (upstream `scaleReplicaSet`), with a `ScalingReplicaSet` event when
    /// the size changed; returns whether it did.
    pub(super) fn scale_replica_set(&mut self, rs: Rs, new_scale: i32, op: &str) -> bool {
        let desired = replicas(&self.d);
        let max = max_replicas(&self.d);
        let old_scale = rs_replicas(&self.rss[rs]);
        let size_changed = old_scale != new_scale;
        if !size_changed && !replicas_annotations_need_update(&self.rss[rs], desired, max) {
            return false;
        }
        let target = &mut self.rss[rs];
        target.spec.get_or_insert_default().replicas = Some(new_scale);
        set_replicas_annotations(target, desired, max);
        self.plan.push(Action::UpdateReplicaSet { replica_set: Box::new(target.clone()) });
        if size_changed {
            let msg = format!("Scaled {op} replica set {} from {old_scale} to {new_scale}", self.name(rs));
            self.plan.push(Action::Event(event(&self.d, EventType::Normal, SCALING_REPLICA_SET, msg)));
        }
        size_changed
    }

    /// Whether an active ReplicaSet was sized for another `spec.replicas`
    /// (upstream `isScalingEvent`).
    pub(super) fn is_scaling_event(&mut self) -> Result<bool, Error> {
        let (new, old) = self.get_all_replica_sets_and_sync_revision(false)?;
        let all: Vec<Rs> = old.into_iter().chain(new).collect();
        let desired = replicas(&self.d);
        Ok(self.active(&all).iter().any(|&i| desired_replicas_annotation(&self.rss[i]).is_some_and(|v| v != desired)))
    }
}
