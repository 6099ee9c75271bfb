//! The Jobs a CronJob makes and reads (upstream `utils.go`:
//! `getJobFromTemplate2`, `getJobName`, `byJobStartTime`; the job
//! package's `IsJobFinished` and `IsJobSucceeded`).
//!
//! A Job is named `<cronjob>-<scheduled time in minutes since the epoch>`,
//! so that a schedule time is started once however often it is synced (a
//! second create answers AlreadyExists): `hello` scheduled at
//! 2016-05-19T10:00:00Z is `hello-24394200`.

use std::cmp::Ordering;

use jiff::Timestamp;
use jiff::tz::TimeZone;
use k8s_openapi::api::batch::v1::{CronJob, Job};
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference, Time};

/// The annotation carrying a Job's scheduled time, RFC 3339 in the
/// CronJob's time zone (upstream `batchv1.CronJobScheduledTimestampAnnotation`).
pub const SCHEDULED_TIMESTAMP_ANNOTATION: &str = "batch.kubernetes.io/cronjob-scheduled-timestamp";

/// upstream `getJobName`.
pub fn job_name(cron_job: &CronJob, scheduled: Timestamp) -> String {
    // Go's integer division truncates toward zero.
    format!("{}-{}", cron_job.metadata.name.as_deref().unwrap_or(""), scheduled.as_second() / 60)
}

/// upstream `getJobFromTemplate2`: the template's labels, annotations and
/// spec, the deterministic name, the scheduled-timestamp annotation (in
/// `zone`, the CronJob's `timeZone`, UTC without one) and the CronJob as
/// controller.
pub fn job_from_template(cron_job: &CronJob, scheduled: Timestamp, zone: &TimeZone) -> Job {
    let template = cron_job.spec.job_template.clone();
    let template_meta = template.metadata.unwrap_or_default();
    let mut annotations = template_meta.annotations.unwrap_or_default();
    annotations.insert(SCHEDULED_TIMESTAMP_ANNOTATION.to_owned(), rfc3339(scheduled, zone));
    Job {
        metadata: ObjectMeta {
            name: Some(job_name(cron_job, scheduled)),
            namespace: cron_job.metadata.namespace.clone(),
            labels: Some(template_meta.labels.unwrap_or_default()),
            annotations: Some(annotations),
            creation_timestamp: Some(Time(scheduled)),
            owner_references: Some(vec![controller_ref(cron_job)]),
            ..ObjectMeta::default()
        },
        spec: template.spec,
        status: None,
    }
}

/// `metav1.NewControllerRef(cronJob, batch/v1 CronJob)`.
pub fn controller_ref(cron_job: &CronJob) -> OwnerReference {
    OwnerReference {
        api_version: "batch/v1".to_owned(),
        kind: "CronJob".to_owned(),
        name: cron_job.metadata.name.clone().unwrap_or_default(),
        uid: cron_job.metadata.uid.clone().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

/// Go's `t.In(zone).Format(time.RFC3339)`: `Z` for a zero offset.
fn rfc3339(t: Timestamp, zone: &TimeZone) -> String {
    let zoned = t.to_zoned(zone.clone());
    let offset = zoned.offset();
    let clock = zoned.strftime("%Y-%m-%dT%H:%M:%S");
    if offset.seconds() == 0 { format!("{clock}Z") } else { format!("{clock}{}", zoned.strftime("%:z")) }
}

/// The reference a CronJob's `status.active` holds for `job` (upstream
/// `getRef`).
pub fn job_reference(job: &Job) -> ObjectReference {
    ObjectReference {
        api_version: Some("batch/v1".to_owned()),
        kind: Some("Job".to_owned()),
        name: job.metadata.name.clone(),
        namespace: job.metadata.namespace.clone(),
        uid: job.metadata.uid.clone(),
        resource_version: job.metadata.resource_version.clone(),
        ..ObjectReference::default()
    }
}

/// upstream `IsJobSucceeded`: its `Complete` condition is `True`.
pub fn is_succeeded(job: &Job) -> bool {
    job.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|c| c.iter().any(|c| c.type_ == "Complete" && c.status == "True"))
}

/// upstream `byJobStartTime`: started Jobs first, by start time, then by
/// name.
pub fn by_start_time(a: &Job, b: &Job) -> Ordering {
    let start = |j: &Job| j.status.as_ref().and_then(|s| s.start_time.as_ref()).map(|t| t.0);
    match (start(a), start(b)) {
        (None, Some(_)) => Ordering::Greater,
        (Some(_), None) => Ordering::Less,
        (x, y) if x == y => a.metadata.name.cmp(&b.metadata.name),
        (x, y) => x.cmp(&y),
    }
}

/// upstream `getJobsToBeReconciled`: the Jobs whose controller is named
/// as the CronJob (whatever their labels; the name is all upstream
/// compares).
pub fn jobs_to_be_reconciled<'a, J: AsRef<kcm_objects::Job>>(cron_job: &CronJob, jobs: &'a [J]) -> Vec<&'a J> {
    let name = cron_job.metadata.name.as_deref().unwrap_or("");
    jobs.iter()
        .filter(|job| {
            let job = job.as_ref();
            job.metadata.namespace == cron_job.metadata.namespace
                && job.metadata.owner_references.iter().flatten().any(|r| r.controller == Some(true) && r.name == name)
        })
        .collect()
}

/// Whether the Job's controller is this CronJob (`metav1.IsControlledBy`,
/// by uid).
pub fn is_controlled_by(job: &Job, cron_job: &CronJob) -> bool {
    let uid = cron_job.metadata.uid.as_deref();
    job.metadata.owner_references.iter().flatten().any(|r| r.controller == Some(true) && Some(r.uid.as_str()) == uid)
}
