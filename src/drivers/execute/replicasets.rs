//! A Deployment's ReplicaSet creates, live reads and deletes.

use k8s_openapi::api::apps::v1::ReplicaSet;
use kcm_controllers::protocol::{Answer, Refusal, Told, WriteError};
use kube::Api;
use kube::api::PostParams;

use super::executor::{Executor, Versions};
use crate::drivers::api_errors::write_error;

impl Executor {
    /// Creates a Deployment's new ReplicaSet.
    pub(super) async fn create_replica_set(&self, namespace: &str, rs: &ReplicaSet, versions: &Versions) -> Told {
        let api: Api<ReplicaSet> = Api::namespaced(self.client.clone(), namespace);
        let created = api.create(&PostParams::default(), rs).await.map_err(|error| write_error(&error))?;
        versions.record("ReplicaSet", &created.metadata);
        Ok(Answer::Done)
    }

    /// Reads a ReplicaSet live.
    pub(super) async fn read_replica_set(&self, namespace: &str, name: &str) -> Told {
        let api: Api<ReplicaSet> = Api::namespaced(self.client.clone(), namespace);
        let rs = api.get(name).await.map_err(|error| write_error(&error))?;
        Ok(Answer::ReplicaSet(Box::new(rs)))
    }

    pub(super) async fn delete_replica_set(&self, namespace: &str, name: &str, uid: &str) -> Told {
        match self.delete_with_uid::<ReplicaSet>(namespace, name, uid).await {
            Ok(true) => Ok(Answer::Done),
            Ok(false) => {
                Err(WriteError { refusal: Refusal::NotFound, message: format!("replicasets \"{name}\" not found") })
            }
            Err(error) => Err(write_error(&error)),
        }
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::Namespace;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
    use kcm_controllers::deployment::is_same_replica_set;
    use kcm_controllers::plan::Action;
    use kube::api::DeleteParams;

    use super::*;
    use crate::drivers::execute::NoBookkeeping;
    use crate::drivers::execute::testing::{replica_set, start};

    fn create(rs: &ReplicaSet) -> Action {
        Action::CreateReplicaSet {
            namespace: rs.metadata.namespace.clone().unwrap_or_default(),
            replica_set: Box::new(rs.clone()),
        }
    }

    /// A create whose name is taken answers AlreadyExists; the live read
    /// answers the ReplicaSet under that name, as the API server defaulted
    /// it: the planned one (from a Deployment defaulted the same way) is
    /// told apart from another template or owner by what the read returns.
    #[tokio::test]
    async fn a_taken_name_answers_already_exists_and_the_read_returns_its_holder() {
        let (_sim, executor, client) = start().await;
        let api: Api<ReplicaSet> = Api::namespaced(client, "default");
        let mut own = replica_set("default", "d-abc", "v1", Some("d-uid"));
        own.spec.template = api.create(&PostParams::default(), &own).await.expect("create").spec.template;
        api.create(&PostParams::default(), &replica_set("default", "other", "v9", Some("d-uid")))
            .await
            .expect("create");
        let versions = Versions::default();
        for (planned, same) in [(own, true), (replica_set("default", "other", "v1", Some("d-uid")), false)] {
            let name = planned.metadata.name.clone().unwrap_or_default();
            let told = executor.answer(&create(&planned), &NoBookkeeping, &executor, &versions).await;
            assert_eq!(told.map_err(|e| e.refusal), Err(Refusal::AlreadyExists), "{name}");
            let read: Action = Action::ReadReplicaSet { namespace: "default".into(), name: name.clone() };
            let Ok(Answer::ReplicaSet(holder)) = executor.answer(&read, &NoBookkeeping, &executor, &versions).await
            else {
                panic!("{name}: the read answers its ReplicaSet")
            };
            assert_eq!(is_same_replica_set(&holder, &planned), same, "{name}");
        }
    }

    /// A create in a namespace being deleted answers NamespaceTerminating.
    #[tokio::test]
    async fn a_create_in_a_terminating_namespace_says_so() {
        let (_sim, executor, client) = start().await;
        let namespaces: Api<Namespace> = Api::all(client);
        let ns = Namespace {
            metadata: ObjectMeta { name: Some("going".into()), ..Default::default() },
            ..Default::default()
        };
        namespaces.create(&PostParams::default(), &ns).await.expect("create namespace");
        namespaces.delete("going", &DeleteParams::default()).await.expect("delete namespace");
        let action = create(&replica_set("going", "d-abc", "v1", Some("d-uid")));
        let told = executor.answer(&action, &NoBookkeeping, &executor, &Versions::default()).await;
        assert_eq!(told.map_err(|e| e.refusal), Err(Refusal::NamespaceTerminating));
    }
}
