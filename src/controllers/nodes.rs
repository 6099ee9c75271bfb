//! The node controllers: lifecycle, taint eviction, IPAM, the TTL annotation,
//! and the pod garbage collector.

use crate::config::settings::NoFlags;
use crate::config::settings::nodeipam::NodeIpamFlags;
use crate::config::settings::nodelifecycle::NodeLifecycleFlags;
use crate::config::settings::podgc::PodGcFlags;
use crate::drivers::nodeipam::{self, CidrSetMetrics, NodeIpamController, Params};
use crate::drivers::nodelifecycle::{self, NodeLifecycleController, NodeLifecycleMetrics};
use crate::drivers::podgc::{self, PodGcController, PodGcMetrics};
use crate::drivers::tainteviction::{self, EvictionMetrics, TaintEvictionController};
use crate::drivers::ttl::{self, TtlController};

use super::{Row, Wiring};

/// Its rows, in start order.
pub(super) const ROWS: &[&dyn Wiring] = &[
    &Row::<NoFlags> {
        name: tainteviction::IDENTITY.name,
        workers: |_| tainteviction::WORKERS,
        start: |_, cx| {
            let parts = cx.parts(&tainteviction::IDENTITY)?;
            let metrics = EvictionMetrics::register(cx.registry)?;
            Ok(Some(Box::new(TaintEvictionController::new(parts, Some(metrics))?)))
        },
    },
    &Row::<NodeLifecycleFlags> {
        name: nodelifecycle::IDENTITY.name,
        workers: |_| nodelifecycle::NODE_WORKERS,
        start: |settings, cx| {
            let parts = cx.parts(&nodelifecycle::IDENTITY)?;
            let metrics = NodeLifecycleMetrics::register(cx.registry)?;
            Ok(Some(Box::new(NodeLifecycleController::new(parts, *settings, Some(metrics))?)))
        },
    },
    &Row::<NodeIpamFlags> {
        name: nodeipam::CONTROLLER_NAME,
        workers: |_| nodeipam::WORKERS,
        start: |settings, cx| {
            // Without --allocate-node-cidrs upstream does not start it.
            let Some(params) = Params::from_settings(settings)? else { return Ok(None) };
            let client = cx.own_client(nodeipam::CLIENT_NAME)?;
            let metrics = CidrSetMetrics::register(cx.registry)?;
            let queues = Some(cx.queue_metrics);
            Ok(Some(Box::new(NodeIpamController::new(cx.factory, client, &params, Some(metrics), queues)?)))
        },
    },
    &Row::<PodGcFlags> {
        name: podgc::CONTROLLER_NAME,
        // Upstream's pod garbage collector has no workers: one pass every 20 s.
        workers: |_| 1,
        start: |settings, cx| {
            let client = cx.own_client(podgc::CLIENT_NAME)?;
            let metrics = PodGcMetrics::register(cx.registry)?;
            let threshold = settings.terminated_pod_gc_threshold;
            Ok(Some(Box::new(PodGcController::new(cx.factory, client, threshold, Some(metrics)))))
        },
    },
    &Row::<NoFlags> {
        name: ttl::CONTROLLER_NAME,
        workers: |_| ttl::WORKERS,
        start: |_, cx| {
            let client = cx.own_client(ttl::CLIENT_NAME)?;
            Ok(Some(Box::new(TtlController::new(cx.factory, client, Some(cx.queue_metrics)))))
        },
    },
];
