//! The real `kcm-rs` binary against kube-sim: leader election between two
//! processes (hand-over on SIGKILL and on SIGTERM, a leader frozen past its
//! lease), serving, and the Prometheus exposition checked by the real
//! `promtool`.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use k8s_openapi::api::coordination::v1::Lease;
use kube_sim::testing::{provision_namespace, wait_for};
use kube_sim::{Sim, SimConfig};
use tokio::process::{Child, Command};

use crate::common::{PATIENCE, free_port, https_get, sim_with_kubeconfig};

/// How long a stopped daemon may take to exit.
const EXIT_DEADLINE: Duration = Duration::from_secs(30);

/// A running `kcm-rs` process; killed on drop.
struct Daemon {
    child: Child,
    port: u16,
}

impl Daemon {
    fn pid(&self) -> i32 {
        i32::try_from(self.child.id().expect("running")).expect("pid fits")
    }

    async fn get(&self, path: &str) -> (u16, String) {
        https_get(self.port, path).await
    }

    fn signal(&self, signal: &str) {
        let status = std::process::Command::new("kill").args([signal, &self.pid().to_string()]).status();
        assert!(status.is_ok_and(|s| s.success()), "kill {signal} failed");
    }
}

/// Starts `kcm-rs` against the kubeconfig with short leader-election
/// periods (`lease`, renew, retry).
fn spawn(kubeconfig: &Path, lease: &str, renew: &str, retry: &str) -> Daemon {
    spawn_with(kubeconfig, lease, renew, retry, &[])
}

/// [`spawn`] with more flags.
fn spawn_with(kubeconfig: &Path, lease: &str, renew: &str, retry: &str, flags: &[&str]) -> Daemon {
    let port = free_port();
    let child = Command::new(env!("CARGO_BIN_EXE_kcm-rs"))
        .arg(format!("--kubeconfig={}", kubeconfig.display()))
        .arg(format!("--secure-port={port}"))
        .arg("--bind-address=127.0.0.1")
        .arg(format!("--leader-elect-lease-duration={lease}"))
        .arg(format!("--leader-elect-renew-deadline={renew}"))
        .arg(format!("--leader-elect-retry-period={retry}"))
        .args(flags)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("kcm-rs starts");
    Daemon { child, port }
}

async fn lease(sim: &Sim) -> Option<Lease> {
    let api: kube::Api<Lease> = kube::Api::namespaced(sim.client().expect("client"), "kube-system");
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

/// Which of the two daemons leads, from their metrics.
async fn leading(daemons: &[&Daemon]) -> Vec<bool> {
    let mut out = Vec::new();
    for d in daemons {
        let (_, body) = d.get("/metrics").await;
        out.push(body.contains(LEADING));
    }
    out
}

/// A kubeconfig for `sim` in `dir` that acts as `user` (a kubeconfig's
/// `as:`): kube-sim counts requests by that user, so two replicas are told
/// apart.
fn kubeconfig_as(sim: &Sim, dir: &Path, user: &str) -> PathBuf {
    let path = dir.join(format!("kubeconfig-{user}"));
    let plain = kube_sim::kubeconfig_yaml(&sim.url());
    let yaml = plain.replace("  user: {}\n", &format!("  user: {{as: {user}}}\n"));
    assert_ne!(yaml, plain, "the kubeconfig names a user to act as");
    std::fs::write(&path, yaml).expect("kubeconfig written");
    path
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exactly_one_of_two_leads_and_a_killed_leader_is_replaced() {
    let (sim, _dir, kubeconfig) = sim_with_kubeconfig(SimConfig::default()).await;
    let a = spawn(&kubeconfig, "3s", "2s", "500ms");
    let b = spawn(&kubeconfig, "3s", "2s", "500ms");
    wait_for(&sim, PATIENCE, "one leader", || async {
        let l = leading(&[&a, &b]).await;
        if l.iter().filter(|x| **x).count() == 1 && !holder(&lease(&sim).await).is_empty() {
            Ok(())
        } else {
            Err(format!("{l:?}"))
        }
    })
    .await;
    // Both serve health, leader and standby alike.
    assert_eq!(a.get("/healthz").await, (200, "ok".to_owned()));
    assert_eq!(b.get("/healthz").await, (200, "ok".to_owned()));
    let (leader, standby) = if leading(&[&a, &b]).await[0] { (a, b) } else { (b, a) };
    let before = lease(&sim).await;
    let first = holder(&before);

    leader.signal("-KILL");
    wait_for(&sim, PATIENCE, "the standby to take over after the lease expires", || async {
        let now = lease(&sim).await;
        let standby_leads = leading(&[&standby]).await[0];
        if standby_leads && holder(&now) != first && !holder(&now).is_empty() {
            Ok(())
        } else {
            Err(format!("holder {:?}, standby leads {standby_leads}", holder(&now)))
        }
    })
    .await;
    assert_eq!(transitions(&lease(&sim).await), transitions(&before) + 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_releases_the_lease_so_the_standby_takes_over_at_once() {
    let (sim, _dir, kubeconfig) = sim_with_kubeconfig(SimConfig::default()).await;
    // A lease far longer than the test's deadline: only a release explains
    // a take-over within it.
    let a = spawn(&kubeconfig, "120s", "10s", "500ms");
    wait_for(&sim, PATIENCE, "a leads", || async {
        if leading(&[&a]).await[0] { Ok(()) } else { Err(holder(&lease(&sim).await)) }
    })
    .await;
    let b = spawn(&kubeconfig, "120s", "10s", "500ms");
    wait_for(&sim, PATIENCE, "b to serve as a standby", || async {
        let (code, _) = b.get("/healthz").await;
        if code == 200 && !leading(&[&b]).await[0] { Ok(()) } else { Err(format!("code {code}")) }
    })
    .await;
    let first = holder(&lease(&sim).await);
    a.signal("-TERM");
    let mut a = a;
    let status = tokio::time::timeout(EXIT_DEADLINE, a.child.wait()).await.expect("a exits").expect("status");
    assert!(status.success(), "SIGTERM ends kcm-rs with status 0, got {status}");
    wait_for(&sim, PATIENCE, "b to take over the released lease", || async {
        let now = holder(&lease(&sim).await);
        if leading(&[&b]).await[0] && !now.is_empty() && now != first { Ok(()) } else { Err(now) }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_pass_promtool_and_carry_upstream_names() {
    let (sim, _dir, kubeconfig) = sim_with_kubeconfig(SimConfig::default()).await;
    // Something for the ReplicaSet controller to sync, so that every series
    // has a sample.
    let replica_sets: kube::Api<k8s_openapi::api::apps::v1::ReplicaSet> =
        kube::Api::namespaced(sim.client().expect("client"), "default");
    let rs = serde_json::from_value(serde_json::json!({
        "apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "m"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "m"}},
            "template": {"metadata": {"labels": {"app": "m"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}},
    }))
    .expect("valid");
    replica_sets.create(&Default::default(), &rs).await.expect("created");
    let d = spawn(&kubeconfig, "3s", "2s", "500ms");
    wait_for(&sim, PATIENCE, "metrics with leader election and client requests", || async {
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
        "garbage-collector-controller",
    ] {
        assert!(health.contains(&format!("[+]{check} ok\n")), "{check}: {health}");
    }
    wait_for(&sim, PATIENCE, "ready", || async {
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
    assert!(
        out.status.success(),
        "promtool check metrics failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
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
    // A slow client (5 requests/s) and much to create: the leader's
    // ReplicaSet controller always has writes waiting for a token.
    let flags = ["--controllers=replicaset-controller", "--kube-api-qps=5", "--kube-api-burst=5"];
    let a = spawn_with(&kubeconfig_as(&sim, dir.path(), "replica-a"), "3s", "2s", "500ms", &flags);
    wait_for(&sim, PATIENCE, "a leads", || async {
        if leading(&[&a]).await[0] { Ok(()) } else { Err(holder(&lease(&sim).await)) }
    })
    .await;
    let b = spawn_with(&kubeconfig_as(&sim, dir.path(), "replica-b"), "3s", "2s", "500ms", &flags);
    wait_for(&sim, PATIENCE, "b to serve as a standby", || async {
        let (code, _) = b.get("/healthz").await;
        if code == 200 && !leading(&[&b]).await[0] { Ok(()) } else { Err(format!("code {code}")) }
    })
    .await;
    let first = holder(&lease(&sim).await);
    let replica_sets: kube::Api<k8s_openapi::api::apps::v1::ReplicaSet> =
        kube::Api::namespaced(sim.client().expect("client"), "default");
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
        let now = holder(&lease(&sim).await);
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
    let deadline = tokio::time::Instant::now() + EXIT_DEADLINE;
    let status = loop {
        if let Some(status) = a.child.try_wait().expect("a's status") {
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
