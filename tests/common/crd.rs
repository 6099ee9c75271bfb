//! Custom resource types a test serves at run time ([`Env::serve`]):
//! kube-sim registers them through its controls; the testbed's
//! kube-apiserver serves them from a CustomResourceDefinition, as a real
//! cluster does, removed again when the test ends.

use std::process::Stdio;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ApiResource, DynamicObject, ListParams, PostParams};
use kube_sim::controls::CustomResource;
use kube_sim::testing::wait_for;
use serde_json::json;

use super::{Cluster, Env, PATIENCE};

/// A namespaced custom resource type `widgets.example.com/v1` to serve at
/// run time.
pub fn widgets() -> CustomResource {
    CustomResource {
        group: "example.com".into(),
        version: "v1".into(),
        plural: "widgets".into(),
        kind: "Widget".into(),
        namespaced: true,
        short_names: Vec::new(),
        verbs: None,
    }
}

impl Env {
    /// Serves `resource` from now on. On kube-sim it is registered; on the
    /// testbed its CustomResourceDefinition (any content kept: the schema
    /// preserves unknown fields) is created, or reused when a test before
    /// left it, and this returns once it is Established and its objects
    /// can be listed. The definition is deleted, with every object of the
    /// type, when the test ends, after its namespace: the next test finds
    /// the type new.
    pub async fn serve(&self, resource: &CustomResource) {
        if let Cluster::Sim(sim) = &self.cluster {
            sim.controls().register(resource).expect("custom type served");
            return;
        }
        assert!(resource.verbs.is_none(), "a CustomResourceDefinition serves every verb");
        let name = format!("{}.{}", resource.plural, resource.group);
        self.served.lock().expect("lock").push(name.clone());
        let definitions: Api<CustomResourceDefinition> = Api::all(self.client.clone());
        let definition = definition(resource);
        let objects: Api<DynamicObject> = Api::all_with(self.client.clone(), &api_resource(resource));
        wait_for(&self.cluster, PATIENCE, &format!("the CustomResourceDefinition {name} to be served"), || async {
            let Some(found) = definitions.get_opt(&name).await.map_err(|e| e.to_string())? else {
                definitions.create(&PostParams::default(), &definition).await.map_err(|e| e.to_string())?;
                return Err("created".to_owned());
            };
            if found.metadata.deletion_timestamp.is_some() {
                return Err("the definition a test before served is still being deleted".to_owned());
            }
            let conditions = found.status.and_then(|s| s.conditions).unwrap_or_default();
            if !conditions.iter().any(|c| c.type_ == "Established" && c.status == "True") {
                return Err(format!("not Established: {conditions:?}"));
            }
            objects.list(&ListParams::default().limit(1)).await.map(drop).map_err(|e| e.to_string())
        })
        .await;
    }
}

/// `resource` as a CustomResourceDefinition of one version, served and
/// stored, whose objects keep whatever they hold.
fn definition(resource: &CustomResource) -> CustomResourceDefinition {
    serde_json::from_value(json!({
        "metadata": {"name": format!("{}.{}", resource.plural, resource.group)},
        "spec": {
            "group": resource.group,
            "scope": if resource.namespaced { "Namespaced" } else { "Cluster" },
            "names": {
                "plural": resource.plural,
                "singular": resource.kind.to_lowercase(),
                "kind": resource.kind,
                "shortNames": resource.short_names,
            },
            "versions": [{
                "name": resource.version, "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
            }],
        },
    }))
    .expect("a valid CustomResourceDefinition")
}

fn api_resource(resource: &CustomResource) -> ApiResource {
    ApiResource {
        group: resource.group.clone(),
        version: resource.version.clone(),
        api_version: format!("{}/{}", resource.group, resource.version),
        kind: resource.kind.clone(),
        plural: resource.plural.clone(),
    }
}

/// Deletes the CustomResourceDefinitions `env` served, waiting until they
/// are gone; whether every one went.
pub(super) fn remove_served(env: &Env) -> bool {
    let served = env.served.lock().expect("lock").clone();
    served.iter().all(|name| {
        let status = std::process::Command::new("kubectl")
            .args(["delete", "customresourcedefinition", name, "--ignore-not-found", "--timeout=120s"])
            .env("KUBECONFIG", &env.kubeconfig)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        status.is_ok_and(|s| s.success())
    })
}
