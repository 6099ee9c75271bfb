//! Strategic merge patch metadata: the `patchStrategy`/`patchMergeKey`
//! table ([`PATCH_META`]) and the walk over the k8s-openapi schemas that
//! says which Go type, and so which tags, a field of an object has.

use std::collections::HashMap;
use std::sync::OnceLock;

use serde_json::{Map, Value};

use crate::resources::Builtin;

/// The strategic merge patch metadata of the Kubernetes 1.37 API for every
/// field reachable from kube-sim's built-in kinds that has any: (OpenAPI
/// definition name, property name, `x-kubernetes-patch-strategy`,
/// `x-kubernetes-patch-merge-key`, empty for lists of primitives and for
/// non-list fields). Taken from the `patchStrategy`/`patchMergeKey` struct
/// tags of k8s.io/api and k8s.io/apimachinery (checked against the
/// `x-kubernetes-patch-*` extensions of the 1.37 OpenAPI definitions). A field not listed has no
/// strategy: its maps merge and its lists are replaced. Note that
/// `NodeSpec.taints`, `PodSpec.tolerations`, `Container.args` and
/// `NamespaceSpec.finalizers` have none.
pub const PATCH_META: &[(&str, &str, &str, &str)] = &[
    // meta/v1
    (OBJECT_META, "finalizers", "merge", ""),
    (OBJECT_META, "ownerReferences", "merge", "uid"),
    // core/v1 PodSpec
    (POD_SPEC, "containers", "merge", "name"),
    (POD_SPEC, "ephemeralContainers", "merge", "name"),
    (POD_SPEC, "evictionResponders", "merge", "name"),
    (POD_SPEC, "hostAliases", "merge", "ip"),
    (POD_SPEC, "imagePullSecrets", "merge", "name"),
    (POD_SPEC, "initContainers", "merge", "name"),
    (POD_SPEC, "resourceClaims", "merge,retainKeys", "name"),
    (POD_SPEC, "schedulingGates", "merge", "name"),
    (POD_SPEC, "topologySpreadConstraints", "merge", "topologyKey"),
    (POD_SPEC, "volumes", "merge,retainKeys", "name"),
    // core/v1 Container and EphemeralContainer (EphemeralContainerCommon)
    (CONTAINER, "env", "merge", "name"),
    (CONTAINER, "ports", "merge", "containerPort"),
    (CONTAINER, "volumeDevices", "merge", "devicePath"),
    (CONTAINER, "volumeMounts", "merge", "mountPath"),
    (EPHEMERAL_CONTAINER, "env", "merge", "name"),
    (EPHEMERAL_CONTAINER, "ports", "merge", "containerPort"),
    (EPHEMERAL_CONTAINER, "volumeDevices", "merge", "devicePath"),
    (EPHEMERAL_CONTAINER, "volumeMounts", "merge", "mountPath"),
    // core/v1 PodStatus and ContainerStatus
    (POD_STATUS, "conditions", "merge", "type"),
    (POD_STATUS, "hostIPs", "merge", "ip"),
    (POD_STATUS, "nodeAllocatableResourceClaimStatuses", "merge", "resourceClaimName"),
    (POD_STATUS, "podIPs", "merge", "ip"),
    (POD_STATUS, "resourceClaimStatuses", "merge,retainKeys", "name"),
    (NODE_ALLOCATABLE_CLAIM_STATUS, "mapping", "merge", "name"),
    (NODE_ALLOCATABLE_CLAIM_STATUS, "overhead", "merge", "name"),
    (POD_VOLUME_HEALTH, "healthConditions", "merge", "status"),
    (CONTAINER_STATUS, "allocatedResourcesStatus", "merge", "name"),
    (CONTAINER_STATUS, "volumeMounts", "merge", "mountPath"),
    // core/v1 Node, Namespace, Service, ServiceAccount
    (NODE_SPEC, "podCIDRs", "merge", ""),
    (NODE_STATUS, "addresses", "merge", "type"),
    (NODE_STATUS, "conditions", "merge", "type"),
    (NAMESPACE_STATUS, "conditions", "merge", "type"),
    (SERVICE_SPEC, "ports", "merge", "port"),
    (SERVICE_STATUS, "conditions", "merge", "type"),
    (SERVICE_ACCOUNT, "secrets", "merge", "name"),
    // apps/v1
    (DEPLOYMENT_SPEC, "strategy", "retainKeys", ""),
    (DEPLOYMENT_STATUS, "conditions", "merge", "type"),
    (REPLICA_SET_STATUS, "conditions", "merge", "type"),
    (DAEMON_SET_STATUS, "conditions", "merge", "type"),
    (STATEFUL_SET_STATUS, "conditions", "merge", "type"),
    (PVC_STATUS, "conditions", "merge", "type"),
    // batch/v1
    (JOB_STATUS, "conditions", "merge", "type"),
    (PDB_SPEC, "selector", "replace", ""),
    (PDB_STATUS, "conditions", "merge", "type"),
];

/// `metav1.ObjectMeta`.
const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";
/// `corev1.PodSpec`.
pub(super) const POD_SPEC: &str = "io.k8s.api.core.v1.PodSpec";
/// `corev1.Container`.
pub(super) const CONTAINER: &str = "io.k8s.api.core.v1.Container";
/// `corev1.EphemeralContainer`.
const EPHEMERAL_CONTAINER: &str = "io.k8s.api.core.v1.EphemeralContainer";
/// `corev1.PodStatus`.
const POD_STATUS: &str = "io.k8s.api.core.v1.PodStatus";
/// `corev1.ContainerStatus`.
const CONTAINER_STATUS: &str = "io.k8s.api.core.v1.ContainerStatus";
/// `corev1.NodeSpec`.
const NODE_SPEC: &str = "io.k8s.api.core.v1.NodeSpec";
/// `corev1.NodeStatus`.
const NODE_STATUS: &str = "io.k8s.api.core.v1.NodeStatus";
/// `corev1.NamespaceStatus`.
const NAMESPACE_STATUS: &str = "io.k8s.api.core.v1.NamespaceStatus";
/// `corev1.ServiceSpec`.
const SERVICE_SPEC: &str = "io.k8s.api.core.v1.ServiceSpec";
/// `corev1.ServiceStatus`.
const SERVICE_STATUS: &str = "io.k8s.api.core.v1.ServiceStatus";
/// `corev1.ServiceAccount`.
const SERVICE_ACCOUNT: &str = "io.k8s.api.core.v1.ServiceAccount";
/// `appsv1.DeploymentSpec`.
const DEPLOYMENT_SPEC: &str = "io.k8s.api.apps.v1.DeploymentSpec";
/// `appsv1.DeploymentStatus`.
const DEPLOYMENT_STATUS: &str = "io.k8s.api.apps.v1.DeploymentStatus";
/// `appsv1.ReplicaSetStatus`.
const REPLICA_SET_STATUS: &str = "io.k8s.api.apps.v1.ReplicaSetStatus";
/// `appsv1.DaemonSetStatus`.
const DAEMON_SET_STATUS: &str = "io.k8s.api.apps.v1.DaemonSetStatus";
/// `appsv1.StatefulSetStatus`.
const STATEFUL_SET_STATUS: &str = "io.k8s.api.apps.v1.StatefulSetStatus";
/// `batchv1.JobStatus`.
const JOB_STATUS: &str = "io.k8s.api.batch.v1.JobStatus";
/// `corev1.PersistentVolumeClaimStatus` (a StatefulSet's claim templates).
const PVC_STATUS: &str = "io.k8s.api.core.v1.PersistentVolumeClaimStatus";
/// `policy/v1.PodDisruptionBudgetStatus`.
const PDB_STATUS: &str = "io.k8s.api.policy.v1.PodDisruptionBudgetStatus";
/// `policy/v1.PodDisruptionBudgetSpec`.
const PDB_SPEC: &str = "io.k8s.api.policy.v1.PodDisruptionBudgetSpec";
/// `core/v1.NodeAllocatableResourceClaimStatus`.
const NODE_ALLOCATABLE_CLAIM_STATUS: &str = "io.k8s.api.core.v1.NodeAllocatableResourceClaimStatus";
/// `core/v1.PodVolumeHealth`.
const POD_VOLUME_HEALTH: &str = "io.k8s.api.core.v1.PodVolumeHealth";

/// The OpenAPI definition of a built-in kind's top-level object.
fn root_definition(kind: Builtin) -> &'static str {
    match kind {
        Builtin::Namespace => "io.k8s.api.core.v1.Namespace",
        Builtin::Node => "io.k8s.api.core.v1.Node",
        Builtin::Pod => "io.k8s.api.core.v1.Pod",
        Builtin::Service => "io.k8s.api.core.v1.Service",
        Builtin::Endpoints => "io.k8s.api.core.v1.Endpoints",
        Builtin::ConfigMap => "io.k8s.api.core.v1.ConfigMap",
        Builtin::Secret => "io.k8s.api.core.v1.Secret",
        Builtin::ServiceAccount => "io.k8s.api.core.v1.ServiceAccount",
        Builtin::CoreEvent => "io.k8s.api.core.v1.Event",
        Builtin::PodTemplate => "io.k8s.api.core.v1.PodTemplate",
        Builtin::PersistentVolumeClaim => "io.k8s.api.core.v1.PersistentVolumeClaim",
        Builtin::Deployment => "io.k8s.api.apps.v1.Deployment",
        Builtin::ReplicaSet => "io.k8s.api.apps.v1.ReplicaSet",
        Builtin::DaemonSet => "io.k8s.api.apps.v1.DaemonSet",
        Builtin::StatefulSet => "io.k8s.api.apps.v1.StatefulSet",
        Builtin::ControllerRevision => "io.k8s.api.apps.v1.ControllerRevision",
        Builtin::Job => "io.k8s.api.batch.v1.Job",
        Builtin::CronJob => "io.k8s.api.batch.v1.CronJob",
        Builtin::Lease => "io.k8s.api.coordination.v1.Lease",
        Builtin::EventsEvent => "io.k8s.api.events.v1.Event",
        Builtin::EndpointSlice => "io.k8s.api.discovery.v1.EndpointSlice",
        Builtin::PodDisruptionBudget => "io.k8s.api.policy.v1.PodDisruptionBudget",
        Builtin::ClusterRole => "io.k8s.api.rbac.v1.ClusterRole",
        Builtin::ClusterRoleBinding => "io.k8s.api.rbac.v1.ClusterRoleBinding",
        Builtin::Role => "io.k8s.api.rbac.v1.Role",
        Builtin::RoleBinding => "io.k8s.api.rbac.v1.RoleBinding",
    }
}

/// The OpenAPI definitions of every type reachable from the built-in kinds,
/// generated once from k8s-openapi's `JsonSchema` impls.
pub(super) fn definitions() -> &'static Map<String, Value> {
    static DEFINITIONS: OnceLock<Map<String, Value>> = OnceLock::new();
    DEFINITIONS.get_or_init(|| {
        let mut generator = schemars::generate::SchemaSettings::openapi3().into_generator();
        for kind in Builtin::ALL {
            crate::openapi::definitions::define_builtin(kind, &mut generator);
        }
        generator.take_definitions(true)
    })
}

/// Where the merge is in the type tree: a (possibly unknown) schema, and
/// the definition name when it is a named object type.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ty {
    /// The definition the schema came from, for [`PATCH_META`] lookups.
    pub(crate) name: Option<&'static str>,
    /// The resolved schema; `None` when the shape is not known (a field
    /// missing from the schema), in which case nothing has a strategy.
    pub(crate) schema: Option<&'static Value>,
}

/// What the patch strategy of one field says.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Field {
    /// Lists merge element-wise (strategy contains `merge`).
    pub(super) merge: bool,
    /// Maps are replaced wholesale (strategy `replace`).
    pub(super) replace: bool,
    /// The merge key of a list of objects; empty for primitives.
    pub(super) merge_key: &'static str,
    /// The type of the field's value.
    pub(crate) ty: Ty,
}

impl Ty {
    /// A position whose shape is not known.
    const UNKNOWN: Ty = Ty { name: None, schema: None };

    /// The top-level type of a built-in kind.
    pub(crate) fn root(kind: Builtin) -> Ty {
        Ty::named(root_definition(kind))
    }

    /// The `autoscaling/v1` Scale: only maps and scalars, no strategies,
    /// so its shape need not be known.
    pub(super) fn scale() -> Ty {
        Ty::UNKNOWN
    }

    /// The type of the definition `name`; unknown if there is none.
    pub(super) fn named(name: &str) -> Ty {
        match definitions().get_key_value(name) {
            Some((key, schema)) => Ty { name: Some(key.as_str()), schema: Some(schema) },
            None => Ty::UNKNOWN,
        }
    }

    /// The field `key` of this object type: its value's type and its patch
    /// strategy. Keys of a map type (`additionalProperties`) have the value
    /// type and no strategy; unknown keys have neither.
    pub(crate) fn field(self, key: &str) -> Field {
        let mut field = Field { merge: false, replace: false, merge_key: "", ty: self.field_type(key) };
        let is_property = self.schema.and_then(|s| s.get("properties")).is_some_and(|p| p.get(key).is_some());
        if is_property
            && let Some(name) = self.name
            && let Some((_, _, strategy, merge_key)) =
                PATCH_META.iter().find(|(def, property, _, _)| *def == name && *property == key)
        {
            field.merge = strategy.split(',').any(|s| s == "merge");
            field.replace = strategy.split(',').any(|s| s == "replace");
            field.merge_key = merge_key;
        }
        field
    }

    /// The type of field `key` of this type: a property's, or a map's
    /// values' (what [`Ty::field`] gives, without the patch strategy).
    pub(crate) fn field_type(self, key: &str) -> Ty {
        let Some(schema) = self.schema else {
            return Ty::UNKNOWN;
        };
        if let Some(prop) = schema.get("properties").and_then(|p| p.get(key)) {
            Ty::anonymous(prop)
        } else if let Some(values) = schema.get("additionalProperties")
            && values.is_object()
        {
            Ty::anonymous(values)
        } else {
            Ty::UNKNOWN
        }
    }

    /// Resolves a property's schema: a `$ref` (possibly inside a
    /// one-element `allOf`) to its definition, else the schema itself.
    /// Every schema of the definitions was resolved once ([`resolutions`]);
    /// any other is resolved now.
    fn anonymous(schema: &'static Value) -> Ty {
        match resolutions().get(&address(schema)) {
            Some(ty) => *ty,
            None => Ty::resolve(schema),
        }
    }

    /// What [`Ty::anonymous`] answers, worked out.
    fn resolve(schema: &'static Value) -> Ty {
        let mut current = schema;
        for _ in 0..4 {
            if let Some(reference) = current.get("$ref").and_then(Value::as_str) {
                let name = reference.rsplit('/').next().unwrap_or(reference);
                return Ty::named(name);
            }
            match current.get("allOf").and_then(Value::as_array) {
                Some(all) if all.len() == 1 => current = &all[0],
                _ => break,
            }
        }
        Ty { name: None, schema: Some(current) }
    }

    /// The element type of this list type.
    pub(crate) fn items(self) -> Ty {
        match self.schema.and_then(|s| s.get("items")) {
            Some(items) => Ty::anonymous(items),
            None => Ty::UNKNOWN,
        }
    }
}

/// Every schema [`Ty::anonymous`] is asked to resolve while walking the
/// built-in kinds (the properties, map values and list items, at any depth,
/// of every definition), resolved once and found by address: walking an
/// object then costs a pointer's hash per field, not a search of the
/// definitions by name.
fn resolutions() -> &'static HashMap<usize, Ty> {
    static RESOLUTIONS: OnceLock<HashMap<usize, Ty>> = OnceLock::new();
    RESOLUTIONS.get_or_init(|| {
        let mut resolved = HashMap::new();
        for schema in definitions().values() {
            resolve_children(schema, &mut resolved);
        }
        resolved
    })
}

/// Resolves the schemas under `schema` into `resolved`, and those under
/// each of them that is not a named definition.
fn resolve_children(schema: &'static Value, resolved: &mut HashMap<usize, Ty>) {
    let properties = schema.get("properties").and_then(Value::as_object).into_iter().flat_map(Map::values);
    let values = schema.get("additionalProperties").filter(|v| v.is_object());
    for child in properties.chain(values).chain(schema.get("items")) {
        let ty = Ty::resolve(child);
        resolved.insert(address(child), ty);
        if let (None, Some(inner)) = (ty.name, ty.schema) {
            resolve_children(inner, resolved);
        }
    }
}

/// Where a schema of the definitions lives: the key of [`resolutions`].
fn address(schema: &'static Value) -> usize {
    std::ptr::from_ref(schema) as usize
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn patch_meta_matches_the_schemas() {
        let defs = definitions();
        for (i, (def, property, strategy, key)) in PATCH_META.iter().enumerate() {
            let schema = defs.get(*def).unwrap_or_else(|| panic!("{def} is not reachable from the built-in kinds"));
            let prop =
                schema["properties"].get(*property).unwrap_or_else(|| panic!("{def} has no property {property}"));
            let ty = Ty::named(def).field(property).ty;
            let is_list = prop.get("type") == Some(&json!("array"));
            if strategy.split(',').any(|s| s == "merge") {
                assert!(is_list, "{def}.{property} is merged but not a list");
                let items = ty.items();
                match (key.is_empty(), items.schema) {
                    (true, Some(s)) => assert!(s.get("properties").is_none(), "{def}.{property} needs a merge key"),
                    (false, Some(s)) => assert!(s["properties"].get(*key).is_some(), "{def}.{property}: no {key}"),
                    (_, None) => panic!("{def}.{property}: unknown items"),
                }
            } else {
                assert!(!is_list && key.is_empty(), "{def}.{property}");
            }
            assert!(
                !PATCH_META[..i].iter().any(|(d, p, _, _)| d == def && p == property),
                "{def}.{property} listed twice"
            );
        }
        for kind in Builtin::ALL {
            assert!(Ty::root(kind).schema.is_some(), "{kind:?} has no schema");
        }
    }

    #[test]
    fn resolving_once_answers_as_resolving_each_time() {
        let mut resolved = HashMap::new();
        for schema in definitions().values() {
            resolve_children(schema, &mut resolved);
        }
        assert!(resolved.len() > 1000, "only {} schemas resolved", resolved.len());
        let spec = Ty::root(Builtin::Pod).field("spec").ty;
        for key in ["containers", "volumes", "nodeSelector", "tolerations"] {
            let schema = spec.schema.unwrap()["properties"].get(key).unwrap();
            let (cached, fresh) = (Ty::anonymous(schema), Ty::resolve(schema));
            assert_eq!((cached.name, cached.schema.map(address)), (fresh.name, fresh.schema.map(address)), "{key}");
        }
    }

    #[test]
    fn field_lookup_follows_refs() {
        let spec = Ty::root(Builtin::Deployment).field("spec").ty.field("template").ty.field("spec").ty;
        assert_eq!(spec.name, Some(POD_SPEC));
        let containers = spec.field("containers");
        assert!(containers.merge);
        assert_eq!(containers.merge_key, "name");
        assert_eq!(containers.ty.items().name, Some(CONTAINER));
        let tolerations = spec.field("tolerations");
        assert!(!tolerations.merge);
        let requests = containers.ty.items().field("resources").ty.field("requests").ty;
        assert_eq!(requests.field("cpu").ty.name, Some("io.k8s.apimachinery.pkg.api.resource.Quantity"));
        assert!(spec.field("nonsense").ty.schema.is_none());
    }
}
