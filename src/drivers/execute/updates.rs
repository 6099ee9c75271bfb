//! Object and status updates: a whole object (or its status subresource)
//! replaced at the latest version the run knows of, and the status writes
//! of the controllers that send their whole cached object (ReplicaSets,
//! DaemonSets), retried on a fresh read.

use std::fmt::Debug;
use std::sync::Arc;

use k8s_openapi::api::apps::v1::{ReplicaSet, ReplicaSetStatus};
use kube::api::PostParams;
use kube::{Api, Resource};
use serde::Serialize;
use serde::de::DeserializeOwned;

use kcm_controllers::protocol::{Answer, Told};

use super::executor::{Executor, Versions};
use crate::drivers::api_errors::write_error;

impl Executor {
    /// Replaces `object` (or, with `status`, its status subresource), at the
    /// latest version this run knows of.
    pub(crate) async fn replace<K>(&self, object: &K, status: bool, versions: &Versions) -> Told
    where
        K: Resource<DynamicType = (), Scope = k8s_openapi::NamespaceResourceScope>
            + Clone
            + Debug
            + Serialize
            + DeserializeOwned,
    {
        let kind = K::kind(&());
        let meta = object.meta();
        let mut body = object.clone();
        body.meta_mut().resource_version = versions.current(&kind, meta);
        let api: Api<K> = Api::namespaced(self.client.clone(), meta.namespace.as_deref().unwrap_or(""));
        let name = meta.name.clone().unwrap_or_default();
        let result = if status {
            api.replace_status(&name, &PostParams::default(), &body).await
        } else {
            api.replace(&name, &PostParams::default(), &body).await
        };
        let written = result.map_err(|error| write_error(&error))?;
        versions.record(&kind, written.meta());
        Ok(Answer::Done)
    }

    /// Writes a ReplicaSet's status on the object as cached, retried once
    /// (upstream `statusUpdateRetries = 1`).
    pub(super) async fn update_replica_set_status(
        &self,
        namespace: &str,
        name: &str,
        resource_version: Option<&str>,
        status: &ReplicaSetStatus,
    ) -> Told {
        let cached = self.replica_sets.as_ref().and_then(|s| s.get_namespaced(Some(namespace), name));
        // Written whole, its template's spec decoded.
        let cached = cached.map(|rs| Arc::new(rs.full()));
        let target = StatusTarget { namespace, name, cached, resource_version, retries: 1 };
        self.write_status(target, |rs: &mut ReplicaSet| rs.status = Some(status.clone())).await
    }

    /// Writes `set`'s status on the cached object (at the target's
    /// resourceVersion); on a failure re-reads the object and retries, at
    /// most `retries` times.
    pub(crate) async fn write_status<K>(&self, target: StatusTarget<'_, K>, set: impl Fn(&mut K)) -> Told
    where
        K: Resource<DynamicType = (), Scope = k8s_openapi::NamespaceResourceScope>
            + Clone
            + Debug
            + Default
            + Serialize
            + DeserializeOwned,
    {
        let StatusTarget { namespace, name, cached, resource_version, retries } = target;
        let api: Api<K> = Api::namespaced(self.client.clone(), namespace);
        let mut body = cached.map_or_else(
            || {
                let mut object = K::default();
                object.meta_mut().name = Some(name.to_owned());
                object.meta_mut().namespace = Some(namespace.to_owned());
                object
            },
            |cached| (*cached).clone(),
        );
        body.meta_mut().resource_version = resource_version.map(str::to_owned);
        set(&mut body);
        for _ in 0..retries {
            if api.replace_status(name, &PostParams::default(), &body).await.is_ok() {
                return Ok(Answer::Done);
            }
            // The API server takes metadata from a status write too: send
            // the fresh object, so that nothing another writer changed
            // meanwhile (annotations, ownerReferences) is undone.
            body = api.get(name).await.map_err(|error| write_error(&error))?;
            set(&mut body);
        }
        api.replace_status(name, &PostParams::default(), &body)
            .await
            .map(|_| Answer::Done)
            .map_err(|error| write_error(&error))
    }
}

/// The object a status write goes to.
pub struct StatusTarget<'a, K> {
    /// Its namespace.
    pub namespace: &'a str,
    /// Its name.
    pub name: &'a str,
    /// The cached object the status was computed from, if still cached.
    pub cached: Option<Arc<K>>,
    /// The resourceVersion the status was computed at.
    pub resource_version: Option<&'a str>,
    /// Re-reads and retries after a failed write.
    pub retries: usize,
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
    use kcm_controllers::plan::{Action, OwnerRefPatch, Plan};
    use kcm_controllers::protocol::Refusal;

    use super::*;
    use crate::drivers::execute::testing::{perform, replica_set, start};

    /// A status write that conflicts is retried on the fresh object: what
    /// another writer changed meanwhile (here an annotation) is kept.
    #[tokio::test]
    async fn a_conflicting_status_write_is_retried_without_undoing_other_writes() {
        let (_sim, executor, client) = start().await;
        let api: Api<ReplicaSet> = Api::namespaced(client, "default");
        let cached =
            api.create(&PostParams::default(), &replica_set("default", "rs", "v1", None)).await.expect("create");
        let patch = serde_json::json!({"metadata": {"annotations": {"deployment.kubernetes.io/revision": "2"}}});
        api.patch("rs", &kube::api::PatchParams::default(), &kube::api::Patch::Merge(patch)).await.expect("annotated");
        let status = ReplicaSetStatus { replicas: 0, observed_generation: Some(1), ..Default::default() };
        let mut plan: Plan = Plan::new();
        plan.push(Action::UpdateReplicaSetStatus {
            namespace: "default".into(),
            name: "rs".into(),
            resource_version: cached.metadata.resource_version.clone(),
            status: Box::new(status),
        });
        assert!(perform(&executor, plan).await.iter().all(Result::is_ok));
        let now = api.get("rs").await.expect("get");
        assert_eq!(now.status.and_then(|s| s.observed_generation), Some(1));
        assert_eq!(now.metadata.annotations.unwrap_or_default()["deployment.kubernetes.io/revision"], "2");
    }

    /// Two updates of one object in a plan: the second is sent at the
    /// version the first returned (no conflict).
    #[tokio::test]
    async fn second_update_of_an_object_uses_the_fresh_version() {
        let (_sim, executor, client) = start().await;
        let api: Api<ReplicaSet> = Api::namespaced(client, "default");
        let cached =
            api.create(&PostParams::default(), &replica_set("default", "rs", "v1", None)).await.expect("create");
        let mut first = cached.clone();
        first.metadata.annotations = Some([("a".to_string(), "1".to_string())].into());
        let mut second = first.clone();
        second.spec.replicas = Some(3);
        let mut plan: Plan = Plan::new();
        plan.push(Action::UpdateReplicaSet { replica_set: Box::new(first) });
        plan.push(Action::UpdateReplicaSet { replica_set: Box::new(second) });
        assert!(perform(&executor, plan).await.iter().all(Result::is_ok));
        let now = api.get("rs").await.expect("get");
        assert_eq!(now.spec.replicas, Some(3));
        assert_eq!(now.metadata.annotations.unwrap()["a"], "1");
        // An adoption patch counts as a write too (the planner's copy
        // carries the new reference).
        let owner = OwnerReference {
            api_version: "apps/v1".into(),
            kind: "Deployment".into(),
            name: "d".into(),
            uid: "d-uid".into(),
            controller: Some(true),
            block_owner_deletion: Some(true),
        };
        let mut adopted = api.get("rs").await.expect("get");
        adopted.spec.replicas = Some(4);
        adopted.metadata.owner_references = Some(vec![owner.clone()]);
        let mut plan: Plan = Plan::new();
        plan.push(Action::PatchReplicaSetOwnerRefs {
            namespace: "default".into(),
            name: "rs".into(),
            uid: adopted.metadata.uid.clone().unwrap(),
            patch: OwnerRefPatch::Adopt(owner),
        });
        plan.push(Action::UpdateReplicaSet { replica_set: Box::new(adopted) });
        assert!(perform(&executor, plan).await.iter().all(Result::is_ok));
        let now = api.get("rs").await.expect("get");
        assert_eq!(now.spec.replicas, Some(4));
        assert_eq!(now.metadata.owner_references.unwrap()[0].uid, "d-uid");
        // A stale version from outside the plan still conflicts.
        let mut plan: Plan = Plan::new();
        plan.push(Action::UpdateReplicaSet { replica_set: Box::new(cached) });
        assert!(matches!(&perform(&executor, plan).await[..], [Err(e)] if e.refusal == Refusal::Conflict));
    }
}
