//! History cleanup (upstream `sync.go` `cleanupDeployment`): the oldest
//! old ReplicaSets beyond `revisionHistoryLimit` that have scaled to
//! nothing are deleted.

use super::planner::{Planner, Rs, by_creation};
use super::revision;
use crate::common::replica_set::replicas as rs_replicas;
use crate::plan::Action;

impl Planner<'_> {
    /// Deletes the oldest old ReplicaSets beyond `revisionHistoryLimit`
    /// that have no replicas, no pods and an observed generation (upstream
    /// `cleanupDeployment`).
    ///
    /// Example (scenario 18): five old ReplicaSets at 0 with revisions 1–5
    /// and a limit of 2: revisions 1, 2 and 3 are deleted.
    pub(super) fn cleanup(&mut self, old: &[Rs]) {
        let Some(limit) = self.d.spec.revision_history_limit.filter(|&l| l != i32::MAX) else {
            return;
        };
        let mut alive: Vec<Rs> =
            old.iter().copied().filter(|&i| self.rss[i].metadata.deletion_timestamp.is_none()).collect();
        let diff = i64::try_from(alive.len()).unwrap_or(i64::MAX) - i64::from(limit);
        if diff <= 0 {
            return;
        }
        alive.sort_by(|&a, &b| {
            let (ra, rb) = (&self.rss[a], &self.rss[b]);
            match (revision::revision(&ra.metadata), revision::revision(&rb.metadata)) {
                (Ok(x), Ok(y)) if x != y => x.cmp(&y),
                _ => by_creation(ra, rb),
            }
        });
        for &i in alive.iter().take(usize::try_from(diff).unwrap_or(0)) {
            let rs = &self.rss[i];
            let status = rs.status.clone().unwrap_or_default();
            if status.replicas != 0
                || rs_replicas(rs) != 0
                || rs.metadata.generation.unwrap_or(0) > status.observed_generation.unwrap_or(0)
                || rs.metadata.deletion_timestamp.is_some()
            {
                continue;
            }
            self.plan.push(Action::DeleteReplicaSet {
                namespace: rs.metadata.namespace.to_string(),
                name: rs.metadata.name.to_string(),
                uid: rs.metadata.uid.to_string(),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::apps::v1::DeploymentStatus;

    use super::*;
    use crate::deployment::Options;
    use crate::deployment::testing::{DeploymentBuilder, RsB, World, hashed, planner, rs};
    use crate::testing::describe_plan;

    /// Scenario 23: limit 0, rollout complete: old RSes at 0 with no pods and
    /// an observed generation are deleted; one still reporting a pod is kept.
    #[test]
    fn history_limit_zero_deletes_finished_old_replica_sets() {
        let new = hashed("v2");
        let complete = DeploymentStatus {
            observed_generation: Some(1),
            replicas: Some(2),
            updated_replicas: Some(2),
            available_replicas: Some(2),
            ready_replicas: Some(2),
            ..Default::default()
        };
        let w = World::new(
            DeploymentBuilder::new(2).history(0).status(complete),
            [
                RsB::new("gone", 0).revision("1"),
                RsB::new("lingering", 0).image("x").revision("2").available(1, 0),
                RsB::new("unobserved", 0).image("y").revision("3").generation(2),
                RsB::new(&new, 2).image("v2").revision("4").sized(2, 3).created(5),
            ],
        );
        let deletes: Vec<String> = w.lines().into_iter().filter(|l| l.starts_with("delete")).collect();
        assert_eq!(deletes, ["delete gone"]);
    }

    /// (old ReplicaSets as (spec, status replicas), limit, deletions).
    #[test]
    fn cleanup_deployment_table() {
        type Case = (&'static str, Vec<(i32, i32)>, i32, usize);
        let cases: Vec<Case> = vec![
            ("three empty, limit 1", vec![(0, 0), (0, 0), (0, 0)], 1, 2),
            ("only spec = status = 0 goes", vec![(0, 0), (0, 1), (1, 0), (1, 1)], 0, 1),
            ("two empty, limit 0", vec![(0, 0), (0, 0)], 0, 2),
            ("two busy, limit 0", vec![(1, 1), (1, 1)], 0, 0),
            ("none", vec![], 0, 0),
        ];
        let options = Options::default();
        for (name, olds, limit, want) in cases {
            let rss = olds
                .iter()
                .enumerate()
                .map(|(i, &(spec, st))| {
                    RsB::new(&format!("foo-{i}"), spec)
                        .image(&format!("i{i}"))
                        .revision(&i.to_string())
                        .available(st, st)
                        .build()
                })
                .collect();
            let mut p = planner(DeploymentBuilder::new(1).history(limit).build(), rss, &options);
            let old: Vec<usize> = (0..olds.len()).collect();
            p.cleanup(&old);
            let deletes = p.plan.actions().filter(|a| matches!(a, Action::DeleteReplicaSet { .. })).count();
            assert_eq!(deletes, want, "{name}");
        }
        // Being deleted, or with an unobserved generation: kept.
        let rss = vec![
            RsB::new("deleting", 0).deleting().build(),
            RsB::new("unobserved", 0).image("x").generation(2).build(),
        ];
        let mut p = planner(DeploymentBuilder::new(1).history(0).build(), rss, &options);
        p.cleanup(&[0, 1]);
        assert!(p.plan.is_empty(), "{:?}", describe_plan(&p.plan));
        // No limit (unset or MaxInt32): nothing is cleaned.
        let mut d = DeploymentBuilder::new(1).build();
        d.spec.revision_history_limit = None;
        let mut p = planner(d, vec![rs("a", 0)], &options);
        p.cleanup(&[0]);
        assert!(p.plan.is_empty());
    }
}
