//! The real `kcm-rs` binary: leader election between two processes
//! (hand-over on SIGKILL and on SIGTERM, on both clusters; a leader frozen
//! past its lease, on kube-sim, whose request counts show what reached the
//! API server), serving, and the Prometheus exposition checked by the real
//! `promtool`.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use k8s_openapi::api::coordination::v1::Lease;
use kube_sim::testing::{provision_namespace, wait_for};
use kube_sim::{Sim, SimConfig};
use tokio::process::{Child, Command};

use crate::common::{
    Env, PATIENCE, free_port, https_get, kubeconfig_as, on_both, sim_with_kubeconfig, start_with_flags,
};

/// How long a stopped daemon may take to exit.
const EXIT_DEADLINE: Duration = Duration::from_secs(30);

/// A running `kcm-rs` process: the test's [`Env`]'s own, or one more it
/// started (killed on drop).
struct Daemon {
    child: Option<Child>,
    pid: i32,
    port: u16,
}

impl Daemon {
    /// The Env's own process.
    fn of(env: &Env) -> Self {
        let pid = i32::try_from(env.daemon.id().expect("running")).expect("pid fits");
        Daemon { child: None, pid, port: env.port }
    }

    /// One more process on the Env's cluster, with these flags.
    fn another(env: &Env, flags: &[String]) -> Self {
        let port = free_port();
        let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
        let child = env.spawn_on(port, &flags);
        let pid = i32::try_from(child.id().expect("running")).expect("pid fits");
        Daemon { child: Some(child), pid, port }
    }

    async fn get(&self, path: &str) -> (u16, String) {
        https_get(self.port, path).await
    }

    fn signal(&self, signal: &str) {
        let status = std::process::Command::new("kill").args([signal, &self.pid.to_string()]).status();
        assert!(status.is_ok_and(|s| s.success()), "kill {signal} failed");
    }
}

/// The flags of leader election with these lease, renew and retry periods.
fn election(lease: &str, renew: &str, retry: &str) -> Vec<String> {
    vec![
        "--leader-elect=true".to_owned(),
        format!("--leader-elect-lease-duration={lease}"),
        format!("--leader-elect-renew-deadline={renew}"),
        format!("--leader-elect-retry-period={retry}"),
    ]
}

/// Starts the test's cluster and a `kcm-rs` on it with these flags.
async fn start_electing(flags: &[String]) -> Env {
    start_with_flags(&flags.iter().map(String::as_str).collect::<Vec<_>>()).await
}

/// Starts `kcm-rs` against the kubeconfig with short leader-election
/// periods (`lease`, renew, retry) and these flags: a process of a
/// kube-sim-only test, told apart by the user its kubeconfig acts as.
fn spawn_with(kubeconfig: &Path, lease: &str, renew: &str, retry: &str, flags: &[&str]) -> Daemon {
    let port = free_port();
    let mut args = vec![format!("--secure-port={port}"), "--bind-address=127.0.0.1".to_owned()];
    args.extend(election(lease, renew, retry));
    args.extend(flags.iter().map(|f| (*f).to_owned()));
    let child = crate::common::spawn_with(kubeconfig, &args);
    let pid = i32::try_from(child.id().expect("running")).expect("pid fits");
    Daemon { child: Some(child), pid, port }
}

/// The Lease kcm-rs elects its leader with.
async fn lease(client: &kube::Client) -> Option<Lease> {
    let api: kube::Api<Lease> = kube::Api::namespaced(client.clone(), "kube-system");
    api.get_opt("kube-controller-manager").await.ok().flatten()
}

fn holder(lease: &Option<Lease>) -> String {
    lease.as_ref().and_then(|l| l.spec.as_ref()).and_then(|s| s.holder_identity.clone()).unwrap_or_default()
}

fn transitions(lease: &Option<Lease>) -> i32 {
    lease.as_ref().and_then(|l| l.spec.as_ref()).and_then(|s| s.lease_transitions).unwrap_or(0)
}

/// The series a leader reports.
const LEADING: &str = "leader_election_master_status{name=\"kube-controller-manager\"} 1";

/// Which of the daemons lead, from their metrics.
async fn leading(daemons: &[&Daemon]) -> Vec<bool> {
    let mut out = Vec::new();
    for d in daemons {
        let (_, body) = d.get("/metrics").await;
        out.push(body.contains(LEADING));
    }
    out
}

/// Writes that reached kube-sim from `user`, split by client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Writes {
    /// From the controllers' clients (every client but leader election's).
    controllers: u64,
    /// Of the Lease, by the leader-election client.
    lease: u64,
}

fn writes(sim: &Sim, user: &str) -> Writes {
    const WRITES: [&str; 5] = ["create", "update", "patch", "delete", "deletecollection"];
    let election = kcm_runtime::client::user_agent(Some("leader-election"));
    let mut writes = Writes { controllers: 0, lease: 0 };
    for line in sim.controls().stats() {
        if line.user != user || !WRITES.contains(&line.verb.as_str()) {
            continue;
        }
        if line.user_agent != election {
            writes.controllers += line.count;
        } else if line.resource == "leases" {
            writes.lease += line.count;
        }
    }
    writes
}

/// Pods `user` created.
fn pods_created(sim: &Sim, user: &str) -> u64 {
    let stats = sim.controls().stats();
    stats
        .iter()
        .filter(|l| l.user == user && l.verb == "create" && l.resource == "pods" && l.code == 201)
        .map(|l| l.count)
        .sum()
}

on_both!(
    exactly_one_of_two_leads_and_a_killed_leader_is_replaced,
    sigterm_releases_the_lease_so_the_standby_takes_over_at_once,
    metrics_pass_promtool_and_carry_upstream_names,
);

async fn exactly_one_of_two_leads_and_a_killed_leader_is_replaced() {
    let flags = election("3s", "2s", "500ms");
    let env = start_electing(&flags).await;
    let a = Daemon::of(&env);
    let b = Daemon::another(&env, &flags);
    // One leads, and both serve health, leader and standby alike (a
    // daemon still starting serves nothing yet, and does not lead either).
    wait_for(&env.cluster, PATIENCE, "one leader, both serving health", || async {
        let l = leading(&[&a, &b]).await;
        let health = [a.get("/healthz").await, b.get("/healthz").await];
        let serving = health.iter().all(|h| *h == (200, "ok".to_owned()));
        if serving && l.iter().filter(|x| **x).count() == 1 && !holder(&lease(&env.client).await).is_empty() {
            Ok(())
        } else {
            Err(format!("leading {l:?}, health {health:?}"))
        }
    })
    .await;
    let (leader, standby) = if leading(&[&a, &b]).await[0] { (a, b) } else { (b, a) };
    let before = lease(&env.client).await;
    let first = holder(&before);

    leader.signal("-KILL");
    wait_for(&env.cluster, PATIENCE, "the standby to take over after the lease expires", || async {
        let now = lease(&env.client).await;
        let standby_leads = leading(&[&standby]).await[0];
        if standby_leads && holder(&now) != first && !holder(&now).is_empty() {
            Ok(())
        } else {
            Err(format!("holder {:?}, standby leads {standby_leads}", holder(&now)))
        }
    })
    .await;
    assert_eq!(transitions(&lease(&env.client).await), transitions(&before) + 1);
}

async fn sigterm_releases_the_lease_so_the_standby_takes_over_at_once() {
    // A lease far longer than the test's deadline: only a release explains
    // a take-over within it.
    let flags = election("120s", "10s", "500ms");
    let mut env = start_electing(&flags).await;
    let a = Daemon::of(&env);
    wait_for(&env.cluster, PATIENCE, "a leads", || async {
        if leading(&[&a]).await[0] { Ok(()) } else { Err(holder(&lease(&env.client).await)) }
    })
    .await;
    let b = Daemon::another(&env, &flags);
    wait_for(&env.cluster, PATIENCE, "b to serve as a standby", || async {
        let (code, _) = b.get("/healthz").await;
        if code == 200 && !leading(&[&b]).await[0] { Ok(()) } else { Err(format!("code {code}")) }
    })
    .await;
    let first = holder(&lease(&env.client).await);
    a.signal("-TERM");
    let status = tokio::time::timeout(EXIT_DEADLINE, env.daemon.wait()).await.expect("a exits").expect("status");
    assert!(status.success(), "SIGTERM ends kcm-rs with status 0, got {status}");
    wait_for(&env.cluster, PATIENCE, "b to take over the released lease", || async {
        let now = holder(&lease(&env.client).await);
        if leading(&[&b]).await[0] && !now.is_empty() && now != first { Ok(()) } else { Err(now) }
    })
    .await;
}

async fn metrics_pass_promtool_and_carry_upstream_names() {
    let env = start_electing(&election("3s", "2s", "500ms")).await;
    let d = Daemon::of(&env);
    // Something for the ReplicaSet controller to sync, so that every series
    // has a sample.
    let replica_sets: kube::Api<k8s_openapi::api::apps::v1::ReplicaSet> =
        kube::Api::namespaced(env.client.clone(), &env.ns);
    let rs = serde_json::from_value(serde_json::json!({
        "apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "m"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "m"}},
            "template": {"metadata": {"labels": {"app": "m"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}},
    }))
    .expect("valid");
    replica_sets.create(&Default::default(), &rs).await.expect("created");
    wait_for(&env.cluster, PATIENCE, "metrics with leader election and client requests", || async {
        let (code, body) = d.get("/metrics").await;
        let ready = code == 200
            && body.contains("leader_election_master_status")
            && body.contains("rest_client_requests_total")
            && body.contains("process_resident_memory_bytes")
            && [
                "workqueue_adds_total{name=\"replicaset\"}",
                "workqueue_depth{name=\"replicaset\"}",
                "workqueue_queue_duration_seconds_bucket{name=\"replicaset\"",
                "workqueue_work_duration_seconds_bucket{name=\"replicaset\"",
                "workqueue_unfinished_work_seconds{name=\"replicaset\"}",
                "workqueue_longest_running_processor_seconds{name=\"replicaset\"}",
                "workqueue_retries_total{name=\"replicaset\"}",
                "rest_client_request_duration_seconds_bucket{",
                "kcm_controller_syncs_total{controller=\"replicaset-controller\"",
                "kcm_controller_sync_duration_seconds_bucket{controller=\"replicaset-controller\"",
                "node_collector_zone_health{",
                "node_collector_zone_size{",
                "node_collector_unhealthy_nodes_in_zone{",
                "node_collector_evictions_total{",
                "node_collector_update_all_nodes_health_duration_seconds_bucket{",
                "taint_eviction_controller_pod_deletions_total",
                "ephemeral_volume_controller_create_total",
                "ephemeral_volume_controller_create_failures_total",
                "retroactive_storageclass_total",
                "retroactive_storageclass_errors_total",
                "taint_eviction_controller_pod_deletion_duration_seconds_bucket{",
                "garbagecollector_controller_resources_sync_error_total",
                "kcm_garbagecollector_graph_nodes",
                "kcm_garbagecollector_monitored_resources",
                "workqueue_adds_total{name=\"garbage_collector_attempt_to_delete\"}",
                "workqueue_adds_total{name=\"node_lifecycle_controller\"}",
            ]
            .iter()
            .all(|series| body.contains(series));
        if ready { Ok(()) } else { Err(format!("code {code}")) }
    })
    .await;
    let (_, body) = d.get("/metrics").await;
    // The leader's health lists its controllers; it is ready once their
    // caches have synced.
    let (_, health) = d.get("/healthz?verbose").await;
    for check in [
        "leaderElection",
        "deployment-controller",
        "replicaset-controller",
        "statefulset-controller",
        "daemonset-controller",
        "job-controller",
        "cronjob-controller",
        "namespace-controller",
        "node-lifecycle-controller",
        "taint-eviction-controller",
        "pod-garbage-collector-controller",
        "serviceaccount-controller",
        "root-ca-certificate-publisher-controller",
        "clusterrole-aggregation-controller",
        "ttl-after-finished-controller",
        "ttl-controller",
        "persistentvolume-expander-controller",
        "persistentvolumeclaim-protection-controller",
        "persistentvolume-protection-controller",
        "ephemeral-volume-controller",
        "volumeattributesclass-protection-controller",
        "garbage-collector-controller",
    ] {
        assert!(health.contains(&format!("[+]{check} ok\n")), "{check}: {health}");
    }
    wait_for(&env.cluster, PATIENCE, "ready", || async {
        let (code, text) = d.get("/readyz?verbose").await;
        if code == 200 && text.contains("[+]informer-sync ok") { Ok(()) } else { Err(text) }
    })
    .await;
    let mut promtool = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("promtool must be installed for this test (Debian package prometheus): {e}"));
    {
        use tokio::io::AsyncWriteExt;
        let mut stdin = promtool.stdin.take().expect("stdin");
        stdin.write_all(body.as_bytes()).await.expect("written");
    }
    let out = promtool.wait_with_output().await.expect("promtool ran");
    let report = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    // promtool's linter finds fault with some of upstream's own names;
    // kcm-rs spells them as upstream does, dashboards select on them.
    let problems: Vec<&str> = report
        .lines()
        .filter(|l| !l.trim().is_empty())
        .filter(|l| !PROMTOOL_LINTED_UPSTREAM_NAMES.iter().any(|name| l.starts_with(&format!("{name} "))))
        .collect();
    let only_upstream_names = problems.is_empty() && !report.trim().is_empty();
    assert!(out.status.success() || only_upstream_names, "promtool check metrics failed:\n{report}");
    assert!(problems.is_empty(), "promtool check metrics found problems:\n{}", problems.join("\n"));
}

/// Upstream's metric names that promtool's linter rejects: the
/// EndpointSlice controller's sync counter has no `_total` suffix
/// upstream (served once a Service exists, as `kubernetes` does on the
/// testbed); the persistent volume binder's gauges end in `_count` (served
/// once a volume or claim exists, as on the shared testbed).
const PROMTOOL_LINTED_UPSTREAM_NAMES: [&str; 6] = [
    "endpoint_slice_controller_syncs",
    "pv_collector_total_pv_count",
    "pv_collector_bound_pv_count",
    "pv_collector_unbound_pv_count",
    "pv_collector_bound_pvc_count",
    "pv_collector_unbound_pvc_count",
];

/// A selected controller that cannot be built (the token controller, its
/// key file missing) starts none: kcm-rs logs upstream's messages naming
/// the file, releases the lease it took and exits 1, as upstream's does,
/// rather than run without that controller while `/healthz` says ok.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_controller_that_cannot_be_built_ends_the_process_with_status_1() {
    let (sim, _dir, kubeconfig) = sim_with_kubeconfig(SimConfig::default()).await;
    let run = Command::new(env!("CARGO_BIN_EXE_kcm-rs"))
        .arg(format!("--kubeconfig={}", kubeconfig.display()))
        .arg(format!("--secure-port={}", free_port()))
        .args(["--bind-address=127.0.0.1", "--service-account-private-key-file=/nonexistent/sa.key"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(EXIT_DEADLINE, run).await.expect("kcm-rs exits").expect("kcm-rs runs");
    let log = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{log}");
    for line in [
        "Error initializing a controller",
        "error reading key for service account token controller: open /nonexistent/sa.key",
        "Error building controllers",
    ] {
        assert!(log.contains(line), "the log lacks {line:?}:\n{log}");
    }
    let lease = lease(&sim.client().expect("client")).await;
    assert!(lease.is_some(), "it led before building the controllers");
    assert_eq!(holder(&lease), "", "the lease is released");
}

/// A leader frozen (SIGSTOP) past its lease, resumed (SIGCONT) once the
/// standby leads. No clock is read: a was frozen before b took the lease,
/// so every write counted before the resume reached the server before b
/// led, and every write counted after it reached the server after. There
/// must be none (its controllers are fenced and it writes no Lease); a
/// never reports `master_status` 1 after b did; and it exits 1, as upstream
/// does on a lost lease.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leader_frozen_past_its_lease_writes_nothing_once_the_other_leads() {
    let (sim, dir, _) = sim_with_kubeconfig(SimConfig::default()).await;
    provision_namespace(&sim, "default").await;
    let client = sim.client().expect("client");
    // A slow client (5 requests/s) and much to create: the leader's
    // ReplicaSet controller always has writes waiting for a token.
    let flags = ["--controllers=replicaset-controller", "--kube-api-qps=5", "--kube-api-burst=5"];
    let a = spawn_with(&kubeconfig_as(&sim, dir.path(), "replica-a"), "3s", "2s", "500ms", &flags);
    wait_for(&sim, PATIENCE, "a leads", || async {
        if leading(&[&a]).await[0] { Ok(()) } else { Err(holder(&lease(&client).await)) }
    })
    .await;
    let b = spawn_with(&kubeconfig_as(&sim, dir.path(), "replica-b"), "3s", "2s", "500ms", &flags);
    wait_for(&sim, PATIENCE, "b to serve as a standby", || async {
        let (code, _) = b.get("/healthz").await;
        if code == 200 && !leading(&[&b]).await[0] { Ok(()) } else { Err(format!("code {code}")) }
    })
    .await;
    let first = holder(&lease(&client).await);
    let replica_sets: kube::Api<k8s_openapi::api::apps::v1::ReplicaSet> =
        kube::Api::namespaced(client.clone(), "default");
    let rs = serde_json::from_value(serde_json::json!({
        "apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "busy"},
        "spec": {"replicas": 300, "selector": {"matchLabels": {"app": "busy"}},
            "template": {"metadata": {"labels": {"app": "busy"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}},
    }))
    .expect("valid");
    replica_sets.create(&Default::default(), &rs).await.expect("created");
    wait_for(&sim, PATIENCE, "a to create pods", || async {
        let created = pods_created(&sim, "replica-a");
        if created >= 10 { Ok(()) } else { Err(format!("{created} pods")) }
    })
    .await;

    // Frozen past its lease, while its controllers have writes queued.
    a.signal("-STOP");
    wait_for(&sim, PATIENCE, "b to take the lease over and report it", || async {
        let now = holder(&lease(&client).await);
        if now != first && !now.is_empty() && leading(&[&b]).await[0] { Ok(()) } else { Err(now) }
    })
    .await;
    // a has been frozen since before b took over: everything a wrote so
    // far reached the server before b led.
    let before = writes(&sim, "replica-a");
    assert!(before.controllers > 0, "a's controllers wrote while it led: {before:?}");

    a.signal("-CONT");
    // From here on b has reported itself leader: a must never do so again.
    // Scrape a until it exits, as upstream does on a lost lease.
    let mut a = a;
    let mut child = a.child.take().expect("a process of this test");
    let deadline = tokio::time::Instant::now() + EXIT_DEADLINE;
    let status = loop {
        if let Some(status) = child.try_wait().expect("a's status") {
            break status;
        }
        let (code, body) = a.get("/metrics").await;
        assert!(code != 200 || !body.contains(LEADING), "a reports itself leader beside b:\n{body}");
        assert!(tokio::time::Instant::now() < deadline, "a exits once resumed");
    };
    assert_eq!(status.code(), Some(1), "a lost lease ends kcm-rs with status 1, got {status}");
    assert_eq!(writes(&sim, "replica-a"), before, "no write from a reached the API server once b led");
    assert!(leading(&[&b]).await[0], "b leads on");
}
