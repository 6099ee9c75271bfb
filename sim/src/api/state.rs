//! The API server's state, shared by every request: the served types, the
//! store, the injected faults and request stats, the cluster IP
//! allocator's lock, the snapshots of unfinished paginated lists, the
//! watch epoch and holds, and the OpenAPI documents.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::snapshots::Snapshots;
use crate::admission::AdmissionConfig;
use crate::clusterip::{ClusterIps, ServiceCidr};
use crate::faults::{Faults, Stats, WatchHolds};
use crate::openapi::OpenApi;
use crate::resources::{Registry, ResourceType};
use crate::store::{Store, TypeKey};

/// Tunables of the API layer.
#[derive(Debug, Clone)]
pub struct ApiConfig {
    /// How often an idle watch that asked for bookmarks gets one.
    pub bookmark_interval: Duration,
    /// Longest a watch stays open when the client gives no timeoutSeconds.
    pub max_watch: Duration,
    /// Where Services' cluster IPs come from (kube-apiserver's
    /// `--service-cluster-ip-range`, single-stack).
    pub service_cluster_ip_range: ServiceCidr,
    /// Which admission plugins run.
    pub admission: AdmissionConfig,
}

impl Default for ApiConfig {
    fn default() -> Self {
        ApiConfig {
            bookmark_interval: Duration::from_secs(30),
            max_watch: Duration::from_secs(1800),
            service_cluster_ip_range: ServiceCidr::DEFAULT,
            admission: AdmissionConfig::default(),
        }
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
    /// The service range, and the lock Service writes take to allocate
    /// from it.
    pub cluster_ips: ClusterIps,
    /// Unfinished paginated lists (consistent pages).
    pub(super) snapshots: Snapshots,
    /// Bumped to close every open watch (`/sim/v1/watches/drop`).
    pub watch_epoch: tokio::sync::watch::Sender<u64>,
    /// Resources whose watch events are held back
    /// (`/sim/v1/watches/{resource}/hold`).
    pub watch_holds: WatchHolds,
    /// The OpenAPI documents, built on first use (they take a while) and
    /// again after a type is registered.
    openapi: Mutex<Option<Arc<OpenApi>>>,
}

impl Api {
    /// An API over `store` serving `registry`'s types.
    pub fn new(registry: Registry, store: Store, config: ApiConfig) -> Self {
        let range = config.service_cluster_ip_range;
        Api {
            registry,
            store,
            config,
            faults: Faults::default(),
            stats: Stats::default(),
            cluster_ips: ClusterIps::new(range),
            snapshots: Snapshots::default(),
            watch_epoch: tokio::sync::watch::Sender::new(0),
            watch_holds: WatchHolds::default(),
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
