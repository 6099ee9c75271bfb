//! Validation of built-in objects, with the real API server's messages.
//!
//! Field validation ([`validate_create`], [`validate_update`],
//! [`validate_status_update`]), which the
//! caller turns into a 422 Invalid status whose causes are [`Cause`]s.
//! Decoding and unknown fields come first, in `typed.rs`.
//!
//! This file holds the entry points and the per-kind dispatch. The rules
//! are `meta.rs`, `pod.rs`, `pod_update.rs`, `pod_status.rs`,
//! `apps.rs`, `daemon_set.rs`, `stateful_set.rs`, `controller_revision.rs`,
//! `job.rs`, `job_policies.rs`, `job_update.rs`, `job_status.rs`, `cron_job.rs`,
//! `workload_status.rs`, `node.rs`, `taints.rs`, `service.rs`,
//! `endpoints.rs`, `core_v1.rs`, `storage.rs` (with `quantity.rs`), `discovery.rs`, `policy.rs` and `rbac.rs`; what they share is `errors.rs` (causes and their messages),
//! `access.rs` (reading the JSON), `render.rs` (Go's rendering of values),
//! `syntax.rs` (name and value syntax), `ip.rs` (IP address syntax) and `values.rs` (selectors,
//! int-or-string). None of them imports this file.
//!
//! Field validation expects the *defaulted* object (see the `defaults` module), as
//! upstream does. Rules, messages and field paths follow
//! `k8s.io/apimachinery/pkg/util/validation` (names, labels, `field.Error`
//! rendering) and `k8s.io/kubernetes/pkg/apis/{core,apps}/validation`.
//! Where upstream prints a Go value with `%#v` (label selectors,
//! int-or-string, maps, owner references, taints) the message spells it the
//! same way; a pointer prints as `0xc000000000` where Go prints an address.
//! Map keys are visited in sorted order, where Go's order is random.
//!
//! Validated (nothing else):
//! - every kind: `metadata.name` / `generateName` (DNS-1123 label for
//!   Namespace, DNS-1035 label for Service, DNS-1123 subdomain otherwise),
//!   `metadata.namespace` when set, `generation`, label and annotation keys
//!   and values, annotation total size, owner references (complete, at most
//!   one controller, no Event owner), finalizer names (qualified; not both
//!   `orphan` and `foregroundDeletion`); on update, immutable `name`,
//!   `namespace`, `uid`, `deletionTimestamp` and
//!   `deletionGracePeriodSeconds`, and non-decreasing `generation`;
//! - Deployment and ReplicaSet: the spec rules of `ValidateDeploymentSpec` /
//!   `ValidateReplicaSetSpec` (replicas, minReadySeconds,
//!   revisionHistoryLimit, progressDeadlineSeconds, selector, selector vs
//!   template labels, strategy and rolling update int-or-percent rules,
//!   template restartPolicy and activeDeadlineSeconds) and, on update, the
//!   apps/v1 selector immutability; on `/status`, the status counts and a
//!   Deployment's `collisionCount` never decremented;
//! - DaemonSet: `ValidateDaemonSetSpec` (selector, selector vs template
//!   labels, the pod template, restartPolicy, activeDeadlineSeconds,
//!   minReadySeconds, update strategy and its rolling update bounds,
//!   revisionHistoryLimit), the selector immutable; on `/status`, the
//!   counts and `collisionCount`;
//! - StatefulSet: name a DNS-1123 label, `ValidateStatefulSetSpec`
//!   (podManagementPolicy, update strategy, partition and maxUnavailable,
//!   PVC retention policy, replicas, minReadySeconds, revisionHistoryLimit,
//!   ordinals, selector,
//!   template labels and annotations, restartPolicy,
//!   activeDeadlineSeconds) and on update only the fields upstream lets
//!   change; on `/status`, the counts and `collisionCount`;
//! - ControllerRevision: `data` required and immutable, `revision`
//!   non-negative;
//! - pod specs (Pod, PodTemplate, templates): volume names, containers
//!   required, container and init container names (DNS label, unique),
//!   image required, terminationMessagePolicy, ports (name, number,
//!   hostPort, protocol), imagePullPolicy, restartPolicy, dnsPolicy,
//!   nodeSelector, serviceAccountName, nodeName, activeDeadlineSeconds,
//!   hostname, tolerations; ephemeral containers forbidden on create;
//! - Pod `/status`: custom condition types, nominatedNodeName, the QoS class
//!   immutable, terminated containers not revived against the restart
//!   policy, `hostIPs[0]` equal to `hostIP`;
//! - Node (main resource and `/status`): taints, unique `status.addresses`,
//!   `podCIDRs` and `providerID` unchanged once set, `externalID` unchanged;
//! - Service: type, sessionAffinity, ports (required, names, numbers,
//!   protocol, targetPort), selector labels, ExternalName services
//!   (`externalName` a DNS subdomain, no cluster IPs or IP families),
//!   `ValidateServiceClusterIPsRelatedFields` (cluster IPs in step with
//!   `clusterIP`, IP syntax, families and policy); on update, cluster IPs
//!   and IP families that may not change once set;
//! - Namespace finalizer names and, on `/status`, the phase against the
//!   deletion timestamp; ConfigMap and Secret keys, `immutable` ConfigMaps
//!   and Secrets, Secret `type` immutability; Lease durations; PDB specs;
//! - PersistentVolumeClaim: `ValidatePersistentVolumeClaim` and its update
//!   and `/status` rules but for data sources and resize statuses
//!   (`storage.rs`);
//! - Endpoints: `ValidateEndpoints` whole (subsets with addresses, IPs an
//!   endpoint may have, hostnames, node names, ports);
//! - EndpointSlice: `ValidateEndpointSlice{Create,Update}` whole (address
//!   type supported and immutable, endpoints and their addresses by type,
//!   hostname, nodeName, topology, zone and node hints, ports);
//! - Role and ClusterRole policy rules, and a ClusterRole's
//!   `aggregationRule` (at least one valid selector);
//! - pod updates: only what upstream `ValidatePodUpdate` lets change
//!   (`pod_update.rs`);
//! - Job: `ValidateJob` (the generated selector's labels, counts, indexed
//!   completion limits, managedBy, pod failure and success policies, pod
//!   replacement policy, the pod template and its Never/OnFailure restart
//!   policy, `job.rs` and `job_policies.rs`), on update
//!   `ValidateJobSpecUpdate` (`job_update.rs`), on `/status` the 1.37
//!   status strategy's rules (`job_status.rs`);
//! - CronJob: schedule (robfig/cron's `ParseStandard`), `TZ=` refused in
//!   new schedules, time zone, concurrency policy, job template, history
//!   limits, the 52-character name on create (`cron_job.rs`).
//!
//! Not validated: Service node port, load balancer and traffic policy
//! rules and its status,
//! resource quantities, env, volume mounts and sources, probes, security
//! contexts, affinity, topology spread, pod-specific annotations, pod and
//! host IP syntax, managedFields, Event and ServiceAccount specifics, role bindings, node resources and CIDR syntax, PDB status, and the warning
//! upstream gives for a finalizer name without a domain.

use serde_json::Value;

use crate::resources::Builtin;

mod access;
mod apps;
#[cfg(test)]
mod batch_tests;
mod controller_revision;
mod core_v1;
mod cron_job;
mod daemon_set;
mod discovery;
mod endpoints;
mod errors;
#[cfg(test)]
mod fixtures;
mod ip;
mod job;
mod job_policies;
mod job_status;
mod job_update;
mod meta;
mod node;
mod pod;
mod pod_status;
mod pod_update;
mod policy;
mod quantity;
mod rbac;
mod render;
mod service;
mod stateful_set;
mod storage;
mod syntax;
mod taints;
mod values;
mod workload_status;

use access::{at, int, list, map, str_of, text};
use apps::{deployment_spec, replica_set_spec, selector_immutable};
use core_v1::{data_keys, finalizer_name, immutable_data, namespace_phase};
use errors::{Errors, IMMUTABLE, nonnegative};
use meta::{object_meta, object_meta_update};
use pod::{pod_spec, pod_template_spec};
use pod_status::pod_status_update;
use pod_update::pod_update;
use policy::pod_disruption_budget_spec;
use workload_status::{
    collision_count_update, daemon_set_status, deployment_status, replica_set_status, stateful_set_status,
};

pub(crate) use render::{go_quote, go_string_slice};
pub use service::validate_cluster_ips_related_fields;

pub use errors::{
    Cause, FIELD_VALUE_DUPLICATE, FIELD_VALUE_FORBIDDEN, FIELD_VALUE_INVALID, FIELD_VALUE_NOT_SUPPORTED,
    FIELD_VALUE_REQUIRED, FIELD_VALUE_TOO_LONG, FIELD_VALUE_TOO_MANY,
};

/// Validates an object about to be created.
#[doc(alias = "ValidateDeployment")]
#[doc(alias = "ValidateReplicaSet")]
#[doc(alias = "ValidateDaemonSet")]
#[doc(alias = "ValidateStatefulSet")]
#[doc(alias = "ValidateControllerRevision")]
#[doc(alias = "ValidatePodCreate")]
pub fn validate_create(kind: Builtin, object: &Value) -> Vec<Cause> {
    let mut errs = Errors::default();
    object_meta(&mut errs, kind, at(object, "metadata"));
    spec(&mut errs, kind, object, None);
    if kind == Builtin::Pod && !list(at(object, "spec"), "ephemeralContainers").is_empty() {
        errs.forbidden("spec.ephemeralContainers", "cannot be set on create");
    }
    errs.finish()
}

/// Validates an update of `old` to `new`, immutable fields included.
#[doc(alias = "ValidateDeploymentUpdate")]
#[doc(alias = "ValidateReplicaSetUpdate")]
#[doc(alias = "ValidateDaemonSetUpdate")]
#[doc(alias = "ValidateStatefulSetUpdate")]
#[doc(alias = "ValidateControllerRevisionUpdate")]
#[doc(alias = "ValidatePodUpdate")]
pub fn validate_update(kind: Builtin, old: &Value, new: &Value) -> Vec<Cause> {
    let mut errs = Errors::default();
    object_meta_update(&mut errs, at(old, "metadata"), at(new, "metadata"));
    spec(&mut errs, kind, new, Some(old));
    errs.finish()
}

/// Validates an update of `old` to `new` through the `/status`
/// subresource: the metadata update rules, then the kind's status rules
/// where upstream's status strategy has its own, else its update rules.
#[doc(alias = "ValidateDeploymentStatusUpdate")]
#[doc(alias = "ValidateDaemonSetStatusUpdate")]
#[doc(alias = "ValidateStatefulSetStatusUpdate")]
#[doc(alias = "ValidateReplicaSetStatusUpdate")]
#[doc(alias = "ValidateNamespaceStatusUpdate")]
#[doc(alias = "ValidatePodStatusUpdate")]
pub fn validate_status_update(kind: Builtin, old: &Value, new: &Value) -> Vec<Cause> {
    let mut errs = Errors::default();
    // Upstream checks a StatefulSet's status before its metadata.
    if kind == Builtin::StatefulSet {
        stateful_set_status(&mut errs, at(new, "status"));
    }
    object_meta_update(&mut errs, at(old, "metadata"), at(new, "metadata"));
    match kind {
        Builtin::Deployment => {
            deployment_status(&mut errs, at(new, "status"));
            collision_count_update(&mut errs, old, new);
        }
        Builtin::DaemonSet => {
            daemon_set_status(&mut errs, at(new, "status"));
            collision_count_update(&mut errs, old, new);
        }
        Builtin::StatefulSet => collision_count_update(&mut errs, old, new),
        Builtin::ReplicaSet => replica_set_status(&mut errs, at(new, "status")),
        Builtin::Namespace => namespace_phase(&mut errs, new),
        Builtin::Pod => pod_status_update(&mut errs, old, new),
        Builtin::PersistentVolumeClaim => storage::claim_status_update(&mut errs, new),
        Builtin::Job => job_status::job_status_update(&mut errs, old, new),
        // The CronJob status strategy validates nothing of its own.
        Builtin::CronJob => {}
        _ => spec(&mut errs, kind, new, Some(old)),
    }
    errs.finish()
}

/// The kind-specific rules; `old` is set on update.
fn spec(errs: &mut Errors, kind: Builtin, object: &Value, old: Option<&Value>) {
    match kind {
        Builtin::Deployment => {
            deployment_spec(errs, at(object, "spec"));
            if let Some(old) = old {
                selector_immutable(errs, old, object);
            }
        }
        Builtin::ReplicaSet => {
            replica_set_spec(errs, at(object, "spec"));
            if let Some(old) = old {
                selector_immutable(errs, old, object);
            }
        }
        Builtin::DaemonSet => {
            daemon_set::daemon_set_spec(errs, at(object, "spec"));
            if let Some(old) = old {
                selector_immutable(errs, old, object);
            }
        }
        Builtin::StatefulSet => {
            stateful_set::stateful_set_spec(errs, at(object, "spec"));
            if let Some(old) = old {
                stateful_set::stateful_set_update(errs, old, object);
            }
        }
        Builtin::ControllerRevision => {
            controller_revision::controller_revision(errs, object);
            if let Some(old) = old {
                controller_revision::data_immutable(errs, old, object);
            }
        }
        Builtin::Pod => {
            pod_spec(errs, at(object, "spec"), "spec");
            if let Some(old) = old {
                pod_update(errs, old, object);
            }
        }
        Builtin::PodTemplate => pod_template_spec(errs, at(object, "template"), "template"),
        Builtin::PersistentVolumeClaim => {
            storage::claim_spec(errs, at(object, "spec"), "spec");
            if let Some(old) = old {
                storage::claim_update(errs, old, object);
            }
        }
        Builtin::Service => {
            if let Some(old) = old {
                service::service_update(errs, at(old, "spec"), at(object, "spec"));
            }
            service::service_spec(errs, at(object, "spec"));
        }
        Builtin::Namespace => {
            for finalizer in list(at(object, "spec"), "finalizers") {
                finalizer_name(errs, str_of(finalizer), "spec.finalizers");
            }
        }
        Builtin::ConfigMap => {
            if let Some(old) = old {
                immutable_data(errs, old, object, &["data", "binaryData"]);
            }
            data_keys(errs, object, "data");
            data_keys(errs, object, "binaryData");
            let binary = map(object, "binaryData");
            for key in map(object, "data").keys().filter(|k| binary.contains_key(*k)) {
                errs.invalid(&format!("data[{key}]"), go_quote(key), "duplicate of key present in binaryData");
            }
        }
        Builtin::Secret => {
            if let Some(old) = old {
                let (old_type, new_type) = (text(old, "type"), text(object, "type"));
                if old_type != new_type {
                    errs.invalid("type", go_quote(new_type), IMMUTABLE);
                }
                immutable_data(errs, old, object, &["data"]);
            }
            data_keys(errs, object, "data");
        }
        Builtin::Lease => {
            let spec = at(object, "spec");
            if let Some(duration) = int(spec, "leaseDurationSeconds").filter(|d| *d <= 0) {
                errs.invalid("spec.leaseDurationSeconds", duration.to_string(), "must be greater than 0");
            }
            nonnegative(errs, int(spec, "leaseTransitions"), "spec.leaseTransitions");
        }
        Builtin::PodDisruptionBudget => pod_disruption_budget_spec(errs, at(object, "spec")),
        Builtin::EndpointSlice => discovery::endpoint_slice(errs, object, old),
        Builtin::Endpoints => endpoints::endpoints(errs, object),
        Builtin::Node => node::node(errs, object, old),
        Builtin::ClusterRole => rbac::role(errs, object, false),
        Builtin::Role => rbac::role(errs, object, true),
        Builtin::Job => {
            let prefixed_labels = old.is_none_or(job_update::requires_prefixed_labels);
            job::job(errs, object, prefixed_labels);
            if let Some(old) = old {
                job_update::job_spec_update(errs, old, object);
            }
        }
        Builtin::CronJob => cron_job::cron_job(errs, object, old),
        Builtin::ClusterRoleBinding
        | Builtin::RoleBinding
        | Builtin::ServiceAccount
        | Builtin::CoreEvent
        | Builtin::EventsEvent => {}
    }
}

#[cfg(test)]
mod tests {
    //! Tests of field validation: valid objects pass, and each rule gives
    //! upstream's reason, field path and message.

    use serde_json::json;

    use super::fixtures::{lines, with, without};
    use super::meta::TOTAL_ANNOTATION_SIZE_LIMIT;
    use super::*;

    // === utils ===

    /// What `kubectl create deployment web --image=nginx` sends, defaulted.
    fn deployment() -> Value {
        let mut object = json!({
            "kind": "Deployment",
            "apiVersion": "apps/v1",
            "metadata": {"name": "web", "namespace": "default", "creationTimestamp": null,
                "labels": {"app": "web"}},
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
        });
        crate::defaults::apply(Builtin::Deployment, &mut object);
        object
    }

    /// A defaulted ReplicaSet.
    fn replica_set() -> Value {
        let mut object = deployment();
        object["kind"] = json!("ReplicaSet");
        if let Some(spec) = object["spec"].as_object_mut() {
            for field in ["strategy", "revisionHistoryLimit", "progressDeadlineSeconds"] {
                spec.remove(field);
            }
        }
        object
    }

    /// What `kubectl run web --image=nginx` sends, defaulted.
    fn pod() -> Value {
        let mut object = json!({
            "kind": "Pod", "apiVersion": "v1",
            "metadata": {"name": "web", "labels": {"run": "web"}},
            "spec": {"containers": [{"name": "web", "image": "nginx", "resources": {}}]}
        });
        crate::defaults::apply(Builtin::Pod, &mut object);
        object
    }

    const LABEL_REGEX_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
    const SUBDOMAIN_REGEX_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

    // === tests ===

    #[test]
    fn valid_objects_pass() {
        assert_eq!(lines(&validate_create(Builtin::Deployment, &deployment())), Vec::<String>::new());
        assert_eq!(lines(&validate_create(Builtin::ReplicaSet, &replica_set())), Vec::<String>::new());
        assert_eq!(lines(&validate_create(Builtin::Pod, &pod())), Vec::<String>::new());
        let recreate = with(deployment(), "/spec/strategy", json!({"type": "Recreate"}));
        assert!(validate_create(Builtin::Deployment, &recreate).is_empty());
        let mut svc = json!({"metadata": {"name": "web"}, "spec": {"selector": {"app": "web"},
        "ports": [{"name": "http", "port": 80, "targetPort": "http"}, {"name": "metrics", "port": 9090}]}});
        crate::defaults::apply(Builtin::Service, &mut svc);
        assert!(validate_create(Builtin::Service, &svc).is_empty());
        let cm = json!({"metadata": {"name": "c"}, "data": {"app.properties": "x", "KEY_1": "y"}});
        assert!(validate_create(Builtin::ConfigMap, &cm).is_empty());
        let generated = json!({"metadata": {"generateName": "web-"}, "spec": pod()["spec"].clone()});
        assert!(validate_create(Builtin::Pod, &generated).is_empty());
    }

    #[test]
    fn deployment_rules() {
        let cases: Vec<(Value, Vec<&str>)> = vec![
            (
                with(deployment(), "/spec/replicas", json!(-1)),
                vec!["spec.replicas: Invalid value: -1: must be greater than or equal to 0"],
            ),
            (
                with(deployment(), "/spec/minReadySeconds", json!(-5)),
                vec!["spec.minReadySeconds: Invalid value: -5: must be greater than or equal to 0"],
            ),
            (
                with(deployment(), "/spec/revisionHistoryLimit", json!(-1)),
                vec!["spec.revisionHistoryLimit: Invalid value: -1: must be greater than or equal to 0"],
            ),
            (
                with(
                    with(deployment(), "/spec/minReadySeconds", json!(700)),
                    "/spec/progressDeadlineSeconds",
                    json!(600),
                ),
                vec!["spec.progressDeadlineSeconds: Invalid value: 600: must be greater than minReadySeconds"],
            ),
            (
                without(deployment(), "/spec/selector"),
                vec![
                    "spec.selector: Required value",
                    "spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"web\"}: `selector` does not match template `labels`",
                ],
            ),
            (
                with(deployment(), "/spec/selector", json!({"matchLabels": {}})),
                vec![
                    "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for deployment",
                ],
            ),
            (
                with(deployment(), "/spec/selector/matchLabels/app", json!("api")),
                vec![
                    "spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"web\"}: `selector` does not match template `labels`",
                ],
            ),
            (
                with(deployment(), "/spec/selector", json!({"matchExpressions": [{"key": "app", "operator": "In"}]})),
                vec![
                    "spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
                    "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement{v1.LabelSelectorRequirement{Key:\"app\", Operator:\"In\", Values:[]string(nil)}}}: invalid label selector",
                ],
            ),
            (
                with(deployment(), "/spec/strategy", json!({"type": "Recreate", "rollingUpdate": {}})),
                vec!["spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is 'Recreate'"],
            ),
            (
                with(deployment(), "/spec/strategy", json!({"type": "BlueGreen"})),
                vec![
                    "spec.strategy: Unsupported value: apps.DeploymentStrategy{Type:\"BlueGreen\", RollingUpdate:(*apps.RollingUpdateDeployment)(nil)}: supported values: \"Recreate\", \"RollingUpdate\"",
                ],
            ),
            (
                with(deployment(), "/spec/strategy/rollingUpdate", json!({"maxSurge": 0, "maxUnavailable": 0})),
                vec![
                    "spec.strategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:0, IntVal:0, StrVal:\"\"}: may not be 0 when `maxSurge` is 0",
                ],
            ),
            (
                with(deployment(), "/spec/strategy/rollingUpdate", json!({"maxSurge": "0%", "maxUnavailable": "0%"})),
                vec![
                    "spec.strategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:\"0%\"}: may not be 0 when `maxSurge` is 0",
                ],
            ),
            (
                with(deployment(), "/spec/strategy/rollingUpdate/maxUnavailable", json!("150%")),
                vec![
                    "spec.strategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:\"150%\"}: must not be greater than 100%",
                ],
            ),
            (
                with(deployment(), "/spec/strategy/rollingUpdate/maxSurge", json!("abc")),
                vec![
                    "spec.strategy.rollingUpdate.maxSurge: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:\"abc\"}: a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
                ],
            ),
            (
                with(deployment(), "/spec/strategy/rollingUpdate/maxSurge", json!(-1)),
                vec!["spec.strategy.rollingUpdate.maxSurge: Invalid value: -1: must be greater than or equal to 0"],
            ),
            (
                with(deployment(), "/spec/template/spec/restartPolicy", json!("Never")),
                vec!["spec.template.spec.restartPolicy: Unsupported value: \"Never\": supported values: \"Always\""],
            ),
            (
                with(deployment(), "/spec/template/spec/activeDeadlineSeconds", json!(30)),
                vec![
                    "spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in ReplicaSet is not Supported",
                ],
            ),
            (
                with(deployment(), "/spec/template/spec/containers", json!([])),
                vec!["spec.template.spec.containers: Required value"],
            ),
        ];
        for (object, want) in cases {
            assert_eq!(lines(&validate_create(Builtin::Deployment, &object)), want);
        }
    }

    #[test]
    fn container_rules() {
        let containers = |list: Value| {
            let mut object = with(deployment(), "/spec/template/spec/containers", list);
            crate::defaults::apply(Builtin::Deployment, &mut object);
            lines(&validate_create(Builtin::Deployment, &object))
        };
        const C: &str = "spec.template.spec.containers";
        assert_eq!(containers(json!([{"name": "", "image": "nginx"}])), vec![format!("{C}[0].name: Required value")]);
        assert_eq!(
            containers(json!([{"name": "Web_1", "image": "nginx"}])),
            vec![format!("{C}[0].name: Invalid value: \"Web_1\": {LABEL_REGEX_MSG}")]
        );
        assert_eq!(
            containers(json!([{"name": "a", "image": "nginx"}, {"name": "a", "image": "redis"}])),
            vec![format!("{C}[1].name: Duplicate value: \"a\"")]
        );
        assert_eq!(containers(json!([{"name": "a"}])), vec![format!("{C}[0].image: Required value")]);
        assert_eq!(
            containers(json!([{"name": "a", "image": "a", "imagePullPolicy": "Sometimes",
            "ports": [{"containerPort": 70000, "protocol": "HTTP"}]}])),
            vec![
                format!("{C}[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive"),
                format!(
                    "{C}[0].ports[0].protocol: Unsupported value: \"HTTP\": supported values: \"SCTP\", \"TCP\", \"UDP\""
                ),
                format!(
                    "{C}[0].imagePullPolicy: Unsupported value: \"Sometimes\": supported values: \"Always\", \"IfNotPresent\", \"Never\""
                ),
            ]
        );
    }

    #[test]
    fn replica_set_rules() {
        let cases: Vec<(Value, Vec<&str>)> = vec![
            (
                with(replica_set(), "/spec/replicas", json!(-2)),
                vec!["spec.replicas: Invalid value: -2: must be greater than or equal to 0"],
            ),
            (
                with(replica_set(), "/spec/minReadySeconds", json!(-1)),
                vec!["spec.minReadySeconds: Invalid value: -1: must be greater than or equal to 0"],
            ),
            (
                without(replica_set(), "/spec/selector"),
                vec![
                    "spec.selector: Required value",
                    "spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"web\"}: `selector` does not match template `labels`",
                ],
            ),
            (
                with(replica_set(), "/spec/template/metadata/labels", json!({"app": "other", "tier": "x"})),
                vec![
                    "spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"other\", \"tier\":\"x\"}: `selector` does not match template `labels`",
                ],
            ),
        ];
        for (object, want) in cases {
            assert_eq!(lines(&validate_create(Builtin::ReplicaSet, &object)), want);
        }
    }

    #[test]
    fn names_labels_and_annotations() {
        let named = |name: &str| with(deployment(), "/metadata/name", json!(name));
        assert_eq!(
            lines(&validate_create(Builtin::Deployment, &named("Web"))),
            vec![format!("metadata.name: Invalid value: \"Web\": {SUBDOMAIN_REGEX_MSG}")]
        );
        assert!(validate_create(Builtin::Deployment, &named("web.v2")).is_empty());
        assert_eq!(
            lines(&validate_create(Builtin::Deployment, &named(&"a".repeat(254)))),
            vec![format!("metadata.name: Invalid value: \"{}\": must be no more than 253 characters", "a".repeat(254))]
        );
        assert_eq!(
            lines(&validate_create(Builtin::Deployment, &without(deployment(), "/metadata/name"))),
            vec!["metadata.name: Required value: name or generateName is required"]
        );
        assert_eq!(
            lines(&validate_create(Builtin::Namespace, &json!({"metadata": {"name": "team.a"}}))),
            vec![format!("metadata.name: Invalid value: \"team.a\": {LABEL_REGEX_MSG}")]
        );
        let svc = json!({"metadata": {"name": "1web"}, "spec": {"type": "ClusterIP", "sessionAffinity": "None",
        "ports": [{"port": 80, "protocol": "TCP", "targetPort": 80}]}});
        assert_eq!(
            lines(&validate_create(Builtin::Service, &svc)),
            vec![
                "metadata.name: Invalid value: \"1web\": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
            ]
        );
        assert_eq!(
            lines(&validate_create(
                Builtin::Deployment,
                &with(deployment(), "/metadata/labels", json!({"app/x/y": "web"}))
            )),
            vec![
                "metadata.labels: Invalid value: \"app/x/y\": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
            ]
        );
        assert_eq!(
            lines(&validate_create(
                Builtin::Deployment,
                &with(deployment(), "/metadata/labels", json!({"app": "-web"}))
            )),
            vec![
                "metadata.labels: Invalid value: \"-web\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
            ]
        );
        assert_eq!(
            lines(&validate_create(
                Builtin::Deployment,
                &with(deployment(), "/metadata/annotations", json!({"Example.com/": "x"}))
            )),
            vec![
                "metadata.annotations: Invalid value: \"Example.com/\": name part must be non-empty",
                "metadata.annotations: Invalid value: \"Example.com/\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
            ]
        );
        let big = with(deployment(), "/metadata/annotations", json!({"a": "x".repeat(TOTAL_ANNOTATION_SIZE_LIMIT)}));
        assert_eq!(
            lines(&validate_create(Builtin::Deployment, &big)),
            vec!["metadata.annotations: Too long: may not be more than 262144 bytes"]
        );
        let template_label = with(deployment(), "/spec/template/metadata/labels/bad key", json!("x"));
        assert_eq!(
            lines(&validate_create(Builtin::Deployment, &template_label))[0],
            "spec.template.metadata.labels: Invalid value: \"bad key\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
        );
    }

    #[test]
    fn pod_rules() {
        let mut bare = json!({"metadata": {"name": "p"}, "spec": {}});
        crate::defaults::apply(Builtin::Pod, &mut bare);
        assert_eq!(lines(&validate_create(Builtin::Pod, &bare)), vec!["spec.containers: Required value"]);
        let ephemeral = with(pod(), "/spec/ephemeralContainers", json!([{"name": "debug", "image": "busybox"}]));
        assert_eq!(
            lines(&validate_create(Builtin::Pod, &ephemeral)),
            vec!["spec.ephemeralContainers: Forbidden: cannot be set on create"]
        );
        let bad = with(with(pod(), "/spec/restartPolicy", json!("Sometimes")), "/spec/dnsPolicy", json!("Cloud"));
        assert_eq!(
            lines(&validate_create(Builtin::Pod, &bad)),
            vec![
                "spec.restartPolicy: Unsupported value: \"Sometimes\": supported values: \"Always\", \"OnFailure\", \"Never\"",
                "spec.dnsPolicy: Unsupported value: \"Cloud\": supported values: \"ClusterFirstWithHostNet\", \"ClusterFirst\", \"Default\", \"None\"",
            ]
        );
        // A pod may use OnFailure; a template may not.
        let on_failure = with(pod(), "/spec/restartPolicy", json!("OnFailure"));
        assert!(validate_create(Builtin::Pod, &on_failure).is_empty());
    }

    #[test]
    fn other_kinds() {
        let cm = json!({"metadata": {"name": "c"}, "data": {"a b": "x"}, "binaryData": {"k": ""}});
        let cm = with(cm, "/data/k", json!("y"));
        assert_eq!(
            lines(&validate_create(Builtin::ConfigMap, &cm)),
            vec![
                "data[a b]: Invalid value: \"a b\": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')",
                "data[k]: Invalid value: \"k\": duplicate of key present in binaryData",
            ]
        );
        let ns = json!({"metadata": {"name": "a"}, "spec": {"finalizers": ["custom"]}});
        assert_eq!(
            lines(&validate_create(Builtin::Namespace, &ns)),
            vec![
                "spec.finalizers: Invalid value: \"custom\": name is neither a standard finalizer name nor is it fully qualified"
            ]
        );
        let svc = json!({"metadata": {"name": "s"}, "spec": {"type": "Magic", "sessionAffinity": "None",
        "ports": [{"port": 80, "protocol": "TCP", "targetPort": 80}, {"port": 0, "protocol": "TCP", "targetPort": 80}]}});
        assert_eq!(
            lines(&validate_create(Builtin::Service, &svc)),
            vec![
                "spec.ports[0].name: Required value",
                "spec.ports[1].name: Required value",
                "spec.ports[1].port: Invalid value: 0: must be between 1 and 65535, inclusive",
                "spec.type: Unsupported value: \"Magic\": supported values: \"ClusterIP\", \"ExternalName\", \"LoadBalancer\", \"NodePort\"",
            ]
        );
        let no_ports = json!({"metadata": {"name": "s"}, "spec": {"type": "ClusterIP", "sessionAffinity": "None"}});
        assert_eq!(lines(&validate_create(Builtin::Service, &no_ports)), vec!["spec.ports: Required value"]);
        let lease = json!({"metadata": {"name": "l"}, "spec": {"leaseDurationSeconds": 0}});
        assert_eq!(
            lines(&validate_create(Builtin::Lease, &lease)),
            vec!["spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0"]
        );
    }

    #[test]
    fn updates() {
        let old = deployment();
        assert!(validate_update(Builtin::Deployment, &old, &with(old.clone(), "/spec/replicas", json!(5))).is_empty());
        let moved = with(
            with(old.clone(), "/spec/selector/matchLabels/app", json!("web2")),
            "/spec/template/metadata/labels/app",
            json!("web2"),
        );
        assert_eq!(
            lines(&validate_update(Builtin::Deployment, &old, &moved)),
            vec![
                "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{\"app\":\"web2\"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable"
            ]
        );
        let renamed = with(old.clone(), "/metadata/name", json!("web2"));
        assert_eq!(
            lines(&validate_update(Builtin::Deployment, &old, &renamed)),
            vec!["metadata.name: Invalid value: \"web2\": field is immutable"]
        );
        // An empty matchExpressions list is the same selector.
        let same = with(old.clone(), "/spec/selector/matchExpressions", json!([]));
        assert!(validate_update(Builtin::Deployment, &old, &same).is_empty());
        let rs = replica_set();
        let rs_moved = with(rs.clone(), "/spec/selector/matchLabels/tier", json!("x"));
        let rs_moved = with(rs_moved, "/spec/template/metadata/labels/tier", json!("x"));
        assert_eq!(
            lines(&validate_update(Builtin::ReplicaSet, &rs, &rs_moved)),
            vec![
                "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{\"app\":\"web\", \"tier\":\"x\"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable"
            ]
        );
        let rs_negative = with(rs.clone(), "/spec/replicas", json!(-1));
        assert_eq!(
            lines(&validate_update(Builtin::ReplicaSet, &rs, &rs_negative)),
            vec!["spec.replicas: Invalid value: -1: must be greater than or equal to 0"]
        );

        let secret = json!({"metadata": {"name": "s"}, "type": "Opaque", "immutable": true, "data": {"a": "eA=="}});
        let changed = with(with(secret.clone(), "/data/a", json!("eQ==")), "/type", json!("kubernetes.io/tls"));
        assert_eq!(
            lines(&validate_update(Builtin::Secret, &secret, &changed)),
            vec![
                "type: Invalid value: \"kubernetes.io/tls\": field is immutable",
                "data: Forbidden: field is immutable when `immutable` is set",
            ]
        );
        let generation = with(with(old.clone(), "/metadata/generation", json!(3)), "/metadata/uid", json!("u1"));
        let decremented =
            with(with(generation.clone(), "/metadata/generation", json!(2)), "/metadata/uid", json!("u2"));
        assert_eq!(
            lines(&validate_update(Builtin::Deployment, &generation, &decremented)),
            vec![
                "metadata.generation: Invalid value: 2: must not be decremented",
                "metadata.uid: Invalid value: \"u2\": field is immutable",
            ]
        );
    }

    #[test]
    fn causes_carry_reason_field_and_message() {
        let causes = validate_create(Builtin::Deployment, &with(deployment(), "/spec/replicas", json!(-1)));
        assert_eq!(
            causes,
            vec![Cause {
                reason: FIELD_VALUE_INVALID,
                message: "Invalid value: -1: must be greater than or equal to 0".to_owned(),
                field: "spec.replicas".to_owned(),
            }]
        );
        let causes = validate_create(Builtin::Deployment, &without(deployment(), "/spec/selector"));
        assert_eq!(causes[0].reason, FIELD_VALUE_REQUIRED);
    }
}
