//! One sync of a Deployment (upstream `syncDeployment` and `sync.go`): the
//! dispatcher, and the ReplicaSet bookkeeping every path shares: claiming
//! ReplicaSets, finding or creating the new one and syncing revisions,
//! scaling one ReplicaSet, history cleanup, the status.
//!
//! The [`Planner`] holds its own copies of the Deployment and of the
//! claimed ReplicaSets; every intended write updates those copies as it is
//! appended to the plan, so later decisions of the same sync see it.

use std::cmp::Ordering;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::{Deployment, DeploymentStatus, ReplicaSet, ReplicaSetSpec};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta, Time};

use super::conditions::{PROGRESSING, RS_CREATE_ERROR_REASON, get_condition, new_condition, set_condition};
use super::progress::{paused_condition, rollout_status};
use super::revision::{
    self, REVISION_ANNOTATION, max_revision, rollback_to, set_deployment_revision, set_new_replica_set_annotations,
};
use super::status::{calculate_status, deployment_complete, same_status};
use super::{
    Error, FOUND_NEW_RS_REASON, NEW_RS_REASON, Options, POD_TEMPLATE_HASH_LABEL, SCALING_REPLICA_SET, SELECTING_ALL,
    Snapshot, compute_hash, equal_ignore_hash, fenceposts, max_surge, object_ref, progress_deadline, replicas,
    strategy_type,
};
use crate::common::controller_ref::{claim_all, controller_of, new_controller_ref};
use crate::common::selector::Selector;
use crate::plan::{Action, Event, EventType, OwnerRefPatch, Plan};
use crate::replicaset::replicas as rs_replicas;

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

/// Why creating the new ReplicaSet failed, as the executor tells it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CreateFailure {
    /// The name is taken by a ReplicaSet that is not this Deployment's new
    /// one: the hash collided.
    Collision,
    /// Another error.
    Error {
        /// The ReplicaSet's name.
        replica_set: String,
        /// The error's message.
        message: String,
    },
}

impl std::fmt::Display for CreateFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CreateFailure::Collision => f.write_str("hash collision: the new replica set's name is taken"),
            CreateFailure::Error { replica_set, message } => {
                write!(f, "failed to create new replica set {replica_set:?}: {message}")
            }
        }
    }
}

/// What to write after the new ReplicaSet could not be created (upstream
/// `getNewReplicaSet`'s error paths): on a collision, `collisionCount` + 1 so
/// the next sync hashes differently; otherwise (with a progress deadline)
/// Progressing False `ReplicaSetCreateError`, and a Warning event. The
/// driver then retries the key with rate limiting.
pub fn after_create_failure(d: &Deployment, failure: &CreateFailure, now: Timestamp) -> Plan {
    let mut plan = Plan::new();
    let mut d = d.clone();
    let status = d.status.get_or_insert_default();
    match failure {
        CreateFailure::Collision => {
            status.collision_count = Some(status.collision_count.map_or(1, |c| c.saturating_add(1)));
            plan.push(Action::UpdateDeploymentStatus { deployment: Box::new(d) });
        }
        CreateFailure::Error { replica_set, message } => {
            let msg = format!("Failed to create new replica set \"{replica_set}\": {message}");
            if progress_deadline(&d).is_some() {
                let condition = new_condition(PROGRESSING, "False", RS_CREATE_ERROR_REASON, msg.clone(), now);
                set_condition(d.status.get_or_insert_default(), condition);
                plan.push(Action::UpdateDeploymentStatus { deployment: Box::new(d.clone()) });
            }
            plan.push(Action::Event(event(&d, EventType::Warning, RS_CREATE_ERROR_REASON, msg)));
        }
    }
    plan
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

/// An event about `d`.
pub(super) fn event(d: &Deployment, type_: EventType, reason: &str, message: String) -> Event {
    Event { regarding: object_ref(d), type_, reason: reason.to_owned(), message }
}

/// Upstream's `ReplicaSetsByCreationTimestamp`: older first, then by name.
pub(super) fn by_creation(a: &ReplicaSet, b: &ReplicaSet) -> Ordering {
    let t = |rs: &ReplicaSet| rs.metadata.creation_timestamp.as_ref().map(|t| t.0);
    t(a).cmp(&t(b)).then_with(|| a.metadata.name.cmp(&b.metadata.name))
}

/// The state of one sync: local copies and the plan so far.
pub(super) struct Planner<'a> {
    /// The Deployment as the plan so far leaves it.
    pub(super) d: Deployment,
    /// The claimed ReplicaSets as the plan so far leaves them (a created one
    /// is appended).
    pub(super) rss: Vec<ReplicaSet>,
    /// Pods controlled by a claimed ReplicaSet and matching the selector,
    /// inactive ones included (upstream `getPodMapForDeployment`).
    pub(super) pods: Vec<&'a Pod>,
    pub(super) now: Timestamp,
    pub(super) options: &'a Options,
    pub(super) plan: Plan,
}

/// Which claimed ReplicaSet: an index into [`Planner::rss`].
pub(super) type Rs = usize;

// === impl Planner: claims and lookups ===

impl<'a> Planner<'a> {
    /// Claims the namespace's ReplicaSets (upstream
    /// `getReplicaSetsForDeployment`): releases first, then the live
    /// re-check of the Deployment, then the adoptions.
    fn claim(snapshot: &Snapshot<'a>, selector: &Selector, options: &'a Options) -> Self {
        let d = snapshot.deployment;
        let candidates =
            snapshot.replica_sets.iter().map(|rs| &**rs).filter(|rs| rs.metadata.namespace == d.metadata.namespace);
        let claims = claim_all(&d.metadata, selector, candidates);
        let owner = object_ref(d);
        let mut plan = Plan::new();
        let patch = |rs: &ReplicaSet, patch: OwnerRefPatch| Action::PatchReplicaSetOwnerRefs {
            namespace: rs.metadata.namespace.clone().unwrap_or_default(),
            name: rs.metadata.name.clone().unwrap_or_default(),
            uid: rs.metadata.uid.clone().unwrap_or_default(),
            patch,
        };
        plan.push_concurrent(
            claims
                .release
                .iter()
                .map(|rs| patch(rs, OwnerRefPatch::Release { owner_uid: owner.uid.clone() }))
                .collect(),
        );
        let cref = new_controller_ref(&d.metadata, "apps/v1", "Deployment");
        if !claims.adopt.is_empty() {
            plan.push(Action::RecheckOwner { owner });
            plan.push_concurrent(claims.adopt.iter().map(|rs| patch(rs, OwnerRefPatch::Adopt(cref.clone()))).collect());
        }
        let rss: Vec<ReplicaSet> = claims
            .claimed
            .iter()
            .map(|rs| {
                let mut rs = (*rs).clone();
                if controller_of(&rs.metadata).is_none() {
                    rs.metadata.owner_references.get_or_insert_default().push(cref.clone());
                }
                rs
            })
            .collect();
        let pods = if super::is_recreate(d) {
            let uids: Vec<&str> = rss.iter().filter_map(|rs| rs.metadata.uid.as_deref()).collect();
            snapshot
                .pods
                .iter()
                .map(|p| &**p)
                .filter(|p| {
                    p.metadata.namespace == d.metadata.namespace && selector.matches(p.metadata.labels.as_ref())
                })
                .filter(|p| controller_of(&p.metadata).is_some_and(|r| uids.contains(&r.uid.as_str())))
                .collect()
        } else {
            Vec::new()
        };
        Self { d: d.clone(), rss, pods, now: snapshot.now, options, plan }
    }

    /// Indices of `rss` sorted by creation (upstream
    /// `ReplicaSetsByCreationTimestamp`).
    pub(super) fn by_creation(&self, mut rss: Vec<Rs>) -> Vec<Rs> {
        rss.sort_by(|&a, &b| by_creation(&self.rss[a], &self.rss[b]));
        rss
    }

    /// The oldest ReplicaSet whose template is the Deployment's, ignoring
    /// the hash label (upstream `FindNewReplicaSet`).
    fn find_new_replica_set(&self) -> Option<Rs> {
        let template = self.template();
        self.by_creation((0..self.rss.len()).collect()).into_iter().find(|&i| {
            self.rss[i].spec.as_ref().and_then(|s| s.template.as_ref()).is_some_and(|t| equal_ignore_hash(t, &template))
        })
    }

    pub(super) fn template(&self) -> k8s_openapi::api::core::v1::PodTemplateSpec {
        self.d.spec.as_ref().map(|s| s.template.clone()).unwrap_or_default()
    }

    /// ReplicaSets with `spec.replicas > 0` (upstream
    /// `FilterActiveReplicaSets`).
    pub(super) fn active(&self, rss: &[Rs]) -> Vec<Rs> {
        rss.iter().copied().filter(|&i| rs_replicas(&self.rss[i]) > 0).collect()
    }

    /// References to the ReplicaSets `rss` (and `new`, if any).
    pub(super) fn refs(&self, new: Option<Rs>, rss: &[Rs]) -> Vec<&ReplicaSet> {
        rss.iter().copied().chain(new).map(|i| &self.rss[i]).collect()
    }

    pub(super) fn name(&self, rs: Rs) -> String {
        self.rss[rs].metadata.name.clone().unwrap_or_default()
    }
}

// === impl Planner: the new ReplicaSet and revisions ===

impl Planner<'_> {
    /// The new ReplicaSet (created if `create` and missing) and every old
    /// one, with revisions synced (upstream
    /// `getAllReplicaSetsAndSyncRevision`).
    pub(super) fn get_all_replica_sets_and_sync_revision(
        &mut self,
        create: bool,
    ) -> Result<(Option<Rs>, Vec<Rs>), Error> {
        let existing = self.find_new_replica_set();
        let old: Vec<Rs> = (0..self.rss.len()).filter(|&i| Some(i) != existing).collect();
        let new = self.get_new_replica_set(existing, &old, create)?;
        Ok((new, old))
    }

    /// Upstream `getNewReplicaSet`.
    fn get_new_replica_set(&mut self, existing: Option<Rs>, old: &[Rs], create: bool) -> Result<Option<Rs>, Error> {
        let new_revision = max_revision(old.iter().map(|&i| &self.rss[i])) + 1;
        let surge = max_surge(&self.d);
        if let Some(i) = existing {
            let mut rs = self.rss[i].clone();
            let annotations_updated = set_new_replica_set_annotations(&self.d, &mut rs, new_revision, true, surge);
            let min_ready = super::min_ready_seconds(&self.d);
            let rs_min_ready = rs.spec.as_ref().and_then(|s| s.min_ready_seconds).unwrap_or(0);
            if annotations_updated || rs_min_ready != min_ready {
                rs.spec.get_or_insert_default().min_ready_seconds = Some(min_ready);
                self.rss[i] = rs.clone();
                self.plan.push(Action::UpdateReplicaSet { replica_set: Box::new(rs) });
                // The Deployment's revision follows on the next sync.
                return Ok(Some(i));
            }
            let revision =
                rs.metadata.annotations.as_ref().and_then(|a| a.get(REVISION_ANNOTATION)).cloned().unwrap_or_default();
            let mut d = self.d.clone();
            let mut needs_update = set_deployment_revision(&mut d, &revision);
            if progress_deadline(&d).is_some()
                && d.status.as_ref().and_then(|s| get_condition(s, PROGRESSING)).is_none()
            {
                let msg = format!("Found new replica set \"{}\"", self.name(i));
                let condition = new_condition(PROGRESSING, "True", FOUND_NEW_RS_REASON, msg, self.now);
                set_condition(d.status.get_or_insert_default(), condition);
                needs_update = true;
            }
            if needs_update {
                self.d = d;
                self.push_status();
            }
            return Ok(Some(i));
        }
        if !create {
            return Ok(None);
        }
        self.create_new_replica_set(old, new_revision, surge).map(Some)
    }

    /// Creates the new ReplicaSet `<deployment>-<hash>` (upstream
    /// `getNewReplicaSet`'s create path), then records the revision and the
    /// `NewReplicaSetCreated` condition.
    fn create_new_replica_set(&mut self, old: &[Rs], new_revision: i64, surge: i32) -> Result<Rs, Error> {
        let d = &self.d;
        let mut template = self.template();
        let hash = compute_hash(&template, d.status.as_ref().and_then(|s| s.collision_count));
        let template_meta = template.metadata.get_or_insert_default();
        template_meta.labels.get_or_insert_default().insert(POD_TEMPLATE_HASH_LABEL.to_owned(), hash.clone());
        let labels = template_meta.labels.clone();
        let mut selector = d.spec.as_ref().map(|s| s.selector.clone()).unwrap_or_default();
        selector.match_labels.get_or_insert_default().insert(POD_TEMPLATE_HASH_LABEL.to_owned(), hash.clone());
        let name = format!("{}-{hash}", d.metadata.name.as_deref().unwrap_or(""));
        let mut rs = ReplicaSet {
            metadata: ObjectMeta {
                name: Some(name.clone()),
                namespace: d.metadata.namespace.clone(),
                owner_references: Some(vec![new_controller_ref(&d.metadata, "apps/v1", "Deployment")]),
                labels,
                ..Default::default()
            },
            spec: Some(ReplicaSetSpec {
                replicas: Some(0),
                min_ready_seconds: Some(super::min_ready_seconds(d)),
                selector,
                template: Some(template),
            }),
            status: None,
        };
        let all: Vec<&ReplicaSet> = old.iter().map(|&i| &self.rss[i]).chain(std::iter::once(&rs)).collect();
        let new_replicas = fenceposts::new_rs_new_replicas(d, &all, &rs)?;
        rs.spec.get_or_insert_default().replicas = Some(new_replicas);
        set_new_replica_set_annotations(d, &mut rs, new_revision, false, surge);
        self.plan.push(Action::CreateReplicaSet {
            namespace: d.metadata.namespace.clone().unwrap_or_default(),
            replica_set: Box::new(rs.clone()),
        });
        if new_replicas > 0 {
            let msg = format!("Scaled up replica set {name} from 0 to {new_replicas}");
            self.plan.push(Action::Event(event(d, EventType::Normal, SCALING_REPLICA_SET, msg)));
        }
        // Locally it is the newest ReplicaSet.
        rs.metadata.creation_timestamp = Some(Time(self.now));
        self.rss.push(rs);
        set_deployment_revision(&mut self.d, &new_revision.to_string());
        if progress_deadline(&self.d).is_some() {
            let msg = format!("Created new replica set \"{name}\"");
            let condition = new_condition(PROGRESSING, "True", NEW_RS_REASON, msg, self.now);
            set_condition(self.d.status.get_or_insert_default(), condition);
        }
        self.push_status();
        Ok(self.rss.len() - 1)
    }
}

// === impl Planner: writes ===

impl Planner<'_> {
    /// Writes the local Deployment through `/status`.
    fn push_status(&mut self) {
        self.plan.push(Action::UpdateDeploymentStatus { deployment: Box::new(self.d.clone()) });
    }

    /// Sets the status locally and writes it.
    pub(super) fn update_status(&mut self, status: DeploymentStatus) {
        self.d.status = Some(status);
        self.push_status();
    }

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
        let max = fenceposts::max_replicas(&self.d);
        let old_scale = rs_replicas(&self.rss[rs]);
        let size_changed = old_scale != new_scale;
        if !size_changed && !revision::replicas_annotations_need_update(&self.rss[rs], desired, max) {
            return false;
        }
        let target = &mut self.rss[rs];
        target.spec.get_or_insert_default().replicas = Some(new_scale);
        revision::set_replicas_annotations(target, desired, max);
        self.plan.push(Action::UpdateReplicaSet { replica_set: Box::new(target.clone()) });
        if size_changed {
            let msg = format!("Scaled {op} replica set {} from {old_scale} to {new_scale}", self.name(rs));
            self.plan.push(Action::Event(event(&self.d, EventType::Normal, SCALING_REPLICA_SET, msg)));
        }
        size_changed
    }

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

    /// Writes the status with the progress conditions if it changed, else
    /// asks for a requeue at the progress deadline (upstream
    /// `syncRolloutStatus`).
    pub(super) fn sync_rollout_status(&mut self, new: Option<Rs>, old: &[Rs]) {
        let all = self.refs(new, old);
        let (status, requeue) =
            rollout_status(&self.d, &all, new.map(|i| &self.rss[i]), self.options.terminating_replicas, self.now);
        if same_status(&self.d.status.clone().unwrap_or_default(), &status) {
            self.plan.requeue_after = requeue;
        } else {
            self.update_status(status);
        }
    }

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

// === impl Planner: paused and scaling ===

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

    /// Whether an active ReplicaSet was sized for another `spec.replicas`
    /// (upstream `isScalingEvent`).
    fn is_scaling_event(&mut self) -> Result<bool, Error> {
        let (new, old) = self.get_all_replica_sets_and_sync_revision(false)?;
        let all: Vec<Rs> = old.into_iter().chain(new).collect();
        let desired = replicas(&self.d);
        Ok(self
            .active(&all)
            .iter()
            .any(|&i| revision::desired_replicas_annotation(&self.rss[i]).is_some_and(|v| v != desired)))
    }

    /// Upstream `DeploymentComplete(d, &d.Status)`: on the stored status.
    pub(super) fn stored_status_complete(&self) -> bool {
        deployment_complete(&self.d, &self.d.status.clone().unwrap_or_default())
    }
}
