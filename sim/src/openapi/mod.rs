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

use k8s_openapi::api::autoscaling::v1 as autoscaling;
use k8s_openapi::apimachinery::pkg::apis::meta::v1 as meta;
use schemars::generate::SchemaSettings;
use schemars::transform::ReplaceBoolSchemas;
use serde_json::{Map, Value, json};

use crate::api::KUBERNETES_VERSION;
use crate::resources::{Registry, ResourceType, Subresource};

pub(crate) mod definitions;
mod naming;
mod parameters;
mod paths;
mod schemas;

use definitions::{define, define_builtin};
use paths::{Operations, resources_path};
use schemas::{
    MetaNames, apply_patch_meta, custom_definition_name, custom_schema, fix_scalar_unions, gvk, list_schema, set_gvk,
    type_meta,
};

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

#[cfg(test)]
mod tests {
    //! Tests of the OpenAPI v3 index and documents: what `kubectl explain`,
    //! field validation and client-side apply look for.

    use std::time::Instant;

    use crate::patch::PATCH_META;

    use super::paths::PATCH_MEDIA;
    use super::schemas::REF_PREFIX;
    use super::*;

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
            verbs: crate::resources::all_verbs(),
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
        assert_eq!(
            paths.len(),
            11,
            "core, apps, batch, certificates, coordination, discovery, events, policy, rbac, storage, \
             stable.example.com"
        );
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
