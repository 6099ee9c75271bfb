//! The workload and batch controllers.

use crate::config::settings::cronjob::CronJobFlags;
use crate::config::settings::daemonset::DaemonSetFlags;
use crate::config::settings::deployment::DeploymentFlags;
use crate::config::settings::job::JobFlags;
use crate::config::settings::replicaset::ReplicaSetFlags;
use crate::config::settings::statefulset::StatefulSetFlags;
use crate::config::settings::ttlafterfinished::TtlAfterFinishedFlags;
use crate::drivers::cronjob::{self, CronJobController, CronJobMetrics};
use crate::drivers::daemonset::{self, DaemonSetController};
use crate::drivers::deployment::{self, DeploymentController};
use crate::drivers::job::{self, JobController, JobMetrics};
use crate::drivers::replicaset::{self, ReplicaSetController};
use crate::drivers::statefulset::{self, StatefulSetController};
use crate::drivers::ttlafterfinished::{self, TtlAfterFinishedController, TtlAfterFinishedMetrics};

use super::{Row, Wiring};

/// Its rows, in start order.
pub(super) const ROWS: &[&dyn Wiring] = &[
    &Row::<DeploymentFlags> {
        name: deployment::IDENTITY.name,
        workers: |settings| settings.workers,
        start: |_, cx| {
            let parts = cx.parts(&deployment::IDENTITY)?;
            let options = DeploymentFlags::options(&cx.config.feature_gates);
            Ok(Some(Box::new(DeploymentController::new(parts, options)?)))
        },
    },
    &Row::<ReplicaSetFlags> {
        name: replicaset::IDENTITY.name,
        workers: |settings| settings.workers,
        start: |_, cx| {
            let parts = cx.parts(&replicaset::IDENTITY)?;
            let options = ReplicaSetFlags::options(&cx.config.feature_gates);
            Ok(Some(Box::new(ReplicaSetController::new(parts, options)?)))
        },
    },
    &Row::<StatefulSetFlags> {
        name: statefulset::IDENTITY.name,
        workers: |settings| settings.workers,
        start: |_, cx| {
            let parts = cx.parts(&statefulset::IDENTITY)?;
            let options = StatefulSetFlags::options(&cx.config.feature_gates);
            Ok(Some(Box::new(StatefulSetController::new(parts, options)?)))
        },
    },
    &Row::<DaemonSetFlags> {
        name: daemonset::IDENTITY.name,
        workers: |settings| settings.workers,
        start: |_, cx| {
            let parts = cx.parts(&daemonset::IDENTITY)?;
            let options = kcm_controllers::daemonset::Options::default();
            Ok(Some(Box::new(DaemonSetController::new(parts, options))))
        },
    },
    &Row::<JobFlags> {
        name: job::IDENTITY.name,
        workers: |settings| settings.workers,
        start: |_, cx| {
            let parts = cx.parts(&job::IDENTITY)?;
            let metrics = JobMetrics::register(cx.registry)?;
            Ok(Some(Box::new(JobController::new(parts, Some(metrics))?)))
        },
    },
    &Row::<CronJobFlags> {
        name: cronjob::IDENTITY.name,
        workers: |settings| settings.workers,
        start: |_, cx| {
            let parts = cx.parts(&cronjob::IDENTITY)?;
            let metrics = CronJobMetrics::register(cx.registry)?;
            Ok(Some(Box::new(CronJobController::new(parts, Some(metrics)))))
        },
    },
    &Row::<TtlAfterFinishedFlags> {
        name: ttlafterfinished::CONTROLLER_NAME,
        workers: |settings| settings.workers,
        start: |_, cx| {
            let client = cx.own_client(ttlafterfinished::CLIENT_NAME)?;
            let metrics = TtlAfterFinishedMetrics::register(cx.registry)?;
            let queues = Some(cx.queue_metrics);
            Ok(Some(Box::new(TtlAfterFinishedController::new(cx.factory, client, Some(metrics), queues))))
        },
    },
];
