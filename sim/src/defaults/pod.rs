//! Defaults of Pods and of every pod spec (in Pods, PodTemplates and
//! workload templates): the generated walk over containers, probes and
//! volumes, and the create-time mutations of the default admission chain.

use serde_json::{Map, Value, json};

use super::fields::{child, children, default_nonzero, default_str, default_value, is_unset_str};
use super::image::image_pull_policy;
use super::kinds::persistent_volume_claim_spec;

/// Termination message path every container gets.
pub const TERMINATION_MESSAGE_PATH: &str = "/dev/termination-log";

/// The scheduler a pod is assigned to when it names none.
pub const DEFAULT_SCHEDULER_NAME: &str = "default-scheduler";

/// Seconds the DefaultTolerationSeconds admission plugin lets a pod stay on a
/// not-ready or unreachable node.
pub const DEFAULT_TOLERATION_SECONDS: i64 = 300;

/// Pod: the pod-spec defaults, the Pod-only ones, then the admission ones.
pub(super) fn pod(object: &mut Value) {
    let Some(spec) = child(object, "spec") else {
        return;
    };
    pod_spec(spec);
    for list in ["containers", "initContainers"] {
        for container in children(spec, list) {
            requests_from_limits(container);
        }
    }
    default_value(spec, "enableServiceLinks", json!(true));
    if spec.get("hostNetwork").and_then(Value::as_bool) == Some(true) {
        for list in ["containers", "initContainers"] {
            for container in children(spec, list) {
                for port in children(container, "ports") {
                    let is_unset = port.get("hostPort").is_none_or(|p| p.is_null() || p == 0);
                    if is_unset && let Some(container_port) = port.get("containerPort").cloned() {
                        port.insert("hostPort".to_owned(), container_port);
                    }
                }
            }
        }
    }
    admit_pod(spec);
}

/// The mutations of the Priority and DefaultTolerationSeconds admission
/// plugins (ServiceAccount's are `crate::admission`'s).
fn admit_pod(spec: &mut Map<String, Value>) {
    let class = spec.get("priorityClassName").and_then(Value::as_str).unwrap_or("");
    let priority = match class {
        "" => Some(0),
        "system-cluster-critical" => Some(2_000_000_000),
        "system-node-critical" => Some(2_000_001_000),
        _ => None,
    };
    if let Some(priority) = priority {
        default_value(spec, "priority", json!(priority));
        default_str(spec, "preemptionPolicy", "PreemptLowerPriority");
    }

    let tolerations = spec.entry("tolerations").or_insert_with(|| json!([]));
    if tolerations.is_null() {
        *tolerations = json!([]);
    }
    let Some(tolerations) = tolerations.as_array_mut() else {
        return;
    };
    for key in ["node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"] {
        let tolerated = tolerations.iter().any(|t| {
            let t_key = t.get("key").and_then(Value::as_str).unwrap_or("");
            let effect = t.get("effect").and_then(Value::as_str).unwrap_or("");
            (t_key == key || t_key.is_empty()) && (effect == "NoExecute" || effect.is_empty())
        });
        if !tolerated {
            tolerations.push(json!({
                "effect": "NoExecute",
                "key": key,
                "operator": "Exists",
                "tolerationSeconds": DEFAULT_TOLERATION_SECONDS,
            }));
        }
    }
}

// === pod specs ===

/// A `PodTemplateSpec`: only its `spec` has defaults.
pub(super) fn pod_template(template: &mut Map<String, Value>) {
    if let Some(spec) = template.get_mut("spec").and_then(Value::as_object_mut) {
        pod_spec(spec);
    }
}

/// `SetDefaults_PodSpec` and everything the generated defaulters reach from a
/// pod spec.
fn pod_spec(spec: &mut Map<String, Value>) {
    default_str(spec, "dnsPolicy", "ClusterFirst");
    default_str(spec, "restartPolicy", "Always");
    default_value(spec, "securityContext", json!({}));
    default_value(spec, "terminationGracePeriodSeconds", json!(30));
    default_str(spec, "schedulerName", DEFAULT_SCHEDULER_NAME);
    mirror_service_account(spec);
    for volume in children(spec, "volumes") {
        volume_defaults(volume);
    }
    for list in ["initContainers", "containers", "ephemeralContainers"] {
        for container in children(spec, list) {
            container_defaults(container);
        }
    }
}

/// The v1 conversion keeps the deprecated `serviceAccount` equal to
/// `serviceAccountName`, reading the old field when only it is set.
fn mirror_service_account(spec: &mut Map<String, Value>) {
    let name = spec.get("serviceAccountName").and_then(Value::as_str).unwrap_or("");
    let deprecated = spec.get("serviceAccount").and_then(Value::as_str).unwrap_or("");
    let effective = if name.is_empty() { deprecated } else { name }.to_owned();
    if !effective.is_empty() {
        spec.insert("serviceAccountName".to_owned(), json!(effective));
        spec.insert("serviceAccount".to_owned(), json!(effective));
    }
}

/// `SetDefaults_Container` and the nested defaulters of one container.
fn container_defaults(container: &mut Map<String, Value>) {
    if is_unset_str(container.get("imagePullPolicy")) {
        let image = container.get("image").and_then(Value::as_str).unwrap_or("");
        let policy = image_pull_policy(image);
        container.insert("imagePullPolicy".to_owned(), json!(policy));
    }
    default_str(container, "terminationMessagePath", TERMINATION_MESSAGE_PATH);
    default_str(container, "terminationMessagePolicy", "File");
    // A Go struct field, never omitted when the server writes the object.
    default_value(container, "resources", json!({}));
    for port in children(container, "ports") {
        default_str(port, "protocol", "TCP");
    }
    for env in children(container, "env") {
        if let Some(field_ref) =
            env.get_mut("valueFrom").and_then(|v| v.get_mut("fieldRef")).and_then(Value::as_object_mut)
        {
            default_str(field_ref, "apiVersion", "v1");
        }
    }
    for probe in ["livenessProbe", "readinessProbe", "startupProbe"] {
        if let Some(probe) = container.get_mut(probe).and_then(Value::as_object_mut) {
            probe_defaults(probe);
        }
    }
    if let Some(lifecycle) = container.get_mut("lifecycle").and_then(Value::as_object_mut) {
        for hook in ["postStart", "preStop"] {
            if let Some(http_get) =
                lifecycle.get_mut(hook).and_then(|h| h.get_mut("httpGet")).and_then(Value::as_object_mut)
            {
                http_get_defaults(http_get);
            }
        }
    }
}

/// `SetDefaults_Probe` and its handlers.
fn probe_defaults(probe: &mut Map<String, Value>) {
    default_nonzero(probe, "timeoutSeconds", 1);
    default_nonzero(probe, "periodSeconds", 10);
    default_nonzero(probe, "successThreshold", 1);
    default_nonzero(probe, "failureThreshold", 3);
    if let Some(http_get) = probe.get_mut("httpGet").and_then(Value::as_object_mut) {
        http_get_defaults(http_get);
    }
    if let Some(grpc) = probe.get_mut("grpc").and_then(Value::as_object_mut) {
        default_value(grpc, "service", json!(""));
    }
}

/// `SetDefaults_HTTPGetAction`.
fn http_get_defaults(http_get: &mut Map<String, Value>) {
    default_str(http_get, "path", "/");
    default_str(http_get, "scheme", "HTTP");
}

/// The volume source names a `Volume` may carry (everything but `name`).
const VOLUME_SOURCES: &[&str] = &[
    "awsElasticBlockStore",
    "azureDisk",
    "azureFile",
    "cephfs",
    "cinder",
    "configMap",
    "csi",
    "downwardAPI",
    "emptyDir",
    "ephemeral",
    "fc",
    "flexVolume",
    "flocker",
    "gcePersistentDisk",
    "gitRepo",
    "glusterfs",
    "hostPath",
    "image",
    "iscsi",
    "nfs",
    "persistentVolumeClaim",
    "photonPersistentDisk",
    "portworxVolume",
    "projected",
    "quobyte",
    "rbd",
    "scaleIO",
    "secret",
    "storageos",
    "vsphereVolume",
];

/// `SetDefaults_Volume` and the per-source defaulters.
fn volume_defaults(volume: &mut Map<String, Value>) {
    let has_source = VOLUME_SOURCES.iter().any(|s| volume.get(*s).is_some_and(|v| !v.is_null()));
    if !has_source {
        volume.insert("emptyDir".to_owned(), json!({}));
    }
    for source in ["secret", "configMap", "downwardAPI", "projected"] {
        if let Some(source) = volume.get_mut(source).and_then(Value::as_object_mut) {
            default_value(source, "defaultMode", json!(420));
        }
    }
    if let Some(host_path) = volume.get_mut("hostPath").and_then(Value::as_object_mut) {
        default_value(host_path, "type", json!(""));
    }
    if let Some(downward) = volume.get_mut("downwardAPI").and_then(Value::as_object_mut) {
        downward_items(downward);
    }
    if let Some(projected) = volume.get_mut("projected").and_then(Value::as_object_mut) {
        for source in children(projected, "sources") {
            if let Some(downward) = source.get_mut("downwardAPI").and_then(Value::as_object_mut) {
                downward_items(downward);
            }
            if let Some(token) = source.get_mut("serviceAccountToken").and_then(Value::as_object_mut) {
                default_value(token, "expirationSeconds", json!(3600));
            }
        }
    }
    if let Some(image) = volume.get_mut("image").and_then(Value::as_object_mut)
        && is_unset_str(image.get("pullPolicy"))
    {
        let reference = image.get("reference").and_then(Value::as_str).unwrap_or("");
        let policy = image_pull_policy(reference);
        image.insert("pullPolicy".to_owned(), json!(policy));
    }
    if let Some(claim_spec) = volume
        .get_mut("ephemeral")
        .and_then(|e| e.get_mut("volumeClaimTemplate"))
        .and_then(|t| t.get_mut("spec"))
        .and_then(Value::as_object_mut)
    {
        persistent_volume_claim_spec(claim_spec);
    }
}

/// `fieldRef.apiVersion` of downward API items.
fn downward_items(downward: &mut Map<String, Value>) {
    for item in children(downward, "items") {
        if let Some(field_ref) = item.get_mut("fieldRef").and_then(Value::as_object_mut) {
            default_str(field_ref, "apiVersion", "v1");
        }
    }
}

/// `SetDefaults_Pod`: a container's requests default to its limits.
fn requests_from_limits(container: &mut Map<String, Value>) {
    let Some(resources) = container.get_mut("resources").and_then(Value::as_object_mut) else {
        return;
    };
    let Some(limits) = resources.get("limits").and_then(Value::as_object).cloned() else {
        return;
    };
    let requests = resources.entry("requests").or_insert_with(|| json!({}));
    if requests.is_null() {
        *requests = json!({});
    }
    if let Some(requests) = requests.as_object_mut() {
        for (resource, quantity) in limits {
            requests.entry(resource).or_insert(quantity);
        }
    }
}
