//! Validation of batch/v1 CronJobs (`ValidateCronJobCreate`,
//! `ValidateCronJobUpdate`): the schedule as the cron library the API
//! server uses parses it (robfig/cron v3 `ParseStandard`: five fields or
//! an `@` descriptor, with its error messages), no `TZ=`/`CRON_TZ=` in a
//! new schedule, a time zone the zone database knows, the concurrency
//! policy, the job template (`job.rs`), the history limits, and the
//! 52-character name limit on create.

use serde_json::Value;

use super::access::{at, int, text};
use super::errors::{Errors, nonnegative};
use super::job::job_template;
use super::render::go_quote;

/// Longest CronJob name: a Job name (a DNS-1035 label, 63) less the
/// 11-character `-<timestamp>` suffix the controller appends.
const MAX_NAME: usize = 52;

/// `ValidateCronJobCreate` (the metadata is the caller's) or, with `old`,
/// `ValidateCronJobUpdate`.
pub(super) fn cron_job(errs: &mut Errors, cron_job: &Value, old: Option<&Value>) {
    let spec = at(cron_job, "spec");
    let old_spec = old.map(|o| at(o, "spec"));
    let schedule = text(spec, "schedule");
    let time_zone = at(spec, "timeZone");
    if schedule.is_empty() {
        errs.required("spec.schedule", "");
    } else {
        let tz_allowed = old_spec.is_some_and(|o| text(o, "schedule").contains("TZ"));
        if let Err(e) = parse_standard(schedule) {
            errs.invalid("spec.schedule", go_quote(schedule), &e);
        }
        if tz_allowed && schedule.contains("TZ") && !time_zone.is_null() {
            errs.invalid(
                "spec.schedule",
                go_quote(schedule),
                "cannot use both timeZone field and TZ or CRON_TZ in schedule",
            );
        } else if !tz_allowed && schedule.contains("TZ") {
            let detail = "cannot use TZ or CRON_TZ in schedule, use timeZone field instead";
            errs.invalid("spec.schedule", go_quote(schedule), detail);
        }
    }
    nonnegative(errs, int(spec, "startingDeadlineSeconds"), "spec.startingDeadlineSeconds");
    if old_spec.is_none_or(|o| at(o, "timeZone") != time_zone) {
        zone(errs, time_zone);
    }
    match text(spec, "concurrencyPolicy") {
        "Allow" | "Forbid" | "Replace" => {}
        "" => errs.required("spec.concurrencyPolicy", ""),
        other => errs.not_supported("spec.concurrencyPolicy", go_quote(other), &["Allow", "Forbid", "Replace"]),
    }
    job_template(errs, at(spec, "jobTemplate"), "spec.jobTemplate");
    for limit in ["successfulJobsHistoryLimit", "failedJobsHistoryLimit"] {
        nonnegative(errs, int(spec, limit), &format!("spec.{limit}"));
    }
    let name = text(at(cron_job, "metadata"), "name");
    if old.is_none() && name.len() > MAX_NAME {
        errs.invalid("metadata.name", go_quote(name), "must be no more than 52 characters");
    }
}

/// `validateTimeZone`.
fn zone(errs: &mut Errors, time_zone: &Value) {
    let Some(name) = time_zone.as_str() else { return };
    let shown = go_quote(name);
    if name.is_empty() {
        errs.invalid("spec.timeZone", shown, "timeZone must be nil or non-empty string");
        return;
    }
    let component_ok = |part: &str| {
        (1..=14).contains(&part.len())
            && part != "."
            && part != ".."
            && !part.starts_with('-')
            && part.chars().all(|c| c.is_ascii_alphanumeric() || ".-_+".contains(c))
    };
    if !name.split('/').all(component_ok) {
        errs.invalid("spec.timeZone", shown, &format!("unknown time zone {name}"));
        return;
    }
    if name.eq_ignore_ascii_case("Local") {
        let detail = "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones";
        errs.invalid("spec.timeZone", shown.clone(), detail);
    }
    if let Err(e) = load_location(name) {
        errs.invalid("spec.timeZone", shown, &e);
    }
}

/// Go's `time.LoadLocation`: UTC, Local, or a name of the zone database
/// (matched exactly, as Go opens the zoneinfo file by name).
pub(super) fn load_location(name: &str) -> Result<(), String> {
    if name.is_empty() || name == "UTC" || name == "Local" {
        return Ok(());
    }
    let known = jiff::tz::db().available().any(|zone| zone.as_str() == name);
    if known { Ok(()) } else { Err(format!("unknown time zone {name}")) }
}

/// One field of a schedule: its bounds and, for months and weekdays, names.
struct Bounds {
    min: u64,
    max: u64,
    names: &'static [&'static str],
}

/// Minutes, hours, days of the month, months, days of the week.
const FIELDS: [Bounds; 5] = [
    Bounds { min: 0, max: 59, names: &[] },
    Bounds { min: 0, max: 23, names: &[] },
    Bounds { min: 1, max: 31, names: &[] },
    Bounds {
        min: 1,
        max: 12,
        names: &["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"],
    },
    Bounds { min: 0, max: 6, names: &["sun", "mon", "tue", "wed", "thu", "fri", "sat"] },
];

/// robfig/cron v3's `ParseStandard`, for its verdict and error message
/// only: an optional `TZ=`/`CRON_TZ=` location, then an `@` descriptor or
/// exactly five fields of comma-separated ranges.
pub(super) fn parse_standard(spec: &str) -> Result<(), String> {
    if spec.is_empty() {
        return Err("empty spec string".to_owned());
    }
    let mut spec = spec;
    if spec.starts_with("TZ=") || spec.starts_with("CRON_TZ=") {
        let (head, rest) = spec.split_once(' ').unwrap_or((spec, ""));
        let location = head.split_once('=').map_or("", |(_, l)| l);
        load_location(location).map_err(|e| format!("provided bad location {location}: {e}"))?;
        spec = rest.trim();
    }
    if spec.starts_with('@') {
        return descriptor(spec);
    }
    let fields: Vec<&str> = spec.split_whitespace().collect();
    if fields.len() != FIELDS.len() {
        return Err(format!("expected exactly 5 fields, found {}: [{}]", fields.len(), fields.join(" ")));
    }
    for (field, bounds) in fields.iter().zip(&FIELDS) {
        for range in field.split(',').filter(|r| !r.is_empty()) {
            check_range(range, bounds)?;
        }
    }
    Ok(())
}

/// `parseDescriptor`.
fn descriptor(spec: &str) -> Result<(), String> {
    const NAMED: [&str; 7] = ["@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"];
    if NAMED.contains(&spec) {
        return Ok(());
    }
    if let Some(duration) = spec.strip_prefix("@every ") {
        let magnitude = duration.strip_prefix('-').unwrap_or(duration);
        return kcm_gotime::parse_go_duration(magnitude)
            .map(|_| ())
            .map_err(|e| format!("failed to parse duration {spec}: {e}"));
    }
    Err(format!("unrecognized descriptor: {spec}"))
}

/// `getRange`: `*`, `?`, `n`, `n-m`, each with an optional `/step`.
fn check_range(expr: &str, bounds: &Bounds) -> Result<(), String> {
    let parts: Vec<&str> = expr.split('/').collect();
    let limits: Vec<&str> = parts[0].split('-').collect();
    let (start, mut end) = if limits[0] == "*" || limits[0] == "?" {
        (bounds.min, bounds.max)
    } else {
        let start = int_or_name(limits[0], bounds)?;
        match limits.len() {
            1 => (start, start),
            2 => (start, int_or_name(limits[1], bounds)?),
            _ => return Err(format!("too many hyphens: {expr}")),
        }
    };
    let step = match parts.len() {
        1 => 1,
        2 => {
            let step = must_parse_int(parts[1])?;
            // "N/step" means "N-max/step".
            if limits.len() == 1 {
                end = bounds.max;
            }
            step
        }
        _ => return Err(format!("too many slashes: {expr}")),
    };
    if start < bounds.min {
        return Err(format!("beginning of range ({start}) below minimum ({}): {expr}", bounds.min));
    }
    if end > bounds.max {
        return Err(format!("end of range ({end}) above maximum ({}): {expr}", bounds.max));
    }
    if start > end {
        return Err(format!("beginning of range ({start}) beyond end of range ({end}): {expr}"));
    }
    if step == 0 {
        return Err(format!("step of range should be a positive number: {expr}"));
    }
    Ok(())
}

/// `parseIntOrName`.
fn int_or_name(expr: &str, bounds: &Bounds) -> Result<u64, String> {
    let lower = expr.to_ascii_lowercase();
    if let Some(position) = bounds.names.iter().position(|n| *n == lower) {
        // Months count from 1, weekdays from 0 (Sunday).
        return Ok(position as u64 + bounds.min);
    }
    must_parse_int(expr)
}

/// `mustParseInt`, with Go's `strconv.Atoi` errors.
fn must_parse_int(expr: &str) -> Result<u64, String> {
    let digits = expr.strip_prefix(['+', '-']).unwrap_or(expr);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "failed to parse int from {expr}: strconv.Atoi: parsing {}: invalid syntax",
            go_quote(expr)
        ));
    }
    let num: i64 = expr.parse().map_err(|_| {
        format!("failed to parse int from {expr}: strconv.Atoi: parsing {}: value out of range", go_quote(expr))
    })?;
    if num < 0 {
        return Err(format!("negative number ({num}) not allowed: {expr}"));
    }
    Ok(num.unsigned_abs())
}
