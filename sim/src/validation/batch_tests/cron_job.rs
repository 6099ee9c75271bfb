//! CronJob rules.

use serde_json::json;

use super::*;
use crate::resources::Builtin;

// === CronJob ===

#[test]
fn valid_cron_jobs_pass() {
    for schedule in ["*/5 * * * *", "0 0 1 jan-mar mon", "@hourly", "@every 5m", "5 4 * * SUN", "0 0 ? * *"] {
        let cj = with(cron_job(), "/spec/schedule", json!(schedule));
        assert_eq!(create(Builtin::CronJob, &cj), Vec::<String>::new(), "{schedule}");
    }
    let zoned = with(cron_job(), "/spec/timeZone", json!("Europe/Paris"));
    assert!(create(Builtin::CronJob, &zoned).is_empty());
}

#[test]
fn schedules_are_parsed_as_robfig_cron_does() {
    let cases = [
        ("* * * *", "expected exactly 5 fields, found 4: [* * * *]"),
        ("60 * * * *", "end of range (60) above maximum (59): 60"),
        ("* * 0 * *", "beginning of range (0) below minimum (1): 0"),
        ("5-2 * * * *", "beginning of range (5) beyond end of range (2): 5-2"),
        ("*/0 * * * *", "step of range should be a positive number: */0"),
        ("x * * * *", r#"failed to parse int from x: strconv.Atoi: parsing "x": invalid syntax"#),
        ("1-2-3 * * * *", "too many hyphens: 1-2-3"),
        ("@fortnightly", "unrecognized descriptor: @fortnightly"),
    ];
    for (schedule, message) in cases {
        let cj = with(cron_job(), "/spec/schedule", json!(schedule));
        assert_eq!(
            create(Builtin::CronJob, &cj),
            [format!("spec.schedule: Invalid value: {:?}: {message}", schedule)],
            "{schedule}"
        );
    }
}

#[test]
fn time_zones_belong_in_the_time_zone_field() {
    let tz = with(cron_job(), "/spec/schedule", json!("TZ=UTC 0 * * * *"));
    assert_eq!(
        create(Builtin::CronJob, &tz),
        [
            r#"spec.schedule: Invalid value: "TZ=UTC 0 * * * *": cannot use TZ or CRON_TZ in schedule, use timeZone field instead"#
        ]
    );
    // An existing schedule with TZ may stay, but not beside timeZone.
    assert!(update(Builtin::CronJob, &tz, &tz).is_empty());
    let both = with(tz.clone(), "/spec/timeZone", json!("UTC"));
    assert_eq!(
        update(Builtin::CronJob, &tz, &both),
        [
            r#"spec.schedule: Invalid value: "TZ=UTC 0 * * * *": cannot use both timeZone field and TZ or CRON_TZ in schedule"#
        ]
    );
    let unknown = with(cron_job(), "/spec/timeZone", json!("Mars/Olympus"));
    assert_eq!(
        create(Builtin::CronJob, &unknown),
        [r#"spec.timeZone: Invalid value: "Mars/Olympus": unknown time zone Mars/Olympus"#]
    );
    let local = with(cron_job(), "/spec/timeZone", json!("Local"));
    assert_eq!(
        create(Builtin::CronJob, &local),
        [
            r#"spec.timeZone: Invalid value: "Local": timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones"#
        ]
    );
    let empty = with(cron_job(), "/spec/timeZone", json!(""));
    assert_eq!(
        create(Builtin::CronJob, &empty),
        [r#"spec.timeZone: Invalid value: "": timeZone must be nil or non-empty string"#]
    );
}

#[test]
fn cron_job_spec_rules() {
    let long = with(cron_job(), "/metadata/name", json!("a".repeat(53)));
    assert_eq!(
        create(Builtin::CronJob, &long),
        [format!("metadata.name: Invalid value: \"{}\": must be no more than 52 characters", "a".repeat(53))]
    );
    assert!(update(Builtin::CronJob, &long, &long).is_empty(), "the limit is for new CronJobs only");
    let cj = with(cron_job(), "/spec/concurrencyPolicy", json!("Sometimes"));
    let cj = with(cj, "/spec/startingDeadlineSeconds", json!(-1));
    let cj = with(cj, "/spec/jobTemplate/spec/selector", json!({"matchLabels": {"a": "b"}}));
    let cj = with(cj, "/spec/jobTemplate/spec/manualSelector", json!(true));
    let cj = with(cj, "/spec/failedJobsHistoryLimit", json!(-1));
    assert_eq!(
        create(Builtin::CronJob, &cj),
        [
            "spec.startingDeadlineSeconds: Invalid value: -1: must be greater than or equal to 0",
            r#"spec.concurrencyPolicy: Unsupported value: "Sometimes": supported values: "Allow", "Forbid", "Replace""#,
            r#"spec.jobTemplate.spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"a":"b"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: `selector` will be auto-generated"#,
            r#"spec.jobTemplate.spec.manualSelector: Unsupported value: true: supported values: "nil", "false""#,
            "spec.failedJobsHistoryLimit: Invalid value: -1: must be greater than or equal to 0",
        ]
    );
    let always = with(cron_job(), "/spec/jobTemplate/spec/template/spec/restartPolicy", json!("Always"));
    assert_eq!(
        create(Builtin::CronJob, &always),
        [r#"spec.jobTemplate.spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never""#]
    );
}
