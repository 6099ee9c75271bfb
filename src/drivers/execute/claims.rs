//! The claim steps: the live re-check of an owner (a Deployment,
//! DaemonSet, StatefulSet, Job or ReplicaSet) before adopting (upstream
//! `RecheckDeletionTimestamp`) and the ownerReference patches that adopt
//! or release a pod, a ReplicaSet or a ControllerRevision.

use std::fmt::Debug;

use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, ReplicaSet, StatefulSet};
use k8s_openapi::api::batch::v1::Job;
use kcm_controllers::plan::{ObjectRef, OwnerRefPatch};
use kube::api::{Patch, PatchParams};
use kube::{Api, Resource};
use serde::de::DeserializeOwned;

use kcm_controllers::protocol::{Answer, Refusal, Told, WriteError};

use super::executor::{Executor, Versions};
use crate::drivers::api_errors::write_error;

impl Executor {
    /// Upstream `RecheckDeletionTimestamp`: the owner read live must still
    /// be the same object, not being deleted.
    pub(super) async fn recheck_owner(&self, owner: &ObjectRef) -> Told {
        let namespace = owner.namespace.as_deref().unwrap_or("");
        let fresh = match owner.kind.as_str() {
            "Deployment" => {
                Api::<Deployment>::namespaced(self.client.clone(), namespace).get(&owner.name).await.map(|o| o.metadata)
            }
            "DaemonSet" => {
                Api::<DaemonSet>::namespaced(self.client.clone(), namespace).get(&owner.name).await.map(|o| o.metadata)
            }
            "StatefulSet" => Api::<StatefulSet>::namespaced(self.client.clone(), namespace)
                .get(&owner.name)
                .await
                .map(|o| o.metadata),
            "Job" => Api::<Job>::namespaced(self.client.clone(), namespace).get(&owner.name).await.map(|o| o.metadata),
            _ => {
                Api::<ReplicaSet>::namespaced(self.client.clone(), namespace).get(&owner.name).await.map(|o| o.metadata)
            }
        };
        let gone = |message: String| Err(WriteError { refusal: Refusal::NotFound, message });
        match fresh {
            Ok(fresh) if fresh.uid.as_deref() != Some(owner.uid.as_str()) => gone(format!(
                "original {} {} is gone: got uid {:?}, wanted {}",
                owner.kind, owner.name, fresh.uid, owner.uid
            )),
            Ok(fresh) if fresh.deletion_timestamp.is_some() => {
                gone(format!("{} {} has just been deleted", owner.kind, owner.name))
            }
            Ok(_) => Ok(Answer::Done),
            Err(error) => {
                let WriteError { refusal, .. } = write_error(&error);
                Err(WriteError { refusal, message: format!("can't recheck DeletionTimestamp: {error}") })
            }
        }
    }

    pub(super) async fn patch_owner_refs<K>(
        &self,
        namespace: &str,
        name: &str,
        uid: &str,
        patch: &OwnerRefPatch,
        versions: &Versions,
    ) -> Told
    where
        K: Resource<DynamicType = (), Scope = k8s_openapi::NamespaceResourceScope> + Clone + Debug + DeserializeOwned,
    {
        let api: Api<K> = Api::namespaced(self.client.clone(), namespace);
        let result = api.patch(name, &PatchParams::default(), &Patch::Strategic(patch.body(uid))).await;
        let patched = result.map_err(|error| write_error(&error))?;
        versions.record(&K::kind(&()), patched.meta());
        Ok(Answer::Done)
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
    use kcm_controllers::plan::{Action, Plan};
    use kube::api::{DeleteParams, PostParams};

    use super::*;
    use crate::drivers::execute::testing::{perform, replica_set, start};

    /// The live re-check before adopting reads the owner's own kind and
    /// fails for a Deployment being deleted.
    #[tokio::test]
    async fn recheck_of_a_deleting_deployment_fails() {
        let (_sim, executor, client) = start().await;
        let api: Api<Deployment> = Api::namespaced(client, "default");
        let rs = replica_set("default", "d", "v1", None);
        let spec = rs.spec;
        let d = Deployment {
            metadata: ObjectMeta {
                name: Some("d".into()),
                finalizers: Some(vec!["example.com/hold".into()]),
                ..Default::default()
            },
            spec: k8s_openapi::api::apps::v1::DeploymentSpec {
                selector: spec.selector,
                template: spec.template.unwrap(),
                ..Default::default()
            },
            status: None,
        };
        let created = api.create(&PostParams::default(), &d).await.expect("create");
        let owner = ObjectRef {
            api_version: "apps/v1".into(),
            kind: "Deployment".into(),
            namespace: Some("default".into()),
            name: "d".into(),
            uid: created.metadata.uid.clone().unwrap(),
        };
        let mut plan: Plan = Plan::new();
        plan.push(Action::RecheckOwner { owner: owner.clone() });
        assert_eq!(perform(&executor, plan.clone()).await, [Ok(Answer::Done)]);
        api.delete("d", &DeleteParams::default()).await.expect("delete");
        match &perform(&executor, plan).await[..] {
            [Err(error)] => {
                assert_eq!(error.refusal, Refusal::NotFound);
                assert!(error.message.contains("has just been deleted"), "{}", error.message);
            }
            other => panic!("{other:?}"),
        }
    }
}
