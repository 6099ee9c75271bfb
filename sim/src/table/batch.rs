//! Rows and columns of the batch/v1 kinds, as upstream's `printJob` and
//! `printCronJob`: a Job's STATUS from its conditions, COMPLETIONS as
//! succeeded over wanted, DURATION from start to completion (or to now);
//! a CronJob's schedule, time zone, suspension, active Jobs and last
//! schedule.

use jiff::Timestamp;
use serde_json::Value;

use super::access::{get, int, list, str_at, time};
use super::cells::{age, name};
use super::column::{AGE, CONTAINERS_DOC, Column, IMAGES_DOC, NAME};
use super::format::{container_cells, format_label_selector, human_duration, since};

/// `JobSpec.selector`'s documentation.
const JOB_SELECTOR_DOC: &str = "A label query over pods that should match the pod count. Normally, the system \
     sets this field for you. More info: \
     https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors";

pub(super) const JOB_COLUMNS: &[Column] = &[
    NAME,
    Column::text("Status", "Status of the job."),
    Column::text(
        "Completions",
        "The number of pods which reached phase Succeeded. The value increases monotonically for a given \
         spec. However, it may decrease in reaction to scale down of elastic indexed jobs.",
    ),
    Column::text("Duration", "Time required to complete the job."),
    AGE,
    Column::wide("Containers", CONTAINERS_DOC),
    Column::wide("Images", IMAGES_DOC),
    Column::wide("Selector", JOB_SELECTOR_DOC),
];

pub(super) const CRON_JOB_COLUMNS: &[Column] = &[
    NAME,
    Column::text("Schedule", "The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron."),
    Column::text(
        "Timezone",
        "The time zone name for the given schedule, see \
         https://en.wikipedia.org/wiki/List_of_tz_database_time_zones. If not specified, this will default to \
         the time zone of the kube-controller-manager process. The set of valid time zone names and the time \
         zone offset is loaded from the system-wide time zone database by the API server during CronJob \
         validation and the controller manager during execution. If no system-wide time zone database can be \
         found a bundled version of the database is used instead. If the time zone name becomes invalid \
         during the lifetime of a CronJob or due to a change in host configuration, the controller will stop \
         creating new new Jobs and will create a system event with the reason UnknownTimeZone. More \
         information can be found in https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/#time-zones",
    ),
    Column::boolean(
        "Suspend",
        "This flag tells the controller to suspend subsequent executions, it does not apply to already \
         started executions.  Defaults to false.",
    ),
    Column::int("Active", "A list of pointers to currently running jobs."),
    Column::text("Last Schedule", "Information when was the last time the job was successfully scheduled."),
    AGE,
    Column::wide("Containers", CONTAINERS_DOC),
    Column::wide("Images", IMAGES_DOC),
    Column::wide("Selector", JOB_SELECTOR_DOC),
];

/// Whether the Job's first condition of `kind` is True (upstream
/// `hasJobCondition`).
fn has_condition(job: &Value, kind: &str) -> bool {
    list(job, &["status", "conditions"])
        .iter()
        .find(|c| c.get("type").and_then(Value::as_str) == Some(kind))
        .is_some_and(|c| c.get("status").and_then(Value::as_str) == Some("True"))
}

/// The STATUS cell: Complete, Failed, Terminating, Suspended,
/// FailureTarget or Running, first match wins.
fn job_status(job: &Value) -> &'static str {
    if has_condition(job, "Complete") {
        "Complete"
    } else if has_condition(job, "Failed") {
        "Failed"
    } else if get(job, &["metadata", "deletionTimestamp"]).is_some_and(|t| !t.is_null()) {
        "Terminating"
    } else if has_condition(job, "Suspended") {
        "Suspended"
    } else if has_condition(job, "FailureTarget") {
        "FailureTarget"
    } else {
        "Running"
    }
}

pub(super) fn print_job(obj: &Value, now: Timestamp) -> Vec<Value> {
    let succeeded = int(obj, &["status", "succeeded"]).unwrap_or(0);
    let completions = match int(obj, &["spec", "completions"]) {
        Some(wanted) => format!("{succeeded}/{wanted}"),
        None => match int(obj, &["spec", "parallelism"]).unwrap_or(0) {
            parallelism if parallelism > 1 => format!("{succeeded}/1 of {parallelism}"),
            _ => format!("{succeeded}/1"),
        },
    };
    let duration = match (time(obj, &["status", "startTime"]), time(obj, &["status", "completionTime"])) {
        (None, _) => String::new(),
        (Some(start), None) => human_duration(now.duration_since(start)),
        (Some(start), Some(end)) => human_duration(end.duration_since(start)),
    };
    let (names, images) = container_cells(list(obj, &["spec", "template", "spec", "containers"]));
    vec![
        name(obj),
        Value::from(job_status(obj)),
        Value::from(completions),
        Value::from(duration),
        age(obj, now),
        Value::from(names),
        Value::from(images),
        Value::from(format_label_selector(get(obj, &["spec", "selector"]))),
    ]
}

pub(super) fn print_cron_job(obj: &Value, now: Timestamp) -> Vec<Value> {
    let last_schedule = match time(obj, &["status", "lastScheduleTime"]) {
        Some(t) => since(now, Some(t)),
        None => "<none>".to_owned(),
    };
    let suspend = match get(obj, &["spec", "suspend"]).and_then(Value::as_bool) {
        Some(true) => "True",
        Some(false) => "False",
        None => "<unset>",
    };
    let template = &["spec", "jobTemplate", "spec", "template", "spec", "containers"];
    let (names, images) = container_cells(list(obj, template));
    vec![
        name(obj),
        Value::from(str_at(obj, &["spec", "schedule"]).unwrap_or_default()),
        Value::from(str_at(obj, &["spec", "timeZone"]).unwrap_or("<none>")),
        Value::from(suspend),
        Value::from(list(obj, &["status", "active"]).len()),
        Value::from(last_schedule),
        age(obj, now),
        Value::from(names),
        Value::from(images),
        Value::from(format_label_selector(get(obj, &["spec", "jobTemplate", "spec", "selector"]))),
    ]
}

#[cfg(test)]
mod tests {
    //! Upstream's `TestPrintJob` and `TestPrintCronJob` cases
    //! (pkg/printers/internalversion/printers_test.go).

    use serde_json::json;

    use super::*;

    fn now() -> Timestamp {
        "2024-06-01T12:00:00Z".parse().expect("valid time")
    }

    fn ago(secs: i64) -> String {
        Timestamp::from_second(now().as_second() - secs).expect("valid").to_string()
    }

    #[test]
    fn job_completions_follow_completions_or_parallelism() {
        let job = |spec: Value, status: Value| json!({"metadata": {"name": "job1", "creationTimestamp": ago(0)}, "spec": spec, "status": status});
        let row = print_job(&job(json!({"completions": 2}), json!({"succeeded": 1})), now());
        assert_eq!(row[..5], [json!("job1"), json!("Running"), json!("1/2"), json!(""), json!("0s")]);
        let row = print_job(&job(json!({"parallelism": 2}), json!({"succeeded": 0})), now());
        assert_eq!(row[2], "0/1 of 2");
        let row = print_job(&job(json!({"parallelism": 1}), json!({})), now());
        assert_eq!(row[2], "0/1");
    }

    #[test]
    fn job_duration_runs_to_completion_or_to_now() {
        let job = json!({"metadata": {"name": "j"}, "spec": {"completions": 1},
            "status": {"startTime": ago(7200), "completionTime": ago(1800), "succeeded": 1,
                "conditions": [{"type": "Complete", "status": "True"}]}});
        let row = print_job(&job, now());
        assert_eq!([&row[1], &row[2], &row[3]], [&json!("Complete"), &json!("1/1"), &json!("90m")]);
        let running = json!({"metadata": {"name": "j"}, "status": {"startTime": ago(300)}});
        assert_eq!(print_job(&running, now())[3], "5m");
    }

    #[test]
    fn job_status_follows_upstreams_precedence() {
        let with = |conditions: Value, deleting: bool| {
            let mut job = json!({"metadata": {"name": "j"}, "status": {"conditions": conditions}});
            if deleting {
                job["metadata"]["deletionTimestamp"] = json!(ago(1));
            }
            print_job(&job, now())[1].clone()
        };
        let cond = |kind: &str, status: &str| json!({"type": kind, "status": status});
        assert_eq!(with(json!([cond("Failed", "True")]), true), "Failed");
        assert_eq!(with(json!([cond("Suspended", "True")]), true), "Terminating");
        assert_eq!(with(json!([cond("Suspended", "True")]), false), "Suspended");
        assert_eq!(with(json!([cond("Suspended", "False")]), false), "Running");
        assert_eq!(with(json!([cond("FailureTarget", "True"), cond("Failed", "False")]), false), "FailureTarget");
        assert_eq!(with(json!([cond("SuccessCriteriaMet", "True")]), false), "Running");
    }

    #[test]
    fn job_wide_cells_are_containers_images_and_selector() {
        let job = json!({"metadata": {"name": "j"}, "spec": {
            "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": "u"}},
            "template": {"spec": {"containers": [{"name": "pi", "image": "perl"}]}}}});
        let row = print_job(&job, now());
        assert_eq!(row[5..], [json!("pi"), json!("perl"), json!("batch.kubernetes.io/controller-uid=u")]);
    }

    #[test]
    fn cron_job_cells() {
        let cj = json!({"metadata": {"name": "cronjob1", "creationTimestamp": ago(0)},
            "spec": {"schedule": "0/5 * * * ?", "suspend": false, "jobTemplate": {"spec": {"template": {
                "spec": {"containers": [{"name": "c", "image": "busybox"}]}}}}},
            "status": {"lastScheduleTime": ago(30), "active": [{"name": "cronjob1-1"}]}});
        assert_eq!(
            print_cron_job(&cj, now())[..7],
            [
                json!("cronjob1"),
                json!("0/5 * * * ?"),
                json!("<none>"),
                json!("False"),
                json!(1),
                json!("30s"),
                json!("0s")
            ]
        );
        let cj = json!({"metadata": {"name": "c"}, "spec": {"schedule": "@daily", "timeZone": "Europe/Paris"}});
        let row = print_cron_job(&cj, now());
        assert_eq!(
            [&row[2], &row[3], &row[4], &row[5]],
            [&json!("Europe/Paris"), &json!("<unset>"), &json!(0), &json!("<none>")]
        );
    }
}
