//! When a CronJob is due (upstream `utils.go`: `mostRecentScheduleTime`,
//! `nextScheduleTime`, `nextScheduleTimeDuration`), with Go's duration
//! arithmetic where upstream's counts depend on it.
//!
//! The count of missed schedules is upstream's approximation, not a walk
//! over every missed time: `t1` and `t2` are the first two schedule times
//! after the earliest time (the last schedule time, else the creation
//! time, moved up to `now - startingDeadlineSeconds` with a deadline), and
//! the missed count is `(now - t1) / (t2 - t1) + 1`. For an hourly
//! schedule last run a week ago, `t2 - t1` is 3600 s and about 168 are
//! missed: more than 100 is "many" (the `TooManyMissedTimes` event), and
//! the most recent is still started. A walk to find it starts two
//! intervals before the estimate, so schedules of uneven spacing
//! (`30 6-16/4 * * 1-5`) still land on the right time.

use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::batch::v1::CronJob;

use super::schedule::Schedule;

/// upstream `nextScheduleDelta`: the requeue lands this long after the
/// schedule time, against clock skew.
pub const NEXT_SCHEDULE_DELTA: Duration = Duration::from_millis(100);

/// Upstream's bound on missed schedules before `TooManyMissedTimes`.
pub const TOO_MANY_MISSED: i64 = 100;

/// How many schedules were missed since the earliest time (upstream
/// `missedSchedulesType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Missed {
    /// None.
    None,
    /// One to a hundred.
    Few,
    /// More than a hundred.
    Many,
}

/// What [`most_recent_schedule_time`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MostRecent {
    /// The last schedule time, else the creation time, moved up to the
    /// starting deadline when asked.
    pub earliest: Timestamp,
    /// The latest schedule time not after `now`, if any since `earliest`.
    pub most_recent: Option<Timestamp>,
    /// How many were missed.
    pub missed: Missed,
}

/// A schedule whose two next times are less than a second apart: one that
/// never fires (`59 23 31 2 *`), whose times are Go's zero time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("time difference between two schedules is less than 1 second")]
pub struct TooClose {
    /// The earliest time it was looked from.
    pub earliest: Timestamp,
}

/// upstream `mostRecentScheduleTime`.
///
/// # Errors
/// [`TooClose`], for a schedule that never fires.
pub fn most_recent_schedule_time(
    cron_job: &CronJob,
    now: Timestamp,
    schedule: &Schedule,
    include_starting_deadline: bool,
) -> Result<MostRecent, TooClose> {
    let mut earliest = cron_job.metadata.creation_timestamp.as_ref().map_or(super::schedule::GO_ZERO, |t| t.0);
    if let Some(last) = cron_job.status.as_ref().and_then(|s| s.last_schedule_time.as_ref()) {
        earliest = last.0;
    }
    if include_starting_deadline && let Some(deadline) = cron_job.spec.starting_deadline_seconds {
        let scheduling_deadline = add(now, SignedDuration::from_secs(deadline.saturating_neg()));
        if scheduling_deadline > earliest {
            earliest = scheduling_deadline;
        }
    }
    let none = |missed| MostRecent { earliest, most_recent: None, missed };
    let t1 = schedule.next(earliest);
    let t2 = schedule.next(t1);
    if now < t1 {
        return Ok(none(Missed::None));
    }
    if now < t2 {
        return Ok(MostRecent { earliest, most_recent: Some(t1), missed: Missed::None });
    }
    let between = round_to_seconds(go_sub(t2, t1));
    if between < 1 {
        return Err(TooClose { earliest });
    }
    let elapsed = go_sub(now, t1) / 1_000_000_000;
    let missed_count = elapsed / between + 1;
    let back = (missed_count - 2).saturating_mul(between);
    let mut most_recent = None;
    let mut t = schedule.next(add(t1, SignedDuration::from_secs(back)));
    while t <= now {
        most_recent = Some(t);
        let next = schedule.next(t);
        if next <= t {
            break;
        }
        t = next;
    }
    let missed = match missed_count {
        n if n > TOO_MANY_MISSED => Missed::Many,
        n if n > 0 => Missed::Few,
        _ => Missed::None,
    };
    Ok(MostRecent { earliest, most_recent, missed })
}

/// upstream `nextScheduleTimeDuration`: how long until the next schedule
/// time after the most recent one (or after `now` when that is unknown),
/// plus [`NEXT_SCHEDULE_DELTA`].
pub fn next_schedule_time_duration(cron_job: &CronJob, now: Timestamp, schedule: &Schedule) -> SignedDuration {
    let from = match most_recent_schedule_time(cron_job, now, schedule, false) {
        Err(_) => now,
        Ok(MostRecent { most_recent: Some(t), .. }) => t,
        Ok(MostRecent { earliest, missed: Missed::None, .. }) => earliest,
        Ok(_) => now,
    };
    let next = schedule.next(from);
    SignedDuration::from_nanos(go_sub(next, now)) + SignedDuration::try_from(NEXT_SCHEDULE_DELTA).unwrap_or_default()
}

/// upstream `nextScheduleTime`: the schedule time to start now, if any
/// (the starting deadline applied), and whether more than a hundred were
/// missed (upstream records `TooManyMissedTimes` then).
///
/// # Errors
/// [`TooClose`], for a schedule that never fires.
pub fn next_schedule_time(
    cron_job: &CronJob,
    now: Timestamp,
    schedule: &Schedule,
) -> Result<Option<(Timestamp, Missed)>, TooClose> {
    let found = most_recent_schedule_time(cron_job, now, schedule, true)?;
    Ok(found.most_recent.filter(|t| *t <= now).map(|t| (t, found.missed)))
}

/// Go's `a.Sub(b)` in nanoseconds, saturating as Go's does.
fn go_sub(a: Timestamp, b: Timestamp) -> i64 {
    let nanos = a.as_nanosecond() - b.as_nanosecond();
    i64::try_from(nanos).unwrap_or(if nanos < 0 { i64::MIN } else { i64::MAX })
}

/// Go's `d.Round(time.Second)` in seconds: halves away from zero.
fn round_to_seconds(nanos: i64) -> i64 {
    let (seconds, rest) = (nanos / 1_000_000_000, nanos % 1_000_000_000);
    match rest {
        r if r >= 500_000_000 => seconds + 1,
        r if r <= -500_000_000 => seconds - 1,
        _ => seconds,
    }
}

fn add(t: Timestamp, d: SignedDuration) -> Timestamp {
    t.checked_add(d).unwrap_or(if d.is_negative() { Timestamp::MIN } else { Timestamp::MAX })
}
