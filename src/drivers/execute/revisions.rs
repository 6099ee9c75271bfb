//! ControllerRevision writes ([`history::Write`]), each answered as the
//! API server did: the create, the live read of a revision (after a create
//! found its name taken: what follows is the core's), the renumbering
//! update retried on a conflict, the delete with a uid precondition, and
//! the ownerReference patches (through `claims`).

use k8s_openapi::api::apps::v1::ControllerRevision;
use kcm_controllers::common::history;
use kcm_controllers::protocol::{Answer, Refusal, Told, WriteError};
use kube::Api;
use kube::api::PostParams;

use super::executor::{Executor, Versions};
use crate::drivers::api_errors::{code, write_error};

/// Attempts of a write retried on conflict (client-go's `DefaultRetry`: 5
/// steps).
pub const CONFLICT_RETRIES: usize = 5;

/// What a write retried on conflict answers before its first attempt.
pub fn conflict() -> WriteError {
    WriteError { refusal: Refusal::Conflict, message: String::new() }
}

impl Executor {
    /// Performs `write` and says what it answered.
    pub(super) async fn revision(&self, write: &history::Write, versions: &Versions) -> Told {
        match write {
            history::Write::Create { revision } => {
                let api = self.revisions(revision.metadata.namespace.as_deref().unwrap_or(""));
                api.create(&PostParams::default(), revision).await.map_err(|error| write_error(&error))?;
                Ok(Answer::Done)
            }
            history::Write::Get { namespace, name } => {
                let existing = self.revisions(namespace).get(name).await.map_err(|error| write_error(&error))?;
                Ok(Answer::ControllerRevision(Box::new(existing)))
            }
            history::Write::Update { revision } => self.update_revision(revision).await,
            history::Write::Delete { namespace, name, uid } => {
                match self.delete_with_uid::<ControllerRevision>(namespace, name, uid).await {
                    Ok(true) => Ok(Answer::Done),
                    Ok(false) => Err(WriteError {
                        refusal: Refusal::NotFound,
                        message: format!("controllerrevisions \"{name}\" not found"),
                    }),
                    Err(error) => Err(write_error(&error)),
                }
            }
            history::Write::PatchOwnerRefs { namespace, name, uid, patch } => {
                self.patch_owner_refs::<ControllerRevision>(namespace, name, uid, patch, versions).await
            }
        }
    }

    fn revisions(&self, namespace: &str) -> Api<ControllerRevision> {
        Api::namespaced(self.client.clone(), namespace)
    }

    /// Upstream `UpdateControllerRevision`: a conflict re-reads the revision
    /// and sets the number again.
    async fn update_revision(&self, planned: &ControllerRevision) -> Told {
        let name = planned.metadata.name.clone().unwrap_or_default();
        let api = self.revisions(planned.metadata.namespace.as_deref().unwrap_or(""));
        let mut body = planned.clone();
        let mut last = conflict();
        for _ in 0..CONFLICT_RETRIES {
            match api.replace(&name, &PostParams::default(), &body).await {
                Ok(_) => return Ok(Answer::Done),
                Err(error) if code(&error) == Some(409) => last = write_error(&error),
                Err(error) => return Err(write_error(&error)),
            }
            let fresh = api.get(&name).await.map_err(|error| write_error(&error))?;
            body = ControllerRevision { revision: planned.revision, ..fresh };
        }
        Err(last)
    }
}

#[cfg(test)]
mod tests {
    use kcm_controllers::plan::Action;
    use serde_json::json;

    use super::*;
    use crate::drivers::execute::NoBookkeeping;
    use crate::drivers::execute::testing::start;

    fn revision(name: &str, data: serde_json::Value) -> ControllerRevision {
        serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": "default", "ownerReferences": [{"apiVersion": "apps/v1",
                "kind": "StatefulSet", "name": "web", "uid": "web-uid", "controller": true}]},
            "revision": 1, "data": data}))
        .expect("a revision")
    }

    /// A create whose name is taken answers AlreadyExists, and the read
    /// that follows answers the revision holding the name, as the API
    /// server has it (the core decides what follows).
    #[tokio::test]
    async fn a_taken_name_answers_already_exists_and_the_read_the_revision_there() {
        let (_sim, executor, client) = start().await;
        let api: Api<ControllerRevision> = Api::namespaced(client, "default");
        let mut squatter = revision("web-1", json!({"other": true}));
        squatter.metadata.owner_references = None;
        api.create(&PostParams::default(), &squatter).await.expect("squatter");
        let planned = revision("web-1", json!({"spec": {"template": {"a": 1}}}));
        let create: Action = Action::ControllerRevision(history::Write::Create { revision: Box::new(planned.clone()) });
        let answer = executor.answer(&create, &NoBookkeeping, &executor, &Versions::default()).await;
        assert_eq!(answer.map_err(|e| e.refusal), Err(Refusal::AlreadyExists));
        let read: Action = Action::ControllerRevision(history::get(&planned));
        match executor.answer(&read, &NoBookkeeping, &executor, &Versions::default()).await {
            Ok(Answer::ControllerRevision(found)) => assert_eq!(found.data, squatter.data),
            other => panic!("{other:?}"),
        }
    }

    /// Deleting a revision that is gone answers NotFound (which the
    /// history cleanup tolerates).
    #[tokio::test]
    async fn deleting_a_missing_revision_answers_not_found() {
        let (_sim, executor, _client) = start().await;
        let delete: Action = Action::ControllerRevision(history::Write::Delete {
            namespace: "default".into(),
            name: "web-1".into(),
            uid: "gone".into(),
        });
        let answer = executor.answer(&delete, &NoBookkeeping, &executor, &Versions::default()).await;
        assert_eq!(answer.map_err(|e| e.refusal), Err(Refusal::NotFound));
    }
}
