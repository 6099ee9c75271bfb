//! Upstream's `TestTimeLeft` (`ttlafterfinished_controller_test.go`), with
//! its case names, then what `processTTL` and `jobFinishTime` decide on
//! the Jobs the controller meets (being deleted, a zero
//! `lastTransitionTime`, clocks skewed, both conditions).

use k8s_openapi::api::batch::v1::{JobCondition, JobSpec, JobStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};

use super::*;
use crate::common::job_finished::{COMPLETE, FAILED, finished_condition};

// === utils ===

/// A fixed `now`: the decisions read no clock.
fn now() -> Timestamp {
    "2026-12-02T03:00:00Z".parse().expect("a timestamp")
}

fn secs(n: i64) -> SignedDuration {
    SignedDuration::from_secs(n)
}

fn condition(type_: &str, status: &str, at: Option<Timestamp>) -> JobCondition {
    JobCondition {
        type_: type_.into(),
        status: status.into(),
        last_transition_time: at.map(Time),
        ..JobCondition::default()
    }
}

/// Upstream `newJob`: `default/foobar`, Complete at `completed` and Failed
/// at `failed` when given, the TTL when given.
fn new_job(completed: Option<Timestamp>, failed: Option<Timestamp>, ttl: Option<i32>) -> Job {
    let conditions: Vec<JobCondition> = [(COMPLETE, completed), (FAILED, failed)]
        .into_iter()
        .filter_map(|(type_, at)| at.map(|at| condition(type_, "True", Some(at))))
        .collect();
    Job {
        metadata: ObjectMeta {
            name: Some("foobar".into()),
            namespace: Some("default".into()),
            ..ObjectMeta::default()
        },
        spec: Some(JobSpec { ttl_seconds_after_finished: ttl, ..JobSpec::default() }),
        status: Some(JobStatus { conditions: Some(conditions), ..JobStatus::default() }),
    }
}

fn with_conditions(conditions: Vec<JobCondition>, ttl: Option<i32>) -> Job {
    let mut job = new_job(None, None, ttl);
    job.status = Some(JobStatus { conditions: Some(conditions), ..JobStatus::default() });
    job
}

// === TestTimeLeft ===

/// A case's name, completion and failure times, TTL, and the time left
/// and expiry it expects, or the error it expects to contain.
type Case = (
    &'static str,
    Option<Timestamp>,
    Option<Timestamp>,
    Option<i32>,
    Result<(SignedDuration, Timestamp), &'static str>,
);

#[test]
fn time_left_as_upstream() {
    let now = now();
    let cases: [Case; 9] = [
        ("Error case: Job unfinished", None, None, Some(100), Err("should not be cleaned up")),
        ("Error case: Job completed now, no TTL", Some(now), None, None, Err("should not be cleaned up")),
        ("Job completed now, 0s TTL", Some(now), None, Some(0), Ok((secs(0), now))),
        ("Job completed now, 10s TTL", Some(now), None, Some(10), Ok((secs(10), now + secs(10)))),
        ("Job completed 10s ago, 15s TTL", Some(now - secs(10)), None, Some(15), Ok((secs(5), now + secs(5)))),
        ("Error case: Job failed now, no TTL", None, Some(now), None, Err("should not be cleaned up")),
        ("Job failed now, 0s TTL", None, Some(now), Some(0), Ok((secs(0), now))),
        ("Job failed now, 10s TTL", None, Some(now), Some(10), Ok((secs(10), now + secs(10)))),
        ("Job failed 10s ago, 15s TTL", None, Some(now - secs(10)), Some(15), Ok((secs(5), now + secs(5)))),
    ];
    for (name, completed, failed, ttl, want) in cases {
        let got = time_left(&new_job(completed, failed, ttl), now);
        match (got, want) {
            (Ok(left), Ok((remaining, expire_at))) => {
                assert_eq!(left.remaining, remaining, "{name}: time left");
                assert_eq!(left.expire_at, expire_at, "{name}: expire at");
            }
            (Err(error), Err(message)) => {
                assert!(error.to_string().contains(message), "{name}: {error} does not say {message:?}");
            }
            (got, want) => panic!("{name}: got {got:?}, want {want:?}"),
        }
    }
}

// === needsCleanup ===

#[test]
fn only_a_finished_job_with_a_ttl_needs_cleanup() {
    let now = now();
    let cases = [
        ("complete with a TTL", new_job(Some(now), None, Some(0)), true),
        ("failed with a TTL", new_job(None, Some(now), Some(60)), true),
        ("complete without a TTL", new_job(Some(now), None, None), false),
        ("running with a TTL", new_job(None, None, Some(60)), false),
        ("Complete False", with_conditions(vec![condition(COMPLETE, "False", Some(now))], Some(5)), false),
        ("Failed Unknown", with_conditions(vec![condition(FAILED, "Unknown", Some(now))], Some(5)), false),
        (
            "only FailureTarget and SuccessCriteriaMet",
            with_conditions(
                vec![condition("FailureTarget", "True", Some(now)), condition("SuccessCriteriaMet", "True", Some(now))],
                Some(5),
            ),
            false,
        ),
        ("suspended", with_conditions(vec![condition("Suspended", "True", Some(now))], Some(5)), false),
        ("no status", Job { status: None, ..new_job(None, None, Some(5)) }, false),
    ];
    for (name, job, want) in cases {
        assert_eq!(needs_cleanup(&job), want, "{name}");
    }
}

// === jobFinishTime ===

#[test]
fn the_first_finished_condition_gives_the_finish_time() {
    let now = now();
    let job = with_conditions(
        vec![
            condition("FailureTarget", "True", Some(now - secs(30))),
            condition(COMPLETE, "False", Some(now - secs(20))),
            condition(FAILED, "True", Some(now - secs(10))),
            condition(COMPLETE, "True", Some(now)),
        ],
        Some(5),
    );
    assert_eq!(finished_condition(&job), Some(FAILED));
    assert_eq!(finish_time(&job), Some(Ok(now - secs(10))));
    assert_eq!(finish_time(&new_job(None, None, Some(5))), None, "not finished");
}

#[test]
fn a_finished_condition_without_a_transition_time_is_an_error() {
    let job = with_conditions(vec![condition(COMPLETE, "True", None)], Some(5));
    let error = Error::NoFinishTime { namespace: "default".into(), name: "foobar".into() };
    assert_eq!(finish_time(&job), Some(Err(error.clone())));
    assert_eq!(process_ttl(&job, now()), Err(error.clone()));
    assert_eq!(error.to_string(), "unable to find the time when the Job default/foobar finished");
}

// === processTTL ===

#[test]
fn an_expired_job_is_expired_a_later_one_waits_for_its_time_left() {
    let now = now();
    let expired = process_ttl(&new_job(Some(now - secs(15)), None, Some(15)), now);
    let left = TimeLeft { finish_at: now - secs(15), expire_at: now, since: now, remaining: secs(0) };
    assert_eq!(expired, Ok(Decision::Expired(left)), "time left exactly zero");

    let long_ago = process_ttl(&new_job(None, Some(now - secs(3600)), Some(60)), now);
    assert!(matches!(long_ago, Ok(Decision::Expired(left)) if left.remaining == secs(-3540)), "{long_ago:?}");

    let later = process_ttl(&new_job(Some(now - secs(10)), None, Some(15)), now);
    let left = TimeLeft { finish_at: now - secs(10), expire_at: now + secs(5), since: now, remaining: secs(5) };
    assert_eq!(later, Ok(Decision::Wait(left)));
    assert!(!left.finished_in_the_future());
}

#[test]
fn a_job_being_deleted_unfinished_or_without_ttl_is_ignored() {
    let now = now();
    let mut deleting = new_job(Some(now - secs(100)), None, Some(0));
    deleting.metadata.deletion_timestamp = Some(Time(now));
    for (name, job) in [
        ("being deleted", deleting),
        ("unfinished", new_job(None, None, Some(0))),
        ("no TTL", new_job(Some(now - secs(100)), None, None)),
    ] {
        assert_eq!(process_ttl(&job, now), Ok(Decision::Ignore), "{name}");
    }
}

#[test]
fn a_job_finished_in_the_future_waits_past_its_whole_ttl() {
    let now = now();
    let decision = process_ttl(&new_job(Some(now + secs(30)), None, Some(0)), now);
    let Ok(Decision::Wait(left)) = decision else { panic!("{decision:?}") };
    assert!(left.finished_in_the_future());
    assert_eq!(left.remaining, secs(30));
}

#[test]
fn a_ttl_past_the_last_representable_instant_never_expires() {
    let finished = Timestamp::MAX - secs(10);
    let decision = process_ttl(&new_job(Some(finished), None, Some(i32::MAX)), now());
    let Ok(Decision::Wait(left)) = decision else { panic!("{decision:?}") };
    assert_eq!(left.expire_at, Timestamp::MAX);
}
