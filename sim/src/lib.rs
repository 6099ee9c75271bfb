//! kube-sim: an in-memory Kubernetes API server, with a kubelet and
//! scheduler stand-in and fault controls, for testing kcm-rs.
//!
//! It speaks the Kubernetes REST protocol over plain HTTP on loopback,
//! closely enough that kubectl and kube-rs clients work against it
//! unchanged: discovery, OpenAPI v3, get/list/watch with selectors and
//! pagination, create/update/patch/delete with the API server's rules,
//! status and scale subresources, server-side printing (Tables), namespace
//! lifecycle, and errors as `Status` objects.
//!
//! # Layout
//! - `resources`: the table of served types (adding a type is an entry);
//! - `store`: objects as JSON bytes, versions, change history, watch fan-out;
//! - `error`: refusals as `Status` objects (a leaf every layer may use);
//! - `object`: the common metadata fields of stored objects (a leaf);
//! - `api/`: routing and the verbs; `strategy/`: what a write makes of an
//!   object (server-owned metadata, subresources, generation, deletion);
//!   `selectors`, `patch`, `table`, `openapi`, `defaults`, `validation`,
//!   `typed`, `omitempty`, `protobuf`, `admission`: the API server's rules,
//!   one concept each;
//! - `clusterip`: Service cluster IP allocation from the service range;
//! - `kubelet`: the kubelet and scheduler stand-in;
//! - `legacytokentracking`: the ConfigMap recording since when legacy
//!   token use is tracked;
//! - `faults`, `controls`: injected failures, request stats and the
//!   `/sim/v1` control endpoints;
//! - `server`: the HTTP listener;
//! - `testing`: what tests against kube-sim share (waiting on its change
//!   feed with a deadline, a kubeconfig, the kubectl runners).
//!
//! # Use from Rust
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let sim = kube_sim::Sim::start(kube_sim::SimConfig::default()).await?;
//! let client = sim.client()?;
//! # let _ = client;
//! sim.controls().stop_node("node-1")?;
//! # Ok(()) }
//! ```

pub mod admission;
pub mod api;
pub mod clusterip;
pub mod controls;
pub mod defaults;
pub mod error;
pub mod faults;
pub mod kubelet;
pub mod legacytokentracking;
pub mod object;
pub mod omitempty;
pub mod openapi;
pub mod patch;
pub mod protobuf;
pub mod resources;
pub mod selectors;
pub mod server;
pub mod store;
pub mod strategy;
pub mod table;
pub mod testing;
pub mod typed;
pub mod validation;
pub mod writer;

pub use controls::Controls;

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

use axum::extract::Request as HttpRequest;
use axum::response::{IntoResponse, Response};
use http_body_util::BodyExt;
use tokio::net::TcpListener;
use tokio::sync::watch;

use crate::api::{Api, ApiConfig};
use crate::error::ApiError;
use crate::kubelet::KubeletConfig;
use crate::resources::Registry;
use crate::store::Store;

/// Largest request body accepted.
const MAX_BODY: usize = 16 * 1024 * 1024;

/// How to start a simulator.
#[derive(Debug, Clone)]
pub struct SimConfig {
    /// Nodes created at start (`node-1` ..).
    pub nodes: usize,
    /// Kubelet stand-in tunables.
    pub kubelet: KubeletConfig,
    /// API tunables.
    pub api: ApiConfig,
    /// Changes kept for watches to resume from.
    pub history: usize,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            nodes: 3,
            kubelet: KubeletConfig::default(),
            api: ApiConfig::default(),
            history: store::DEFAULT_HISTORY,
        }
    }
}

/// Why a simulator could not start or be reached.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The address could not be bound.
    #[error("cannot listen on {addr}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A kube client could not be built for the simulator.
    #[error("cannot build a kube client")]
    Client(#[source] kube::Error),
    /// The kubeconfig could not be written.
    #[error("cannot write the kubeconfig to {path}")]
    Kubeconfig {
        /// The file.
        path: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
}

/// A running simulator. Dropping it shuts it down.
pub struct Sim {
    addr: SocketAddr,
    controls: Controls,
    shutdown: watch::Sender<bool>,
}

impl Sim {
    /// Starts a simulator on a free loopback port.
    pub async fn start(config: SimConfig) -> Result<Sim, Error> {
        Sim::start_on(SocketAddr::from(([127, 0, 0, 1], 0)), config).await
    }

    /// Starts a simulator on `addr` (port 0 picks a free one).
    pub async fn start_on(addr: SocketAddr, config: SimConfig) -> Result<Sim, Error> {
        let listener = TcpListener::bind(addr).await.map_err(|source| Error::Bind { addr, source })?;
        let addr = listener.local_addr().map_err(|source| Error::Bind { addr, source })?;
        let api = Arc::new(Api::new(Registry::default(), Store::new(config.history), config.api.clone()));
        kubelet::seed(&api, config.nodes);
        legacytokentracking::seed(&api);
        let (nodes, _kubelet_task) = kubelet::spawn(api.clone(), config.kubelet.clone());
        let (restarts, restart_rx) = watch::channel(0u64);
        let (shutdown, shutdown_rx) = watch::channel(false);
        let controls = Controls::new(api.clone(), nodes, Arc::new(restarts));
        let kube_api = api.clone();
        let app = controls::routes(controls.clone()).fallback(move |req: HttpRequest| {
            let api = kube_api.clone();
            async move { kubernetes(api, req).await }
        });
        tokio::spawn(server::serve(listener, app, restart_rx, shutdown_rx));
        Ok(Sim { addr, controls, shutdown })
    }

    /// The address served.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The base URL (`http://127.0.0.1:PORT`).
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every change the simulator stores from now on, of every type: what a
    /// test waiting on a condition wakes up on.
    pub fn changes(&self) -> tokio::sync::broadcast::Receiver<Arc<store::Change>> {
        self.controls.api().store.subscribe()
    }

    /// The runtime controls.
    pub fn controls(&self) -> &Controls {
        &self.controls
    }

    /// A kube client for the simulator.
    pub fn client(&self) -> Result<kube::Client, Error> {
        let url: http::Uri =
            self.url().parse().unwrap_or_else(|e| unreachable!("http://<socket address> is always a valid URI: {e}"));
        kube::Client::try_from(kube::Config::new(url)).map_err(Error::Client)
    }

    /// A kubeconfig (YAML) naming the simulator as context `kube-sim`.
    pub fn kubeconfig(&self) -> String {
        kubeconfig_yaml(&self.url())
    }

    /// Writes the kubeconfig to `path` atomically (a temporary file renamed
    /// into place), so a reader never sees half of it.
    pub fn write_kubeconfig(&self, path: &Path) -> Result<(), Error> {
        let err = |source| Error::Kubeconfig { path: path.display().to_string(), source };
        let tmp = path.with_extension("tmp");
        std::fs::write(&tmp, self.kubeconfig()).map_err(err)?;
        std::fs::rename(&tmp, path).map_err(err)
    }
}

impl Drop for Sim {
    fn drop(&mut self) {
        let _ = self.shutdown.send(true);
        self.controls.restart();
    }
}

/// The kubeconfig for a server URL.
pub fn kubeconfig_yaml(url: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: kube-sim\n  cluster:\n    server: {url}\n\
         contexts:\n- name: kube-sim\n  context:\n    cluster: kube-sim\n    user: kube-sim\n    namespace: default\n\
         current-context: kube-sim\nusers:\n- name: kube-sim\n  user: {{}}\npreferences: {{}}\n"
    )
}

/// Answers a request to the Kubernetes API paths.
async fn kubernetes(api: Arc<Api>, req: HttpRequest) -> Response {
    let (parts, body) = req.into_parts();
    let body = match http_body_util::Limited::new(body, MAX_BODY).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(e) => return ApiError::bad_request(format!("cannot read the request body: {e}")).into_response(),
    };
    let query = parts
        .uri
        .query()
        .map(|q| serde_urlencoded::from_str::<Vec<(String, String)>>(q).unwrap_or_default())
        .unwrap_or_default()
        .into_iter()
        .collect();
    let request =
        api::Request { method: parts.method, path: parts.uri.path().to_owned(), query, headers: parts.headers, body };
    api::handle(api, request).await
}
