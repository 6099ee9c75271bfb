//! Jobs and CronJobs through kubectl and raw HTTP, on a cluster whose
//! controllers are not running: discovery, what the API server stores
//! (defaults, the generated selector), what a write may change, the
//! tables kubectl prints, and the batch/v1 delete default.

use kube_sim::testing::{kubeconfig, kubectl, kubectl_ok, kubectl_ok_with_stdin};
use serde_json::{Value, json};

use super::util::{self, call, failure, get_json, table};

// === utils ===

/// The Jobs collection of `default`.
const JOBS: &str = "/apis/batch/v1/namespaces/default/jobs";

/// A Job `name` of one busybox container that never restarts.
fn job(name: &str) -> Value {
    json!({
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": name},
        "spec": {"template": {"spec": {"restartPolicy": "Never",
            "containers": [{"name": "work", "image": "busybox"}]}}},
    })
}

// === tests ===

#[tokio::test]
async fn discovery_names_the_batch_kinds_as_upstream() {
    let sim = util::start().await;
    let (_dir, config) = kubeconfig(&sim);
    let rows = table(&kubectl_ok(&config, &["api-resources", "--api-group=batch", "--no-headers"]).await);
    assert_eq!(rows, [vec!["cronjobs", "cj", "batch/v1", "true", "CronJob"], vec!["jobs", "batch/v1", "true", "Job"],]);
    let verbs = kubectl_ok(&config, &["api-resources", "--api-group=batch", "-o", "wide", "--no-headers"]).await;
    assert!(verbs.lines().all(|l| l.contains("all")), "{verbs}");
    let client = sim.client().expect("client");
    let group = util::get(&client, "/apis/batch/v1").await.json();
    let subresources: Vec<&str> =
        group["resources"].as_array().expect("resources").iter().filter_map(|r| r["name"].as_str()).collect();
    assert_eq!(subresources, ["cronjobs", "cronjobs/status", "jobs", "jobs/status"]);
}

#[tokio::test]
async fn kubectl_create_job_stores_the_defaults_and_the_generated_selector() {
    let sim = util::start().await;
    let (_dir, config) = kubeconfig(&sim);
    kubectl_ok(&config, &["create", "job", "pi", "--image=perl:5.34", "--", "perl", "-e", "print 1"]).await;
    let job = get_json(&config, &["job", "pi"]).await;
    let uid = job["metadata"]["uid"].as_str().expect("uid");
    let spec = &job["spec"];
    assert_eq!(
        [&spec["parallelism"], &spec["completions"], &spec["backoffLimit"], &spec["completionMode"]],
        [&json!(1), &json!(1), &json!(6), &json!("NonIndexed")]
    );
    assert_eq!([&spec["suspend"], &spec["manualSelector"]], [&json!(false), &json!(false)]);
    assert_eq!(spec["podReplacementPolicy"], "TerminatingOrFailed");
    assert_eq!(spec["selector"], json!({"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}));
    assert_eq!(
        spec["template"]["metadata"]["labels"],
        json!({"batch.kubernetes.io/controller-uid": uid, "batch.kubernetes.io/job-name": "pi",
            "controller-uid": uid, "job-name": "pi"})
    );
    assert_eq!(spec["template"]["spec"]["restartPolicy"], "Never");
    assert_eq!(spec["template"]["spec"]["containers"][0]["command"], json!(["perl", "-e", "print 1"]));
    assert_eq!(spec["template"]["spec"]["dnsPolicy"], "ClusterFirst");
    assert_eq!(job["metadata"]["generation"], 1);
    assert_eq!(job["status"], json!({}));
}

#[tokio::test]
async fn kubectl_create_cronjob_and_a_job_from_it() {
    let sim = util::start().await;
    let (_dir, config) = kubeconfig(&sim);
    kubectl_ok(&config, &["create", "cronjob", "hello", "--image=busybox", "--schedule=*/5 * * * *", "--", "date"])
        .await;
    let cj = get_json(&config, &["cj", "hello"]).await;
    let spec = &cj["spec"];
    assert_eq!(spec["schedule"], "*/5 * * * *");
    assert_eq!(
        [
            &spec["concurrencyPolicy"],
            &spec["suspend"],
            &spec["successfulJobsHistoryLimit"],
            &spec["failedJobsHistoryLimit"]
        ],
        [&json!("Allow"), &json!(false), &json!(3), &json!(1)]
    );
    assert_eq!(spec["jobTemplate"]["spec"]["template"]["spec"]["restartPolicy"], "OnFailure");
    assert_eq!(spec["jobTemplate"]["spec"]["template"]["spec"]["schedulerName"], "default-scheduler");
    assert!(spec["jobTemplate"]["spec"].get("backoffLimit").is_none(), "{cj}");
    assert_eq!(cj["metadata"]["generation"], 1);

    kubectl_ok(&config, &["create", "job", "manual", "--from=cronjob/hello"]).await;
    let job = get_json(&config, &["job", "manual"]).await;
    assert_eq!(job["metadata"]["annotations"]["cronjob.kubernetes.io/instantiate"], "manual");
    assert_eq!(job["metadata"]["ownerReferences"][0]["kind"], "CronJob");
    assert_eq!(job["metadata"]["ownerReferences"][0]["uid"], cj["metadata"]["uid"]);
    assert_eq!(job["spec"]["template"]["spec"]["containers"][0]["command"], json!(["date"]));
    assert_eq!(job["spec"]["backoffLimit"], 6);
}

#[tokio::test]
async fn apply_patch_and_status_writes_keep_spec_and_status_apart() {
    let sim = util::start().await;
    let (_dir, config) = kubeconfig(&sim);
    let yaml = "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: batch\nspec:\n  completions: 3\n  parallelism: 2\n  \
        suspend: true\n  template:\n    metadata:\n      labels: {app: batch}\n    spec:\n      restartPolicy: Never\n      \
        containers:\n      - name: work\n        image: busybox\n";
    kubectl_ok_with_stdin(&config, &["apply", "-f", "-"], yaml).await;
    let job = get_json(&config, &["job", "batch"]).await;
    assert_eq!(job["metadata"]["labels"], json!({"app": "batch"}), "the template's labels, before generation");
    assert_eq!(job["spec"]["parallelism"], 2);
    assert!(job["spec"].get("completions").is_some());

    kubectl_ok(&config, &["patch", "job", "batch", "--type=merge", "-p", r#"{"spec":{"suspend":false}}"#]).await;
    let job = get_json(&config, &["job", "batch"]).await;
    assert_eq!([&job["spec"]["suspend"], &job["metadata"]["generation"]], [&json!(false), &json!(2)]);

    let status = r#"{"status":{"active":2,"startTime":"2024-01-01T00:00:00Z"},"spec":{"parallelism":9}}"#;
    kubectl_ok(&config, &["patch", "job", "batch", "--subresource=status", "--type=merge", "-p", status]).await;
    let job = get_json(&config, &["job", "batch"]).await;
    assert_eq!([&job["status"]["active"], &job["spec"]["parallelism"]], [&json!(2), &json!(2)]);
    assert_eq!(job["metadata"]["generation"], 2, "a status write is no spec change");

    let spec_and_status = r#"{"spec":{"parallelism":1},"status":{"active":0}}"#;
    kubectl_ok(&config, &["patch", "job", "batch", "--type=merge", "-p", spec_and_status]).await;
    let job = get_json(&config, &["job", "batch"]).await;
    assert_eq!([&job["status"]["active"], &job["spec"]["parallelism"]], [&json!(2), &json!(1)]);
    assert_eq!(job["metadata"]["generation"], 3);
}

#[tokio::test]
async fn a_job_deleted_without_a_policy_orphans_its_pods_with_upstreams_warning() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    util::create(&client, JOBS, &job("plain")).await;
    let answer = call(&client, "DELETE", &format!("{JOBS}/plain"), &[], None).await;
    assert_eq!(answer.code(), 200, "{}", answer.body);
    let warning = answer.headers.get("warning").and_then(|w| w.to_str().ok()).unwrap_or_default();
    assert!(warning.contains("child pods are preserved by default when jobs are deleted"), "{warning}");
    let stored = util::get(&client, &format!("{JOBS}/plain")).await.json();
    assert_eq!(stored["metadata"]["finalizers"], json!(["orphan"]));
    assert!(stored["metadata"]["deletionTimestamp"].is_string());

    util::create(&client, JOBS, &job("background")).await;
    let answer = call(&client, "DELETE", &format!("{JOBS}/background?propagationPolicy=Background"), &[], None).await;
    assert_eq!(answer.code(), 200, "{}", answer.body);
    assert!(answer.headers.get("warning").is_none());
    assert_eq!(util::get(&client, &format!("{JOBS}/background")).await.code(), 404);

    // kubectl names the background policy itself.
    let (_dir, config) = kubeconfig(&sim);
    util::create(&client, JOBS, &job("by-kubectl")).await;
    let out = kubectl(&config, &["delete", "job", "by-kubectl"]).await;
    assert!(out.ok && !out.stderr.contains("preserved"), "{}", failure(&out));
}

#[tokio::test]
async fn jobs_and_cronjobs_are_in_get_all_and_select_on_status_successful() {
    let sim = util::start().await;
    let (_dir, config) = kubeconfig(&sim);
    let client = sim.client().expect("client");
    util::create(&client, JOBS, &job("one")).await;
    kubectl_ok(&config, &["create", "cronjob", "tick", "--image=busybox", "--schedule=@hourly"]).await;
    let all = kubectl_ok(&config, &["get", "all", "-o", "name"]).await;
    assert!(all.contains("job.batch/one") && all.contains("cronjob.batch/tick"), "{all}");
    let none = kubectl_ok(&config, &["get", "jobs", "--field-selector=status.successful=1", "-o", "name"]).await;
    assert_eq!(none.trim(), "");
    let zero = kubectl_ok(&config, &["get", "jobs", "--field-selector=status.successful=0", "-o", "name"]).await;
    assert_eq!(zero.trim(), "job.batch/one");
}

#[tokio::test]
async fn kubectl_get_prints_upstreams_job_and_cronjob_tables() {
    let sim = util::start().await;
    let (_dir, config) = kubeconfig(&sim);
    let client = sim.client().expect("client");
    let mut parallel = job("parallel");
    parallel["spec"]["parallelism"] = json!(3);
    util::create(&client, JOBS, &parallel).await;
    let rows = table(&kubectl_ok(&config, &["get", "jobs"]).await);
    assert_eq!(rows[0], ["NAME", "STATUS", "COMPLETIONS", "DURATION", "AGE"]);
    assert_eq!(rows[1][..5], ["parallel", "Running", "0/1", "of", "3"]);

    let status = json!({"status": {"startTime": "2024-01-01T00:00:00Z", "completionTime": "2024-01-01T00:01:10Z",
        "succeeded": 1, "conditions": [{"type": "SuccessCriteriaMet", "status": "True"},
            {"type": "Complete", "status": "True"}]}});
    let answer = util::merge(&client, &format!("{JOBS}/parallel/status"), status).await;
    assert_eq!(answer.code(), 200, "{}", answer.body);
    let rows = table(&kubectl_ok(&config, &["get", "job", "parallel"]).await);
    assert_eq!(rows[1][..6], ["parallel", "Complete", "1/1", "of", "3", "70s"]);

    kubectl_ok(&config, &["create", "cronjob", "tick", "--image=busybox", "--schedule=*/5 * * * *"]).await;
    let rows = table(&kubectl_ok(&config, &["get", "cronjobs"]).await);
    assert_eq!(rows[0], ["NAME", "SCHEDULE", "TIMEZONE", "SUSPEND", "ACTIVE", "LAST", "SCHEDULE", "AGE"]);
    assert_eq!(rows[1][..7], ["tick", "*/5", "*", "*", "*", "*", "<none>"]);
    assert_eq!(rows[1][7..10], ["False", "0", "<none>"]);
}

#[tokio::test]
async fn invalid_jobs_and_cronjobs_are_refused_with_upstreams_causes() {
    let sim = util::start().await;
    let (_dir, config) = kubeconfig(&sim);
    let out = kubectl(&config, &["create", "cronjob", "bad", "--image=busybox", "--schedule=61 * * * *"]).await;
    assert!(!out.ok, "{}", failure(&out));
    assert!(
        out.stderr.contains(r#"spec.schedule: Invalid value: "61 * * * *": end of range (61) above maximum (59): 61"#),
        "{}",
        failure(&out)
    );
    let always = "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: forever\nspec:\n  template:\n    spec:\n      \
        restartPolicy: Always\n      containers:\n      - name: c\n        image: busybox\n";
    let out = kube_sim::testing::kubectl_with_stdin(&config, &["apply", "-f", "-"], Some(always)).await;
    assert!(
        out.stderr.contains(r#"spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never""#),
        "{}",
        failure(&out)
    );

    kubectl_ok(&config, &["create", "job", "pi", "--image=perl:5.34"]).await;
    let out = kubectl(&config, &["patch", "job", "pi", "--type=merge", "-p", r#"{"spec":{"completions":4}}"#]).await;
    assert!(out.stderr.contains("spec.completions: Invalid value: 4: field is immutable"), "{}", failure(&out));
    let image = r#"{"spec":{"template":{"spec":{"containers":[{"name":"pi","image":"perl:6"}]}}}}"#;
    let out = kubectl(&config, &["patch", "job", "pi", "-p", image]).await;
    assert!(
        out.stderr.contains("spec.template: Invalid value: core.PodTemplateSpec{...}: field is immutable"),
        "{}",
        failure(&out)
    );

    let complete = r#"{"status":{"conditions":[{"type":"Complete","status":"True"}]}}"#;
    let out = kubectl(&config, &["patch", "job", "pi", "--subresource=status", "--type=merge", "-p", complete]).await;
    assert!(
        out.stderr.contains("cannot set Complete=True condition without the SuccessCriteriaMet=true condition"),
        "{}",
        failure(&out)
    );
}

/// A suspended Job that never started may be moved to other nodes
/// (`MutableSchedulingDirectivesForSuspendedJobs`), a started one not.
#[tokio::test]
async fn a_suspended_job_may_change_where_its_pods_go_until_it_starts() {
    let sim = util::start().await;
    let (_dir, config) = kubeconfig(&sim);
    let client = sim.client().expect("client");
    let mut held = job("held");
    held["spec"]["suspend"] = json!(true);
    util::create(&client, JOBS, &held).await;
    let directives = r#"{"spec":{"template":{"spec":{"nodeSelector":{"zone":"b"}}}}}"#;
    kubectl_ok(&config, &["patch", "job", "held", "--type=merge", "-p", directives]).await;
    let started = r#"{"status":{"startTime":"2024-01-01T00:00:00Z"}}"#;
    kubectl_ok(&config, &["patch", "job", "held", "--subresource=status", "--type=merge", "-p", started]).await;
    let again = r#"{"spec":{"template":{"spec":{"nodeSelector":{"zone":"c"}}}}}"#;
    let out = kubectl(&config, &["patch", "job", "held", "--type=merge", "-p", again]).await;
    assert!(out.stderr.contains("spec.template: Invalid value"), "{}", failure(&out));
    let stored = get_json(&config, &["job", "held"]).await;
    assert_eq!(stored["spec"]["template"]["spec"]["nodeSelector"], json!({"zone": "b"}));
}
