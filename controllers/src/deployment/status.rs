//! The Deployment status the ReplicaSets imply (upstream `sync.go`
//! `calculateStatus`, `deployment_util.go` `DeploymentComplete`), when a
//! status needs writing, and the write without progress logic
//! (`syncDeploymentStatus`).

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::{DeploymentCondition, DeploymentStatus};
use kcm_objects::Deployment;
use kcm_objects::ReplicaSet;

use super::conditions::{
    AVAILABLE, MINIMUM_REPLICAS_AVAILABLE, MINIMUM_REPLICAS_UNAVAILABLE, new_condition, set_condition,
};
use super::counts::{actual_count, available_count, ready_count, spec_count, terminating_count};
use super::planner::{Planner, Rs};
use super::{max_unavailable, replicas};

/// The status the ReplicaSets imply (upstream `calculateStatus`), with the
/// Available condition; other conditions are carried over.
///
/// Example (scenario 33): new spec 5 (status 3, 3 available), old spec 8
/// (8/8): replicas 11, updated 3, available 11, unavailable 13 − 11 = 2.
pub(super) fn calculate_status(
    d: &Deployment,
    all: &[&ReplicaSet],
    new_rs: Option<&ReplicaSet>,
    terminating_replicas: bool,
    now: Timestamp,
) -> DeploymentStatus {
    let current = d.status.clone().unwrap_or_default();
    let available = available_count(all);
    let mut status = DeploymentStatus {
        observed_generation: d.metadata.generation,
        replicas: Some(actual_count(all)),
        updated_replicas: Some(new_rs.map_or(0, |rs| actual_count(&[rs]))),
        ready_replicas: Some(ready_count(all)),
        available_replicas: Some(available),
        unavailable_replicas: Some(spec_count(all).saturating_sub(available).max(0)),
        collision_count: current.collision_count,
        terminating_replicas: terminating_replicas.then(|| terminating_count(all)).flatten(),
        conditions: current.conditions.clone(),
    };
    let condition = if available >= replicas(d).saturating_sub(max_unavailable(d)) {
        new_condition(AVAILABLE, "True", MINIMUM_REPLICAS_AVAILABLE, "Deployment has minimum availability.".into(), now)
    } else {
        new_condition(
            AVAILABLE,
            "False",
            MINIMUM_REPLICAS_UNAVAILABLE,
            "Deployment does not have minimum availability.".into(),
            now,
        )
    };
    set_condition(&mut status, condition);
    status
}

/// An `omitempty` count: unset is 0.
pub(super) fn n(v: Option<i32>) -> i32 {
    v.unwrap_or(0)
}

/// Every pod is updated and available and the generation is observed
/// (upstream `DeploymentComplete`).
pub(super) fn deployment_complete(d: &Deployment, status: &DeploymentStatus) -> bool {
    let want = replicas(d);
    n(status.updated_replicas) == want
        && n(status.replicas) == want
        && n(status.available_replicas) == want
        && status.observed_generation.unwrap_or(0) >= d.metadata.generation.unwrap_or(0)
}

/// Deep equality of two statuses as the API stores them: the counts,
/// observedGeneration and condition strings are `omitempty`, so an unset
/// value equals 0 (or ""), and no condition list equals an empty one.
/// Without this a status read back from a real API server never equals the
/// computed one when a count is 0, and every sync would write it again.
pub(super) fn same_status(a: &DeploymentStatus, b: &DeploymentStatus) -> bool {
    normalize(a) == normalize(b)
}

fn normalize(s: &DeploymentStatus) -> DeploymentStatus {
    let count = |v: Option<i32>| v.filter(|&n| n != 0);
    let text = |v: &Option<String>| v.clone().filter(|t| !t.is_empty());
    DeploymentStatus {
        observed_generation: s.observed_generation.filter(|&g| g != 0),
        replicas: count(s.replicas),
        updated_replicas: count(s.updated_replicas),
        ready_replicas: count(s.ready_replicas),
        available_replicas: count(s.available_replicas),
        unavailable_replicas: count(s.unavailable_replicas),
        terminating_replicas: s.terminating_replicas,
        collision_count: s.collision_count,
        conditions: s.conditions.as_ref().filter(|c| !c.is_empty()).map(|c| {
            c.iter()
                .map(|c| DeploymentCondition { reason: text(&c.reason), message: text(&c.message), ..c.clone() })
                .collect()
        }),
    }
}

impl Planner<'_> {
    /// Writes the status the ReplicaSets imply if it changed (upstream
    /// `syncDeploymentStatus`: no progress logic).
    pub(super) fn sync_deployment_status(&mut self, new: Option<Rs>, old: &[Rs]) {
        let all = self.refs(new, old);
        let status =
            calculate_status(&self.d, &all, new.map(|i| &self.rss[i]), self.options.terminating_replicas, self.now);
        if !same_status(&self.d.status.clone().unwrap_or_default(), &status) {
            self.update_status(status);
        }
    }

    /// Upstream `DeploymentComplete(d, &d.Status)`: on the stored status.
    pub(super) fn stored_status_complete(&self) -> bool {
        deployment_complete(&self.d, &self.d.status.clone().unwrap_or_default())
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

    use super::*;
    use crate::deployment::PROGRESSING;
    use crate::deployment::conditions::get_condition;
    use crate::deployment::testing::{DeploymentBuilder, NOW, RsB, rs};
    use crate::testing::ts;

    fn progressing(message: Option<&str>, reason: Option<&str>) -> DeploymentCondition {
        DeploymentCondition {
            type_: Some(PROGRESSING.into()),
            status: Some("True".into()),
            reason: reason.map(Into::into),
            message: message.map(Into::into),
            last_update_time: Some(Time(ts(5))),
            last_transition_time: Some(Time(ts(5))),
        }
    }

    /// A status read back from the API (zeros and empty strings omitted)
    /// equals the computed one: no write at a steady state with zero
    /// counts.
    #[test]
    fn omitted_zeros_are_equal() {
        let computed = DeploymentStatus {
            observed_generation: Some(1),
            replicas: Some(0),
            updated_replicas: Some(0),
            ready_replicas: Some(0),
            available_replicas: Some(0),
            unavailable_replicas: Some(0),
            conditions: Some(vec![progressing(Some(""), Some(""))]),
            ..Default::default()
        };
        let stored = DeploymentStatus {
            observed_generation: Some(1),
            conditions: Some(vec![progressing(None, None)]),
            ..Default::default()
        };
        assert!(same_status(&computed, &stored));
        assert!(!same_status(&computed, &DeploymentStatus { replicas: Some(1), ..stored.clone() }));
        assert!(!same_status(&computed, &DeploymentStatus { collision_count: Some(0), ..stored }));
    }

    /// Scenario 33: status arithmetic.
    #[test]
    fn status_counts() {
        let d = DeploymentBuilder::new(10).build();
        let new = RsB::new("new", 5).image("v2").available(3, 3).build();
        let old = rs("old", 8);
        let s = crate::deployment::status::calculate_status(&d, &[&old, &new], Some(&new), false, ts(NOW));
        let n = |v: Option<i32>| v.unwrap_or(0);
        assert_eq!(
            (
                n(s.replicas),
                n(s.updated_replicas),
                n(s.ready_replicas),
                n(s.available_replicas),
                n(s.unavailable_replicas)
            ),
            (11, 3, 11, 11, 2)
        );
        assert_eq!(s.observed_generation, Some(1));
    }

    /// Scenario 30: Available True iff available ≥ replicas − maxUnavailable.
    #[test]
    fn available_condition_table() {
        let cases = [
            (DeploymentBuilder::new(10), 8, "True"),
            (DeploymentBuilder::new(10), 7, "False"),
            (DeploymentBuilder::new(10).recreate(), 9, "False"),
            (DeploymentBuilder::new(0), 0, "True"),
        ];
        for (d, available, want) in cases {
            let d = d.build();
            let rs =
                RsB::new("new", crate::deployment::replicas(&d)).image("v2").available(available, available).build();
            let status = crate::deployment::status::calculate_status(&d, &[&rs], Some(&rs), false, ts(NOW));
            let got = get_condition(&status, AVAILABLE).unwrap().status.clone();
            assert_eq!(got.as_deref(), Some(want), "{d:?} {available}");
        }
    }

    /// `terminatingReplicas` sums the ReplicaSets' with the gate on, and
    /// is cleared with it off (upstream builds the status afresh).
    #[test]
    fn terminating_replicas_follow_the_gate() {
        let mut d = DeploymentBuilder::new(2).build();
        d.status.get_or_insert_default().terminating_replicas = Some(5);
        let mut rs = RsB::new("new", 2).image("v2").available(2, 2).build();
        rs.status.get_or_insert_default().terminating_replicas = Some(1);
        let on = crate::deployment::status::calculate_status(&d, &[&rs], Some(&rs), true, ts(NOW));
        assert_eq!(on.terminating_replicas, Some(1));
        let off = crate::deployment::status::calculate_status(&d, &[&rs], Some(&rs), false, ts(NOW));
        assert_eq!(off.terminating_replicas, None);
    }
}
