//! ControllerRevision writes ([`history::Write`]): the create with
//! upstream's name-collision step, the renumbering update retried on a
//! conflict, the delete with a uid precondition, and the ownerReference
//! patches (through `claims`).

use k8s_openapi::api::apps::v1::ControllerRevision;
use kcm_controllers::history::{self, AfterAlreadyExists, OnAlreadyExists};
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
                self.patch_owner_refs::<ControllerRevision>(namespace, name, uid, patch, versions).await
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
