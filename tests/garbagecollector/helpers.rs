//! What the garbage collector tests build, read and wait for. The helpers
//! take the owner's resource (`rs`, and later `deployment`) and its
//! dependents' as parameters, so other owner chains reuse them.

use std::collections::HashMap;

use k8s_openapi::api::apps::v1::ReplicaSet;
use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use kube::api::{Api, ApiResource, DynamicObject, ListParams, PostParams};
use kube_sim::testing::{kubectl_ok, wait_for};
use serde_json::json;

use crate::common::{Env, PATIENCE};

/// `kubectl delete <resource> <name> --cascade=<cascade> --wait=false`.
pub(super) async fn kubectl_delete(env: &Env, resource: &str, name: &str, cascade: &str) {
    kubectl_ok(
        &env.kubeconfig,
        &["delete", resource, name, "-n", &env.ns, &format!("--cascade={cascade}"), "--wait=false"],
    )
    .await;
}

fn replica_set(name: &str, replicas: i32) -> ReplicaSet {
    serde_json::from_value(json!({
        "apiVersion": "apps/v1", "kind": "ReplicaSet",
        "metadata": {"name": name},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "web", "image": "nginx"}]}}},
    }))
    .expect("valid ReplicaSet")
}

/// Creates ReplicaSet `name` and waits for its `replicas` pods; returns
/// its uid.
pub(super) async fn replica_set_with_pods(env: &Env, name: &str, replicas: usize) -> String {
    let api: Api<ReplicaSet> = Api::namespaced(env.client.clone(), &env.ns);
    let rs = api.create(&PostParams::default(), &replica_set(name, i32::try_from(replicas).unwrap_or(0))).await;
    let uid = rs.expect("ReplicaSet created").metadata.uid.expect("uid");
    let pods = ApiResource::erase::<Pod>(&());
    wait_for(&env.cluster, PATIENCE, &format!("{replicas} pods of {name}"), || async {
        let n = dependents(env, &pods, &uid).await.len();
        if n == replicas { Ok(()) } else { Err(format!("{n} pods")) }
    })
    .await;
    uid
}

/// The objects of `resource` in the test's namespace naming `owner_uid` as an owner.
pub(super) async fn dependents(env: &Env, resource: &ApiResource, owner_uid: &str) -> Vec<DynamicObject> {
    let api: Api<DynamicObject> = Api::namespaced_with(env.client.clone(), &env.ns, resource);
    let list = api.list(&ListParams::default()).await.expect("listed");
    list.items
        .into_iter()
        .filter(|o| o.metadata.owner_references.iter().flatten().any(|r| r.uid == owner_uid))
        .collect()
}

/// Waits until no object of `resource` names `owner_uid` as an owner.
pub(super) async fn dependents_gone(env: &Env, resource: &ApiResource, owner_uid: &str) {
    wait_for(&env.cluster, PATIENCE, &format!("the {} of {owner_uid} to be gone", resource.plural), || async {
        let left: Vec<_> = dependents(env, resource, owner_uid).await.into_iter().map(|o| o.metadata.name).collect();
        if left.is_empty() { Ok(()) } else { Err(format!("left: {left:?}")) }
    })
    .await;
}

/// Waits until object `name` of `resource` is gone from the test's
/// namespace.
pub(super) async fn gone(env: &Env, resource: &ApiResource, name: &str) {
    let api: Api<DynamicObject> = Api::namespaced_with(env.client.clone(), &env.ns, resource);
    wait_for(&env.cluster, PATIENCE, &format!("{} {name} to be gone", resource.kind), || async {
        match api.get_opt(name).await.expect("get") {
            None => Ok(()),
            Some(o) => Err(format!("finalizers {:?}", o.metadata.finalizers)),
        }
    })
    .await;
}

/// APIs of `resources` in the test's namespace.
pub(super) fn in_namespace(env: &Env, resources: &[ApiResource]) -> Vec<Api<DynamicObject>> {
    resources.iter().map(|r| Api::namespaced_with(env.client.clone(), &env.ns, r)).collect()
}

pub(super) fn widget_resource() -> ApiResource {
    ApiResource {
        group: "example.com".into(),
        version: "v1".into(),
        api_version: "example.com/v1".into(),
        kind: "Widget".into(),
        plural: "widgets".into(),
    }
}

pub(super) async fn create_widget(env: &Env, name: &str) -> String {
    let api: Api<DynamicObject> = Api::namespaced_with(env.client.clone(), &env.ns, &widget_resource());
    let obj: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": name}, "spec": {"size": 1},
    }))
    .expect("valid");
    api.create(&PostParams::default(), &obj).await.expect("widget created").metadata.uid.expect("uid")
}

/// Creates ConfigMap `name` owned by `owner` (apiVersion, kind, name, uid).
pub(super) async fn owned_config_map(env: &Env, name: &str, owner: (&str, &str, &str, &str)) {
    let api: Api<ConfigMap> = Api::namespaced(env.client.clone(), &env.ns);
    let (api_version, kind, owner_name, uid) = owner;
    let cm: ConfigMap = serde_json::from_value(json!({
        "metadata": {"name": name, "ownerReferences": [
            {"apiVersion": api_version, "kind": kind, "name": owner_name, "uid": uid}]},
        "data": {"k": "v"},
    }))
    .expect("valid");
    api.create(&PostParams::default(), &cm).await.expect("ConfigMap created");
}

pub(super) async fn config_map(env: &Env, name: &str) -> Option<ConfigMap> {
    let api: Api<ConfigMap> = Api::namespaced(env.client.clone(), &env.ns);
    api.get_opt(name).await.expect("get")
}

/// Waits until ConfigMap `name` is gone.
pub(super) async fn config_map_gone(env: &Env, name: &str) {
    gone(env, &config_maps(), name).await;
}

/// Requests kube-sim answered, by (verb, resource, code): kube-sim only.
pub(super) fn requests(env: &Env) -> HashMap<(String, String, u16), u64> {
    env.cluster.controls().stats().into_iter().map(|l| ((l.verb, l.resource, l.code), l.count)).collect()
}

pub(super) fn count(env: &Env, verb: &str, resource: &str, code: u16) -> u64 {
    requests(env).get(&(verb.to_owned(), resource.to_owned(), code)).copied().unwrap_or(0)
}

/// The value of `series` (its name and labels) in a `/metrics` body.
pub(super) fn value(body: &str, series: &str) -> Option<f64> {
    body.lines().find_map(|l| l.strip_prefix(series)).and_then(|v| v.trim().parse().ok())
}

/// Waits until the collector's graph is fed by more than `than` resource
/// types (the gauge each discovery pass sets); returns how many.
pub(super) async fn monitoring_more_than(env: &Env, than: f64) -> f64 {
    wait_for(&env.cluster, PATIENCE, &format!("the collector to monitor more than {than} types"), || async {
        let (code, body) = env.scrape("/metrics").await;
        let seen = value(&body, "kcm_garbagecollector_monitored_resources");
        seen.filter(|n| *n > than).ok_or_else(|| format!("code {code}: {seen:?} types monitored"))
    })
    .await
}

/// Waits until the collector has run its first discovery, so that a type
/// served next is new to it: it learns of it at run time. Returns how many
/// types it monitors.
pub(super) async fn collector_discovered(env: &Env) -> f64 {
    monitoring_more_than(env, 0.0).await
}

pub(super) fn pods() -> ApiResource {
    ApiResource::erase::<Pod>(&())
}

pub(super) fn replica_sets() -> ApiResource {
    ApiResource::erase::<ReplicaSet>(&())
}

pub(super) fn config_maps() -> ApiResource {
    ApiResource::erase::<ConfigMap>(&())
}
