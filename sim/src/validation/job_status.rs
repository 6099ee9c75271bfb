//! Validation of a Job's `/status` writes (`ValidateJobStatusUpdate`) with
//! the options the 1.37 status strategy computes (`getStatusValidationOptions`,
//! the `JobManagedBy` gate being on): most rules apply only when a write
//! changes the fields they are about, so a status a spec change made
//! temporarily inconsistent can still be updated. Also the index interval
//! syntax (`validateIndexesFormat`) that success policies share.

use std::collections::BTreeSet;

use serde_json::Value;

use super::access::{at, int, list, semantic_eq, str_of, text};
use super::errors::{Errors, invalid_omitted, nonnegative};
use super::render::{go_quote, go_time};

/// Whether the Job has a condition of `kind` with status True
/// (`IsConditionTrue`).
fn is_true(job: &Value, kind: &str) -> bool {
    list(at(job, "status"), "conditions").iter().any(|c| text(c, "type") == kind && text(c, "status") == "True")
}

/// `IsJobFinished`.
fn finished(job: &Value) -> bool {
    is_true(job, "Complete") || is_true(job, "Failed")
}

/// Go's `%#v` of a `[]int32`.
pub(super) fn index_list(values: &[i64]) -> String {
    let body: Vec<String> = values.iter().map(i64::to_string).collect();
    format!("[]int32{{{}}}", body.join(", "))
}

/// Go's `strconv.Atoi` of an index; the message upstream gives otherwise.
fn parse_index(text: &str) -> Result<i64, String> {
    text.parse::<i64>().map_err(|_| format!("cannot convert string to integer for index: {}", go_quote(text)))
}

/// `parseIndexInterval`: `x` or `x-y`, below `completions`, increasing.
fn interval(fragment: &str, completions: i64) -> Result<(i64, i64), String> {
    let limits: Vec<&str> = fragment.split('-').collect();
    if limits.len() > 2 {
        return Err(format!(
            "the fragment {} violates the requirement that an index interval can have at most two parts separated by '-'",
            go_quote(fragment)
        ));
    }
    let too_large = |s: &str| format!("too large index: {}", go_quote(s));
    let x = parse_index(limits[0])?;
    if x >= completions {
        return Err(too_large(limits[0]));
    }
    let Some(high) = limits.get(1) else { return Ok((x, x)) };
    let y = parse_index(high)?;
    if y >= completions {
        return Err(too_large(high));
    }
    if x >= y {
        return Err(format!("non-increasing order, previous: {x}, current: {y}"));
    }
    Ok((x, y))
}

/// `validateIndexesFormat`: comma-separated increasing intervals; the
/// number of indexes they hold.
pub(super) fn indexes_format(indexes: &str, completions: i64) -> Result<i64, String> {
    if indexes.is_empty() {
        return Ok(0);
    }
    let mut last: Option<i64> = None;
    let mut total = 0;
    for fragment in indexes.split(',') {
        let (x, y) = interval(fragment, completions)?;
        if let Some(last) = last.filter(|l| *l >= x) {
            return Err(format!("non-increasing order, previous: {last}, current: {x}"));
        }
        total += y - x + 1;
        last = Some(y);
    }
    Ok(total)
}

/// `validateFailedIndexesNotOverlapCompleted`: the first index both lists
/// hold, skipping intervals that do not parse.
fn overlap(completed: &str, failed: &str, completions: i64) -> Option<i64> {
    if completed.is_empty() || failed.is_empty() {
        return None;
    }
    let parse = |s: &str| -> Vec<(i64, i64)> { s.split(',').filter_map(|f| interval(f, completions).ok()).collect() };
    let (completed, failed) = (parse(completed), parse(failed));
    let (mut c, mut f) = (0, 0);
    while c < completed.len() && f < failed.len() {
        let ((cx, cy), (fx, fy)) = (completed[c], failed[f]);
        if cx <= fy && fx <= cy {
            return Some(cx.max(fx));
        }
        if cx <= fx { c += 1 } else { f += 1 }
    }
    None
}

/// What changed between the stored and the written Job, as the status
/// strategy's options are computed from it.
struct Changed {
    finished: bool,
    complete: bool,
    failed: bool,
    failure_target: bool,
    success_criteria_met: bool,
    completed_indexes: bool,
    failed_indexes: bool,
    active: bool,
    start_time: bool,
    completion_time: bool,
    uncounted: bool,
    ready: bool,
    terminating: bool,
}

impl Changed {
    fn between(old: &Value, new: &Value) -> Changed {
        let (o, n) = (at(old, "status"), at(new, "status"));
        let field = |key: &str| at(o, key) != at(n, key);
        let cond = |kind: &str| is_true(old, kind) != is_true(new, kind);
        Changed {
            finished: finished(old) != finished(new),
            complete: cond("Complete"),
            failed: cond("Failed"),
            failure_target: cond("FailureTarget"),
            success_criteria_met: cond("SuccessCriteriaMet"),
            completed_indexes: text(o, "completedIndexes") != text(n, "completedIndexes"),
            failed_indexes: field("failedIndexes"),
            active: int(o, "active").unwrap_or(0) != int(n, "active").unwrap_or(0),
            start_time: field("startTime"),
            completion_time: field("completionTime"),
            uncounted: !semantic_eq(at(o, "uncountedTerminatedPods"), at(n, "uncountedTerminatedPods")),
            ready: field("ready"),
            terminating: field("terminating"),
        }
    }
}

/// `ValidateJobStatusUpdate` with the status strategy's options.
pub(super) fn job_status_update(errs: &mut Errors, old: &Value, new: &Value) {
    let changed = Changed::between(old, new);
    job_status(errs, new, &changed);
    let (o, n) = (at(old, "status"), at(new, "status"));
    for kind in ["Failed", "Complete", "FailureTarget"] {
        if is_true(old, kind) && !is_true(new, kind) {
            invalid_omitted(errs, "status.conditions", &format!("cannot disable the terminal {kind}=True condition"));
        }
    }
    let count = |status: &Value, key: &str| int(status, key).unwrap_or(0);
    if count(n, "failed") < count(o, "failed") {
        errs.invalid("status.failed", count(n, "failed").to_string(), "cannot decrease the failed counter");
    }
    let spec = at(new, "spec");
    let elastic = text(spec, "completionMode") == "Indexed" && at(spec, "completions") == at(spec, "parallelism");
    if !elastic && count(n, "succeeded") < count(o, "succeeded") {
        errs.invalid("status.succeeded", count(n, "succeeded").to_string(), "cannot decrease the succeeded counter");
    }
    let (old_done, new_done) = (at(o, "completionTime"), at(n, "completionTime"));
    if !old_done.is_null() && !new_done.is_null() && old_done != new_done {
        errs.invalid("status.completionTime", go_time(str_of(new_done)), "completionTime cannot be mutated");
    }
    let suspended = at(spec, "suspend").as_bool() == Some(true);
    if changed.start_time && !at(o, "startTime").is_null() && !suspended {
        errs.required("status.startTime", "startTime cannot be removed for unsuspended job");
    }
    if is_true(old, "SuccessCriteriaMet") && !is_true(new, "SuccessCriteriaMet") {
        invalid_omitted(errs, "status.conditions", "cannot disable the SuccessCriteriaMet=True condition");
    }
    if is_true(old, "Complete") && !is_true(old, "SuccessCriteriaMet") && is_true(new, "SuccessCriteriaMet") {
        let detail = "cannot set SuccessCriteriaMet=True for Job already has Complete=true conditions";
        invalid_omitted(errs, "status.conditions", detail);
    }
}

/// `validateJobStatus`, each rule where the options turn it on.
fn job_status(errs: &mut Errors, job: &Value, changed: &Changed) {
    let (spec, status) = (at(job, "spec"), at(job, "status"));
    let active = int(status, "active").unwrap_or(0);
    for field in ["active", "succeeded", "failed", "ready", "terminating"] {
        nonnegative(errs, int(status, field), &format!("status.{field}"));
    }
    uncounted_uids(errs, at(status, "uncountedTerminatedPods"));
    let (complete, failed, finished) = (is_true(job, "Complete"), is_true(job, "Failed"), finished(job));
    let (target, met) = (is_true(job, "FailureTarget"), is_true(job, "SuccessCriteriaMet"));
    let conditions = |errs: &mut Errors, detail: &str| invalid_omitted(errs, "status.conditions", detail);
    if (changed.complete || changed.failed) && complete && failed {
        conditions(errs, "cannot set Complete=True and Failed=true conditions");
    }
    if (changed.complete || changed.failure_target) && complete && target {
        conditions(errs, "cannot set Complete=True and FailureTarget=true conditions");
    }
    let (start, done) = (at(status, "startTime"), at(status, "completionTime"));
    if (changed.complete || changed.completion_time) && !done.is_null() && !complete {
        let detail = "cannot set completionTime when there is no Complete=True condition";
        errs.invalid("status.completionTime", go_time(str_of(done)), detail);
    }
    if (changed.complete || changed.completion_time) && done.is_null() && complete {
        errs.required("status.completionTime", "completionTime is required for Complete jobs");
    }
    if (changed.start_time || changed.completion_time)
        && let (Some(s), Some(d)) = (start.as_str(), done.as_str())
        && let (Ok(s), Ok(d)) = (s.parse::<jiff::Timestamp>(), d.parse::<jiff::Timestamp>())
        && d < s
    {
        errs.invalid("status.completionTime", go_time(str_of(done)), "completionTime cannot be set before startTime");
    }
    if (changed.failed || changed.failed_indexes) && failed && !target {
        conditions(errs, "cannot set Failed=True condition without the FailureTarget=true condition");
    }
    if (changed.complete || changed.success_criteria_met) && complete && !met {
        conditions(errs, "cannot set Complete=True condition without the SuccessCriteriaMet=true condition");
    }
    if (changed.finished || changed.active) && active > 0 && finished {
        errs.invalid("status.active", active.to_string(), "active>0 is invalid for finished job");
    }
    let zero_and_suspended = at(spec, "suspend").as_bool() == Some(true) && int(spec, "completions") == Some(0);
    if (changed.finished || changed.start_time) && !zero_and_suspended && start.is_null() && finished {
        errs.required("status.startTime", "startTime is required for finished job");
    }
    let uncounted = at(status, "uncountedTerminatedPods");
    let pending = list(uncounted, "succeeded").len() + list(uncounted, "failed").len();
    if (changed.finished || changed.uncounted) && finished && pending > 0 {
        let detail = "uncountedTerminatedPods needs to be empty for finished job";
        errs.invalid("status.uncountedTerminatedPods", go_uncounted(uncounted), detail);
    }
    indexes(errs, spec, status, changed);
    let terminating = int(status, "terminating").unwrap_or(0);
    if (changed.finished || changed.terminating) && terminating > 0 && finished {
        errs.invalid("status.terminating", terminating.to_string(), "terminating>0 is invalid for finished job");
    }
    if let Some(ready) = int(status, "ready").filter(|r| (changed.ready || changed.active) && *r > active) {
        errs.invalid("status.ready", ready.to_string(), "cannot set more ready pods than active");
    }
    if met && failed {
        conditions(errs, "cannot set SuccessCriteriaMet=True and Failed=true conditions");
    }
    if met && target {
        conditions(errs, "cannot set SuccessCriteriaMet=True and FailureTarget=true conditions");
    }
    if !at(spec, "successPolicy").is_null() && !met && complete {
        conditions(errs, "cannot set Complete=True for Job with SuccessPolicy unless SuccessCriteriaMet=True");
    }
}

/// The UIDs of `uncountedTerminatedPods`: not empty, each once.
fn uncounted_uids(errs: &mut Errors, uncounted: &Value) {
    let mut seen = BTreeSet::new();
    for key in ["succeeded", "failed"] {
        for (i, uid) in list(uncounted, key).iter().enumerate() {
            let (uid, path) = (str_of(uid), format!("status.uncountedTerminatedPods.{key}[{i}]"));
            if uid.is_empty() {
                errs.invalid(&path, go_quote(uid), "must not be empty");
            } else if !seen.insert(uid) {
                errs.duplicate(&path, go_quote(uid));
            }
        }
    }
}

/// Go's `%#v` of a `batch.UncountedTerminatedPods`.
fn go_uncounted(uncounted: &Value) -> String {
    let uids = |key: &str| match at(uncounted, key).as_array() {
        None => "[]types.UID(nil)".to_owned(),
        Some(items) => {
            let body: Vec<String> = items.iter().map(|u| go_quote(str_of(u))).collect();
            format!("[]types.UID{{{}}}", body.join(", "))
        }
    };
    format!("batch.UncountedTerminatedPods{{Succeeded:{}, Failed:{}}}", uids("succeeded"), uids("failed"))
}

/// The completed and failed index rules of `validateJobStatus`.
fn indexes(errs: &mut Errors, spec: &Value, status: &Value, changed: &Changed) {
    let completions = int(spec, "completions");
    let completed = text(status, "completedIndexes");
    let failed = at(status, "failedIndexes").as_str();
    let per_index = !at(spec, "backoffLimitPerIndex").is_null();
    if changed.completed_indexes
        && let Some(c) = completions
        && let Err(e) = indexes_format(completed, c)
    {
        let detail = format!("error parsing completedIndexes: {e}");
        errs.invalid("status.completedIndexes", go_quote(completed), &detail);
    }
    if changed.failed_indexes
        && per_index
        && let (Some(c), Some(f)) = (completions, failed)
        && let Err(e) = indexes_format(f, c)
    {
        errs.invalid("status.failedIndexes", go_quote(f), &format!("error parsing failedIndexes: {e}"));
    }
    if changed.completed_indexes && !completed.is_empty() && text(spec, "completionMode") != "Indexed" {
        let detail = "cannot set non-empty completedIndexes when non-indexed completion mode";
        errs.invalid("status.completedIndexes", go_quote(completed), detail);
    }
    if let Some(f) = failed.filter(|_| changed.failed_indexes && !per_index) {
        let detail = "cannot set non-null failedIndexes when backoffLimitPerIndex is null";
        errs.invalid("status.failedIndexes", go_quote(f), detail);
    }
    if (changed.failed_indexes || changed.completed_indexes)
        && let (Some(c), Some(f)) = (completions, failed)
        && let Some(index) = overlap(completed, f, c)
    {
        let detail = format!("failedIndexes and completedIndexes overlap at index: {index}");
        errs.invalid("status.failedIndexes", go_quote(f), &detail);
    }
}
