//! The Kubernetes REST API over the store: routing, content negotiation and
//! the verbs.
//!
//! A request path is parsed into a `Route`; resource requests become a
//! [`Target`] (type, namespace, name, subresource) plus a verb, and go to
//! `read.rs` (get, list), `watch.rs`, `write.rs` (create, update, patch) or
//! `delete.rs`. Discovery and OpenAPI documents are in `discovery.rs` and
//! `crate::openapi`. Every answer that is not a success is an
//! [`ApiError`](crate::error::ApiError), serialised as a `Status`.

mod delete;
mod discovery;
mod meta;
mod read;
mod snapshots;
mod watch;
mod write;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use serde_json::Value;

use crate::error::{ApiError, ApiResult};
use crate::faults::{Faults, RequestKind, Stats};
use crate::openapi::OpenApi;
use crate::resources::{Registry, ResourceType, Subresource};
use crate::selectors::{FieldSelector, LabelSelector, Selector};
use crate::store::{Store, TypeKey};
use crate::table::IncludeObject;
pub use meta::{is_terminating, now_rfc3339};

/// The version kube-sim reports at `/version`, matching the k8s-openapi
/// schemas it validates against.
pub const KUBERNETES_VERSION: &str = "v1.33.0";

/// Tunables of the API layer.
#[derive(Debug, Clone)]
pub struct ApiConfig {
    /// How often an idle watch that asked for bookmarks gets one.
    pub bookmark_interval: Duration,
    /// Longest a watch stays open when the client gives no timeoutSeconds.
    pub max_watch: Duration,
}

impl Default for ApiConfig {
    fn default() -> Self {
        ApiConfig { bookmark_interval: Duration::from_secs(30), max_watch: Duration::from_secs(1800) }
    }
}

/// The API server's state, shared by every request.
pub struct Api {
    /// Served types.
    pub registry: Registry,
    /// Objects.
    pub store: Store,
    /// Tunables.
    pub config: ApiConfig,
    /// Injected failures.
    pub faults: Faults,
    /// Request counts by client, verb, group, resource, namespace and code.
    pub stats: Stats,
    /// Unfinished paginated lists (consistent pages).
    snapshots: snapshots::Snapshots,
    /// Bumped to close every open watch (`/sim/v1/watches/drop`).
    pub watch_epoch: tokio::sync::watch::Sender<u64>,
    /// The OpenAPI documents, built on first use (they take a while) and
    /// again after a type is registered.
    openapi: Mutex<Option<Arc<OpenApi>>>,
}

impl Api {
    /// An API over `store` serving `registry`'s types.
    pub fn new(registry: Registry, store: Store, config: ApiConfig) -> Self {
        Api {
            registry,
            store,
            config,
            faults: Faults::default(),
            stats: Stats::default(),
            snapshots: snapshots::Snapshots::default(),
            watch_epoch: tokio::sync::watch::Sender::new(0),
            openapi: Mutex::new(None),
        }
    }

    /// The OpenAPI documents of the types served now.
    pub fn openapi(&self) -> Arc<OpenApi> {
        let mut cached = self.openapi.lock().unwrap_or_else(|p| p.into_inner());
        cached.get_or_insert_with(|| Arc::new(OpenApi::new(&self.registry))).clone()
    }

    /// Serves a new type from now on.
    pub fn register(&self, rt: ResourceType) {
        self.registry.register(rt);
        *self.openapi.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }

    /// Closes every open watch; clients resume from their last version.
    pub fn drop_watches(&self) {
        self.watch_epoch.send_modify(|e| *e += 1);
    }

    /// The store key of a type.
    pub fn type_key(rt: &ResourceType) -> TypeKey {
        Arc::from(format!("{}/{}", rt.group, rt.plural))
    }
}

/// What a path names.
#[derive(Debug)]
enum Route {
    Version,
    CoreVersions,
    Groups,
    Group(String),
    GroupVersion(String, String),
    OpenApiIndex,
    OpenApiDoc(String),
    Health,
    Resource(Target),
}

/// The object or collection a resource request names.
#[derive(Debug, Clone)]
pub struct Target {
    /// Its type.
    pub rt: Arc<ResourceType>,
    /// The namespace in the path, for namespaced types.
    pub namespace: Option<String>,
    /// The object's name; `None` for the collection.
    pub name: Option<String>,
    /// The subresource, if any.
    pub sub: Option<Subresource>,
}

impl Target {
    /// The namespace for store keys ("" for cluster-scoped types).
    pub fn ns(&self) -> &str {
        self.namespace.as_deref().unwrap_or("")
    }

    /// The store key of the type.
    pub fn key(&self) -> TypeKey {
        Api::type_key(&self.rt)
    }

    /// The verb and resource names used in stats and fault matching.
    fn resource_label(&self) -> String {
        match self.sub {
            Some(sub) => format!("{}/{}", self.rt.plural, sub.segment()),
            None => self.rt.plural.clone(),
        }
    }
}

fn route(registry: &Registry, path: &str) -> ApiResult<Route> {
    let segments: Vec<&str> = path.trim_matches('/').split('/').filter(|s| !s.is_empty()).collect();
    match segments.as_slice() {
        ["version"] => Ok(Route::Version),
        ["healthz" | "livez" | "readyz"] => Ok(Route::Health),
        ["api"] => Ok(Route::CoreVersions),
        ["apis"] => Ok(Route::Groups),
        ["openapi", "v3"] => Ok(Route::OpenApiIndex),
        ["openapi", "v3", rest @ ..] => Ok(Route::OpenApiDoc(rest.join("/"))),
        ["api", "v1"] => Ok(Route::GroupVersion(String::new(), "v1".into())),
        ["apis", group] => Ok(Route::Group((*group).to_owned())),
        ["apis", group, version] => Ok(Route::GroupVersion((*group).to_owned(), (*version).to_owned())),
        ["api", "v1", rest @ ..] => resource_route(registry, "", "v1", rest, path),
        ["apis", group, version, rest @ ..] => resource_route(registry, group, version, rest, path),
        _ => Err(ApiError::no_route(path)),
    }
}

fn resource_route(registry: &Registry, group: &str, version: &str, rest: &[&str], path: &str) -> ApiResult<Route> {
    let find = |plural: &str| registry.find(group, version, plural).ok_or_else(|| ApiError::no_route(path));
    let namespaced_type = |plural: &str| registry.find(group, version, plural).filter(|t| t.namespaced);
    let sub = |seg: &str, rt: &ResourceType| {
        Subresource::from_segment(seg).filter(|s| rt.has(*s)).ok_or_else(|| ApiError::no_route(path))
    };
    let target = |rt: Arc<ResourceType>, namespace: Option<&str>, name: Option<&str>, sub: Option<Subresource>| {
        Ok(Route::Resource(Target { rt, namespace: namespace.map(str::to_owned), name: name.map(str::to_owned), sub }))
    };
    match rest {
        ["namespaces", ns, plural, tail @ ..] if namespaced_type(plural).is_some() => {
            let rt = find(plural)?;
            match tail {
                [] => target(rt, Some(ns), None, None),
                [name] => target(rt, Some(ns), Some(name), None),
                [name, s] => {
                    let s = sub(s, &rt)?;
                    target(rt, Some(ns), Some(name), Some(s))
                }
                _ => Err(ApiError::no_route(path)),
            }
        }
        [plural] => target(find(plural)?, None, None, None),
        [plural, name] => {
            let rt = find(plural)?;
            if rt.namespaced {
                return Err(ApiError::no_route(path));
            }
            target(rt, None, Some(name), None)
        }
        [plural, name, s] => {
            let rt = find(plural)?;
            if rt.namespaced {
                return Err(ApiError::no_route(path));
            }
            let s = sub(s, &rt)?;
            target(rt, None, Some(name), Some(s))
        }
        _ => Err(ApiError::no_route(path)),
    }
}

/// The parts of an HTTP request the handlers read.
pub struct Request {
    /// HTTP method.
    pub method: Method,
    /// Path without the query.
    pub path: String,
    /// Query parameters (last value wins).
    pub query: HashMap<String, String>,
    /// Request headers.
    pub headers: HeaderMap,
    /// The whole body.
    pub body: Bytes,
}

impl Request {
    /// A query parameter.
    pub fn param(&self, name: &str) -> Option<&str> {
        self.query.get(name).map(String::as_str)
    }

    /// Whether a boolean query parameter is set (`true` or `1`).
    pub fn flag(&self, name: &str) -> bool {
        matches!(self.param(name), Some("true" | "1"))
    }

    /// Label and field selectors of a list, watch or deletecollection.
    pub fn selector(&self, kind: &str) -> ApiResult<Selector> {
        let labels = LabelSelector::parse(self.param("labelSelector").unwrap_or(""))
            .map_err(|e| ApiError::bad_request(e.to_string()))?;
        let fields = FieldSelector::parse(self.param("fieldSelector").unwrap_or(""), kind)
            .map_err(|e| ApiError::bad_request(e.to_string()))?;
        Ok(Selector { labels, fields })
    }

    /// How the client wants objects rendered, from `Accept`.
    pub fn representation(&self) -> ApiResult<Representation> {
        let accept = self.headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()).unwrap_or("");
        if accept.is_empty() {
            return Ok(Representation::Object);
        }
        for choice in accept.split(',') {
            let mut parts = choice.split(';').map(str::trim);
            let media = parts.next().unwrap_or("");
            if !matches!(media, "application/json" | "application/*" | "*/*" | "application/yaml") {
                continue;
            }
            let params: HashMap<&str, &str> = parts.filter_map(|p| p.split_once('=')).collect();
            match (params.get("as").copied(), params.get("g").copied(), params.get("v").copied()) {
                (None, _, _) => return Ok(Representation::Object),
                (Some("Table"), Some("meta.k8s.io"), Some("v1")) => {
                    let include = IncludeObject::parse(self.param("includeObject").unwrap_or(""))
                        .map_err(|e| ApiError::bad_request(e.to_string()))?;
                    return Ok(Representation::Table(include));
                }
                (Some("PartialObjectMetadata" | "PartialObjectMetadataList"), Some("meta.k8s.io"), Some("v1")) => {
                    return Ok(Representation::Metadata);
                }
                _ => continue,
            }
        }
        Err(ApiError::not_acceptable(format!(
            "only the following media types are accepted: application/json, application/yaml (asked: {accept})"
        )))
    }
}

/// How objects are rendered in a response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Representation {
    /// As stored.
    Object,
    /// As a `meta.k8s.io/v1` Table (server-side printing).
    Table(IncludeObject),
    /// As `PartialObjectMetadata` (metadata-only informers).
    Metadata,
}

/// Answers one HTTP request to the Kubernetes API paths.
pub async fn handle(api: Arc<Api>, req: Request) -> Response {
    let route = match route(&api.registry, &req.path) {
        Ok(route) => route,
        Err(e) => return e.into_response(),
    };
    let kind = request_kind(&req, &route);
    if let Some(err) = api.faults.inject(&kind.verb, &kind.resource).await {
        api.stats.record(&kind, err.code);
        return err.into_response();
    }
    let response = match dispatch(&api, &req, route, &kind.verb).await {
        Ok(response) => response,
        Err(err) => err.into_response(),
    };
    api.stats.record(&kind, response.status().as_u16());
    response
}

/// Who asked for what, as stats and fault rules see a request.
fn request_kind(req: &Request, route: &Route) -> RequestKind {
    let user_agent = req.headers.get(header::USER_AGENT).and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
    let (verb, resource) = verb_and_resource(req, route);
    let (group, namespace) = match route {
        Route::Resource(t) => (t.rt.group.clone(), t.namespace.clone().unwrap_or_default()),
        _ => (String::new(), String::new()),
    };
    RequestKind { user_agent, verb, group, resource, namespace }
}

fn verb_and_resource(req: &Request, route: &Route) -> (String, String) {
    let Route::Resource(t) = route else {
        return (req.method.as_str().to_lowercase(), req.path.clone());
    };
    let verb = match (&req.method, t.name.is_some()) {
        (&Method::GET, false) if req.flag("watch") => "watch",
        (&Method::GET, false) => "list",
        (&Method::GET, true) => "get",
        (&Method::POST, _) => "create",
        (&Method::PUT, _) => "update",
        (&Method::PATCH, _) => "patch",
        (&Method::DELETE, false) => "deletecollection",
        (&Method::DELETE, true) => "delete",
        (m, _) => return (m.as_str().to_lowercase(), t.resource_label()),
    };
    (verb.to_owned(), t.resource_label())
}

async fn dispatch(api: &Arc<Api>, req: &Request, route: Route, verb: &str) -> ApiResult<Response> {
    match route {
        Route::Version => Ok(json_response(StatusCode::OK, &discovery::version())),
        Route::Health => Ok((StatusCode::OK, "ok").into_response()),
        Route::CoreVersions => Ok(json_response(StatusCode::OK, &discovery::core_versions())),
        Route::Groups => Ok(json_response(StatusCode::OK, &discovery::groups(&api.registry))),
        Route::Group(g) => discovery::group(&api.registry, &g).map(|v| json_response(StatusCode::OK, &v)),
        Route::GroupVersion(g, v) => {
            discovery::resources(&api.registry, &g, &v).map(|v| json_response(StatusCode::OK, &v))
        }
        Route::OpenApiIndex => {
            let api = api.clone();
            let bytes = tokio::task::spawn_blocking(move || Bytes::copy_from_slice(api.openapi().index()))
                .await
                .map_err(|e| ApiError::internal(e.to_string()))?;
            Ok(bytes_response(StatusCode::OK, bytes))
        }
        Route::OpenApiDoc(path) => {
            let api = api.clone();
            let doc =
                tokio::task::spawn_blocking(move || api.openapi().group_version(&path).map(Bytes::copy_from_slice))
                    .await
                    .map_err(|e| ApiError::internal(e.to_string()))?;
            doc.map(|b| bytes_response(StatusCode::OK, b)).ok_or_else(|| ApiError::no_route(&req.path))
        }
        Route::Resource(target) if target.sub.is_none() && !target.rt.serves(verb) => {
            Err(ApiError::method_not_allowed(format!(
                "the server does not allow this method on the requested resource ({} {})",
                req.method, req.path
            )))
        }
        Route::Resource(target) => match verb {
            "get" => read::get(api, req, &target),
            "list" => read::list(api, req, &target),
            "watch" => watch::watch(api, req, &target),
            "create" if target.name.is_none() => write::create(api, req, &target),
            "update" if target.name.is_some() => write::update(api, req, &target),
            "patch" if target.name.is_some() => write::patch(api, req, &target),
            "delete" if target.sub.is_none() => delete::delete(api, req, &target),
            "deletecollection" => delete::delete_collection(api, req, &target),
            _ => Err(ApiError::method_not_allowed(format!(
                "the server does not allow this method on the requested resource ({} {})",
                req.method, req.path
            ))),
        },
    }
}

/// A JSON response.
pub fn json_response(code: StatusCode, value: &Value) -> Response {
    bytes_response(code, Bytes::from(value.to_string()))
}

/// A response whose body is already-encoded JSON.
pub fn bytes_response(code: StatusCode, body: Bytes) -> Response {
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = code;
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}
