//! The OpenAPI v3 documents kube-sim serves under `/openapi/v3`.
//!
//! A real API server publishes one OpenAPI 3.0 document per group-version
//! (`/openapi/v3/api/v1`, `/openapi/v3/apis/apps/v1`, ...) and an index at
//! `/openapi/v3` that names each document's URL together with a hash of its
//! bytes. kubectl reads them for three things:
//!
//! - `kubectl explain` finds a resource's GVK from the
//!   `x-kubernetes-group-version-kind` object on the operations of its paths,
//!   then the schema carrying that GVK in its `x-kubernetes-group-version-kind`
//!   list, and follows `$ref`s through `components.schemas`;
//! - create, replace, patch and apply use server-side field validation only
//!   when the PATCH operation for the GVK lists the `fieldValidation` query
//!   parameter (cli-runtime `query_param_verifier_v3.go`);
//! - client-side `kubectl apply` builds strategic merge patches from the
//!   `x-kubernetes-patch-strategy` / `x-kubernetes-patch-merge-key`
//!   extensions on schema properties.
//!
//! The schemas are not written here: they come from k8s-openapi's schemars
//! implementations, under the upstream definition names
//! (`io.k8s.api.apps.v1.Deployment`). This module adds what k8s-openapi
//! leaves out: the GVK extensions, the list kinds, the patch extensions of
//! [`PATCH_META`](crate::patch::PATCH_META), the upstream OpenAPI v3 shapes of
//! `IntOrString` and `Quantity`, a permissive schema for custom resources
//! (whose CRD schemas kube-sim does not keep), and the paths with their
//! operations. Serving the bytes over HTTP is left to the router.
//!
//! Everything is built once, in [`OpenApi::new`], and kept as serialised
//! bytes; a registry change (a new custom resource) means building a new
//! [`OpenApi`].

use std::collections::BTreeMap;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use k8s_openapi::api::{apps::v1 as apps, autoscaling::v1 as autoscaling};
use k8s_openapi::api::{coordination::v1 as coordination, core::v1 as core, events::v1 as events};
use k8s_openapi::apimachinery::pkg::apis::meta::v1 as meta;
use schemars::JsonSchema;
use schemars::generate::{SchemaGenerator, SchemaSettings};
use schemars::transform::ReplaceBoolSchemas;
use serde_json::{Map, Value, json};

use crate::patch::PATCH_META;
use crate::resources::{Builtin, Registry, ResourceType, Subresource};

/// The server version in each document's `info`.
const KUBERNETES_VERSION: &str = "v1.33.0";

/// Where `$ref`s point: `components.schemas` of the same document.
const REF_PREFIX: &str = "#/components/schemas/";

/// Media types the built-in types are served in.
const BUILTIN_MEDIA: &[&str] = &["application/json", "application/vnd.kubernetes.protobuf", "application/yaml"];

/// Media types a built-in list (or watch) is served in.
const BUILTIN_LIST_MEDIA: &[&str] = &[
    "application/json",
    "application/json;stream=watch",
    "application/vnd.kubernetes.protobuf",
    "application/vnd.kubernetes.protobuf;stream=watch",
    "application/yaml",
];

/// Media types a custom resource is served in.
const CUSTOM_MEDIA: &[&str] = &["application/json", "application/yaml"];

/// Media types a custom resource list (or watch) is served in.
const CUSTOM_LIST_MEDIA: &[&str] = &["application/json", "application/json;stream=watch", "application/yaml"];

/// Request body media types of every PATCH operation.
const PATCH_MEDIA: &[&str] = &[
    "application/apply-patch+yaml",
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
];

/// Query parameters of a list (or watch).
const LIST_PARAMS: &[&str] = &[
    "allowWatchBookmarks",
    "continue",
    "fieldSelector",
    "labelSelector",
    "limit",
    "resourceVersion",
    "resourceVersionMatch",
    "sendInitialEvents",
    "timeoutSeconds",
    "watch",
];

/// Query parameters of a delete of one object.
const DELETE_PARAMS: &[&str] = &[
    "dryRun",
    "gracePeriodSeconds",
    "ignoreStoreReadErrorWithClusterBreakingPotential",
    "orphanDependents",
    "propagationPolicy",
];

/// Query parameters of a delete of a collection.
const DELETE_COLLECTION_PARAMS: &[&str] = &[
    "continue",
    "dryRun",
    "fieldSelector",
    "gracePeriodSeconds",
    "ignoreStoreReadErrorWithClusterBreakingPotential",
    "labelSelector",
    "limit",
    "orphanDependents",
    "propagationPolicy",
    "resourceVersion",
    "resourceVersionMatch",
    "sendInitialEvents",
    "timeoutSeconds",
];

/// Query parameters of a create or replace.
const WRITE_PARAMS: &[&str] = &["dryRun", "fieldManager", "fieldValidation"];

/// Query parameters of a patch.
const PATCH_PARAMS: &[&str] = &["dryRun", "fieldManager", "fieldValidation", "force"];

/// The OpenAPI v3 documents for one [`Registry`] snapshot: the index and one
/// document per served group-version, pre-serialised. Cheap to clone.
#[derive(Debug, Clone)]
pub struct OpenApi {
    /// Shared so that handlers can hold the documents without copying them.
    inner: Arc<Documents>,
}

/// What [`OpenApi`] shares.
#[derive(Debug)]
struct Documents {
    /// The body of `GET /openapi/v3`.
    index: Vec<u8>,
    /// Each group-version document by its path (`api/v1`, `apis/apps/v1`).
    group_versions: BTreeMap<String, Document>,
}

/// One serialised group-version document.
#[derive(Debug)]
struct Document {
    /// The JSON body.
    bytes: Vec<u8>,
    /// Upper-case hex digest of `bytes`, as in `?hash=` and the ETag.
    hash: String,
}

// === impl OpenApi ===

impl OpenApi {
    /// Builds the documents for every group-version `registry` serves now.
    pub fn new(registry: &Registry) -> OpenApi {
        // Group the types by group-version, in registry order.
        let mut by_gv: BTreeMap<String, Vec<Arc<ResourceType>>> = BTreeMap::new();
        for rt in registry.all() {
            by_gv.entry(gv_path(&rt.group, &rt.version)).or_default().push(rt);
        }

        let mut group_versions = BTreeMap::new();
        let mut index_paths = Map::new();
        for (path, types) in by_gv {
            let value = group_version_document(&types);
            let bytes = value.to_string().into_bytes();
            let hash = digest(&bytes);
            index_paths.insert(path.clone(), json!({ "serverRelativeURL": format!("/openapi/v3/{path}?hash={hash}") }));
            group_versions.insert(path, Document { bytes, hash });
        }
        let index = json!({ "paths": index_paths }).to_string().into_bytes();
        OpenApi { inner: Arc::new(Documents { index, group_versions }) }
    }

    /// The body of `GET /openapi/v3`: `{"paths":{"api/v1":{"serverRelativeURL":
    /// "/openapi/v3/api/v1?hash=..."},...}}`.
    pub fn index(&self) -> &[u8] {
        &self.inner.index
    }

    /// The document of one group-version, by its path below `/openapi/v3/`
    /// (`api/v1`, `apis/apps/v1`; a leading `/` is ignored).
    pub fn group_version(&self, path: &str) -> Option<&[u8]> {
        self.document(path).map(|d| d.bytes.as_slice())
    }

    /// The hash of one group-version document (the `hash` query parameter
    /// of its URL in the index), for the ETag and to tell a current URL
    /// (cacheable forever) from a stale one (redirected upstream).
    pub fn hash(&self, path: &str) -> Option<&str> {
        self.document(path).map(|d| d.hash.as_str())
    }

    /// Looks up a document by path.
    fn document(&self, path: &str) -> Option<&Document> {
        self.inner.group_versions.get(path.trim_start_matches('/'))
    }
}

/// The index path of a group-version: `api/v1` or `apis/apps/v1`.
fn gv_path(group: &str, version: &str) -> String {
    if group.is_empty() { format!("api/{version}") } else { format!("apis/{group}/{version}") }
}

/// A 128-bit digest of `bytes` as 32 upper-case hex digits. The real server
/// uses SHA-512; clients only compare the value.
fn digest(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(32);
    for seed in [0x6b75_6265_u64, 0x7369_6d00_u64] {
        let mut hasher = DefaultHasher::new();
        seed.hash(&mut hasher);
        bytes.hash(&mut hasher);
        out.push_str(&format!("{:016X}", hasher.finish()));
    }
    out
}

// === group-version document ===

/// The definition names every document has, whatever its kinds.
struct MetaNames {
    /// `io.k8s.apimachinery.pkg.apis.meta.v1.Status`.
    status: String,
    /// `io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions`.
    delete_options: String,
    /// `io.k8s.apimachinery.pkg.apis.meta.v1.Patch`.
    patch: String,
    /// `io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta`.
    object_meta: String,
    /// `io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta`.
    list_meta: String,
    /// `io.k8s.apimachinery.pkg.apis.meta.v1.APIResourceList`.
    resource_list: String,
    /// `io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent`.
    watch_event: String,
}

/// Builds the document of the group-version all of `types` belong to.
fn group_version_document(types: &[Arc<ResourceType>]) -> Value {
    let (group, version) = match types.first() {
        Some(rt) => (rt.group.as_str(), rt.version.as_str()),
        None => ("", "v1"),
    };
    let mut generator = SchemaSettings::draft2020_12()
        .with(|s| {
            s.definitions_path = "/components/schemas".into();
            s.meta_schema = None;
        })
        .with_transform({
            let mut bools = ReplaceBoolSchemas::default();
            bools.skip_additional_properties = true;
            bools
        })
        .into_generator();

    let names = MetaNames {
        status: define::<meta::Status>(&mut generator),
        delete_options: define::<meta::DeleteOptions>(&mut generator),
        patch: define::<meta::Patch>(&mut generator),
        object_meta: define::<meta::ObjectMeta>(&mut generator),
        list_meta: define::<meta::ListMeta>(&mut generator),
        resource_list: define::<meta::APIResourceList>(&mut generator),
        watch_event: define::<meta::WatchEvent<meta::Status>>(&mut generator),
    };
    let scale = types.iter().any(|t| t.has(Subresource::Scale)).then(|| define::<autoscaling::Scale>(&mut generator));
    let kinds: Vec<(&ResourceType, String)> = types
        .iter()
        .map(|rt| {
            let name = match rt.builtin {
                Some(b) => define_builtin(b, &mut generator),
                None => custom_definition_name(rt),
            };
            (rt.as_ref(), name)
        })
        .collect();

    let mut schemas = generator.take_definitions(true);
    fix_scalar_unions(&mut schemas);
    let (api_version, kind) = type_meta(&schemas, &names.status);

    let mut paths = Map::new();
    paths.insert(format!("/{}/", gv_path(group, version)), resources_path(group, version, &names));
    for (rt, name) in &kinds {
        if rt.builtin.is_none() {
            schemas.insert(name.clone(), custom_schema(&api_version, &kind, &names.object_meta));
        }
        set_gvk(&mut schemas, name, vec![gvk(&rt.group, &rt.version, &rt.kind)]);
        let list = format!("{name}List");
        schemas.insert(list.clone(), list_schema(rt, name, &api_version, &kind, &names.list_meta));
        let ops = Operations { rt, object: name, list: &list, scale: scale.as_deref(), meta: &names };
        ops.add_paths(&mut paths);
    }

    // Meta types carry their GVKs as they do upstream.
    set_gvk(&mut schemas, &names.status, vec![gvk("", "v1", "Status")]);
    set_gvk(&mut schemas, &names.resource_list, vec![gvk("", "v1", "APIResourceList")]);
    for (name, kind) in [(&names.delete_options, "DeleteOptions"), (&names.watch_event, "WatchEvent")] {
        let mut gvks = vec![gvk("", "v1", kind)];
        if !group.is_empty() {
            gvks.push(gvk(group, version, kind));
        }
        set_gvk(&mut schemas, name, gvks);
    }
    if let Some(scale) = &scale {
        set_gvk(&mut schemas, scale, vec![gvk("autoscaling", "v1", "Scale")]);
    }
    apply_patch_meta(&mut schemas);

    json!({
        "openapi": "3.0.0",
        "info": { "title": "Kubernetes", "version": KUBERNETES_VERSION },
        "paths": paths,
        "components": {
            "schemas": schemas,
            "securitySchemes": {
                "BearerToken": {
                    "description": "Bearer Token authentication",
                    "in": "header",
                    "name": "authorization",
                    "type": "apiKey",
                },
            },
        },
    })
}

/// Adds `T` and everything it references to the generator; returns `T`'s
/// definition name.
fn define<T: JsonSchema>(generator: &mut SchemaGenerator) -> String {
    generator.subschema_for::<T>();
    T::schema_name().into_owned()
}

/// [`define`] for the k8s-openapi type of a built-in.
fn define_builtin(builtin: Builtin, generator: &mut SchemaGenerator) -> String {
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
    }
}

/// The definition name the real server gives a custom resource: the group
/// reversed, then version and kind (`com.example.stable.v1.CronTab`).
fn custom_definition_name(rt: &ResourceType) -> String {
    let group: Vec<&str> = rt.group.rsplit('.').collect();
    format!("{}.{}.{}", group.join("."), rt.version, rt.kind)
}

/// One `x-kubernetes-group-version-kind` entry.
fn gvk(group: &str, version: &str, kind: &str) -> Value {
    json!({ "group": group, "kind": kind, "version": version })
}

/// Sets the `x-kubernetes-group-version-kind` list of a definition, if the
/// document has it.
fn set_gvk(schemas: &mut Map<String, Value>, name: &str, gvks: Vec<Value>) {
    if let Some(Value::Object(schema)) = schemas.get_mut(name) {
        schema.insert("x-kubernetes-group-version-kind".to_owned(), Value::Array(gvks));
    }
}

/// The `apiVersion` and `kind` property schemas (with their upstream
/// descriptions), taken from the `Status` definition.
fn type_meta(schemas: &Map<String, Value>, status: &str) -> (Value, Value) {
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
fn custom_schema(api_version: &Value, kind: &Value, object_meta: &str) -> Value {
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
fn list_schema(rt: &ResourceType, item: &str, api_version: &Value, kind: &Value, list_meta: &str) -> Value {
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
fn fix_scalar_unions(schemas: &mut Map<String, Value>) {
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
fn apply_patch_meta(schemas: &mut Map<String, Value>) {
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

// === paths and operations ===

/// The path item of the group-version root (`/apis/apps/v1/`): discovery's
/// resource list.
fn resources_path(group: &str, version: &str, names: &MetaNames) -> Value {
    json!({
        "get": {
            "description": "get available resources",
            "operationId": format!("get{}APIResources", operation_gv(group, version)),
            "responses": { "200": response("OK", &names.resource_list, BUILTIN_MEDIA) },
            "tags": [tag(group, version)],
        },
    })
}

/// One operation kind, named as in `x-kubernetes-action`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Action {
    /// `GET` on a collection.
    List,
    /// `POST` on a collection.
    Post,
    /// `DELETE` on a collection.
    DeleteCollection,
    /// `GET` on an object.
    Get,
    /// `PUT` on an object.
    Put,
    /// `PATCH` on an object.
    Patch,
    /// `DELETE` on an object.
    Delete,
}

impl Action {
    /// The HTTP method, lower-case as OpenAPI path items key it.
    fn method(self) -> &'static str {
        match self {
            Action::List | Action::Get => "get",
            Action::Post => "post",
            Action::DeleteCollection | Action::Delete => "delete",
            Action::Put => "put",
            Action::Patch => "patch",
        }
    }

    /// The `x-kubernetes-action` value.
    fn name(self) -> &'static str {
        match self {
            Action::List => "list",
            Action::Post => "post",
            Action::DeleteCollection => "deletecollection",
            Action::Get => "get",
            Action::Put => "put",
            Action::Patch => "patch",
            Action::Delete => "delete",
        }
    }

    /// The verb an operation id starts with.
    fn verb(self) -> &'static str {
        match self {
            Action::List => "list",
            Action::Post => "create",
            Action::DeleteCollection | Action::Delete => "delete",
            Action::Get => "read",
            Action::Put => "replace",
            Action::Patch => "patch",
        }
    }

    /// The operation's own query parameters.
    fn params(self) -> &'static [&'static str] {
        match self {
            Action::List => LIST_PARAMS,
            Action::Post | Action::Put => WRITE_PARAMS,
            Action::DeleteCollection => DELETE_COLLECTION_PARAMS,
            Action::Get => &[],
            Action::Patch => PATCH_PARAMS,
            Action::Delete => DELETE_PARAMS,
        }
    }
}

/// Which path an operation is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    /// The collection in one namespace (or the cluster, for cluster-scoped
    /// types).
    Collection,
    /// The collection across all namespaces (namespaced types only).
    AllNamespaces,
    /// One object, or one of its subresources.
    Object(Option<Subresource>),
}

/// Builds the paths of one resource type.
struct Operations<'a> {
    /// The type.
    rt: &'a ResourceType,
    /// Its definition name.
    object: &'a str,
    /// Its list's definition name.
    list: &'a str,
    /// The `Scale` definition name, when some type has `/scale`.
    scale: Option<&'a str>,
    /// The meta definitions.
    meta: &'a MetaNames,
}

impl Operations<'_> {
    /// Inserts every path of the type into `paths`.
    fn add_paths(&self, paths: &mut Map<String, Value>) {
        use Action::{Delete, DeleteCollection, Get, List, Patch, Post, Put};
        let collection = self.rt.collection_path(Some("{namespace}"));
        let object = format!("{collection}/{{name}}");
        paths.insert(collection, self.path_item(Target::Collection, &[List, Post, DeleteCollection]));
        paths.insert(object.clone(), self.path_item(Target::Object(None), &[Get, Put, Patch, Delete]));
        if self.rt.namespaced {
            paths.insert(self.rt.collection_path(None), self.path_item(Target::AllNamespaces, &[List]));
        }
        for &sub in &self.rt.subresources {
            let actions: &[Action] = match sub {
                Subresource::Status | Subresource::Scale => &[Get, Put, Patch],
                Subresource::Finalize => &[Put],
            };
            paths.insert(format!("{object}/{}", sub.segment()), self.path_item(Target::Object(Some(sub)), actions));
        }
    }

    /// One path item: its operations plus the parameters they share.
    fn path_item(&self, target: Target, actions: &[Action]) -> Value {
        let mut item = Map::new();
        for &action in actions {
            item.insert(action.method().to_owned(), self.operation(target, action));
        }
        let mut params = Vec::new();
        if let Target::Object(sub) = target {
            let kind = match sub {
                Some(Subresource::Scale) => "Scale",
                _ => self.rt.kind.as_str(),
            };
            params.push(path_param("name", &format!("name of the {kind}")));
        }
        if self.rt.namespaced && target != Target::AllNamespaces {
            params.push(path_param("namespace", "object name and auth scope, such as for teams and projects"));
        }
        params.push(query_param("pretty"));
        item.insert("parameters".to_owned(), Value::Array(params));
        Value::Object(item)
    }

    /// One operation.
    fn operation(&self, target: Target, action: Action) -> Value {
        let rt = self.rt;
        let sub = match target {
            Target::Object(sub) => sub,
            _ => None,
        };
        let is_scale = sub == Some(Subresource::Scale);
        let object = match (is_scale, self.scale) {
            (true, Some(scale)) => scale,
            _ => self.object,
        };
        let builtin = rt.builtin.is_some();
        let (media, list_media) =
            if builtin { (BUILTIN_MEDIA, BUILTIN_LIST_MEDIA) } else { (CUSTOM_MEDIA, CUSTOM_LIST_MEDIA) };

        let mut responses = Map::new();
        let mut body = None;
        match action {
            Action::List => {
                responses.insert("200".to_owned(), response("OK", self.list, list_media));
            }
            Action::Post => {
                for (code, text) in [("200", "OK"), ("201", "Created"), ("202", "Accepted")] {
                    responses.insert(code.to_owned(), response(text, object, media));
                }
                body = Some(request_body(&["application/json"], object));
            }
            Action::Get => {
                responses.insert("200".to_owned(), response("OK", object, media));
            }
            Action::Put | Action::Patch => {
                for (code, text) in [("200", "OK"), ("201", "Created")] {
                    responses.insert(code.to_owned(), response(text, object, media));
                }
                body = Some(if action == Action::Patch {
                    request_body(PATCH_MEDIA, &self.meta.patch)
                } else {
                    request_body(&["application/json"], object)
                });
            }
            Action::DeleteCollection => {
                responses.insert("200".to_owned(), response("OK", &self.meta.status, media));
                body = Some(request_body(&["application/json"], &self.meta.delete_options));
            }
            Action::Delete => {
                // Pods and Services answer a delete with the object.
                let answer = match rt.builtin {
                    Some(Builtin::Pod | Builtin::Service) => object,
                    _ => self.meta.status.as_str(),
                };
                for (code, text) in [("200", "OK"), ("202", "Accepted")] {
                    responses.insert(code.to_owned(), response(text, answer, media));
                }
                body = Some(request_body(&["application/json"], &self.meta.delete_options));
            }
        }

        let (group, version, kind) = if is_scale {
            ("autoscaling", "v1", "Scale")
        } else {
            (rt.group.as_str(), rt.version.as_str(), rt.kind.as_str())
        };
        let mut op = Map::new();
        op.insert("description".to_owned(), json!(self.description(action, sub)));
        op.insert("operationId".to_owned(), json!(self.operation_id(target, action)));
        let params: Vec<Value> = action.params().iter().map(|p| query_param(p)).collect();
        if !params.is_empty() {
            op.insert("parameters".to_owned(), Value::Array(params));
        }
        if let Some(body) = body {
            op.insert("requestBody".to_owned(), body);
        }
        op.insert("responses".to_owned(), Value::Object(responses));
        op.insert("tags".to_owned(), json!([tag(&rt.group, &rt.version)]));
        op.insert("x-kubernetes-action".to_owned(), json!(action.name()));
        op.insert("x-kubernetes-group-version-kind".to_owned(), gvk(group, version, kind));
        Value::Object(op)
    }

    /// The upstream operation description (`read status of the specified
    /// Deployment`).
    fn description(&self, action: Action, sub: Option<Subresource>) -> String {
        let kind = &self.rt.kind;
        let of = sub.map(|s| format!("{} of ", s.segment())).unwrap_or_default();
        match action {
            Action::List => format!("list or watch objects of kind {kind}"),
            Action::Post => format!("create {}{kind}", article(kind)),
            Action::DeleteCollection => format!("delete collection of {kind}"),
            Action::Get => format!("read {of}the specified {kind}"),
            Action::Put => format!("replace {of}the specified {kind}"),
            Action::Patch => format!("partially update {of}the specified {kind}"),
            Action::Delete => format!("delete {}{kind}", article(kind)),
        }
    }

    /// The upstream operation id (`patchAppsV1NamespacedDeploymentScale`,
    /// `listCoreV1PodForAllNamespaces`, `deleteCoreV1CollectionNamespacedPod`).
    fn operation_id(&self, target: Target, action: Action) -> String {
        let rt = self.rt;
        let mut id = format!("{}{}", action.verb(), operation_gv(&rt.group, &rt.version));
        if action == Action::DeleteCollection {
            id.push_str("Collection");
        }
        if rt.namespaced && target != Target::AllNamespaces {
            id.push_str("Namespaced");
        }
        id.push_str(&rt.kind);
        match target {
            Target::AllNamespaces => id.push_str("ForAllNamespaces"),
            Target::Object(Some(sub)) => id.push_str(&to_operation_id(sub.segment(), true)),
            _ => {}
        }
        id
    }
}

/// `a `, `an ` or nothing (for plurals such as `Endpoints`) before a kind.
fn article(kind: &str) -> &'static str {
    if kind.ends_with('s') && !kind.ends_with("ss") {
        ""
    } else if kind.starts_with(['A', 'E', 'I', 'O', 'U', 'a', 'e', 'i', 'o', 'u']) {
        "an "
    } else {
        "a "
    }
}

/// The group-version part of operation ids: `CoreV1`, `AppsV1`,
/// `CoordinationV1`, `StableExampleComV1`.
fn operation_gv(group: &str, version: &str) -> String {
    let group = if group.is_empty() { "core" } else { group.trim_end_matches(".k8s.io") };
    format!("{}{}", to_operation_id(group, true), to_operation_id(version, true))
}

/// The operation tag: `core_v1`, `apps_v1`, `coordination_v1`.
fn tag(group: &str, version: &str) -> String {
    let group = if group.is_empty() { "core" } else { group.trim_end_matches(".k8s.io") };
    format!("{}_{}", to_operation_id(group, false), to_operation_id(version, false))
}

/// kube-openapi's `ToValidOperationID`: drops characters other than letters,
/// `_` and (not leading) digits, capitalising the letter after each dropped
/// one.
fn to_operation_id(s: &str, capitalize_first: bool) -> String {
    let mut out = String::with_capacity(s.len());
    let mut capitalize = capitalize_first;
    for (i, c) in s.chars().enumerate() {
        if c.is_alphabetic() || c == '_' || (i != 0 && c.is_ascii_digit()) {
            if capitalize {
                out.extend(c.to_uppercase());
                capitalize = false;
            } else {
                out.push(c);
            }
        } else {
            capitalize = true;
        }
    }
    out
}

/// A response whose body is the definition `schema` in each media type.
fn response(description: &str, schema: &str, media: &[&str]) -> Value {
    json!({ "content": media_content(media, schema), "description": description })
}

/// A request body of the definition `schema` in each media type.
fn request_body(media: &[&str], schema: &str) -> Value {
    json!({ "content": media_content(media, schema) })
}

/// `{"<media>": {"schema": {"$ref": ...}}, ...}`.
fn media_content(media: &[&str], schema: &str) -> Value {
    let reference = json!({ "schema": { "$ref": format!("{REF_PREFIX}{schema}") } });
    Value::Object(media.iter().map(|m| ((*m).to_owned(), reference.clone())).collect())
}

/// A required path parameter.
fn path_param(name: &str, description: &str) -> Value {
    json!({
        "description": description,
        "in": "path",
        "name": name,
        "required": true,
        "schema": { "type": "string", "uniqueItems": true },
    })
}

/// A query parameter the API server understands, with its type and a short
/// description.
fn query_param(name: &str) -> Value {
    let (kind, description) = match name {
        "allowWatchBookmarks" => ("boolean", "allowWatchBookmarks requests watch events with type \"BOOKMARK\"."),
        "continue" => ("string", "The continue option should be set when retrieving more results from the server."),
        "dryRun" => (
            "string",
            "When present, indicates that modifications should not be persisted. Valid values are: - All: all dry run stages will be processed",
        ),
        "fieldManager" => {
            ("string", "fieldManager is a name associated with the actor or entity that is making these changes.")
        }
        "fieldSelector" => {
            ("string", "A selector to restrict the list of returned objects by their fields. Defaults to everything.")
        }
        "fieldValidation" => (
            "string",
            "fieldValidation instructs the server on how to handle objects in the request containing unknown or duplicate fields. Valid values are: - Ignore - Warn - Strict",
        ),
        "force" => (
            "boolean",
            "Force is going to \"force\" Apply requests. Force flag must be unset for non-apply patch requests.",
        ),
        "gracePeriodSeconds" => (
            "integer",
            "The duration in seconds before the object should be deleted. The value zero indicates delete immediately.",
        ),
        "ignoreStoreReadErrorWithClusterBreakingPotential" => (
            "boolean",
            "if set to true, it will trigger an unsafe deletion of the resource in case the normal deletion flow fails with a corrupt object error.",
        ),
        "labelSelector" => {
            ("string", "A selector to restrict the list of returned objects by their labels. Defaults to everything.")
        }
        "limit" => ("integer", "limit is a maximum number of responses to return for a list call."),
        "orphanDependents" => ("boolean", "Deprecated: please use the PropagationPolicy."),
        "pretty" => ("string", "If 'true', then the output is pretty printed."),
        "propagationPolicy" => (
            "string",
            "Whether and how garbage collection will be performed. Acceptable values are: 'Orphan', 'Background', 'Foreground'.",
        ),
        "resourceVersion" => {
            ("string", "resourceVersion sets a constraint on what resource versions a request may be served from.")
        }
        "resourceVersionMatch" => {
            ("string", "resourceVersionMatch determines how resourceVersion is applied to list calls.")
        }
        "sendInitialEvents" => (
            "boolean",
            "`sendInitialEvents=true` may be set together with `watch=true`; the watch stream begins with synthetic events for the current state.",
        ),
        "timeoutSeconds" => ("integer", "Timeout for the list/watch call."),
        "watch" => (
            "boolean",
            "Watch for changes to the described resources and return them as a stream of add, update, and remove notifications. Specify resourceVersion.",
        ),
        _ => ("string", ""),
    };
    json!({
        "description": description,
        "in": "query",
        "name": name,
        "schema": { "type": kind, "uniqueItems": true },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::time::Instant;

    // === utils ===

    /// Parses one group-version document.
    fn doc(openapi: &OpenApi, path: &str) -> Value {
        let bytes = openapi.group_version(path).expect("document exists");
        serde_json::from_slice(bytes).expect("document is JSON")
    }

    /// The built-in registry's documents.
    fn builtin() -> OpenApi {
        OpenApi::new(&Registry::default())
    }

    /// Every `$ref` in `value`.
    fn refs<'a>(value: &'a Value, out: &mut Vec<&'a str>) {
        match value {
            Value::Object(map) => {
                for (k, v) in map {
                    match (k.as_str(), v) {
                        ("$ref", Value::String(r)) => out.push(r),
                        _ => refs(v, out),
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|v| refs(v, out)),
            _ => {}
        }
    }

    /// Asserts every `$ref` of `doc` names one of its `components.schemas`.
    fn assert_refs_resolve(doc: &Value) {
        let schemas = doc["components"]["schemas"].as_object().expect("schemas");
        let mut found = Vec::new();
        refs(doc, &mut found);
        assert!(!found.is_empty());
        for r in found {
            let name = r.strip_prefix(REF_PREFIX).unwrap_or_else(|| panic!("foreign $ref {r}"));
            assert!(schemas.contains_key(name), "dangling $ref {r}");
        }
    }

    /// A custom resource type.
    fn crontab() -> ResourceType {
        ResourceType {
            group: "stable.example.com".to_owned(),
            version: "v1".to_owned(),
            plural: "crontabs".to_owned(),
            singular: "crontab".to_owned(),
            kind: "CronTab".to_owned(),
            namespaced: true,
            short_names: vec!["ct".to_owned()],
            categories: Vec::new(),
            subresources: vec![Subresource::Status, Subresource::Scale],
            builtin: None,
        }
    }

    // === tests ===

    #[test]
    fn index_lists_every_group_version_with_resolvable_urls() {
        let registry = Registry::default();
        registry.register(crontab());
        let openapi = OpenApi::new(&registry);
        let index: Value = serde_json::from_slice(openapi.index()).expect("index is JSON");
        let paths = index["paths"].as_object().expect("paths");
        for rt in registry.all() {
            let path = gv_path(&rt.group, &rt.version);
            let url = paths[&path]["serverRelativeURL"].as_str().expect("serverRelativeURL");
            let rest = url.strip_prefix("/openapi/v3/").expect("under /openapi/v3/");
            let (gv, hash) = rest.split_once("?hash=").expect("hash query");
            assert_eq!(gv, path);
            assert_eq!(openapi.hash(gv), Some(hash));
            assert_eq!(hash, digest(openapi.group_version(gv).expect("document")));
        }
        assert_eq!(paths.len(), 5, "core, apps, coordination, events, stable.example.com");
        assert!(openapi.group_version("apis/nope/v1").is_none());
        assert!(openapi.group_version("/api/v1").is_some());
    }

    #[test]
    fn apps_v1_has_deployment_schema_with_gvk() {
        let doc = doc(&builtin(), "apis/apps/v1");
        assert_eq!(doc["openapi"], "3.0.0");
        let deployment = &doc["components"]["schemas"]["io.k8s.api.apps.v1.Deployment"];
        assert_eq!(
            deployment["x-kubernetes-group-version-kind"],
            json!([{ "group": "apps", "kind": "Deployment", "version": "v1" }])
        );
        assert_eq!(deployment["properties"]["spec"]["$ref"], "#/components/schemas/io.k8s.api.apps.v1.DeploymentSpec");
        let list = &doc["components"]["schemas"]["io.k8s.api.apps.v1.DeploymentList"];
        assert_eq!(list["x-kubernetes-group-version-kind"][0]["kind"], "DeploymentList");
    }

    #[test]
    fn every_ref_resolves_in_every_document() {
        let registry = Registry::default();
        registry.register(crontab());
        let openapi = OpenApi::new(&registry);
        for path in ["api/v1", "apis/apps/v1", "apis/coordination.k8s.io/v1", "apis/events.k8s.io/v1"] {
            assert_refs_resolve(&doc(&openapi, path));
        }
        assert_refs_resolve(&doc(&openapi, "apis/stable.example.com/v1"));
    }

    #[test]
    fn deployment_patch_lists_field_validation() {
        let doc = doc(&builtin(), "apis/apps/v1");
        let patch = &doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"];
        let names: Vec<&str> =
            patch["parameters"].as_array().expect("parameters").iter().filter_map(|p| p["name"].as_str()).collect();
        for name in ["fieldValidation", "dryRun", "fieldManager", "force"] {
            assert!(names.contains(&name), "{name} missing from {names:?}");
        }
        assert_eq!(patch["x-kubernetes-action"], "patch");
        assert_eq!(
            patch["x-kubernetes-group-version-kind"],
            json!({ "group": "apps", "kind": "Deployment", "version": "v1" })
        );
        let content = patch["requestBody"]["content"].as_object().expect("content");
        for media in PATCH_MEDIA {
            assert!(content.contains_key(*media), "{media}");
        }
    }

    /// kubectl's `supportsQueryParamV3` stops at the first PATCH operation
    /// of a GVK, in map order; every one must list the parameters.
    #[test]
    fn every_write_operation_lists_write_parameters() {
        let openapi = builtin();
        for path in ["api/v1", "apis/apps/v1", "apis/coordination.k8s.io/v1", "apis/events.k8s.io/v1"] {
            let doc = doc(&openapi, path);
            for (p, item) in doc["paths"].as_object().expect("paths") {
                for method in ["post", "put", "patch"] {
                    let Some(op) = item.get(method) else { continue };
                    let names: Vec<&str> = op["parameters"]
                        .as_array()
                        .expect("parameters")
                        .iter()
                        .filter_map(|p| p["name"].as_str())
                        .collect();
                    for name in ["fieldValidation", "dryRun", "fieldManager"] {
                        assert!(names.contains(&name), "{method} {p} lacks {name}");
                    }
                    assert!(op["x-kubernetes-group-version-kind"].is_object(), "{method} {p}");
                }
            }
        }
    }

    #[test]
    fn pod_spec_containers_carry_patch_extensions() {
        let openapi = builtin();
        for path in ["api/v1", "apis/apps/v1"] {
            let doc = doc(&openapi, path);
            let containers = &doc["components"]["schemas"]["io.k8s.api.core.v1.PodSpec"]["properties"]["containers"];
            assert_eq!(containers["x-kubernetes-patch-strategy"], "merge", "{path}");
            assert_eq!(containers["x-kubernetes-patch-merge-key"], "name", "{path}");
            let env = &doc["components"]["schemas"]["io.k8s.api.core.v1.Container"]["properties"]["env"];
            assert_eq!(env["x-kubernetes-patch-merge-key"], "name", "{path}");
        }
    }

    /// Every entry of the patch table lands on a property of some document,
    /// so a misspelt definition or property name shows up here.
    #[test]
    fn every_patch_meta_entry_is_published() {
        let registry = Registry::default();
        let openapi = OpenApi::new(&registry);
        let docs: Vec<Value> =
            registry.all().iter().map(|rt| doc(&openapi, &gv_path(&rt.group, &rt.version))).collect();
        for (definition, property, strategy, merge_key) in PATCH_META {
            let published = docs.iter().any(|d| {
                let prop = &d["components"]["schemas"][*definition]["properties"][*property];
                prop.is_object()
                    && (strategy.is_empty() || prop["x-kubernetes-patch-strategy"] == *strategy)
                    && (merge_key.is_empty() || prop["x-kubernetes-patch-merge-key"] == *merge_key)
            });
            assert!(published, "{definition}.{property} is in no document");
        }
    }

    #[test]
    fn core_v1_paths_follow_the_registry() {
        let doc = doc(&builtin(), "api/v1");
        let paths = doc["paths"].as_object().expect("paths");
        assert_eq!(paths["/api/v1/namespaces/{namespace}/pods"]["get"]["operationId"], "listCoreV1NamespacedPod");
        assert_eq!(paths["/api/v1/pods"]["get"]["operationId"], "listCoreV1PodForAllNamespaces");
        assert_eq!(
            paths["/api/v1/namespaces/{namespace}/pods/{name}/status"]["patch"]["operationId"],
            "patchCoreV1NamespacedPodStatus"
        );
        assert_eq!(paths["/api/v1/namespaces/{name}/finalize"]["put"]["operationId"], "replaceCoreV1NamespaceFinalize");
        assert!(paths["/api/v1/namespaces/{name}/finalize"].get("patch").is_none());
        assert_eq!(paths["/api/v1/nodes/{name}"]["get"]["description"], "read the specified Node");
        assert_eq!(paths["/api/v1/namespaces/{namespace}/endpoints"]["post"]["description"], "create Endpoints");
        assert!(paths.contains_key("/api/v1/"));
        assert!(!paths.contains_key("/api/v1/configmaps/{name}"), "namespaced items only under a namespace");
        let schemas = doc["components"]["schemas"].as_object().expect("schemas");
        for name in [
            "io.k8s.api.core.v1.PodList",
            "io.k8s.apimachinery.pkg.apis.meta.v1.Status",
            "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions",
            "io.k8s.apimachinery.pkg.apis.meta.v1.Patch",
        ] {
            assert!(schemas.contains_key(name), "{name}");
        }
        assert!(!schemas.contains_key("io.k8s.api.autoscaling.v1.Scale"), "no core type has /scale");
        assert_eq!(schemas["io.k8s.apimachinery.pkg.util.intstr.IntOrString"]["format"], "int-or-string");
    }

    #[test]
    fn scale_subresource_uses_autoscaling_scale() {
        let doc = doc(&builtin(), "apis/apps/v1");
        let scale = &doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale"];
        assert_eq!(
            scale["put"]["requestBody"]["content"]["application/json"]["schema"]["$ref"],
            "#/components/schemas/io.k8s.api.autoscaling.v1.Scale"
        );
        assert_eq!(scale["patch"]["x-kubernetes-group-version-kind"]["group"], "autoscaling");
        let schema = &doc["components"]["schemas"]["io.k8s.api.autoscaling.v1.Scale"];
        assert_eq!(schema["x-kubernetes-group-version-kind"][0]["kind"], "Scale");
    }

    #[test]
    fn custom_resource_gets_permissive_schema() {
        let registry = Registry::default();
        registry.register(crontab());
        let doc = doc(&OpenApi::new(&registry), "apis/stable.example.com/v1");
        let schema = &doc["components"]["schemas"]["com.example.stable.v1.CronTab"];
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["x-kubernetes-preserve-unknown-fields"], true);
        assert_eq!(
            schema["x-kubernetes-group-version-kind"],
            json!([{ "group": "stable.example.com", "kind": "CronTab", "version": "v1" }])
        );
        let patch = &doc["paths"]["/apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}"]["patch"];
        assert_eq!(patch["operationId"], "patchStableExampleComV1NamespacedCronTab");
        assert_eq!(patch["tags"], json!(["stableExampleCom_v1"]));
        assert!(doc["components"]["schemas"].get("io.k8s.api.apps.v1.Deployment").is_none());
    }

    #[test]
    fn building_is_deterministic_and_timed() {
        let registry = Registry::default();
        let start = Instant::now();
        let a = OpenApi::new(&registry);
        let elapsed = start.elapsed();
        let b = OpenApi::new(&registry);
        assert_eq!(a.index(), b.index());
        eprintln!("OpenApi::new: {elapsed:?}; index {} bytes", a.index().len());
        for path in ["api/v1", "apis/apps/v1", "apis/coordination.k8s.io/v1", "apis/events.k8s.io/v1"] {
            let bytes = a.group_version(path).expect("document");
            assert_eq!(Some(bytes), b.group_version(path));
            eprintln!("{path}: {} bytes", bytes.len());
        }
    }
}
