//! Storage: the volume binder, attach/detach, the expander, the protection
//! controllers, ephemeral volumes.

use crate::config::PVC_UNUSED_SINCE_TIME;
use crate::config::settings::NoFlags;
use crate::config::settings::attachdetach::AttachDetachFlags;
use crate::config::settings::ephemeralvolume::EphemeralVolumeFlags;
use crate::config::settings::pvbinder::PvBinderFlags;
use crate::drivers::attachdetach::{self, AttachDetachController, AttachDetachMetrics};
use crate::drivers::ephemeralvolume::{self, EphemeralVolumeController, EphemeralVolumeMetrics};
use crate::drivers::expand::{self, ExpandController};
use crate::drivers::pvbinder::{self, PvBinderController, PvBinderMetrics};
use crate::drivers::pvcprotection::{self, PvcProtectionController};
use crate::drivers::pvprotection::{self, PvProtectionController};
use crate::drivers::vacprotection::{self, VacProtectionController};
use kcm_runtime::events::EventRecorder;

use super::{Row, Wiring};

/// Its rows, in start order.
pub(super) const ROWS: &[&dyn Wiring] = &[
    &Row::<PvBinderFlags> {
        name: pvbinder::CONTROLLER_NAME,
        workers: |_| pvbinder::WORKERS,
        start: |settings, cx| {
            if settings.hostpath_provisioner {
                tracing::warn!(
                    controller = pvbinder::CONTROLLER_NAME,
                    "--enable-hostpath-provisioner: kcm-rs runs no host-path provisioner; claims of a \
                     kubernetes.io/host-path class get a ProvisioningFailed event"
                );
            }
            let client = cx.own_client(pvbinder::CLIENT_NAME)?;
            let recorder = EventRecorder::new(client.clone(), pvbinder::EVENT_SOURCE);
            let core = kcm_controllers::pvbinder::Settings {
                dynamic_provisioning: settings.dynamic_provisioning,
                // `VolumeAttributesClass` is GA and locked on in 1.37.
                vac_enabled: true,
            };
            let queues = Some(cx.queue_metrics);
            let metrics = Some(PvBinderMetrics::register(cx.registry, cx.factory)?);
            let period = settings.sync_period;
            let controller = PvBinderController::new(cx.factory, client, recorder, core, period, queues, metrics)?;
            Ok(Some(Box::new(controller)))
        },
    },
    &Row::<NoFlags> {
        name: pvcprotection::CONTROLLER_NAME,
        workers: |_| pvcprotection::WORKERS,
        start: |_, cx| {
            let client = cx.own_client(pvcprotection::CLIENT_NAME)?;
            let unused_since = cx.config.feature_gates.enabled(PVC_UNUSED_SINCE_TIME);
            let queues = Some(cx.queue_metrics);
            Ok(Some(Box::new(PvcProtectionController::new(cx.factory, client, unused_since, queues)?)))
        },
    },
    &Row::<EphemeralVolumeFlags> {
        name: ephemeralvolume::IDENTITY.name,
        workers: |settings| settings.workers,
        start: |_, cx| {
            let parts = cx.parts(&ephemeralvolume::IDENTITY)?;
            let metrics = EphemeralVolumeMetrics::register(cx.registry)?;
            Ok(Some(Box::new(EphemeralVolumeController::new(parts, Some(metrics))?)))
        },
    },
    &Row::<AttachDetachFlags> {
        name: attachdetach::IDENTITY.name,
        workers: |_| attachdetach::WORKERS,
        start: |settings, cx| {
            let parts = cx.parts(&attachdetach::IDENTITY)?;
            let metrics = AttachDetachMetrics::register(cx.registry)?;
            Ok(Some(Box::new(AttachDetachController::new(parts, *settings, Some(metrics))?)))
        },
    },
    &Row::<NoFlags> {
        name: expand::IDENTITY.name,
        workers: |_| expand::WORKERS,
        start: |_, cx| Ok(Some(Box::new(ExpandController::new(cx.parts(&expand::IDENTITY)?)))),
    },
    &Row::<NoFlags> {
        name: pvprotection::CONTROLLER_NAME,
        workers: |_| pvprotection::WORKERS,
        start: |_, cx| {
            let client = cx.own_client(pvprotection::CLIENT_NAME)?;
            Ok(Some(Box::new(PvProtectionController::new(cx.factory, client, Some(cx.queue_metrics)))))
        },
    },
    &Row::<NoFlags> {
        name: vacprotection::CONTROLLER_NAME,
        workers: |_| vacprotection::WORKERS,
        start: |_, cx| {
            let client = cx.own_client(vacprotection::CLIENT_NAME)?;
            Ok(Some(Box::new(VacProtectionController::new(cx.factory, client, Some(cx.queue_metrics))?)))
        },
    },
];
