//! The CronJob controller end to end, ported from upstream's
//! `test/e2e/apps/cronjob.go`: the real `kcm-rs` binary against kube-sim
//! and against the testbed, driven with kubectl.
//!
//! Every-minute schedules would make these tests wait minutes, so they
//! use upstream's own levers: `status.lastScheduleTime` set back through
//! the status subresource makes the current minute's run due at once (the
//! controller starts the most recent missed time), and a test waits for
//! the next minute's run at most once.
//!
//! The job-controller runs the Jobs: their pods run until the test is
//! done, except where a test needs Jobs that finish, whose pods exit a
//! second after they start (`kube-sim.io/exit-after`, which kube-sim's
//! kubelet and the testbed's kwok stages honour), with
//! code 0 or 1 (`kube-sim.io/exit-code`), as upstream's tests give them
//! `/bin/true` or `/bin/false`.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::TryStreamExt;
use jiff::tz::TimeZone;
use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::batch::v1::{CronJob, Job};
use kube::api::Api;
use kube::runtime::watcher;
use kube_sim::testing::{Patience, kubectl, kubectl_ok, kubectl_ok_with_stdin, wait_for};
use serde_json::{Value, json};

use crate::common::{Env, PATIENCE, default_service_account, events, on_both, start};

/// A wait that spans the next minute's run.
const NEXT_MINUTE: Patience = Patience { deadline: Duration::from_secs(150), recheck: Duration::from_secs(1) };

// === utils ===

/// upstream `newTestCronJob`: one Job of one pod per run, with `spec`
/// merged over it.
fn manifest(name: &str, schedule: &str, policy: &str, spec: Value) -> String {
    let mut cron_job = json!({
        "apiVersion": "batch/v1", "kind": "CronJob",
        "metadata": {"name": name},
        "spec": {
            "schedule": schedule, "concurrencyPolicy": policy,
            "jobTemplate": {
                "metadata": {"labels": {"run": name}, "annotations": {"team": "batch"}},
                "spec": {"parallelism": 1, "completions": 1, "backoffLimit": 1,
                    "template": {"spec": {"restartPolicy": "OnFailure",
                        "containers": [{"name": "c", "image": "busybox", "command": ["sleep", "300"]}]}}}
            }
        }
    });
    if let (Some(base), Some(extra)) = (cron_job["spec"].as_object_mut(), spec.as_object()) {
        base.extend(extra.clone());
    }
    cron_job.to_string()
}

async fn create(env: &Env, name: &str, schedule: &str, policy: &str, spec: Value) {
    default_service_account(&env.cluster, &env.client, &env.ns).await;
    let manifest = manifest(name, schedule, policy, spec);
    kubectl_ok_with_stdin(&env.kubeconfig, &["create", "-n", &env.ns, "-f", "-"], &manifest).await;
}

/// upstream's `deleteCronJob`, at the end of a test: the CronJob goes, its
/// Jobs and their pods after it (in the background). On the shared
/// testbed the kcm-rs of the tests after it would otherwise go on running
/// it every minute.
async fn remove(env: &Env, name: &str) {
    kubectl_ok(&env.kubeconfig, &["delete", "cronjob", name, "-n", &env.ns, "--cascade=background"]).await;
}

fn rfc3339(t: Timestamp) -> String {
    t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// Sets `status.lastScheduleTime` `back` before now, as a CronJob that last
/// ran then: its runs since are missed, the latest due at once.
async fn last_scheduled(env: &Env, name: &str, back: SignedDuration) {
    let patch = json!({"status": {"lastScheduleTime": rfc3339(Timestamp::now() - back)}}).to_string();
    let args = ["patch", "cronjob", name, "-n", &env.ns, "--subresource=status", "--type=merge", "-p", &patch];
    kubectl_ok(&env.kubeconfig, &args).await;
}

async fn cron_job(env: &Env, name: &str) -> CronJob {
    let out = kubectl_ok(&env.kubeconfig, &["get", "cronjob", name, "-n", &env.ns, "-o", "json"]).await;
    serde_json::from_str(&out).expect("a CronJob")
}

fn active_names(cron_job: &CronJob) -> Vec<String> {
    let active = cron_job.status.as_ref().and_then(|s| s.active.clone()).unwrap_or_default();
    active.into_iter().filter_map(|r| r.name).collect()
}

/// The Jobs `name` controls, by name.
async fn jobs_of(env: &Env, name: &str) -> Vec<Job> {
    let out = kubectl_ok(&env.kubeconfig, &["get", "jobs", "-n", &env.ns, "-o", "json"]).await;
    let list: Value = serde_json::from_str(&out).expect("a list");
    let mut jobs: Vec<Job> = serde_json::from_value(list["items"].clone()).expect("Jobs");
    jobs.retain(|j| j.metadata.owner_references.iter().flatten().any(|r| r.kind == "CronJob" && r.name == name));
    jobs.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    jobs
}

fn finished(job: &Job) -> bool {
    let conditions = job.status.as_ref().and_then(|s| s.conditions.clone()).unwrap_or_default();
    conditions.iter().any(|c| (c.type_ == "Complete" || c.type_ == "Failed") && c.status == "True")
}

/// Waits until the CronJob lists at least `count` active Jobs; their names.
async fn wait_for_active(env: &Env, name: &str, count: usize, patience: Patience) -> Vec<String> {
    wait_for(&env.cluster, patience, &format!("{count} active Jobs of {name}"), || async {
        let active = active_names(&cron_job(env, name).await);
        if active.len() >= count { Ok(active) } else { Err(format!("active {active:?}")) }
    })
    .await
}

/// Waits for an Event `reason` about the CronJob.
async fn wait_for_event(env: &Env, name: &str, reason: &str, patience: Patience) -> String {
    wait_for(&env.cluster, patience, &format!("{reason} for {name}"), || async {
        let found = events(env, &env.ns, name, reason).await;
        found.first().and_then(|e| e.message.clone()).ok_or_else(|| "none yet".to_owned())
    })
    .await
}

/// Watches the Jobs of CronJob `name`: the most unfinished ones seen at
/// once.
struct MostActive {
    most: Arc<Mutex<usize>>,
    task: tokio::task::JoinHandle<()>,
}

impl MostActive {
    fn watch(env: &Env, name: &str) -> Self {
        let most = Arc::new(Mutex::new(0));
        let api: Api<Job> = Api::namespaced(env.client.clone(), &env.ns);
        let stream = watcher(api, watcher::Config::default());
        let (seen, owner) = (most.clone(), name.to_owned());
        let task = tokio::spawn(async move {
            let mut jobs = std::collections::BTreeMap::new();
            futures::pin_mut!(stream);
            while let Ok(Some(event)) = stream.try_next().await {
                match event {
                    watcher::Event::InitApply(j) | watcher::Event::Apply(j) => {
                        let ours = j.metadata.owner_references.iter().flatten().any(|r| r.name == owner);
                        if ours {
                            jobs.insert(j.metadata.name.clone().unwrap_or_default(), j);
                        }
                    }
                    watcher::Event::Delete(j) => {
                        jobs.remove(j.metadata.name.as_deref().unwrap_or_default());
                    }
                    _ => {}
                }
                let unfinished = jobs.values().filter(|j| !finished(j) && j.metadata.deletion_timestamp.is_none());
                let count = unfinished.count();
                let mut most = seen.lock().expect("lock");
                *most = (*most).max(count);
            }
        });
        Self { most, task }
    }

    fn most(&self) -> usize {
        *self.most.lock().expect("lock")
    }
}

impl Drop for MostActive {
    fn drop(&mut self) {
        self.task.abort();
    }
}

// === the tests ===

on_both!(
    allow_schedules_multiple_jobs_concurrently,
    forbid_never_runs_two_jobs,
    replace_replaces_the_running_job,
    suspended_schedules_nothing,
    more_than_100_missed_schedules,
    deleted_active_jobs_leave_the_active_list,
    successful_jobs_history_limit,
    failed_jobs_history_limit,
    time_zone,
);

/// upstream "should schedule multiple jobs concurrently": Allow runs a
/// new Job while the last one is still running. The created Job carries
/// the template's labels and annotations, the scheduled-timestamp
/// annotation and the CronJob as controller.
async fn allow_schedules_multiple_jobs_concurrently() {
    let env = start().await;
    create(&env, "concurrent", "*/1 * * * ?", "Allow", json!({})).await;
    last_scheduled(&env, "concurrent", SignedDuration::from_mins(5)).await;
    let first = wait_for_active(&env, "concurrent", 1, PATIENCE).await;
    let job = jobs_of(&env, "concurrent").await.into_iter().next().expect("a Job");
    let name = job.metadata.name.clone().unwrap_or_default();
    assert_eq!(first, std::slice::from_ref(&name));
    let minutes: i64 = name.trim_start_matches("concurrent-").parse().expect("minutes since the epoch");
    let stamp = job.metadata.annotations.clone().unwrap_or_default();
    assert_eq!(
        stamp.get("batch.kubernetes.io/cronjob-scheduled-timestamp"),
        Some(&rfc3339(Timestamp::from_second(minutes * 60).expect("time")))
    );
    assert_eq!(stamp.get("team").map(String::as_str), Some("batch"));
    assert_eq!(job.metadata.labels.unwrap_or_default().get("run").map(String::as_str), Some("concurrent"));
    let owner = job.metadata.owner_references.unwrap_or_default().remove(0);
    assert_eq!((owner.kind.as_str(), owner.name.as_str(), owner.controller), ("CronJob", "concurrent", Some(true)));
    assert!(!wait_for_event(&env, "concurrent", "SuccessfulCreate", PATIENCE).await.is_empty());

    // The next minute's run starts beside the first, still running.
    let both = wait_for_active(&env, "concurrent", 2, NEXT_MINUTE).await;
    let jobs = jobs_of(&env, "concurrent").await;
    assert!(jobs.iter().filter(|j| !finished(j)).count() >= 2, "{both:?}");
    let status = cron_job(&env, "concurrent").await.status.expect("status");
    assert!(status.last_schedule_time.is_some());
    assert!(events(&env, &env.ns, "concurrent", "UnexpectedJob").await.is_empty());
    assert!(events(&env, &env.ns, "concurrent", "MissingJob").await.is_empty());
    remove(&env, "concurrent").await;
}

/// upstream "should not schedule new jobs when ForbidConcurrent": the
/// next minute's run is skipped while one is active (`JobAlreadyActive`),
/// and no two Jobs are ever unfinished at once.
async fn forbid_never_runs_two_jobs() {
    let env = start().await;
    let checker = MostActive::watch(&env, "forbid");
    create(&env, "forbid", "*/1 * * * ?", "Forbid", json!({})).await;
    last_scheduled(&env, "forbid", SignedDuration::from_mins(5)).await;
    assert_eq!(wait_for_active(&env, "forbid", 1, PATIENCE).await.len(), 1);
    let message = wait_for_event(&env, "forbid", "JobAlreadyActive", NEXT_MINUTE).await;
    assert_eq!(message, "Not starting job because prior execution is running and concurrency policy is Forbid");
    assert_eq!(active_names(&cron_job(&env, "forbid").await).len(), 1);
    assert_eq!(jobs_of(&env, "forbid").await.len(), 1);
    assert_eq!(checker.most(), 1, "two Forbid Jobs were unfinished at once");
    remove(&env, "forbid").await;
}

/// upstream "should replace jobs when ReplaceConcurrent": the next
/// minute's run deletes the running Job and takes its place.
async fn replace_replaces_the_running_job() {
    let env = start().await;
    create(&env, "replace", "*/1 * * * ?", "Replace", json!({})).await;
    last_scheduled(&env, "replace", SignedDuration::from_mins(5)).await;
    let first = wait_for_active(&env, "replace", 1, PATIENCE).await.remove(0);
    let replaced = wait_for(&env.cluster, NEXT_MINUTE, "the Job replaced", || async {
        let active = active_names(&cron_job(&env, "replace").await);
        let alive: Vec<String> = jobs_of(&env, "replace")
            .await
            .into_iter()
            .filter(|j| j.metadata.deletion_timestamp.is_none())
            .filter_map(|j| j.metadata.name)
            .collect();
        match (active.as_slice(), alive.as_slice()) {
            ([a], [j]) if *a != first && a == j => Ok(a.clone()),
            _ => Err(format!("active {active:?}, Jobs {alive:?}")),
        }
    })
    .await;
    assert_ne!(replaced, first);
    let deleted = wait_for_event(&env, "replace", "SuccessfulDelete", PATIENCE).await;
    assert_eq!(deleted, format!("Deleted job {first}"));
    remove(&env, "replace").await;
}

/// upstream "should not schedule jobs when suspended": missed runs start
/// nothing while suspended, and the latest starts once resumed.
async fn suspended_schedules_nothing() {
    let env = start().await;
    create(&env, "suspended", "*/1 * * * ?", "Allow", json!({"suspend": true})).await;
    // The controller syncs the CronJob once, then again after its missed
    // runs are written: each write waits for the sync before it, so the
    // two never fold into one sync of the queue.
    let before = synced_cronjobs(&env, 1.0).await;
    last_scheduled(&env, "suspended", SignedDuration::from_mins(5)).await;
    synced_cronjobs(&env, before + 1.0).await;
    assert!(jobs_of(&env, "suspended").await.is_empty());
    assert!(active_names(&cron_job(&env, "suspended").await).is_empty());

    kubectl_ok(
        &env.kubeconfig,
        &["patch", "cronjob", "suspended", "-n", &env.ns, "--type=merge", "-p", r#"{"spec":{"suspend":false}}"#],
    )
    .await;
    assert_eq!(wait_for_active(&env, "suspended", 1, PATIENCE).await.len(), 1);
    remove(&env, "suspended").await;
}

/// Waits until the CronJob controller has synced `at_least` times
/// (`kcm_controller_syncs_total`, every result); the count then.
async fn synced_cronjobs(env: &Env, at_least: f64) -> f64 {
    wait_for(&env.cluster, PATIENCE, &format!("{at_least} CronJob syncs"), || async {
        let (_, metrics) = env.scrape("/metrics").await;
        let syncs: f64 = metrics
            .lines()
            .filter(|l| l.starts_with("kcm_controller_syncs_total{") && l.contains("controller=\"cronjob-controller\""))
            .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .sum();
        if syncs >= at_least { Ok(syncs) } else { Err(format!("{syncs} syncs")) }
    })
    .await
}

/// upstream "should be able to schedule after more than 100 missed
/// schedule": `TooManyMissedTimes`, and the most recent run starts.
async fn more_than_100_missed_schedules() {
    let env = start().await;
    create(&env, "missed", "*/1 * * * ?", "Forbid", json!({})).await;
    last_scheduled(&env, "missed", SignedDuration::from_hours(3)).await;
    assert_eq!(wait_for_active(&env, "missed", 1, PATIENCE).await.len(), 1);
    let message = wait_for_event(&env, "missed", "TooManyMissedTimes", PATIENCE).await;
    assert_eq!(
        message,
        "too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew"
    );
    assert_eq!(jobs_of(&env, "missed").await.len(), 1);
    remove(&env, "missed").await;
}

/// upstream "should remove from active list jobs that have been deleted":
/// `MissingJob`, and the active list empties.
async fn deleted_active_jobs_leave_the_active_list() {
    let env = start().await;
    create(&env, "forbid", "*/1 * * * ?", "Forbid", json!({})).await;
    last_scheduled(&env, "forbid", SignedDuration::from_mins(5)).await;
    let job = wait_for_active(&env, "forbid", 1, PATIENCE).await.remove(0);
    kubectl_ok(&env.kubeconfig, &["delete", "job", &job, "-n", &env.ns]).await;
    let not_found = kubectl(&env.kubeconfig, &["get", "job", &job, "-n", &env.ns]).await;
    assert!(!not_found.ok, "the Job is gone");
    wait_for(&env.cluster, PATIENCE, "the Job off the active list", || async {
        let active = active_names(&cron_job(&env, "forbid").await);
        if active.contains(&job) { Err(format!("active {active:?}")) } else { Ok(()) }
    })
    .await;
    let message = wait_for_event(&env, "forbid", "MissingJob", PATIENCE).await;
    assert_eq!(message, format!("Active job went missing: {job}"));
    remove(&env, "forbid").await;
}

/// upstream "should delete successful finished jobs with limit of one
/// successful job": of two succeeded Jobs the older goes.
async fn successful_jobs_history_limit() {
    history_limit("successful-limit", true).await;
}

/// upstream "should delete failed finished jobs with limit of one job".
async fn failed_jobs_history_limit() {
    history_limit("failed-limit", false).await;
}

async fn history_limit(name: &str, succeed: bool) {
    let env = start().await;
    let mut spec = if succeed {
        json!({"successfulJobsHistoryLimit": 1, "failedJobsHistoryLimit": 0})
    } else {
        json!({"successfulJobsHistoryLimit": 0, "failedJobsHistoryLimit": 1})
    };
    // upstream's successCommand and failureCommand: each Job's pod ends a
    // second after it starts, and the job-controller finishes the Job.
    let mut job_template = serde_json::from_str::<Value>(&manifest(name, "", "", json!({})))
        .expect("the manifest is JSON")["spec"]["jobTemplate"]
        .clone();
    let exit = json!({"kube-sim.io/exit-after": "1s", "kube-sim.io/exit-code": if succeed { "0" } else { "1" }});
    job_template["spec"]["template"]["metadata"] = json!({"annotations": exit});
    spec["jobTemplate"] = job_template;
    create(&env, name, "*/1 * * * ?", "Allow", spec).await;
    last_scheduled(&env, name, SignedDuration::from_mins(5)).await;
    let first = wait_for_active(&env, name, 1, PATIENCE).await.remove(0);
    wait_for(&env.cluster, PATIENCE, "the finished Job off the active list", || async {
        let active = active_names(&cron_job(&env, name).await);
        if active.contains(&first) { Err(format!("active {active:?}")) } else { Ok(()) }
    })
    .await;
    if succeed {
        let status = cron_job(&env, name).await.status.expect("status");
        assert!(status.last_successful_time.is_some(), "lastSuccessfulTime set");
    }
    // The next minute's run (it may have started already).
    let second = wait_for(&env.cluster, NEXT_MINUTE, "the next run", || async {
        let jobs = jobs_of(&env, name).await;
        let names: Vec<String> = jobs.into_iter().filter_map(|j| j.metadata.name).collect();
        names.iter().find(|n| **n != first).cloned().ok_or_else(|| format!("Jobs {names:?}"))
    })
    .await;
    wait_for(&env.cluster, PATIENCE, "the older finished Job deleted", || async {
        let left: Vec<String> = jobs_of(&env, name)
            .await
            .into_iter()
            .filter(|j| j.metadata.deletion_timestamp.is_none())
            .filter_map(|j| j.metadata.name)
            .collect();
        if left == [second.clone()] { Ok(()) } else { Err(format!("Jobs {left:?}")) }
    })
    .await;
    assert_eq!(wait_for_event(&env, name, "SuccessfulDelete", PATIENCE).await, format!("Deleted job {first}"));
    remove(&env, name).await;
}

/// upstream "should support timezone": a time zone the API server does
/// not know is refused; one it knows sets the wall clock the schedule is
/// read in: a daily schedule at what is, in Asia/Kolkata (+05:30), the
/// minute two minutes ago runs now, and its Job's scheduled timestamp is
/// written in that zone.
async fn time_zone() {
    let env = start().await;
    let bad = manifest("bad-zone", "*/1 * * * ?", "Allow", json!({"timeZone": "bad-time-zone"}));
    let refused =
        kube_sim::testing::kubectl_with_stdin(&env.kubeconfig, &["create", "-n", &env.ns, "-f", "-"], Some(&bad)).await;
    assert!(!refused.ok, "an unknown time zone is refused");

    let kolkata = jiff::tz::db().get("Asia/Kolkata").expect("Asia/Kolkata");
    let due = (Timestamp::now() - SignedDuration::from_mins(2)).to_zoned(kolkata.clone());
    let schedule = format!("{} {} * * *", due.minute(), due.hour());
    create(&env, "zoned", &schedule, "Allow", json!({"timeZone": "Asia/Kolkata"})).await;
    last_scheduled(&env, "zoned", SignedDuration::from_hours(3)).await;
    wait_for_active(&env, "zoned", 1, PATIENCE).await;
    let job = jobs_of(&env, "zoned").await.remove(0);
    let stamp = job.metadata.annotations.unwrap_or_default()["batch.kubernetes.io/cronjob-scheduled-timestamp"].clone();
    let expected = due.strftime("%Y-%m-%dT%H:%M:00+05:30").to_string();
    assert_eq!(stamp, expected);
    // Read in UTC, the same fields name a time five and a half hours away:
    // nothing would have been due.
    assert_ne!((Timestamp::now() - SignedDuration::from_mins(2)).to_zoned(TimeZone::UTC).hour(), due.hour());
    remove(&env, "zoned").await;
}
