//! The Namespace controller end to end: the real `kcm-rs` binary against
//! kube-sim and, but for the faults scenario, the testbed's
//! kube-apiserver. A namespace full of built-in objects and of a custom
//! type served at run time (a CustomResourceDefinition on the testbed) is
//! deleted with `kubectl delete ns`, passes
//! through Terminating with upstream's conditions and goes, leaving
//! nothing; a foreign finalizer holds it (and is named) until removed;
//! failing deletes and a dropped watch delay but never stop it, and it is
//! never finalized while content remains; its pods go first, and a pod
//! held by a finalizer keeps every other object (upstream's conformance
//! test of ordered namespace deletion). The namespaces deleted are the
//! test's own, named after its namespace. Every test waits on conditions,
//! never on timings.

use std::sync::{Arc, Mutex};

use futures::TryStreamExt;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Pod};
use kube::api::{Api, ApiResource, DynamicObject, ListParams, Patch, PatchParams, PostParams};
use kube::runtime::watcher;
use kube_sim::faults::{FaultRule, FaultSpec};
use kube_sim::testing::{kubectl_ok, wait_for};
use serde_json::{Value, json};

use crate::common::{Env, PATIENCE, on_both, start, widgets};

// === utils ===

/// Every namespaced type the test creates, as (apiVersion, plural, kind).
const TYPES: &[(&str, &str, &str)] = &[
    ("v1", "pods", "Pod"),
    ("apps/v1", "deployments", "Deployment"),
    ("apps/v1", "replicasets", "ReplicaSet"),
    ("v1", "services", "Service"),
    ("v1", "configmaps", "ConfigMap"),
    ("v1", "secrets", "Secret"),
    ("coordination.k8s.io/v1", "leases", "Lease"),
    ("example.com/v1", "widgets", "Widget"),
];

fn api_for(env: &Env, ns: &str, api_version: &str, plural: &str, kind: &str) -> Api<DynamicObject> {
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    let ar = ApiResource {
        group: group.into(),
        version: version.into(),
        api_version: api_version.into(),
        kind: kind.into(),
        plural: plural.into(),
    };
    Api::namespaced_with(env.client.clone(), ns, &ar)
}

async fn create(env: &Env, ns: &str, api_version: &str, plural: &str, kind: &str, body: Value) {
    let mut body = body;
    body["apiVersion"] = json!(api_version);
    body["kind"] = json!(kind);
    body["metadata"]["namespace"] = json!(ns);
    let obj: DynamicObject = serde_json::from_value(body).expect("valid object");
    api_for(env, ns, api_version, plural, kind).create(&PostParams::default(), &obj).await.expect("created");
}

/// Creates the namespace `<the test's namespace>-<name>`, a name no other
/// test uses (on the shared testbed too), and returns its name.
async fn create_namespace(env: &Env, name: &str) -> String {
    let ns = format!("{}-{name}", env.ns);
    let api: Api<Namespace> = Api::all(env.client.clone());
    let obj: Namespace = serde_json::from_value(json!({"metadata": {"name": ns}})).expect("namespace");
    api.create(&PostParams::default(), &obj).await.expect("namespace created");
    // The tests create pods in it next.
    crate::common::default_service_account(&env.cluster, &env.client, &ns).await;
    ns
}

fn pod_spec(grace: i64) -> Value {
    json!({"terminationGracePeriodSeconds": grace, "containers": [{"name": "app", "image": "registry.example.com/app:1.0"}]})
}

/// One object of every type in `TYPES` (two pods, with grace periods).
async fn populate(env: &Env, ns: &str) {
    for i in 0..2 {
        create(env, ns, "v1", "pods", "Pod", json!({"metadata": {"name": format!("pod-{i}")}, "spec": pod_spec(30)}))
            .await;
    }
    let template = json!({"metadata": {"labels": {"app": "web"}}, "spec": pod_spec(30)});
    let workload = json!({"replicas": 1, "selector": {"matchLabels": {"app": "web"}}, "template": template});
    create(env, ns, "apps/v1", "deployments", "Deployment", json!({"metadata": {"name": "web"}, "spec": workload}))
        .await;
    create(env, ns, "apps/v1", "replicasets", "ReplicaSet", json!({"metadata": {"name": "web-rs"}, "spec": workload}))
        .await;
    create(
        env,
        ns,
        "v1",
        "services",
        "Service",
        json!({"metadata": {"name": "web"}, "spec": {"ports": [{"port": 80}]}}),
    )
    .await;
    create(env, ns, "v1", "configmaps", "ConfigMap", json!({"metadata": {"name": "cfg"}, "data": {"k": "v"}})).await;
    create(env, ns, "v1", "secrets", "Secret", json!({"metadata": {"name": "s"}, "stringData": {"k": "v"}})).await;
    create(env, ns, "coordination.k8s.io/v1", "leases", "Lease", json!({"metadata": {"name": "l"}, "spec": {}})).await;
    create(env, ns, "example.com/v1", "widgets", "Widget", json!({"metadata": {"name": "w"}, "spec": {"size": 3}}))
        .await;
}

async fn kubectl_delete_ns(env: &Env, ns: &str) {
    kubectl_ok(&env.kubeconfig, &["delete", "ns", ns, "--wait=false"]).await;
}

/// Records every state of namespace `ns` a watch sees.
fn record(env: &Env, ns: &str) -> (Arc<Mutex<Vec<Namespace>>>, tokio::task::JoinHandle<()>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let api: Api<Namespace> = Api::all(env.client.clone());
    let stream = watcher(api, watcher::Config::default().fields(&format!("metadata.name={ns}")));
    let out = seen.clone();
    let task = tokio::spawn(async move {
        futures::pin_mut!(stream);
        while let Ok(Some(event)) = stream.try_next().await {
            if let watcher::Event::Apply(n) | watcher::Event::InitApply(n) = event {
                out.lock().expect("lock").push(n);
            }
        }
    });
    (seen, task)
}

fn condition<'a>(ns: &'a Namespace, type_: &str) -> Option<&'a k8s_openapi::api::core::v1::NamespaceCondition> {
    ns.status.as_ref()?.conditions.as_ref()?.iter().find(|c| c.type_ == type_)
}

/// Waits until namespace `ns` is gone.
async fn gone(env: &Env, ns: &str) {
    let api: Api<Namespace> = Api::all(env.client.clone());
    wait_for(&env.cluster, PATIENCE, &format!("namespace {ns} to be gone"), || async {
        match api.get_opt(ns).await.expect("get namespace") {
            None => Ok(()),
            Some(state) => Err(format!("{:?}", state.status)),
        }
    })
    .await;
}

/// Asserts that no object of `TYPES` is left in `ns`.
async fn nothing_left(env: &Env, ns: &str) {
    for (api_version, plural, kind) in TYPES {
        let left = api_for(env, ns, api_version, plural, kind).list(&ListParams::default()).await.expect("listed");
        let names: Vec<_> = left.items.iter().map(|o| o.metadata.name.clone()).collect();
        assert!(names.is_empty(), "{plural} left in {ns}: {names:?}");
    }
}

// === tests ===

on_both!(
    kubectl_delete_ns_empties_it_with_upstream_conditions_then_it_goes,
    a_foreign_finalizer_holds_the_namespace_and_is_named_until_removed,
    a_finalizer_held_pod_keeps_every_other_object_until_it_goes,
);

async fn kubectl_delete_ns_empties_it_with_upstream_conditions_then_it_goes() {
    let env = start().await;
    env.serve(&widgets()).await;
    let doomed = create_namespace(&env, "doomed").await;
    populate(&env, &doomed).await;
    let (seen, watch) = record(&env, &doomed);

    kubectl_delete_ns(&env, &doomed).await;
    gone(&env, &doomed).await;
    nothing_left(&env, &doomed).await;
    watch.abort();

    let seen = seen.lock().expect("lock").clone();
    assert!(
        seen.iter().any(|n| n.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Terminating")),
        "never seen Terminating"
    );
    let pods_remaining = seen.iter().filter_map(|n| condition(n, "NamespaceContentRemaining")).any(|c| {
        c.status == "True"
            && c.reason.as_deref() == Some("SomeResourcesRemain")
            && c.message.as_deref().is_some_and(|m| m.starts_with("Some resources are remaining: pods. has "))
    });
    assert!(pods_remaining, "terminating pods never named in NamespaceContentRemaining");
    let last = seen.last().expect("states seen");
    let want = [
        ("NamespaceDeletionDiscoveryFailure", "False", "ResourcesDiscovered"),
        ("NamespaceDeletionGroupVersionParsingFailure", "False", "ParsedGroupVersions"),
        ("NamespaceDeletionContentFailure", "False", "ContentDeleted"),
        ("NamespaceContentRemaining", "False", "ContentRemoved"),
        ("NamespaceFinalizersRemaining", "False", "ContentHasNoFinalizers"),
    ];
    for (type_, status, reason) in want {
        let c = condition(last, type_).unwrap_or_else(|| panic!("{type_} missing in {:?}", last.status));
        assert_eq!((c.status.as_str(), c.reason.as_deref()), (status, Some(reason)), "{type_}");
    }
}

async fn a_foreign_finalizer_holds_the_namespace_and_is_named_until_removed() {
    let env = start().await;
    env.serve(&widgets()).await;
    let held = create_namespace(&env, "held").await;
    create(
        &env,
        &held,
        "v1",
        "configmaps",
        "ConfigMap",
        json!({"metadata": {"name": "kept", "finalizers": ["example.com/x"]}}),
    )
    .await;
    create(&env, &held, "v1", "secrets", "Secret", json!({"metadata": {"name": "s"}})).await;
    kubectl_delete_ns(&env, &held).await;

    let api: Api<Namespace> = Api::all(env.client.clone());
    let want = "Some content in the namespace has finalizers remaining: example.com/x in 1 resource instances";
    wait_for(&env.cluster, PATIENCE, "the finalizer to be named", || async {
        let ns = api.get(&held).await.expect("still there while the finalizer is");
        let named = condition(&ns, "NamespaceFinalizersRemaining").is_some_and(|c| {
            c.status == "True"
                && c.reason.as_deref() == Some("SomeFinalizersRemain")
                && c.message.as_deref() == Some(want)
        });
        if named { Ok(()) } else { Err(format!("{:?}", ns.status)) }
    })
    .await;
    let ns = api.get(&held).await.expect("still there while the finalizer is");
    assert_eq!(ns.status.as_ref().and_then(|s| s.phase.as_deref()), Some("Terminating"));
    let secrets = api_for(&env, &held, "v1", "secrets", "Secret").list(&ListParams::default()).await.expect("listed");
    assert!(secrets.items.is_empty(), "other content deleted meanwhile");
    assert!(api.get_opt(&held).await.expect("get").is_some(), "held by the finalizer");

    let cms: Api<ConfigMap> = Api::namespaced(env.client.clone(), &held);
    cms.patch("kept", &PatchParams::default(), &Patch::Merge(json!({"metadata": {"finalizers": null}})))
        .await
        .expect("finalizer removed");
    gone(&env, &held).await;
    nothing_left(&env, &held).await;
}

/// kube-sim only: the deletes fail and the watch drops by kube-sim's faults
/// and controls.
#[tokio::test(flavor = "multi_thread")]
async fn failing_deletes_and_a_dropped_watch_delay_but_never_stop_deletion() {
    let env = start().await;
    env.serve(&widgets()).await;
    let faulty = create_namespace(&env, "faulty").await;
    populate(&env, &faulty).await;
    for i in 0..20 {
        create(&env, &faulty, "v1", "configmaps", "ConfigMap", json!({"metadata": {"name": format!("cm-{i}")}})).await;
    }
    kubectl_delete_ns(&env, &faulty).await;
    let rule = |verb: &str| FaultRule { verb: Some(verb.into()), error_rate: 0.2, ..Default::default() };
    env.cluster
        .controls()
        .set_faults(FaultSpec { rules: vec![rule("delete"), rule("deletecollection")] })
        .expect("faults set");
    env.cluster.controls().drop_watches();

    gone(&env, &faulty).await;
    nothing_left(&env, &faulty).await;
    env.cluster.controls().clear_faults();
}

/// Upstream's conformance test "OrderedNamespaceDeletion namespace deletion
/// should delete pod first", with Secrets and Services beside the
/// ConfigMap: while a finalizer holds the deleted namespace's pod, nothing
/// else is deleted; once it is removed, the pod, then everything, goes.
async fn a_finalizer_held_pod_keeps_every_other_object_until_it_goes() {
    let env = start().await;
    let ordered = create_namespace(&env, "ordered").await;
    let pod =
        json!({"metadata": {"name": "test-pod", "finalizers": ["e2e.example.com/finalizer"]}, "spec": pod_spec(30)});
    create(&env, &ordered, "v1", "pods", "Pod", pod).await;
    let pods: Api<Pod> = Api::namespaced(env.client.clone(), &ordered);
    wait_for(&env.cluster, PATIENCE, "the pod to run", || async {
        let phase = pods.get("test-pod").await.expect("pod").status.and_then(|s| s.phase);
        if phase.as_deref() == Some("Running") { Ok(()) } else { Err(format!("{phase:?}")) }
    })
    .await;
    let others: [(&str, &str, &str, Value); 4] = [
        ("configmaps", "ConfigMap", "test-configmap", json!({"data": {"key": "value"}})),
        ("configmaps", "ConfigMap", "second-configmap", json!({"data": {"key": "value"}})),
        ("secrets", "Secret", "test-secret", json!({"stringData": {"key": "value"}})),
        ("services", "Service", "test-service", json!({"spec": {"ports": [{"port": 80}]}})),
    ];
    for (plural, kind, name, body) in &others {
        let mut body = body.clone();
        body["metadata"] = json!({"name": name});
        create(&env, &ordered, "v1", plural, kind, body).await;
    }

    kubectl_delete_ns(&env, &ordered).await;
    let namespaces: Api<Namespace> = Api::all(env.client.clone());
    wait_for(&env.cluster, PATIENCE, "the namespace controller to report the held pod", || async {
        let ns = namespaces.get(&ordered).await.expect("held by its pod");
        let terminating = ns.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Terminating");
        let reported = condition(&ns, "NamespaceDeletionContentFailure").is_some()
            && condition(&ns, "NamespaceContentRemaining")
                .and_then(|c| c.message.as_deref())
                .is_some_and(|m| m == "Some resources are remaining: pods. has 1 resource instances");
        let deleting = pods.get("test-pod").await.expect("held by its finalizer").metadata.deletion_timestamp;
        if terminating && reported && deleting.is_some() { Ok(()) } else { Err(format!("{:?}", ns.status)) }
    })
    .await;
    let ns = namespaces.get(&ordered).await.expect("held by its pod");
    let finalizers = condition(&ns, "NamespaceFinalizersRemaining").and_then(|c| c.message.clone());
    assert_eq!(
        finalizers.as_deref(),
        Some(
            "Some content in the namespace has finalizers remaining: e2e.example.com/finalizer in 1 resource instances"
        )
    );
    for (plural, kind, name, _) in &others {
        let obj = api_for(&env, &ordered, "v1", plural, kind).get(name).await.expect("outlives the pod");
        assert_eq!(obj.metadata.deletion_timestamp, None, "{kind} {name} deleted while a pod remains");
    }

    // Read, changed and replaced again on a conflict, as upstream's pod
    // client updates: the kubelet writes the deleted pod's status meanwhile.
    wait_for(&env.cluster, PATIENCE, "the pod's finalizer to be removed", || async {
        let mut held = pods.get("test-pod").await.expect("pod");
        held.metadata.finalizers = Some(Vec::new());
        match pods.replace("test-pod", &PostParams::default(), &held).await {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(e)) if e.code == 409 => Err(e.message.clone()),
            Err(e) => panic!("finalizer not removed: {e}"),
        }
    })
    .await;
    wait_for(&env.cluster, PATIENCE, "the pod to go", || async {
        match pods.get_opt("test-pod").await.expect("get pod") {
            None => Ok(()),
            Some(p) => Err(format!("{:?}", p.metadata.finalizers)),
        }
    })
    .await;
    gone(&env, &ordered).await;
    for (plural, kind, _, _) in &others {
        let left = api_for(&env, &ordered, "v1", plural, kind).list(&ListParams::default()).await.expect("listed");
        assert!(left.items.is_empty(), "{plural} left behind");
    }
}
