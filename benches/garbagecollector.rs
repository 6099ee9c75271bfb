//! The garbage collector's memory per tracked object (`cargo bench --bench
//! garbagecollector`): the dependency graph holding 100,000 objects as a
//! cluster has them, 1,000 Deployments owning 1,000 ReplicaSets owning 98
//! pods each, over 10 namespaces, with UUID uids and generated names.
//!
//! The growth of the process's resident memory measures what the graph
//! holds (everything the
//! collector keeps per object: its own metadata-only watches keep no other
//! cache, and types shared with a typed informer add nothing to it). For
//! scale, the same pods as full typed objects are measured too (what a
//! full-object informer would hold). Also: the time to build the graph, and
//! to process the deletion of every ReplicaSet.

use std::time::Instant;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kcm_controllers::garbagecollector::graph::Graph;
use serde_json::json;

/// This process's resident memory, in bytes (`VmRSS`). The inputs are
/// built and touched before the first reading, so the growth between two
/// readings is what the structure built in between holds (to a page).
fn resident() -> usize {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<usize>().ok())
        .map_or(0, |kib| kib * 1024)
}

const DEPLOYMENTS: usize = 1_000;
const PODS_PER_REPLICA_SET: usize = 98;
const NAMESPACES: usize = 10;

/// A deterministic UUID-shaped uid.
fn uid(kind: u8, i: usize) -> String {
    format!("{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}", i, kind, i % 4096, (i / 7) % 4096, i.wrapping_mul(2_654_435_761))
}

fn reference(api_version: &str, kind: &str, name: &str, uid: &str) -> OwnerReference {
    OwnerReference {
        api_version: api_version.into(),
        kind: kind.into(),
        name: name.into(),
        uid: uid.into(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

/// One object: (apiVersion, kind, metadata) as a watch delivers it.
type Object = (&'static str, &'static str, ObjectMeta);

fn cluster() -> Vec<Object> {
    let mut objects = Vec::with_capacity(DEPLOYMENTS * (2 + PODS_PER_REPLICA_SET));
    for d in 0..DEPLOYMENTS {
        let namespace = format!("team-{}", d % NAMESPACES);
        let deployment = format!("service-{d:04}");
        let (d_uid, rs_uid) = (uid(1, d), uid(2, d));
        let rs = format!("{deployment}-7d9f8c6b5");
        let meta = |name: &str, uid: &str, owner: Option<OwnerReference>| ObjectMeta {
            name: Some(name.into()),
            namespace: Some(namespace.clone()),
            uid: Some(uid.into()),
            resource_version: Some("12345".into()),
            owner_references: owner.map(|o| vec![o]),
            ..ObjectMeta::default()
        };
        objects.push(("apps/v1", "Deployment", meta(&deployment, &d_uid, None)));
        objects.push((
            "apps/v1",
            "ReplicaSet",
            meta(&rs, &rs_uid, Some(reference("apps/v1", "Deployment", &deployment, &d_uid))),
        ));
        for p in 0..PODS_PER_REPLICA_SET {
            let pod = format!("{rs}-{:05x}", p * 7919 % 0xfffff);
            let pod_uid = uid(3, d * PODS_PER_REPLICA_SET + p);
            objects.push(("v1", "Pod", meta(&pod, &pod_uid, Some(reference("apps/v1", "ReplicaSet", &rs, &rs_uid)))));
        }
    }
    objects
}

/// A typical pod as the API server returns it (about 2.5 KB of JSON).
fn full_pod(meta: &ObjectMeta) -> Pod {
    let mut pod: Pod = serde_json::from_value(json!({
        "metadata": {"labels": {"app": "service", "pod-template-hash": "7d9f8c6b5"},
            "annotations": {"kubectl.kubernetes.io/restartedAt": "2026-11-29T10:00:00Z"},
            "creationTimestamp": "2026-11-29T10:00:00Z", "generateName": "service-7d9f8c6b5-"},
        "spec": {"nodeName": "node-1", "serviceAccountName": "default", "restartPolicy": "Always",
            "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst", "schedulerName": "default-scheduler",
            "containers": [{"name": "app", "image": "registry.example.com/service:1.0", "imagePullPolicy": "IfNotPresent",
                "ports": [{"containerPort": 8080, "protocol": "TCP"}],
                "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"memory": "256Mi"}},
                "env": [{"name": "MODE", "value": "production"}, {"name": "PORT", "value": "8080"}],
                "volumeMounts": [{"name": "kube-api-access", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "readOnly": true}],
                "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File"}],
            "volumes": [{"name": "kube-api-access", "projected": {"defaultMode": 420, "sources": [
                {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}}]}}],
            "tolerations": [
                {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
                {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}]},
        "status": {"phase": "Running", "hostIP": "10.0.0.1", "podIP": "10.244.1.17", "startTime": "2026-11-29T10:00:01Z",
            "qosClass": "Burstable",
            "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2026-11-29T10:00:05Z"},
                {"type": "ContainersReady", "status": "True", "lastTransitionTime": "2026-11-29T10:00:05Z"},
                {"type": "PodScheduled", "status": "True", "lastTransitionTime": "2026-11-29T10:00:00Z"}],
            "containerStatuses": [{"name": "app", "ready": true, "restartCount": 0, "started": true,
                "image": "registry.example.com/service:1.0", "imageID": "registry.example.com/service@sha256:0123456789abcdef",
                "containerID": "containerd://0123456789abcdef0123456789abcdef",
                "state": {"running": {"startedAt": "2026-11-29T10:00:04Z"}}}]},
    }))
    .expect("a valid pod");
    let labels = pod.metadata.labels.take();
    let annotations = pod.metadata.annotations.take();
    pod.metadata = ObjectMeta { labels, annotations, ..meta.clone() };
    pod
}

fn mib(bytes: usize) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

fn main() {
    let objects = cluster();
    let n = objects.len();

    let before = resident();
    let started = Instant::now();
    let mut graph = Graph::new();
    let mut effects = 0;
    for (api_version, kind, meta) in &objects {
        effects += graph.observe(api_version, kind, meta).expect("has a uid").len();
    }
    let build = started.elapsed();
    let held = resident().saturating_sub(before);
    assert_eq!(graph.len(), n);

    // Nothing measured is freed before the last reading: freed memory
    // would be reused without growing the resident set.
    // Dependents first (the order a restart's parallel lists may give):
    // virtual owners, then their observation.
    let before_reverse = resident();
    let mut reverse = Graph::new();
    for (api_version, kind, meta) in objects.iter().rev() {
        reverse.observe(api_version, kind, meta).expect("has a uid");
    }
    let held_reverse = resident().saturating_sub(before_reverse);
    assert_eq!(reverse.len(), n);

    // For scale: 1,000 of the pods as full typed objects.
    let sample: Vec<&ObjectMeta> =
        objects.iter().filter(|(_, k, _)| *k == "Pod").map(|(_, _, m)| m).take(1_000).collect();
    let before_full = resident();
    let full: Vec<Pod> = sample.iter().map(|m| full_pod(m)).collect();
    let full_bytes = (resident().saturating_sub(before_full)) / full.len();

    // Every ReplicaSet deleted: the graph queues each of its pods.
    let started = Instant::now();
    let mut queued = 0;
    for (api_version, kind, meta) in objects.iter().filter(|(_, k, _)| *k == "ReplicaSet") {
        queued += graph.observe_delete(api_version, kind, meta).expect("has a uid").len();
    }
    let cascade = started.elapsed();
    assert_eq!(queued, DEPLOYMENTS * PODS_PER_REPLICA_SET);

    println!(
        "garbage collector dependency graph, {n} objects ({DEPLOYMENTS} Deployments, {DEPLOYMENTS} ReplicaSets, {} pods, {NAMESPACES} namespaces)",
        DEPLOYMENTS * PODS_PER_REPLICA_SET
    );
    println!("  resident memory of the graph:    {:.1} MiB = {} bytes per object", mib(held), held / n);
    println!("  built dependents first:          {:.1} MiB = {} bytes per object", mib(held_reverse), held_reverse / n);
    println!("  full typed Pod, for comparison:  {full_bytes} bytes per pod");
    println!(
        "  build: {:.0} ms ({:.2} µs per object, {effects} effects)",
        build.as_secs_f64() * 1e3,
        build.as_secs_f64() * 1e6 / n as f64
    );
    println!("  {DEPLOYMENTS} ReplicaSets deleted: {:.0} ms, {queued} dependents queued", cascade.as_secs_f64() * 1e3);
}
