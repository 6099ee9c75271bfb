//! Server-side defaulting: the fields the real API server fills in before it
//! validates and stores an object.
//!
//! This module owns the defaults of `k8s.io/kubernetes` `pkg/apis/core/v1`,
//! `pkg/apis/apps/v1` and `pkg/apis/batch/v1` (hand-written `SetDefaults_*`
//! functions and the generated `zz_generated.defaults.go` that walks every pod spec), plus the
//! few create-time mutations a plain `kubectl run` pod visibly gets from the
//! Priority and DefaultTolerationSeconds admission plugins (the
//! ServiceAccount plugin is `crate::admission`'s). Everything works on schemaless JSON, as the
//! store keeps it, and every step is idempotent: applying twice is the same
//! as applying once.
//!
//! Fidelity matters because controllers hash what the server stores: the
//! Deployment controller's `pod-template-hash` is computed over the
//! *defaulted* pod template, so a missing default here yields a different
//! ReplicaSet name than a real cluster would produce.
//!
//! Left to other modules: validation (the `validation` module), what the
//! registry strategies write on create (the `strategy` module: Pod `phase:
//! Pending` and `qosClass`, a namespace's `kubernetes` finalizer, name
//! generation), cluster IP allocation and quantity canonicalisation.

use serde_json::{Map, Value, json};

use crate::resources::Builtin;

mod batch;
mod fields;
mod image;
mod kinds;
mod pod;
mod workloads;

use batch::{cron_job, job};
use fields::{child, children, default_str, default_value};
use kinds::{endpoint_slice, endpoints, namespace, node, persistent_volume_claim, rbac_subject, service_spec};
use pod::{pod, pod_template};
use workloads::{daemon_set_spec, deployment_spec, stateful_set_spec};

pub use image::image_pull_policy;
pub use kinds::LABEL_METADATA_NAME;
pub use pod::{DEFAULT_SCHEDULER_NAME, DEFAULT_TOLERATION_SECONDS, TERMINATION_MESSAGE_PATH};

/// Applies the API server's defaults for `kind` to `object`, in place.
///
/// Called on create and on update, before validation. Objects of the wrong
/// shape (say `spec` is a string) are left as they are: decoding and
/// validation report them.
///
/// Defaulted (exactly; nothing else is touched):
/// - Deployment: `spec.replicas` 1, `spec.strategy.type` RollingUpdate with
///   `rollingUpdate.maxUnavailable`/`maxSurge` "25%", `revisionHistoryLimit`
///   10, `progressDeadlineSeconds` 600; pod template below.
/// - ReplicaSet: `spec.replicas` 1; pod template below.
/// - DaemonSet: `spec.updateStrategy.type` RollingUpdate with
///   `rollingUpdate.maxUnavailable` 1 and `maxSurge` 0,
///   `revisionHistoryLimit` 10; pod template below.
/// - StatefulSet: `podManagementPolicy` OrderedReady,
///   `updateStrategy.type` RollingUpdate with `rollingUpdate.partition` 0
///   and `maxUnavailable` 1,
///   `persistentVolumeClaimRetentionPolicy` Retain/Retain, `replicas` 1,
///   `revisionHistoryLimit` 10; each claim template's `apiVersion` v1,
///   `kind` PersistentVolumeClaim, `spec.volumeMode` Filesystem and
///   `status.phase` Pending; pod template below.
/// - Job: `completions` and `parallelism` 1 when neither is given, else
///   `parallelism` 1, `backoffLimit` 6 (2147483647 with
///   `backoffLimitPerIndex`), the template's labels as the Job's when it
///   has none, `completionMode` NonIndexed, `suspend` false, pod failure
///   policy condition patterns' `status` True, `podReplacementPolicy`
///   Failed with a pod failure policy and TerminatingOrFailed without,
///   `manualSelector` false; pod template below (`batch.rs`).
/// - CronJob: `concurrencyPolicy` Allow, `suspend` false,
///   `successfulJobsHistoryLimit` 3, `failedJobsHistoryLimit` 1; the job
///   template's pod template below, and nothing else of the job template.
/// - PodTemplate: `template.spec` as below.
/// - Every pod spec: `restartPolicy` Always, `dnsPolicy` ClusterFirst,
///   `terminationGracePeriodSeconds` 30, `schedulerName` default-scheduler,
///   `securityContext` {}, `serviceAccount` mirroring `serviceAccountName`;
///   per container (init, regular, ephemeral): `imagePullPolicy`,
///   `terminationMessagePath`, `terminationMessagePolicy` File,
///   `resources` {}, ports' `protocol` TCP, env `fieldRef.apiVersion` v1,
///   probes (`timeoutSeconds` 1, `periodSeconds` 10, `successThreshold` 1,
///   `failureThreshold` 3, `httpGet.path` "/", `httpGet.scheme` HTTP,
///   `grpc.service` ""), lifecycle hooks' `httpGet`; volumes: `emptyDir` {}
///   when no source is given, `defaultMode` 420 on secret, configMap,
///   downwardAPI and projected sources, `hostPath.type` "", projected
///   `serviceAccountToken.expirationSeconds` 3600, downward API `fieldRef`
///   `apiVersion` v1, ephemeral claim templates' `volumeMode` Filesystem.
/// - Pod only: requests copied from limits, `enableServiceLinks` true,
///   host ports from container ports under `hostNetwork`, and the admission
///   results a real cluster shows: `priority` (0, or the value of the two
///   built-in system classes), `preemptionPolicy` PreemptLowerPriority,
///   the not-ready and unreachable NoExecute tolerations for 300 s.
/// - Service: `sessionAffinity` None (clearing `sessionAffinityConfig`) or
///   the ClientIP timeout 10800, `type` ClusterIP, ports' `protocol` TCP and
///   `targetPort` = `port`, `externalTrafficPolicy` Cluster when externally
///   reachable, `internalTrafficPolicy` Cluster, `allocateLoadBalancerNodePorts`
///   true for LoadBalancer (the IP family fields and cluster IPs are the
///   service registry's, `crate::clusterip`).
/// - Endpoints: ports' `protocol` TCP.
/// - EndpointSlice: ports' `name` "" and `protocol` TCP.
/// - Namespace: label `kubernetes.io/metadata.name` = name, `status.phase`
///   Active (the `kubernetes` finalizer is the namespace strategy's, in
///   `crate::strategy`).
/// - Node: `status.allocatable` = `status.capacity` when absent.
/// - PersistentVolumeClaim: `spec.volumeMode` Filesystem, `status.phase`
///   Pending.
/// - Secret: `type` Opaque.
/// - RoleBinding, ClusterRoleBinding: the `apiGroup` of User and Group
///   subjects (`rbac.authorization.k8s.io`).
#[doc(alias = "SetObjectDefaults")]
pub fn apply(kind: Builtin, object: &mut Value) {
    match kind {
        Builtin::Deployment => workload(object, deployment_spec),
        Builtin::ReplicaSet => workload(object, |spec| default_value(spec, "replicas", json!(1))),
        Builtin::DaemonSet => workload(object, daemon_set_spec),
        Builtin::StatefulSet => workload(object, stateful_set_spec),
        Builtin::Job => job(object),
        Builtin::CronJob => cron_job(object),
        Builtin::PodTemplate => {
            if let Some(template) = child(object, "template") {
                pod_template(template);
            }
        }
        Builtin::Pod => pod(object),
        Builtin::Service => {
            if let Some(spec) = child(object, "spec") {
                service_spec(spec);
            }
        }
        Builtin::Endpoints => endpoints(object),
        Builtin::EndpointSlice => endpoint_slice(object),
        Builtin::Namespace => namespace(object),
        Builtin::Node => node(object),
        Builtin::PersistentVolumeClaim => persistent_volume_claim(object),
        Builtin::Secret => {
            if let Some(secret) = object.as_object_mut() {
                default_str(secret, "type", "Opaque");
            }
        }
        Builtin::ClusterRoleBinding | Builtin::RoleBinding => {
            if let Some(binding) = object.as_object_mut() {
                for subject in children(binding, "subjects") {
                    rbac_subject(subject);
                }
            }
        }
        Builtin::ConfigMap
        | Builtin::ControllerRevision
        | Builtin::ServiceAccount
        | Builtin::CoreEvent
        | Builtin::Lease
        | Builtin::EventsEvent
        | Builtin::PodDisruptionBudget
        | Builtin::ClusterRole
        | Builtin::Role => {}
    }
}

/// A workload's `spec` defaults (`spec_defaults`), then its pod
/// template's.
fn workload(object: &mut Value, spec_defaults: fn(&mut Map<String, Value>)) {
    if let Some(spec) = child(object, "spec") {
        spec_defaults(spec);
        if let Some(template) = spec.get_mut("template").and_then(Value::as_object_mut) {
            pod_template(template);
        }
    }
}

#[cfg(test)]
mod tests {
    //! Tests of server-side defaulting: each kind's defaults, checked against
    //! what a real API server stores, and idempotence.

    use super::*;

    // === utils ===

    /// What `kubectl create deployment web --image=nginx` sends.
    fn kubectl_create_deployment() -> Value {
        json!({
            "kind": "Deployment",
            "apiVersion": "apps/v1",
            "metadata": {"name": "web", "creationTimestamp": null, "labels": {"app": "web"}},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {
                    "metadata": {"creationTimestamp": null, "labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "nginx", "image": "nginx", "resources": {}}]}
                },
                "strategy": {}
            },
            "status": {}
        })
    }

    /// What `kubectl run web --image=nginx` sends.
    fn kubectl_run_pod() -> Value {
        json!({
            "kind": "Pod",
            "apiVersion": "v1",
            "metadata": {"name": "web", "creationTimestamp": null, "labels": {"run": "web"}},
            "spec": {
                "containers": [{"name": "web", "image": "nginx", "resources": {}}],
                "dnsPolicy": "ClusterFirst",
                "restartPolicy": "Always"
            },
            "status": {}
        })
    }

    fn defaulted(kind: Builtin, mut object: Value) -> Value {
        apply(kind, &mut object);
        object
    }

    // === tests ===

    #[test]
    fn deployment_spec_equals_what_a_real_cluster_stores() {
        // `kubectl get deploy web -o json` on a real cluster right after
        // `kubectl create deployment web --image=nginx` (spec only; metadata
        // and status are the store's and the controller's).
        let stored_spec = json!({
            "progressDeadlineSeconds": 600,
            "replicas": 1,
            "revisionHistoryLimit": 10,
            "selector": {"matchLabels": {"app": "web"}},
            "strategy": {
                "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"},
                "type": "RollingUpdate"
            },
            "template": {
                "metadata": {"creationTimestamp": null, "labels": {"app": "web"}},
                "spec": {
                    "containers": [{
                        "image": "nginx",
                        "imagePullPolicy": "Always",
                        "name": "nginx",
                        "resources": {},
                        "terminationMessagePath": "/dev/termination-log",
                        "terminationMessagePolicy": "File"
                    }],
                    "dnsPolicy": "ClusterFirst",
                    "restartPolicy": "Always",
                    "schedulerName": "default-scheduler",
                    "securityContext": {},
                    "terminationGracePeriodSeconds": 30
                }
            }
        });
        let object = defaulted(Builtin::Deployment, kubectl_create_deployment());
        assert_eq!(object["spec"], stored_spec);
    }

    #[test]
    fn pod_spec_equals_what_a_real_cluster_shows_for_kubectl_run() {
        // `kubectl get pod web -o json` after `kubectl run web --image=nginx`,
        // without the scheduler's nodeName and what the ServiceAccount
        // admission plugin adds (`crate::admission`'s: the service account
        // name, the token volume and its mount).
        let shown_spec = json!({
            "containers": [{
                "image": "nginx",
                "imagePullPolicy": "Always",
                "name": "web",
                "resources": {},
                "terminationMessagePath": "/dev/termination-log",
                "terminationMessagePolicy": "File"
            }],
            "dnsPolicy": "ClusterFirst",
            "enableServiceLinks": true,
            "preemptionPolicy": "PreemptLowerPriority",
            "priority": 0,
            "restartPolicy": "Always",
            "schedulerName": "default-scheduler",
            "securityContext": {},
            "terminationGracePeriodSeconds": 30,
            "tolerations": [
                {"effect": "NoExecute", "key": "node.kubernetes.io/not-ready",
                 "operator": "Exists", "tolerationSeconds": 300},
                {"effect": "NoExecute", "key": "node.kubernetes.io/unreachable",
                 "operator": "Exists", "tolerationSeconds": 300}
            ]
        });
        let object = defaulted(Builtin::Pod, kubectl_run_pod());
        assert_eq!(object["spec"], shown_spec);
    }

    #[test]
    fn daemon_set_and_stateful_set_specs_equal_what_a_real_cluster_stores() {
        let template = json!({"metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}});
        let daemon_set = defaulted(
            Builtin::DaemonSet,
            json!({"spec": {"selector": {"matchLabels": {"app": "web"}}, "template": template.clone()}}),
        );
        assert_eq!(
            daemon_set["spec"]["updateStrategy"],
            json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}})
        );
        assert_eq!(daemon_set["spec"]["revisionHistoryLimit"], 10);
        assert_eq!(daemon_set["spec"]["template"]["spec"]["schedulerName"], "default-scheduler");

        let stateful_set = defaulted(
            Builtin::StatefulSet,
            json!({"spec": {"serviceName": "web", "selector": {"matchLabels": {"app": "web"}},
                "template": template,
                "volumeClaimTemplates": [{"metadata": {"name": "data"},
                    "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]}}),
        );
        let spec = &stateful_set["spec"];
        assert_eq!(spec["podManagementPolicy"], "OrderedReady");
        assert_eq!(
            spec["updateStrategy"],
            json!({"type": "RollingUpdate", "rollingUpdate": {"partition": 0, "maxUnavailable": 1}})
        );
        assert_eq!(
            spec["persistentVolumeClaimRetentionPolicy"],
            json!({"whenDeleted": "Retain", "whenScaled": "Retain"})
        );
        assert_eq!((&spec["replicas"], &spec["revisionHistoryLimit"]), (&json!(1), &json!(10)));
        assert_eq!(
            spec["volumeClaimTemplates"][0],
            json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data"},
                "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}},
                    "volumeMode": "Filesystem"},
                "status": {"phase": "Pending"}})
        );
        assert_eq!(spec["template"]["spec"]["terminationGracePeriodSeconds"], 30);
    }

    #[test]
    fn workload_strategies_keep_what_the_user_set() {
        let on_delete = defaulted(Builtin::DaemonSet, json!({"spec": {"updateStrategy": {"type": "OnDelete"}}}));
        assert_eq!(on_delete["spec"]["updateStrategy"], json!({"type": "OnDelete"}));
        let surge = defaulted(
            Builtin::DaemonSet,
            json!({"spec": {"updateStrategy": {"rollingUpdate": {"maxUnavailable": 0, "maxSurge": "10%"}}}}),
        );
        assert_eq!(
            surge["spec"]["updateStrategy"],
            json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": "10%"}})
        );
        // An explicit RollingUpdate without `rollingUpdate` stays without one.
        let rolling = defaulted(Builtin::StatefulSet, json!({"spec": {"updateStrategy": {"type": "RollingUpdate"}}}));
        assert_eq!(rolling["spec"]["updateStrategy"], json!({"type": "RollingUpdate"}));
        let partitioned = defaulted(
            Builtin::StatefulSet,
            json!({"spec": {"replicas": 0, "podManagementPolicy": "Parallel",
                "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "50%"}},
                "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Delete"}}}),
        );
        let spec = &partitioned["spec"];
        assert_eq!((&spec["replicas"], &spec["podManagementPolicy"]), (&json!(0), &json!("Parallel")));
        assert_eq!(spec["updateStrategy"]["rollingUpdate"], json!({"maxUnavailable": "50%", "partition": 0}));
        assert_eq!(
            spec["persistentVolumeClaimRetentionPolicy"],
            json!({"whenDeleted": "Delete", "whenScaled": "Retain"})
        );
    }

    #[test]
    fn endpoint_slice_ports_get_an_empty_name_and_tcp() {
        let slice = json!({"addressType": "IPv4", "endpoints": [{"addresses": ["10.0.0.1"]}],
            "ports": [{"port": 80}, {"name": "dns", "port": 53, "protocol": "UDP"}]});
        assert_eq!(
            defaulted(Builtin::EndpointSlice, slice)["ports"],
            json!([{"name": "", "port": 80, "protocol": "TCP"}, {"name": "dns", "port": 53, "protocol": "UDP"}])
        );
    }

    #[test]
    fn defaulting_is_idempotent() {
        let cases = [
            (Builtin::Deployment, kubectl_create_deployment()),
            (Builtin::Pod, kubectl_run_pod()),
            (
                Builtin::ReplicaSet,
                json!({"spec": {"template": {"spec": {"containers": [{"name": "a", "image": "a:1",
                "ports": [{"containerPort": 80}],
                "livenessProbe": {"httpGet": {"port": 80}}}],
                "volumes": [{"name": "v"}, {"name": "s", "secret": {"secretName": "s"}}]}}}}),
            ),
            (
                Builtin::Pod,
                json!({"spec": {"hostNetwork": true, "serviceAccount": "builder",
                "tolerations": [{"operator": "Exists"}],
                "containers": [{"name": "a", "image": "a@sha256:00",
                "resources": {"limits": {"cpu": "1"}}, "ports": [{"containerPort": 8080}]}]}}),
            ),
            (
                Builtin::Service,
                json!({"spec": {"type": "LoadBalancer", "sessionAffinity": "ClientIP",
                "ports": [{"port": 80}]}}),
            ),
            (Builtin::Namespace, json!({"metadata": {"name": "team-a"}})),
            (Builtin::Node, json!({"metadata": {"name": "n1"}, "status": {"capacity": {"cpu": "4"}}})),
            (Builtin::Secret, json!({"metadata": {"name": "s"}})),
            (Builtin::Endpoints, json!({"subsets": [{"ports": [{"port": 80}]}]})),
            (Builtin::EndpointSlice, json!({"addressType": "IPv4", "ports": [{"port": 80}]})),
            (Builtin::PodTemplate, json!({"template": {"spec": {"containers": [{"name": "a"}]}}})),
            (Builtin::DaemonSet, json!({"spec": {"template": {"spec": {"containers": [{"name": "a"}]}}}})),
            (
                Builtin::StatefulSet,
                json!({"spec": {"volumeClaimTemplates": [{"metadata": {"name": "d"}}],
                "template": {"spec": {"containers": [{"name": "a"}]}}}}),
            ),
        ];
        for (kind, object) in cases {
            let once = defaulted(kind, object);
            let twice = defaulted(kind, once.clone());
            assert_eq!(once, twice, "{kind:?}");
        }
    }

    #[test]
    fn deployment_keeps_what_the_user_set() {
        let object = defaulted(
            Builtin::Deployment,
            json!({"spec": {"replicas": 0, "revisionHistoryLimit": 0,
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0}}}}),
        );
        assert_eq!(object["spec"]["replicas"], 0);
        assert_eq!(object["spec"]["revisionHistoryLimit"], 0);
        assert_eq!(object["spec"]["strategy"]["rollingUpdate"], json!({"maxSurge": 0, "maxUnavailable": "25%"}));
    }

    #[test]
    fn recreate_strategy_gets_no_rolling_update() {
        let object = defaulted(Builtin::Deployment, json!({"spec": {"strategy": {"type": "Recreate"}}}));
        assert_eq!(object["spec"]["strategy"], json!({"type": "Recreate"}));
    }

    #[test]
    fn templates_do_not_get_pod_only_defaults() {
        let object = defaulted(
            Builtin::ReplicaSet,
            json!({"spec": {"template": {"spec": {
        "containers": [{"name": "a", "image": "a", "resources": {"limits": {"cpu": "1"}}}]}}}}),
        );
        let spec = &object["spec"]["template"]["spec"];
        assert_eq!(object["spec"]["replicas"], 1);
        for field in ["enableServiceLinks", "priority", "tolerations", "serviceAccountName"] {
            assert!(spec.get(field).is_none(), "{field}");
        }
        assert!(spec["containers"][0]["resources"].get("requests").is_none());
    }

    #[test]
    fn pod_only_defaults() {
        let object = defaulted(
            Builtin::Pod,
            json!({"spec": {"hostNetwork": true, "priorityClassName": "system-node-critical",
            "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists",
                "effect": "NoExecute"}],
            "containers": [{"name": "a", "image": "a",
                "resources": {"limits": {"cpu": "1"}, "requests": {"memory": "1Gi"}},
                "ports": [{"containerPort": 8080}]}]}}),
        );
        let spec = &object["spec"];
        assert_eq!(spec["priority"], 2_000_001_000);
        assert_eq!(spec["containers"][0]["resources"]["requests"], json!({"cpu": "1", "memory": "1Gi"}));
        assert_eq!(spec["containers"][0]["ports"][0]["hostPort"], 8080);
        assert_eq!(spec["containers"][0]["ports"][0]["protocol"], "TCP");
        let tolerations = spec["tolerations"].as_array().map(Vec::len);
        assert_eq!(tolerations, Some(2), "only unreachable is added");
    }

    #[test]
    fn volumes_and_probes() {
        let object = defaulted(
            Builtin::PodTemplate,
            json!({"template": {"spec": {
            "volumes": [
                {"name": "scratch"},
                {"name": "cm", "configMap": {"name": "c"}},
                {"name": "hp", "hostPath": {"path": "/x"}},
                {"name": "p", "projected": {"sources": [{"serviceAccountToken": {"path": "t"}}]}}
            ],
            "containers": [{"name": "a", "image": "a",
                "env": [{"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}],
                "readinessProbe": {"httpGet": {"port": 80}, "periodSeconds": 5},
                "livenessProbe": {"grpc": {"port": 9000}}}]}}}),
        );
        let spec = &object["template"]["spec"];
        assert_eq!(spec["volumes"][0]["emptyDir"], json!({}));
        assert_eq!(spec["volumes"][1]["configMap"]["defaultMode"], 420);
        assert_eq!(spec["volumes"][2]["hostPath"]["type"], "");
        assert_eq!(
            spec["volumes"][3]["projected"],
            json!({"defaultMode": 420, "sources": [{"serviceAccountToken": {"path": "t", "expirationSeconds": 3600}}]})
        );
        let container = &spec["containers"][0];
        assert_eq!(container["env"][0]["valueFrom"]["fieldRef"]["apiVersion"], "v1");
        assert_eq!(
            container["readinessProbe"],
            json!({"httpGet": {"port": 80, "path": "/", "scheme": "HTTP"}, "periodSeconds": 5,
            "timeoutSeconds": 1, "successThreshold": 1, "failureThreshold": 3})
        );
        assert_eq!(container["livenessProbe"]["grpc"]["service"], "");
    }

    #[test]
    fn service_defaults() {
        let object = defaulted(
            Builtin::Service,
            json!({"spec": {"selector": {"app": "web"}, "ports": [{"port": 80}, {"port": 443, "targetPort": "https"}]}}),
        );
        assert_eq!(
            object["spec"],
            json!({
                "selector": {"app": "web"},
                "ports": [
                    {"port": 80, "protocol": "TCP", "targetPort": 80},
                    {"port": 443, "protocol": "TCP", "targetPort": "https"}
                ],
                "sessionAffinity": "None",
                "type": "ClusterIP",
                "internalTrafficPolicy": "Cluster"
            })
        );
        let lb = defaulted(
            Builtin::Service,
            json!({"spec": {"type": "LoadBalancer", "sessionAffinity": "ClientIP", "ports": [{"port": 80}]}}),
        );
        assert_eq!(lb["spec"]["externalTrafficPolicy"], "Cluster");
        assert_eq!(lb["spec"]["allocateLoadBalancerNodePorts"], true);
        assert_eq!(lb["spec"]["sessionAffinityConfig"]["clientIP"]["timeoutSeconds"], 10800);
        let external = defaulted(Builtin::Service, json!({"spec": {"type": "ExternalName", "externalName": "a.b"}}));
        assert!(external["spec"].get("internalTrafficPolicy").is_none());
    }

    #[test]
    fn namespace_node_secret() {
        let ns = defaulted(Builtin::Namespace, json!({"metadata": {"name": "team-a"}}));
        assert_eq!(ns["metadata"]["labels"][LABEL_METADATA_NAME], "team-a");
        assert_eq!(ns["status"]["phase"], "Active");
        assert!(ns.get("spec").is_none(), "finalizers are create-only");

        let node = defaulted(Builtin::Node, json!({"status": {"capacity": {"cpu": "4", "pods": "110"}}}));
        assert_eq!(node["status"]["allocatable"], json!({"cpu": "4", "pods": "110"}));

        let secret = defaulted(Builtin::Secret, json!({"type": ""}));
        assert_eq!(secret["type"], "Opaque");
        let typed = defaulted(Builtin::Secret, json!({"type": "kubernetes.io/tls"}));
        assert_eq!(typed["type"], "kubernetes.io/tls");
    }

    #[test]
    fn malformed_objects_are_left_alone() {
        for kind in [Builtin::Deployment, Builtin::Pod, Builtin::Service, Builtin::Namespace] {
            for object in [json!("x"), json!({"spec": 3})] {
                let out = defaulted(kind, object.clone());
                if kind != Builtin::Namespace || object.is_string() {
                    assert_eq!(out, object, "{kind:?}");
                }
            }
        }
        // Wrong-typed lists inside an otherwise fine spec do not panic.
        for kind in [Builtin::Pod, Builtin::PodTemplate, Builtin::Deployment] {
            let mut object = json!({"spec": {"containers": "no", "volumes": 1, "template": 2}});
            apply(kind, &mut object);
        }
    }
}
