//! The DaemonSet controller's own writes
//! ([`Action::Own`](kcm_controllers::plan::Action::Own)): its
//! status through `/status` on the cached object, retried once on a fresh
//! read unless the plan says not to (a collision bump), and the merge patch
//! relabelling a pod to the current revision's hash.

use k8s_openapi::api::apps::v1::DaemonSet;
use k8s_openapi::api::core::v1::Pod;
use kcm_controllers::daemonset::Write;
use kcm_controllers::protocol::{Answer, Told};
use kube::Api;
use kube::api::{Patch, PatchParams};

use crate::drivers::api_errors::write_error;
use crate::drivers::execute::{Executor, OwnWriter, StatusTarget, Versions};
use kcm_runtime::informer::Store;

/// Performs the DaemonSet core's own writes, with the executor's client
/// and the cached DaemonSets a status is written on.
pub(super) struct Writes<'a> {
    pub executor: &'a Executor,
    pub daemon_sets: &'a Store<DaemonSet>,
}

impl OwnWriter<Write> for Writes<'_> {
    async fn write(&self, write: &Write, _: &Versions) -> Told {
        self.perform(write).await
    }
}

impl Writes<'_> {
    async fn perform(&self, write: &Write) -> Told {
        match write {
            Write::UpdateStatus { namespace, name, resource_version, status, retry } => {
                let cached = self.daemon_sets.get_namespaced(Some(namespace), name);
                let retries = usize::from(*retry);
                let target =
                    StatusTarget { namespace, name, cached, resource_version: resource_version.as_deref(), retries };
                // Upstream's `storeDaemonSetStatus` sets its counts on the
                // object it writes (the cached one, then a fresh read): the
                // conditions, which the controller never writes, are that
                // object's, and so is a plain status write's collisionCount.
                let set = |ds: &mut DaemonSet| {
                    let kept = ds.status.take().unwrap_or_default();
                    let mut next = (**status).clone();
                    next.conditions = kept.conditions;
                    if *retry {
                        next.collision_count = kept.collision_count;
                    }
                    ds.status = Some(next);
                };
                self.executor.write_status(target, set).await
            }
            Write::RelabelPod { namespace, name, hash } => {
                let api: Api<Pod> = Api::namespaced(self.executor.client.clone(), namespace);
                let body = Patch::Merge(Write::relabel_body(hash));
                api.patch(name, &PatchParams::default(), &body).await.map_err(|error| write_error(&error))?;
                Ok(Answer::Done)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::apps::v1::DaemonSetStatus;
    use kube::api::PostParams;
    use serde_json::json;

    use super::*;
    use kcm_runtime::informer::SharedInformerFactory;

    use crate::drivers::execute::testing::start;

    async fn created(client: &kube::Client) -> DaemonSet {
        let ds = json!({"metadata": {"name": "ds"}, "spec": {"selector": {"matchLabels": {"app": "ds"}},
            "template": {"metadata": {"labels": {"app": "ds"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}}});
        let api: Api<DaemonSet> = Api::namespaced(client.clone(), "default");
        api.create(&PostParams::default(), &serde_json::from_value(ds).expect("a DaemonSet")).await.expect("create")
    }

    fn status_write(ds: &DaemonSet, retry: bool) -> Write {
        let status = DaemonSetStatus { collision_count: Some(1), observed_generation: Some(1), ..Default::default() };
        Write::UpdateStatus {
            namespace: "default".into(),
            name: "ds".into(),
            resource_version: ds.metadata.resource_version.clone(),
            status: Box::new(status),
            retry,
        }
    }

    /// `write` performed with nothing cached: a status goes to a fresh
    /// object at the planned resourceVersion.
    async fn answer(executor: &Executor, client: &kube::Client, write: &Write) -> Told {
        let daemon_sets = SharedInformerFactory::new(client.clone()).informer::<DaemonSet>().store();
        OwnWriter::write(&Writes { executor, daemon_sets: &daemon_sets }, write, &Versions::default()).await
    }

    /// A status computed from a DaemonSet that changed since is retried on
    /// the fresh object, unless the plan says not to (a collision bump).
    #[tokio::test]
    async fn a_stale_status_write_is_retried_only_when_the_plan_allows() {
        let (_sim, executor, client) = start().await;
        let api: Api<DaemonSet> = Api::namespaced(client.clone(), "default");
        let stale = created(&client).await;
        let annotate = json!({"metadata": {"annotations": {"example.com/touched": "yes"}}});
        api.patch("ds", &PatchParams::default(), &Patch::Merge(&annotate)).await.expect("annotated");
        let condition = json!({"status": {"conditions": [{"type": "StatusPatched", "status": "True"}]}});
        api.patch_status("ds", &PatchParams::default(), &Patch::Merge(&condition)).await.expect("condition");
        assert!(answer(&executor, &client, &status_write(&stale, false)).await.is_err());
        assert_eq!(answer(&executor, &client, &status_write(&stale, true)).await, Ok(Answer::Done));
        let now = api.get("ds").await.expect("get");
        let status = now.status.unwrap_or_default();
        assert_eq!(status.observed_generation, Some(1));
        let conditions = status.conditions.unwrap_or_default();
        assert!(
            conditions.iter().any(|c| c.type_.as_deref() == Some("StatusPatched")),
            "a user's condition is kept: {conditions:?}"
        );
        assert_eq!(now.metadata.annotations.unwrap_or_default()["example.com/touched"], "yes");
    }

    /// The relabel is a merge patch of the hash label alone.
    #[tokio::test]
    async fn relabel_sets_the_revision_hash_label() {
        let (_sim, executor, client) = start().await;
        let accounts: Api<k8s_openapi::api::core::v1::ServiceAccount> = Api::namespaced(client.clone(), "default");
        let account = serde_json::from_value(json!({"metadata": {"name": "default"}})).expect("a ServiceAccount");
        accounts.create(&PostParams::default(), &account).await.expect("create");
        let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
        let pod = json!({"metadata": {"name": "p", "labels": {"app": "ds", "controller-revision-hash": "old"}},
            "spec": {"containers": [{"name": "c", "image": "i"}]}});
        pods.create(&PostParams::default(), &serde_json::from_value(pod).expect("a Pod")).await.expect("create");
        let relabel = Write::RelabelPod { namespace: "default".into(), name: "p".into(), hash: "new".into() };
        assert_eq!(answer(&executor, &client, &relabel).await, Ok(Answer::Done));
        let labels = pods.get("p").await.expect("get").metadata.labels.unwrap_or_default();
        assert_eq!((labels["app"].as_str(), labels["controller-revision-hash"].as_str()), ("ds", "new"));
    }
}
