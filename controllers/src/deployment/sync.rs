//! One sync of a Deployment (upstream `syncDeployment`, and `sync.go`
//! `sync` for paused Deployments and scaling events): the dispatcher
//! between the phases, in upstream's order (see the module above).

use kcm_objects::Deployment;

use super::planner::{Planner, event};
use super::progress::paused_condition;
use super::revision::rollback_to;
use super::{Error, Options, SELECTING_ALL, Snapshot, strategy_type};
use crate::common::selector::Selector;
use crate::plan::{Action, EventType, Plan};

/// Plans one sync of the snapshot's Deployment, in upstream's order (see
/// the module above). An error means the Deployment is malformed (its
/// selector or strategy); nothing is planned.
#[doc(alias = "syncDeployment")]
pub fn sync(snapshot: &Snapshot<'_>, options: &Options) -> Result<Plan, Error> {
    let d = snapshot.deployment;
    if d.spec.selector.is_empty() {
        return Ok(selecting_all(d));
    }
    let selector = Selector::of_spec(&d.spec.selector)?;
    let mut planner = Planner::claim(snapshot, &selector, options);

    if d.metadata.deletion_timestamp.is_some() {
        let (new, old) = planner.get_all_replica_sets_and_sync_revision(false)?;
        planner.sync_deployment_status(new, &old);
        return Ok(planner.plan);
    }
    if let Some(status) = paused_condition(&planner.d, planner.now) {
        planner.update_status(status);
    }
    if is_paused(&planner.d) {
        planner.sync_scale()?;
        return Ok(planner.plan);
    }
    if rollback_to(&planner.d).is_some() {
        planner.rollback()?;
        return Ok(planner.plan);
    }
    if planner.is_scaling_event()? {
        planner.sync_scale()?;
        return Ok(planner.plan);
    }
    match strategy_type(&planner.d) {
        "Recreate" => planner.rollout_recreate()?,
        "RollingUpdate" => planner.rollout_rolling()?,
        other => return Err(Error::Strategy(other.to_owned())),
    }
    Ok(planner.plan)
}

/// Warning `SelectingAll`, and observedGeneration if behind.
fn selecting_all(d: &Deployment) -> Plan {
    let mut plan = Plan::new();
    plan.push(Action::Event(event(
        d,
        EventType::Warning,
        SELECTING_ALL,
        "This deployment is selecting all pods. A non-empty selector is required.".into(),
    )));
    let observed = d.status.as_ref().and_then(|s| s.observed_generation).unwrap_or(0);
    if observed < d.metadata.generation.unwrap_or(0) {
        let mut d = d.clone();
        d.status.get_or_insert_default().observed_generation = d.metadata.generation;
        plan.push(Action::UpdateDeploymentStatus { deployment: Box::new(d.full()) });
    }
    plan
}

fn is_paused(d: &Deployment) -> bool {
    d.spec.paused.unwrap_or(false)
}

impl Planner<'_> {
    /// Upstream `sync`: proportional scaling, history cleanup when paused,
    /// the status; never creates a ReplicaSet.
    fn sync_scale(&mut self) -> Result<(), Error> {
        let (new, old) = self.get_all_replica_sets_and_sync_revision(false)?;
        self.scale(new, &old);
        if is_paused(&self.d) && rollback_to(&self.d).is_none() {
            self.cleanup(&old);
        }
        self.sync_deployment_status(new, &old);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::deployment::testing::{DeploymentBuilder, NOW, RsB, World, cond, conditions, hashed, rs};
    use crate::deployment::{PAUSED_DEPLOY_REASON, PROGRESSING, RESUMED_DEPLOY_REASON};
    use crate::testing::{describe_plan, ts};

    /// A steady state writes nothing.
    #[test]
    fn steady_state_is_quiet() {
        let new = hashed("v2");
        let w = World::new(DeploymentBuilder::new(3), [RsB::new(&new, 3).image("v2").revision("1").sized(3, 4)]);
        let plan = w.plan();
        let d2 = w.last_deployment().unwrap();
        let w2 = World { d: Deployment::new(d2), rss: w.rss.clone(), pods: vec![], now: ts(NOW + 5) };
        assert!(w2.plan().is_empty(), "{:?} after {:?}", w2.lines(), describe_plan(&plan));
    }

    /// Counts near `i32::MAX` (valid, if absurd) plan without overflowing,
    /// whatever the path.
    #[test]
    fn huge_counts_do_not_overflow() {
        let max = i32::MAX;
        let worlds = [
            World::new(DeploymentBuilder::new(max), [RsB::new("old", max).revision("1").sized(max, max)]),
            World::new(
                DeploymentBuilder::new(max).paused(),
                [RsB::new("old", max).revision("1"), RsB::new("b", max).image("v2").created(3)],
            ),
            World::new(
                DeploymentBuilder::new(max - 1),
                [RsB::new("old", max).revision("1").sized(max, max), RsB::new("b", max).image("v2").created(3)],
            ),
            World::new(DeploymentBuilder::new(max).recreate(), [RsB::new("old", max).revision("1")]),
        ];
        for w in worlds {
            let _ = w.plan();
        }
    }

    /// Scenario 17: paused with an edited template: scaling applies, no new
    /// RS; Progressing Unknown DeploymentPaused.
    #[test]
    fn paused_scales_without_rolling_out() {
        let w = World::new(DeploymentBuilder::new(12).paused(), [RsB::new("old", 10).revision("1").sized(10, 13)]);
        let lines = w.lines();
        assert!(!lines.iter().any(|l| l.starts_with("create")), "{lines:?}");
        assert!(lines.contains(&"update old 12".to_string()), "{lines:?}");
        let first = w.plan().actions().find_map(|a| match a {
            Action::UpdateDeploymentStatus { deployment } => deployment.status.clone(),
            _ => None,
        });
        assert!(conditions(&first.unwrap()).contains(&cond(PROGRESSING, "Unknown", PAUSED_DEPLOY_REASON)));
    }

    /// Scenario 17 (resume): DeploymentResumed, then the rollout proceeds in
    /// the same sync.
    #[test]
    fn resume_marks_the_condition_then_rolls_out() {
        let w = World::new(
            DeploymentBuilder::new(10).condition(PROGRESSING, "Unknown", PAUSED_DEPLOY_REASON, NOW - 100),
            [RsB::new("old", 10).revision("1").sized(10, 13)],
        );
        let lines = w.lines();
        assert!(lines[0].contains(&format!("{PROGRESSING}={RESUMED_DEPLOY_REASON}")), "{lines:?}");
        assert!(lines.iter().any(|l| l.starts_with("create")), "{lines:?}");
    }

    /// Scenario 18: while paused, history beyond the limit is cleaned.
    #[test]
    fn paused_cleans_history() {
        let mut rss: Vec<RsB> = (1..=5)
            .map(|i| RsB::new(&format!("r{i}"), 0).image(&format!("i{i}")).revision(&i.to_string()).created(i))
            .collect();
        rss.push(RsB::new("cur", 3).image("v2").revision("6").created(10));
        let w = World::new(DeploymentBuilder::new(3).paused().history(2), rss);
        let deletes: Vec<String> = w.lines().into_iter().filter(|l| l.starts_with("delete")).collect();
        assert_eq!(deletes, ["delete r1", "delete r2", "delete r3"]);
    }

    /// Scenario 36: being deleted: status only; empty selector: SelectingAll.
    #[test]
    fn deleting_and_selecting_all() {
        let mut d = DeploymentBuilder::new(10).build();
        d.metadata.deletion_timestamp = Some(ts(NOW - 1));
        let w = World { d, rss: vec![Arc::new(rs("old", 10))], pods: vec![], now: ts(NOW) };
        assert!(w.lines().iter().all(|l| l.starts_with("status")), "{:?}", w.lines());

        let mut d = DeploymentBuilder::new(10).build();
        d.spec.selector = kcm_objects::SelectorSpec::default();
        d.metadata.generation = Some(2);
        let w = World { d, rss: vec![], pods: vec![], now: ts(NOW) };
        assert_eq!(
            w.lines(),
            [
                "event SelectingAll: This deployment is selecting all pods. A non-empty selector is required.",
                "status 0/0/0/0/0"
            ]
        );
    }
}
