//! Services: Endpoints, EndpointSlices and their mirroring, ServiceCIDRs.

use crate::config::settings::NoFlags;
use crate::config::settings::endpoint::EndpointFlags;
use crate::config::settings::endpointslice::EndpointSliceFlags;
use crate::config::settings::endpointslicemirroring::EndpointSliceMirroringFlags;
use crate::drivers::endpoint::{self, EndpointController};
use crate::drivers::endpointslice::{self, EndpointSliceController, EndpointSliceMetrics};
use crate::drivers::endpointslicemirroring::{self, EndpointSliceMirroringController, MirroringMetrics};
use crate::drivers::servicecidrs::{self, ServiceCidrController};

use super::{Row, Wiring};

/// Its rows, in start order.
pub(super) const ROWS: &[&dyn Wiring] = &[
    &Row::<EndpointFlags> {
        name: endpoint::IDENTITY.name,
        workers: |settings| settings.workers,
        start: |settings, cx| {
            let parts = cx.parts(&endpoint::IDENTITY)?;
            let batch = settings.batch_period;
            Ok(Some(Box::new(EndpointController::new(parts, batch))))
        },
    },
    &Row::<EndpointSliceMirroringFlags> {
        name: endpointslicemirroring::IDENTITY.name,
        workers: |settings| settings.workers,
        start: |settings, cx| {
            let parts = cx.parts(&endpointslicemirroring::IDENTITY)?;
            let metrics = MirroringMetrics::register(cx.registry)?;
            Ok(Some(Box::new(EndpointSliceMirroringController::new(parts, settings.driver, Some(metrics)))))
        },
    },
    &Row::<EndpointSliceFlags> {
        name: endpointslice::IDENTITY.name,
        workers: |settings| settings.concurrent_syncs,
        start: |settings, cx| {
            let parts = cx.parts(&endpointslice::IDENTITY)?;
            let metrics = EndpointSliceMetrics::register(cx.registry)?;
            Ok(Some(Box::new(EndpointSliceController::new(parts, settings.driver, Some(metrics)))))
        },
    },
    &Row::<NoFlags> {
        name: servicecidrs::IDENTITY.name,
        workers: |_| servicecidrs::WORKERS,
        start: |_, cx| Ok(Some(Box::new(ServiceCidrController::new(cx.parts(&servicecidrs::IDENTITY)?)))),
    },
];
