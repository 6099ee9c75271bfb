//! The objects of the scale benchmark: a typical Deployment (the pod of
//! kube-sim's throughput benchmark as its template), and converged
//! Deployments, ReplicaSets and pods made straight through the API, shaped
//! after what kcm-rs itself leaves behind for one Deployment (a
//! calibration run, [`Converged::calibrate`]), so that kcm-rs finds
//! nothing to write when it starts on them.

use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use k8s_openapi::api::core::v1::{ConfigMap, Pod, Secret};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kcm_controllers::common::template_hash::compute_hash;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use kube_sim::{Sim, SimConfig};
use serde_json::{Value, json};

use crate::common;
use crate::observe;

/// The namespace everything lives in.
pub const NAMESPACE: &str = "default";
/// The label upstream names a ReplicaSet's template revision with.
const HASH_LABEL: &str = "pod-template-hash";

/// Deployments of the cached scenarios (the scale benchmark's and the
/// side-by-side's) at `KCM_SCALE=1`.
pub const CACHED_DEPLOYMENTS: usize = 10_000;
/// Nodes of the cached scenarios at `KCM_SCALE=1`.
pub const CACHED_NODES: usize = 1_000;
/// Replicas of each Deployment of the cached scenarios.
pub const CACHED_REPLICAS: i32 = 10;

/// The node pod `j` of the `i`th cached Deployment runs on, of `nodes`
/// (`node-1` ...): the pods spread evenly.
pub fn cached_node(i: usize, j: usize, nodes: usize) -> String {
    format!("node-{}", (i * CACHED_REPLICAS as usize + j) % nodes + 1)
}

/// The `i`th Deployment's name.
pub fn name(i: usize) -> String {
    format!("d-{i:05}")
}

/// The image of version `version`.
pub fn image(version: &str) -> String {
    format!("registry.example.com/payments/web:{version}")
}

/// A Deployment whose template is a typical pod (labels, annotations, two
/// ports, env from fields and a Secret, requests and limits, probes, a
/// ConfigMap volume, pod anti-affinity: about 2.8 KB once stored).
pub fn deployment(name: &str, replicas: i32, image: &str) -> Deployment {
    serde_json::from_value(json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {
                    "labels": {"app": name, "tier": "frontend", "team": "payments"},
                    "annotations": {"prometheus.io/scrape": "true", "prometheus.io/port": "9102"},
                },
                "spec": {
                    "containers": [{
                        "name": "web", "image": image,
                        "ports": [{"name": "http", "containerPort": 8080}, {"name": "metrics", "containerPort": 9102}],
                        "env": [
                            {"name": "LOG_LEVEL", "value": "info"},
                            {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                            {"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
                            {"name": "DATABASE_URL", "valueFrom": {"secretKeyRef": {"name": "web-db", "key": "url"}}},
                        ],
                        "resources": {"requests": {"cpu": "250m", "memory": "256Mi"}, "limits": {"memory": "512Mi"}},
                        "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8080}, "periodSeconds": 5},
                        "livenessProbe": {"httpGet": {"path": "/livez", "port": 8080}, "initialDelaySeconds": 10},
                        "volumeMounts": [{"name": "config", "mountPath": "/etc/web"}],
                    }],
                    "volumes": [{"name": "config", "configMap": {"name": "web-config"}}],
                    "affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{
                        "weight": 100, "podAffinityTerm": {"topologyKey": "kubernetes.io/hostname",
                            "labelSelector": {"matchLabels": {"app": name}}}}]}},
                },
            },
        },
    }))
    .expect("a valid Deployment")
}

/// `labels` with the `pod-template-hash` label set to `hash`.
fn with_hash(labels: Option<&std::collections::BTreeMap<String, String>>, hash: &str) -> Value {
    let mut labels = labels.cloned().unwrap_or_default();
    labels.insert(HASH_LABEL.into(), hash.into());
    json!(labels)
}

/// Creates what the pods of [`deployment`] mount and read, the ConfigMap
/// `web-config` and the Secret `web-db`, as a cluster running such pods
/// holds them: kube-sim's kubelet, like a kubelet, leaves a pod whose
/// ConfigMap volume is missing `ContainerCreating`.
pub async fn create_template_sources(client: &kube::Client) {
    let config: ConfigMap = serde_json::from_value(json!({
        "metadata": {"name": "web-config", "namespace": NAMESPACE}, "data": {"web.yaml": "port: 8080"}}))
    .expect("a ConfigMap");
    Api::<ConfigMap>::namespaced(client.clone(), NAMESPACE)
        .create(&PostParams::default(), &config)
        .await
        .expect("the pods' ConfigMap created");
    let secret: Secret = serde_json::from_value(json!({
        "metadata": {"name": "web-db", "namespace": NAMESPACE}, "data": {"url": "cG9zdGdyZXM6Ly9kYi93ZWI="}}))
    .expect("a Secret");
    Api::<Secret>::namespaced(client.clone(), NAMESPACE)
        .create(&PostParams::default(), &secret)
        .await
        .expect("the pods' Secret created");
}

/// A converged Deployment as kcm-rs leaves it (10 replicas, one
/// ReplicaSet, every pod Running and Ready), taken from a calibration run:
/// what the objects made for the scale run copy.
pub struct Converged {
    /// The Deployment, with status.
    deployment: Deployment,
    /// Its ReplicaSet, with status.
    replica_set: ReplicaSet,
    /// One of its pods.
    pod: Pod,
}

impl Converged {
    /// Runs kcm-rs (all default controllers) against a 3-node kube-sim of
    /// its own, creates one Deployment of `replicas`, waits until kcm-rs has
    /// converged it and stopped writing, and keeps what it made. Checks that
    /// [`Converged::objects`] reproduces kcm-rs's ReplicaSet from the
    /// Deployment (labels, selector, template, hash).
    pub async fn calibrate(replicas: i32) -> Converged {
        let sim = Sim::start(SimConfig::default()).await.expect("kube-sim starts");
        create_template_sources(&sim.client().expect("client")).await;
        let (dir, kubeconfig) = common::kubeconfig(&sim);
        let log = dir.path().join("kcm-rs.log");
        let started = std::time::Instant::now();
        let (mut daemon, port) = common::kcm_rs_serving(&kubeconfig, &log, &["--kube-api-qps=0"]);
        common::wait_ready(port, &log, started, Duration::from_secs(60)).await;
        let client = sim.client().expect("client");
        let deployments: Api<Deployment> = Api::namespaced(client.clone(), NAMESPACE);
        let name = name(0);
        deployments.create(&PostParams::default(), &deployment(&name, replicas, &image("1.0"))).await.expect("created");
        let start = std::time::Instant::now();
        loop {
            let d = deployments.get(&name).await.expect("read");
            if observe::complete(&serde_json::to_vec(&d).expect("encodes"), replicas, &image("1.0")) {
                break;
            }
            assert!(start.elapsed() < Duration::from_secs(60), "calibration Deployment not complete: {d:?}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        observe::quiet(&sim, Duration::from_secs(2), Duration::from_secs(60)).await;
        let deployment = deployments.get(&name).await.expect("read");
        let replica_set = Api::<ReplicaSet>::namespaced(client.clone(), NAMESPACE)
            .list(&ListParams::default())
            .await
            .expect("listed")
            .items
            .pop()
            .expect("one ReplicaSet");
        let pod = Api::<Pod>::namespaced(client, NAMESPACE)
            .list(&ListParams::default())
            .await
            .expect("listed")
            .items
            .remove(0);
        let _ = daemon.kill().await;
        let converged = Converged { deployment, replica_set, pod };
        converged.check();
        converged
    }

    /// Panics unless the rules of [`Converged::objects`] give back the
    /// calibration's own ReplicaSet from its Deployment.
    fn check(&self) {
        let hash = self.hash_of(&self.deployment);
        let labels = |m: &ObjectMeta| m.labels.clone().unwrap_or_default();
        let rs = &self.replica_set;
        assert_eq!(rs.metadata.name.as_deref(), Some(format!("{}-{hash}", name(0)).as_str()), "ReplicaSet name");
        let built = self.replica_set_for(&self.deployment, &hash);
        let (rs_spec, built_spec) = (json!(rs.spec), json!(built.spec));
        assert_eq!(rs_spec, built_spec, "ReplicaSet spec as kcm-rs makes it");
        assert_eq!(labels(&rs.metadata), labels(&built.metadata), "ReplicaSet labels");
        let template_labels = rs.spec.template.as_ref().map(|t| labels(t.metadata.as_ref().expect("metadata")));
        assert_eq!(Some(labels(&self.pod.metadata)), template_labels, "pod labels are the template's");
    }

    /// The pod-template hash kcm-rs names `d`'s ReplicaSet with.
    fn hash_of(&self, d: &Deployment) -> String {
        let spec = &d.spec;
        compute_hash(&spec.template, d.status.as_ref().and_then(|s| s.collision_count))
    }

    /// The converged ReplicaSet of `d` (as stored: uid, generation and
    /// template defaults), named with `hash`, as kcm-rs would have made it.
    fn replica_set_for(&self, d: &Deployment, hash: &str) -> ReplicaSet {
        let name = d.metadata.name.clone().expect("named");
        let spec = &d.spec;
        let sample = &self.replica_set;
        let mut owner = sample.metadata.owner_references.clone().expect("owned").remove(0);
        owner.name.clone_from(&name);
        owner.uid = d.metadata.uid.clone().expect("uid");
        let mut template = json!(spec.template);
        template["metadata"]["labels"] =
            with_hash(spec.template.metadata.as_ref().and_then(|m| m.labels.as_ref()), hash);
        let mut rs_spec = json!(sample.spec);
        rs_spec["template"] = template;
        rs_spec["selector"]["matchLabels"] = with_hash(spec.selector.match_labels.as_ref(), hash);
        let labels = with_hash(spec.template.metadata.as_ref().and_then(|m| m.labels.as_ref()), hash);
        serde_json::from_value(json!({
            "apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {
                "name": format!("{name}-{hash}"), "namespace": NAMESPACE, "labels": labels,
                "annotations": sample.metadata.annotations, "ownerReferences": [owner],
            },
            "spec": rs_spec,
            "status": sample.status,
        }))
        .expect("a valid ReplicaSet")
    }

    /// Pod `j` of `rs`, on `node`, as kcm-rs's ReplicaSet controller makes
    /// it (the template, a controller reference, a generated name); the
    /// kubelet stand-in makes it Running and Ready.
    fn pod_for(&self, rs: &ReplicaSet, j: usize, node: &str) -> Pod {
        let rs_name = rs.metadata.name.clone().expect("named");
        let template = rs.spec.template.clone().expect("template");
        let mut owner: OwnerReference = self.pod.metadata.owner_references.clone().expect("owned").remove(0);
        owner.name.clone_from(&rs_name);
        owner.uid = rs.metadata.uid.clone().expect("uid");
        let meta = template.metadata.unwrap_or_default();
        let mut spec = template.spec.expect("pod spec");
        spec.node_name = Some(node.to_owned());
        Pod {
            metadata: ObjectMeta {
                name: Some(format!("{rs_name}-{j:05}")),
                generate_name: Some(format!("{rs_name}-")),
                namespace: Some(NAMESPACE.into()),
                labels: meta.labels,
                annotations: meta.annotations,
                owner_references: Some(vec![owner]),
                ..ObjectMeta::default()
            },
            spec: Some(spec),
            status: None,
        }
    }

    /// Makes Deployment `name` converged through the API: the Deployment
    /// (with kcm-rs's annotations), its status, its ReplicaSet and its
    /// status, and its pods bound to `node(j)` (14 requests for 10
    /// replicas; the kubelet stand-in then starts the pods). Gives the
    /// Deployment, the ReplicaSet and the pods' names.
    pub async fn objects(
        &self,
        client: &kube::Client,
        name: &str,
        node: impl Fn(usize) -> String,
    ) -> (Deployment, ReplicaSet, Vec<String>) {
        let deployments: Api<Deployment> = Api::namespaced(client.clone(), NAMESPACE);
        let replica_sets: Api<ReplicaSet> = Api::namespaced(client.clone(), NAMESPACE);
        let pods: Api<Pod> = Api::namespaced(client.clone(), NAMESPACE);
        let replicas = self.deployment.spec.replicas.unwrap_or(1);
        let mut d = deployment(name, replicas, &image("1.0"));
        d.metadata.annotations.clone_from(&self.deployment.metadata.annotations);
        let d = deployments.create(&PostParams::default(), &d).await.expect("Deployment created");
        let hash = self.hash_of(&d);
        let rs = self.replica_set_for(&d, &hash);
        let sample_rs = self.replica_set.metadata.name.as_deref().expect("named");
        let rs_name = rs.metadata.name.as_deref().expect("named");
        let status = serde_json::to_string(&self.deployment.status).expect("encodes").replace(sample_rs, rs_name);
        let mut status: Value = serde_json::from_str(&status).expect("decodes");
        status["observedGeneration"] = json!(d.metadata.generation);
        let pp = PatchParams::default();
        let d = deployments
            .patch_status(name, &pp, &Patch::Merge(json!({"status": status})))
            .await
            .expect("status written");
        let created = replica_sets.create(&PostParams::default(), &rs).await.expect("ReplicaSet created");
        let rs_status = json!({"status": self.replica_set.status});
        let rs = replica_sets.patch_status(rs_name, &pp, &Patch::Merge(rs_status)).await.expect("status written");
        let pods = futures::stream::iter(0..usize::try_from(replicas).unwrap_or(0))
            .map(|j| {
                let pod = self.pod_for(&created, j, &node(j));
                let pods = pods.clone();
                async move {
                    let pod = pods.create(&PostParams::default(), &pod).await.expect("pod created");
                    pod.metadata.name.unwrap_or_default()
                }
            })
            .buffer_unordered(16)
            .collect::<Vec<_>>()
            .await;
        (d, rs, pods)
    }
}
