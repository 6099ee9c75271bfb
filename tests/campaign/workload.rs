//! The seed's objects: made at the start, changed by a user mid-run
//! (rollouts, scale-ups, a cascading delete), and judged converged once
//! the faults are lifted.

use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, ReplicaSet, StatefulSet};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::discovery::v1::EndpointSlice;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams, PropagationPolicy};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use kube_sim::Sim;
use kube_sim::testing::{Patience, try_wait_for};
use std::time::Duration;

use super::plan::{NODES, Plan};

/// Where everything lives.
pub const NAMESPACE: &str = "default";

fn template(app: &str, version: u32) -> Value {
    json!({"metadata": {"labels": {"app": app}},
        "spec": {"containers": [{"name": "app", "image": format!("registry.example.com/app:{version}")}]}})
}

fn workload(kind: &str, name: &str, spec: Value) -> Value {
    let api_version = if kind == "Job" { "batch/v1" } else { "apps/v1" };
    json!({"apiVersion": api_version, "kind": kind, "metadata": {"name": name}, "spec": spec})
}

async fn create<K>(client: &kube::Client, object: Value) -> Result<(), String>
where
    K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope>
        + Clone
        + DeserializeOwned
        + serde::Serialize
        + std::fmt::Debug,
    K::DynamicType: Default,
{
    let typed: K = serde_json::from_value(object).map_err(|e| e.to_string())?;
    let api: Api<K> = Api::namespaced(client.clone(), NAMESPACE);
    api.create(&PostParams::default(), &typed).await.map(drop).map_err(|e| format!("create: {e}"))
}

/// Makes every object of the plan.
pub async fn create_all(client: &kube::Client, plan: &Plan) -> Result<(), String> {
    for d in &plan.deployments {
        let strategy = json!({"type": "RollingUpdate",
            "rollingUpdate": {"maxSurge": d.max_surge, "maxUnavailable": d.max_unavailable}});
        let spec = json!({"replicas": d.replicas, "selector": {"matchLabels": {"app": d.name}},
            "strategy": strategy, "template": template(&d.name, 1)});
        create::<Deployment>(client, workload("Deployment", &d.name, spec)).await?;
    }
    for (name, replicas) in &plan.replica_sets {
        let spec =
            json!({"replicas": replicas, "selector": {"matchLabels": {"app": name}}, "template": template(name, 1)});
        create::<ReplicaSet>(client, workload("ReplicaSet", name, spec)).await?;
    }
    for s in &plan.stateful_sets {
        let policy = if s.parallel { "Parallel" } else { "OrderedReady" };
        let spec = json!({"replicas": s.replicas, "serviceName": s.name, "podManagementPolicy": policy,
            "selector": {"matchLabels": {"app": s.name}}, "template": template(&s.name, 1)});
        create::<StatefulSet>(client, workload("StatefulSet", &s.name, spec)).await?;
    }
    for d in &plan.daemon_sets {
        let unavailable = if d.max_surge == 0 { 1 } else { 0 };
        let strategy = json!({"type": "RollingUpdate",
            "rollingUpdate": {"maxSurge": d.max_surge, "maxUnavailable": unavailable}});
        let spec = json!({"selector": {"matchLabels": {"app": d.name}}, "updateStrategy": strategy,
            "template": template(&d.name, 1)});
        create::<DaemonSet>(client, workload("DaemonSet", &d.name, spec)).await?;
    }
    for j in &plan.jobs {
        let mut pod = template(&j.name, 1);
        pod["metadata"]["annotations"] = json!({"kube-sim.io/exit-after": format!("{}ms", j.runs_for.as_millis())});
        pod["spec"]["restartPolicy"] = json!("Never");
        pod["metadata"]["labels"] = json!({});
        let mode = if j.indexed { "Indexed" } else { "NonIndexed" };
        let spec = json!({"completions": j.completions, "parallelism": j.parallelism, "completionMode": mode,
            "backoffLimit": 100, "template": pod});
        create::<Job>(client, workload("Job", &j.name, spec)).await?;
    }
    if plan.services {
        let api: Api<k8s_openapi::api::core::v1::Service> = Api::namespaced(client.clone(), NAMESPACE);
        for d in &plan.deployments {
            let service = serde_json::from_value(json!({"apiVersion": "v1", "kind": "Service",
                "metadata": {"name": d.name}, "spec": {"selector": {"app": d.name}, "ports": [{"port": 80}]}}))
            .map_err(|e| e.to_string())?;
            api.create(&PostParams::default(), &service).await.map_err(|e| format!("create: {e}"))?;
        }
    }
    Ok(())
}

/// What a user does mid-run: every Deployment, StatefulSet and DaemonSet
/// rolled to a new template, the planned scale-ups and the cascading
/// delete.
pub async fn user_changes(sim: &Sim, client: &kube::Client, plan: &Plan) -> Result<(), String> {
    let rolled = |app: &str| json!({"spec": {"template": template(app, 2)}});
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), NAMESPACE);
    for d in &plan.deployments {
        let mut patch = rolled(&d.name);
        if let Some(to) = d.scaled_to {
            patch["spec"]["replicas"] = json!(to);
        }
        patched(sim, &deployments, &d.name, &patch).await?;
    }
    let replica_sets: Api<ReplicaSet> = Api::namespaced(client.clone(), NAMESPACE);
    for (name, replicas) in &plan.replica_sets {
        patched(sim, &replica_sets, name, &json!({"spec": {"replicas": replicas + 1}})).await?;
    }
    let sets: Api<StatefulSet> = Api::namespaced(client.clone(), NAMESPACE);
    for s in &plan.stateful_sets {
        patched(sim, &sets, &s.name, &rolled(&s.name)).await?;
    }
    let daemons: Api<DaemonSet> = Api::namespaced(client.clone(), NAMESPACE);
    for d in &plan.daemon_sets {
        patched(sim, &daemons, &d.name, &rolled(&d.name)).await?;
    }
    for d in plan.deployments.iter().filter(|d| d.deleted.is_some()) {
        let policy =
            if d.deleted == Some(true) { PropagationPolicy::Foreground } else { PropagationPolicy::Background };
        let params = DeleteParams { propagation_policy: Some(policy), ..Default::default() };
        deleted(sim, &deployments, &d.name, &params).await?;
    }
    Ok(())
}

/// How long a user's request is tried again through the injected faults.
const USER: Patience = Patience { deadline: Duration::from_secs(10), recheck: Duration::from_millis(200) };

/// Deletes `name`, through the injected faults.
async fn deleted<K>(sim: &Sim, api: &Api<K>, name: &str, params: &DeleteParams) -> Result<(), String>
where
    K: Clone + DeserializeOwned + std::fmt::Debug,
{
    let what = format!("a user's delete of {name}");
    try_wait_for(sim, USER, &what, || async { api.delete(name, params).await.map(drop).map_err(|e| e.to_string()) })
        .await
}

/// Merge-patches `name` with `patch`, through the injected faults.
async fn patched<K>(sim: &Sim, api: &Api<K>, name: &str, patch: &Value) -> Result<(), String>
where
    K: Clone + DeserializeOwned + std::fmt::Debug,
{
    let what = format!("a user's patch of {name}");
    let params = PatchParams::default();
    try_wait_for(sim, USER, &what, || async {
        api.patch(name, &params, &Patch::Merge(patch)).await.map(drop).map_err(|e| e.to_string())
    })
    .await
}

async fn list<K>(client: &kube::Client) -> Result<Vec<K>, String>
where
    K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope> + Clone + DeserializeOwned + std::fmt::Debug,
    K::DynamicType: Default,
{
    let api: Api<K> = Api::namespaced(client.clone(), NAMESPACE);
    api.list(&ListParams::default()).await.map(|l| l.items).map_err(|e| e.to_string())
}

fn ready(pod: &Pod) -> bool {
    let conditions = pod.status.as_ref().and_then(|s| s.conditions.as_ref());
    pod.metadata.deletion_timestamp.is_none()
        && conditions.is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
}

fn image(pod: &Pod) -> String {
    pod.spec.as_ref().and_then(|s| s.containers[0].image.clone()).unwrap_or_default()
}

/// The live pods labelled `app=<app>` and their images.
fn pods_of<'a>(pods: &'a [Pod], app: &'a str) -> impl Iterator<Item = &'a Pod> + 'a {
    pods.iter().filter(move |p| p.metadata.labels.as_ref().and_then(|l| l.get("app")).is_some_and(|a| a == app))
}

/// Whether everything reached its spec: `Err` says what has not.
pub async fn converged(client: &kube::Client, plan: &Plan) -> Result<(), String> {
    let pods: Vec<Pod> = list(client).await?;
    let new = "registry.example.com/app:2";
    let settled = |app: &str, want: usize| -> Result<(), String> {
        let mine: Vec<&Pod> = pods_of(&pods, app).collect();
        let good = mine.iter().filter(|p| ready(p) && image(p) == new).count();
        if mine.len() == want && good == want {
            Ok(())
        } else {
            Err(format!("{app}: {good} of {want} ready on the new template, {} pods", mine.len()))
        }
    };
    let deployments: Vec<Deployment> = list(client).await?;
    for d in &plan.deployments {
        let found = deployments.iter().find(|x| x.metadata.name.as_deref() == Some(&d.name));
        if d.deleted.is_some() {
            let left = pods_of(&pods, &d.name).count();
            if found.is_some() || left > 0 {
                return Err(format!("{}: deleted, {left} pods left", d.name));
            }
            continue;
        }
        let want = d.scaled_to.unwrap_or(d.replicas);
        settled(&d.name, want as usize)?;
        let status = found.and_then(|x| x.status.clone()).unwrap_or_default();
        // Pods of the old template still terminating count in
        // `terminatingReplicas`: the status changes again once they are gone.
        let counts = (status.replicas, status.updated_replicas, status.available_replicas);
        let terminating = status.terminating_replicas.unwrap_or(0);
        if counts != (Some(want), Some(want), Some(want)) || terminating != 0 {
            return Err(format!("{}: status {counts:?}, {terminating} terminating, want {want}", d.name));
        }
    }
    let replica_sets: Vec<ReplicaSet> = list(client).await?;
    for (name, replicas) in &plan.replica_sets {
        let mine = pods_of(&pods, name).filter(|p| ready(p)).count();
        let status =
            replica_sets.iter().find(|x| x.metadata.name.as_deref() == Some(name)).and_then(|x| x.status.clone());
        let ready_replicas = status.and_then(|s| s.ready_replicas);
        if mine != (*replicas + 1) as usize || ready_replicas != Some(replicas + 1) {
            return Err(format!("{name}: {mine} ready pods, status {ready_replicas:?}, want {}", replicas + 1));
        }
    }
    let sets: Vec<StatefulSet> = list(client).await?;
    for s in &plan.stateful_sets {
        settled(&s.name, s.replicas as usize)?;
        let status = sets.iter().find(|x| x.metadata.name.as_deref() == Some(&s.name)).and_then(|x| x.status.clone());
        let status = status.unwrap_or_default();
        if status.current_revision != status.update_revision || status.ready_replicas != Some(s.replicas) {
            return Err(format!("{}: status {status:?}", s.name));
        }
    }
    let daemons: Vec<DaemonSet> = list(client).await?;
    for d in &plan.daemon_sets {
        settled(&d.name, NODES)?;
        let status =
            daemons.iter().find(|x| x.metadata.name.as_deref() == Some(&d.name)).and_then(|x| x.status.clone());
        let status = status.unwrap_or_default();
        let want = NODES as i32;
        if (status.updated_number_scheduled, status.number_available) != (Some(want), Some(want)) {
            return Err(format!("{}: status {status:?}", d.name));
        }
    }
    let jobs: Vec<Job> = list(client).await?;
    for j in &plan.jobs {
        let job = jobs.iter().find(|x| x.metadata.name.as_deref() == Some(&j.name));
        let status = job.and_then(|x| x.status.clone()).unwrap_or_default();
        let complete = status.conditions.iter().flatten().any(|c| c.type_ == "Complete" && c.status == "True");
        let uid = job.and_then(|x| x.metadata.uid.clone());
        let owned = |p: &&Pod| p.metadata.owner_references.iter().flatten().any(|o| Some(&o.uid) == uid.as_ref());
        let succeeded = pods
            .iter()
            .filter(owned)
            .filter(|p| p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Succeeded"));
        let succeeded = succeeded.count() as i32;
        if !complete || status.succeeded != Some(j.completions) || status.active.unwrap_or(0) != 0 {
            return Err(format!("{}: status {status:?}", j.name));
        }
        if !j.indexed && succeeded != j.completions {
            return Err(format!("{}: {succeeded} succeeded pods for {} completions", j.name, j.completions));
        }
    }
    if plan.services {
        let slices: Vec<EndpointSlice> = list(client).await?;
        for d in plan.deployments.iter().filter(|d| d.deleted.is_none()) {
            let want: std::collections::BTreeSet<String> = pods_of(&pods, &d.name)
                .filter(|p| ready(p))
                .filter_map(|p| p.status.as_ref().and_then(|s| s.pod_ip.clone()))
                .collect();
            let service = |s: &&EndpointSlice| {
                s.metadata.labels.as_ref().and_then(|l| l.get("kubernetes.io/service-name")) == Some(&d.name)
            };
            let have: std::collections::BTreeSet<String> = slices
                .iter()
                .filter(service)
                .flat_map(|s| s.endpoints.iter().flatten())
                .filter(|e| e.conditions.as_ref().and_then(|c| c.ready) == Some(true))
                .flat_map(|e| e.addresses.iter().cloned())
                .collect();
            if want != have {
                return Err(format!("service {}: endpoints {have:?}, ready pods {want:?}", d.name));
            }
        }
    }
    Ok(())
}
