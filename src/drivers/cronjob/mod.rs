//! The CronJob controller's driver (upstream
//! `pkg/controller/cronjob/cronjob_controllerv2.go` minus the decisions,
//! which live in `kcm_controllers::cronjob`).
//!
//! It owns:
//! - the event handlers on the shared CronJob and Job informers, as
//!   upstream's: a CronJob's add and delete queue it, an update queues it
//!   at once or, when its schedule or time zone changed, at its next
//!   schedule time (an unparseable new schedule is recorded as
//!   `UnParseableCronJobSchedule` and queues nothing); a Job queues the
//!   CronJob its controller reference resolves to (both, when the
//!   reference changed);
//! - the `cronjob` workqueue (upstream's default controller rate limiter,
//!   retried for as long as it fails) and the worker pool
//!   (`--concurrent-cron-job-syncs`);
//! - the per-key sync (`sync`): the core's phases with the API calls
//!   between them, through the controller's own client
//!   (`cronjob-controller`);
//! - `cronjob_controller_job_creation_skew_duration_seconds`.

mod sync;

use std::sync::Arc;

use futures::future::BoxFuture;
use jiff::Timestamp;
use k8s_openapi::api::batch::v1::CronJob;
use kcm_controllers::cronjob::{self as core, OnUpdate, Options};
use kcm_objects::Job;
use kcm_runtime::controller::{Controller, Retries, RunContext};
use kcm_runtime::events::EventRecorder;
use kcm_runtime::informer::{EventHandler, HandlerRegistration, HasSynced, SharedInformer, Store};
use kcm_runtime::workqueue::{WorkQueue, default_controller_rate_limiter};
use prometheus::{Histogram, HistogramOpts, Registry};

use sync::Syncer;

use super::execute::object_reference;
use crate::drivers::parts::{Identity, Parts};

pub use core::QUEUE_NAME;

/// How upstream names the controller.
pub const IDENTITY: Identity =
    Identity { name: core::CONTROLLER_NAME, client: "cronjob-controller", events: "cronjob-controller" };

/// Upstream's buckets: `ExponentialBuckets(1, 2, 10)`, 1 s to 512 s.
const SKEW_BUCKETS: [f64; 10] = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 512.0];

/// The controller's metric.
#[derive(Clone)]
pub struct CronJobMetrics {
    /// Seconds from a Job's schedule time to its creation.
    skew: Histogram,
}

impl CronJobMetrics {
    /// Registers `cronjob_controller_job_creation_skew_duration_seconds`.
    ///
    /// # Errors
    /// The name is already registered.
    pub fn register(registry: &Registry) -> prometheus::Result<Self> {
        let skew = Histogram::with_opts(
            HistogramOpts::new(
                "cronjob_controller_job_creation_skew_duration_seconds",
                "[STABLE] Time between when a cronjob is scheduled to be run, and when the corresponding job is created",
            )
            .buckets(SKEW_BUCKETS.to_vec()),
        )?;
        registry.register(Box::new(skew.clone()))?;
        Ok(Self { skew })
    }
}

/// The CronJob controller, ready to run once its caches sync.
pub struct CronJobController {
    /// Keys (`namespace/name`) of CronJobs to sync.
    queue: WorkQueue<String>,
    /// The informers it reads, for their sync state.
    cron_jobs: SharedInformer<CronJob>,
    jobs: SharedInformer<Job>,
    /// Handler registrations: workers start once both have delivered the
    /// initial lists.
    registrations: Vec<HandlerRegistration>,
    /// What the workers run.
    syncer: Arc<Syncer>,
}

impl CronJobController {
    /// Builds the controller on `parts`: its CronJob and Job handlers.
    /// Schedules naming no zone are read in
    /// the process's local zone (`TZ`, else `/etc/localtime`, else UTC),
    /// as kube-controller-manager reads them in its own.
    ///
    /// # Panics
    /// Outside a tokio runtime (the workqueue spawns its timer task).
    pub fn new(parts: Parts<'_>, metrics: Option<CronJobMetrics>) -> Self {
        let Parts { factory, client, recorder, queue_metrics } = parts;
        let queue = WorkQueue::new(QUEUE_NAME, default_controller_rate_limiter(), queue_metrics);
        let cron_jobs = factory.informer::<CronJob>();
        let jobs = factory.informer::<Job>();
        let options = Options { local: jiff::tz::TimeZone::system(), zones: jiff::tz::db().clone() };
        let resync = Some(factory.default_resync());
        let registrations = vec![
            cron_jobs.add_handler(
                CronJobHandler { queue: queue.clone(), recorder: recorder.clone(), options: options.clone() },
                resync,
            ),
            jobs.add_handler(JobHandler { queue: queue.clone(), cron_jobs: cron_jobs.store() }, resync),
        ];
        let syncer =
            Arc::new(Syncer { cron_jobs: cron_jobs.store(), jobs: jobs.store(), client, recorder, options, metrics });
        Self { queue, cron_jobs, jobs, registrations, syncer }
    }
}

impl Controller for CronJobController {
    fn run(self: Box<Self>, cx: RunContext) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            let mut synced: Vec<&(dyn HasSynced + Sync)> = vec![&self.cron_jobs, &self.jobs];
            synced.extend(self.registrations.iter().map(|r| r as &(dyn HasSynced + Sync)));
            cx.run_when_synced(&synced, self.queue.clone(), self.syncer.clone(), Retries::FOREVER).await;
        })
    }
}

// === handlers ===

/// CronJob changes (upstream's `AddFunc`, `updateCronJob`, `DeleteFunc`).
struct CronJobHandler {
    queue: WorkQueue<String>,
    recorder: EventRecorder,
    options: Options,
}

impl EventHandler<CronJob> for CronJobHandler {
    fn on_add(&self, cron_job: &Arc<CronJob>) {
        self.queue.add(core::key(cron_job));
    }

    fn on_update(&self, old: &Arc<CronJob>, new: &Arc<CronJob>) {
        match core::on_update(old, new, Timestamp::now(), &self.options) {
            OnUpdate::Now => self.queue.add(core::key(new)),
            OnUpdate::After(delay) => self.queue.add_after(core::key(new), delay.try_into().unwrap_or_default()),
            OnUpdate::Unparseable(event) => {
                tracing::debug!(cronjob = %core::key(new), schedule = %new.spec.schedule, "Unparseable schedule for cronjob");
                let regarding = object_reference(&event.regarding);
                self.recorder.event(&regarding, event.type_, &event.reason, event.message);
            }
        }
    }

    fn on_delete(&self, cron_job: &Arc<CronJob>) {
        self.queue.add(core::key(cron_job));
    }
}

/// Job changes: the CronJob controlling the Job (upstream `addJob`,
/// `updateJob`, `deleteJob`).
struct JobHandler {
    queue: WorkQueue<String>,
    cron_jobs: Store<CronJob>,
}

impl EventHandler<Job> for JobHandler {
    fn on_add(&self, job: &Arc<Job>) {
        if job.metadata.deletion_timestamp.is_some() {
            // Seen for the first time already being deleted (a restart).
            self.on_delete(job);
            return;
        }
        self.enqueue_controller(job);
    }

    fn on_update(&self, old: &Arc<Job>, new: &Arc<Job>) {
        if old.metadata.resource_version == new.metadata.resource_version {
            // A periodic resync: nothing changed.
            return;
        }
        if controller(old) != controller(new) {
            self.enqueue_controller(old);
        }
        self.enqueue_controller(new);
    }

    fn on_delete(&self, job: &Arc<Job>) {
        self.enqueue_controller(job);
    }
}

impl JobHandler {
    /// Queues the cached CronJob the Job's controller reference names, if
    /// it is that very object (upstream `resolveControllerRef`).
    fn enqueue_controller(&self, job: &Job) {
        let Some(cref) = controller(job) else { return };
        if let Some(cron_job) =
            self.cron_jobs.resolve_controller_ref("CronJob", job.metadata.namespace.as_deref(), cref)
        {
            self.queue.add(core::key(&cron_job));
        }
    }
}

/// The Job's controller reference.
fn controller(job: &Job) -> Option<&k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference> {
    job.metadata.owner_references.iter().flatten().find(|r| r.controller == Some(true))
}
