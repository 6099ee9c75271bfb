//! The new ReplicaSet and revisions (upstream `sync.go`
//! `getAllReplicaSetsAndSyncRevision`, `getNewReplicaSet`,
//! `FindNewReplicaSet`): find the ReplicaSet whose template is the
//! Deployment's or create `<deployment>-<hash>`, keep the revision
//! annotations in step, and what to write when the create failed.

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::{self as apps, ReplicaSetSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kcm_objects::Deployment;
use kcm_objects::ReplicaSet;

use super::conditions::{PROGRESSING, RS_CREATE_ERROR_REASON, get_condition, new_condition, set_condition};
use super::planner::{Planner, Rs, event};
use super::revision::{REVISION_ANNOTATION, max_revision, set_deployment_revision, set_new_replica_set_annotations};
use super::{Error, FOUND_NEW_RS_REASON, NEW_RS_REASON, SCALING_REPLICA_SET, fenceposts, max_surge, progress_deadline};
use crate::common::controller_ref::{controller_of, new_controller_ref};
use crate::common::template_hash::{
    POD_TEMPLATE_HASH_LABEL, cached_canonical_ignoring_hash, compute_hash, equal_ignore_hash,
};
use crate::plan::{Action, EventType, Plan};

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
            plan.push(Action::UpdateDeploymentStatus { deployment: Box::new(d.full()) });
        }
        CreateFailure::Error { replica_set, message } => {
            let msg = format!("Failed to create new replica set \"{replica_set}\": {message}");
            if progress_deadline(&d).is_some() {
                let condition = new_condition(PROGRESSING, "False", RS_CREATE_ERROR_REASON, msg.clone(), now);
                set_condition(d.status.get_or_insert_default(), condition);
                plan.push(Action::UpdateDeploymentStatus { deployment: Box::new(d.full()) });
            }
            plan.push(Action::Event(event(&d, EventType::Warning, RS_CREATE_ERROR_REASON, msg)));
        }
    }
    plan
}

impl Planner<'_> {
    /// The oldest ReplicaSet whose template is the Deployment's, ignoring
    /// the hash label (upstream `FindNewReplicaSet`).
    fn find_new_replica_set(&self) -> Option<Rs> {
        let template = cached_canonical_ignoring_hash(&self.d.spec.template);
        self.by_creation((0..self.rss.len()).collect()).into_iter().find(|&i| {
            self.rss[i].spec.template.as_ref().is_some_and(|t| cached_canonical_ignoring_hash(t) == template)
        })
    }

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
        let new_revision = max_revision(old.iter().map(|&i| &self.rss[i].metadata)) + 1;
        let surge = max_surge(&self.d);
        if let Some(i) = existing {
            let mut rs = self.rss[i].clone();
            let annotations_updated =
                set_new_replica_set_annotations(&self.d, &mut rs.metadata, new_revision, true, surge);
            let min_ready = super::min_ready_seconds(&self.d);
            let rs_min_ready = rs.spec.min_ready_seconds.unwrap_or(0);
            if annotations_updated || rs_min_ready != min_ready {
                rs.spec.min_ready_seconds = Some(min_ready);
                self.rss[i] = rs.clone();
                self.plan.push(Action::UpdateReplicaSet { replica_set: Box::new(rs.full()) });
                // The Deployment's revision follows on the next sync.
                return Ok(Some(i));
            }
            let revision = rs.metadata.annotations.get(REVISION_ANNOTATION).unwrap_or_default().to_owned();
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
        let mut selector = d.spec.selector.to_label_selector();
        selector.match_labels.get_or_insert_default().insert(POD_TEMPLATE_HASH_LABEL.to_owned(), hash.clone());
        let name = format!("{}-{hash}", d.metadata.name);
        let rs = apps::ReplicaSet {
            metadata: ObjectMeta {
                name: Some(name.clone()),
                namespace: Some(d.metadata.namespace.to_string()),
                owner_references: Some(vec![new_controller_ref(&d.metadata, "apps/v1", "Deployment")]),
                labels,
                ..Default::default()
            },
            spec: ReplicaSetSpec {
                replicas: Some(0),
                min_ready_seconds: Some(super::min_ready_seconds(d)),
                selector,
                template: Some(template),
            },
            status: None,
        };
        let mut planned = ReplicaSet::new(rs);
        let all: Vec<&ReplicaSet> = old.iter().map(|&i| &self.rss[i]).chain(std::iter::once(&planned)).collect();
        let new_replicas = fenceposts::new_rs_new_replicas(d, &all, &planned)?;
        planned.spec.replicas = Some(new_replicas);
        set_new_replica_set_annotations(d, &mut planned.metadata, new_revision, false, surge);
        self.plan.push(Action::CreateReplicaSet {
            namespace: d.metadata.namespace.to_string(),
            replica_set: Box::new(planned.full()),
        });
        if new_replicas > 0 {
            let msg = format!("Scaled up replica set {name} from 0 to {new_replicas}");
            self.plan.push(Action::Event(event(d, EventType::Normal, SCALING_REPLICA_SET, msg)));
        }
        // Locally it is the newest ReplicaSet.
        planned.metadata.creation_timestamp = Some(self.now);
        self.rss.push(planned);
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

/// Whether `existing` (found under the name `planned` was to be created
/// with) is `planned` itself as far as a Deployment is concerned: controlled
/// by the same owner and with the same template ignoring the hash label
/// (upstream's AlreadyExists check in `getNewReplicaSet`).
pub fn is_same_replica_set(existing: &apps::ReplicaSet, planned: &apps::ReplicaSet) -> bool {
    let owner = |rs: &apps::ReplicaSet| controller_of(&rs.metadata).map(|r| r.uid.clone());
    let template = |rs: &apps::ReplicaSet| rs.spec.template.clone().unwrap_or_default();
    owner(existing).is_some()
        && owner(existing) == owner(planned)
        && equal_ignore_hash(&template(existing), &template(planned))
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::apps::v1::DeploymentStatus;

    use super::*;
    use crate::deployment::testing::{DeploymentBuilder, NOW, RsB, World, created, planner, template};
    use crate::deployment::{Options, REVISION_HISTORY_ANNOTATION};
    use crate::testing::{describe_plan, ts};

    /// Scenario 21: template set back to an old revision: that RS is reused
    /// (revision 3, history "1"), no create.
    #[test]
    fn template_rollback_reuses_the_old_replica_set() {
        let w = World::new(
            DeploymentBuilder::new(3).image("v1"),
            [
                RsB::new("rs1", 0).revision("1").sized(3, 4),
                RsB::new("rs2", 3).image("v2").revision("2").sized(3, 4).created(5),
            ],
        );
        let plan = w.plan();
        let lines = describe_plan(&plan);
        assert!(!lines.iter().any(|l| l.starts_with("create")), "{lines:?}");
        let Some(Action::UpdateReplicaSet { replica_set }) = plan.actions().next() else { panic!("{lines:?}") };
        let a = replica_set.metadata.annotations.as_ref().unwrap();
        assert_eq!(replica_set.metadata.name.as_deref(), Some("rs1"));
        assert_eq!((a[REVISION_ANNOTATION].as_str(), a[REVISION_HISTORY_ANNOTATION].as_str()), ("3", "1"));
        // The next sync (annotations written) sets the Deployment's revision
        // and scales rs1 up under the rolling rules.
        let w = World::new(
            DeploymentBuilder::new(3).image("v1"),
            [
                RsB::new("rs1", 0).revision("3").annotation(REVISION_HISTORY_ANNOTATION, "1").sized(3, 4),
                RsB::new("rs2", 3).image("v2").revision("2").sized(3, 4).created(5),
            ],
        );
        let lines = w.lines();
        assert!(lines.contains(&"update rs1 1".to_string()), "{lines:?}");
        assert_eq!(w.last_deployment().unwrap().metadata.annotations.unwrap()[REVISION_ANNOTATION], "3");
    }

    /// Scenario 24: revisions {1, 4, x}: the new RS gets 5.
    #[test]
    fn new_revision_is_one_above_the_max() {
        let w = World::new(
            DeploymentBuilder::new(1),
            [
                RsB::new("a", 0).revision("1"),
                RsB::new("b", 0).image("b").revision("4"),
                RsB::new("c", 1).image("c").revision("x"),
            ],
        );
        let rs = created(&w.plan());
        assert_eq!(rs.metadata.annotations.unwrap()[REVISION_ANNOTATION], "5");
        assert_eq!(w.last_deployment().unwrap().metadata.annotations.unwrap()[REVISION_ANNOTATION], "5");
    }

    /// Upstream `TestFindNewReplicaSet`: the oldest ReplicaSet with the
    /// template (ignoring the hash label) is the new one; ties by name.
    #[test]
    fn find_new_replica_set() {
        let mut with_hash = RsB::new("b-hashed", 1).image("v2").created(5).build().full();
        let template = with_hash.spec.template.as_mut().unwrap();
        template
            .metadata
            .as_mut()
            .unwrap()
            .labels
            .as_mut()
            .unwrap()
            .insert(POD_TEMPLATE_HASH_LABEL.into(), "upstream".into());
        let with_hash = ReplicaSet::new(with_hash);
        let cases = [
            ("older wins", vec![RsB::new("z", 1).image("v2").created(1).build(), with_hash.clone()], Some("z")),
            ("hash label ignored", vec![with_hash.clone(), RsB::new("old", 1).build()], Some("b-hashed")),
            (
                "same time: by name",
                vec![RsB::new("b", 1).image("v2").created(1).build(), RsB::new("a", 1).image("v2").created(1).build()],
                Some("a"),
            ),
            ("none", vec![RsB::new("old", 1).build()], None),
        ];
        let options = Options::default();
        for (name, rss, want) in cases {
            let mut p = planner(DeploymentBuilder::new(1).build(), rss, &options);
            let (new, _) = p.get_all_replica_sets_and_sync_revision(false).unwrap();
            assert_eq!(new.map(|i| p.name(i)).as_deref(), want, "{name}");
        }
    }

    /// Scenario 27: a collision bumps collisionCount nil → 1 → 2, and the next
    /// sync hashes with it.
    #[test]
    fn collision_bumps_the_count() {
        let d = DeploymentBuilder::new(1).build();
        let plan = after_create_failure(&d, &CreateFailure::Collision, ts(NOW));
        let Some(Action::UpdateDeploymentStatus { deployment }) = plan.actions().next() else { panic!() };
        assert_eq!(deployment.status.as_ref().unwrap().collision_count, Some(1));
        let bumped = DeploymentBuilder::new(1).status(DeploymentStatus {
            collision_count: Some(1),
            observed_generation: Some(1),
            ..Default::default()
        });
        let w = World::new(bumped, []);
        let want = format!("d-{}", compute_hash(&template("v2"), Some(1)));
        assert_eq!(created(&w.plan()).metadata.name, Some(want));
    }

    /// Other create errors: Progressing False ReplicaSetCreateError and a
    /// Warning.
    #[test]
    fn create_error_sets_the_condition() {
        let d = DeploymentBuilder::new(1).build();
        let failure = CreateFailure::Error { replica_set: "d-x".into(), message: "quota".into() };
        let lines = describe_plan(&after_create_failure(&d, &failure, ts(NOW)));
        assert_eq!(
            lines,
            [
                format!("status 0/0/0/0/0 {PROGRESSING}={RS_CREATE_ERROR_REASON}"),
                "event ReplicaSetCreateError: Failed to create new replica set \"d-x\": quota".into()
            ]
        );
    }

    /// Scenario 28 (the executor's check): an existing RS with our controller
    /// and template is ours; anything else collides.
    #[test]
    fn already_exists_check() {
        let w = World::new(DeploymentBuilder::new(1), []);
        let planned = created(&w.plan());
        let mut same = planned.clone();
        same.metadata.uid = Some("x".into());
        assert!(is_same_replica_set(&same, &planned));
        let mut other_owner = planned.clone();
        other_owner.metadata.owner_references = None;
        assert!(!is_same_replica_set(&other_owner, &planned));
        let other_template = RsB::new("x", 1).image("v9").build().full();
        assert!(!is_same_replica_set(&other_template, &planned));
    }
}
