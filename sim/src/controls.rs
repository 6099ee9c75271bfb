//! The simulator's own control endpoints, under `/sim/v1/` beside the
//! Kubernetes paths:
//!
//! | request | effect |
//! |---|---|
//! | `POST /sim/v1/nodes` | a node joins ([`NodeSpec`] JSON: `name`, optional `labels` and `taints`) |
//! | `DELETE /sim/v1/nodes/{name}` | the Node is deleted and its kubelet stopped |
//! | `POST /sim/v1/nodes/{name}/stop` | the node stops heartbeating; its pods stop progressing |
//! | `POST /sim/v1/nodes/{name}/start` | the node heartbeats again |
//! | `POST /sim/v1/compact` | history dropped: watches from older versions get 410 |
//! | `POST /sim/v1/watches/drop` | every open watch is closed |
//! | `POST /sim/v1/watches/{resource}/hold` | the watches of `resource` (`jobs`, `pods`) hold back the changes made from now on |
//! | `POST /sim/v1/watches/{resource}/release` | the held changes are sent, in order, and `resource` is held no longer |
//! | `GET/PUT/DELETE /sim/v1/faults` | read, set ([`FaultSpec`] JSON) or clear injected faults |
//! | `POST /sim/v1/restart` | every connection dropped, state kept |
//! | `GET /sim/v1/stats` | request counts by client (user agent), verb, group, resource, namespace and code |
//! | `POST /sim/v1/resources` | serve a new (custom) resource type ([`CustomResource`] JSON) |
//!
//! Each endpoint is a method of [`Controls`], the handle Rust callers get
//! from `Sim::controls`.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post};
use serde::{Deserialize, Serialize};
use serde_json::json;

use tokio::sync::watch;

use crate::api::Api;
use crate::faults::{FaultSpec, StatLine};
use crate::kubelet::{NodeError, NodeSpec, Nodes};
use crate::resources::{Builtin, ResourceType, VERBS, all_verbs};

/// The simulator's runtime controls: nodes, faults, history, connections.
/// Cheap to clone.
#[derive(Clone)]
pub struct Controls {
    api: Arc<Api>,
    nodes: Nodes,
    restarts: Arc<watch::Sender<u64>>,
}

impl Controls {
    /// The controls of a simulator serving `api`, with its kubelet
    /// stand-in's `nodes`, dropping connections when `restarts` is bumped.
    pub(crate) fn new(api: Arc<Api>, nodes: Nodes, restarts: Arc<watch::Sender<u64>>) -> Self {
        Controls { api, nodes, restarts }
    }

    fn node_exists(&self, name: &str) -> bool {
        let key = Api::type_key(&self.api.registry.builtin(Builtin::Node));
        self.api.store.get(&key, "", name).is_some()
    }

    /// Adds a Ready node, as a kubelet registering does: the well-known
    /// labels with `spec.labels` over them, `spec.taints`, a pod range and
    /// address of its own, and heartbeats from now on.
    pub fn add_node(&self, spec: &NodeSpec) -> Result<(), NodeError> {
        crate::kubelet::add_node(&self.api, &self.nodes, spec)
    }

    /// Deletes a node's Node object and stops its kubelet (its pods and
    /// Lease stay, for the garbage collectors of a controller manager).
    pub fn remove_node(&self, name: &str) -> Result<(), NodeError> {
        crate::kubelet::remove_node(&self.api, &self.nodes, name)
    }

    /// Stops a node's heartbeats and the progress of its pods.
    pub fn stop_node(&self, name: &str) -> Result<(), String> {
        if !self.node_exists(name) {
            return Err(format!("node {name:?} not found"));
        }
        self.nodes.stop(name);
        Ok(())
    }

    /// Starts a stopped node again.
    pub fn start_node(&self, name: &str) -> Result<(), String> {
        if !self.node_exists(name) {
            return Err(format!("node {name:?} not found"));
        }
        self.nodes.start(name);
        Ok(())
    }

    /// Drops the change history: watches from older versions get 410.
    pub fn compact(&self) {
        self.api.store.compact();
    }

    /// Closes every open watch.
    pub fn drop_watches(&self) {
        self.api.drop_watches();
    }

    /// Holds back the watch events of `resource` (a plural: `jobs`,
    /// `pods`, of every group) for the changes made from now on, until
    /// [`release_watches`](Self::release_watches): a watch lagging behind
    /// (see [`WatchHolds`](crate::faults::WatchHolds)).
    pub fn hold_watches(&self, resource: &str) {
        self.api.watch_holds.hold(resource, self.api.store.current_rv());
    }

    /// Sends the held watch events of `resource`, in order, and holds it
    /// no longer.
    pub fn release_watches(&self, resource: &str) {
        self.api.watch_holds.release(resource);
    }

    /// Sets the injected faults.
    pub fn set_faults(&self, spec: FaultSpec) -> Result<(), String> {
        self.api.faults.set(spec)
    }

    /// The injected faults in force.
    pub fn faults(&self) -> FaultSpec {
        self.api.faults.get()
    }

    /// Removes every injected fault.
    pub fn clear_faults(&self) {
        self.api.faults.clear();
    }

    /// Drops every connection, keeping all state, as an API server restart
    /// looks to clients.
    pub fn restart(&self) {
        self.restarts.send_modify(|r| *r += 1);
    }

    /// Request counts so far.
    pub fn stats(&self) -> Vec<StatLine> {
        self.api.stats.snapshot()
    }

    /// Serves a new resource type.
    pub fn register(&self, resource: &CustomResource) -> Result<(), String> {
        self.api.register(resource.resource_type()?);
        Ok(())
    }

    /// The API server state, for tests that inspect the store directly.
    pub fn api(&self) -> &Arc<Api> {
        &self.api
    }
}

/// A resource type to serve from now on, as `POST /sim/v1/resources` takes
/// it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CustomResource {
    /// API group (not empty).
    pub group: String,
    /// Version within the group.
    pub version: String,
    /// Plural, lower-case name.
    pub plural: String,
    /// Kind.
    pub kind: String,
    /// Whether objects live in namespaces.
    pub namespaced: bool,
    /// kubectl short names.
    #[serde(default)]
    pub short_names: Vec<String>,
    /// Verbs served, a subset of [`VERBS`] (all of them when absent), as an
    /// aggregated API may serve fewer than a CRD.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verbs: Option<Vec<String>>,
}

impl CustomResource {
    /// The served type.
    pub fn resource_type(&self) -> Result<ResourceType, String> {
        if self.group.is_empty() || self.version.is_empty() || self.plural.is_empty() || self.kind.is_empty() {
            return Err("group, version, plural and kind are required".into());
        }
        let verbs = self.verbs.clone().unwrap_or_else(all_verbs);
        if let Some(unknown) = verbs.iter().find(|v| !VERBS.contains(&v.as_str())) {
            return Err(format!("unknown verb {unknown:?}: kube-sim serves {}", VERBS.join(", ")));
        }
        Ok(ResourceType {
            group: self.group.clone(),
            version: self.version.clone(),
            plural: self.plural.clone(),
            singular: self.kind.to_lowercase(),
            kind: self.kind.clone(),
            namespaced: self.namespaced,
            short_names: self.short_names.clone(),
            categories: Vec::new(),
            subresources: Vec::new(),
            verbs,
            builtin: None,
        })
    }
}

/// The `/sim/v1` routes.
pub fn routes(controls: Controls) -> axum::Router {
    axum::Router::new()
        .route("/sim/v1/nodes", post(add_node))
        .route("/sim/v1/nodes/{name}", delete(remove_node))
        .route("/sim/v1/nodes/{name}/{action}", post(node_action))
        .route("/sim/v1/compact", post(compact))
        .route("/sim/v1/watches/drop", post(drop_watches))
        .route("/sim/v1/watches/{resource}/{action}", post(watch_action))
        .route("/sim/v1/faults", get(get_faults).put(put_faults).delete(delete_faults))
        .route("/sim/v1/restart", post(restart))
        .route("/sim/v1/stats", get(stats))
        .route("/sim/v1/resources", post(register))
        .with_state(Arc::new(controls))
}

type Ctl = State<Arc<Controls>>;

fn error(code: StatusCode, message: impl Into<String>) -> Response {
    (code, Json(json!({"error": message.into()}))).into_response()
}

async fn add_node(State(c): Ctl, body: axum::body::Bytes) -> Response {
    let spec: NodeSpec = match serde_json::from_slice(&body) {
        Ok(spec) => spec,
        Err(e) => return error(StatusCode::BAD_REQUEST, format!("invalid node: {e}")),
    };
    node_result(c.add_node(&spec), StatusCode::CREATED)
}

async fn remove_node(State(c): Ctl, Path(name): Path<String>) -> Response {
    node_result(c.remove_node(&name), StatusCode::NO_CONTENT)
}

/// The answer to a node being added or removed: `ok`, or the error's code.
fn node_result(result: Result<(), NodeError>, ok: StatusCode) -> Response {
    let Err(e) = result else { return ok.into_response() };
    let code = match e {
        NodeError::Exists(_) => StatusCode::CONFLICT,
        NodeError::NotFound(_) => StatusCode::NOT_FOUND,
        NodeError::Invalid(_) => StatusCode::BAD_REQUEST,
    };
    error(code, e.to_string())
}

async fn node_action(State(c): Ctl, Path((name, action)): Path<(String, String)>) -> Response {
    let result = match action.as_str() {
        "stop" => c.stop_node(&name),
        "start" => c.start_node(&name),
        other => return error(StatusCode::NOT_FOUND, format!("unknown node action {other:?}: stop or start")),
    };
    match result {
        Ok(()) => StatusCode::NO_CONTENT.into_response(),
        Err(e) => error(StatusCode::NOT_FOUND, e),
    }
}

async fn compact(State(c): Ctl) -> StatusCode {
    c.compact();
    StatusCode::NO_CONTENT
}

async fn drop_watches(State(c): Ctl) -> StatusCode {
    c.drop_watches();
    StatusCode::NO_CONTENT
}

async fn watch_action(State(c): Ctl, Path((resource, action)): Path<(String, String)>) -> Response {
    match action.as_str() {
        "hold" => c.hold_watches(&resource),
        "release" => c.release_watches(&resource),
        other => return error(StatusCode::NOT_FOUND, format!("unknown watch action {other:?}: hold or release")),
    }
    StatusCode::NO_CONTENT.into_response()
}

async fn get_faults(State(c): Ctl) -> Json<FaultSpec> {
    Json(c.faults())
}

async fn put_faults(State(c): Ctl, body: axum::body::Bytes) -> Response {
    let spec: FaultSpec = match serde_json::from_slice(&body) {
        Ok(spec) => spec,
        Err(e) => return error(StatusCode::BAD_REQUEST, format!("invalid fault specification: {e}")),
    };
    match c.set_faults(spec) {
        Ok(()) => StatusCode::NO_CONTENT.into_response(),
        Err(e) => error(StatusCode::BAD_REQUEST, e),
    }
}

async fn delete_faults(State(c): Ctl) -> StatusCode {
    c.clear_faults();
    StatusCode::NO_CONTENT
}

async fn restart(State(c): Ctl) -> StatusCode {
    c.restart();
    StatusCode::NO_CONTENT
}

async fn stats(State(c): Ctl) -> Response {
    Json(json!({"requests": c.stats()})).into_response()
}

async fn register(State(c): Ctl, body: axum::body::Bytes) -> Response {
    let resource: CustomResource = match serde_json::from_slice(&body) {
        Ok(r) => r,
        Err(e) => return error(StatusCode::BAD_REQUEST, format!("invalid resource: {e}")),
    };
    match c.register(&resource) {
        Ok(()) => StatusCode::CREATED.into_response(),
        Err(e) => error(StatusCode::BAD_REQUEST, e),
    }
}
