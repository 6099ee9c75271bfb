//! The EndpointSlice mirroring controller's decisions (upstream
//! `pkg/controller/endpointslicemirroring/`): the Endpoints of a Service
//! without a selector (written by its owner, not by the endpoints
//! controller) are mirrored into EndpointSlices, so that consumers of
//! EndpointSlices see them too.
//!
//! A plan-returning core: [`sync`] takes the cached Endpoints, its Service
//! and the slices this controller mirrored for it, and answers [`Sync`]:
//! delete them all (the Endpoints or Service is gone, the Service has a
//! selector, or the Endpoints is not to be mirrored: labelled
//! [`SKIP_MIRROR_LABEL`]` = "true"`, or a leader-election record), wait for
//! the cache (it has not yet seen this controller's last writes, per the
//! [`tracker`]), or the [`reconciler::Writes`] of [`reconcile`](reconciler::reconcile)
//! over what the Endpoints asks for ([`desired`]) with the Warning events
//! of addresses it skipped.
//!
//! Which events queue an Endpoints is decided here too (the `queues_on_*`
//! functions), beside the sync.
//!
//! # Layout
//! - [`desired`]: addresses as slice endpoints, grouped by slice key;
//! - [`reconciler`]: the creates, updates and deletes;
//! - [`tracker`]: the slice generations this controller wrote;
//! - [`metrics_cache`]: the numbers behind the gauges.

pub mod desired;
pub mod metrics_cache;
pub mod reconciler;
pub mod tracker;

#[cfg(test)]
mod tests;

use k8s_openapi::api::core::v1::{Endpoints, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;

use crate::common::endpoints_annotations::LEADER_ANNOTATION;
use reconciler::Writes;
use tracker::EndpointSliceTracker;

/// The value of [`MANAGED_BY_LABEL`] on the slices this controller writes
/// (upstream `controllerName`).
pub const CONTROLLER_NAME: &str = "endpointslicemirroring-controller.k8s.io";

/// Who manages a slice (upstream `discovery.LabelManagedBy`).
pub const MANAGED_BY_LABEL: &str = "endpointslice.kubernetes.io/managed-by";

/// The Service a slice belongs to (upstream `discovery.LabelServiceName`).
pub const SERVICE_NAME_LABEL: &str = "kubernetes.io/service-name";

/// An Endpoints labelled `"true"` with it is not mirrored (upstream
/// `discovery.LabelSkipMirror`).
pub const SKIP_MIRROR_LABEL: &str = "endpointslice.kubernetes.io/skip-mirror";

/// Reason of the event for addresses that are not IPs.
pub const INVALID_IP_ADDRESS: &str = "InvalidIPAddress";

/// Reason of the event for addresses past the per-subset maximum.
pub const TOO_MANY_ADDRESSES_TO_MIRROR: &str = "TooManyAddressesToMirror";

/// Failed syncs of one Endpoints before it is dropped (upstream
/// `maxRetries`).
pub const MAX_RETRIES: u32 = 15;

/// What one Endpoints' sync does.
#[derive(Debug, Clone, PartialEq)]
pub enum Sync {
    /// Nothing is to be mirrored: forget the Endpoints (tracker, metrics)
    /// and delete these slices (all of them, even after a failure; then the
    /// sync fails).
    DeleteAll(Vec<EndpointSlice>),
    /// The slice cache is behind this controller's writes: fail, to retry.
    Stale,
    /// Mirror: record these Warning events (reason, message) on the
    /// Endpoints, then run the writes.
    Mirror {
        /// `(reason, message)` of each event.
        events: Vec<(&'static str, String)>,
        /// The writes.
        writes: Writes,
        /// Addresses left out (`addresses_skipped_per_sync`).
        skipped: usize,
    },
}

/// Whether `endpoints` is mirrored at all (upstream `shouldMirror`): not
/// labelled to skip mirroring, not a leader-election record.
pub fn should_mirror(endpoints: &Endpoints) -> bool {
    let skip = endpoints.metadata.labels.as_ref().and_then(|l| l.get(SKIP_MIRROR_LABEL)).is_some_and(|v| v == "true");
    let leader = endpoints.metadata.annotations.as_ref().is_some_and(|a| a.contains_key(LEADER_ANNOTATION));
    !skip && !leader
}

/// Whether a slice is this controller's.
pub fn managed_by_controller(slice: &EndpointSlice) -> bool {
    slice.metadata.labels.as_ref().and_then(|l| l.get(MANAGED_BY_LABEL)).is_some_and(|v| v == CONTROLLER_NAME)
}

/// The slices among `slices` mirrored for Endpoints `namespace/name`.
pub fn mirrored_for<'a>(slices: &[&'a EndpointSlice], namespace: &str, name: &str) -> Vec<&'a EndpointSlice> {
    let named = |s: &&EndpointSlice| {
        s.metadata.labels.as_ref().and_then(|l| l.get(SERVICE_NAME_LABEL)).is_some_and(|v| v == name)
    };
    slices
        .iter()
        .copied()
        .filter(|s| s.metadata.namespace.as_deref() == Some(namespace) && managed_by_controller(s))
        .filter(named)
        .collect()
}

fn has_selector(service: &Service) -> bool {
    service.spec.as_ref().is_some_and(|s| s.selector.is_some())
}

/// A Service added or deleted queues its Endpoints when it has no selector.
pub fn queues_on_service_add_or_delete(service: &Service) -> bool {
    !has_selector(service)
}

/// A Service updated queues its Endpoints when it gained or lost its
/// selector.
pub fn queues_on_service_update(old: &Service, new: &Service) -> bool {
    has_selector(old) != has_selector(new)
}

/// An Endpoints updated is queued when either version is mirrored.
pub fn queues_on_endpoints_update(old: &Endpoints, new: &Endpoints) -> bool {
    should_mirror(old) || should_mirror(new)
}

/// The sync of Endpoints `key` (`endpoints` and `service` as cached,
/// `mirrored` its mirrored slices), with at most `max_per_subset`
/// addresses mirrored per subset.
pub fn sync(
    key: &str,
    endpoints: Option<&Endpoints>,
    service: Option<&Service>,
    mirrored: &[&EndpointSlice],
    tracker: &EndpointSliceTracker,
    max_per_subset: usize,
) -> Sync {
    let all = || Sync::DeleteAll(mirrored.iter().map(|s| (*s).clone()).collect());
    let Some(endpoints) = endpoints.filter(|e| should_mirror(e)) else { return all() };
    if service.is_none_or(has_selector) {
        return all();
    }
    if tracker.stale_slices(key, mirrored) {
        return Sync::Stale;
    }
    let wanted = desired::desired(endpoints.subsets.as_deref().unwrap_or_default(), max_per_subset);
    let mut events = Vec::new();
    if wanted.invalid > 0 {
        let message = format!("Skipped {} invalid IP addresses when mirroring to EndpointSlices", wanted.invalid);
        events.push((INVALID_IP_ADDRESS, message));
    }
    if wanted.skipped > wanted.invalid {
        let message = format!(
            "A max of {max_per_subset} addresses can be mirrored to EndpointSlices per Endpoints subset. {} addresses \
             were skipped",
            wanted.skipped
        );
        events.push((TOO_MANY_ADDRESSES_TO_MIRROR, message));
    }
    let skipped = wanted.skipped;
    let writes = reconciler::reconcile(endpoints, wanted, mirrored, max_per_subset);
    Sync::Mirror { events, writes, skipped }
}
