//! The Job controller's driver (upstream `pkg/controller/job/job_controller.go`
//! minus `syncJob`'s decisions, which live in `kcm_controllers::job`).
//!
//! It owns:
//! - the handlers on the shared Job and Pod informers (`handlers`), which
//!   map changes to Job keys as upstream does (Job changes at once, pod
//!   changes batched by [`SYNC_JOB_BATCH_PERIOD`]), feed the pod and
//!   finalizer expectations, and queue orphan pods that still carry the
//!   tracking finalizer;
//! - two workqueues, `job` (`--concurrent-job-syncs` workers) and
//!   `job_orphan_pod` (one worker), both with upstream's per-item
//!   exponential backoff of 1 s to 1 min and no overall bucket, retried
//!   without limit;
//! - the syncs (`sync`): a Job's snapshot, the core driven to its end by
//!   the executor's loop; an orphan pod's finalizer removed;
//! - the Job's own writes (`writes`), performed for that loop, with the
//!   controller's memory (`metrics::Memory`) and metrics ([`JobMetrics`]).
//!
//! [`SYNC_JOB_BATCH_PERIOD`]: kcm_controllers::job::SYNC_JOB_BATCH_PERIOD

mod handlers;
mod metrics;
mod sync;
mod writes;

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use kcm_objects::Job;
use kcm_objects::Pod;
use kcm_runtime::controller::{Controller, Retries, RunContext};
use kcm_runtime::informer::{self, HandlerRegistration, HasSynced, SharedInformer};
use kcm_runtime::workqueue::{ItemExponentialFailureRateLimiter, WorkQueue};

pub use self::metrics::JobMetrics;
use self::metrics::Memory;
use self::sync::{OrphanSyncer, Syncer};
use super::execute::Executor;
use super::owners;
use crate::drivers::parts::{Identity, Parts};

/// How upstream names the controller.
pub const IDENTITY: Identity = Identity { name: "job-controller", client: "job-controller", events: "job-controller" };

/// The Job queue's name (the `name` label of the `workqueue_*` metrics).
pub const QUEUE_NAME: &str = "job";

/// The orphan pod queue's name.
pub const ORPHAN_QUEUE_NAME: &str = "job_orphan_pod";

/// The first retry of a failed sync (upstream `DefaultJobApiBackOff`).
pub const DEFAULT_JOB_API_BACK_OFF: Duration = Duration::from_secs(1);

/// The longest retry delay (upstream `MaxJobApiBackOff`).
pub const MAX_JOB_API_BACK_OFF: Duration = Duration::from_secs(60);

/// The Job controller, ready to run once its caches sync.
pub struct JobController {
    /// Keys (`namespace/name`) of Jobs to sync.
    queue: WorkQueue<String>,
    /// Keys of orphan pods whose tracking finalizer may have to go.
    orphan_queue: WorkQueue<String>,
    /// Read for the pod cache's sync state.
    pods: SharedInformer<Pod>,
    /// Read for the Job cache's sync state.
    jobs: SharedInformer<Job>,
    /// Handler registrations: workers start once both have delivered the
    /// initial lists.
    registrations: Vec<HandlerRegistration>,
    /// The Job syncs.
    syncer: Arc<Syncer>,
    /// The orphan pod syncs.
    orphans: Arc<OrphanSyncer>,
}

impl JobController {
    /// Builds the controller on `parts`: its Job and pod handlers, its two
    /// queues, the pod index.
    ///
    /// # Errors
    /// The pod indexes cannot be added (the pod informer has started).
    ///
    /// # Panics
    /// Outside a tokio runtime (the workqueues spawn their timer tasks).
    pub fn new(parts: Parts<'_>, metrics: Option<JobMetrics>) -> Result<Self, informer::Error> {
        let Parts { factory, client, recorder, queue_metrics } = parts;
        let limiter = || ItemExponentialFailureRateLimiter::new(DEFAULT_JOB_API_BACK_OFF, MAX_JOB_API_BACK_OFF);
        let queue = WorkQueue::new(QUEUE_NAME, limiter(), queue_metrics);
        let orphan_queue = WorkQueue::new(ORPHAN_QUEUE_NAME, limiter(), queue_metrics);
        let pods = factory.informer::<Pod>();
        let jobs = factory.informer::<Job>();
        owners::register(&pods)?;
        let memory = Memory::default();
        let resync = Some(factory.default_resync());
        let job_registration = jobs.add_handler(
            handlers::JobHandler {
                queue: queue.clone(),
                orphan_queue: orphan_queue.clone(),
                pods: pods.store(),
                memory: memory.clone(),
                metrics: metrics.clone(),
            },
            resync,
        );
        let pod_registration = pods.add_handler(
            handlers::PodHandler {
                queue: queue.clone(),
                orphan_queue: orphan_queue.clone(),
                jobs: jobs.store(),
                memory: memory.clone(),
                metrics: metrics.clone(),
            },
            resync,
        );
        let orphans = Arc::new(OrphanSyncer { pods: pods.store(), jobs: jobs.store(), client: client.clone() });
        let executor = Executor::new(client, recorder);
        let syncer = Arc::new(Syncer { pods: pods.store(), jobs: jobs.store(), memory, executor, metrics });
        Ok(Self {
            queue,
            orphan_queue,
            pods,
            jobs,
            registrations: vec![job_registration, pod_registration],
            syncer,
            orphans,
        })
    }
}

impl Controller for JobController {
    fn run(self: Box<Self>, cx: RunContext) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            let synced: Vec<&(dyn HasSynced + Sync)> =
                vec![&self.pods, &self.jobs, &self.registrations[0], &self.registrations[1]];
            if !cx.wait_for_caches(&synced, &[&self.queue, &self.orphan_queue]).await {
                return;
            }
            let jobs = cx.pool(self.queue.clone(), self.syncer.clone(), cx.workers, Retries::FOREVER);
            let orphans = cx.pool(self.orphan_queue.clone(), self.orphans.clone(), 1, Retries::FOREVER);
            tokio::join!(jobs, orphans);
        })
    }
}
