//! The slim Pod: what some controller of kcm-rs reads of a pod, decoded
//! straight from the API server's JSON. Everything else (container specs,
//! volumes, most of the status) is skipped unread.
//!
//! A controller needing another field of a pod adds it here, with the
//! controller that reads it named in its doc. Writes never start from this
//! projection: they are patches, or updates of a pod read live.

use std::sync::{Arc, LazyLock};

use k8s_openapi::api::core::v1::PersistentVolumeClaimTemplate;
use serde::{Deserialize, Deserializer};

use crate::affinity::WireAffinity;
use crate::atom::{Atom, Pool, SharedList};
use crate::container::{NamedPort, WireContainer, named_ports};
use crate::meta::{Meta, nullable};
use crate::pod_status::{PodCondition, PodStatus};
use crate::secrets::{NameRef, VolumeSecrets, secret_names};

/// A pod as the caches hold it.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct Pod {
    /// `metadata`.
    #[serde(deserialize_with = "nullable")]
    pub metadata: Meta,
    /// The part of `spec` kept.
    #[serde(deserialize_with = "nullable")]
    pub spec: PodSpec,
    /// The part of `status` kept.
    #[serde(deserialize_with = "nullable")]
    pub status: PodStatus,
}

/// What is kept of `spec`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(from = "WireSpec")]
pub struct PodSpec {
    /// `spec.nodeName` (ReplicaSet ranking, node lifecycle, taint eviction).
    pub node_name: Option<Atom>,
    /// `spec.tolerations`, one shared copy per distinct list (taint
    /// eviction).
    pub tolerations: SharedList<Toleration>,
    /// The named ports of the containers, then of the sidecars, one shared
    /// copy per distinct list (a Service's named `targetPort`, resolved by
    /// the endpoint and EndpointSlice controllers).
    pub named_ports: SharedList<NamedPort>,
    /// What few pods have, out of line: a pod with none of it pays a
    /// pointer.
    rare: Option<Box<RareSpec>>,
}

/// The fields of `spec` few pods set.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RareSpec {
    /// The names of the Secrets the pod references (the legacy service
    /// account token cleaner; see `secrets`): most pods mount only their
    /// projected token, no Secret.
    pub secret_names: Box<[Atom]>,
    /// `spec.initContainers`' names and restart policies (ReplicaSet
    /// ranking counts sidecar restarts).
    pub init_containers: Box<[ContainerSummary]>,
    /// `spec.hostname` (endpoint hostnames).
    pub hostname: Option<Box<str>>,
    /// `spec.subdomain` (endpoint hostnames of headless Services).
    pub subdomain: Option<Atom>,
    /// The node a pending DaemonSet pod was made for, from its required
    /// node affinity (the DaemonSet controller; see `affinity`).
    pub affinity_node_name: Option<Atom>,
    /// The `persistentVolumeClaim` volumes of `spec.volumes` (the
    /// StatefulSet controller checks a pod mounts its claims).
    pub claim_volumes: Box<[ClaimVolume]>,
    /// The generic `ephemeral` volumes of `spec.volumes`, each standing
    /// for the claim `<pod>-<volume>` (the PVC protection controller; the
    /// ephemeral volume controller creates the claims from their
    /// templates).
    pub ephemeral_volumes: Box<[EphemeralVolume]>,
}

impl PodSpec {
    /// The fields few pods set (all empty when the pod sets none).
    pub fn rare(&self) -> &RareSpec {
        static NONE: LazyLock<RareSpec> = LazyLock::new(RareSpec::default);
        self.rare.as_deref().unwrap_or(&NONE)
    }
}

/// A generic ephemeral volume of a pod.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EphemeralVolume {
    /// The volume's `name`.
    pub name: Box<str>,
    /// `ephemeral.volumeClaimTemplate`, whole.
    pub claim_template: Arc<PersistentVolumeClaimTemplate>,
}

/// A volume of a pod mounting a PersistentVolumeClaim.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClaimVolume {
    /// The volume's `name`.
    pub name: Box<str>,
    /// `persistentVolumeClaim.claimName`.
    pub claim_name: Box<str>,
}

/// `spec` as decoded, before the Secret references are gathered.
#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct WireSpec {
    node_name: Option<Atom>,
    #[serde(deserialize_with = "shared_tolerations")]
    tolerations: SharedList<Toleration>,
    #[serde(deserialize_with = "nullable")]
    init_containers: Vec<WireContainer>,
    #[serde(deserialize_with = "nullable")]
    containers: Vec<WireContainer>,
    #[serde(deserialize_with = "nullable")]
    ephemeral_containers: Vec<WireContainer>,
    #[serde(deserialize_with = "nullable")]
    image_pull_secrets: Vec<NameRef>,
    #[serde(deserialize_with = "nullable")]
    volumes: Vec<VolumeSecrets>,
    hostname: Option<Box<str>>,
    subdomain: Option<Atom>,
    #[serde(deserialize_with = "nullable")]
    affinity: WireAffinity,
}

impl From<WireSpec> for PodSpec {
    fn from(wire: WireSpec) -> Self {
        let containers = wire.containers.iter().chain(&wire.init_containers).chain(&wire.ephemeral_containers);
        let env = containers.map(|c| (&c.env[..], &c.env_from[..]));
        let secret_names = secret_names(&wire.image_pull_secrets, env, &wire.volumes);
        let named_ports = NAMED_PORTS.intern(&named_ports(&wire.containers, &wire.init_containers));
        let claim_volumes = (wire.volumes.iter().filter_map(VolumeSecrets::claim))
            .map(|(name, claim_name)| ClaimVolume { name: name.into(), claim_name: claim_name.into() })
            .collect();
        let ephemeral_volumes = (wire.volumes.iter().filter_map(VolumeSecrets::ephemeral))
            .map(|(name, template)| EphemeralVolume { name: name.into(), claim_template: Arc::new(template) })
            .collect();
        let init_containers = wire.init_containers.into_iter();
        let rare = RareSpec {
            secret_names,
            init_containers: init_containers
                .map(|c| ContainerSummary { name: c.name, restart_policy: c.restart_policy })
                .collect(),
            hostname: wire.hostname,
            subdomain: wire.subdomain,
            affinity_node_name: wire.affinity.target_node_name(),
            claim_volumes,
            ephemeral_volumes,
        };
        PodSpec {
            node_name: wire.node_name,
            tolerations: wire.tolerations,
            named_ports,
            rare: (rare != RareSpec::default()).then(|| Box::new(rare)),
        }
    }
}

/// A toleration, as `spec.tolerations[]` (taint eviction matches them).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Toleration {
    /// `key`; empty or absent matches every key (with `Exists`).
    pub key: Option<Atom>,
    /// `operator`: `Exists`, or `Equal` when absent.
    pub operator: Option<Atom>,
    /// `value`.
    pub value: Option<Atom>,
    /// `effect`; absent matches every effect.
    pub effect: Option<Atom>,
    /// `tolerationSeconds`, for `NoExecute`.
    pub toleration_seconds: Option<i64>,
}

/// A container's identity in `spec.initContainers`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ContainerSummary {
    /// `name`.
    pub name: Atom,
    /// `restartPolicy` (`Always` makes an init container a sidecar).
    pub restart_policy: Option<Atom>,
}

/// Distinct toleration lists of the process (a Deployment's pods all carry
/// the same one, usually the two defaults the API server adds).
static TOLERATIONS: LazyLock<Pool<[Toleration], SharedList<Toleration>>> = LazyLock::new(Pool::new);

/// Distinct named-port lists of the process (a Deployment's pods all carry
/// the same one).
static NAMED_PORTS: LazyLock<Pool<[NamedPort], SharedList<NamedPort>>> = LazyLock::new(Pool::new);

/// Decodes `spec.tolerations` into the shared copy of the list.
fn shared_tolerations<'de, D: Deserializer<'de>>(deserializer: D) -> Result<SharedList<Toleration>, D::Error> {
    let list: Vec<Toleration> = nullable(deserializer)?;
    Ok(TOLERATIONS.intern(&list))
}

impl Pod {
    /// The pod's phase, `""` when unset.
    pub fn phase(&self) -> &str {
        self.status.phase.as_deref().unwrap_or("")
    }

    /// The node the pod is bound to, if any.
    pub fn node_name(&self) -> Option<&str> {
        self.spec.node_name.as_deref().filter(|n| !n.is_empty())
    }

    /// The node the pod is on or, while pending, was made for (upstream
    /// `daemon/util.GetTargetNodeName`).
    pub fn target_node_name(&self) -> Option<&str> {
        self.node_name().or(self.spec.rare().affinity_node_name.as_deref())
    }

    /// The condition of type `type_`, if the pod reports it.
    pub fn condition(&self, type_: &str) -> Option<&PodCondition> {
        self.status.conditions.iter().find(|c| c.type_() == type_)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::pod_status::Terminated;

    #[test]
    fn keeps_what_controllers_read_and_shares_toleration_lists() {
        let pod = |name: &str| {
            serde_json::from_value::<Pod>(json!({
                "apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": name, "namespace": "default"},
                "spec": {
                    "nodeName": "node-1",
                    "containers": [{"name": "app", "image": "nginx"}],
                    "initContainers": [{"name": "proxy", "image": "envoy", "restartPolicy": "Always"}],
                    "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}],
                },
                "status": {
                    "phase": "Running",
                    "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2026-12-01T10:00:00Z"}],
                    "containerStatuses": [{"name": "app", "restartCount": 3, "ready": true, "image": "nginx", "imageID": "", "state": {}}],
                },
            }))
            .unwrap()
        };
        let (a, b) = (pod("a"), pod("b"));
        assert_eq!(a.node_name(), Some("node-1"));
        assert_eq!(a.phase(), "Running");
        assert_eq!(a.condition("Ready").map(|c| c.status().as_str()), Some("True"));
        assert_eq!(a.status.container_statuses[0].restart_count, 3);
        assert_eq!(a.spec.rare().init_containers[0].restart_policy.as_deref(), Some("Always"));
        assert_eq!(a.spec.tolerations[0].toleration_seconds, Some(300));
        assert!(SharedList::ptr_eq(&a.spec.tolerations, &b.spec.tolerations));
    }

    #[test]
    fn keeps_ephemeral_volumes_and_waiting_containers() {
        let pod: Pod = serde_json::from_value(json!({
            "metadata": {"name": "p", "namespace": "default"},
            "spec": {"volumes": [
                {"name": "data", "persistentVolumeClaim": {"claimName": "claim"}},
                {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}},
            ]},
            "status": {
                "containerStatuses": [{"name": "app", "state": {"waiting": {"reason": "ContainerCreating"}}}],
                "ephemeralContainerStatuses": [{"name": "debug", "state": {"running": {}}}],
            },
        }))
        .unwrap();
        assert_eq!(&*pod.spec.rare().claim_volumes[0].claim_name, "claim");
        assert_eq!(&*pod.spec.rare().ephemeral_volumes[0].name, "scratch");
        assert_eq!(pod.spec.rare().ephemeral_volumes[0].claim_template.spec, Default::default());
        assert!(pod.status.container_statuses[0].waiting);
        assert!(!pod.status.rare().ephemeral_container_statuses[0].waiting);
    }

    #[test]
    fn gathers_the_secret_names_upstream_visits() {
        let pod: Pod = serde_json::from_value(json!({
            "metadata": {"name": "p", "namespace": "default"},
            "spec": {
                "imagePullSecrets": [{"name": "pull"}, {"name": ""}],
                "containers": [{"name": "app", "env": [
                    {"name": "A", "value": "x"},
                    {"name": "B", "valueFrom": {"secretKeyRef": {"name": "env", "key": "k"}}},
                    {"name": "C", "valueFrom": {"configMapKeyRef": {"name": "not-a-secret", "key": "k"}}},
                ], "envFrom": [{"secretRef": {"name": "env-from"}}, {"configMapRef": {"name": "cm"}}]}],
                "initContainers": [{"name": "init", "restartPolicy": "Always", "envFrom": [{"secretRef": {"name": "init"}}]}],
                "ephemeralContainers": [{"name": "debug", "env": [{"name": "D", "valueFrom": {"secretKeyRef": {"name": "env"}}}]}],
                "volumes": [
                    {"name": "s", "secret": {"secretName": "volume"}},
                    {"name": "c", "csi": {"driver": "d", "nodePublishSecretRef": {"name": "csi"}}},
                    {"name": "f", "flexVolume": {"driver": "d", "secretRef": {"name": "flex"}}},
                    {"name": "a", "azureFile": {"secretName": "azure", "shareName": "x"}},
                    {"name": "p", "projected": {"sources": [{"secret": {"name": "projected"}}, {"configMap": {"name": "cm"}}]}},
                    {"name": "e", "emptyDir": null},
                ],
            },
        }))
        .unwrap();
        let names: Vec<&str> = pod.spec.rare().secret_names.iter().map(Atom::as_str).collect();
        assert_eq!(names, ["pull", "env", "env-from", "init", "volume", "csi", "flex", "azure", "projected"]);
        assert_eq!(pod.spec.rare().init_containers[0].name, "init");
        assert_eq!(pod.spec.rare().init_containers[0].restart_policy.as_deref(), Some("Always"));
    }

    #[test]
    fn keeps_what_endpoints_are_built_from() {
        let pod = |name: &str| {
            serde_json::from_value::<Pod>(json!({
                "metadata": {"name": name, "namespace": "default"},
                "spec": {
                    "hostname": "web-0", "subdomain": "web",
                    "containers": [{"name": "app", "ports": [
                        {"containerPort": 8080, "name": "http", "protocol": "TCP"},
                        {"containerPort": 9090},
                        {"containerPort": 53, "name": "dns", "protocol": "UDP"},
                    ]}],
                    "initContainers": [
                        {"name": "once", "ports": [{"containerPort": 1, "name": "init"}]},
                        {"name": "proxy", "restartPolicy": "Always", "ports": [{"containerPort": 15001, "name": "proxy"}]},
                    ],
                },
                "status": {"podIP": "10.0.0.1", "podIPs": [{"ip": "10.0.0.1"}, {"ip": "fd00::1"}]},
            }))
            .unwrap()
        };
        let (a, b) = (pod("a"), pod("b"));
        let ports: Vec<(&str, i32, &str)> =
            a.spec.named_ports.iter().map(|p| (p.name.as_str(), p.container_port, p.protocol.as_str())).collect();
        assert_eq!(ports, [("http", 8080, "TCP"), ("dns", 53, "UDP"), ("proxy", 15001, "TCP")]);
        assert!(SharedList::ptr_eq(&a.spec.named_ports, &b.spec.named_ports));
        assert_eq!(a.spec.rare().hostname.as_deref(), Some("web-0"));
        assert_eq!(a.spec.rare().subdomain.as_deref(), Some("web"));
        assert_eq!(&*a.status.pod_ips, [Box::from("10.0.0.1"), Box::from("fd00::1")]);
    }

    #[test]
    fn keeps_the_node_a_pending_daemon_pod_is_for() {
        let pod = |spec: serde_json::Value| serde_json::from_value::<Pod>(json!({"spec": spec})).unwrap();
        let affinity = |fields: serde_json::Value| {
            json!({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [{"key": "a", "operator": "Exists"}]}, {"matchFields": fields}]}}}})
        };
        let named = pod(affinity(json!([{"key": "metadata.name", "operator": "In", "values": ["node-2"]}])));
        assert_eq!(named.target_node_name(), Some("node-2"));
        let bound = pod(json!({"nodeName": "node-1", "affinity": affinity(json!([
            {"key": "metadata.name", "operator": "In", "values": ["node-2"]}]))["affinity"]}));
        assert_eq!(bound.target_node_name(), Some("node-1"));
        let two = pod(affinity(json!([{"key": "metadata.name", "operator": "In", "values": ["a", "b"]}])));
        assert_eq!(two.target_node_name(), None);
        let not_in = pod(affinity(json!([{"key": "metadata.name", "operator": "NotIn", "values": ["a"]}])));
        assert_eq!(not_in.target_node_name(), None);
        assert_eq!(pod(json!({"affinity": null})).target_node_name(), None);
    }

    #[test]
    fn keeps_the_reason_of_an_evicted_pod() {
        let pod: Pod = serde_json::from_value(
            json!({"status": {"phase": "Failed", "reason": "Evicted", "message": "low on memory"}}),
        )
        .unwrap();
        assert_eq!(pod.status.rare().reason.as_deref(), Some("Evicted"));
    }

    #[test]
    fn keeps_what_the_job_controller_reads_of_a_finished_pod() {
        let pod: Pod = serde_json::from_value(json!({
            "metadata": {"name": "pi-0-abc", "namespace": "default", "annotations": {
                "batch.kubernetes.io/job-completion-index": "0",
                "batch.kubernetes.io/job-index-failure-count": "2",
                "batch.kubernetes.io/job-index-ignored-failure-count": "1",
                "kubectl.kubernetes.io/last-applied-configuration": "{}",
            }},
            "status": {
                "phase": "Failed",
                "containerStatuses": [
                    {"name": "main", "restartCount": 0, "ready": false, "state": {"terminated": {
                        "exitCode": 42, "reason": "Error", "startedAt": "2026-12-01T10:00:00Z", "finishedAt": "2026-12-01T10:00:05Z"}}},
                    {"name": "other", "state": {"running": {"startedAt": "2026-12-01T10:00:00Z"}}},
                    {"name": "null", "state": null},
                ],
                "initContainerStatuses": [{"name": "setup", "state": {"terminated": {"exitCode": 0}}}],
            },
        }))
        .unwrap();
        assert_eq!(pod.metadata.annotations.len(), 3);
        assert_eq!(pod.metadata.annotations.get("batch.kubernetes.io/job-completion-index"), Some("0"));
        let main = pod.status.container_statuses[0].terminated.as_deref().unwrap();
        assert_eq!(main.exit_code, 42);
        assert_eq!(main.finished_at.map(|t| t.to_string()).as_deref(), Some("2026-12-01T10:00:05Z"));
        assert_eq!(pod.status.container_statuses[1].terminated, None);
        assert_eq!(pod.status.container_statuses[2].terminated, None);
        assert_eq!(pod.status.rare().init_container_statuses[0].terminated, Some(Box::new(Terminated::default())));
    }

    #[test]
    fn keeps_the_claims_a_pod_mounts() {
        let pod: Pod = serde_json::from_value(json!({
            "metadata": {"name": "web-0", "namespace": "default"},
            "spec": {"volumes": [
                {"name": "data", "persistentVolumeClaim": {"claimName": "data-web-0"}},
                {"name": "cache", "emptyDir": {}},
            ]},
        }))
        .unwrap();
        assert_eq!(
            &*pod.spec.rare().claim_volumes,
            [ClaimVolume { name: "data".into(), claim_name: "data-web-0".into() }]
        );
    }
}
