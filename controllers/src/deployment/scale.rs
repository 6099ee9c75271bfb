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
use crate::common::replica_set::replicas as rs_replicas;
use crate::plan::{Action, EventType};

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
            && desired_replicas_annotation(&rs.metadata) == Some(desired)
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
        let annotated = max_replicas_annotation(&self.rss[rs].metadata)
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
        if !size_changed && !replicas_annotations_need_update(&self.rss[rs].metadata, desired, max) {
            return false;
        }
        let target = &mut self.rss[rs];
        target.spec.replicas = Some(new_scale);
        set_replicas_annotations(&mut target.metadata, desired, max);
        self.plan.push(Action::UpdateReplicaSet { replica_set: Box::new(target.full()) });
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
        Ok(self
            .active(&all)
            .iter()
            .any(|&i| desired_replicas_annotation(&self.rss[i].metadata).is_some_and(|v| v != desired)))
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

    use super::*;
    use crate::deployment::testing::{DeploymentBuilder, RsB, World, hashed};
    use crate::deployment::{DESIRED_REPLICAS_ANNOTATION, MAX_REPLICAS_ANNOTATION};
    use crate::testing::describe_plan;

    /// Scenario 9: a scaling event beats the rollout: no new RS, v2 → 10,
    /// v1 → 4 (surge 0).
    #[test]
    fn scaling_beats_rollout() {
        let w = World::new(
            DeploymentBuilder::new(14).image("v3").fenceposts(IntOrString::Int(0), IntOrString::Int(1)),
            [
                RsB::new("v1", 3).revision("1").sized(10, 10),
                RsB::new("v2", 7).image("v2").revision("2").sized(10, 10).created(10),
            ],
        );
        assert_eq!(
            w.writes(),
            [
                "update v2 10",
                "event ScalingReplicaSet: Scaled up replica set v2 from 7 to 10",
                "update v1 4",
                "event ScalingReplicaSet: Scaled up replica set v1 from 3 to 4",
            ]
        );
    }

    /// Scenarios 10–14: proportional scaling, upstream `TestScale` numbers.
    #[test]
    fn proportional_scaling_table() {
        // (name, replicas, surge, new (name,size,max), olds oldest-first, want sizes new-then-olds)
        type Case = (&'static str, i32, i32, (i32, i32), Vec<(i32, i32)>, Vec<i32>);
        let cases: Vec<Case> = vec![
            ("5 → 10", 10, 0, (2, 5), vec![(3, 5)], vec![4, 6]),
            ("5 → 3", 3, 0, (2, 5), vec![(3, 5)], vec![1, 2]),
            ("9 → 4", 4, 0, (8, 9), vec![(1, 9)], vec![4, 0]),
            ("7 → 10", 10, 0, (2, 7), vec![(2, 7), (3, 7)], vec![3, 3, 4]),
            ("13 → 8", 8, 0, (2, 13), vec![(3, 13), (8, 13)], vec![1, 2, 5]),
            ("leftover up", 4, 0, (1, 3), vec![(1, 3), (1, 3)], vec![2, 1, 1]),
            ("leftover down", 2, 0, (1, 3), vec![(1, 3), (1, 3)], vec![1, 0, 1]),
            ("10 → 20, surge 2", 20, 2, (6, 12), vec![(6, 12)], vec![11, 11]),
            ("10 (surge 3) → 50 (surge 6)", 50, 6, (5, 13), vec![(8, 13)], vec![22, 34]),
            ("mid-rollout → 20", 20, 3, (5, 13), vec![(8, 13)], vec![9, 14]),
            ("mid-rollout → 5", 5, 3, (5, 13), vec![(8, 13)], vec![3, 5]),
            ("→ 0", 0, 3, (5, 13), vec![(8, 13)], vec![0, 0]),
        ];
        for (name, replicas, surge, (new_size, new_max), olds, want) in cases {
            let mut rss = Vec::new();
            for (i, (size, max)) in olds.iter().enumerate() {
                rss.push(
                    RsB::new(&format!("old{i}"), *size)
                        .image(&format!("o{i}"))
                        .revision(&(i + 1).to_string())
                        .sized(*max - surge.min(*max), *max)
                        .created(i64::try_from(i).unwrap()),
                );
            }
            rss.push(RsB::new("new", new_size).image("v2").revision("9").sized(0, new_max).created(100));
            let w = World::new(DeploymentBuilder::new(replicas).surge(surge).paused(), rss);
            let plan = w.plan();
            let size = |n: &str| {
                plan.actions()
                    .filter_map(|a| match a {
                        Action::UpdateReplicaSet { replica_set } if replica_set.metadata.name.as_deref() == Some(n) => {
                            replica_set.spec.replicas
                        }
                        _ => None,
                    })
                    .last()
            };
            let mut got = vec![size("new").unwrap_or(new_size)];
            for (i, (s, _)) in olds.iter().enumerate() {
                got.push(size(&format!("old{i}")).unwrap_or(*s));
            }
            assert_eq!(got, want, "{name}: {:?}", describe_plan(&plan));
        }
    }

    /// Scenario 13: proportional scaling refreshes the annotations.
    #[test]
    fn proportional_scaling_writes_annotations() {
        let w = World::new(
            DeploymentBuilder::new(20).surge(2).paused(),
            [
                RsB::new("old", 6).revision("1").sized(10, 12),
                RsB::new("new", 6).image("v2").revision("2").sized(10, 12).created(5),
            ],
        );
        let plan = w.plan();
        let sized: Vec<(String, i32, String, String)> = plan
            .actions()
            .filter_map(|a| match a {
                Action::UpdateReplicaSet { replica_set } => {
                    let an = replica_set.metadata.annotations.as_ref().unwrap();
                    Some((
                        replica_set.metadata.name.clone().unwrap(),
                        replica_set.spec.replicas.unwrap(),
                        an[DESIRED_REPLICAS_ANNOTATION].clone(),
                        an[MAX_REPLICAS_ANNOTATION].clone(),
                    ))
                }
                _ => None,
            })
            .collect();
        let row = |name: &str| (name.to_string(), 11, "20".to_string(), "22".to_string());
        assert_eq!(sized, [row("new"), row("old")]);
    }

    /// Scenario 15: from zero, the new RS (the latest) takes everything.
    #[test]
    fn scale_from_zero_scales_the_latest() {
        let new = hashed("v2");
        let w = World::new(
            DeploymentBuilder::new(6).paused(),
            [
                RsB::new("a", 0).image("a").revision("1").created(1),
                RsB::new("b", 0).image("b").revision("2").created(2),
                RsB::new(&new, 0).image("v2").revision("3").created(3),
            ],
        );
        assert_eq!(
            w.writes(),
            [format!("update {new} 6"), format!("event ScalingReplicaSet: Scaled up replica set {new} from 0 to 6")]
        );
    }

    /// Scenario 16: a saturated new RS scales the old ones to 0; broken
    /// saturation (nothing available) does nothing.
    #[test]
    fn saturated_new_replica_set_drops_old_ones() {
        let new = hashed("v2");
        let w = World::new(
            DeploymentBuilder::new(10).paused(),
            [
                RsB::new("old", 2).revision("1").sized(10, 13),
                RsB::new(&new, 10).image("v2").revision("2").sized(10, 13).created(5),
            ],
        );
        assert_eq!(w.writes(), ["update old 0", "event ScalingReplicaSet: Scaled down replica set old from 2 to 0"]);
        // Upstream "saturated but broken new replica set does not affect old
        // pods": replicas 2, surge 1, unavailable 1; new at 2 with none
        // available, old at 1: not saturated, and 3 = 2 + 1 leaves nothing to
        // add.
        let w = World::new(
            DeploymentBuilder::new(2).fenceposts(IntOrString::Int(1), IntOrString::Int(1)).paused(),
            [
                RsB::new("old", 1).revision("1").sized(2, 3),
                RsB::new(&new, 2).image("v2").revision("2").sized(2, 3).created(5).available(2, 0),
            ],
        );
        assert!(w.writes().iter().all(|l| !l.starts_with("update")), "{:?}", w.writes());
    }
}
