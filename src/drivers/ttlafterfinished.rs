//! The TTL-after-finished controller's driver (upstream
//! `pkg/controller/ttlafterfinished/ttlafterfinished_controller.go`; the
//! decisions are `kcm_controllers::ttlafterfinished`).
//!
//! It owns:
//! - the handlers on the shared Job informer: a Job added or updated (the
//!   informer's periodic resyncs included) that is not being deleted, has
//!   finished and sets `ttlSecondsAfterFinished` is queued, as upstream's
//!   `addJob`/`updateJob`; deletes are not handled (upstream has no delete
//!   handler: a sync of a Job gone from the cache does nothing);
//! - the `ttl_jobs_to_delete` workqueue (upstream's default controller
//!   rate limiter, retried for as long as it fails) and its worker pool
//!   (`--concurrent-ttl-after-finished-syncs`);
//! - the sync (upstream `processJob`): the cached Job's TTL not yet run out,
//!   the key comes back when it does; run out, the Job is read live from
//!   the API server and judged again (its TTL may have changed since the
//!   cache saw it), and only then deleted, in the foreground (its pods go
//!   first) and on the condition of the uid just read, through the
//!   controller's own client (`ttl-after-finished-controller`);
//! - `ttl_after_finished_controller_job_deletion_duration_seconds`: for
//!   each Job deleted, the seconds from the moment its TTL ran out to the
//!   deletion.
//!
//! Upstream builds an event recorder it never records with: this driver
//! records no events and has none.

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use jiff::Timestamp;
use k8s_openapi::api::batch::v1::Job;
use kcm_controllers::ttlafterfinished::{self as core, Decision, TimeLeft};
use kcm_runtime::controller::{Controller, Retries, RunContext};
use kcm_runtime::informer::{
    EventHandler, HandlerRegistration, HasSynced, SharedInformer, SharedInformerFactory, Store, key_of,
};
use kcm_runtime::runner::{Next, Reconcile, SyncError};
use kcm_runtime::workqueue::{QueueMetrics, WorkQueue, default_controller_rate_limiter};
use kube::Client;
use kube::api::{Api, DeleteParams, Preconditions, PropagationPolicy};
use prometheus::{Histogram, HistogramOpts, Registry};

/// Upstream's controller name: metric label, log field.
pub const CONTROLLER_NAME: &str = "ttl-after-finished-controller";

/// The user-agent suffix of its client (upstream's `ClientOrDie` name).
pub const CLIENT_NAME: &str = "ttl-after-finished-controller";

/// The workqueue's name (the `name` label of the `workqueue_*` metrics).
pub const QUEUE_NAME: &str = "ttl_jobs_to_delete";

/// Upstream's `ttl_after_finished_controller_*` metric.
#[derive(Clone, Debug)]
pub struct TtlAfterFinishedMetrics {
    /// Seconds from a Job's expiry to its deletion.
    job_deletion_duration: Histogram,
}

impl TtlAfterFinishedMetrics {
    /// Registers `ttl_after_finished_controller_job_deletion_duration_seconds`
    /// (upstream's help text and buckets: 100 ms doubling 14 times, the
    /// last bucket from about 27 minutes).
    pub fn register(registry: &Registry) -> prometheus::Result<Self> {
        let buckets = prometheus::exponential_buckets(0.1, 2.0, 14)?;
        let job_deletion_duration = Histogram::with_opts(
            HistogramOpts::new(
                "ttl_after_finished_controller_job_deletion_duration_seconds",
                "The time it took to delete the job since it became eligible for deletion",
            )
            .buckets(buckets),
        )?;
        registry.register(Box::new(job_deletion_duration.clone()))?;
        Ok(Self { job_deletion_duration })
    }
}

/// The TTL-after-finished controller, ready to run once its cache syncs.
pub struct TtlAfterFinishedController {
    /// Keys (`namespace/name`) of finished Jobs with a TTL.
    queue: WorkQueue<String>,
    /// The shared Job informer, for its sync state.
    jobs: SharedInformer<kcm_objects::Job>,
    /// The handler's registration: workers start once it saw the list.
    registration: HandlerRegistration,
    /// What the workers run.
    syncer: Arc<Syncer>,
}

/// The per-key sync, shared by the workers.
struct Syncer {
    /// Cached Jobs (all namespaces).
    jobs: Store<kcm_objects::Job>,
    /// The controller's own client: the live reads and the deletes.
    client: Client,
    /// `None` when built without a registry.
    metrics: Option<TtlAfterFinishedMetrics>,
}

// === impl TtlAfterFinishedController ===

impl TtlAfterFinishedController {
    /// Builds the controller on `factory`'s Job informer and registers its
    /// handler (before `factory.start()`), reading and deleting through
    /// `client`.
    ///
    /// # Panics
    /// Outside a tokio runtime (the workqueue spawns its timer task).
    pub fn new(
        factory: &SharedInformerFactory,
        client: Client,
        metrics: Option<TtlAfterFinishedMetrics>,
        queue_metrics: Option<&QueueMetrics>,
    ) -> Self {
        let queue = WorkQueue::new(QUEUE_NAME, default_controller_rate_limiter(), queue_metrics);
        let jobs = factory.informer::<kcm_objects::Job>();
        let registration = jobs.add_handler(JobHandler { queue: queue.clone() }, Some(factory.default_resync()));
        let syncer = Arc::new(Syncer { jobs: jobs.store(), client, metrics });
        Self { queue, jobs, registration, syncer }
    }
}

impl Controller for TtlAfterFinishedController {
    fn run(self: Box<Self>, cx: RunContext) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            let synced: [&(dyn HasSynced + Sync); 2] = [&self.jobs, &self.registration];
            cx.run_when_synced(&synced, self.queue.clone(), self.syncer.clone(), Retries::FOREVER).await;
        })
    }
}

// === handlers ===

/// Queues the Jobs that need cleanup.
struct JobHandler {
    queue: WorkQueue<String>,
}

impl JobHandler {
    /// Upstream `addJob` and `updateJob`, which differ only in the
    /// `message` they log.
    fn consider(&self, job: &Job, message: &str) {
        let key = key_of(job);
        tracing::debug!(job = %key, "{message}");
        if job.metadata.deletion_timestamp.is_none() && core::needs_cleanup(job) {
            tracing::debug!(job = %key, "Add job to cleanup");
            self.queue.add(key);
        }
    }
}

impl EventHandler<kcm_objects::Job> for JobHandler {
    fn on_add(&self, job: &Arc<kcm_objects::Job>) {
        self.consider(job, "Adding job");
    }

    fn on_update(&self, _old: &Arc<kcm_objects::Job>, new: &Arc<kcm_objects::Job>) {
        self.consider(new, "Updating job");
    }

    fn on_delete(&self, _job: &Arc<kcm_objects::Job>) {}
}

// === impl Syncer ===

impl Reconcile for Syncer {
    /// Upstream `processJob`.
    async fn sync(&self, key: &str) -> Result<Next, SyncError> {
        let Some((namespace, name)) = key.split_once('/') else {
            return Err(format!("unexpected key format: {key:?}").into());
        };
        tracing::debug!(job = %key, "Checking if Job is ready for cleanup");
        let Some(cached) = self.jobs.get(key) else { return Ok(Next::Done) };
        if let Err(next) = expired(key, core::process_ttl(&cached, Timestamp::now())?) {
            return Ok(next);
        }
        // The cached TTL may be stale: judge the Job as the API server has
        // it now (possibly another Job of that name, judged the same way).
        let api: Api<Job> = Api::namespaced(self.client.clone(), namespace);
        let Some(fresh) = api.get_opt(name).await? else { return Ok(Next::Done) };
        let left = match expired(key, core::process_ttl(&fresh, Timestamp::now())?) {
            Ok(left) => left,
            Err(next) => return Ok(next),
        };
        let params = DeleteParams {
            propagation_policy: Some(PropagationPolicy::Foreground),
            preconditions: Some(Preconditions { uid: fresh.metadata.uid.clone(), resource_version: None }),
            ..DeleteParams::default()
        };
        tracing::debug!(job = %key, "Cleaning up Job");
        api.delete(name, &params).await?;
        if let Some(metrics) = &self.metrics {
            let late = Timestamp::now().duration_since(left.expire_at);
            metrics.job_deletion_duration.observe(late.as_secs_f64());
        }
        Ok(Next::Done)
    }
}

/// The time left (at or below zero) of a Job whose TTL has run out, or
/// what the worker does next with one whose TTL has not.
fn expired(key: &str, decision: Decision) -> Result<TimeLeft, Next> {
    match decision {
        Decision::Ignore => Err(Next::Done),
        Decision::Wait(left) => Err(wait(key, &left)),
        Decision::Expired(left) => Ok(left),
    }
}

/// The key back once the TTL runs out (upstream `enqueueAfter`), logged
/// as upstream's `timeLeft` logs it.
fn wait(key: &str, left: &TimeLeft) -> Next {
    if left.finished_in_the_future() {
        tracing::info!(
            job = %key,
            "Warning: Found Job finished in the future. This is likely due to time skew in the cluster. Job cleanup \
             will be deferred."
        );
    }
    tracing::debug!(
        job = %key,
        finish_time = %left.finish_at,
        remaining_ttl = ?left.remaining,
        start_time = %left.since,
        deadline_ttl = %left.expire_at,
        "Found Job finished"
    );
    Next::After(Duration::try_from(left.remaining).unwrap_or_default())
}
