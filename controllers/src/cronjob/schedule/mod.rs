//! CronJob schedules as upstream reads them: robfig/cron v3's
//! `ParseStandard` and its schedules' `Next`.
//!
//! What [`parse_standard`] accepts:
//! - five fields (minute, hour, day of month, month, day of week), read by
//!   `fields` with the `croner` crate (names `JAN`..`DEC` and
//!   `SUN`..`SAT` in any case, `*` and `?`, lists, ranges, steps, Sunday
//!   as 0; day of month and day of week OR'd when both are restricted);
//! - the descriptors, spelled exactly: `@yearly`, `@annually`,
//!   `@monthly`, `@weekly`, `@daily`, `@midnight`, `@hourly`, and
//!   `@every <Go duration>` (at least a second; below a second is read as
//!   one, fractions of a second dropped);
//! - a leading `TZ=<zone>` or `CRON_TZ=<zone>`, the zone the schedule's
//!   wall times are read in (the controller prefixes `TZ=<spec.timeZone>`
//!   when a CronJob names one and its schedule has no `TZ`).
//!
//! A schedule with no zone is read in the controller's local zone, as
//! kube-controller-manager reads it in its own.

mod fields;
mod spec;

use std::time::Duration;

use jiff::tz::{TimeZone, TimeZoneDatabase};
use jiff::{SignedDuration, Timestamp};

pub use spec::GO_ZERO;

use fields::{Field, Fields};
use spec::Spec;

/// A parsed schedule.
#[derive(Clone, Debug, PartialEq)]
pub struct Schedule(Kind);

#[derive(Clone, Debug, PartialEq)]
enum Kind {
    /// Fields and descriptors (robfig `SpecSchedule`).
    Spec(Spec),
    /// `@every` (robfig `ConstantDelaySchedule`).
    Every(SignedDuration),
}

impl Schedule {
    /// robfig `Schedule.Next`: the first activation after `t`, on a whole
    /// second, or [`GO_ZERO`] when a five-field schedule has none within
    /// five years (`59 23 31 2 *`).
    pub fn next(&self, t: Timestamp) -> Timestamp {
        match &self.0 {
            Kind::Spec(spec) => spec.next(t),
            Kind::Every(delay) => {
                let delay = *delay - SignedDuration::from_nanos(i64::from(t.subsec_nanosecond()));
                t.checked_add(delay).unwrap_or(Timestamp::MAX)
            }
        }
    }
}

/// robfig `ParseStandard(spec)`; `local` is the zone of a schedule that
/// names none, `zones` where `TZ=` names are looked up.
///
/// # Errors
/// robfig's message for a spec it refuses.
pub fn parse_standard(spec: &str, local: &TimeZone, zones: &TimeZoneDatabase) -> Result<Schedule, String> {
    if spec.is_empty() {
        return Err("empty spec string".to_owned());
    }
    let mut spec = spec;
    let mut location = local.clone();
    if spec.starts_with("TZ=") || spec.starts_with("CRON_TZ=") {
        // Go slices up to the first space, and panics without one.
        let Some(space) = spec.find(' ') else {
            return Err(format!("provided bad location {spec}: no schedule after the location"));
        };
        let name = &spec[spec.find('=').map_or(0, |eq| eq + 1)..space];
        location = load_location(name, local, zones).map_err(|e| format!("provided bad location {name}: {e}"))?;
        spec = spec[space..].trim();
    }
    if spec.starts_with('@') {
        return descriptor(spec, location);
    }
    Ok(Schedule(Kind::Spec(Spec { fields: fields::parse(spec)?, location })))
}

/// robfig `parseDescriptor`.
fn descriptor(spec: &str, location: TimeZone) -> Result<Schedule, String> {
    let all = |min: u32, max: u32| Field { bits: (min..=max).fold(0u64, |b, v| b | 1 << v), star: true };
    let one = |value: u32| Field { bits: 1 << value, star: false };
    let (minute, hour, dom, month, dow) = match spec {
        "@yearly" | "@annually" => (one(0), one(0), one(1), one(1), all(0, 6)),
        "@monthly" => (one(0), one(0), one(1), all(1, 12), all(0, 6)),
        "@weekly" => (one(0), one(0), all(1, 31), all(1, 12), one(0)),
        "@daily" | "@midnight" => (one(0), one(0), all(1, 31), all(1, 12), all(0, 6)),
        "@hourly" => (one(0), all(0, 23), all(1, 31), all(1, 12), all(0, 6)),
        _ => {
            let Some(text) = spec.strip_prefix("@every ") else {
                return Err(format!("unrecognized descriptor: {spec}"));
            };
            return Ok(Schedule(Kind::Every(
                every(text).map_err(|e| format!("failed to parse duration {spec}: {e}"))?,
            )));
        }
    };
    Ok(Schedule(Kind::Spec(Spec { fields: Fields { minute, hour, dom, month, dow }, location })))
}

/// robfig `Every(time.ParseDuration(text))`: at least a second, whole
/// seconds. A negative duration (which Go parses) is below a second.
fn every(text: &str) -> Result<SignedDuration, String> {
    let parsed = match text.strip_prefix('-') {
        Some(magnitude) => kcm_gotime::parse_go_duration(magnitude).map(|_| Duration::ZERO),
        None => kcm_gotime::parse_go_duration(text),
    }?;
    let whole = Duration::from_secs(parsed.as_secs().max(1));
    SignedDuration::try_from(whole).map_err(|e| e.to_string())
}

/// Go's `time.LoadLocation(name)`: `""` and `UTC` are UTC, `Local` the
/// local zone, anything else an IANA name looked up in `zones` with its
/// case as written (Go reads file names; the database matches names in
/// any case, so a differently cased match is refused here).
///
/// # Errors
/// Go's message: `time: invalid location name`, `unknown time zone X`.
pub fn load_location(name: &str, local: &TimeZone, zones: &TimeZoneDatabase) -> Result<TimeZone, String> {
    match name {
        "" | "UTC" => return Ok(TimeZone::UTC),
        "Local" => return Ok(local.clone()),
        _ => {}
    }
    if name.contains("..") || name.starts_with(['/', '\\']) {
        return Err("time: invalid location name".to_owned());
    }
    match zones.get(name) {
        Ok(zone) if zone.iana_name() == Some(name) => Ok(zone),
        _ => Err(format!("unknown time zone {name}")),
    }
}

#[cfg(test)]
mod tests;
