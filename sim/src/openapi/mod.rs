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

use crate::resources::{Registry, ResourceType, Subresource};

mod paths;
mod schemas;
#[cfg(test)]
mod tests;

use paths::{Operations, resources_path};
pub(crate) use schemas::define_builtin;
use schemas::{
    apply_patch_meta, custom_definition_name, custom_schema, define, fix_scalar_unions, gvk, list_schema, set_gvk,
    type_meta,
};

/// The server version in each document's `info`.
const KUBERNETES_VERSION: &str = "v1.33.0";

/// Where `$ref`s point: `components.schemas` of the same document.
const REF_PREFIX: &str = "#/components/schemas/";

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
