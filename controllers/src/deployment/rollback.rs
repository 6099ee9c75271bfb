//! Rollback through the deprecated `deprecated.deployment.rollback.to`
//! annotation (upstream `rollback.go`): copy the template of the wanted
//! revision into the Deployment, clear the annotation. `kubectl rollout
//! undo` on apps/v1 patches the template instead, which needs nothing here:
//! the old ReplicaSet is found as the new one and its revision bumped.

use super::planner::{Planner, event};
use super::revision::{ROLLBACK_TO_ANNOTATION, last_revision, revision, rollback_to, set_deployment_annotations_to};
use super::{Error, ROLLBACK_DONE, ROLLBACK_REVISION_NOT_FOUND, ROLLBACK_TEMPLATE_UNCHANGED};
use crate::common::template_hash::{POD_TEMPLATE_HASH_LABEL, equal_ignore_hash};
use crate::plan::{Action, EventType};

impl Planner<'_> {
    /// Upstream `rollback`.
    pub(super) fn rollback(&mut self) -> Result<(), Error> {
        let (new, old) = self.get_all_replica_sets_and_sync_revision(true)?;
        let all: Vec<usize> = old.into_iter().chain(new).collect();
        let mut target = rollback_to(&self.d).unwrap_or(0);
        if target == 0 {
            target = last_revision(all.iter().map(|&i| &self.rss[i].metadata));
            if target == 0 {
                self.abandon(ROLLBACK_REVISION_NOT_FOUND, "Unable to find last revision.".into());
                return Ok(());
            }
        }
        let Some(rs) = all.iter().copied().find(|&i| revision(&self.rss[i].metadata).is_ok_and(|v| v == target)) else {
            self.abandon(ROLLBACK_REVISION_NOT_FOUND, "Unable to find the revision to rollback to.".into());
            return Ok(());
        };
        let mut template = self.rss[rs].template();
        if equal_ignore_hash(&self.template(), &template) {
            let name = self.d.metadata.name.to_string();
            let msg = format!("The rollback revision contains the same template as current deployment \"{name}\"");
            self.abandon(ROLLBACK_TEMPLATE_UNCHANGED, msg);
            return Ok(());
        }
        if let Some(labels) = template.metadata.as_mut().and_then(|m| m.labels.as_mut()) {
            labels.remove(POD_TEMPLATE_HASH_LABEL);
        }
        self.d.set_template(template);
        let source = self.rss[rs].clone();
        set_deployment_annotations_to(&mut self.d, &source.metadata);
        self.clear_rollback_to();
        let name = self.d.metadata.name.to_string();
        let msg = format!("Rolled back deployment \"{name}\" to revision {target}");
        self.plan.push(Action::Event(event(&self.d, EventType::Normal, ROLLBACK_DONE, msg)));
        Ok(())
    }

    /// The rollback cannot be done: a Warning, then the annotation is
    /// cleared (upstream `emitRollbackWarningEvent` and
    /// `updateDeploymentAndClearRollbackTo`).
    fn abandon(&mut self, reason: &str, message: String) {
        self.plan.push(Action::Event(event(&self.d, EventType::Warning, reason, message)));
        self.clear_rollback_to();
    }

    /// Removes the annotation and writes the Deployment (upstream
    /// `updateDeploymentAndClearRollbackTo`).
    fn clear_rollback_to(&mut self) {
        self.d.metadata.annotations.remove(ROLLBACK_TO_ANNOTATION);
        self.plan.push(Action::UpdateDeployment { deployment: Box::new(self.d.full()) });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::deployment::testing::{DeploymentBuilder, RsB, World, template};

    /// Scenario 22: the deprecated rollback annotation.
    #[test]
    fn deprecated_rollback_annotation() {
        let rss = || {
            [
                RsB::new("r1", 0).image("i1").revision("1"),
                RsB::new("r2", 0).image("i2").revision("2").created(1),
                RsB::new("r3", 3).image("v2").revision("3").created(2),
            ]
        };
        let w = World::new(DeploymentBuilder::new(3).annotation(ROLLBACK_TO_ANNOTATION, "0"), rss());
        assert_eq!(
            w.writes(),
            ["update deployment", "event DeploymentRollback: Rolled back deployment \"d\" to revision 2"]
        );
        let d = w.last_deployment().unwrap();
        assert_eq!(d.spec.template, template("i2"));
        assert!(!d.metadata.annotations.unwrap().contains_key(ROLLBACK_TO_ANNOTATION));

        let w = World::new(DeploymentBuilder::new(3).annotation(ROLLBACK_TO_ANNOTATION, "7"), rss());
        assert_eq!(
            w.writes(),
            [
                "event DeploymentRollbackRevisionNotFound: Unable to find the revision to rollback to.",
                "update deployment"
            ]
        );
        assert_eq!(w.last_deployment().unwrap().spec.template, template("v2"));

        let w = World::new(DeploymentBuilder::new(3).annotation(ROLLBACK_TO_ANNOTATION, "3"), rss());
        assert_eq!(
            w.writes(),
            [
                "event DeploymentRollbackTemplateUnchanged: The rollback revision contains the same template as current deployment \"d\"",
                "update deployment"
            ]
        );

        let w = World::new(DeploymentBuilder::new(3).annotation(ROLLBACK_TO_ANNOTATION, "bogus"), rss());
        assert!(!w.writes().contains(&"update deployment".to_string()), "unparsable: ignored");
    }
}
