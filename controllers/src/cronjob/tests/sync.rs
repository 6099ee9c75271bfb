//! upstream `cronjob_controllerv2_test.go`: the `syncCronJob` table and
//! the tests that go through `sync`, with a driver stand-in playing
//! upstream's `fakeJobControl` and `fakeCJControl`.

use std::sync::Arc;

use jiff::tz::TimeZone;
use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::batch::v1::{CronJob, CronJobStatus, Job, JobCondition, JobStatus};
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference, Time};

use super::{after_top, at, cron_job, delta, hours, mins, options, top_of_the_hour};
use crate::cronjob::job::{job_from_template, job_reference, jobs_to_be_reconciled};
use crate::cronjob::{Created, Decision, JobKey, Sync};
use crate::plan::EventType;

// === the driver stand-in ===

/// How the fake API server answers.
#[derive(Clone, Default)]
struct Api {
    /// The CronJob read live.
    live: Option<CronJob>,
    /// What a live read of a Job answers (upstream `fakeJobControl.Job`);
    /// `None` is NotFound.
    job: Option<Job>,
    /// A live Job read fails (`fakeJobControl.Err`).
    get_error: bool,
    /// How a create fails (`fakeJobControl.CreateErr`).
    create_error: Option<CreateError>,
}

#[derive(Clone, Copy)]
enum CreateError {
    AlreadyExists,
    NamespaceTerminating,
    Internal,
}

/// What one sync did.
#[derive(Debug, Default)]
struct Outcome {
    requeue: Option<SignedDuration>,
    error: bool,
    created: Vec<Job>,
    deleted: Vec<String>,
    events: Vec<(EventType, String)>,
    status: Option<CronJob>,
}

/// One sync, as the driver walks it (`src/drivers/cronjob`), with `api`
/// answering.
fn run(cron_job: &CronJob, jobs: &[Job], now: Timestamp, api: &Api) -> Outcome {
    let mut out = Outcome::default();
    let jobs: Vec<_> = jobs.iter().cloned().map(|j| Arc::new(kcm_objects::Job::new(j))).collect();
    let mut sync = Sync::new(cron_job, jobs, now);
    let failed = 'sync: {
        for key in sync.history_deletions() {
            out.deleted.push(key.name.clone());
            sync.deleted(&key, Ok(()));
        }
        let live = if sync.needs_live_cron_job() { api.live.clone() } else { None };
        sync.reconcile_jobs(live.as_ref());
        for gone in sync.unseen_active() {
            match (&api.job, api.get_error) {
                (_, true) => break 'sync true,
                (None, false) => sync.missing(&gone),
                (Some(_), false) => {}
            }
        }
        match sync.decide(&options()) {
            Decision::Done(requeue) => out.requeue = requeue,
            Decision::Start(start) => {
                for active in &start.replace {
                    if api.get_error {
                        sync.replace_read_failed("request is invalid");
                        break 'sync true;
                    }
                    out.deleted.push(active.name.clone().unwrap_or_default());
                    sync.replaced(&key_of(active), Ok(()));
                }
                let outcome = match api.create_error {
                    None => {
                        let mut job = (*start.job).clone();
                        job.metadata.uid = Some("test-uid".into());
                        out.created.push(job.clone());
                        Created::Created(Box::new(job))
                    }
                    Some(CreateError::AlreadyExists) => match &api.job {
                        Some(job) => Created::AlreadyExists(Box::new(job.clone())),
                        None => break 'sync true,
                    },
                    Some(CreateError::NamespaceTerminating) => break 'sync true,
                    Some(CreateError::Internal) => {
                        sync.created(&start, Created::Failed("quota for # of jobs reached".into()));
                        break 'sync true;
                    }
                };
                out.requeue = sync.created(&start, outcome);
            }
        }
        false
    };
    let finished = sync.finish();
    out.error = failed;
    out.events = finished.events.into_iter().map(|e| (e.type_, e.reason)).collect();
    out.status = finished.update_status.map(|c| *c);
    out
}

fn key_of(r: &ObjectReference) -> JobKey {
    JobKey {
        namespace: r.namespace.clone().unwrap_or_default(),
        name: r.name.clone().unwrap_or_default(),
        uid: r.uid.clone().unwrap_or_default(),
    }
}

fn complete(job: &mut Job, completion: Timestamp) {
    job.status = Some(JobStatus {
        completion_time: Some(Time(completion)),
        conditions: Some(vec![JobCondition { type_: "Complete".into(), status: "True".into(), ..Default::default() }]),
        ..JobStatus::default()
    });
}

// === TestControllerV2SyncCronJob ===

const SHORT_DEAD: i64 = 10;
const MEDIUM_DEAD: i64 = 2 * 60 * 60;
const LONG_DEAD: i64 = 1_000_000;
const ERROR_SCHEDULE: &str = "obvious error schedule";
const ON_THE_HOUR: &str = "0 * * * ?";
const EVERY_HOUR: &str = "@every 1h";

fn just_after_the_prior_hour() -> Timestamp {
    at("2016-05-19T09:01:00Z")
}
fn just_before_the_prior_hour() -> Timestamp {
    at("2016-05-19T08:59:00Z")
}
fn just_after_the_hour() -> Timestamp {
    at("2016-05-19T10:01:00Z")
}
fn just_before_the_hour() -> Timestamp {
    at("2016-05-19T09:59:00Z")
}
fn just_before_the_next_hour() -> Timestamp {
    at("2016-05-19T10:59:00Z")
}
fn week_after_the_hour() -> Timestamp {
    at("2016-05-26T10:00:00Z")
}
fn secs(n: i64) -> SignedDuration {
    SignedDuration::from_secs(n)
}

#[derive(Clone)]
struct Case {
    name: &'static str,
    policy: &'static str,
    suspend: bool,
    schedule: &'static str,
    time_zone: Option<&'static str>,
    deadline: Option<i64>,
    ran_previously: bool,
    still_active: bool,
    cronjob_creation: Option<Timestamp>,
    job_creation: Timestamp,
    last_schedule: Option<Timestamp>,
    now: Timestamp,
    create_error: Option<CreateError>,
    get_error: bool,
    expect_create: bool,
    expect_delete: bool,
    expect_active: usize,
    warnings: usize,
    expect_err: bool,
    requeue: Option<SignedDuration>,
    expect_update: bool,
    not_in_lister: bool,
    in_active_status: bool,
}

fn case(name: &'static str, policy: &'static str, schedule: &'static str) -> Case {
    Case {
        name,
        policy,
        suspend: false,
        schedule,
        time_zone: None,
        deadline: None,
        ran_previously: false,
        still_active: false,
        cronjob_creation: None,
        job_creation: just_after_the_prior_hour(),
        last_schedule: None,
        now: just_before_the_hour(),
        create_error: None,
        get_error: false,
        expect_create: false,
        expect_delete: false,
        expect_active: 0,
        warnings: 0,
        expect_err: false,
        requeue: None,
        expect_update: false,
        not_in_lister: false,
        in_active_status: true,
    }
}

impl Case {
    fn now(mut self, now: Timestamp) -> Self {
        self.now = now;
        self
    }
    fn deadline(mut self, d: i64) -> Self {
        self.deadline = Some(d);
        self
    }
    fn ran(mut self) -> Self {
        self.ran_previously = true;
        self
    }
    fn active(mut self) -> Self {
        self.ran_previously = true;
        self.still_active = true;
        self
    }
    fn creates(mut self, active: usize) -> Self {
        self.expect_create = true;
        self.expect_active = active;
        self.expect_update = true;
        self
    }
    fn requeue(mut self, d: SignedDuration) -> Self {
        self.requeue = Some(d + delta());
        self
    }
    fn update(mut self) -> Self {
        self.expect_update = true;
        self
    }
    fn warnings(mut self, n: usize) -> Self {
        self.warnings = n;
        self
    }
    fn expect_active(mut self, n: usize) -> Self {
        self.expect_active = n;
        self
    }
    fn times(mut self, cronjob: Timestamp, job: Timestamp, last: Option<Timestamp>) -> Self {
        self.cronjob_creation = Some(cronjob);
        self.job_creation = job;
        self.last_schedule = last;
        self
    }
}

fn cases() -> Vec<Case> {
    let hour_less_minute = hours(1) - mins(1);
    let c = case;
    let mut cases = vec![
        c("never ran, not valid schedule, A", "Allow", ERROR_SCHEDULE).warnings(1),
        c("never ran, not valid schedule, F", "Forbid", ERROR_SCHEDULE).warnings(1),
        c("never ran, not valid schedule, R", "Forbid", ERROR_SCHEDULE).warnings(1),
        Case {
            time_zone: Some("bad timezone"),
            ..c("never ran, not valid time zone", "Allow", ON_THE_HOUR).warnings(1)
        },
        c("never ran, not time, A", "Allow", ON_THE_HOUR).requeue(mins(1)),
        c("never ran, not time, F", "Forbid", ON_THE_HOUR).requeue(mins(1)),
        c("never ran, not time, R", "Replace", ON_THE_HOUR).requeue(mins(1)),
        Case {
            time_zone: Some("America/New_York"),
            ..c("never ran, not time in zone", "Allow", ON_THE_HOUR).requeue(mins(1))
        },
        c("never ran, is time, A", "Allow", ON_THE_HOUR)
            .now(just_after_the_hour())
            .creates(1)
            .requeue(hour_less_minute),
        c("never ran, is time, F", "Forbid", ON_THE_HOUR)
            .now(just_after_the_hour())
            .creates(1)
            .requeue(hour_less_minute),
        c("never ran, is time, R", "Replace", ON_THE_HOUR)
            .now(just_after_the_hour())
            .creates(1)
            .requeue(hour_less_minute),
        Case {
            time_zone: Some("America/New_York"),
            ..c("never ran, is time in zone", "Allow", ON_THE_HOUR)
                .now(just_after_the_hour())
                .creates(1)
                .requeue(hour_less_minute)
        },
        Case {
            time_zone: Some("America/New_York"),
            ..c("never ran, is time in zone, but TZ is also set in schedule", "Allow", "TZ=UTC 0 * * * ?")
                .now(just_after_the_hour())
                .creates(1)
                .warnings(1)
                .requeue(hour_less_minute)
        },
        Case { suspend: true, ..c("never ran, is time, suspended", "Allow", ON_THE_HOUR).now(just_after_the_hour()) },
        c("never ran, is time, past deadline", "Allow", ON_THE_HOUR)
            .deadline(SHORT_DEAD)
            .now(just_after_the_hour() + mins(SHORT_DEAD + 1))
            .requeue(hour_less_minute - mins(SHORT_DEAD + 1)),
        c("never ran, is time, not past deadline", "Allow", ON_THE_HOUR)
            .deadline(LONG_DEAD)
            .now(just_after_the_hour())
            .creates(1)
            .requeue(hour_less_minute),
        c("prev ran but done, not time, A", "Allow", ON_THE_HOUR).ran().requeue(mins(1)).update(),
        c("prev ran but done, not time, F", "Forbid", ON_THE_HOUR).ran().requeue(mins(1)).update(),
        c("prev ran but done, not time, R", "Replace", ON_THE_HOUR).ran().requeue(mins(1)).update(),
        c("prev ran but done, is time, A", "Allow", ON_THE_HOUR)
            .ran()
            .now(just_after_the_hour())
            .creates(1)
            .requeue(hour_less_minute),
        Case {
            create_error: Some(CreateError::AlreadyExists),
            ..c("prev ran but done, is time, create job failed, A", "Allow", ON_THE_HOUR)
                .ran()
                .now(just_after_the_hour())
                .expect_active(1)
                .update()
        },
        Case {
            create_error: Some(CreateError::AlreadyExists),
            in_active_status: false,
            ..c(
                "prev ran but done, is time, job not present in CJ active status, create job failed, A",
                "Allow",
                ON_THE_HOUR,
            )
            .ran()
            .now(just_after_the_hour())
            .expect_active(1)
            .update()
        },
        c("prev ran but done, is time, F", "Forbid", ON_THE_HOUR)
            .ran()
            .now(just_after_the_hour())
            .creates(1)
            .requeue(hour_less_minute),
        c("prev ran but done, is time, R", "Replace", ON_THE_HOUR)
            .ran()
            .now(just_after_the_hour())
            .creates(1)
            .requeue(hour_less_minute),
        Case {
            suspend: true,
            ..c("prev ran but done, is time, suspended", "Allow", ON_THE_HOUR).ran().now(just_after_the_hour()).update()
        },
        c("prev ran but done, is time, past deadline", "Allow", ON_THE_HOUR)
            .deadline(SHORT_DEAD)
            .ran()
            .now(just_after_the_hour())
            .requeue(hour_less_minute)
            .update(),
        c("prev ran but done, is time, not past deadline", "Allow", ON_THE_HOUR)
            .deadline(LONG_DEAD)
            .ran()
            .now(just_after_the_hour())
            .creates(1)
            .requeue(hour_less_minute),
        c("still active, not time, A", "Allow", ON_THE_HOUR).active().expect_active(1).requeue(mins(1)),
        c("still active, not time, F", "Forbid", ON_THE_HOUR).active().expect_active(1).requeue(mins(1)),
        c("still active, not time, R", "Replace", ON_THE_HOUR).active().expect_active(1).requeue(mins(1)),
        c("still active, is time, A", "Allow", ON_THE_HOUR)
            .active()
            .now(just_after_the_hour())
            .creates(2)
            .requeue(hour_less_minute),
        c("still active, is time, F", "Forbid", ON_THE_HOUR)
            .active()
            .now(just_after_the_hour())
            .expect_active(1)
            .requeue(hour_less_minute),
        Case {
            expect_delete: true,
            ..c("still active, is time, R", "Replace", ON_THE_HOUR)
                .active()
                .now(just_after_the_hour())
                .creates(1)
                .requeue(hour_less_minute)
        },
        Case {
            get_error: true,
            expect_err: true,
            ..c("still active, is time, get job failed, R", "Replace", ON_THE_HOUR)
                .active()
                .now(just_after_the_hour())
                .expect_active(1)
                .warnings(1)
        },
        Case {
            suspend: true,
            ..c("still active, is time, suspended", "Allow", ON_THE_HOUR)
                .active()
                .now(just_after_the_hour())
                .expect_active(1)
        },
        c("still active, is time, past deadline", "Allow", ON_THE_HOUR)
            .deadline(SHORT_DEAD)
            .active()
            .now(just_after_the_hour())
            .expect_active(1)
            .requeue(hour_less_minute),
        c("still active, is time, not past deadline", "Allow", ON_THE_HOUR)
            .deadline(LONG_DEAD)
            .active()
            .now(just_after_the_hour())
            .creates(2)
            .requeue(hour_less_minute),
        // Too many missed starting times: the most recent is started.
        c("prev ran but done, long overdue, not past deadline, A", "Allow", ON_THE_HOUR)
            .deadline(LONG_DEAD)
            .ran()
            .now(week_after_the_hour())
            .creates(1)
            .warnings(1)
            .requeue(hours(1)),
        c("prev ran but done, long overdue, not past deadline, R", "Replace", ON_THE_HOUR)
            .deadline(LONG_DEAD)
            .ran()
            .now(week_after_the_hour())
            .creates(1)
            .warnings(1)
            .requeue(hours(1)),
        c("prev ran but done, long overdue, not past deadline, F", "Forbid", ON_THE_HOUR)
            .deadline(LONG_DEAD)
            .ran()
            .now(week_after_the_hour())
            .creates(1)
            .warnings(1)
            .requeue(hours(1)),
        c("prev ran but done, long overdue, no deadline, A", "Allow", ON_THE_HOUR)
            .ran()
            .now(week_after_the_hour())
            .creates(1)
            .warnings(1)
            .requeue(hours(1)),
        c("prev ran but done, long overdue, no deadline, R", "Replace", ON_THE_HOUR)
            .ran()
            .now(week_after_the_hour())
            .creates(1)
            .warnings(1)
            .requeue(hours(1)),
        c("prev ran but done, long overdue, no deadline, F", "Forbid", ON_THE_HOUR)
            .ran()
            .now(week_after_the_hour())
            .creates(1)
            .warnings(1)
            .requeue(hours(1)),
        c("prev ran but done, long overdue, past medium deadline, A", "Allow", ON_THE_HOUR)
            .deadline(MEDIUM_DEAD)
            .ran()
            .now(week_after_the_hour())
            .creates(1)
            .requeue(hours(1)),
        c("prev ran but done, long overdue, past short deadline, A", "Allow", ON_THE_HOUR)
            .deadline(SHORT_DEAD)
            .ran()
            .now(week_after_the_hour())
            .creates(1)
            .requeue(hours(1)),
        c("prev ran but done, long overdue, past medium deadline, R", "Replace", ON_THE_HOUR)
            .deadline(MEDIUM_DEAD)
            .ran()
            .now(week_after_the_hour())
            .creates(1)
            .requeue(hours(1)),
        c("prev ran but done, long overdue, past short deadline, R", "Replace", ON_THE_HOUR)
            .deadline(SHORT_DEAD)
            .ran()
            .now(week_after_the_hour())
            .creates(1)
            .requeue(hours(1)),
        c("prev ran but done, long overdue, past medium deadline, F", "Forbid", ON_THE_HOUR)
            .deadline(MEDIUM_DEAD)
            .ran()
            .now(week_after_the_hour())
            .creates(1)
            .requeue(hours(1)),
        c("prev ran but done, long overdue, past short deadline, F", "Forbid", ON_THE_HOUR)
            .deadline(SHORT_DEAD)
            .ran()
            .now(week_after_the_hour())
            .creates(1)
            .requeue(hours(1)),
        // Time skew: the controller sees the job created, takes no action.
        Case {
            job_creation: just_after_the_hour(),
            create_error: Some(CreateError::AlreadyExists),
            in_active_status: false,
            ..c("this ran but done, time drifted back, F", "Forbid", ON_THE_HOUR).ran().requeue(mins(1)).update()
        },
    ];
    // A slow job lister, then a slow CronJob lister.
    let missing_job = hour_less_minute - SignedDuration::from_millis(100);
    let started = top_of_the_hour() + SignedDuration::from_millis(100);
    let now = just_after_the_hour() + SignedDuration::from_millis(100);
    for policy in ["Allow", "Forbid", "Replace"] {
        let slow_jobs = c("this started but went missing, not past deadline", policy, ON_THE_HOUR);
        cases.push(Case {
            job_creation: started,
            not_in_lister: true,
            ..slow_jobs.deadline(LONG_DEAD).active().now(now).expect_active(1).requeue(missing_job)
        });
        let slow_cron_jobs =
            c("this started but is not present in cronjob active list, not past deadline", policy, ON_THE_HOUR);
        cases.push(Case {
            job_creation: started,
            in_active_status: false,
            ..slow_cron_jobs.deadline(LONG_DEAD).active().now(now).expect_active(1).requeue(missing_job)
        });
    }
    // @every schedules.
    let (bph, bh, bnh) = (just_before_the_prior_hour(), just_before_the_hour(), just_before_the_next_hour());
    let every = |name| c(name, "Allow", EVERY_HOUR);
    cases.extend([
        every("with @every schedule, never ran, not time")
            .times(bh, bh, None)
            .now(top_of_the_hour())
            .requeue(hour_less_minute),
        every("with @every schedule, never ran, is time").times(bph, bph, None).now(bh).creates(1).requeue(hours(1)),
        every("with @every schedule, never ran, is time, past deadline")
            .deadline(SHORT_DEAD)
            .times(bph, bph, None)
            .now(bh + secs(SHORT_DEAD + 1))
            .requeue(hours(1) - secs(SHORT_DEAD + 1)),
        every("with @every schedule, never ran, is time, not past deadline")
            .deadline(LONG_DEAD)
            .times(bph, bph, None)
            .now(bh + secs(SHORT_DEAD - 1))
            .creates(1)
            .requeue(hours(1) - secs(SHORT_DEAD - 1)),
        every("with @every schedule, prev ran but done, not time")
            .ran()
            .times(bph, bph, Some(bh))
            .now(top_of_the_hour())
            .requeue(hour_less_minute)
            .update(),
        every("with @every schedule, prev ran but done, is time")
            .ran()
            .times(bph, bph, Some(bh))
            .now(top_of_the_hour() + hours(1))
            .creates(1)
            .requeue(hour_less_minute),
        every("with @every schedule, prev ran but done, is time, past deadline")
            .deadline(SHORT_DEAD)
            .ran()
            .times(bph, bph, Some(bh))
            .now(bnh + secs(SHORT_DEAD + 1))
            .requeue(hours(1) - secs(SHORT_DEAD + 1))
            .update(),
        every("with @every schedule, still active, not time")
            .active()
            .times(bph, bh, Some(bh))
            .now(top_of_the_hour())
            .expect_active(1)
            .requeue(hour_less_minute),
        every("with @every schedule, still active, is time")
            .active()
            .times(bph, bph, Some(bph))
            .now(just_after_the_hour())
            .creates(2)
            .requeue(hours(1) - mins(2)),
        every("with @every schedule, still active, is time, past deadline")
            .deadline(SHORT_DEAD)
            .active()
            .times(bph, bh, Some(bh))
            .now(bnh + secs(SHORT_DEAD + 1))
            .expect_active(1)
            .requeue(hours(1) - secs(SHORT_DEAD + 1)),
        every("with @every schedule, still active, is time, not past deadline")
            .deadline(LONG_DEAD)
            .active()
            .times(bph, bh, Some(bh))
            .now(bnh + secs(SHORT_DEAD - 1))
            .creates(2)
            .requeue(hours(1) - secs(SHORT_DEAD - 1)),
        every("with @every schedule, prev ran but done, long overdue, no deadline")
            .ran()
            .times(just_after_the_prior_hour(), just_after_the_prior_hour(), Some(just_after_the_hour()))
            .now(week_after_the_hour())
            .creates(1)
            .warnings(1)
            .requeue(mins(1)),
        // Upstream's table says one active here, which it never checks: the
        // Job is finished, none is active.
        every("with @every schedule, prev ran but done, long overdue, past deadline")
            .deadline(SHORT_DEAD)
            .ran()
            .times(just_after_the_prior_hour(), just_after_the_prior_hour(), Some(just_after_the_hour()))
            .now(week_after_the_hour() + mins(1) + secs(SHORT_DEAD + 1))
            .requeue(hours(1) - secs(SHORT_DEAD + 1))
            .update(),
    ]);
    cases.push(Case {
        create_error: Some(CreateError::NamespaceTerminating),
        expect_err: true,
        in_active_status: false,
        ..c("do nothing if the namespace is terminating", "Allow", ON_THE_HOUR).active().now(just_after_the_hour())
    });
    cases
}

#[test]
fn sync_cron_job() {
    for tc in cases() {
        let name = tc.name;
        let mut cj = cron_job();
        let spec = &mut cj.spec;
        spec.concurrency_policy = Some(tc.policy.into());
        spec.suspend = Some(tc.suspend);
        spec.schedule = tc.schedule.into();
        spec.time_zone = tc.time_zone.map(str::to_owned);
        spec.starting_deadline_seconds = tc.deadline;
        let mut real = cj.clone();
        let mut jobs = Vec::new();
        let mut job = None;
        if tc.ran_previously {
            cj.metadata.creation_timestamp = Some(Time(tc.cronjob_creation.unwrap_or_else(just_before_the_prior_hour)));
            let last = tc.last_schedule.unwrap_or_else(just_after_the_prior_hour);
            cj.status = Some(CronJobStatus { last_schedule_time: Some(Time(last)), ..CronJobStatus::default() });
            let mut j = job_from_template(&cj, tc.job_creation, &TimeZone::UTC);
            j.metadata.uid = Some("1234".into());
            if tc.still_active {
                let reference = job_reference(&j);
                if tc.in_active_status {
                    cj.status.get_or_insert_default().active = Some(vec![reference.clone()]);
                }
                real.status.get_or_insert_default().active = Some(vec![reference]);
            } else {
                complete(&mut j, tc.job_creation + secs(10));
            }
            if !tc.not_in_lister {
                jobs.push(j.clone());
            }
            job = Some(j);
        } else {
            cj.metadata.creation_timestamp = Some(Time(tc.cronjob_creation.unwrap_or_else(just_before_the_hour)));
        }
        let api = Api { live: Some(real), job, get_error: tc.get_error, create_error: tc.create_error };
        let out = run(&cj, &jobs, tc.now, &api);

        assert_eq!(out.error, tc.expect_err, "{name}: error");
        if tc.requeue.is_some() {
            assert_eq!(out.requeue, tc.requeue, "{name}: requeue");
        }
        assert_eq!(out.status.is_some(), tc.expect_update, "{name}: status update");
        if tc.ran_previously && !tc.still_active {
            let expected = Some(Time(tc.job_creation + secs(10)));
            let status = out.status.as_ref().and_then(|c| c.status.as_ref());
            assert_eq!(status.and_then(|s| s.last_successful_time.clone()), expected, "{name}: lastSuccessfulTime");
        }
        assert_eq!(out.created.len(), usize::from(tc.expect_create), "{name}: creates");
        for created in &out.created {
            let owner = created.metadata.owner_references.as_ref().and_then(|r| r.first()).expect("controller ref");
            assert_eq!(
                (
                    owner.api_version.as_str(),
                    owner.kind.as_str(),
                    owner.name.as_str(),
                    owner.uid.as_str(),
                    owner.controller
                ),
                ("batch/v1", "CronJob", "mycronjob", "1a2b3c", Some(true)),
                "{name}"
            );
        }
        assert_eq!(out.deleted.len(), usize::from(tc.expect_delete), "{name}: deletes");
        let mut expected_events = usize::from(tc.expect_create) + usize::from(tc.expect_delete) + tc.warnings;
        if name == "still active, is time, F" {
            // The only case with an event for not scheduling.
            expected_events += 1;
        }
        assert_eq!(out.events.len(), expected_events, "{name}: events {:?}", out.events);
        let warnings = out.events.iter().filter(|(t, _)| *t == EventType::Warning).count();
        assert_eq!(warnings, tc.warnings, "{name}: warnings {:?}", out.events);
        if let Some(written) = &out.status {
            let active = written.status.as_ref().and_then(|s| s.active.as_ref()).map_or(0, Vec::len);
            assert_eq!(active, tc.expect_active, "{name}: active");
        }
    }
}

// === the tests through `sync` ===

fn owned_job(name: &str, namespace: &str, owner: &str, labels: &[(&str, &str)]) -> Job {
    Job {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some(namespace.into()),
            labels: super::labels(labels),
            owner_references: (!owner.is_empty()).then(|| {
                vec![OwnerReference { name: owner.into(), controller: Some(true), ..OwnerReference::default() }]
            }),
            ..ObjectMeta::default()
        },
        ..Job::default()
    }
}

#[test]
fn get_jobs_to_be_reconciled() {
    // upstream TestControllerV2GetJobsToBeReconciled.
    let fooer = |labels: &[(&str, &str)]| {
        let mut cj = cron_job();
        cj.metadata.namespace = Some("foo-ns".into());
        cj.metadata.name = Some("fooer".into());
        if let Some(meta) = cj.spec.job_template.metadata.as_mut() {
            meta.labels = super::labels(labels);
        }
        cj
    };
    let names = |cj: &CronJob, jobs: &[Job]| -> Vec<String> {
        jobs_to_be_reconciled(cj, &jobs.iter().cloned().map(|j| Arc::new(kcm_objects::Job::new(j))).collect::<Vec<_>>())
            .into_iter()
            .map(|j| j.metadata.name.clone().unwrap_or_default())
            .collect()
    };
    let no_ref = [
        owned_job("foo", "foo-ns", "", &[]),
        owned_job("foo1", "foo-ns", "", &[]),
        owned_job("foo2", "foo-ns", "", &[]),
    ];
    assert!(names(&fooer(&[]), &no_ref).is_empty(), "test getting jobs in namespace without controller reference");
    let one_ref = [
        owned_job("foo", "foo-ns", "", &[]),
        owned_job("foo1", "foo-ns", "fooer", &[]),
        owned_job("foo2", "foo-ns", "", &[]),
    ];
    assert_eq!(names(&fooer(&[]), &one_ref), ["foo1"], "test getting jobs in namespace with a controller reference");
    let other_ns = [
        owned_job("foo", "bar-ns", "", &[]),
        owned_job("foo1", "bar-ns", "", &[]),
        owned_job("foo2", "bar-ns", "", &[]),
    ];
    assert!(names(&fooer(&[]), &other_ns).is_empty(), "test getting jobs in other namespaces");
    let relabelled = [
        owned_job("foo-fooer-owner-ref", "foo-ns", "fooer", &[("key", "different-value")]),
        owned_job("foo-other-owner-ref", "foo-ns", "another-cronjob", &[("key", "different-value")]),
    ];
    assert_eq!(
        names(&fooer(&[("key", "value")]), &relabelled),
        ["foo-fooer-owner-ref"],
        "test getting jobs whose labels do not match job template"
    );
}

#[test]
fn cleanup_finished_jobs() {
    // upstream TestControllerV2CleanupFinishedJobs.
    let fooer = |limit: i32| {
        let mut cj = cron_job();
        cj.metadata.namespace = Some("foo-ns".into());
        cj.metadata.name = Some("fooer".into());
        let spec = &mut cj.spec;
        spec.schedule = ON_THE_HOUR.into();
        spec.successful_jobs_history_limit = Some(limit);
        cj.status = Some(CronJobStatus {
            last_schedule_time: Some(Time(just_after_the_prior_hour())),
            ..CronJobStatus::default()
        });
        cj
    };
    let finished = |name: &str, start: Timestamp| {
        let mut job = owned_job(name, "foo-ns", "fooer", &[]);
        job.status = Some(JobStatus {
            start_time: Some(Time(start)),
            conditions: Some(vec![JobCondition {
                type_: "Complete".into(),
                status: "True".into(),
                ..Default::default()
            }]),
            ..JobStatus::default()
        });
        job
    };
    // Jobs are still deleted when the CronJob cannot create Jobs (quota
    // reached), avoiding a deadlock.
    let jobs = [
        finished("finished-job-started-hour-ago", just_before_the_prior_hour()),
        finished("finished-job-started-minute-ago", just_before_the_hour()),
    ];
    let api = Api { create_error: Some(CreateError::Internal), ..Api::default() };
    let out = run(&fooer(1), &jobs, just_after_the_hour(), &api);
    assert_eq!(out.deleted, ["finished-job-started-hour-ago"]);
    assert!(out.error);
    assert!(out.events.iter().any(|(_, reason)| reason == "FailedCreate"));
    // Not deleted below the limit.
    let jobs = [finished("finished-job-started-hour-ago", just_before_the_prior_hour())];
    let out = run(&fooer(2), &jobs, just_before_the_hour(), &Api::default());
    assert!(out.deleted.is_empty());
}

#[test]
fn failed_jobs_history_limit() {
    // The failed limit counts Failed Jobs only; a limit of 0 keeps none.
    let mut cj = cron_job();
    let spec = &mut cj.spec;
    spec.failed_jobs_history_limit = Some(0);
    spec.successful_jobs_history_limit = Some(3);
    let job = |name: &str, kind: &str| {
        let mut job = owned_job(name, "snazzycats", "mycronjob", &[]);
        job.status = Some(JobStatus {
            conditions: Some(vec![JobCondition { type_: kind.into(), status: "True".into(), ..Default::default() }]),
            ..JobStatus::default()
        });
        job
    };
    let jobs = [job("failed-a", "Failed"), job("done-b", "Complete"), job("failed-c", "Failed")];
    let out = run(&cj, &jobs, just_before_the_hour(), &Api::default());
    assert_eq!(out.deleted, ["failed-a", "failed-c"]);
    let deletes = out.events.iter().filter(|(_, r)| r == "SuccessfulDelete").count();
    assert_eq!(deletes, 2);
}

fn already_exists_setup(owned: bool) -> (CronJob, Job) {
    let mut cj = cron_job();
    let spec = &mut cj.spec;
    spec.concurrency_policy = Some("Forbid".into());
    spec.schedule = EVERY_HOUR.into();
    cj.status = Some(CronJobStatus {
        last_schedule_time: Some(Time(just_before_the_prior_hour())),
        active: Some(vec![]),
        ..CronJobStatus::default()
    });
    let mut job = job_from_template(&cj, just_after_the_prior_hour(), &TimeZone::UTC);
    job.metadata.uid = Some("1234".into());
    if !owned {
        job.metadata.owner_references = Some(vec![]);
    }
    (cj, job)
}

#[test]
fn job_already_exists_but_not_in_active_status() {
    // upstream TestControllerV2JobAlreadyExistsButNotInActiveStatus: the
    // Job made before a lost status write is put back on the active list.
    let (cj, job) = already_exists_setup(true);
    let api = Api { job: Some(job.clone()), create_error: Some(CreateError::AlreadyExists), ..Api::default() };
    let out = run(&cj, &[], just_before_the_hour(), &api);
    let active = out.status.and_then(|c| c.status).and_then(|s| s.active).unwrap_or_default();
    assert_eq!(active, vec![job_reference(&job)]);
}

#[test]
fn job_already_exists_but_different_owner() {
    // upstream TestControllerV2JobAlreadyExistsButDifferentOwner.
    let (cj, job) = already_exists_setup(false);
    let api = Api { job: Some(job), create_error: Some(CreateError::AlreadyExists), ..Api::default() };
    let out = run(&cj, &[], just_before_the_hour(), &api);
    assert!(out.status.is_none());
    assert_eq!(out.requeue, None);
}

#[test]
fn events_read_as_upstreams() {
    // The texts users see, for the reasons this controller records.
    let mut cj = cron_job();
    cj.spec.schedule = ON_THE_HOUR.into();
    cj.metadata.creation_timestamp = Some(Time(just_before_the_hour()));
    let out = run(&cj, &[], just_after_the_hour(), &Api::default());
    let created = out.created[0].metadata.name.clone().unwrap_or_default();
    assert_eq!(created, "mycronjob-24394200");
    let mut sync = Sync::new(&cj, vec![], just_after_the_hour());
    sync.deleted(&JobKey { namespace: "snazzycats".into(), name: "j".into(), uid: "u".into() }, Err("boom".into()));
    sync.missing(&ObjectReference { name: Some("gone".into()), uid: Some("g".into()), ..Default::default() });
    let events: Vec<_> = sync.finish().events.into_iter().map(|e| (e.reason, e.message)).collect();
    assert_eq!(
        events,
        [
            ("FailedDelete".to_owned(), "Deleted job: boom".to_owned()),
            ("MissingJob".to_owned(), "Active job went missing: gone".to_owned()),
        ]
    );
    // Past the starting deadline: the earliest time looked from is
    // `now - startingDeadlineSeconds`, so the missed 10:00 is not found and
    // nothing is recorded (upstream's `MissSchedule` needs a schedule time
    // before that, which the search no longer returns).
    cj.spec.starting_deadline_seconds = Some(10);
    let mut sync = Sync::new(&cj, vec![], after_top(mins(5)));
    assert_eq!(sync.decide(&options()), Decision::Done(Some(mins(55) + delta())));
    assert!(sync.finish().events.is_empty());
}
