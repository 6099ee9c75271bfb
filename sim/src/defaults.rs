//! Server-side defaulting: the fields the real API server fills in before it
//! validates and stores an object.
//!
//! This module owns the defaults of `k8s.io/kubernetes` `pkg/apis/core/v1`
//! and `pkg/apis/apps/v1` (hand-written `SetDefaults_*` functions and the
//! generated `zz_generated.defaults.go` that walks every pod spec), plus the
//! few create-time mutations a plain `kubectl run` pod visibly gets from the
//! default admission chain (Priority, ServiceAccount, DefaultTolerationSeconds)
//! and the namespace registry strategy. Everything works on schemaless JSON,
//! as the store keeps it, and every step is idempotent: applying twice is the
//! same as applying once.
//!
//! Fidelity matters because controllers hash what the server stores: the
//! Deployment controller's `pod-template-hash` is computed over the
//! *defaulted* pod template, so a missing default here yields a different
//! ReplicaSet name than a real cluster would produce.
//!
//! Left to other modules: validation (`validation.rs`), status written by
//! registry strategies other than Namespace (Pod `phase: Pending`,
//! `qosClass`), cluster IP allocation, name generation and quantity
//! canonicalisation.

use serde_json::{Map, Value, json};

use crate::resources::Builtin;

/// Termination message path every container gets.
pub const TERMINATION_MESSAGE_PATH: &str = "/dev/termination-log";

/// The scheduler a pod is assigned to when it names none.
pub const DEFAULT_SCHEDULER_NAME: &str = "default-scheduler";

/// The finalizer the namespace strategy puts on every new namespace.
pub const NAMESPACE_FINALIZER: &str = "kubernetes";

/// The label the API server sets on every namespace to its name.
pub const LABEL_METADATA_NAME: &str = "kubernetes.io/metadata.name";

/// Seconds the DefaultTolerationSeconds admission plugin lets a pod stay on a
/// not-ready or unreachable node.
pub const DEFAULT_TOLERATION_SECONDS: i64 = 300;

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
///   `serviceAccountName`/`serviceAccount` "default", the not-ready and
///   unreachable NoExecute tolerations for 300 s.
/// - Service: `sessionAffinity` None (clearing `sessionAffinityConfig`) or
///   the ClientIP timeout 10800, `type` ClusterIP, ports' `protocol` TCP and
///   `targetPort` = `port`, `externalTrafficPolicy` Cluster when externally
///   reachable, `internalTrafficPolicy` Cluster, `allocateLoadBalancerNodePorts`
///   true for LoadBalancer, and (registry behaviour of a single-stack IPv4
///   cluster) `ipFamilyPolicy` SingleStack, or RequireDualStack for a
///   headless service without selector, and `ipFamilies` [IPv4].
/// - Endpoints: ports' `protocol` TCP.
/// - Namespace: label `kubernetes.io/metadata.name` = name, `status.phase`
///   Active (the `kubernetes` finalizer is [`namespace_on_create`]).
/// - Node: `status.allocatable` = `status.capacity` when absent.
/// - Secret: `type` Opaque.
#[doc(alias = "SetObjectDefaults")]
pub fn apply(kind: Builtin, object: &mut Value) {
    match kind {
        Builtin::Deployment => {
            if let Some(spec) = child(object, "spec") {
                deployment_spec(spec);
                if let Some(template) = spec.get_mut("template").and_then(Value::as_object_mut) {
                    pod_template(template);
                }
            }
        }
        Builtin::ReplicaSet => {
            if let Some(spec) = child(object, "spec") {
                default_value(spec, "replicas", json!(1));
                if let Some(template) = spec.get_mut("template").and_then(Value::as_object_mut) {
                    pod_template(template);
                }
            }
        }
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
        Builtin::Namespace => namespace(object),
        Builtin::Node => node(object),
        Builtin::Secret => {
            if let Some(secret) = object.as_object_mut() {
                default_str(secret, "type", "Opaque");
            }
        }
        Builtin::ConfigMap | Builtin::ServiceAccount | Builtin::CoreEvent | Builtin::Lease | Builtin::EventsEvent => {}
    }
}

/// What the namespace registry strategy does on create only (never on
/// update, where the finalizers may have been removed by `/finalize`):
/// ensures `spec.finalizers` holds `kubernetes` and resets `status` to
/// `{phase: Active}`.
#[doc(alias = "PrepareForCreate")]
pub fn namespace_on_create(object: &mut Value) {
    let Some(ns) = object.as_object_mut() else {
        return;
    };
    let spec = ns.entry("spec").or_insert_with(|| json!({}));
    if spec.is_null() {
        *spec = json!({});
    }
    if let Some(spec) = spec.as_object_mut() {
        let finalizers = spec.entry("finalizers").or_insert_with(|| json!([]));
        if finalizers.is_null() {
            *finalizers = json!([]);
        }
        if let Some(list) = finalizers.as_array_mut()
            && !list.iter().any(|f| f == NAMESPACE_FINALIZER)
        {
            list.push(json!(NAMESPACE_FINALIZER));
        }
    }
    ns.insert("status".to_owned(), json!({ "phase": "Active" }));
}

/// The pull policy the server picks for `image`: Always when the tag is
/// `latest` or no tag and no digest is given, IfNotPresent otherwise
/// (including references the server cannot parse).
pub fn image_pull_policy(image: &str) -> &'static str {
    match image_tag(image) {
        Some(tag) if tag == "latest" => "Always",
        _ => "IfNotPresent",
    }
}

// === object kinds ===

/// `SetDefaults_Deployment`.
fn deployment_spec(spec: &mut Map<String, Value>) {
    default_value(spec, "replicas", json!(1));
    let strategy = spec.entry("strategy").or_insert_with(|| json!({}));
    if strategy.is_null() {
        *strategy = json!({});
    }
    if let Some(strategy) = strategy.as_object_mut() {
        default_str(strategy, "type", "RollingUpdate");
        if strategy.get("type").and_then(Value::as_str) == Some("RollingUpdate") {
            let rolling = strategy.entry("rollingUpdate").or_insert_with(|| json!({}));
            if rolling.is_null() {
                *rolling = json!({});
            }
            if let Some(rolling) = rolling.as_object_mut() {
                default_value(rolling, "maxUnavailable", json!("25%"));
                default_value(rolling, "maxSurge", json!("25%"));
            }
        }
    }
    default_value(spec, "revisionHistoryLimit", json!(10));
    default_value(spec, "progressDeadlineSeconds", json!(600));
}

/// Pod: the pod-spec defaults, the Pod-only ones, then the admission ones.
fn pod(object: &mut Value) {
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

/// The mutations of the default admission plugins on a pod created without
/// them: Priority, ServiceAccount (name only; no token volume) and
/// DefaultTolerationSeconds.
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
    default_str(spec, "serviceAccountName", "default");
    mirror_service_account(spec);

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

/// `SetDefaults_Service` plus the registry's IP family choice.
fn service_spec(spec: &mut Map<String, Value>) {
    default_str(spec, "sessionAffinity", "None");
    match spec.get("sessionAffinity").and_then(Value::as_str) {
        Some("None") => {
            spec.remove("sessionAffinityConfig");
        }
        Some("ClientIP") => {
            let has_timeout = spec
                .get("sessionAffinityConfig")
                .and_then(|c| c.get("clientIP"))
                .and_then(|c| c.get("timeoutSeconds"))
                .is_some_and(|t| !t.is_null());
            if !has_timeout {
                spec.insert("sessionAffinityConfig".to_owned(), json!({ "clientIP": { "timeoutSeconds": 10800 } }));
            }
        }
        _ => {}
    }
    default_str(spec, "type", "ClusterIP");
    for port in children(spec, "ports") {
        default_str(port, "protocol", "TCP");
        let target_unset = port.get("targetPort").is_none_or(|t| t.is_null() || t == 0 || t == "");
        if target_unset && let Some(number) = port.get("port").filter(|p| p.is_number()).cloned() {
            port.insert("targetPort".to_owned(), number);
        }
    }
    let service_type = spec.get("type").and_then(Value::as_str).unwrap_or("").to_owned();
    let has_external_ips = spec.get("externalIPs").and_then(Value::as_array).is_some_and(|ips| !ips.is_empty());
    let externally_accessible = service_type == "LoadBalancer"
        || service_type == "NodePort"
        || (service_type == "ClusterIP" && has_external_ips);
    if externally_accessible {
        default_str(spec, "externalTrafficPolicy", "Cluster");
    }
    if matches!(service_type.as_str(), "ClusterIP" | "NodePort" | "LoadBalancer") {
        default_value(spec, "internalTrafficPolicy", json!("Cluster"));
        let headless = spec.get("clusterIP").and_then(Value::as_str) == Some("None");
        let has_selector = spec.get("selector").and_then(Value::as_object).is_some_and(|s| !s.is_empty());
        let policy = if headless && !has_selector { "RequireDualStack" } else { "SingleStack" };
        default_value(spec, "ipFamilyPolicy", json!(policy));
        let families_unset =
            spec.get("ipFamilies").is_none_or(|f| f.is_null() || f.as_array().is_some_and(Vec::is_empty));
        if families_unset {
            spec.insert("ipFamilies".to_owned(), json!(["IPv4"]));
        }
    }
    if service_type == "LoadBalancer" {
        default_value(spec, "allocateLoadBalancerNodePorts", json!(true));
    }
}

/// `SetDefaults_Endpoints`.
fn endpoints(object: &mut Value) {
    let Some(endpoints) = object.as_object_mut() else {
        return;
    };
    for subset in children(endpoints, "subsets") {
        for port in children(subset, "ports") {
            default_str(port, "protocol", "TCP");
        }
    }
}

/// `SetDefaults_Namespace` and `SetDefaults_NamespaceStatus`.
fn namespace(object: &mut Value) {
    let Some(ns) = object.as_object_mut() else {
        return;
    };
    let name = ns.get("metadata").and_then(|m| m.get("name")).and_then(Value::as_str).unwrap_or("").to_owned();
    if !name.is_empty()
        && let Some(metadata) = ns.get_mut("metadata").and_then(Value::as_object_mut)
    {
        let labels = metadata.entry("labels").or_insert_with(|| json!({}));
        if labels.is_null() {
            *labels = json!({});
        }
        if let Some(labels) = labels.as_object_mut() {
            labels.insert(LABEL_METADATA_NAME.to_owned(), json!(name));
        }
    }
    let status = ns.entry("status").or_insert_with(|| json!({}));
    if status.is_null() {
        *status = json!({});
    }
    if let Some(status) = status.as_object_mut() {
        default_str(status, "phase", "Active");
    }
}

/// `SetDefaults_NodeStatus`.
fn node(object: &mut Value) {
    let Some(status) = child(object, "status") else {
        return;
    };
    let allocatable_unset = status.get("allocatable").is_none_or(Value::is_null);
    if allocatable_unset && let Some(capacity) = status.get("capacity").filter(|c| c.is_object()).cloned() {
        status.insert("allocatable".to_owned(), capacity);
    }
}

// === pod specs ===

/// A `PodTemplateSpec`: only its `spec` has defaults.
fn pod_template(template: &mut Map<String, Value>) {
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
        default_value(claim_spec, "volumeMode", json!("Filesystem"));
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

// === image references ===

/// The tag the image reference resolves to, `latest` when it names neither a
/// tag nor a digest, `None` when it has a digest and no tag or cannot be
/// parsed (upstream `parsers.ParseImageName`).
fn image_tag(image: &str) -> Option<String> {
    if image.is_empty() || image.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return None;
    }
    let (name, digest) = match image.split_once('@') {
        Some((name, digest)) => (name, Some(digest)),
        None => (image, None),
    };
    let last_slash = name.rfind('/');
    let (repository, tag) = match name.rfind(':') {
        Some(colon) if last_slash.is_none_or(|slash| colon > slash) => (&name[..colon], Some(&name[colon + 1..])),
        _ => (name, None),
    };
    // Docker reference grammar: the path (after an optional domain) is
    // lower case; tags are word characters, '.' and '-', at most 128.
    let path = match repository.split_once('/') {
        Some((first, rest)) if first.contains(['.', ':']) || first == "localhost" => rest,
        _ => repository,
    };
    if repository.is_empty() || path.chars().any(|c| c.is_ascii_uppercase()) {
        return None;
    }
    if let Some(tag) = tag {
        let valid = !tag.is_empty()
            && tag.len() <= 128
            && tag.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
            && !tag.starts_with(['.', '-']);
        if !valid {
            return None;
        }
        return Some(tag.to_owned());
    }
    match digest {
        Some(_) => None,
        None => Some("latest".to_owned()),
    }
}

// === utils ===

/// The object under `key`, when `value` is an object and it is one too.
fn child<'a>(value: &'a mut Value, key: &str) -> Option<&'a mut Map<String, Value>> {
    value.get_mut(key).and_then(Value::as_object_mut)
}

/// The objects in the array under `key` (non-objects are skipped).
fn children<'a>(map: &'a mut Map<String, Value>, key: &str) -> impl Iterator<Item = &'a mut Map<String, Value>> {
    map.get_mut(key).and_then(Value::as_array_mut).into_iter().flatten().filter_map(Value::as_object_mut)
}

/// Whether a string field is unset in Go terms: absent, null or "".
fn is_unset_str(value: Option<&Value>) -> bool {
    value.is_none_or(|v| v.is_null() || v == "")
}

/// Sets a string field that is absent, null or empty (a Go string field).
fn default_str(map: &mut Map<String, Value>, key: &str, default: &str) {
    if is_unset_str(map.get(key)) {
        map.insert(key.to_owned(), json!(default));
    }
}

/// Sets a field that is absent or null (a Go pointer field).
fn default_value(map: &mut Map<String, Value>, key: &str, default: Value) {
    if map.get(key).is_none_or(Value::is_null) {
        map.insert(key.to_owned(), default);
    }
}

/// Sets an integer field that is absent, null or 0 (a Go int field).
fn default_nonzero(map: &mut Map<String, Value>, key: &str, default: i64) {
    if map.get(key).is_none_or(|v| v.is_null() || v == 0) {
        map.insert(key.to_owned(), json!(default));
    }
}

#[cfg(test)]
mod tests {
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
        // without the scheduler's nodeName and the service account token
        // volume (not emulated).
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
            "serviceAccount": "default",
            "serviceAccountName": "default",
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
            (Builtin::PodTemplate, json!({"template": {"spec": {"containers": [{"name": "a"}]}}})),
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
    fn image_pull_policy_follows_the_tag() {
        let cases = [
            ("nginx", "Always"),
            ("nginx:latest", "Always"),
            ("nginx:1.27", "IfNotPresent"),
            ("registry.k8s.io/pause:3.10", "IfNotPresent"),
            ("localhost:5000/app", "Always"),
            ("localhost:5000/app:v1", "IfNotPresent"),
            ("nginx@sha256:0123", "IfNotPresent"),
            ("nginx:latest@sha256:0123", "Always"),
            ("Nginx", "IfNotPresent"),
            ("", "IfNotPresent"),
        ];
        for (image, want) in cases {
            assert_eq!(image_pull_policy(image), want, "{image}");
        }
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
                "internalTrafficPolicy": "Cluster",
                "ipFamilyPolicy": "SingleStack",
                "ipFamilies": ["IPv4"]
            })
        );
        let lb = defaulted(
            Builtin::Service,
            json!({"spec": {"type": "LoadBalancer", "sessionAffinity": "ClientIP", "ports": [{"port": 80}]}}),
        );
        assert_eq!(lb["spec"]["externalTrafficPolicy"], "Cluster");
        assert_eq!(lb["spec"]["allocateLoadBalancerNodePorts"], true);
        assert_eq!(lb["spec"]["sessionAffinityConfig"]["clientIP"]["timeoutSeconds"], 10800);
        let headless = defaulted(Builtin::Service, json!({"spec": {"clusterIP": "None"}}));
        assert_eq!(headless["spec"]["ipFamilyPolicy"], "RequireDualStack");
        let external = defaulted(Builtin::Service, json!({"spec": {"type": "ExternalName", "externalName": "a.b"}}));
        assert!(external["spec"].get("internalTrafficPolicy").is_none());
        assert!(external["spec"].get("ipFamilyPolicy").is_none());
    }

    #[test]
    fn namespace_node_secret() {
        let mut ns = defaulted(Builtin::Namespace, json!({"metadata": {"name": "team-a"}}));
        assert_eq!(ns["metadata"]["labels"][LABEL_METADATA_NAME], "team-a");
        assert_eq!(ns["status"]["phase"], "Active");
        assert!(ns.get("spec").is_none(), "finalizers are create-only");
        namespace_on_create(&mut ns);
        namespace_on_create(&mut ns);
        assert_eq!(ns["spec"]["finalizers"], json!(["kubernetes"]));
        let mut custom = json!({"spec": {"finalizers": ["example.com/x"]}});
        namespace_on_create(&mut custom);
        assert_eq!(custom["spec"]["finalizers"], json!(["example.com/x", "kubernetes"]));

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
