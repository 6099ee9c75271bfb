//! Resident bytes per cached object (`cargo bench -p kcm-objects`).
//!
//! Pods: decodes
//! 100,000 typical pods, as the API server returns a running
//! Deployment-made pod (2 managedFields entries, the default tolerations,
//! five conditions, a container status), 10 per ReplicaSet over 1,000
//! nodes, and holds them as an informer cache does (`Arc` values in a map
//! keyed by `namespace/name`). Reports the resident memory each form adds
//! per pod, each measured in a process of its own (so neither reuses the
//! other's freed memory): the full k8s-openapi `Pod` (without
//! managedFields, as kcm-rs trimmed it before) and the slim
//! [`kcm_objects::Pod`].
//!
//! ReplicaSets: 10,000 Deployment-made ReplicaSets (a defaulted template
//! of one container with an environment, resources, probes and three
//! volumes), held as the full k8s-openapi `ReplicaSet` (what kcm-rs cached
//! before) and as [`kcm_objects::ReplicaSet`], its metadata's maps shared
//! and its template (metadata and spec) as JSON.
//!
//! Jobs: 10,000 completed CronJob-made Jobs (a defaulted template of one
//! container with a command, an environment, resources and a volume), held
//! as the full k8s-openapi `Job` (what kcm-rs cached before) and as
//! [`kcm_objects::Job`], its template's spec as JSON.
//!
//! Secrets: 10,000 Helm release Secrets (16 KiB of release data each, as
//! Helm stores a release), held as the full k8s-openapi `Secret` (without
//! managedFields, as kcm-rs cached them before) and as the trimmed
//! [`kcm_objects::Secret`].

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

/// Helm release Secrets decoded.
const SECRETS: usize = 10_000;

/// The JSON of Helm release Secret `i` (release `i / 10`, revision
/// `i % 10 + 1`).
fn secret_json(i: usize) -> String {
    let (release, revision) = (format!("app-{:04}", i / 10), i % 10 + 1);
    let data: String = (0..16 * 1024).map(|k| char::from(b'A' + ((k * 7 + i) % 26) as u8)).collect();
    json!({
        "apiVersion": "v1", "kind": "Secret", "type": "helm.sh/release.v1",
        "metadata": {
            "name": format!("sh.helm.release.v1.{release}.v{revision}"), "namespace": "apps",
            "uid": format!("5e1d{i:04x}-9a51-4a59-a4a5-2f0e8c1d3b6a"), "resourceVersion": format!("{}", 300_000 + i),
            "creationTimestamp": "2026-12-01T08:00:00Z",
            "labels": {"name": release, "owner": "helm", "status": "superseded", "version": revision.to_string()},
            "managedFields": [{"manager": "helm", "operation": "Update", "apiVersion": "v1", "time": "2026-12-01T08:00:00Z",
                "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {".": {}, "f:release": {}}, "f:type": {}}}],
        },
        "data": {"release": data},
    })
    .to_string()
}

/// ReplicaSets decoded.
const REPLICA_SETS: usize = 10_000;

/// The JSON of ReplicaSet `i`, as the API server returns a Deployment's
/// (its defaulted template: an application container with an environment,
/// resources and probes, three volumes).
fn replica_set_json(i: usize) -> String {
    let app = format!("web-{i:04}");
    let env: Vec<serde_json::Value> = ["LOG_LEVEL", "DB_HOST", "DB_PORT", "CACHE_URL", "FEATURE_FLAGS", "REGION"]
        .iter()
        .map(|name| json!({"name": name, "value": format!("{name}-value-{i}")}))
        .collect();
    let probe = json!({"httpGet": {"path": "/healthz", "port": 8080, "scheme": "HTTP"}, "periodSeconds": 10,
        "timeoutSeconds": 1, "successThreshold": 1, "failureThreshold": 3});
    json!({
        "apiVersion": "apps/v1", "kind": "ReplicaSet",
        "metadata": {
            "name": format!("{app}-7c5ddbdf54"), "namespace": "payments",
            "uid": format!("7d4c{i:04x}-9a51-4a59-a4a5-2f0e8c1d3b6a"), "resourceVersion": format!("{}", 200_000 + i),
            "generation": 1, "creationTimestamp": "2026-12-01T08:00:00Z",
            "labels": {"app": app, "pod-template-hash": "7c5ddbdf54", "tier": "frontend"},
            "annotations": {"deployment.kubernetes.io/desired-replicas": "10", "deployment.kubernetes.io/max-replicas": "13",
                "deployment.kubernetes.io/revision": "1"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": app,
                "uid": format!("5a1b{i:04x}-9a51-4a59-a4a5-2f0e8c1d3b6a"), "controller": true, "blockOwnerDeletion": true}],
            "managedFields": [{"manager": "kube-controller-manager", "operation": "Update", "apiVersion": "apps/v1",
                "time": "2026-12-01T08:00:00Z", "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:replicas": {}}}}],
        },
        "spec": {
            "replicas": 10,
            "selector": {"matchLabels": {"app": app, "pod-template-hash": "7c5ddbdf54"}},
            "template": {
                "metadata": {"labels": {"app": app, "pod-template-hash": "7c5ddbdf54", "tier": "frontend"},
                    "annotations": {"prometheus.io/scrape": "true", "prometheus.io/port": "9102"}},
                "spec": {
                    "containers": [{
                        "name": "web", "image": "registry.example.com/payments/web:1.42.7",
                        "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}],
                        "env": env,
                        "resources": {"requests": {"cpu": "250m", "memory": "256Mi"}, "limits": {"memory": "512Mi"}},
                        "readinessProbe": probe, "livenessProbe": probe,
                        "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
                        "imagePullPolicy": "IfNotPresent",
                        "volumeMounts": [{"name": "config", "mountPath": "/etc/web"}, {"name": "scratch", "mountPath": "/tmp"},
                            {"name": "tls", "mountPath": "/etc/tls", "readOnly": true}],
                    }],
                    "volumes": [
                        {"name": "config", "configMap": {"name": format!("{app}-config"), "defaultMode": 420}},
                        {"name": "scratch", "emptyDir": {}},
                        {"name": "tls", "secret": {"secretName": format!("{app}-tls"), "defaultMode": 420}},
                    ],
                    "restartPolicy": "Always", "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
                    "securityContext": {}, "schedulerName": "default-scheduler",
                },
            },
        },
        "status": {"replicas": 10, "fullyLabeledReplicas": 10, "readyReplicas": 10, "availableReplicas": 10,
            "observedGeneration": 1},
    })
    .to_string()
}

/// Jobs decoded.
const JOBS: usize = 10_000;

/// The JSON of Job `i`, as the API server returns one a CronJob made and
/// that completed (its defaulted template: a container with a command, an
/// environment, resources and a volume).
fn job_json(i: usize) -> String {
    let name = format!("report-{}", 29_000_000 + i);
    let uid = format!("3c2b{i:04x}-9a51-4a59-a4a5-2f0e8c1d3b6a");
    let labels = json!({"batch.kubernetes.io/controller-uid": uid, "batch.kubernetes.io/job-name": name,
        "controller-uid": uid, "job-name": name});
    let env: Vec<serde_json::Value> = ["REPORT_KIND", "DB_HOST", "DB_PORT", "BUCKET"]
        .iter()
        .map(|env| json!({"name": env, "value": format!("{env}-value-{i}")}))
        .collect();
    let condition = |t: &str| {
        json!({"type": t, "status": "True", "lastProbeTime": "2026-12-01T08:01:00Z",
        "lastTransitionTime": "2026-12-01T08:01:00Z", "reason": "CompletionsReached", "message": "Reached expected number of succeeded pods"})
    };
    json!({
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {
            "name": name, "namespace": "reports", "uid": uid, "resourceVersion": format!("{}", 400_000 + i),
            "generation": 1, "creationTimestamp": "2026-12-01T08:00:00Z", "labels": labels,
            "annotations": {"batch.kubernetes.io/cronjob-scheduled-timestamp": "2026-12-01T08:00:00Z"},
            "ownerReferences": [{"apiVersion": "batch/v1", "kind": "CronJob", "name": "report",
                "uid": "9e8d7c6b-9a51-4a59-a4a5-2f0e8c1d3b6a", "controller": true, "blockOwnerDeletion": true}],
            "managedFields": [{"manager": "kube-controller-manager", "operation": "Update", "apiVersion": "batch/v1",
                "time": "2026-12-01T08:01:00Z", "fieldsType": "FieldsV1", "fieldsV1": {"f:status": {"f:succeeded": {}}}}],
        },
        "spec": {
            "parallelism": 1, "completions": 1, "backoffLimit": 6, "completionMode": "NonIndexed", "suspend": false,
            "manualSelector": false, "podReplacementPolicy": "TerminatingOrFailed",
            "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "containers": [{
                        "name": "report", "image": "registry.example.com/reports/report:3.1.0",
                        "command": ["/bin/report"], "args": ["--kind=daily", "--upload"],
                        "env": env,
                        "resources": {"requests": {"cpu": "500m", "memory": "256Mi"}, "limits": {"memory": "1Gi"}},
                        "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
                        "imagePullPolicy": "IfNotPresent",
                        "volumeMounts": [{"name": "scratch", "mountPath": "/tmp"}],
                    }],
                    "volumes": [{"name": "scratch", "emptyDir": {}}],
                    "restartPolicy": "OnFailure", "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
                    "securityContext": {}, "schedulerName": "default-scheduler",
                },
            },
        },
        "status": {"startTime": "2026-12-01T08:00:00Z", "completionTime": "2026-12-01T08:01:00Z", "succeeded": 1,
            "ready": 0, "terminating": 0, "uncountedTerminatedPods": {},
            "conditions": [condition("SuccessCriteriaMet"), condition("Complete")]},
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

/// Resident bytes added per object when `K` caches the objects of
/// `bodies`.
fn bytes_per_object<K: Cached>(bodies: &[String]) -> f64 {
    let before = resident();
    let mut cache: HashMap<Arc<str>, Arc<K>> = HashMap::new();
    for body in bodies {
        let wire: K::Wire = serde_json::from_str(body).expect("an object");
        let obj = K::from_wire(wire);
        let key = format!("{}/{}", obj.namespace().unwrap_or_default(), obj.name());
        cache.insert(Arc::from(key), Arc::new(obj));
    }
    let added = resident() - before;
    assert_eq!(cache.len(), bodies.len());
    added / bodies.len() as f64
}

/// The bodies of `count` objects made by `body`, and the resident bytes
/// per object when `K` caches them.
fn measure<K: Cached>(count: usize, body: fn(usize) -> String) -> (Vec<String>, f64) {
    let bodies: Vec<String> = (0..count).map(body).collect();
    let per_object = bytes_per_object::<K>(&bodies);
    (bodies, per_object)
}

/// The forms measured: the argument that names one, and what it caches.
const FORMS: [(&str, &str); 8] = [
    ("pod-full", "k8s-openapi Pod, managedFields trimmed"),
    ("pod-slim", "kcm_objects::Pod"),
    ("rs-full", "k8s-openapi ReplicaSet, managedFields trimmed"),
    ("rs-cached", "kcm_objects::ReplicaSet (metadata shared, template as JSON)"),
    ("job-full", "k8s-openapi Job, managedFields trimmed"),
    ("job-cached", "kcm_objects::Job (template spec as JSON)"),
    ("secret-full", "k8s-openapi Secret (Helm release), managedFields trimmed"),
    ("secret-trimmed", "kcm_objects::Secret (Helm release)"),
];

/// Measures one form in this process (`footprint <form>`), or every form,
/// each in a child process, and prints the table.
fn main() {
    let form = std::env::args().skip(1).find(|a| FORMS.iter().any(|(f, _)| f == a));
    if let Some(form) = form {
        let (bodies, per_object) = match form.as_str() {
            "pod-full" => measure::<k8s_openapi::api::core::v1::Pod>(PODS, pod_json),
            "pod-slim" => measure::<kcm_objects::Pod>(PODS, pod_json),
            "rs-full" => measure::<k8s_openapi::api::apps::v1::ReplicaSet>(REPLICA_SETS, replica_set_json),
            "rs-cached" => measure::<kcm_objects::ReplicaSet>(REPLICA_SETS, replica_set_json),
            "job-full" => measure::<k8s_openapi::api::batch::v1::Job>(JOBS, job_json),
            "job-cached" => measure::<kcm_objects::Job>(JOBS, job_json),
            "secret-full" => measure::<k8s_openapi::api::core::v1::Secret>(SECRETS, secret_json),
            _ => measure::<kcm_objects::Secret>(SECRETS, secret_json),
        };
        let json = bodies.iter().map(String::len).sum::<usize>() / bodies.len();
        println!("{per_object:.0} {} {json}", bodies.len());
        return;
    }
    println!("| form | objects | bytes of JSON each | resident bytes per cached object |");
    println!("|---|---|---|---|");
    for (form, what) in FORMS {
        let out = Command::new(std::env::current_exe().expect("own path")).arg(form).output().expect("runs");
        let text = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        let figures: Vec<&str> = text.split(' ').collect();
        let [bytes, count, json] = figures[..] else { panic!("three figures from {form}: {text}") };
        println!("| {what} | {count} | {json} | {bytes} |");
    }
}
