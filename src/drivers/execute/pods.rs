//! Pod creates and deletes (upstream `PodControl`), with their events and
//! what they report to the controller's [`Bookkeeping`].

use k8s_openapi::api::core::v1::Pod;
use kcm_controllers::common::pod_control;
use kcm_controllers::plan::ObjectRef;
use kube::Api;
use kube::api::PostParams;

use kcm_controllers::protocol::{Answer, Refusal, Told, WriteError};

use super::bookkeeping::Bookkeeping;
use super::executor::Executor;
use crate::drivers::api_errors::write_error;

impl Executor {
    pub(super) async fn create_pod(
        &self,
        namespace: &str,
        pod: &Pod,
        owner: &ObjectRef,
        book: &dyn Bookkeeping,
    ) -> Told {
        let api: Api<Pod> = Api::namespaced(self.client.clone(), namespace);
        match api.create(&PostParams::default(), pod).await {
            Ok(created) => {
                let name = created.metadata.name.clone().unwrap_or_default();
                let rv = created.metadata.resource_version.as_deref().and_then(|rv| rv.parse().ok());
                book.creation_succeeded(&owner_key(owner), &format!("{namespace}/{name}"), rv);
                self.record(&pod_control::successful_create(owner, &name));
                Ok(Answer::Done)
            }
            Err(error) => {
                let error = write_error(&error);
                // Upstream: any creation fails in a terminating namespace;
                // nothing to report.
                if error.refusal != Refusal::NamespaceTerminating {
                    self.record(&pod_control::failed_create(owner, &error.message));
                }
                Err(error)
            }
        }
    }

    pub(super) async fn delete_pod(
        &self,
        namespace: &str,
        name: &str,
        uid: &str,
        owner: &ObjectRef,
        book: &dyn Bookkeeping,
    ) -> Told {
        // Upstream logs each deletion at -v=2, which kcm-rs maps to info.
        tracing::info!(controller = %owner_key(owner), kind = %owner.kind, pod = %format!("{namespace}/{name}"), "Deleting pod");
        let error = match self.delete_with_uid::<Pod>(namespace, name, uid).await {
            Ok(true) => {
                self.record(&pod_control::successful_delete(owner, name));
                return Ok(Answer::Done);
            }
            Ok(false) => WriteError { refusal: Refusal::NotFound, message: format!("pods \"{name}\" not found") },
            Err(error) => write_error(&error),
        };
        if error.refusal != Refusal::NotFound {
            book.deletion_failed(&owner_key(owner), &format!("{namespace}/{name}"));
            self.record(&pod_control::failed_delete(owner, &error.message));
        }
        Err(error)
    }
}

/// `namespace/name` of an owner.
pub(super) fn owner_key(owner: &ObjectRef) -> String {
    kcm_objects::object_key(owner.namespace.as_deref(), &owner.name)
}
