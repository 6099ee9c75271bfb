//! The StatefulSet controller's calls ([`statefulset::Call`]), each
//! performed as it is: claims and pods created, a pod read live and
//! replaced, a claim replaced, a pod deleted with its uid as precondition,
//! and the status written through `/status` (upstream
//! `stateful_set_status_updater.go`, retried on the live set after a
//! conflict). What an answer means, and the events it records, the core
//! decides.

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Pod;
use kcm_controllers::protocol::{Answer, Refusal, Told, WriteError};
use kcm_controllers::statefulset::{Call, StatusUpdate};
use kube::api::PostParams;
use kube::{Api, Resource};

use crate::drivers::api_errors::{code, write_error};
use crate::drivers::execute::{CONFLICT_RETRIES, Executor, OwnWriter, Versions, conflict};
use kcm_runtime::informer::Store;

/// Performs the StatefulSet core's calls with the executor's client, and
/// the cached StatefulSets a status is written on.
pub(super) struct Writes<'a> {
    pub executor: &'a Executor,
    pub stateful_sets: &'a Store<StatefulSet>,
}

impl OwnWriter<Call> for Writes<'_> {
    async fn write(&self, call: &Call, _: &Versions) -> Told {
        match call {
            Call::CreateClaim { claim } => self.create(&**claim).await,
            Call::CreatePod { pod } => self.create(&**pod).await,
            Call::ReadPod { namespace, name } => {
                let api: Api<Pod> = Api::namespaced(self.executor.client.clone(), namespace);
                api.get(name).await.map(|pod| Answer::Pod(Box::new(pod))).map_err(|error| write_error(&error))
            }
            // At the version each carries (the live read's, the cache's), not
            // the run's: a pod read after this run wrote it is newer still.
            Call::UpdatePod { pod } => self.executor.replace(&**pod, false, &Versions::default()).await,
            Call::UpdateClaim { claim } => self.executor.replace(&**claim, false, &Versions::default()).await,
            Call::DeletePod { namespace, name, uid } => {
                match self.executor.delete_with_uid::<Pod>(namespace, name, uid).await {
                    Ok(true) => Ok(Answer::Done),
                    Ok(false) => {
                        Err(WriteError { refusal: Refusal::NotFound, message: format!("pods \"{name}\" not found") })
                    }
                    Err(error) => Err(write_error(&error)),
                }
            }
            Call::UpdateStatus(update) => self.update_stateful_set_status(update).await,
        }
    }
}

impl Writes<'_> {
    /// The API of `object`'s kind in its namespace.
    fn api<K>(&self, object: &K) -> Api<K>
    where
        K: Resource<DynamicType = (), Scope = k8s_openapi::NamespaceResourceScope>,
    {
        Api::namespaced(self.executor.client.clone(), object.meta().namespace.as_deref().unwrap_or(""))
    }

    /// Creates `object`.
    async fn create<K>(&self, object: &K) -> Told
    where
        K: Resource<DynamicType = (), Scope = k8s_openapi::NamespaceResourceScope>
            + Clone
            + std::fmt::Debug
            + serde::Serialize
            + serde::de::DeserializeOwned,
    {
        let created = self.api(object).create(&PostParams::default(), object).await;
        created.map(|_| Answer::Done).map_err(|error| write_error(&error))
    }

    /// Upstream `UpdateStatefulSetStatus`: the status written on the cached
    /// set at `resource_version`; on a conflict the set is read live and the
    /// same status written on it (`RetryOnConflict`).
    async fn update_stateful_set_status(&self, update: &StatusUpdate) -> Told {
        let StatusUpdate { set, resource_version, status } = update;
        let (namespace, name, status) = (set.namespace.as_deref().unwrap_or(""), set.name.as_str(), &**status);
        let api: Api<StatefulSet> = Api::namespaced(self.executor.client.clone(), namespace);
        let mut body = match self.stateful_sets.get_namespaced(Some(namespace), name) {
            Some(set) => (*set).clone(),
            None => api.get(name).await.map_err(|error| write_error(&error))?,
        };
        body.metadata.resource_version.clone_from(resource_version);
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
        let status = k8s_openapi::api::apps::v1::StatefulSetStatus {
            replicas: 0,
            observed_generation: Some(1),
            ..Default::default()
        };
        let write = Call::UpdateStatus(StatusUpdate {
            set: kcm_controllers::statefulset::object_ref(&cached),
            resource_version: cached.metadata.resource_version.clone(),
            status: Box::new(status),
        });
        let stateful_sets = SharedInformerFactory::new(client.clone()).informer::<StatefulSet>().store();
        let own = Writes { executor: &executor, stateful_sets: &stateful_sets };
        let answer = OwnWriter::write(&own, &write, &Versions::default()).await;
        assert_eq!(answer, Ok(Answer::Done));
        let now = api.get("web").await.expect("read");
        assert_eq!(now.status.and_then(|s| s.observed_generation), Some(1));
        assert_eq!(now.metadata.annotations.unwrap_or_default()["note"], "kept");
    }
}
