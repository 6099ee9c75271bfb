//! The Recreate strategy (upstream `recreate.go`): scale every old
//! ReplicaSet to 0, wait until none of their pods runs, then create (or
//! scale up) the new one.

use kcm_objects::{Pod, Uid};

use super::Error;
use super::counts::actual_count;
use super::planner::{Planner, Rs};
use super::replicas;
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
        let new_uid = new.map(|i| &self.rss[i].metadata.uid);
        self.pods.iter().any(|p: &&Pod| {
            let owned_by_new = |uid: &Uid| p.metadata.controller().is_some_and(|r| *uid == *r.uid);
            !new_uid.is_some_and(owned_by_new) && !is_pod_terminal(p)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::deployment::Options;
    use crate::deployment::testing::{DeploymentBuilder, NOW, RsB, World, hashed, planner};
    use crate::testing::{PodBuilder, ts};

    /// Upstream `TestOldPodsRunning`: (old ReplicaSets' status replicas,
    /// phases of their pods ("" unset), expected). ReplicaSet `new` has a
    /// Running pod that never counts.
    #[test]
    fn old_pods_running_table() {
        type Case = (&'static str, Vec<i32>, Vec<&'static str>, bool);
        let cases: Vec<Case> = vec![
            ("no old ReplicaSets", vec![], vec![], false),
            ("pods with no phase", vec![0, 0], vec!["", ""], true),
            ("no pods, status replicas 1", vec![1], vec![], true),
            ("no pods, status replicas 0", vec![0], vec![], false),
            ("only terminal pods", vec![0], vec!["Failed", "Succeeded"], false),
            ("unknown phase", vec![0], vec!["Unknown"], true),
            ("pending", vec![0], vec!["Pending"], true),
            ("running", vec![0], vec!["Running"], true),
            ("terminal and pending", vec![0, 0], vec!["Failed", "Succeeded", "Pending"], true),
        ];
        let options = Options::default();
        for (name, olds, phases, want) in cases {
            let mut rss: Vec<_> = olds
                .iter()
                .enumerate()
                .map(|(i, &st)| RsB::new(&format!("old{i}"), 0).image(&format!("i{i}")).available(st, 0).build())
                .collect();
            rss.push(RsB::new("new", 1).image("v2").build());
            let pods: Vec<Pod> = phases
                .iter()
                .enumerate()
                .map(|(i, &phase)| {
                    let pod = PodBuilder::new(&format!("p{i}")).owned_by(&format!("uid-old{}", i % olds.len().max(1)));
                    if phase.is_empty() { pod.build() } else { pod.phase(phase).build() }
                })
                .chain(std::iter::once(PodBuilder::new("fresh").owned_by("uid-new").phase("Running").build()))
                .collect();
            let mut p = planner(DeploymentBuilder::new(1).recreate().build(), rss, &options);
            p.pods = pods.iter().collect();
            let new = p.rss.len() - 1;
            let old: Vec<Rs> = (0..new).collect();
            assert_eq!(p.old_pods_running(Some(new), &old), want, "{name}");
        }
    }

    /// Scenario 19: Recreate scales old to 0 first, no new RS.
    #[test]
    fn recreate_scales_old_down_first() {
        let w = World::new(DeploymentBuilder::new(3).recreate(), [RsB::new("old", 3).revision("1")]);
        assert_eq!(w.writes(), ["update old 0", "event ScalingReplicaSet: Scaled down replica set old from 3 to 0"]);
    }

    /// Scenarios 19–20: Recreate waits while old pods run (terminating,
    /// Unknown, or reported by status); Failed pods do not block.
    #[test]
    fn recreate_waits_for_old_pods() {
        let d = || DeploymentBuilder::new(3).recreate();
        let old = || RsB::new("old", 0).revision("1").available(0, 0);
        let pod = |name: &str| PodBuilder::new(name).owned_by("uid-old");
        let cases = [
            ("running", vec![pod("p").phase("Running")], true),
            ("terminating", vec![pod("p").phase("Running").deleting(ts(NOW - 1))], true),
            ("unknown", vec![pod("p").phase("Unknown")], true),
            ("pending", vec![pod("p").phase("Pending")], true),
            ("failed", vec![pod("p").phase("Failed")], false),
            ("succeeded", vec![pod("p").phase("Succeeded")], false),
            ("none", vec![], false),
        ];
        for (name, pods, waits) in cases {
            let w = World::new(d(), [old()]).pods(pods);
            let creates = w.lines().iter().any(|l| l.starts_with("create"));
            assert_eq!(creates, !waits, "{name}: {:?}", w.lines());
        }
        let w = World::new(d(), [RsB::new("old", 0).revision("1").available(1, 0)]);
        assert!(!w.lines().iter().any(|l| l.starts_with("create")), "status.replicas > 0 blocks");
        let w = World::new(d(), [old()]);
        assert_eq!(
            w.writes()[..2],
            [
                format!("create {} 3", hashed("v2")),
                format!("event ScalingReplicaSet: Scaled up replica set {} from 0 to 3", hashed("v2"))
            ]
        );
    }
}
