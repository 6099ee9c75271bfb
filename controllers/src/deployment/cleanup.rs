//! History cleanup (upstream `sync.go` `cleanupDeployment`): the oldest
//! old ReplicaSets beyond `revisionHistoryLimit` that have scaled to
//! nothing are deleted.

use super::planner::{Planner, Rs, by_creation};
use super::revision;
use crate::plan::Action;
use crate::replicaset::replicas as rs_replicas;

impl Planner<'_> {
    /// Deletes the oldest old ReplicaSets beyond `revisionHistoryLimit`
    /// that have no replicas, no pods and an observed generation (upstream
    /// `cleanupDeployment`).
    ///
    /// Example (scenario 18): five old ReplicaSets at 0 with revisions 1–5
    /// and a limit of 2: revisions 1, 2 and 3 are deleted.
    pub(super) fn cleanup(&mut self, old: &[Rs]) {
        let Some(limit) = self.d.spec.as_ref().and_then(|s| s.revision_history_limit).filter(|&l| l != i32::MAX) else {
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
            match (revision::revision(ra), revision::revision(rb)) {
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
                namespace: rs.metadata.namespace.clone().unwrap_or_default(),
                name: rs.metadata.name.clone().unwrap_or_default(),
                uid: rs.metadata.uid.clone().unwrap_or_default(),
            });
        }
    }
}
