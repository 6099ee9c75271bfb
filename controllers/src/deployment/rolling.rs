//! The RollingUpdate strategy (upstream `rolling.go`): scale the new
//! ReplicaSet up within maxSurge, then the old ones down within
//! maxUnavailable, unhealthy old replicas first.

use super::Error;
use super::counts::{available_count, total};
use super::fenceposts::new_rs_new_replicas;
use super::max_unavailable;
use super::planner::{Planner, Rs};
use super::replicas;
use crate::common::replica_set::replicas as rs_replicas;

impl Planner<'_> {
    /// Upstream `rolloutRolling`: at most one of "scale the new ReplicaSet
    /// up" and "scale old ones down" per sync, then the status; history is
    /// cleaned once the stored status shows the rollout complete.
    pub(super) fn rollout_rolling(&mut self) -> Result<(), Error> {
        let (new, old) = self.get_all_replica_sets_and_sync_revision(true)?;
        // With `create`, a new ReplicaSet is always found or planned.
        let Some(new) = new else { return Ok(()) };
        let all: Vec<Rs> = old.iter().copied().chain([new]).collect();
        if self.reconcile_new_replica_set(&all, new)? {
            self.sync_rollout_status(Some(new), &old);
            return Ok(());
        }
        let active_old = self.active(&old);
        if self.reconcile_old_replica_sets(&all, &active_old, new) {
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
    fn reconcile_new_replica_set(&mut self, all: &[Rs], new: Rs) -> Result<bool, Error> {
        let desired = replicas(&self.d);
        let current = rs_replicas(&self.rss[new]);
        if current == desired {
            return Ok(false);
        }
        if current > desired {
            return Ok(self.scale_and_record(new, desired));
        }
        let count = new_rs_new_replicas(&self.d, &self.refs(None, all), &self.rss[new])?;
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
    fn reconcile_old_replica_sets(&mut self, all: &[Rs], active_old: &[Rs], new: Rs) -> bool {
        let old_count = total(active_old.iter().map(|&i| rs_replicas(&self.rss[i])));
        if old_count == 0 {
            return false;
        }
        let all_count = total(all.iter().map(|&i| rs_replicas(&self.rss[i])));
        let min_available = replicas(&self.d) - max_unavailable(&self.d);
        let new_rs = &self.rss[new];
        let new_unavailable =
            rs_replicas(new_rs) - new_rs.status.as_ref().and_then(|s| s.available_replicas).unwrap_or(0);
        let max_scaled_down = all_count.saturating_sub(min_available).saturating_sub(new_unavailable);
        if max_scaled_down <= 0 {
            return false;
        }
        let Some(cleaned) = self.cleanup_unhealthy_replicas(active_old, max_scaled_down) else { return false };
        // Upstream goes on with the active old ReplicaSets and the new one.
        let all: Vec<Rs> = active_old.iter().copied().chain([new]).collect();
        let scaled = self.scale_down_old_replica_sets(&all, active_old);
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
    /// pods of `all` above `replicas − maxUnavailable` (by the ReplicaSets'
    /// status before this sync) go, from the oldest ReplicaSets first.
    fn scale_down_old_replica_sets(&mut self, all: &[Rs], old: &[Rs]) -> i32 {
        let min_available = replicas(&self.d) - max_unavailable(&self.d);
        let available = available_count(&self.refs(None, all));
        if available <= min_available {
            return 0;
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
        total
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

    use super::*;
    use crate::common::template_hash::POD_TEMPLATE_HASH_LABEL;
    use crate::deployment::testing::{
        D_UID, DeploymentBuilder, RsB, World, cond, conditions, created, hashed, planner,
    };
    use crate::deployment::{
        AVAILABLE, DESIRED_REPLICAS_ANNOTATION, MAX_REPLICAS_ANNOTATION, MINIMUM_REPLICAS_AVAILABLE, NEW_RS_REASON,
        Options, PROGRESSING, REVISION_ANNOTATION,
    };
    use crate::plan::Action;

    /// The sizes the plan sets, by ReplicaSet name, in order.
    fn updates(p: &Planner<'_>) -> Vec<(String, i32)> {
        p.plan
            .actions()
            .filter_map(|a| match a {
                Action::UpdateReplicaSet { replica_set } => Some((
                    replica_set.metadata.name.clone().unwrap_or_default(),
                    replica_set.spec.replicas.unwrap_or(0),
                )),
                _ => None,
            })
            .collect()
    }

    /// Upstream `TestDeploymentController_reconcileNewReplicaSet`
    /// (maxUnavailable 0): (replicas, maxSurge, old, new, expected new size
    /// if scaled).
    #[test]
    fn reconcile_new_replica_set_table() {
        let cases = [
            (10, 0, 10, 0, None),
            (10, 2, 10, 0, Some(2)),
            (10, 2, 5, 0, Some(7)),
            (10, 2, 10, 2, None),
            (10, 2, 2, 11, Some(10)),
        ];
        let options = Options::default();
        for (replicas, surge, old, new, want) in cases {
            let d = DeploymentBuilder::new(replicas).fenceposts(IntOrString::Int(surge), IntOrString::Int(0)).build();
            let rss = vec![RsB::new("new", new).image("v2").build(), RsB::new("old", old).build()];
            let mut p = planner(d, rss, &options);
            let scaled = p.reconcile_new_replica_set(&[0, 1], 0).unwrap();
            assert_eq!(scaled, want.is_some(), "{replicas} {surge} {old} {new}");
            assert_eq!(updates(&p), want.map(|n| ("new".to_string(), n)).into_iter().collect::<Vec<_>>());
        }
    }

    /// Upstream `TestDeploymentController_reconcileOldReplicaSets` (maxSurge
    /// 0): (replicas, maxUnavailable, old, new, old available, new
    /// available, expected old size if scaled).
    #[test]
    fn reconcile_old_replica_sets_table() {
        let cases = [
            (10, 0, 10, 0, 10, 0, Some(9)),
            (10, 2, 10, 0, 10, 0, Some(8)),
            // Unhealthy old replicas are cleaned up.
            (10, 2, 10, 0, 8, 0, Some(8)),
            // One unhealthy cleaned up, then one ready scaled down.
            (10, 2, 10, 0, 9, 0, Some(8)),
            // The new ReplicaSet's unavailable pods block further scale-down.
            (10, 2, 8, 2, 8, 0, None),
        ];
        let options = Options::default();
        for (replicas, unavailable, old, new, old_ready, new_ready, want) in cases {
            let d =
                DeploymentBuilder::new(replicas).fenceposts(IntOrString::Int(0), IntOrString::Int(unavailable)).build();
            let rss = vec![
                RsB::new("old", old).available(old, old_ready).build(),
                RsB::new("new", new).image("v2").available(new, new_ready).build(),
            ];
            let mut p = planner(d, rss, &options);
            let active = p.active(&[0]);
            let scaled = p.reconcile_old_replica_sets(&[0, 1], &active, 1);
            assert_eq!(scaled, want.is_some(), "{:?}", (replicas, unavailable, old, new, old_ready, new_ready));
            if let Some(size) = want {
                assert_eq!(updates(&p).last(), Some(&("old".to_string(), size)));
            }
        }
    }

    /// Upstream `TestDeploymentController_cleanupUnhealthyReplicas`: old 10
    /// with (available, max cleanup, expected cleaned).
    #[test]
    fn cleanup_unhealthy_replicas_table() {
        let options = Options::default();
        for (available, max, want) in [(8, 1, 1), (8, 3, 2), (8, 0, 0), (10, 3, 0)] {
            let d = DeploymentBuilder::new(10).fenceposts(IntOrString::Int(2), IntOrString::Int(2)).build();
            let mut p = planner(d, vec![RsB::new("old", 10).available(10, available).build()], &options);
            assert_eq!(p.cleanup_unhealthy_replicas(&[0], max), Some(want), "{available} {max}");
        }
    }

    /// Upstream `TestDeploymentController_scaleDownOldReplicaSetsForRollingUpdate`
    /// (maxSurge 0): (replicas, maxUnavailable, available, old, expected
    /// old size if scaled).
    #[test]
    fn scale_down_old_replica_sets_table() {
        let cases = [
            (10, 0, 10, 10, Some(9)),
            (10, 2, 10, 10, Some(8)),
            (10, 2, 8, 10, None),
            (10, 2, 10, 0, None),
            (10, 2, 1, 10, None),
        ];
        let options = Options::default();
        for (replicas, unavailable, available, old, want) in cases {
            let d =
                DeploymentBuilder::new(replicas).fenceposts(IntOrString::Int(0), IntOrString::Int(unavailable)).build();
            let mut p = planner(d, vec![RsB::new("old", old).available(old, available).build()], &options);
            let scaled = p.scale_down_old_replica_sets(&[0], &[0]);
            assert_eq!(scaled > 0, want.is_some(), "{:?}", (replicas, unavailable, available, old));
            assert_eq!(updates(&p), want.map(|n| ("old".to_string(), n)).into_iter().collect::<Vec<_>>());
        }
    }

    /// Scenario 3: the rollout starts: new RS at 3 (surge), old 10 → 8.
    #[test]
    fn rollout_start_creates_within_surge_and_scales_old_within_availability() {
        let w = World::new(DeploymentBuilder::new(10), [RsB::new("old", 10).revision("1").sized(10, 13)]);
        let new = hashed("v2");
        assert_eq!(
            w.writes(),
            [
                format!("create {new} 3"),
                format!("event ScalingReplicaSet: Scaled up replica set {new} from 0 to 3"),
                "update old 8".into(),
                "event ScalingReplicaSet: Scaled down replica set old from 10 to 8".into(),
            ]
        );
        let plan = w.plan();
        let rs = created(&plan);
        let a = rs.metadata.annotations.clone().unwrap();
        assert_eq!(a[REVISION_ANNOTATION], "2");
        assert_eq!(a[DESIRED_REPLICAS_ANNOTATION], "10");
        assert_eq!(a[MAX_REPLICAS_ANNOTATION], "13");
        let hash = new.trim_start_matches("d-");
        assert_eq!(rs.metadata.labels.as_ref().unwrap()[POD_TEMPLATE_HASH_LABEL], hash);
        let spec = rs.spec;
        assert_eq!(spec.selector.match_labels.as_ref().unwrap()[POD_TEMPLATE_HASH_LABEL], hash);
        assert_eq!(
            spec.template.as_ref().unwrap().metadata.as_ref().unwrap().labels.as_ref().unwrap()
                [POD_TEMPLATE_HASH_LABEL],
            hash
        );
        assert_eq!(rs.metadata.owner_references.as_ref().unwrap()[0].uid, D_UID);
        let d = w.last_deployment().unwrap();
        assert_eq!(d.metadata.annotations.unwrap()[REVISION_ANNOTATION], "2");
        let first_status = plan.actions().find_map(|a| match a {
            Action::UpdateDeploymentStatus { deployment } => deployment.status.clone(),
            _ => None,
        });
        assert!(conditions(&first_status.unwrap()).contains(&cond(PROGRESSING, "True", NEW_RS_REASON)));
    }

    /// Scenario 4: continuing: new 3 → 5 once its pods are available; then
    /// old 8 → 5.
    #[test]
    fn rollout_continues_in_two_syncs() {
        let new = hashed("v2");
        let w = World::new(
            DeploymentBuilder::new(10),
            [
                RsB::new("old", 8).revision("1").sized(10, 13),
                RsB::new(&new, 3).image("v2").revision("2").sized(10, 13).created(10),
            ],
        );
        assert_eq!(
            w.writes()[..2],
            [format!("update {new} 5"), format!("event ScalingReplicaSet: Scaled up replica set {new} from 3 to 5")]
        );
        let w = World::new(
            DeploymentBuilder::new(10),
            [
                RsB::new("old", 8).revision("1").sized(10, 13),
                RsB::new(&new, 5).image("v2").revision("2").sized(10, 13).created(10).available(3, 3),
            ],
        );
        assert_eq!(
            w.writes()[..2],
            ["update old 5", "event ScalingReplicaSet: Scaled down replica set old from 8 to 5"]
        );
    }

    /// Scenario 5: new pods never become Ready: the state settles at new 5,
    /// old 8, and nothing more is scaled.
    #[test]
    fn stuck_rollout_settles() {
        let new = hashed("v2");
        let w = World::new(
            DeploymentBuilder::new(10),
            [
                RsB::new("old", 8).revision("1").sized(10, 13),
                RsB::new(&new, 5).image("v2").revision("2").sized(10, 13).created(10).available(5, 0),
            ],
        );
        assert!(w.writes().iter().all(|l| !l.starts_with("update") && !l.starts_with("create")), "{:?}", w.writes());
        let status = w.last_status().unwrap();
        assert!(conditions(&status).contains(&cond(AVAILABLE, "True", MINIMUM_REPLICAS_AVAILABLE)));
    }

    /// Scenario 6 (upstream `TestReconcileOldReplicaSets` shape): unhealthy old
    /// replicas go first; 13 − 8 − 3 = 2.
    #[test]
    fn unhealthy_old_replicas_are_cleaned_first() {
        let new = hashed("v2");
        let w = World::new(
            DeploymentBuilder::new(10).surge(3),
            [
                RsB::new("old", 10).revision("1").sized(10, 13).available(10, 6),
                RsB::new(&new, 3).image("v2").revision("2").sized(10, 13).created(10).available(3, 0),
            ],
        );
        assert_eq!(w.writes(), ["update old 8", "event ScalingReplicaSet: Scaled down replica set old from 10 to 8"]);
    }

    /// Scenario 7/8: both fenceposts resolve to 0 surge: the new RS is created
    /// at 0 (no event) and the old one goes 1 → 0 in the same sync.
    #[test]
    fn zero_surge_creates_empty_then_scales_old() {
        let w = World::new(
            DeploymentBuilder::new(1).fenceposts(IntOrString::Int(0), IntOrString::String("10%".into())),
            [RsB::new("old", 1).revision("1").sized(1, 1)],
        );
        let new = hashed("v2");
        assert_eq!(
            w.writes(),
            [
                format!("create {new} 0"),
                "update old 0".into(),
                "event ScalingReplicaSet: Scaled down replica set old from 1 to 0".into()
            ]
        );
    }

    /// Scenario 7, next sync: with the old ReplicaSet at 0, the new one goes
    /// 0 → 1.
    #[test]
    fn zero_surge_second_sync_scales_new_up() {
        let new = hashed("v2");
        let w = World::new(
            DeploymentBuilder::new(1).fenceposts(IntOrString::Int(0), IntOrString::String("10%".into())),
            [
                RsB::new("old", 0).revision("1").sized(1, 1),
                RsB::new(&new, 0).image("v2").revision("2").sized(1, 1).created(5),
            ],
        );
        assert_eq!(
            w.writes(),
            [format!("update {new} 1"), format!("event ScalingReplicaSet: Scaled up replica set {new} from 0 to 1")]
        );
    }

    /// The new ReplicaSet above replicas is scaled down to them.
    #[test]
    fn new_replica_set_above_replicas_is_scaled_down() {
        let new = hashed("v2");
        let w = World::new(DeploymentBuilder::new(3), [RsB::new(&new, 5).image("v2").revision("1").sized(3, 4)]);
        assert_eq!(
            w.writes()[..2],
            [format!("update {new} 3"), format!("event ScalingReplicaSet: Scaled down replica set {new} from 5 to 3")]
        );
    }
}
