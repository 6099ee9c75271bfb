//! ControllerRevision writes ([`history::Write`]): the create with
//! upstream's name-collision step, the renumbering update retried on a
//! conflict, the delete with a uid precondition, and the ownerReference
//! patches (through `claims`).

use k8s_openapi::api::apps::v1::ControllerRevision;
use kcm_controllers::common::history::{self, AfterAlreadyExists, OnAlreadyExists};
use kcm_controllers::protocol::judge_owner_ref_patch;
use kube::Api;
use kube::api::PostParams;

use super::executor::{Executor, Outcome, Versions};
use crate::drivers::api_errors::{code, error_message, namespace_terminating, reason};

/// Attempts of a write retried on conflict (client-go's `DefaultRetry`: 5
/// steps).
pub(super) const CONFLICT_RETRIES: usize = 5;

impl Executor {
    pub(super) async fn write_revision(&self, write: &history::Write, versions: &Versions) -> Outcome {
        match write {
            history::Write::Create { revision, on_already_exists } => {
                self.create_revision(revision, *on_already_exists).await
            }
            history::Write::Update { revision } => self.update_revision(revision).await,
            history::Write::Delete { namespace, name, uid } => self.delete_revision(namespace, name, uid).await,
            history::Write::PatchOwnerRefs { namespace, name, uid, patch } => {
                match self.patch_owner_refs::<ControllerRevision>(namespace, name, uid, patch, versions).await {
                    Ok(_) => Outcome::Ok,
                    Err(error) => Outcome::of(judge_owner_ref_patch(patch, &error)),
                }
            }
        }
    }

    /// Upstream `CreateControllerRevision`: on AlreadyExists, the existing
    /// revision is read live; the same data is the created revision, other
    /// data a collision, retried under the name the next count gives. A
    /// renamed create ends the plan ([`Outcome::Renamed`]). With
    /// [`OnAlreadyExists::Report`] the existing revision ends the plan
    /// instead, for the controller to judge ([`Outcome::RevisionExists`]).
    async fn create_revision(&self, planned: &ControllerRevision, on_already_exists: OnAlreadyExists) -> Outcome {
        let namespace = planned.metadata.namespace.as_deref().unwrap_or("");
        let api: Api<ControllerRevision> = Api::namespaced(self.client.clone(), namespace);
        let first = match on_already_exists {
            OnAlreadyExists::Rename { collision_count } => collision_count,
            OnAlreadyExists::Report => 0,
        };
        let parent = planned.metadata.owner_references.iter().flatten().find(|r| r.controller == Some(true));
        let parent = parent.map(|r| r.name.clone()).unwrap_or_default();
        let (mut revision, mut count) = (planned.clone(), first);
        loop {
            let name = revision.metadata.name.clone().unwrap_or_default();
            let error = match api.create(&PostParams::default(), &revision).await {
                Ok(_) if count == first => return Outcome::Ok,
                Ok(_) => return Outcome::Renamed(count),
                Err(error) => error,
            };
            if namespace_terminating(&error) {
                return Outcome::Halt;
            }
            if reason(&error) != Some("AlreadyExists") {
                return Outcome::Failed(error_message(&error));
            }
            let existing = match api.get(&name).await {
                Ok(existing) => existing,
                Err(error) => return Outcome::Failed(error_message(&error)),
            };
            if on_already_exists == OnAlreadyExists::Report {
                return Outcome::RevisionExists(Box::new(existing));
            }
            match history::after_already_exists(&parent, &revision, &existing, count) {
                AfterAlreadyExists::Existing if count == first => return Outcome::Ok,
                AfterAlreadyExists::Existing => return Outcome::Renamed(count),
                AfterAlreadyExists::Retry { revision: next, collision_count } => {
                    revision = *next;
                    count = collision_count;
                }
            }
        }
    }

    /// Upstream `UpdateControllerRevision`: a conflict re-reads the revision
    /// and sets the number again.
    async fn update_revision(&self, planned: &ControllerRevision) -> Outcome {
        let namespace = planned.metadata.namespace.as_deref().unwrap_or("");
        let name = planned.metadata.name.clone().unwrap_or_default();
        let api: Api<ControllerRevision> = Api::namespaced(self.client.clone(), namespace);
        let mut body = planned.clone();
        let mut last = String::new();
        for _ in 0..CONFLICT_RETRIES {
            match api.replace(&name, &PostParams::default(), &body).await {
                Ok(_) => return Outcome::Ok,
                Err(error) if code(&error) == Some(409) => last = error_message(&error),
                Err(error) => return Outcome::Failed(error_message(&error)),
            }
            match api.get(&name).await {
                Ok(fresh) => body = ControllerRevision { revision: planned.revision, ..fresh },
                Err(error) => return Outcome::Failed(error_message(&error)),
            }
        }
        Outcome::Failed(last)
    }

    async fn delete_revision(&self, namespace: &str, name: &str, uid: &str) -> Outcome {
        match self.delete_with_uid::<ControllerRevision>(namespace, name, uid).await {
            Ok(_) => Outcome::Ok,
            Err(error) => Outcome::Failed(error_message(&error)),
        }
    }
}

#[cfg(test)]
mod tests {
    use kcm_controllers::plan::{Action, Plan};
    use serde_json::json;

    use super::*;
    use crate::drivers::execute::testing::start;
    use crate::drivers::execute::{Executed, NoBookkeeping};

    fn revision(name: &str, data: serde_json::Value) -> ControllerRevision {
        serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": "default", "ownerReferences": [{"apiVersion": "apps/v1",
                "kind": "StatefulSet", "name": "web", "uid": "web-uid", "controller": true}]},
            "revision": 1, "data": data}))
        .expect("a revision")
    }

    /// Upstream `CreateControllerRevision` against a name taken by other
    /// data: the revision is created under the next count's name, and the
    /// plan stops with that count for the set's status.
    #[tokio::test]
    async fn a_taken_name_renames_the_create_and_reports_the_count() {
        let (_sim, executor, client) = start().await;
        let api: Api<ControllerRevision> = Api::namespaced(client, "default");
        let planned = revision("web-1", json!({"spec": {"template": {"a": 1}}}));
        let mut squatter = revision("web-1", json!({"other": true}));
        squatter.metadata.owner_references = None;
        api.create(&PostParams::default(), &squatter).await.expect("squatter");
        let mut plan: Plan = Plan::new();
        let create = history::Write::Create {
            revision: Box::new(planned.clone()),
            on_already_exists: OnAlreadyExists::Rename { collision_count: 0 },
        };
        plan.push(Action::ControllerRevision(create));
        plan.push(Action::ControllerRevision(history::Write::Delete {
            namespace: "default".into(),
            name: "web-1".into(),
            uid: "never-reached".into(),
        }));
        assert_eq!(executor.run(&plan, &NoBookkeeping).await, Executed::RevisionRenamed(1));
        let renamed = match history::after_already_exists("web", &planned, &squatter, 0) {
            AfterAlreadyExists::Retry { revision, .. } => revision.metadata.name.expect("named"),
            AfterAlreadyExists::Existing => panic!("other data is a collision"),
        };
        let created = api.get(&renamed).await.expect("created under the new name");
        assert_eq!(created.data, planned.data);
        assert!(api.get("web-1").await.is_ok(), "the step after the rename is not run");
    }

    /// A DaemonSet's create ([`OnAlreadyExists::Report`]) whose name is
    /// taken stops the plan with the revision there, read live.
    #[tokio::test]
    async fn a_reported_create_hands_back_the_revision_holding_its_name() {
        let (_sim, executor, client) = start().await;
        let api: Api<ControllerRevision> = Api::namespaced(client, "default");
        let mut squatter = revision("ds-1", json!({"other": true}));
        squatter.metadata.owner_references = None;
        api.create(&PostParams::default(), &squatter).await.expect("squatter");
        let mut plan: Plan = Plan::new();
        plan.push(Action::ControllerRevision(history::Write::Create {
            revision: Box::new(revision("ds-1", json!({"spec": {"template": {"a": 1}}}))),
            on_already_exists: OnAlreadyExists::Report,
        }));
        match executor.run(&plan, &NoBookkeeping).await {
            Executed::RevisionExists(found) => assert_eq!(found.data, squatter.data),
            other => panic!("{other:?}"),
        }
    }
}
