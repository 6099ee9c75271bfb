//! A barrier on the garbage collector's view of one resource type.
//!
//! The collector decides from its dependency graph, fed by one watch per
//! type, each at its own pace: upstream's too. An owner deleted in the
//! foreground before the collector has observed its dependents loses its
//! `foregroundDeletion` finalizer at once, and the dependents go after it
//! (as dangling); an owner deleted with the orphan policy before then
//! keeps its reference on the unseen dependents, which then go as
//! dangling. The contract holds only for dependents the collector has
//! seen, which is why upstream's integration tests wait for the graph to
//! hold them. A test of that contract calls [`observed`] first.

use std::sync::atomic::{AtomicUsize, Ordering};

use k8s_openapi::api::apps::v1::ReplicaSet;
use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use kube::Api;
use kube::api::{ApiResource, DynamicObject, PostParams};
use kube_sim::testing::wait_for;
use serde_json::json;

use super::{Env, PATIENCE};

/// The types a barrier can be put on.
#[derive(Debug, Clone, Copy)]
pub enum Feed {
    /// Pods (their sentinel is never scheduled: deleted at once).
    Pods,
    /// ConfigMaps.
    ConfigMaps,
    /// ReplicaSets (their sentinel wants no pod).
    ReplicaSets,
}

/// Sentinels made so far, for unique names.
static SENTINELS: AtomicUsize = AtomicUsize::new(0);

/// Waits until kcm-rs's garbage collector has observed every change to
/// `feed`'s objects made before this call: it creates a sentinel in the
/// test's namespace naming an owner that never existed, and waits for the
/// collector to delete it. The collector can only do so once its watch of
/// the type delivered the sentinel, and a watch delivers a type's changes
/// in order.
pub async fn observed(env: &Env, feed: Feed) {
    let name = format!("gc-sentinel-{}", SENTINELS.fetch_add(1, Ordering::Relaxed) + 1);
    let (resource, mut body) = match feed {
        Feed::Pods => (
            ApiResource::erase::<Pod>(&()),
            json!({"apiVersion": "v1", "kind": "Pod", "spec": {
                "schedulerName": "no-such-scheduler",
                "containers": [{"name": "c", "image": "busybox"}]}}),
        ),
        Feed::ConfigMaps => (ApiResource::erase::<ConfigMap>(&()), json!({"apiVersion": "v1", "kind": "ConfigMap"})),
        Feed::ReplicaSets => (
            ApiResource::erase::<ReplicaSet>(&()),
            json!({"apiVersion": "apps/v1", "kind": "ReplicaSet", "spec": {"replicas": 0,
                "selector": {"matchLabels": {"gc-sentinel": name}},
                "template": {"metadata": {"labels": {"gc-sentinel": name}},
                    "spec": {"containers": [{"name": "c", "image": "busybox"}]}}}}),
        ),
    };
    body["metadata"] = json!({"name": name, "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap",
        "name": format!("{name}-owner"), "uid": "00000000-0000-4000-8000-00000000dead"}]});
    let api: Api<DynamicObject> = Api::namespaced_with(env.client.clone(), &env.ns, &resource);
    let sentinel: DynamicObject = serde_json::from_value(body).expect("a sentinel");
    api.create(&PostParams::default(), &sentinel).await.expect("the sentinel created");
    let what = format!("the garbage collector to delete {} {name}", resource.kind);
    let gone = wait_for(&env.cluster, PATIENCE, &what, || async {
        match api.get_opt(&name).await.map_err(|e| e.to_string())? {
            None => Ok(()),
            Some(left) => Err(format!("still there: {:?}", left.metadata.deletion_timestamp)),
        }
    });
    gone.await;
}
