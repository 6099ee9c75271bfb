//! The three patch formats of `PATCH` requests, applied to a stored object.
//!
//! kube-sim keeps objects as schemaless JSON, so a patch is a function from
//! the stored [`Value`] and the request body to the new [`Value`]:
//!
//! - [`PatchType::Json`]: RFC 6902 JSON patch (`application/json-patch+json`),
//!   through the `json-patch` crate.
//! - [`PatchType::Merge`]: RFC 7386 JSON merge patch
//!   (`application/merge-patch+json`), also through `json-patch`.
//! - [`PatchType::Strategic`]: Kubernetes strategic merge patch
//!   (`application/strategic-merge-patch+json`), implemented here as the API
//!   server applies it to built-in types: maps merge recursively, `null`
//!   deletes, and a list either merges element by element or is replaced,
//!   depending on the Go type's `patchStrategy`/`patchMergeKey` struct tags.
//!   Those tags are recorded in [`PATCH_META`]; the merge walks the object
//!   alongside the k8s-openapi schemas to know which type (and so which
//!   tags) it is in. The directives `$patch` (`replace`, `delete`),
//!   `$retainKeys`, `$setElementOrder/<list>` and
//!   `$deleteFromPrimitiveList/<list>` are honoured.
//! - [`PatchType::Apply`]: server-side apply, which kube-sim does not
//!   implement.
//!
//! This module only computes the patched object. Checking that the result
//! is still valid (name, namespace, `resourceVersion` preconditions, schema)
//! and turning a [`PatchError`] into a `Status` answer belong to the API
//! layer; [`PatchError::status_code`] says which HTTP code the real API
//! server answers.
//!
//! Where the list order after a strategic merge is concerned this follows
//! `k8s.io/apimachinery/pkg/util/strategicpatch`: items named in the patch
//! take the patch's order (or `$setElementOrder`'s), items only on the
//! server keep theirs, and an item new to the list goes *before* the
//! server's remaining items — so `kubectl patch` adding a container shows it
//! first, as a real cluster does.

use std::sync::OnceLock;

use serde_json::{Map, Value};

use crate::resources::Builtin;

/// Errors from applying a patch. Each variant maps to the HTTP status the
/// real API server uses for it (see [`PatchError::status_code`]).
#[derive(Debug, thiserror::Error)]
pub enum PatchError {
    /// The body is not a patch of the declared type: not JSON, not the
    /// expected shape, or a directive that is badly formed. 400 BadRequest.
    #[error("malformed patch: {0}")]
    Malformed(String),
    /// The patch is well formed but cannot be applied to this object (a
    /// failing JSON patch `test`, a path that does not exist, a list of
    /// lists). 422 Unprocessable Entity (reason Invalid).
    #[error("the patch could not be applied: {0}")]
    Failed(String),
    /// The patch type is not supported for this resource (strategic merge
    /// patch on a custom resource, server-side apply). 415 Unsupported
    /// Media Type.
    #[error("{0}")]
    Unsupported(String),
}

impl PatchError {
    /// The HTTP status code the real API server answers with.
    pub fn status_code(&self) -> u16 {
        match self {
            PatchError::Malformed(_) => 400,
            PatchError::Failed(_) => 422,
            PatchError::Unsupported(_) => 415,
        }
    }
}

/// Result alias of this module.
type Result<T, E = PatchError> = std::result::Result<T, E>;

/// The patch formats of the `Content-Type` of a `PATCH` request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchType {
    /// RFC 6902 JSON patch, `application/json-patch+json`.
    Json,
    /// RFC 7386 JSON merge patch, `application/merge-patch+json`.
    Merge,
    /// Kubernetes strategic merge patch,
    /// `application/strategic-merge-patch+json`.
    Strategic,
    /// Server-side apply, `application/apply-patch+yaml` (not supported).
    Apply,
}

impl PatchType {
    /// Parses a `Content-Type` header value, ignoring parameters such as
    /// `; charset=utf-8`. `None` for anything that is not a patch type
    /// (the caller answers 415).
    pub fn from_content_type(ct: &str) -> Option<PatchType> {
        let essence = ct.split(';').next().unwrap_or_default().trim();
        let types = [
            ("application/json-patch+json", PatchType::Json),
            ("application/merge-patch+json", PatchType::Merge),
            ("application/strategic-merge-patch+json", PatchType::Strategic),
            ("application/apply-patch+yaml", PatchType::Apply),
        ];
        types.into_iter().find(|(name, _)| essence.eq_ignore_ascii_case(name)).map(|(_, t)| t)
    }

    /// The media type naming this patch format.
    pub fn content_type(self) -> &'static str {
        match self {
            PatchType::Json => "application/json-patch+json",
            PatchType::Merge => "application/merge-patch+json",
            PatchType::Strategic => "application/strategic-merge-patch+json",
            PatchType::Apply => "application/apply-patch+yaml",
        }
    }
}

/// Applies a patch body to `original` and returns the patched object.
/// `kind` is the built-in type of the object, or `None` for a custom
/// resource (which has no strategic merge metadata).
///
/// # Errors
///
/// [`PatchError::Malformed`] when the body cannot be read as a patch of
/// `patch_type`, [`PatchError::Failed`] when it cannot be applied, and
/// [`PatchError::Unsupported`] for server-side apply and for strategic
/// merge patch on custom resources.
pub fn apply(patch_type: PatchType, kind: Option<Builtin>, original: &Value, body: &[u8]) -> Result<Value> {
    match patch_type {
        PatchType::Json => apply_json_patch(original, body),
        PatchType::Merge => apply_merge_patch(original, body),
        PatchType::Strategic => {
            let Some(kind) = kind else {
                return Err(PatchError::Unsupported(
                    "strategic merge patch is not supported for custom resources: use a JSON \
                     merge patch (kubectl patch --type=merge) or a JSON patch (--type=json)"
                        .to_owned(),
                ));
            };
            apply_strategic(kind, original, body)
        }
        PatchType::Apply => Err(PatchError::Unsupported(
            "server-side apply (application/apply-patch+yaml) is not supported by kube-sim: \
             use client-side apply (kubectl apply without --server-side)"
                .to_owned(),
        )),
    }
}

// === JSON patch and JSON merge patch ===

/// RFC 6902: the body must decode as a list of operations (else 400); an
/// operation that fails (`test` mismatch, missing path) is a 422.
fn apply_json_patch(original: &Value, body: &[u8]) -> Result<Value> {
    let ops: json_patch::Patch =
        serde_json::from_slice(body).map_err(|e| PatchError::Malformed(format!("invalid JSON patch: {e}")))?;
    let mut doc = original.clone();
    json_patch::patch(&mut doc, &ops).map_err(|e| PatchError::Failed(e.to_string()))?;
    Ok(doc)
}

/// RFC 7386: the body must be a JSON object.
fn apply_merge_patch(original: &Value, body: &[u8]) -> Result<Value> {
    let patch = parse_object(body, "JSON merge patch")?;
    let mut doc = original.clone();
    json_patch::merge(&mut doc, &Value::Object(patch));
    Ok(doc)
}

/// Decodes a body that must be one JSON object.
fn parse_object(body: &[u8], what: &str) -> Result<Map<String, Value>> {
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(other) => Err(PatchError::Malformed(format!("a {what} must be a JSON object, not {}", json_type(&other)))),
        Err(e) => Err(PatchError::Malformed(format!("invalid {what}: {e}"))),
    }
}

/// The JSON type name of a value, for messages.
fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

// === patch metadata ===

/// The strategic merge patch metadata of the Kubernetes 1.33 API for every
/// field reachable from kube-sim's built-in kinds that has any: (OpenAPI
/// definition name, property name, `x-kubernetes-patch-strategy`,
/// `x-kubernetes-patch-merge-key`, empty for lists of primitives and for
/// non-list fields). Taken from the `patchStrategy`/`patchMergeKey` struct
/// tags of k8s.io/api and k8s.io/apimachinery. A field not listed has no
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
    (POD_STATUS, "podIPs", "merge", "ip"),
    (POD_STATUS, "resourceClaimStatuses", "merge,retainKeys", "name"),
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
];

/// `metav1.ObjectMeta`.
const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";
/// `corev1.PodSpec`.
const POD_SPEC: &str = "io.k8s.api.core.v1.PodSpec";
/// `corev1.Container`.
const CONTAINER: &str = "io.k8s.api.core.v1.Container";
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
        Builtin::Deployment => "io.k8s.api.apps.v1.Deployment",
        Builtin::ReplicaSet => "io.k8s.api.apps.v1.ReplicaSet",
        Builtin::Lease => "io.k8s.api.coordination.v1.Lease",
        Builtin::EventsEvent => "io.k8s.api.events.v1.Event",
    }
}

/// The OpenAPI definitions of every type reachable from the built-in kinds,
/// generated once from k8s-openapi's `JsonSchema` impls.
fn definitions() -> &'static Map<String, Value> {
    static DEFINITIONS: OnceLock<Map<String, Value>> = OnceLock::new();
    DEFINITIONS.get_or_init(|| {
        use k8s_openapi::api::{apps, coordination, core, events};
        let mut generator = schemars::generate::SchemaSettings::openapi3().into_generator();
        generator.subschema_for::<core::v1::Namespace>();
        generator.subschema_for::<core::v1::Node>();
        generator.subschema_for::<core::v1::Pod>();
        generator.subschema_for::<core::v1::Service>();
        generator.subschema_for::<core::v1::Endpoints>();
        generator.subschema_for::<core::v1::ConfigMap>();
        generator.subschema_for::<core::v1::Secret>();
        generator.subschema_for::<core::v1::ServiceAccount>();
        generator.subschema_for::<core::v1::Event>();
        generator.subschema_for::<core::v1::PodTemplate>();
        generator.subschema_for::<apps::v1::Deployment>();
        generator.subschema_for::<apps::v1::ReplicaSet>();
        generator.subschema_for::<coordination::v1::Lease>();
        generator.subschema_for::<events::v1::Event>();
        generator.take_definitions(true)
    })
}

/// Where the merge is in the type tree: a (possibly unknown) schema, and
/// the definition name when it is a named object type.
#[derive(Debug, Clone, Copy)]
struct Ty {
    /// The definition the schema came from, for [`PATCH_META`] lookups.
    name: Option<&'static str>,
    /// The resolved schema; `None` when the shape is not known (a field
    /// missing from the schema), in which case nothing has a strategy.
    schema: Option<&'static Value>,
}

/// What the patch strategy of one field says.
#[derive(Debug, Clone, Copy)]
struct Field {
    /// Lists merge element-wise (strategy contains `merge`).
    merge: bool,
    /// Maps are replaced wholesale (strategy `replace`).
    replace: bool,
    /// The merge key of a list of objects; empty for primitives.
    merge_key: &'static str,
    /// The type of the field's value.
    ty: Ty,
}

impl Ty {
    /// A position whose shape is not known.
    const UNKNOWN: Ty = Ty { name: None, schema: None };

    /// The top-level type of a built-in kind.
    fn root(kind: Builtin) -> Ty {
        Ty::named(root_definition(kind))
    }

    /// The type of the definition `name`; unknown if there is none.
    fn named(name: &str) -> Ty {
        match definitions().get_key_value(name) {
            Some((key, schema)) => Ty { name: Some(key.as_str()), schema: Some(schema) },
            None => Ty::UNKNOWN,
        }
    }

    /// The field `key` of this object type: its value's type and its patch
    /// strategy. Keys of a map type (`additionalProperties`) have the value
    /// type and no strategy; unknown keys have neither.
    fn field(self, key: &str) -> Field {
        let mut field = Field { merge: false, replace: false, merge_key: "", ty: Ty::UNKNOWN };
        let Some(schema) = self.schema else {
            return field;
        };
        if let Some(prop) = schema.get("properties").and_then(|p| p.get(key)) {
            field.ty = Ty::anonymous(prop);
            if let Some(name) = self.name
                && let Some((_, _, strategy, merge_key)) =
                    PATCH_META.iter().find(|(def, property, _, _)| *def == name && *property == key)
            {
                field.merge = strategy.split(',').any(|s| s == "merge");
                field.replace = strategy.split(',').any(|s| s == "replace");
                field.merge_key = merge_key;
            }
        } else if let Some(values) = schema.get("additionalProperties")
            && values.is_object()
        {
            field.ty = Ty::anonymous(values);
        }
        field
    }

    /// The type a schema nested in a definition describes, following `$ref`
    /// (and the single-element `allOf` that wraps a `$ref` with a
    /// description).
    fn anonymous(schema: &'static Value) -> Ty {
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
    fn items(self) -> Ty {
        match self.schema.and_then(|s| s.get("items")) {
            Some(items) => Ty::anonymous(items),
            None => Ty::UNKNOWN,
        }
    }
}

// === strategic merge patch ===

/// `$patch`: `replace` or `delete` a map, or as a list element `delete` one
/// element / `replace` the whole list.
const DIRECTIVE: &str = "$patch";
/// `$retainKeys`: the keys of the map to keep; others are cleared.
const RETAIN_KEYS: &str = "$retainKeys";
/// `$setElementOrder/<list>`: the order of a merged list.
const SET_ELEMENT_ORDER: &str = "$setElementOrder";
/// `$deleteFromPrimitiveList/<list>`: values to remove from a merged list
/// of primitives.
const DELETE_FROM_PRIMITIVE_LIST: &str = "$deleteFromPrimitiveList";

/// Applies a strategic merge patch body to an object of a built-in kind.
fn apply_strategic(kind: Builtin, original: &Value, body: &[u8]) -> Result<Value> {
    let patch = parse_object(body, "strategic merge patch")?;
    let Value::Object(original) = original.clone() else {
        return Err(PatchError::Failed("the stored object is not a JSON object".to_owned()));
    };
    // `$patch: delete` at the top level leaves an empty object, as upstream.
    let merged = merge_map(Some(original), patch, Ty::root(kind))?.unwrap_or_default();
    Ok(Value::Object(merged))
}

/// Merges a patch map into an original map (absent when the field is new).
/// `None` means the map is deleted (`$patch: delete`).
///
/// The server-side rules: a `null` value deletes the key (and is dropped
/// when the key is absent), `$retainKeys` clears unlisted keys first,
/// `$setElementOrder` lists are merged and ordered before the other keys,
/// and `$deleteFromPrimitiveList` removals happen last.
fn merge_map(
    original: Option<Map<String, Value>>,
    mut patch: Map<String, Value>,
    ty: Ty,
) -> Result<Option<Map<String, Value>>> {
    if let Some(directive) = patch.remove(DIRECTIVE) {
        return match directive.as_str() {
            // The patch is the new value; merging it into nothing drops its
            // nulls and resolves any directives nested in it.
            Some("replace") => merge_map(None, patch, ty),
            Some("delete") => Ok(None),
            _ => Err(PatchError::Malformed(format!(
                "unknown {DIRECTIVE} directive {directive} (expected \"replace\" or \"delete\")"
            ))),
        };
    }
    let mut out = original.unwrap_or_default();

    if let Some(keys) = patch.remove(RETAIN_KEYS) {
        retain_keys(&mut out, &patch, &keys)?;
    }

    let mut orders = Vec::new();
    let mut deletions = Vec::new();
    let mut fields = Vec::new();
    for (key, value) in patch {
        if let Some(rest) = key.strip_prefix(SET_ELEMENT_ORDER) {
            orders.push((directive_target(rest, SET_ELEMENT_ORDER)?, value));
        } else if let Some(rest) = key.strip_prefix(DELETE_FROM_PRIMITIVE_LIST) {
            deletions.push((directive_target(rest, DELETE_FROM_PRIMITIVE_LIST)?, value));
        } else {
            fields.push((key, value));
        }
    }

    for (name, order) in orders {
        let patch_list = fields.iter().position(|(key, _)| *key == name).map(|i| fields.remove(i).1);
        set_element_order(&mut out, &name, order, patch_list, ty.field(&name))?;
    }

    for (key, value) in fields {
        let field = ty.field(&key);
        if value.is_null() {
            remove_key(&mut out, &key);
            continue;
        }
        let merged = match out.get_mut(&key) {
            Some(slot) => merge_value(Some(std::mem::take(slot)), value, field)?,
            None => merge_value(None, value, field)?,
        };
        match merged {
            Some(v) => {
                out.insert(key, v);
            }
            None => remove_key(&mut out, &key),
        }
    }

    for (name, values) in deletions {
        let Value::Array(values) = values else {
            return Err(PatchError::Malformed(format!("{DELETE_FROM_PRIMITIVE_LIST}/{name} must be a list")));
        };
        if let Some(Value::Array(list)) = out.get_mut(&name) {
            list.retain(|item| !values.iter().any(|v| same_value(v, item)));
        }
    }
    Ok(Some(out))
}

/// The list a `$setElementOrder/<list>` or `$deleteFromPrimitiveList/<list>`
/// key names (`rest` is what follows the prefix).
fn directive_target(rest: &str, prefix: &str) -> Result<String> {
    match rest.strip_prefix('/') {
        Some(name) if !name.is_empty() => Ok(name.to_owned()),
        _ => Err(PatchError::Malformed(format!("{prefix} must be followed by /<field name>"))),
    }
}

/// Removes `key` from `map` without disturbing the order of the others.
fn remove_key(map: &mut Map<String, Value>, key: &str) {
    map.retain(|k, _| k != key);
}

/// Applies `$retainKeys`: every key the patch sets must be listed, and keys
/// of the original that are not listed are cleared.
fn retain_keys(out: &mut Map<String, Value>, patch: &Map<String, Value>, keys: &Value) -> Result<()> {
    let keys: Vec<&str> = keys
        .as_array()
        .and_then(|list| list.iter().map(Value::as_str).collect())
        .ok_or_else(|| PatchError::Malformed(format!("{RETAIN_KEYS} must be a list of strings")))?;
    let unlisted = patch.iter().find(|(k, v)| {
        !v.is_null()
            && !k.starts_with(SET_ELEMENT_ORDER)
            && !k.starts_with(DELETE_FROM_PRIMITIVE_LIST)
            && !keys.contains(&k.as_str())
    });
    if let Some((key, _)) = unlisted {
        return Err(PatchError::Malformed(format!("the patch sets {key:?}, which is not in its {RETAIN_KEYS} list")));
    }
    out.retain(|k, _| keys.contains(&k.as_str()));
    Ok(())
}

/// Merges a patch value into the value of one field (absent when new).
/// `None` means the field is removed.
fn merge_value(original: Option<Value>, patch: Value, field: Field) -> Result<Option<Value>> {
    Ok(match (original, patch) {
        (_, Value::Null) => None,
        (Some(Value::Object(original)), Value::Object(patch)) if !field.replace => {
            merge_map(Some(original), patch, field.ty)?.map(Value::Object)
        }
        (Some(Value::Array(original)), Value::Array(patch)) if field.merge => {
            Some(Value::Array(merge_list(original, patch, field)?))
        }
        // Anything else replaces the original: new fields, changed types,
        // `replace` maps, lists without a merge strategy and scalars. The
        // patch value is cleaned of nulls and directives on the way.
        (_, Value::Object(patch)) => merge_map(None, patch, field.ty)?.map(Value::Object),
        (_, Value::Array(patch)) if field.merge => Some(Value::Array(merge_list(Vec::new(), patch, field)?)),
        (_, Value::Array(patch)) => Some(Value::Array(clean_list(patch, field.ty.items())?)),
        (_, scalar) => Some(scalar),
    })
}

/// A replacement list: elements carrying a `$patch` directive are dropped
/// and object elements are cleaned of nulls and directives.
fn clean_list(list: Vec<Value>, items: Ty) -> Result<Vec<Value>> {
    let mut out = Vec::with_capacity(list.len());
    for item in list {
        match item {
            Value::Object(map) if map.contains_key(DIRECTIVE) => {}
            Value::Object(map) => out.extend(merge_map(None, map, items)?.map(Value::Object)),
            other => out.push(other),
        }
    }
    Ok(out)
}

/// What a merged list holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Elements {
    /// Nothing on either side.
    Empty,
    /// Strings, numbers, booleans (and nulls).
    Primitives,
    /// Objects, matched by the merge key.
    Objects,
}

/// Classifies the elements of the original and patch lists, which must
/// agree.
fn elements(original: &[Value], patch: &[Value]) -> Result<Elements> {
    let mut kind = Elements::Empty;
    for item in original.iter().chain(patch) {
        let this = match item {
            Value::Array(_) => {
                return Err(PatchError::Failed("lists of lists cannot be merged".to_owned()));
            }
            Value::Object(_) => Elements::Objects,
            _ => Elements::Primitives,
        };
        if kind != Elements::Empty && kind != this {
            return Err(PatchError::Malformed("list elements are not all of the same type".to_owned()));
        }
        kind = this;
    }
    Ok(kind)
}

/// Merges a patch list into an original list of a field with strategy
/// `merge`. Primitives are unioned; objects are matched by the merge key
/// and merged, with `$patch: delete` elements removing matches and a
/// `$patch: replace` element replacing the whole list. The result is
/// ordered as [`arrange`] describes, with the patch's order.
fn merge_list(original: Vec<Value>, patch: Vec<Value>, field: Field) -> Result<Vec<Value>> {
    match elements(&original, &patch)? {
        Elements::Empty => Ok(original),
        Elements::Primitives => {
            let mut merged: Vec<Value> = Vec::with_capacity(original.len() + patch.len());
            for item in original.iter().chain(&patch) {
                if !merged.iter().any(|m| same_value(m, item)) {
                    merged.push(item.clone());
                }
            }
            Ok(arrange(merged, &patch, &original, None))
        }
        Elements::Objects => merge_object_list(original, patch, field),
    }
}

/// The object case of [`merge_list`].
fn merge_object_list(original: Vec<Value>, patch: Vec<Value>, field: Field) -> Result<Vec<Value>> {
    let key = field.merge_key;
    if key.is_empty() {
        return Err(PatchError::Malformed("cannot merge a list of objects that has no merge key".to_owned()));
    }
    let items = field.ty.items();
    let mut survivors = original.clone();
    let mut plain = Vec::with_capacity(patch.len());
    let mut replace = false;
    for element in patch {
        let Value::Object(map) = element else {
            continue;
        };
        match map.get(DIRECTIVE).map(|d| d.as_str()) {
            None => plain.push(map),
            Some(Some("delete")) => {
                let id = merge_key_of(&map, key)?;
                survivors.retain(|o| !o.get(key).is_some_and(|v| same_value(v, id)));
            }
            Some(Some("replace")) => replace = true,
            Some(_) => {
                return Err(PatchError::Malformed(format!(
                    "unknown {DIRECTIVE} directive in a list element (expected \"delete\" or \
                     \"replace\")"
                )));
            }
        }
    }
    if replace {
        let replacement: Vec<Value> = plain.into_iter().map(Value::Object).collect();
        return clean_list(replacement, items);
    }

    let mut order = Vec::with_capacity(plain.len());
    for element in plain {
        let id = merge_key_of(&element, key)?.clone();
        order.push(Value::Object(element.clone()));
        let position = survivors.iter().position(|o| o.get(key).is_some_and(|v| same_value(v, &id)));
        match position {
            Some(i) => {
                let Value::Object(current) = std::mem::take(&mut survivors[i]) else {
                    return Err(PatchError::Malformed(format!("list element with {key} {id} is not an object")));
                };
                match merge_map(Some(current), element, items)? {
                    Some(m) => survivors[i] = Value::Object(m),
                    None => {
                        survivors.remove(i);
                    }
                }
            }
            None => survivors.extend(merge_map(None, element, items)?.map(Value::Object)),
        }
    }
    Ok(arrange(survivors, &order, &original, Some(key)))
}

/// The merge key value of a patch list element.
fn merge_key_of<'a>(element: &'a Map<String, Value>, key: &str) -> Result<&'a Value> {
    element.get(key).ok_or_else(|| {
        PatchError::Malformed(format!("a list element has no merge key {key:?}: {}", Value::Object(element.clone())))
    })
}

/// Applies `$setElementOrder/<name>`: merges the patch's list (if any) into
/// the original's and orders the result by `order`.
fn set_element_order(
    out: &mut Map<String, Value>,
    name: &str,
    order: Value,
    patch_list: Option<Value>,
    field: Field,
) -> Result<()> {
    let bad = |what: &str| PatchError::Malformed(format!("{SET_ELEMENT_ORDER}/{name}: {what} must be a list"));
    let Value::Array(order) = order else {
        return Err(bad("the order"));
    };
    let original = match out.get(name) {
        None => None,
        Some(Value::Array(list)) => Some(list.clone()),
        Some(_) => return Err(bad("the original field")),
    };
    let patch_list = match patch_list {
        None => None,
        Some(Value::Array(list)) => Some(list),
        Some(_) => return Err(bad("the patched field")),
    };
    let key = (!field.merge_key.is_empty()).then_some(field.merge_key);
    if let Some(list) = &patch_list {
        check_order(list, &order, key, name)?;
    }
    let merged = match (original.clone(), patch_list) {
        (None, None) => return Ok(()),
        (Some(original), None) => original,
        (original, Some(patch)) => {
            let field_value = merge_value(original.map(Value::Array), Value::Array(patch), field)?;
            match field_value {
                Some(Value::Array(list)) => list,
                _ => Vec::new(),
            }
        }
    };
    let arranged = arrange(merged, &order, original.as_deref().unwrap_or_default(), key);
    out.insert(name.to_owned(), Value::Array(arranged));
    Ok(())
}

/// Checks that the elements a patch list sets appear in its
/// `$setElementOrder` list, in the same relative order.
fn check_order(patch: &[Value], order: &[Value], key: Option<&str>, name: &str) -> Result<()> {
    let mut position = 0;
    for item in patch {
        if item.get(DIRECTIVE).is_some() {
            continue;
        }
        let id = identity(item, key);
        match order[position..].iter().position(|o| same_identity(identity(o, key), id)) {
            Some(found) => position += found + 1,
            None => {
                return Err(PatchError::Malformed(format!(
                    "the order of the patch list {name} does not match its \
                     {SET_ELEMENT_ORDER}/{name} list"
                )));
            }
        }
    }
    Ok(())
}

/// Orders a merged list the way the API server does. Items named in
/// `order` (the patch list or `$setElementOrder`) take its relative order;
/// the other items keep their order from the server. The two runs are then
/// interleaved: a server item goes first only if both it and the next
/// ordered item were in `original` and it came earlier there. So an item
/// new to the list lands before the server items that follow it.
///
/// Example: original `[a, b]`, patch adds `c` → `[c, a, b]`; patch changes
/// `b` → `[a, b]`; `$setElementOrder` `[b, a]` → `[b, a]`.
fn arrange(merged: Vec<Value>, order: &[Value], original: &[Value], key: Option<&str>) -> Vec<Value> {
    let index_in = |list: &[Value], item: &Value| {
        let id = identity(item, key);
        list.iter().position(|o| same_identity(identity(o, key), id))
    };
    let (mut ordered, server): (Vec<Value>, Vec<Value>) =
        merged.into_iter().partition(|item| index_in(order, item).is_some());
    ordered.sort_by_key(|item| index_in(order, item));

    let mut out = Vec::with_capacity(ordered.len() + server.len());
    let mut ordered = ordered.into_iter().peekable();
    let mut server = server.into_iter().peekable();
    loop {
        let take_server = match (server.peek(), ordered.peek()) {
            (None, None) => break,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (Some(s), Some(o)) => match (index_in(original, s), index_in(original, o)) {
                (Some(si), Some(oi)) => si < oi,
                _ => false,
            },
        };
        let next = if take_server { server.next() } else { ordered.next() };
        out.extend(next);
    }
    out
}

/// What identifies a list element: its merge key value, or the element
/// itself for primitives.
fn identity<'a>(item: &'a Value, key: Option<&str>) -> Option<&'a Value> {
    match key {
        Some(key) => item.get(key),
        None => Some(item),
    }
}

/// Whether two identities match; an element without one matches nothing.
fn same_identity(a: Option<&Value>, b: Option<&Value>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => same_value(a, b),
        _ => false,
    }
}

/// JSON equality where numbers compare by value (`80` equals `80.0`), as Go
/// compares the `float64`s it decodes.
fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    // === utils ===

    /// A Deployment as `kubectl get -o json` shows it (trimmed).
    fn deployment() -> Value {
        json!({
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {
                "name": "web",
                "namespace": "default",
                "labels": {"app": "web", "tier": "front"},
                "finalizers": ["a.example.com/x", "b.example.com/y"]
            },
            "spec": {
                "replicas": 2,
                "selector": {"matchLabels": {"app": "web"}},
                "strategy": {
                    "type": "RollingUpdate",
                    "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}
                },
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {
                        "containers": [
                            {
                                "name": "app",
                                "image": "nginx:1.25",
                                "args": ["--a", "--b"],
                                "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
                                "ports": [{"containerPort": 80, "protocol": "TCP"}]
                            },
                            {"name": "sidecar", "image": "busybox:1.36", "command": ["sleep", "inf"]}
                        ],
                        "tolerations": [{"key": "k1", "operator": "Exists"}],
                        "volumes": [{"name": "data", "emptyDir": {}}]
                    }
                }
            },
            "status": {
                "conditions": [
                    {"type": "Available", "status": "False"},
                    {"type": "Progressing", "status": "True"}
                ]
            }
        })
    }

    /// Applies a strategic merge patch, which must succeed.
    fn strategic(kind: Builtin, original: &Value, patch: &Value) -> Value {
        let body = patch.to_string();
        apply(PatchType::Strategic, Some(kind), original, body.as_bytes())
            .unwrap_or_else(|e| panic!("patch {patch} failed: {e}"))
    }

    /// The names (or another key) of the elements of the list at `pointer`.
    fn keys_at(doc: &Value, pointer: &str, key: &str) -> Vec<Value> {
        doc.pointer(pointer)
            .and_then(Value::as_array)
            .map(|list| list.iter().map(|e| e[key].clone()).collect())
            .unwrap_or_default()
    }

    /// One table case: a patch, then (JSON pointer, expected value) pairs;
    /// `Value::Null` expects the pointer to be absent.
    type Case = (&'static str, Value, Vec<(&'static str, Value)>);

    /// Runs table cases against one original object.
    fn run(kind: Builtin, original: &Value, cases: Vec<Case>) {
        for (name, patch, expectations) in cases {
            let got = strategic(kind, original, &patch);
            for (pointer, want) in expectations {
                let found = got.pointer(pointer).cloned().unwrap_or(Value::Null);
                assert_eq!(found, want, "case {name:?}: {pointer} in {got:#}");
            }
        }
    }

    const CONTAINERS: &str = "/spec/template/spec/containers";

    // === tests ===

    #[test]
    fn content_types() {
        let cases = [
            ("application/json-patch+json", Some(PatchType::Json)),
            ("application/merge-patch+json", Some(PatchType::Merge)),
            ("application/strategic-merge-patch+json", Some(PatchType::Strategic)),
            ("application/apply-patch+yaml", Some(PatchType::Apply)),
            ("application/merge-patch+json; charset=utf-8", Some(PatchType::Merge)),
            ("Application/Strategic-Merge-Patch+JSON ;charset=UTF-8", Some(PatchType::Strategic)),
            ("application/json", None),
            ("", None),
        ];
        for (ct, want) in cases {
            assert_eq!(PatchType::from_content_type(ct), want, "{ct}");
            if let Some(t) = want {
                assert_eq!(PatchType::from_content_type(t.content_type()), want);
            }
        }
    }

    #[test]
    fn strategic_deployment_table() {
        let cases: Vec<Case> = vec![
            (
                "kubectl set image: one container by name, the other untouched",
                json!({"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "nginx:1.26"}]}}}}),
                vec![
                    ("/spec/template/spec/containers/0/image", json!("nginx:1.26")),
                    ("/spec/template/spec/containers/0/args", json!(["--a", "--b"])),
                    (
                        "/spec/template/spec/containers/1",
                        deployment()["spec"]["template"]["spec"]["containers"][1].clone(),
                    ),
                ],
            ),
            (
                "kubectl label: labels merge",
                json!({"metadata": {"labels": {"env": "prod"}}}),
                vec![("/metadata/labels", json!({"app": "web", "tier": "front", "env": "prod"}))],
            ),
            (
                "kubectl label tier-: null removes a label",
                json!({"metadata": {"labels": {"tier": null, "gone": null}}}),
                vec![("/metadata/labels", json!({"app": "web"}))],
            ),
            (
                "env merges by name",
                json!({"spec": {"template": {"spec": {"containers": [{"name": "app", "env": [{"name": "B", "value": "20"}]}]}}}}),
                vec![(
                    "/spec/template/spec/containers/0/env",
                    json!([{"name": "A", "value": "1"}, {"name": "B", "value": "20"}]),
                )],
            ),
            (
                "a new env var goes before the server's (as the API server orders it)",
                json!({"spec": {"template": {"spec": {"containers": [{"name": "app", "env": [{"name": "C", "value": "3"}]}]}}}}),
                vec![(
                    "/spec/template/spec/containers/0/env",
                    json!([{"name": "C", "value": "3"}, {"name": "A", "value": "1"}, {"name": "B", "value": "2"}]),
                )],
            ),
            (
                "ports merge by containerPort",
                json!({"spec": {"template": {"spec": {"containers": [{"name": "app", "ports": [{"containerPort": 80, "name": "http"}]}]}}}}),
                vec![(
                    "/spec/template/spec/containers/0/ports",
                    json!([{"containerPort": 80, "protocol": "TCP", "name": "http"}]),
                )],
            ),
            (
                "$patch: delete removes a container",
                json!({"spec": {"template": {"spec": {"containers": [{"$patch": "delete", "name": "sidecar"}]}}}}),
                vec![
                    ("/spec/template/spec/containers/0/name", json!("app")),
                    ("/spec/template/spec/containers/1", Value::Null),
                ],
            ),
            (
                "$setElementOrder reorders",
                json!({"spec": {"template": {"spec": {"$setElementOrder/containers": [{"name": "sidecar"}, {"name": "app"}]}}}}),
                vec![
                    ("/spec/template/spec/containers/0/name", json!("sidecar")),
                    ("/spec/template/spec/containers/1/image", json!("nginx:1.25")),
                ],
            ),
            (
                "finalizers are a union without duplicates",
                json!({"metadata": {"finalizers": ["b.example.com/y", "c.example.com/z"]}}),
                vec![("/metadata/finalizers", json!(["a.example.com/x", "b.example.com/y", "c.example.com/z"]))],
            ),
            (
                "$deleteFromPrimitiveList removes a finalizer",
                json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["a.example.com/x"]}}),
                vec![("/metadata/finalizers", json!(["b.example.com/y"]))],
            ),
            (
                "tolerations have no strategy: replaced",
                json!({"spec": {"template": {"spec": {"tolerations": [{"key": "k2", "operator": "Exists"}]}}}}),
                vec![("/spec/template/spec/tolerations", json!([{"key": "k2", "operator": "Exists"}]))],
            ),
            (
                "args have no strategy: replaced",
                json!({"spec": {"template": {"spec": {"containers": [{"name": "app", "args": ["--c"]}]}}}}),
                vec![("/spec/template/spec/containers/0/args", json!(["--c"]))],
            ),
            (
                "$retainKeys on the strategy drops rollingUpdate",
                json!({"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}}),
                vec![("/spec/strategy", json!({"type": "Recreate"}))],
            ),
            (
                "without $retainKeys the strategy merges",
                json!({"spec": {"strategy": {"rollingUpdate": {"maxSurge": 1}}}}),
                vec![("/spec/strategy/rollingUpdate", json!({"maxSurge": 1, "maxUnavailable": "25%"}))],
            ),
            (
                "$patch: replace on a map",
                json!({"spec": {"template": {"metadata": {"labels": {"$patch": "replace", "x": "y"}}}}}),
                vec![("/spec/template/metadata/labels", json!({"x": "y"}))],
            ),
            (
                "$patch: replace in a merging list replaces the list",
                json!({"spec": {"template": {"spec": {"containers": [{"$patch": "replace"}, {"name": "only", "image": "i", "env": null}]}}}}),
                vec![(CONTAINERS, json!([{"name": "only", "image": "i"}]))],
            ),
            (
                "$patch: delete on a map deletes it",
                json!({"spec": {"strategy": {"$patch": "delete"}}}),
                vec![("/spec/strategy", Value::Null), ("/spec/replicas", json!(2))],
            ),
            (
                "volumes: $retainKeys switches the volume source",
                json!({"spec": {"template": {"spec": {"volumes": [{"name": "data", "$retainKeys": ["configMap", "name"], "configMap": {"name": "cfg"}}]}}}}),
                vec![("/spec/template/spec/volumes", json!([{"name": "data", "configMap": {"name": "cfg"}}]))],
            ),
            (
                "status conditions merge by type",
                json!({"status": {"conditions": [{"type": "Available", "status": "True"}]}}),
                vec![(
                    "/status/conditions",
                    json!([{"type": "Available", "status": "True"}, {"type": "Progressing", "status": "True"}]),
                )],
            ),
            (
                "scalars and new fields",
                json!({"spec": {"replicas": 5, "paused": true, "minReadySeconds": null}}),
                vec![
                    ("/spec/replicas", json!(5)),
                    ("/spec/paused", json!(true)),
                    ("/spec/minReadySeconds", Value::Null),
                ],
            ),
            (
                "a new field is cleaned of nulls and directives",
                json!({"spec": {"template": {"spec": {"nodeSelector": {"disk": "ssd", "zone": null}, "affinity": {"$patch": "delete"}}}}}),
                vec![
                    ("/spec/template/spec/nodeSelector", json!({"disk": "ssd"})),
                    ("/spec/template/spec/affinity", Value::Null),
                ],
            ),
        ];
        run(Builtin::Deployment, &deployment(), cases);
    }

    #[test]
    fn new_container_goes_first_like_the_api_server() {
        let patch = json!({"spec": {"template": {"spec": {"containers": [{"name": "debug", "image": "busybox"}]}}}});
        let got = strategic(Builtin::Deployment, &deployment(), &patch);
        assert_eq!(keys_at(&got, CONTAINERS, "name"), [json!("debug"), json!("app"), json!("sidecar")]);
    }

    #[test]
    fn kubectl_apply_three_way_patch() {
        // What kubectl apply sends after the manifest changed the image,
        // dropped env B and the sidecar, added a finalizer and switched to
        // Recreate.
        let patch = json!({
            "metadata": {
                "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}\n"},
                "$setElementOrder/finalizers": ["b.example.com/y", "c.example.com/z"],
                "$deleteFromPrimitiveList/finalizers": ["a.example.com/x"],
                "finalizers": ["c.example.com/z"]
            },
            "spec": {
                "strategy": {"$retainKeys": ["type"], "rollingUpdate": null, "type": "Recreate"},
                "template": {"spec": {
                    "$setElementOrder/containers": [{"name": "app"}],
                    "containers": [
                        {
                            "$setElementOrder/env": [{"name": "A"}],
                            "env": [{"$patch": "delete", "name": "B"}],
                            "image": "nginx:1.26",
                            "name": "app"
                        },
                        {"$patch": "delete", "name": "sidecar"}
                    ]
                }}
            }
        });
        let got = strategic(Builtin::Deployment, &deployment(), &patch);
        let mut want = deployment();
        want["metadata"]["annotations"] = json!({"kubectl.kubernetes.io/last-applied-configuration": "{}\n"});
        want["metadata"]["finalizers"] = json!(["b.example.com/y", "c.example.com/z"]);
        want["spec"]["strategy"] = json!({"type": "Recreate"});
        let containers = &mut want["spec"]["template"]["spec"]["containers"];
        containers[0]["image"] = json!("nginx:1.26");
        containers[0]["env"] = json!([{"name": "A", "value": "1"}]);
        containers.as_array_mut().expect("containers is a list").truncate(1);
        assert_eq!(got, want);
    }

    #[test]
    fn kubectl_apply_adding_a_container_in_the_middle() {
        let patch = json!({"spec": {"template": {"spec": {
            "$setElementOrder/containers": [{"name": "app"}, {"name": "metrics"}, {"name": "sidecar"}],
            "containers": [{"name": "metrics", "image": "exporter"}]
        }}}});
        let got = strategic(Builtin::Deployment, &deployment(), &patch);
        assert_eq!(keys_at(&got, CONTAINERS, "name"), [json!("app"), json!("metrics"), json!("sidecar")]);
    }

    #[test]
    fn strategic_other_kinds_table() {
        let node = json!({
            "metadata": {"name": "n1"},
            "spec": {"podCIDRs": ["10.0.0.0/24"], "taints": [{"key": "a", "effect": "NoSchedule"}]},
            "status": {
                "conditions": [{"type": "Ready", "status": "False"}, {"type": "MemoryPressure", "status": "False"}],
                "addresses": [{"type": "InternalIP", "address": "10.1.1.1"}]
            }
        });
        run(
            Builtin::Node,
            &node,
            vec![
                (
                    "taints have no strategy: replaced",
                    json!({"spec": {"taints": [{"key": "b", "effect": "NoExecute"}]}}),
                    vec![("/spec/taints", json!([{"key": "b", "effect": "NoExecute"}]))],
                ),
                (
                    "node conditions merge by type",
                    json!({"status": {"conditions": [{"type": "Ready", "status": "True"}]}}),
                    vec![(
                        "/status/conditions",
                        json!([{"type": "Ready", "status": "True"}, {"type": "MemoryPressure", "status": "False"}]),
                    )],
                ),
                (
                    "podCIDRs are a primitive merge list",
                    json!({"spec": {"podCIDRs": ["10.0.0.0/24", "fd00::/64"]}}),
                    vec![("/spec/podCIDRs", json!(["10.0.0.0/24", "fd00::/64"]))],
                ),
            ],
        );

        let service = json!({"spec": {"ports": [{"port": 80, "name": "http"}, {"port": 443, "name": "https"}], "selector": {"app": "web"}}});
        run(
            Builtin::Service,
            &service,
            vec![(
                "service ports merge by port",
                json!({"spec": {"ports": [{"port": 443, "targetPort": 8443}], "selector": {"tier": "front"}}}),
                vec![
                    (
                        "/spec/ports",
                        json!([{"port": 80, "name": "http"}, {"port": 443, "name": "https", "targetPort": 8443}]),
                    ),
                    ("/spec/selector", json!({"app": "web", "tier": "front"})),
                ],
            )],
        );

        let pod = json!({
            "metadata": {"name": "p", "ownerReferences": [{"uid": "u1", "kind": "ReplicaSet", "name": "rs1"}]},
            "spec": {"containers": [{"name": "c", "image": "i"}]},
            "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "True"}]}
        });
        run(
            Builtin::Pod,
            &pod,
            vec![
                (
                    "ownerReferences merge by uid",
                    json!({"metadata": {"ownerReferences": [{"uid": "u1", "controller": true}]}}),
                    vec![(
                        "/metadata/ownerReferences",
                        json!([{"uid": "u1", "kind": "ReplicaSet", "name": "rs1", "controller": true}]),
                    )],
                ),
                (
                    "kubelet status patch: conditions by type, podIPs new",
                    json!({"status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}], "podIPs": [{"ip": "10.0.0.5"}]}}),
                    vec![
                        ("/status/phase", json!("Running")),
                        (
                            "/status/conditions",
                            json!([{"type": "Ready", "status": "True"}, {"type": "PodScheduled", "status": "True"}]),
                        ),
                        ("/status/podIPs", json!([{"ip": "10.0.0.5"}])),
                    ],
                ),
            ],
        );

        let config_map = json!({"metadata": {"name": "c"}, "data": {"a": "1", "b": "2"}});
        run(
            Builtin::ConfigMap,
            &config_map,
            vec![(
                "configmap data merges, null deletes",
                json!({"data": {"b": null, "c": "3"}}),
                vec![("/data", json!({"a": "1", "c": "3"}))],
            )],
        );

        let sa = json!({"metadata": {"name": "default"}, "secrets": [{"name": "t1"}]});
        run(
            Builtin::ServiceAccount,
            &sa,
            vec![(
                "service account secrets merge by name",
                json!({"secrets": [{"name": "t2"}]}),
                vec![("/secrets", json!([{"name": "t2"}, {"name": "t1"}]))],
            )],
        );
    }

    #[test]
    fn strategic_errors() {
        let d = deployment();
        let cases: Vec<(&str, &[u8], u16)> = vec![
            ("not JSON", b"{nope", 400),
            ("not an object", b"[1, 2]", 400),
            ("list element without merge key", br#"{"spec":{"template":{"spec":{"containers":[{"image":"x"}]}}}}"#, 400),
            ("unknown $patch", br#"{"spec":{"strategy":{"$patch":"shrug"}}}"#, 400),
            ("key outside $retainKeys", br#"{"spec":{"strategy":{"$retainKeys":["type"],"rollingUpdate":{}}}}"#, 400),
            ("$setElementOrder without a field", br#"{"metadata":{"$setElementOrder":[]}}"#, 400),
            ("patch list out of $setElementOrder's order", br#"{"spec":{"template":{"spec":{"$setElementOrder/containers":[{"name":"app"},{"name":"sidecar"}],"containers":[{"name":"sidecar"},{"name":"app"}]}}}}"#, 400),
            ("mixed element types", br#"{"metadata":{"finalizers":[{"a":1}]}}"#, 400),
            ("list of lists", br#"{"metadata":{"finalizers":[["x"]]}}"#, 422),
        ];
        for (name, body, code) in cases {
            let err = apply(PatchType::Strategic, Some(Builtin::Deployment), &d, body).expect_err(name);
            assert_eq!(err.status_code(), code, "{name}: {err}");
        }
    }

    #[test]
    fn unsupported_patches() {
        let d = deployment();
        let err = apply(PatchType::Strategic, None, &d, b"{}").expect_err("custom resource");
        assert!(matches!(err, PatchError::Unsupported(_)), "{err}");
        assert_eq!(err.status_code(), 415);
        let err = apply(PatchType::Apply, Some(Builtin::Pod), &d, b"kind: Pod").expect_err("apply");
        assert!(matches!(&err, PatchError::Unsupported(m) if m.contains("server-side apply")), "{err}");
    }

    #[test]
    fn json_patch() {
        let d = deployment();
        let ok = br#"[{"op":"test","path":"/spec/replicas","value":2},{"op":"replace","path":"/spec/replicas","value":3},{"op":"add","path":"/metadata/labels/env","value":"prod"}]"#;
        let got = apply(PatchType::Json, None, &d, ok).expect("valid JSON patch");
        assert_eq!(got["spec"]["replicas"], json!(3));
        assert_eq!(got["metadata"]["labels"]["env"], json!("prod"));

        let cases: Vec<(&str, &[u8], u16)> = vec![
            ("failing test op", br#"[{"op":"test","path":"/spec/replicas","value":9}]"#, 422),
            ("remove a missing path", br#"[{"op":"remove","path":"/spec/nope"}]"#, 422),
            ("not a list", br#"{"op":"add","path":"/a","value":1}"#, 400),
            ("unknown op", br#"[{"op":"frobnicate","path":"/a"}]"#, 400),
            ("not JSON", b"[{", 400),
        ];
        for (name, body, code) in cases {
            let err = apply(PatchType::Json, Some(Builtin::Deployment), &d, body).expect_err(name);
            assert_eq!(err.status_code(), code, "{name}: {err}");
        }
        let err =
            apply(PatchType::Json, None, &d, br#"[{"op":"test","path":"/kind","value":"Pod"}]"#).expect_err("test op");
        assert!(matches!(err, PatchError::Failed(_)), "{err}");
    }

    #[test]
    fn merge_patch() {
        let d = deployment();
        let body = br#"{"metadata":{"labels":{"tier":null,"env":"prod"}},"spec":{"template":{"spec":{"containers":[{"name":"only"}]}}}}"#;
        let got = apply(PatchType::Merge, Some(Builtin::Deployment), &d, body).expect("merge patch");
        assert_eq!(got["metadata"]["labels"], json!({"app": "web", "env": "prod"}));
        // RFC 7386 has no list strategies: the list is replaced.
        assert_eq!(got["spec"]["template"]["spec"]["containers"], json!([{"name": "only"}]));
        for body in [&b"{oops"[..], b"[]", b"\"x\""] {
            let err = apply(PatchType::Merge, None, &d, body).expect_err("malformed");
            assert!(matches!(err, PatchError::Malformed(_)), "{err}");
        }
    }

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
