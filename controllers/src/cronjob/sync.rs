//! One sync of a CronJob (upstream `ControllerV2.sync`,
//! `cleanupFinishedJobs` and `syncCronJob`), in the observe/decide shape:
//! upstream's sync reads the API server live between its decisions (the
//! CronJob when a Job it does not list appears, a listed Job missing from
//! the cache, the Jobs it replaces, a Job whose name is taken), so the
//! driver walks a [`Sync`] through its phases and reports each answer:
//!
//! 1. [`Sync::history_deletions`]: finished Jobs beyond the history
//!    limits, oldest first; each delete reported with [`Sync::deleted`];
//! 2. [`Sync::needs_live_cron_job`] then [`Sync::reconcile_jobs`]: Jobs the
//!    CronJob does not list (`UnexpectedJob`, or listed in the live copy),
//!    finished ones taken off `status.active` (`SawCompletedJob`),
//!    `status.lastSuccessfulTime`;
//! 3. [`Sync::unseen_active`], each read live, [`Sync::missing`] for the
//!    gone (`MissingJob`);
//! 4. [`Sync::decide`]: nothing to start (and when to look again), or a
//!    Job to start, after deleting the active ones under `Replace`;
//! 5. [`Sync::replaced`] per deleted Job, then [`Sync::created`] with the
//!    create's answer;
//! 6. [`Sync::finish`]: the events and, if it changed, the status to write.
//!
//! Upstream writes the status even when a phase failed, so the driver
//! calls `finish` after an error too.

use std::sync::Arc;

use jiff::tz::{TimeZone, TimeZoneDatabase};
use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::batch::v1::{CronJob, CronJobStatus, Job};
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::job::{self, by_start_time, is_succeeded, job_reference};
use super::schedule::{Schedule, load_location, parse_standard};
use super::times::{Missed, next_schedule_time, next_schedule_time_duration};
use crate::common::job_finished::{finished_condition, is_finished};
use crate::common::object::object_ref;
use crate::plan::{Event, EventType};

/// What the core needs besides the objects.
#[derive(Clone, Debug)]
pub struct Options {
    /// The zone of schedules that name none: the process's local zone, as
    /// kube-controller-manager reads them in its own.
    pub local: TimeZone,
    /// Where `timeZone` and `TZ=` names are looked up.
    pub zones: TimeZoneDatabase,
}

/// A Job named by namespace, name and uid.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobKey {
    /// Its namespace.
    pub namespace: String,
    /// Its name.
    pub name: String,
    /// Its uid.
    pub uid: String,
}

/// What [`Sync::decide`] answers.
#[derive(Clone, Debug, PartialEq)]
pub enum Decision {
    /// Nothing to start: sync again after this long, or not until
    /// something changes.
    Done(Option<SignedDuration>),
    /// Start a Job.
    Start(Start),
}

/// A Job to start.
#[derive(Clone, Debug, PartialEq)]
pub struct Start {
    /// Under `Replace`: the active Jobs to read live and delete first
    /// (a failed read or delete ends the sync with an error).
    pub replace: Vec<ObjectReference>,
    /// The Job to create.
    pub job: Box<Job>,
    /// The schedule time it is for.
    pub scheduled: Timestamp,
}

/// How the create of [`Start::job`] went.
#[derive(Clone, Debug, PartialEq)]
pub enum Created {
    /// Created; the API server's answer.
    Created(Box<Job>),
    /// The name was taken; the Job read live under it.
    AlreadyExists(Box<Job>),
    /// Refused (not because the namespace is terminating); the message.
    Failed(String),
}

/// The end of a sync: the events to record and the status to write.
#[derive(Clone, Debug, PartialEq)]
pub struct Finished {
    /// Events, in the order upstream records them.
    pub events: Vec<Event>,
    /// The CronJob to send to the status subresource, when its status
    /// changed (its resourceVersion the one it was read at).
    pub update_status: Option<Box<CronJob>>,
}

/// One sync's state: the CronJob as it is being changed, its Jobs, `now`.
#[derive(Debug)]
pub struct Sync {
    cron_job: CronJob,
    jobs: Vec<Arc<kcm_objects::Job>>,
    now: Timestamp,
    update_status: bool,
    events: Vec<Event>,
    /// The parsed schedule, once [`Sync::decide`] got that far.
    schedule: Option<Schedule>,
}

impl Sync {
    /// A sync of `cron_job` with the cached Jobs it controls (by
    /// [`job::jobs_to_be_reconciled`]).
    pub fn new(cron_job: &CronJob, jobs: Vec<Arc<kcm_objects::Job>>, now: Timestamp) -> Self {
        Self { cron_job: cron_job.clone(), jobs, now, update_status: false, events: Vec::new(), schedule: None }
    }

    // === 1. history ===

    /// upstream `cleanupFinishedJobs`: the finished Jobs beyond
    /// `successfulJobsHistoryLimit` and `failedJobsHistoryLimit`, the
    /// earliest started first.
    pub fn history_deletions(&self) -> Vec<JobKey> {
        let spec = &self.cron_job.spec;
        let (succeeded, failed) = (spec.successful_jobs_history_limit, spec.failed_jobs_history_limit);
        let mut doomed = Vec::new();
        for (limit, kind) in [(succeeded, "Complete"), (failed, "Failed")] {
            let Some(limit) = limit else { continue };
            let mut finished: Vec<&Job> =
                self.jobs.iter().map(|j| &***j).filter(|j| finished_condition(j) == Some(kind)).collect();
            let excess = finished.len().saturating_sub(usize::try_from(limit).unwrap_or(0));
            finished.sort_by(|a, b| by_start_time(a, b));
            doomed.extend(finished.into_iter().take(excess).map(key));
        }
        doomed
    }

    /// A Job's delete went as `result` says (upstream `deleteJob`): off
    /// the active list with `SuccessfulDelete`, or `FailedDelete`.
    pub fn deleted(&mut self, job: &JobKey, result: Result<(), String>) {
        match result {
            Ok(()) => {
                self.remove_active(&job.uid);
                self.event(EventType::Normal, "SuccessfulDelete", format!("Deleted job {}", job.name));
                self.update_status = true;
            }
            Err(error) => self.event(EventType::Warning, "FailedDelete", format!("Deleted job: {error}")),
        }
    }

    // === 2. the Jobs ===

    /// Whether a Job it controls is unfinished and not on its active list:
    /// upstream then reads the CronJob live before calling it unexpected.
    pub fn needs_live_cron_job(&self) -> bool {
        self.jobs.iter().any(|j| !self.in_active(j) && !is_finished(j))
    }

    /// upstream `syncCronJob`'s loop over the Jobs, with the CronJob read
    /// live when [`Sync::needs_live_cron_job`] asked (`None` otherwise).
    /// A Job the live copy lists makes the live status the one changed
    /// and written from here on.
    pub fn reconcile_jobs(&mut self, live: Option<&CronJob>) {
        let jobs = self.jobs.clone();
        for job in &jobs {
            let found = self.in_active(job);
            if !found && !is_finished(job) {
                if let Some(live) = live.filter(|l| active(l).iter().any(|r| r.uid == job.metadata.uid)) {
                    self.cron_job.status = live.status.clone();
                    self.cron_job.metadata.resource_version = live.metadata.resource_version.clone();
                    continue;
                }
                let message = format!("Saw a job that the controller did not create or forgot: {}", name(job));
                self.event(EventType::Warning, "UnexpectedJob", message);
            } else if let Some(condition) = finished_condition(job) {
                if found {
                    self.remove_active(job.metadata.uid.as_deref().unwrap_or(""));
                    let message = format!("Saw completed job: {}, condition: {condition}", name(job));
                    self.event(EventType::Normal, "SawCompletedJob", message);
                    self.update_status = true;
                }
                if is_succeeded(job) {
                    self.saw_success(job);
                }
            }
        }
    }

    /// `status.lastSuccessfulTime` moved up to the Job's completion.
    fn saw_success(&mut self, job: &Job) {
        let completion = job.status.as_ref().and_then(|s| s.completion_time.clone());
        let status = self.cron_job.status.get_or_insert_with(CronJobStatus::default);
        match (&status.last_successful_time, completion) {
            (None, completion) => {
                status.last_successful_time = completion;
                self.update_status = true;
            }
            (Some(last), Some(completion)) if completion.0 > last.0 => {
                status.last_successful_time = Some(completion);
                self.update_status = true;
            }
            _ => {}
        }
    }

    // === 3. the active list ===

    /// Active Jobs the cache does not hold: upstream reads each live.
    pub fn unseen_active(&self) -> Vec<ObjectReference> {
        active(&self.cron_job).iter().filter(|r| !self.jobs.iter().any(|j| j.metadata.uid == r.uid)).cloned().collect()
    }

    /// An active Job read live was not found (`MissingJob`).
    pub fn missing(&mut self, gone: &ObjectReference) {
        let message = format!("Active job went missing: {}", gone.name.as_deref().unwrap_or(""));
        self.event(EventType::Normal, "MissingJob", message);
        self.remove_active(gone.uid.as_deref().unwrap_or(""));
        self.update_status = true;
    }

    // === 4. deciding ===

    /// Whether to start a Job now (the rest of upstream `syncCronJob`).
    pub fn decide(&mut self, options: &Options) -> Decision {
        if self.cron_job.metadata.deletion_timestamp.is_some() {
            return Decision::Done(None);
        }
        let spec = self.cron_job.spec.clone();
        if let Some(zone) = &spec.time_zone
            && let Err(error) = load_location(zone, &options.local, &options.zones)
        {
            self.event(EventType::Warning, "UnknownTimeZone", format!("invalid timeZone: {zone:?}: {error}"));
            return Decision::Done(None);
        }
        if spec.suspend == Some(true) {
            return Decision::Done(None);
        }
        let (text, unsupported) = format_schedule(&self.cron_job, options);
        if unsupported {
            let message = format!(
                "CRON_TZ or TZ used in schedule {:?} is not officially supported, see https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details",
                spec.schedule
            );
            self.event(EventType::Warning, "UnsupportedSchedule", message);
        }
        let schedule = match parse_standard(&text, &options.local, &options.zones) {
            Ok(schedule) => schedule,
            Err(error) => {
                let message = format!("unparseable schedule: {:?} : {error}", spec.schedule);
                self.event(EventType::Warning, "UnparseableSchedule", message);
                return Decision::Done(None);
            }
        };
        let requeue = Some(next_schedule_time_duration(&self.cron_job, self.now, &schedule));
        let scheduled = match next_schedule_time(&self.cron_job, self.now, &schedule) {
            Err(error) => {
                let message = format!("invalid schedule: {} : {error}", spec.schedule);
                self.event(EventType::Warning, "InvalidSchedule", message);
                return Decision::Done(None);
            }
            Ok(None) => return Decision::Done(requeue),
            Ok(Some((scheduled, missed))) => {
                if missed == Missed::Many {
                    let message = "too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew";
                    self.event(EventType::Warning, "TooManyMissedTimes", message.to_owned());
                }
                scheduled
            }
        };
        if let Some(deadline) = spec.starting_deadline_seconds
            && scheduled.checked_add(SignedDuration::from_secs(deadline)).is_ok_and(|late| late < self.now)
        {
            let when = scheduled.strftime("%a, %d %b %Y %H:%M:%S +0000");
            self.event(EventType::Warning, "MissSchedule", format!("Missed scheduled time to start a job: {when}"));
            return Decision::Done(requeue);
        }
        let name = job::job_name(&self.cron_job, scheduled);
        let last = self.cron_job.status.as_ref().and_then(|s| s.last_schedule_time.as_ref()).map(|t| t.0);
        let listed = active(&self.cron_job).iter().any(|r| r.name.as_deref() == Some(name.as_str()));
        if listed || last == Some(scheduled) {
            return Decision::Done(requeue);
        }
        let policy = spec.concurrency_policy.as_deref().unwrap_or("Allow");
        if policy == "Forbid" && !active(&self.cron_job).is_empty() {
            let message = "Not starting job because prior execution is running and concurrency policy is Forbid";
            self.event(EventType::Normal, "JobAlreadyActive", message.to_owned());
            return Decision::Done(requeue);
        }
        let replace = if policy == "Replace" { active(&self.cron_job).to_vec() } else { Vec::new() };
        let zone = load_location(spec.time_zone.as_deref().unwrap_or(""), &options.local, &options.zones)
            .unwrap_or(TimeZone::UTC);
        let job = Box::new(job::job_from_template(&self.cron_job, scheduled, &zone));
        self.schedule = Some(schedule);
        Decision::Start(Start { replace, job, scheduled })
    }

    // === 5. starting ===

    /// An active Job could not be read before replacing it (`FailedGet`).
    pub fn replace_read_failed(&mut self, error: &str) {
        self.event(EventType::Warning, "FailedGet", format!("Get job: {error}"));
    }

    /// A replaced Job's delete went as `result` says.
    pub fn replaced(&mut self, job: &JobKey, result: Result<(), String>) {
        self.deleted(job, result);
    }

    /// The create went as `outcome` says; the answer is when to sync again
    /// (`None`: not until something changes).
    pub fn created(&mut self, start: &Start, outcome: Created) -> Option<SignedDuration> {
        let job = match outcome {
            Created::Failed(error) => {
                self.event(EventType::Warning, "FailedCreate", format!("Error creating job: {error}"));
                return None;
            }
            Created::AlreadyExists(existing) => {
                // Someone else's Job, or ours already listed: nothing to do.
                if !job::is_controlled_by(&existing, &self.cron_job) || self.in_active(&existing) {
                    return None;
                }
                existing
            }
            Created::Created(job) => {
                self.event(EventType::Normal, "SuccessfulCreate", format!("Created job {}", name(&job)));
                job
            }
        };
        let status = self.cron_job.status.get_or_insert_with(CronJobStatus::default);
        status.active.get_or_insert_with(Vec::new).push(job_reference(&job));
        status.last_schedule_time = Some(Time(start.scheduled));
        self.update_status = true;
        let schedule = self.schedule.as_ref()?;
        Some(next_schedule_time_duration(&self.cron_job, self.now, schedule))
    }

    // === 6. the end ===

    /// The events and the status to write.
    pub fn finish(self) -> Finished {
        let update_status = self.update_status.then(|| Box::new(self.cron_job));
        Finished { events: self.events, update_status }
    }

    // === utils ===

    fn in_active(&self, job: &Job) -> bool {
        active(&self.cron_job).iter().any(|r| r.uid == job.metadata.uid)
    }

    fn remove_active(&mut self, uid: &str) {
        if let Some(active) = self.cron_job.status.as_mut().and_then(|s| s.active.as_mut()) {
            active.retain(|r| r.uid.as_deref() != Some(uid));
        }
    }

    fn event(&mut self, type_: EventType, reason: &str, message: String) {
        let regarding = object_ref("batch/v1", "CronJob", &self.cron_job.metadata);
        self.events.push(Event { regarding, type_, reason: reason.to_owned(), message });
    }
}

/// upstream `formatSchedule`: the schedule with `TZ=<timeZone>` in front
/// when the CronJob names a zone that loads and its schedule has no `TZ`;
/// and whether it has one (upstream warns `UnsupportedSchedule`).
pub fn format_schedule(cron_job: &CronJob, options: &Options) -> (String, bool) {
    let schedule = cron_job.spec.schedule.clone();
    if schedule.contains("TZ") {
        return (schedule, true);
    }
    match cron_job.spec.time_zone.as_deref() {
        Some(zone) if load_location(zone, &options.local, &options.zones).is_ok() => {
            (format!("TZ={zone} {schedule}"), false)
        }
        _ => (schedule, false),
    }
}

/// `status.active`.
fn active(cron_job: &CronJob) -> &[ObjectReference] {
    cron_job.status.as_ref().and_then(|s| s.active.as_deref()).unwrap_or_default()
}

fn name(job: &Job) -> &str {
    job.metadata.name.as_deref().unwrap_or("")
}

fn key(job: &Job) -> JobKey {
    JobKey {
        namespace: job.metadata.namespace.clone().unwrap_or_default(),
        name: name(job).to_owned(),
        uid: job.metadata.uid.clone().unwrap_or_default(),
    }
}
