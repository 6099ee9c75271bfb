//! One sync of a Deployment (upstream `syncDeployment`, and `sync.go`
//! `sync` for paused Deployments and scaling events): the dispatcher
//! between the phases, in upstream's order (see the module above).

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

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
    let selector_spec = d.spec.as_ref().map(|s| &s.selector);
    if selector_spec.is_none_or(is_empty_selector) {
        return Ok(selecting_all(d));
    }
    let selector = Selector::new(selector_spec)?;
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

/// A selector with no requirements (upstream compares with an empty
/// `LabelSelector`).
fn is_empty_selector(s: &LabelSelector) -> bool {
    s.match_labels.as_ref().is_none_or(|m| m.is_empty()) && s.match_expressions.as_ref().is_none_or(|m| m.is_empty())
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
        plan.push(Action::UpdateDeploymentStatus { deployment: Box::new(d) });
    }
    plan
}

fn is_paused(d: &Deployment) -> bool {
    d.spec.as_ref().and_then(|s| s.paused).unwrap_or(false)
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
