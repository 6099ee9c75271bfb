//! The CronJob controller (upstream `pkg/controller/cronjob`, the v2
//! controller: `cronjob_controllerv2.go` and `utils.go`).
//!
//! Shape: observe/decide. A sync reads the API server live between its
//! decisions, as upstream's does, so [`Sync`] is walked through its phases
//! by the driver, which reports each read's and write's answer (see
//! [`sync`] for the order). Everything else is pure arithmetic on the
//! CronJob and `now`.
//!
//! # Layout
//! - [`schedule`]: schedules as robfig/cron v3's `ParseStandard` reads
//!   them (fields through the `croner` crate, descriptors, `@every`,
//!   `TZ=`), and their `Next`, daylight-saving changes included;
//! - [`times`]: when a CronJob is due, how many schedules it missed, when
//!   to look again;
//! - [`job`]: the Jobs it makes (name, annotations, controller) and how
//!   it reads them (finished, succeeded, start-time order);
//! - [`sync`]: one sync's phases and events;
//! - [`on_update`]: when an updated CronJob is synced again.

pub mod job;
pub mod schedule;
pub mod sync;
pub mod times;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::batch::v1::CronJob;

use crate::common::object::object_ref;
use crate::plan::{Event, EventType};

pub use job::SCHEDULED_TIMESTAMP_ANNOTATION;
pub use sync::{Created, Decision, Finished, JobKey, Options, Start, Sync, format_schedule};

/// Upstream's controller name (`names.CronJobController`).
pub const CONTROLLER_NAME: &str = "cronjob-controller";

/// Upstream's workqueue name.
pub const QUEUE_NAME: &str = "cronjob";

/// The queue key of a CronJob (`namespace/name`).
pub fn key(cron_job: &CronJob) -> String {
    crate::common::object::key(&cron_job.metadata)
}

/// What an update to a CronJob asks of its queue (upstream
/// `updateCronJob`).
#[derive(Clone, Debug, PartialEq)]
pub enum OnUpdate {
    /// Sync it now (anything but the schedule or time zone changed).
    Now,
    /// Sync it at its next schedule time under the new schedule.
    After(SignedDuration),
    /// The new schedule does not parse: record this, queue nothing.
    Unparseable(Event),
}

/// upstream `updateCronJob`: a changed `schedule` or `timeZone` queues the
/// CronJob for its next schedule time (a sooner time than one already
/// queued wins in the queue); any other change, at once.
pub fn on_update(old: &CronJob, new: &CronJob, now: Timestamp, options: &Options) -> OnUpdate {
    let (old_spec, new_spec) = (&old.spec, &new.spec);
    if old_spec.schedule == new_spec.schedule && old_spec.time_zone == new_spec.time_zone {
        return OnUpdate::Now;
    }
    let (text, _) = format_schedule(new, options);
    match schedule::parse_standard(&text, &options.local, &options.zones) {
        Ok(schedule) => OnUpdate::After(times::next_schedule_time_duration(new, now, &schedule)),
        Err(_) => OnUpdate::Unparseable(Event {
            regarding: object_ref("batch/v1", "CronJob", &new.metadata),
            type_: EventType::Warning,
            reason: "UnParseableCronJobSchedule".to_owned(),
            message: format!("unparseable schedule for cronjob: {}", new_spec.schedule),
        }),
    }
}

#[cfg(test)]
mod tests;
