//! The `components.schemas` of a document: k8s-openapi's definitions and
//! what kube-sim adds to them (GVK extensions, list kinds, custom resource
//! schemas, upstream's `IntOrString`/`Quantity` shapes and the patch
//! extensions of `PATCH_META`).

use k8s_openapi::api::apps::v1 as apps;
use k8s_openapi::api::{coordination::v1 as coordination, core::v1 as core, events::v1 as events};
use k8s_openapi::api::{policy::v1 as policy, rbac::v1 as rbac};
use schemars::JsonSchema;
use schemars::generate::SchemaGenerator;
use serde_json::{Map, Value, json};

use crate::patch::PATCH_META;
use crate::resources::{Builtin, ResourceType};

use super::REF_PREFIX;

/// Adds `T` and everything it references to the generator; returns `T`'s
/// definition name.
pub(super) fn define<T: JsonSchema>(generator: &mut SchemaGenerator) -> String {
    generator.subschema_for::<T>();
    T::schema_name().into_owned()
}

/// [`define`] for the k8s-openapi type of a built-in.
pub(crate) fn define_builtin(builtin: Builtin, generator: &mut SchemaGenerator) -> String {
    match builtin {
        Builtin::Namespace => define::<core::Namespace>(generator),
        Builtin::Node => define::<core::Node>(generator),
        Builtin::Pod => define::<core::Pod>(generator),
        Builtin::Service => define::<core::Service>(generator),
        Builtin::Endpoints => define::<core::Endpoints>(generator),
        Builtin::ConfigMap => define::<core::ConfigMap>(generator),
        Builtin::Secret => define::<core::Secret>(generator),
        Builtin::ServiceAccount => define::<core::ServiceAccount>(generator),
        Builtin::CoreEvent => define::<core::Event>(generator),
        Builtin::PodTemplate => define::<core::PodTemplate>(generator),
        Builtin::Deployment => define::<apps::Deployment>(generator),
        Builtin::ReplicaSet => define::<apps::ReplicaSet>(generator),
        Builtin::Lease => define::<coordination::Lease>(generator),
        Builtin::EventsEvent => define::<events::Event>(generator),
        Builtin::PodDisruptionBudget => define::<policy::PodDisruptionBudget>(generator),
        Builtin::ClusterRole => define::<rbac::ClusterRole>(generator),
        Builtin::ClusterRoleBinding => define::<rbac::ClusterRoleBinding>(generator),
        Builtin::Role => define::<rbac::Role>(generator),
        Builtin::RoleBinding => define::<rbac::RoleBinding>(generator),
    }
}

/// The definition name the real server gives a custom resource: the group
/// reversed, then version and kind (`com.example.stable.v1.CronTab`).
pub(super) fn custom_definition_name(rt: &ResourceType) -> String {
    let group: Vec<&str> = rt.group.rsplit('.').collect();
    format!("{}.{}.{}", group.join("."), rt.version, rt.kind)
}

/// One `x-kubernetes-group-version-kind` entry.
pub(super) fn gvk(group: &str, version: &str, kind: &str) -> Value {
    json!({ "group": group, "kind": kind, "version": version })
}

/// Sets the `x-kubernetes-group-version-kind` list of a definition, if the
/// document has it.
pub(super) fn set_gvk(schemas: &mut Map<String, Value>, name: &str, gvks: Vec<Value>) {
    if let Some(Value::Object(schema)) = schemas.get_mut(name) {
        schema.insert("x-kubernetes-group-version-kind".to_owned(), Value::Array(gvks));
    }
}

/// The `apiVersion` and `kind` property schemas (with their upstream
/// descriptions), taken from the `Status` definition.
pub(super) fn type_meta(schemas: &Map<String, Value>, status: &str) -> (Value, Value) {
    let property = |name: &str| {
        schemas
            .get(status)
            .and_then(|s| s.pointer(&format!("/properties/{name}")))
            .cloned()
            .unwrap_or_else(|| json!({ "type": "string" }))
    };
    (property("apiVersion"), property("kind"))
}

/// The schema of a custom resource. kube-sim keeps no CRD schema, so this is
/// what the real server publishes for a CRD whose schema is
/// `{type: object, x-kubernetes-preserve-unknown-fields: true}`: the
/// type-meta properties and `metadata`, and anything else allowed.
pub(super) fn custom_schema(api_version: &Value, kind: &Value, object_meta: &str) -> Value {
    json!({
        "type": "object",
        "x-kubernetes-preserve-unknown-fields": true,
        "properties": {
            "apiVersion": api_version,
            "kind": kind,
            "metadata": {
                "$ref": format!("{REF_PREFIX}{object_meta}"),
                "description": "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata",
            },
        },
    })
}

/// The `<Kind>List` schema of a type (k8s-openapi has no schema for
/// `List<T>`).
pub(super) fn list_schema(rt: &ResourceType, item: &str, api_version: &Value, kind: &Value, list_meta: &str) -> Value {
    json!({
        "description": format!("{}List is a list of {}.", rt.kind, rt.kind),
        "type": "object",
        "required": ["items"],
        "properties": {
            "apiVersion": api_version,
            "kind": kind,
            "items": {
                "description": format!("List of {}. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md", rt.plural),
                "type": "array",
                "items": { "$ref": format!("{REF_PREFIX}{item}"), "default": {} },
            },
            "metadata": {
                "$ref": format!("{REF_PREFIX}{list_meta}"),
                "default": {},
                "description": "Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata",
            },
        },
        "x-kubernetes-group-version-kind": [gvk(&rt.group, &rt.version, &format!("{}List", rt.kind))],
    })
}

/// Rewrites `IntOrString` and `Quantity`, which k8s-openapi describes with
/// `x-kubernetes-int-or-string`, into the shapes the real server publishes
/// in OpenAPI v3.
pub(super) fn fix_scalar_unions(schemas: &mut Map<String, Value>) {
    let unions = [
        (
            "io.k8s.apimachinery.pkg.util.intstr.IntOrString",
            json!({ "format": "int-or-string", "oneOf": [{ "type": "integer" }, { "type": "string" }] }),
        ),
        (
            "io.k8s.apimachinery.pkg.api.resource.Quantity",
            json!({ "oneOf": [{ "type": "string" }, { "type": "number" }] }),
        ),
    ];
    for (name, mut shape) in unions {
        let Some(Value::Object(schema)) = schemas.get_mut(name) else {
            continue;
        };
        if let (Some(description), Value::Object(shape)) = (schema.get("description"), &mut shape) {
            shape.insert("description".to_owned(), description.clone());
        }
        schemas.insert(name.to_owned(), shape);
    }
}

/// Adds the strategic-merge-patch extensions of [`PATCH_META`] to the
/// properties this document defines.
pub(super) fn apply_patch_meta(schemas: &mut Map<String, Value>) {
    for (definition, property, strategy, merge_key) in PATCH_META {
        let Some(Value::Object(prop)) =
            schemas.get_mut(*definition).and_then(|d| d.pointer_mut(&format!("/properties/{property}")))
        else {
            continue;
        };
        if !strategy.is_empty() {
            prop.insert("x-kubernetes-patch-strategy".to_owned(), json!(strategy));
        }
        if !merge_key.is_empty() {
            prop.insert("x-kubernetes-patch-merge-key".to_owned(), json!(merge_key));
        }
    }
}
