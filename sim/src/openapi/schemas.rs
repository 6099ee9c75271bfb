//! The `components.schemas` of a document: k8s-openapi's definitions and
//! what kube-sim adds to them (GVK extensions, list kinds, custom resource
//! schemas, upstream's `IntOrString`/`Quantity` shapes and the patch
//! extensions of `PATCH_META`).

use serde_json::{Map, Value, json};

use crate::patch::PATCH_META;
use crate::resources::ResourceType;

/// Where `$ref`s point: `components.schemas` of the same document.
pub(super) const REF_PREFIX: &str = "#/components/schemas/";

/// The definition names every document has, whatever its kinds.
pub(super) struct MetaNames {
    /// `io.k8s.apimachinery.pkg.apis.meta.v1.Status`.
    pub(super) status: String,
    /// `io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions`.
    pub(super) delete_options: String,
    /// `io.k8s.apimachinery.pkg.apis.meta.v1.Patch`.
    pub(super) patch: String,
    /// `io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta`.
    pub(super) object_meta: String,
    /// `io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta`.
    pub(super) list_meta: String,
    /// `io.k8s.apimachinery.pkg.apis.meta.v1.APIResourceList`.
    pub(super) resource_list: String,
    /// `io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent`.
    pub(super) watch_event: String,
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
