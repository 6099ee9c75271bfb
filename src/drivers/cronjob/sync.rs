//! One sync of a CronJob: the core's phases (`kcm_controllers::cronjob::sync`)
//! with upstream's API calls between them:
//! - finished Jobs beyond the history limits deleted (propagation
//!   `Background`, as upstream's `DeleteJob`);
//! - the CronJob read live when a Job it does not list appears;
//! - listed Jobs the cache lacks read live (NotFound: `MissingJob`);
//! - under `Replace`, the active Jobs read live and deleted;
//! - the Job created (AlreadyExists: the Job read live under the name);
//! - the status written through the status subresource, from the cached
//!   CronJob with its resourceVersion (a conflict retries the key), even
//!   after a failed step, as upstream.

use std::sync::Arc;
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::batch::v1::{CronJob, Job};
use kcm_controllers::cronjob::job::jobs_to_be_reconciled;
use kcm_controllers::cronjob::{Created, Decision, JobKey, Options, Start, Sync};
use kcm_runtime::events::EventRecorder;
use kcm_runtime::informer::Store;
use kcm_runtime::runner::{Next, Reconcile, SyncError};
use kube::Client;
use kube::api::{Api, DeleteParams, PostParams};

use super::CronJobMetrics;
use crate::drivers::api_errors::{code, error_message, namespace_terminating, reason};
use crate::drivers::execute::object_reference;

/// What a sync failed on: the key is retried with backoff.
#[derive(Debug, thiserror::Error)]
enum Error {
    /// An API call failed.
    #[error("{what}: {source}")]
    Api {
        /// The call.
        what: String,
        /// Its error.
        #[source]
        source: kube::Error,
    },
    /// A Job to replace could not be deleted (upstream's wording).
    #[error("could not replace job {0}")]
    NotReplaced(String),
}

fn api(what: impl Into<String>) -> impl FnOnce(kube::Error) -> Error {
    let what = what.into();
    move |source| Error::Api { what, source }
}

/// The per-key sync, shared by the workers.
pub(super) struct Syncer {
    /// Cached CronJobs.
    pub cron_jobs: Store<CronJob>,
    /// Cached Jobs (all namespaces).
    pub jobs: Store<kcm_objects::Job>,
    /// Writes the Jobs and the CronJob's status.
    pub client: Client,
    /// Records the core's events.
    pub recorder: EventRecorder,
    /// The zones schedules are read in.
    pub options: Options,
    /// `cronjob_controller_*`, when registered.
    pub metrics: Option<CronJobMetrics>,
}

impl Reconcile for Syncer {
    /// upstream `sync`.
    async fn sync(&self, key: &str) -> Result<Next, SyncError> {
        let Some(cron_job) = self.cron_jobs.get(key) else {
            tracing::debug!(%key, "CronJob not found, may be it is deleted");
            return Ok(Next::Done);
        };
        let namespace = cron_job.metadata.namespace.clone().unwrap_or_default();
        let in_namespace = self.jobs.list_namespace(&namespace);
        let jobs: Vec<Arc<kcm_objects::Job>> =
            jobs_to_be_reconciled(&cron_job, &in_namespace).into_iter().cloned().collect();
        let mut sync = Sync::new(&cron_job, jobs, Timestamp::now());
        let name = cron_job.metadata.name.clone().unwrap_or_default();
        let walked = self.walk(&mut sync, &namespace, &name).await;
        if let Err(error) = &walked {
            tracing::debug!(cronjob = %key, %error, "Error reconciling cronjob");
        }
        let finished = sync.finish();
        for event in finished.events {
            self.recorder.event(&object_reference(&event.regarding), event.type_, &event.reason, event.message);
        }
        if let Some(updated) = finished.update_status {
            let cron_jobs: Api<CronJob> = Api::namespaced(self.client.clone(), &namespace);
            if let Err(error) = cron_jobs.replace_status(&name, &PostParams::default(), &updated).await {
                tracing::debug!(cronjob = %key, %error, "Unable to update status for cronjob");
                return Err(Box::new(api(format!("updating the status of {key}"))(error)));
            }
        }
        match walked {
            Ok(Some(after)) => {
                tracing::debug!(cronjob = %key, ?after, "Re-queuing cronjob");
                Ok(Next::After(Duration::try_from(after).unwrap_or_default()))
            }
            Ok(None) => Ok(Next::Done),
            Err(error) => Err(Box::new(error)),
        }
    }
}

impl Syncer {
    /// The phases up to the decision's end; the answer is when to sync
    /// again.
    async fn walk(&self, sync: &mut Sync, namespace: &str, name: &str) -> Result<Option<SignedDuration>, Error> {
        let jobs: Api<Job> = Api::namespaced(self.client.clone(), namespace);
        for doomed in sync.history_deletions() {
            let result = jobs.delete(&doomed.name, &DeleteParams::background()).await;
            sync.deleted(&doomed, result.map(|_| ()).map_err(|e| error_message(&e)));
        }
        let live = if sync.needs_live_cron_job() {
            let cron_jobs: Api<CronJob> = Api::namespaced(self.client.clone(), namespace);
            Some(cron_jobs.get(name).await.map_err(api("reading the CronJob"))?)
        } else {
            None
        };
        sync.reconcile_jobs(live.as_ref());
        for listed in sync.unseen_active() {
            let job = listed.name.clone().unwrap_or_default();
            let listed_jobs: Api<Job> =
                Api::namespaced(self.client.clone(), listed.namespace.as_deref().unwrap_or(namespace));
            match listed_jobs.get(&job).await {
                Ok(_) => {}
                Err(error) if code(&error) == Some(404) => sync.missing(&listed),
                Err(error) => return Err(api(format!("reading job {job}"))(error)),
            }
        }
        match sync.decide(&self.options) {
            Decision::Done(after) => Ok(after),
            Decision::Start(start) => self.start(sync, &start, &jobs).await,
        }
    }

    /// Replaces the active Jobs if asked, then creates the Job.
    async fn start(&self, sync: &mut Sync, start: &Start, jobs: &Api<Job>) -> Result<Option<SignedDuration>, Error> {
        for active in &start.replace {
            let name = active.name.clone().unwrap_or_default();
            let active_jobs: Api<Job> =
                Api::namespaced(self.client.clone(), active.namespace.as_deref().unwrap_or_default());
            let job = match active_jobs.get(&name).await {
                Ok(job) => job,
                Err(error) => {
                    sync.replace_read_failed(&error_message(&error));
                    return Err(api(format!("reading job {name}"))(error));
                }
            };
            let key = JobKey {
                namespace: job.metadata.namespace.clone().unwrap_or_default(),
                name: name.clone(),
                uid: job.metadata.uid.clone().unwrap_or_default(),
            };
            match active_jobs.delete(&name, &DeleteParams::background()).await {
                Ok(_) => sync.replaced(&key, Ok(())),
                Err(error) => {
                    sync.replaced(&key, Err(error_message(&error)));
                    return Err(Error::NotReplaced(format!("{}/{name}", key.namespace)));
                }
            }
        }
        let name = start.job.metadata.name.clone().unwrap_or_default();
        let outcome = match jobs.create(&PostParams::default(), &start.job).await {
            Ok(created) => {
                if let (Some(metrics), Some(at)) = (&self.metrics, &created.metadata.creation_timestamp) {
                    let skew = at.0.duration_since(start.scheduled);
                    metrics.skew.observe(skew.as_secs_f64());
                }
                Created::Created(Box::new(created))
            }
            Err(error) if namespace_terminating(&error) => return Err(api(format!("creating job {name}"))(error)),
            Err(error) if reason(&error) == Some("AlreadyExists") => {
                let existing = jobs.get(&name).await.map_err(api(format!("reading job {name}")))?;
                tracing::info!(job = %name, "Job already exists");
                Created::AlreadyExists(Box::new(existing))
            }
            Err(error) => {
                sync.created(start, Created::Failed(error_message(&error)));
                return Err(api(format!("creating job {name}"))(error));
            }
        };
        Ok(sync.created(start, outcome))
    }
}
