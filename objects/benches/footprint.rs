//! Heap bytes per cached pod (`cargo bench -p kcm-objects`): decodes
//! 100,000 typical pods, as the API server returns a running
//! Deployment-made pod (2 managedFields entries, the default tolerations,
//! five conditions, a container status), 10 per ReplicaSet over 1,000
//! nodes, and holds them as an informer cache does (`Arc` values in a map
//! keyed by `namespace/name`). Reports the resident memory each form adds
//! per pod, each measured in a process of its own (so neither reuses the
//! other's freed memory): the full k8s-openapi `Pod` (without
//! managedFields, as kcm-rs trimmed it before) and the slim
//! [`kcm_objects::Pod`].

use std::collections::HashMap;
use std::process::Command;
use std::sync::Arc;

use kcm_objects::Cached;
use serde_json::json;

/// Pods decoded.
const PODS: usize = 100_000;

/// The JSON of pod `i`, as a list or watch returns it.
fn pod_json(i: usize) -> String {
    let rs = format!("web-{:04}-7c5ddbdf54", i / 10);
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "name": format!("{rs}-{i:06}"), "generateName": format!("{rs}-"), "namespace": "payments",
            "uid": format!("0f3c{i:04x}-9a51-4a59-a4a5-2f0e8c1d3b6a"), "resourceVersion": format!("{}", 100_000 + i),
            "creationTimestamp": "2026-12-01T08:00:00Z",
            "labels": {"app": format!("web-{:04}", i / 10), "pod-template-hash": "7c5ddbdf54", "tier": "frontend"},
            "annotations": {"prometheus.io/scrape": "true", "prometheus.io/port": "9102"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": rs,
                "uid": format!("7d4c{:04x}-9a51-4a59-a4a5-2f0e8c1d3b6a", i / 10), "controller": true, "blockOwnerDeletion": true}],
            "managedFields": [
                {"manager": "kube-controller-manager", "operation": "Update", "apiVersion": "v1", "time": "2026-12-01T08:00:00Z",
                 "fieldsType": "FieldsV1", "fieldsV1": {"f:metadata": {"f:generateName": {}, "f:labels": {".": {}, "f:app": {}}}}},
                {"manager": "kubelet", "operation": "Update", "apiVersion": "v1", "time": "2026-12-01T08:00:05Z",
                 "fieldsType": "FieldsV1", "subresource": "status", "fieldsV1": {"f:status": {"f:conditions": {}, "f:podIP": {}}}},
            ],
        },
        "spec": {
            "containers": [{
                "name": "web", "image": "registry.example.com/payments/web:1.42.7",
                "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}],
                "env": [{"name": "LOG_LEVEL", "value": "info"}],
                "resources": {"requests": {"cpu": "250m", "memory": "256Mi"}, "limits": {"memory": "512Mi"}},
                "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8080, "scheme": "HTTP"}, "periodSeconds": 5,
                    "timeoutSeconds": 1, "successThreshold": 1, "failureThreshold": 3},
                "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
                "imagePullPolicy": "IfNotPresent",
                "volumeMounts": [{"name": "kube-api-access", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "readOnly": true}],
            }],
            "volumes": [{"name": "kube-api-access", "projected": {"defaultMode": 420, "sources": [
                {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}}]}}],
            "nodeName": format!("node-{:04}", i % 1000),
            "restartPolicy": "Always", "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
            "serviceAccountName": "default", "serviceAccount": "default", "schedulerName": "default-scheduler",
            "securityContext": {}, "enableServiceLinks": true, "preemptionPolicy": "PreemptLowerPriority", "priority": 0,
            "tolerations": [
                {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
                {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
            ],
        },
        "status": {
            "phase": "Running", "hostIP": "10.0.3.17", "hostIPs": [{"ip": "10.0.3.17"}],
            "podIP": format!("10.244.{}.{}", i / 250 % 256, i % 250), "podIPs": [{"ip": format!("10.244.{}.{}", i / 250 % 256, i % 250)}],
            "qosClass": "Burstable", "startTime": "2026-12-01T08:00:00Z",
            "conditions": conditions(),
            "containerStatuses": [{"name": "web", "ready": true, "started": true, "restartCount": 0,
                "image": "registry.example.com/payments/web:1.42.7",
                "imageID": "registry.example.com/payments/web@sha256:4f5e6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f",
                "containerID": format!("containerd://{i:064x}"),
                "state": {"running": {"startedAt": "2026-12-01T08:00:04Z"}}, "lastState": {}}],
        },
    })
    .to_string()
}

/// A running pod's five conditions.
fn conditions() -> serde_json::Value {
    ["PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled"]
        .iter()
        .map(|t| json!({"type": t, "status": "True", "lastProbeTime": null, "lastTransitionTime": "2026-12-01T08:00:05Z"}))
        .collect()
}

/// This process's resident memory in bytes.
fn resident() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("procfs");
    let kib: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS");
    kib * 1024.0
}

/// Resident bytes added per pod when `K` caches them.
fn bytes_per_pod<K: Cached>(bodies: &[String]) -> f64 {
    let before = resident();
    let mut cache: HashMap<Arc<str>, Arc<K>> = HashMap::new();
    for body in bodies {
        let wire: K::Wire = serde_json::from_str(body).expect("a pod");
        let obj = K::from_wire(wire);
        let key = format!("{}/{}", obj.namespace().unwrap_or_default(), obj.name());
        cache.insert(Arc::from(key), Arc::new(obj));
    }
    let added = resident() - before;
    assert_eq!(cache.len(), bodies.len());
    added / bodies.len() as f64
}

/// Measures one form in this process (`footprint full|slim`), or both,
/// each in a child process, and prints the table.
fn main() {
    let form = std::env::args().skip(1).find(|a| a == "full" || a == "slim");
    if let Some(form) = form {
        let bodies: Vec<String> = (0..PODS).map(pod_json).collect();
        let per_pod = match form.as_str() {
            "full" => bytes_per_pod::<k8s_openapi::api::core::v1::Pod>(&bodies),
            _ => bytes_per_pod::<kcm_objects::Pod>(&bodies),
        };
        let json = bodies.iter().map(String::len).sum::<usize>() / PODS;
        println!("{per_pod:.0} {json}");
        return;
    }
    let measure = |form: &str| -> (String, String) {
        let out = Command::new(std::env::current_exe().expect("own path")).arg(form).output().expect("runs");
        let text = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        let (bytes, json) = text.split_once(' ').expect("two figures");
        (bytes.to_owned(), json.to_owned())
    };
    let ((full, json), (slim, _)) = (measure("full"), measure("slim"));
    println!("| form ({PODS} pods, {json} bytes of JSON each) | resident bytes per cached pod |");
    println!("|---|---|");
    println!("| k8s-openapi Pod, managedFields trimmed | {full} |");
    println!("| kcm_objects::Pod | {slim} |");
}
