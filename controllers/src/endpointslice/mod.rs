//! The EndpointSlice controller's decisions (upstream
//! `pkg/controller/endpointslice/` and `staging/src/k8s.io/endpointslice/`):
//! every Service with a selector has EndpointSlices listing the pods it
//! selects, one set per address family of the Service, at most
//! `--max-endpoints-per-slice` endpoints each, labelled
//! `kubernetes.io/service-name` and
//! `endpointslice.kubernetes.io/managed-by: endpointslice-controller.k8s.io`
//! and controlled by the Service.
//!
//! A plan-returning core: [`reconcile`] takes the cached Service, its pods
//! and its slices and answers the slices to create, update and delete
//! ([`Reconciled`]). What the controller remembers between syncs is kept
//! in plain state the driver locks: the generations it wrote
//! ([`EndpointSliceTracker`]), the trigger times it reported
//! ([`TriggerTimeTracker`]) and the metrics' totals ([`MetricsCache`]).
//!
//! # Layout, by phase as upstream splits it
//! - `endpoints`: pods to endpoints (`utils.go`, `util/`): conditions,
//!   addresses per family, named ports, hostname, node and zone;
//! - `slices`: the slices themselves: labels, owner, placeholder, trigger
//!   time, the slice to fill;
//! - `reconciler`: a Service's slices per address type and set of ports
//!   (`reconciler.go`), `packing` the endpoints of one set into slices;
//! - `trafficdist`: hints from `trafficDistribution`;
//! - `topologycache`: hints for `service.kubernetes.io/topology-mode: Auto`
//!   (zones weighed by their nodes' CPU);
//! - `tracker`: the EndpointSlice tracker (stale caches);
//! - `trigger_time`: the last-change-trigger-time tracker;
//! - `metrics_cache`: the gauges' totals;

mod endpoints;
mod metrics_cache;
mod packing;
mod reconciler;
mod slices;
mod topologycache;
mod tracker;
mod trafficdist;
mod trigger_time;

#[cfg(test)]
mod tests;

pub use endpoints::{AddressType, LABEL_TOPOLOGY_ZONE};
pub use metrics_cache::{MetricsCache, Totals};
pub use reconciler::{Changes, Efficiency, Input, Reconciled, reconcile, valid_traffic_distribution};
pub use slices::{
    ANNOTATION_TOPOLOGY_MODE, CONTROLLER_QUALIFIED_NAME, LABEL_HEADLESS, LABEL_MANAGED_BY, LABEL_SERVICE_NAME,
    managed_by_controller, service_key as slice_service_key,
};
pub use topologycache::{HintEvent, TopologyCache, messages as hint_messages};
pub use tracker::EndpointSliceTracker;
pub use trigger_time::TriggerTimeTracker;

/// The smallest `--max-endpoints-per-slice` (upstream's validation).
pub const MIN_ENDPOINTS_PER_SLICE: i32 = 1;

/// The largest `--max-endpoints-per-slice`.
pub const MAX_ENDPOINTS_PER_SLICE: i32 = 1000;
