//! The StatefulSet controller's writes ([`statefulset::Write`], upstream
//! `stateful_pod_control.go` and `stateful_set_status_updater.go`): pods
//! created with their claims, identities and storage repaired on a live
//! read, claims' owner references rewritten, pods deleted, and the status
//! written through `/status`, each with the events the variant documents.

use k8s_openapi::api::apps::v1::{StatefulSet, StatefulSetStatus};
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};
use kcm_controllers::plan::ObjectRef;
use kcm_controllers::protocol::{Answer, Refusal, Told, WriteError};
use kcm_controllers::statefulset::{Repair, Write, claim_event, pod_event};
use kube::Api;
use kube::api::PostParams;

use crate::drivers::api_errors::{code, error_message, reason, write_error};
use crate::drivers::execute::{CONFLICT_RETRIES, Executor, OwnWriter, Versions, conflict};
use kcm_runtime::informer::Store;

/// Performs the StatefulSet core's own writes with the executor's client
/// and recorder, and the cached StatefulSets a status is written on.
pub(super) struct Writes<'a> {
    pub executor: &'a Executor,
    pub stateful_sets: &'a Store<StatefulSet>,
}

impl OwnWriter<Write> for Writes<'_> {
    async fn write(&self, write: &Write, _: &Versions) -> Told {
        self.write_stateful_set(write).await
    }
}

impl Writes<'_> {
    async fn write_stateful_set(&self, write: &Write) -> Told {
        match write {
            Write::CreatePod { set, claims, pod } => {
                self.create_claims(set, pod.metadata.name.as_deref().unwrap_or(""), claims).await?;
                self.create_stateful_pod(set, pod).await
            }
            Write::CreateClaims { set, pod_name, claims } => self.create_claims(set, pod_name, claims).await,
            Write::RepairPod { set, repair, claims } => {
                self.create_claims(set, &repair.name, claims).await?;
                self.repair_pod(set, repair).await
            }
            Write::UpdateClaim { set, pod_name, claim } => self.update_claim(set, pod_name, claim).await,
            Write::DeletePod { set, namespace, name, uid } => self.delete_stateful_pod(set, namespace, name, uid).await,
            Write::UpdateStatus { namespace, name, resource_version, status } => {
                self.update_stateful_set_status(namespace, name, resource_version.as_deref(), status).await
            }
            Write::Fail { error } => Err(WriteError { refusal: Refusal::Other, message: error.clone() }),
        }
    }

    /// Upstream `createPersistentVolumeClaims`: each claim created, an
    /// existing one left; the first other failure fails the pod's write,
    /// with the claim's event and the pod's.
    async fn create_claims(&self, set: &ObjectRef, pod: &str, claims: &[PersistentVolumeClaim]) -> Told {
        let namespace = set.namespace.as_deref().unwrap_or("");
        let api: Api<PersistentVolumeClaim> = Api::namespaced(self.executor.client.clone(), namespace);
        for claim in claims {
            let name = claim.metadata.name.as_deref().unwrap_or("");
            match api.create(&PostParams::default(), claim).await {
                Ok(_) => self.executor.record(&claim_event(set, "create", name, pod, None)),
                Err(error) if reason(&error) == Some("AlreadyExists") => {}
                Err(error) => {
                    self.executor.record(&claim_event(set, "create", name, pod, Some(&error_message(&error))));
                    let mut refused = write_error(&error);
                    refused.message = format!("failed to create PVC {name}: {}", refused.message);
                    self.executor.record(&pod_event(set, "create", pod, Some(&refused.message)));
                    return Err(refused);
                }
            }
        }
        Ok(Answer::Done)
    }

    /// Upstream `CreateStatefulPod`'s pod create.
    async fn create_stateful_pod(&self, set: &ObjectRef, pod: &Pod) -> Told {
        let name = pod.metadata.name.as_deref().unwrap_or("");
        let api: Api<Pod> = Api::namespaced(self.executor.client.clone(), set.namespace.as_deref().unwrap_or(""));
        let error = match api.create(&PostParams::default(), pod).await {
            Ok(_) => {
                self.executor.record(&pod_event(set, "create", name, None));
                return Ok(Answer::Done);
            }
            Err(error) => write_error(&error),
        };
        if error.refusal != Refusal::AlreadyExists {
            self.executor.record(&pod_event(set, "create", name, Some(&error.message)));
        }
        Err(error)
    }

    /// Upstream `UpdateStatefulPod`: the live pod given its identity and
    /// storage, updated only if that changed it; a conflict starts again
    /// from a fresh read.
    async fn repair_pod(&self, set: &ObjectRef, repair: &Repair) -> Told {
        let api: Api<Pod> = Api::namespaced(self.executor.client.clone(), &repair.namespace);
        let mut last = conflict();
        for _ in 0..CONFLICT_RETRIES {
            let mut pod = api.get(&repair.name).await.map_err(|error| write_error(&error))?;
            if !repair.apply(&mut pod) {
                return Ok(Answer::Done);
            }
            match api.replace(&repair.name, &PostParams::default(), &pod).await {
                Ok(_) => {
                    self.executor.record(&pod_event(set, "update", &repair.name, None));
                    return Ok(Answer::Done);
                }
                Err(error) if code(&error) == Some(409) => last = write_error(&error),
                Err(error) => {
                    let error = write_error(&error);
                    self.executor.record(&pod_event(set, "update", &repair.name, Some(&error.message)));
                    return Err(error);
                }
            }
        }
        self.executor.record(&pod_event(set, "update", &repair.name, Some(&last.message)));
        Err(last)
    }

    /// Upstream `UpdatePodClaimForRetentionPolicy`'s update, at the cached
    /// version.
    async fn update_claim(&self, set: &ObjectRef, pod: &str, claim: &PersistentVolumeClaim) -> Told {
        let namespace = claim.metadata.namespace.as_deref().unwrap_or("");
        let name = claim.metadata.name.as_deref().unwrap_or("");
        let api: Api<PersistentVolumeClaim> = Api::namespaced(self.executor.client.clone(), namespace);
        let error = match api.replace(name, &PostParams::default(), claim).await {
            Ok(_) => return Ok(Answer::Done),
            Err(error) => write_error(&error),
        };
        let message = format!("could not update claim {name} for delete policy ownerRefs: {}", error.message);
        self.executor.record(&pod_event(set, "update", pod, Some(&message)));
        Err(WriteError { message, ..error })
    }

    /// Upstream `DeleteStatefulPod`, with the cached uid as precondition.
    async fn delete_stateful_pod(&self, set: &ObjectRef, namespace: &str, name: &str, uid: &str) -> Told {
        match self.executor.delete_with_uid::<Pod>(namespace, name, uid).await {
            Ok(true) => {
                self.executor.record(&pod_event(set, "delete", name, None));
                Ok(Answer::Done)
            }
            Ok(false) => Ok(Answer::Done),
            Err(error) => {
                let error = write_error(&error);
                self.executor.record(&pod_event(set, "delete", name, Some(&error.message)));
                Err(error)
            }
        }
    }

    /// Upstream `UpdateStatefulSetStatus`: the status written on the cached
    /// set at `resource_version`; on a conflict the set is read live and the
    /// same status written on it (`RetryOnConflict`).
    async fn update_stateful_set_status(
        &self,
        namespace: &str,
        name: &str,
        resource_version: Option<&str>,
        status: &StatefulSetStatus,
    ) -> Told {
        let api: Api<StatefulSet> = Api::namespaced(self.executor.client.clone(), namespace);
        let mut body = match self.stateful_sets.get_namespaced(Some(namespace), name) {
            Some(set) => (*set).clone(),
            None => api.get(name).await.map_err(|error| write_error(&error))?,
        };
        body.metadata.resource_version = resource_version.map(str::to_owned);
        body.status = Some(status.clone());
        let mut last = conflict();
        for _ in 0..CONFLICT_RETRIES {
            match api.replace_status(name, &PostParams::default(), &body).await {
                Ok(_) => return Ok(Answer::Done),
                Err(error) if code(&error) == Some(409) => last = write_error(&error),
                Err(error) => return Err(write_error(&error)),
            }
            let fresh = api.get(name).await.map_err(|error| write_error(&error))?;
            body = StatefulSet { status: Some(status.clone()), ..fresh };
        }
        Err(last)
    }
}

#[cfg(test)]
mod tests {
    use kube::api::{Patch, PatchParams};
    use serde_json::json;

    use kcm_runtime::informer::SharedInformerFactory;

    use super::*;
    use crate::drivers::execute::testing::start;

    /// Upstream's status updater: a write at a stale version conflicts and
    /// is retried on the live set, keeping what another writer changed.
    #[tokio::test]
    async fn a_conflicting_status_write_is_retried_on_the_live_set() {
        let (_sim, executor, client) = start().await;
        let api: Api<StatefulSet> = Api::namespaced(client.clone(), "default");
        let set: StatefulSet = serde_json::from_value(json!({
            "metadata": {"name": "web"},
            "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}))
        .expect("a set");
        let cached = api.create(&PostParams::default(), &set).await.expect("created");
        let note = json!({"metadata": {"annotations": {"note": "kept"}}});
        api.patch("web", &PatchParams::default(), &Patch::Merge(note)).await.expect("annotated");
        let status = StatefulSetStatus { replicas: 0, observed_generation: Some(1), ..Default::default() };
        let write = Write::UpdateStatus {
            namespace: "default".into(),
            name: "web".into(),
            resource_version: cached.metadata.resource_version.clone(),
            status: Box::new(status),
        };
        let stateful_sets = SharedInformerFactory::new(client.clone()).informer::<StatefulSet>().store();
        let own = Writes { executor: &executor, stateful_sets: &stateful_sets };
        let answer = OwnWriter::write(&own, &write, &Versions::default()).await;
        assert_eq!(answer, Ok(Answer::Done));
        let now = api.get("web").await.expect("read");
        assert_eq!(now.status.and_then(|s| s.observed_generation), Some(1));
        assert_eq!(now.metadata.annotations.unwrap_or_default()["note"], "kept");
    }
}
