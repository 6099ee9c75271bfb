//! Upstream's unit tests: `utils_test.go` here, `cronjob_controllerv2_test.go`
//! in `sync`.

mod sync;

use std::collections::BTreeMap;

use jiff::tz::{self, TimeZone};
use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::batch::v1::{CronJob, CronJobSpec, CronJobStatus, Job, JobSpec, JobStatus, JobTemplateSpec};
use k8s_openapi::api::core::v1::{Container, PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};

use super::job::{SCHEDULED_TIMESTAMP_ANNOTATION, by_start_time, job_from_template, job_name};
use super::schedule::{Schedule, parse_standard};
use super::times::next_schedule_time_duration;
use super::times::{Missed, MostRecent, NEXT_SCHEDULE_DELTA, most_recent_schedule_time, next_schedule_time};
use super::{OnUpdate, Options, on_update};

// === utils ===

pub(super) fn at(text: &str) -> Timestamp {
    text.parse().unwrap_or_else(|e| panic!("{text}: {e}"))
}

/// upstream `topOfTheHour`: 2016-05-19T10:00:00Z.
pub(super) fn top_of_the_hour() -> Timestamp {
    at("2016-05-19T10:00:00Z")
}

/// upstream `deltaTimeAfterTopOfTheHour`.
pub(super) fn after_top(d: SignedDuration) -> Timestamp {
    top_of_the_hour() + d
}

pub(super) fn mins(n: i64) -> SignedDuration {
    SignedDuration::from_mins(n)
}

pub(super) fn hours(n: i64) -> SignedDuration {
    SignedDuration::from_hours(n)
}

pub(super) fn delta() -> SignedDuration {
    SignedDuration::try_from(NEXT_SCHEDULE_DELTA).unwrap_or_default()
}

pub(super) fn options() -> Options {
    Options { local: TimeZone::UTC, zones: tz::db().clone() }
}

pub(super) fn schedule(spec: &str) -> Schedule {
    parse_standard(spec, &TimeZone::UTC, tz::db()).unwrap_or_else(|e| panic!("{spec}: {e}"))
}

pub(super) fn labels(pairs: &[(&str, &str)]) -> Option<BTreeMap<String, String>> {
    Some(pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect())
}

/// upstream `jobSpec`.
pub(super) fn job_spec() -> JobSpec {
    JobSpec {
        parallelism: Some(1),
        completions: Some(1),
        template: PodTemplateSpec {
            metadata: Some(ObjectMeta { labels: labels(&[("foo", "bar")]), ..ObjectMeta::default() }),
            spec: Some(PodSpec {
                containers: vec![Container { image: Some("foo/bar".into()), ..Container::default() }],
                ..PodSpec::default()
            }),
        },
        ..JobSpec::default()
    }
}

/// upstream `cronJob()`.
pub(super) fn cron_job() -> CronJob {
    CronJob {
        metadata: ObjectMeta {
            name: Some("mycronjob".into()),
            namespace: Some("snazzycats".into()),
            uid: Some("1a2b3c".into()),
            creation_timestamp: Some(Time(at("2016-05-19T09:59:00Z"))),
            ..ObjectMeta::default()
        },
        spec: CronJobSpec {
            schedule: "* * * * ?".into(),
            concurrency_policy: Some("Allow".into()),
            job_template: JobTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: labels(&[("a", "b")]),
                    annotations: labels(&[("x", "y")]),
                    ..ObjectMeta::default()
                }),
                spec: Some(job_spec()),
            },
            ..CronJobSpec::default()
        },
        status: None,
    }
}

/// A CronJob with only `schedule`, `creationTimestamp`, a last schedule
/// time and a starting deadline, as utils_test.go builds them.
fn scheduled(spec: &str, created: Timestamp, last: Option<Timestamp>, deadline: Option<i64>) -> CronJob {
    CronJob {
        metadata: ObjectMeta { creation_timestamp: Some(Time(created)), ..ObjectMeta::default() },
        spec: CronJobSpec { schedule: spec.into(), starting_deadline_seconds: deadline, ..CronJobSpec::default() },
        status: Some(CronJobStatus { last_schedule_time: last.map(Time), ..CronJobStatus::default() }),
    }
}

// === utils_test.go ===

#[test]
fn get_job_from_template2() {
    // upstream TestGetJobFromTemplate2.
    let scheduled = top_of_the_hour();
    let cases = [
        (Some("UTC"), labels(&[("x", "y")]), "2016-05-19T10:00:00Z", 2),
        (None, labels(&[("x", "y")]), "2016-05-19T10:00:00Z", 2),
        (Some("Europe/Rome"), labels(&[("x", "y"), ("z", "x")]), "2016-05-19T12:00:00+02:00", 3),
    ];
    for (zone, annotations, stamp, count) in cases {
        let mut cj = cron_job();
        let spec = &mut cj.spec;
        spec.time_zone = zone.map(str::to_owned);
        if let Some(meta) = spec.job_template.metadata.as_mut() {
            meta.annotations = annotations;
        }
        let location = super::schedule::load_location(zone.unwrap_or(""), &TimeZone::UTC, tz::db()).expect("zone");
        let job = job_from_template(&cj, scheduled, &location);
        let name = job.metadata.name.as_deref().unwrap_or("");
        assert!(name.starts_with("mycronjob-"), "{name}");
        assert_eq!(name, "mycronjob-24394200");
        assert_eq!(job.metadata.labels, labels(&[("a", "b")]));
        let annotations = job.metadata.annotations.unwrap_or_default();
        assert_eq!(annotations.len(), count, "{zone:?}");
        assert_eq!(annotations.get(SCHEDULED_TIMESTAMP_ANNOTATION).map(String::as_str), Some(stamp), "{zone:?}");
        let owner = &job.metadata.owner_references.unwrap_or_default()[0];
        assert_eq!(
            (owner.api_version.as_str(), owner.kind.as_str(), owner.name.as_str(), owner.uid.as_str()),
            ("batch/v1", "CronJob", "mycronjob", "1a2b3c")
        );
        assert_eq!((owner.controller, owner.block_owner_deletion), (Some(true), Some(true)));
        assert_eq!(job.spec, Some(job_spec()));
    }
}

#[test]
fn next_schedule_time_cases() {
    // upstream TestNextScheduleTime, cases 1 to 8.
    let t1 = top_of_the_hour();
    let t2 = after_top(hours(1));
    let sched = schedule("0 * * * ?");
    let at_or_none = |cj: &CronJob, now| next_schedule_time(cj, now, &sched).map(|s| s.map(|(t, _)| t));
    // 1: no known start times, none needed yet.
    let cj = scheduled("0 * * * ?", t1 - mins(10), None, None);
    assert_eq!(at_or_none(&cj, t1 - mins(7)), Ok(None));
    // 2: no known start times, one needed.
    assert_eq!(at_or_none(&cj, t1 + SignedDuration::from_secs(2)), Ok(Some(t1)));
    // 3: known LastScheduleTime, no start needed.
    let cj = scheduled("0 * * * ?", t1 - mins(10), Some(t1), None);
    assert_eq!(at_or_none(&cj, t1 + mins(2)), Ok(None));
    // 4: known LastScheduleTime, a start needed.
    assert_eq!(at_or_none(&cj, t2 + mins(5)), Ok(Some(t2)));
    // 5: known LastScheduleTime, two starts needed.
    let cj = scheduled("0 * * * ?", t1 - hours(2), Some(t1 - hours(1)), None);
    assert_eq!(at_or_none(&cj, t2 + mins(5)), Ok(Some(t2)));
    // 6: now is way ahead of the last start time, no deadline.
    let far = t2 + hours(10 * 24);
    assert!(matches!(at_or_none(&cj, far), Ok(Some(_))));
    // 7: the same with a short deadline.
    let cj = scheduled("0 * * * ?", t1 - hours(2), Some(t1 - hours(1)), Some(2 * 60 * 60));
    assert!(matches!(at_or_none(&cj, far), Ok(Some(_))));
    // 8: the error of a rogue schedule is passed up.
    let cj = scheduled("59 23 31 2 *", t1 + SignedDuration::from_secs(10), None, None);
    assert!(next_schedule_time(&cj, after_top(hours(1)), &schedule("59 23 31 2 *")).is_err());
}

#[test]
fn by_job_start_time() {
    // upstream TestByJobStartTime.
    let job = |name: &str, start: Option<&str>| Job {
        metadata: ObjectMeta { name: Some(name.into()), ..ObjectMeta::default() },
        status: Some(JobStatus { start_time: start.map(|s| Time(at(s))), ..JobStatus::default() }),
        ..Job::default()
    };
    let (now, later) = (Some("2018-01-01T02:03:04Z"), Some("2019-01-01T02:03:04Z"));
    let cases = [
        ("both have nil start times", vec![job("b", None), job("a", None)], ["a", "b"]),
        ("only the first has a nil start time", vec![job("a", None), job("b", now)], ["b", "a"]),
        ("only the second has a nil start time", vec![job("a", now), job("b", None)], ["a", "b"]),
        ("both have non-nil, equal start time", vec![job("b", now), job("a", now)], ["a", "b"]),
        ("both have non-nil, different start time", vec![job("a", later), job("b", now)], ["b", "a"]),
    ];
    for (name, mut jobs, expected) in cases {
        jobs.sort_by(by_start_time);
        let names: Vec<_> = jobs.iter().map(|j| j.metadata.name.as_deref().unwrap_or("")).collect();
        assert_eq!(names, expected, "{name}");
    }
}

#[test]
fn most_recent_schedule_time_cases() {
    // upstream TestMostRecentScheduleTime.
    let top = top_of_the_hour();
    let half = after_top(mins(30));
    let minute = after_top(mins(1));
    type Case = (&'static str, CronJob, bool, Timestamp, Timestamp, Option<Timestamp>, Missed);
    let cases: Vec<Case> = vec![
        (
            "now before next schedule",
            scheduled("0 * * * *", top, None, None),
            false,
            top + SignedDuration::from_secs(30),
            top,
            None,
            Missed::None,
        ),
        (
            "now just after next schedule",
            scheduled("0 * * * *", top, None, None),
            false,
            top + mins(61),
            top,
            Some(after_top(mins(60))),
            Missed::None,
        ),
        (
            "missed 5 schedules",
            scheduled("0 * * * *", after_top(SignedDuration::from_secs(10)), None, None),
            false,
            after_top(mins(301)),
            after_top(SignedDuration::from_secs(10)),
            Some(after_top(mins(300))),
            Missed::Few,
        ),
        (
            "complex schedule",
            scheduled("30 6-16/4 * * 1-5", top, Some(half), None),
            false,
            after_top(hours(24) + mins(31)),
            half,
            Some(after_top(hours(24) + mins(30))),
            Missed::Few,
        ),
        (
            "another complex schedule",
            scheduled("30 10,11,12 * * 1-5", top, Some(half), None),
            false,
            after_top(hours(30) + mins(30)),
            half,
            None,
            Missed::Few,
        ),
        (
            "complex schedule with longer diff between executions",
            scheduled("30 6-16/4 * * 1-5", top, Some(half), None),
            false,
            after_top(hours(96) + mins(31)),
            half,
            Some(after_top(hours(96) + mins(30))),
            Missed::Few,
        ),
        (
            "complex schedule with shorter diff between executions",
            scheduled("30 6-16/4 * * 1-5", top, None, None),
            false,
            after_top(hours(24) + mins(31)),
            top,
            Some(after_top(hours(24) + mins(30))),
            Missed::Few,
        ),
        (
            "@every schedule",
            scheduled("@every 1h", after_top(mins(-59)), Some(minute), Some(10)),
            false,
            after_top(hours(7 * 24)),
            minute,
            Some(after_top(hours(6 * 24 + 23) + mins(1))),
            Missed::Many,
        ),
        (
            "earliestTime being CreationTimestamp and LastScheduleTime",
            scheduled("0 * * * *", top, Some(top), None),
            false,
            after_top(SignedDuration::from_secs(30)),
            top,
            None,
            Missed::None,
        ),
        (
            "earliestTime being LastScheduleTime",
            scheduled("*/5 * * * *", top, Some(half), None),
            false,
            after_top(mins(31)),
            half,
            None,
            Missed::None,
        ),
        (
            "earliestTime being LastScheduleTime (within StartingDeadlineSeconds)",
            scheduled("*/5 * * * *", top, Some(half), Some(60)),
            false,
            after_top(mins(31)),
            half,
            None,
            Missed::None,
        ),
        (
            "earliestTime being LastScheduleTime (outside StartingDeadlineSeconds)",
            scheduled("*/5 * * * *", top, Some(half), Some(60)),
            true,
            after_top(mins(32)),
            after_top(mins(31)),
            None,
            Missed::None,
        ),
    ];
    for (name, cj, include_sds, now, earliest, recent, missed) in cases {
        let sched = schedule(&cj.spec.schedule);
        let got = most_recent_schedule_time(&cj, now, &sched, include_sds);
        assert_eq!(got, Ok(MostRecent { earliest, most_recent: recent, missed }), "{name}");
    }
    // "rogue cronjob": an error.
    let rogue = scheduled("59 23 31 2 *", after_top(SignedDuration::from_secs(10)), None, None);
    assert!(most_recent_schedule_time(&rogue, after_top(hours(1)), &schedule("59 23 31 2 *"), false).is_err());
}

#[test]
fn next_schedule_time_duration_cases() {
    // upstream TestNextScheduleTimeDuration.
    let top = top_of_the_hour();
    let cases = [
        (
            "complex schedule skipping weekend",
            scheduled("30 6-16/4 * * 1-5", top, Some(after_top(mins(30))), None),
            after_top(hours(24) + mins(31)),
            hours(3) + mins(59),
        ),
        (
            "another complex schedule skipping weekend",
            scheduled("30 10,11,12 * * 1-5", top, Some(after_top(mins(30))), None),
            after_top(hours(30) + mins(30)),
            hours(66),
        ),
        (
            "once a week cronjob, missed two runs",
            scheduled("0 12 * * 4", top, Some(after_top(hours(2))), None),
            after_top(hours(19 * 24 + 1) + mins(30)),
            hours(48) + mins(30),
        ),
        ("no previous run of a cronjob", scheduled("0 12 * * 5", top, None, None), after_top(hours(6)), hours(20)),
    ];
    for (name, cj, now, expected) in cases {
        let sched = schedule(&cj.spec.schedule);
        assert_eq!(next_schedule_time_duration(&cj, now, &sched), expected + delta(), "{name}");
    }
}

#[test]
fn missed_runs_are_counted_over_calendar_ends() {
    // Missed-run counting across a month end and a leap day: a daily job
    // last run on 2024-02-27 and looked at on 2024-03-02 12:00 starts the
    // 2024-03-02 run, four missed (27th excluded: 28, 29, 1, 2).
    let cj = scheduled("0 0 * * *", at("2024-01-01T00:00:00Z"), Some(at("2024-02-27T00:00:00Z")), None);
    let got = most_recent_schedule_time(&cj, at("2024-03-02T12:00:00Z"), &schedule("0 0 * * *"), true);
    assert_eq!(got.map(|m| (m.most_recent, m.missed)), Ok((Some(at("2024-03-02T00:00:00Z")), Missed::Few)));
    // 101 missed minutes are many, 100 are few.
    let last = at("2024-01-01T00:00:00Z");
    let cj = scheduled("* * * * *", last, Some(last), None);
    let missed =
        |n: i64| most_recent_schedule_time(&cj, last + mins(n), &schedule("* * * * *"), true).map(|m| m.missed);
    assert_eq!(missed(100), Ok(Missed::Few));
    assert_eq!(missed(101), Ok(Missed::Many));
    // A yearly job in a leap year's February 29 schedule: the next after
    // 2024-02-29 is 2028-02-29.
    let cj = scheduled("0 0 29 2 *", at("2024-01-01T00:00:00Z"), Some(at("2024-02-29T00:00:00Z")), None);
    let wait = next_schedule_time_duration(&cj, at("2024-03-01T00:00:00Z"), &schedule("0 0 29 2 *"));
    assert_eq!(wait, at("2028-02-29T00:00:00Z").duration_since(at("2024-03-01T00:00:00Z")) + delta());
}

#[test]
fn job_names_are_minutes_since_the_epoch() {
    let cj = cron_job();
    assert_eq!(job_name(&cj, at("2016-05-19T10:00:00Z")), "mycronjob-24394200");
    assert_eq!(job_name(&cj, at("2016-05-19T10:00:59Z")), "mycronjob-24394200");
    assert_eq!(job_name(&cj, at("2016-05-19T10:01:00Z")), "mycronjob-24394201");
}

#[test]
fn update_cron_job() {
    // upstream TestControllerV2UpdateCronJob: `now` a second before the
    // hour, the last schedule time a minute before it.
    let now = at("2016-05-19T09:59:59Z");
    let last = at("2016-05-19T09:59:00Z");
    let with = |spec: &str, zone: Option<&str>, label: &str| {
        let mut cj = cron_job();
        cj.metadata.creation_timestamp = None;
        let s = &mut cj.spec;
        s.schedule = spec.into();
        s.time_zone = zone.map(str::to_owned);
        if let Some(meta) = s.job_template.metadata.as_mut() {
            meta.labels = labels(&[("a", label)]);
        }
        cj.status = Some(CronJobStatus { last_schedule_time: Some(Time(last)), ..CronJobStatus::default() });
        cj
    };
    let ny = Some("America/New_York");
    let cases = [
        ("spec.template changed", with("", None, "b"), with("", None, "foo"), OnUpdate::Now),
        (
            "spec.schedule changed",
            with("30 * * * *", None, "b"),
            with("*/1 * * * *", None, "foo"),
            OnUpdate::After(SignedDuration::from_secs(1) + delta()),
        ),
        (
            "spec.schedule with @every changed - cadence decrease",
            with("@every 1m", None, "b"),
            with("@every 3m", None, "foo"),
            OnUpdate::After(mins(2) + SignedDuration::from_secs(1) + delta()),
        ),
        (
            "spec.schedule with @every changed - cadence increase",
            with("@every 3m", None, "b"),
            with("@every 1m", None, "foo"),
            OnUpdate::After(SignedDuration::from_secs(1) + delta()),
        ),
        ("spec.timeZone not changed", with("", ny, "b"), with("", ny, "foo"), OnUpdate::Now),
    ];
    for (name, old, new, expected) in cases {
        assert_eq!(on_update(&old, &new, now, &options()), expected, "{name}");
    }
    // "spec.timeZone changed" with an empty schedule: upstream's event and
    // no queueing.
    match on_update(&with("", ny, "b"), &with("", None, "foo"), now, &options()) {
        OnUpdate::Unparseable(event) => {
            assert_eq!(
                (event.reason.as_str(), event.message.as_str()),
                ("UnParseableCronJobSchedule", "unparseable schedule for cronjob: ")
            );
        }
        other => panic!("spec.timeZone changed: {other:?}"),
    }
}
