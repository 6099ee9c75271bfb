//! kcm-rs at scale (`cargo bench --bench scale [-- SCENARIO...]`): the
//! release `kcm-rs` binary (every default controller, no leader election,
//! `--kube-api-qps=0`) against an in-process kube-sim, in five scenarios,
//! all of them by default:
//!
//! - `idle`: 3 nodes; kcm-rs's resident memory once its caches have
//!   synced (`/readyz` answers 200), it has been idle for a minute (its
//!   `/healthz` probed and its `/metrics` scraped meanwhile) and its
//!   memory has settled, anonymous and file-backed;
//! - `cached`: 10,000 converged Deployments (one ReplicaSet of 10 Running,
//!   Ready pods each: 100,000 pods) on 1,000 heartbeating nodes, made
//!   through the API before kcm-rs starts, shaped after what kcm-rs makes
//!   of one Deployment in a calibration run; the time until kcm-rs is
//!   ready, its memory, bytes per cached pod, and its writes until it goes
//!   quiet and over a steady window;
//! - `bringup`: 10,000 Deployments of 10 replicas created while kcm-rs
//!   runs (10 nodes): the time until all are available and kcm-rs's write
//!   rate, against kube-sim's ceiling for the same writes;
//! - `rollout`: 1,000 Deployments of 5 (10 nodes, 500 ms pod start-up, as
//!   `benches/deployment.rs`) rolled to a new image: time and write rate,
//!   against the ceiling;
//! - `writes`: 1,000 Deployments of 1 replica: kcm-rs's writes per
//!   converged Deployment by verb and resource, then over a steady window.
//!
//! The ceiling of a write rate is a plain kube client making the same
//! number and kind of writes kcm-rs made, on a fresh kube-sim of the same
//! configuration in the same run (`scale/ceiling.rs`). Each scenario runs
//! in a tokio runtime of its own, dropped after it, so that the simulators
//! of one scenario (and their stores) are gone before the next starts.
//!
//! `KCM_SCALE=0.1` scales every count of objects down (a quick try; the
//! table says so). The figures go into docs/benchmarks.md.

use std::fmt::Write as _;
use std::future::Future;
use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube_sim::kubelet::KubeletConfig;
use kube_sim::resources::Builtin;
use kube_sim::{Sim, SimConfig};
use serde_json::json;

#[path = "scale/ceiling.rs"]
mod ceiling;
mod common;
#[path = "scale/objects.rs"]
mod objects;
#[path = "scale/observe.rs"]
mod observe;

use ceiling::{Ceiling, Slot};
use objects::{
    CACHED_DEPLOYMENTS, CACHED_NODES, CACHED_REPLICAS, Converged, NAMESPACE, cached_node, deployment, image, name,
};
use observe::{Mix, Probe, Tracker};

/// The scenarios, in the order they run.
const SCENARIOS: [&str; 5] = ["idle", "cached", "bringup", "rollout", "writes"];
/// Deployments of the bring-up scenario.
const BRINGUP_DEPLOYMENTS: usize = 10_000;
/// Replicas of each Deployment of the bring-up scenario.
const REPLICAS: i32 = 10;
/// Nodes of the bring-up, rollout and writes scenarios: kube-sim's
/// scheduler stand-in reads every node for each pod it binds, so a
/// thousand nodes would make it, not kcm-rs, the limit.
const NODES: usize = 10;
/// Deployments of the rollout scenario.
const ROLLOUT_DEPLOYMENTS: usize = 1_000;
/// Replicas of each.
const ROLLOUT_REPLICAS: i32 = 5;
/// Deployments of the writes scenario (1 replica each).
const WRITES_DEPLOYMENTS: usize = 1_000;
/// The steady-state window after convergence.
const STEADY: Duration = Duration::from_secs(30);
/// Give up on any one wait after this long.
const LIMIT: Duration = Duration::from_secs(10_800);
/// Concurrent requests of the benchmark's own creates and patches.
const CONCURRENCY: usize = 32;
/// Resident memory counts as settled once it has moved by less than 2 %
/// over this long.
const SETTLE: Duration = Duration::from_secs(3);
/// How long the `idle` scenario leaves kcm-rs idle before reading its
/// memory, and how often it scrapes `/metrics` meanwhile (as Prometheus
/// would; the health probe runs throughout).
const IDLE: Duration = Duration::from_secs(60);
const SCRAPE_EVERY: Duration = Duration::from_secs(20);

/// One row of the results table.
struct Row {
    /// Scenario.
    scenario: &'static str,
    /// What is measured.
    figure: String,
    /// kcm-rs's figure.
    kcm: String,
    /// kube-sim's ceiling, where the figure is a write rate or the time
    /// writes take.
    ceiling: String,
    /// kcm-rs's figure over the ceiling's.
    ratio: String,
}

impl Row {
    /// A figure without a ceiling.
    fn plain(scenario: &'static str, figure: impl Into<String>, kcm: impl Into<String>) -> Row {
        Row { scenario, figure: figure.into(), kcm: kcm.into(), ceiling: "–".into(), ratio: "–".into() }
    }

    /// A figure with its ceiling and their ratio.
    fn against(scenario: &'static str, figure: impl Into<String>, kcm: f64, ceiling: f64, unit: &str) -> Row {
        Row {
            scenario,
            figure: figure.into(),
            kcm: format!("{} {unit}", round(kcm)),
            ceiling: format!("{} {unit}", round(ceiling)),
            ratio: format!("{:.2}", kcm / ceiling),
        }
    }
}

/// A figure with three significant digits (or whole, with thousands
/// separators, when larger).
fn round(x: f64) -> String {
    if x.abs() >= 1000.0 {
        let digits = format!("{:.0}", x);
        let mut out = String::new();
        for (i, c) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i) % 3 == 0 {
                out.push(',');
            }
            out.push(c);
        }
        out
    } else if x.abs() >= 100.0 {
        format!("{x:.0}")
    } else if x.abs() >= 10.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    }
}

/// Counts scaled by `KCM_SCALE`.
#[derive(Clone, Copy)]
struct Scale(f64);

impl Scale {
    fn from_env() -> Scale {
        Scale(std::env::var("KCM_SCALE").ok().and_then(|s| s.parse().ok()).unwrap_or(1.0))
    }

    fn of(self, n: usize) -> usize {
        ((n as f64 * self.0).round() as usize).max(1)
    }
}

/// Runs `f` on a runtime of its own, dropped afterwards with everything it
/// spawned (a dropped `Sim` leaves its kubelet stand-in, and with it the
/// store, running until its runtime ends).
fn run<F: Future>(f: F) -> F::Output {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("a runtime");
    let out = runtime.block_on(f);
    runtime.shutdown_timeout(Duration::from_secs(10));
    out
}

/// Runs scenario `name` (`f`), adding its rows and its wall time; a
/// scenario that fails adds a row saying why, and the others still run.
fn attempt(
    name: &'static str,
    rows: &mut Vec<Row>,
    took: &mut Vec<(&'static str, Duration)>,
    f: impl FnOnce() -> Vec<Row>,
) {
    let start = Instant::now();
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(more) => rows.extend(more),
        Err(panic) => {
            let why = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                .unwrap_or_default();
            rows.push(Row::plain(name, "FAILED", why.replace('|', "/")));
        }
    }
    took.push((name, start.elapsed()));
}

fn main() {
    // `cargo bench` passes `--bench`; anything else not a flag names a scenario.
    let asked: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with("--")).collect();
    for a in &asked {
        assert!(SCENARIOS.contains(&a.as_str()), "unknown scenario {a:?}: one of {}", SCENARIOS.join(", "));
    }
    let chosen = |s: &str| asked.is_empty() || asked.iter().any(|a| a == s);
    let scale = Scale::from_env();
    let mut rows = Vec::new();
    let mut took = Vec::new();
    let mut idle_mib = None;
    if chosen("idle") || chosen("cached") {
        attempt("idle", &mut rows, &mut took, || {
            let (mib, (anon, file), ready) = run(idle());
            idle_mib = Some(mib);
            vec![
                Row::plain("idle", "kcm-rs start until /readyz, 3 nodes", format!("{ready:.2} s")),
                Row::plain("idle", "resident memory, caches synced and settled", format!("{mib:.1} MiB")),
                Row::plain(
                    "idle",
                    "… of which anonymous (heap, stacks) / file-backed (the binary's touched pages)",
                    format!("{anon:.1} / {file:.1} MiB"),
                ),
            ]
        });
    }
    if chosen("cached") {
        attempt("cached", &mut rows, &mut took, || run(cached(scale, idle_mib.unwrap_or(0.0))));
    }
    if chosen("bringup") {
        attempt("bringup", &mut rows, &mut took, || {
            let deployments = scale.of(BRINGUP_DEPLOYMENTS);
            let kcm = run(bringup(deployments));
            let ceiling = run(bringup_ceiling(deployments, &kcm.mix));
            kcm.rows("bringup", &format!("{deployments} Deployments x {REPLICAS} created"), &ceiling)
        });
    }
    if chosen("rollout") {
        attempt("rollout", &mut rows, &mut took, || {
            let deployments = scale.of(ROLLOUT_DEPLOYMENTS);
            let (created, kcm) = run(rollout(deployments));
            let ceiling = run(rollout_ceiling(deployments, &kcm.mix));
            let mut rows = vec![Row::plain(
                "rollout",
                format!("first, {deployments} x {ROLLOUT_REPLICAS} created: all available after"),
                format!("{:.1} s", created.as_secs_f64()),
            )];
            rows.extend(kcm.rows("rollout", &format!("new image on {deployments} x {ROLLOUT_REPLICAS}"), &ceiling));
            rows
        });
    }
    if chosen("writes") {
        attempt("writes", &mut rows, &mut took, || run(writes(scale.of(WRITES_DEPLOYMENTS))));
    }

    let mut table = String::new();
    if scale.0 != 1.0 {
        let _ = writeln!(table, "\nKCM_SCALE={}: every count of objects scaled by it.", scale.0);
    }
    let _ = writeln!(table, "\n| scenario | figure | kcm-rs | kube-sim ceiling | ratio |\n|---|---|---|---|---|");
    for r in &rows {
        let _ = writeln!(table, "| {} | {} | {} | {} | {} |", r.scenario, r.figure, r.kcm, r.ceiling, r.ratio);
    }
    let _ = writeln!(table, "\nscenario wall times (with set-up and ceilings):");
    for (name, d) in &took {
        let _ = writeln!(table, "  {name}: {:.0} s", d.as_secs_f64());
    }
    println!("{table}");
}

/// kube-sim with `nodes` (heartbeating every 10 s), pods starting 500 ms
/// after they are bound, and `history` changes kept for watches; its
/// namespace holds the `default` ServiceAccount and `kube-root-ca.crt`, as
/// on a cluster a controller manager has run on, since the scenarios seed
/// pods before kcm-rs starts.
async fn sim(nodes: usize, history: usize) -> Sim {
    let sim = Sim::start(SimConfig { nodes, kubelet: KubeletConfig::default(), history, ..SimConfig::default() })
        .await
        .expect("kube-sim starts");
    kube_sim::testing::provision_namespace(&sim, NAMESPACE).await;
    objects::create_template_sources(&sim.client().expect("client")).await;
    sim
}

/// A running kcm-rs.
struct Kcm {
    /// The process (killed on drop).
    child: tokio::process::Child,
    /// Its id.
    pid: u32,
    /// When it became ready.
    readiness: common::Readiness,
    /// Its HTTPS port.
    port: u16,
    /// Probing its `/healthz` since it started or since [`Kcm::health`].
    health: Option<common::HealthProbe>,
}

impl Kcm {
    /// Starts kcm-rs against `sim` (every default controller, no QPS
    /// limit), logging into `dir`, and waits until it is ready.
    async fn start(sim: &Sim, dir: &tempfile::TempDir) -> Kcm {
        let kubeconfig = dir.path().join("kubeconfig");
        sim.write_kubeconfig(&kubeconfig).expect("kubeconfig written");
        let log = dir.path().join("kcm-rs.log");
        let start = Instant::now();
        let (child, port) = common::kcm_rs_serving(&kubeconfig, &log, &["--kube-api-qps=0"]);
        let pid = child.id().expect("running");
        let health = Some(common::HealthProbe::start(port));
        let readiness = common::wait_ready(port, &log, start, LIMIT).await;
        if let Some(early) = readiness.early.filter(|early| *early < readiness.informers_synced) {
            println!(
                "  (kcm-rs's /readyz answered 200 at {:.2} s, before its caches were synced at {:.2} s)",
                early.as_secs_f64(),
                readiness.informers_synced.as_secs_f64()
            );
        }
        Kcm { child, pid, readiness, port, health }
    }

    /// Waits until kcm-rs has worked off what it had to do: for `quiet_for`
    /// on end, `/metrics` answered within a second with every workqueue
    /// empty, and kcm-rs made no write (a kcm-rs too busy to answer
    /// makes no writes either, so quiet alone is not enough). Gives how
    /// long that took; fails after `limit`.
    async fn settle(&self, sim: &Sim, quiet_for: Duration, limit: Duration) -> Duration {
        let client = common::endpoints_client(self.port);
        let start = Instant::now();
        let mut since: Option<(Instant, u64)> = None;
        loop {
            let writes = observe::kcm_rs_writes(sim);
            let idle = common::queued(&client, Duration::from_secs(1)).await == Some(0);
            since = match since {
                Some((at, before)) if idle && before == writes => {
                    if at.elapsed() >= quiet_for {
                        return start.elapsed();
                    }
                    Some((at, before))
                }
                _ if idle => Some((Instant::now(), writes)),
                _ => None,
            };
            assert!(start.elapsed() < limit, "kcm-rs still busy after {limit:?}");
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }

    /// The longest `/healthz` went unanswered since kcm-rs started or
    /// since the last call; probes afresh from now.
    fn health(&mut self) -> Duration {
        let longest = self.health.take().map_or(Duration::ZERO, common::HealthProbe::stop);
        self.health = Some(common::HealthProbe::start(self.port));
        longest
    }

    /// Stops kcm-rs, keeping its log (see [`keep_log`]) as `scenario`.
    async fn stop(mut self, dir: &tempfile::TempDir, scenario: &str) {
        if let Some(probe) = self.health.take() {
            probe.stop();
        }
        let _ = self.child.kill().await;
        keep_log(dir, scenario);
    }
}

/// Copies kcm-rs's log in `dir` to `$KCM_SCALE_LOGS/<scenario>.log` when
/// that variable names a directory (for looking into a run).
fn keep_log(dir: &tempfile::TempDir, scenario: &str) {
    if let Some(logs) = std::env::var_os("KCM_SCALE_LOGS") {
        let to = std::path::Path::new(&logs).join(format!("{scenario}.log"));
        let _ = std::fs::copy(dir.path().join("kcm-rs.log"), to);
    }
}

/// Scenario `idle`: kcm-rs's settled resident memory (MiB), its anonymous
/// and file-backed parts then (MiB) and its time to ready (s) against 3
/// nodes.
async fn idle() -> (f64, (f64, f64), f64) {
    let sim = sim(3, 20_000).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let kcm = Kcm::start(&sim, &dir).await;
    let ready = kcm.readiness.ready;
    kcm.settle(&sim, Duration::from_secs(2), Duration::from_secs(600)).await;
    // Once started, kcm-rs hands its code back to the kernel, and what
    // idle runs comes back as it runs: a minute runs every periodic task
    // (heartbeats, lease renewals, resyncs, probes and scrapes) that an
    // idle kcm-rs runs, as the hot-text profile's minute does.
    let client = common::endpoints_client(kcm.port);
    let idle_until = Instant::now() + IDLE;
    while Instant::now() < idle_until {
        tokio::time::sleep(SCRAPE_EVERY.min(idle_until - Instant::now())).await;
        let _ = common::metrics(&client, Duration::from_secs(5)).await;
    }
    let mib = observe::settled_mib(kcm.pid, SETTLE, Duration::from_secs(3), Duration::from_secs(30)).await;
    let split = common::resident_split_mib(kcm.pid);
    println!("idle: ready after {:.2} s, resident {mib:.1} MiB", ready.as_secs_f64());
    kcm.stop(&dir, "idle").await;
    (mib, split, ready.as_secs_f64())
}

/// Scenario `cached`.
async fn cached(scale: Scale, idle_mib: f64) -> Vec<Row> {
    let (count, nodes) = (scale.of(CACHED_DEPLOYMENTS), scale.of(CACHED_NODES));
    let pods = count * CACHED_REPLICAS as usize;
    let converged = Converged::calibrate(CACHED_REPLICAS).await;
    let sim = sim(nodes, 50_000).await;
    let client = sim.client().expect("client");
    let start = Instant::now();
    futures::stream::iter(0..count)
        .map(|i| {
            let (converged, client) = (&converged, &client);
            async move { converged.objects(client, &name(i), |j| cached_node(i, j, nodes)).await }
        })
        .buffer_unordered(8)
        .for_each(|_| async {})
        .await;
    let made = start.elapsed();
    let mut probe = Probe::new(std::process::id());
    let ready =
        Tracker::new(&sim, Builtin::Pod, observe::ready).wait(&sim, pods, "pods Ready", start, LIMIT, &mut probe).await;
    let made_writes = count * (4 + CACHED_REPLICAS as usize);
    println!(
        "cached: {count} Deployments, {pods} pods on {nodes} nodes made with {made_writes} API writes in {:.1} s \
         ({:.0} writes/s), all pods Ready after {:.1} s; benchmark process (kube-sim) resident {:.0} MiB",
        made.as_secs_f64(),
        made_writes as f64 / made.as_secs_f64(),
        ready.as_secs_f64(),
        common::resident_mib(std::process::id())
    );

    let dir = tempfile::tempdir().expect("temp dir");
    let (before, _) = Mix::kcm_rs(&sim);
    let mut kcm = Kcm::start(&sim, &dir).await;
    let readiness = kcm.readiness;
    let mut probe = Probe::new(kcm.pid);
    let quiet = kcm.settle(&sim, Duration::from_secs(5), LIMIT).await;
    let mib = observe::settled_mib(kcm.pid, SETTLE, Duration::from_secs(3), Duration::from_secs(60)).await;
    probe.sample();
    let unanswered = kcm.health();
    let (after_start, _) = Mix::kcm_rs(&sim);
    tokio::time::sleep(STEADY).await;
    let (after_steady, _) = Mix::kcm_rs(&sim);
    probe.sample();
    let steady_unanswered = kcm.health();
    let start_writes = after_start.since(&before);
    let steady = after_steady.since(&after_start);
    println!(
        "cached: kcm-rs informers synced after {:.1} s, /readyz 200 after {:.1} s, settled {:.1} s later; longest /healthz \
         {:.1} s; resident {mib:.0} MiB (peak {:.0}); writes until quiet: {} ({}); in {} s after: {} ({}), longest \
         /healthz {:.2} s",
        readiness.informers_synced.as_secs_f64(),
        readiness.ready.as_secs_f64(),
        quiet.as_secs_f64(),
        unanswered.as_secs_f64(),
        probe.peak_mib,
        start_writes.total(),
        start_writes.per(1),
        STEADY.as_secs(),
        steady.total(),
        steady.per(1),
        steady_unanswered.as_secs_f64(),
    );
    kcm.stop(&dir, "cached").await;
    let what = format!("{count} Deployments, {count} ReplicaSets, {pods} pods, {nodes} nodes");
    vec![
        Row::plain(
            "cached",
            format!("kcm-rs start until its informers' caches are synced (log line), {what}"),
            format!("{:.1} s", readiness.informers_synced.as_secs_f64()),
        ),
        Row::plain(
            "cached",
            "kcm-rs start until /readyz answers 200",
            format!("{:.1} s", readiness.ready.as_secs_f64()),
        ),
        Row::plain(
            "cached",
            "… then until its first syncs are done (5 s with every workqueue empty and no write)",
            format!("{:.1} s", quiet.as_secs_f64()),
        ),
        Row::plain(
            "cached",
            "longest /healthz went unanswered, from start until then (probed every 0.5 s)",
            format!("{:.1} s", unanswered.as_secs_f64()),
        ),
        Row::plain(
            "cached",
            "resident memory, settled after that (peak)",
            format!("{mib:.0} MiB ({:.0} MiB)", probe.peak_mib),
        ),
        Row::plain(
            "cached",
            "bytes per cached pod: (resident − idle resident) / pods",
            format!("{:.0} B", (mib - idle_mib) * 1024.0 * 1024.0 / pods as f64),
        ),
        Row::plain(
            "cached",
            "writes from start until then",
            format!("{} ({})", start_writes.total(), start_writes.per(1)),
        ),
        Row::plain(
            "cached",
            format!("writes over the next {} s (steady state)", STEADY.as_secs()),
            steady.total().to_string(),
        ),
    ]
}

/// What kcm-rs did in a write-heavy phase.
struct Phase {
    /// Deployments of the phase.
    deployments: usize,
    /// Until every Deployment was complete.
    elapsed: Duration,
    /// kcm-rs's writes.
    mix: Mix,
    /// Of which 409 Conflict.
    conflicts: u64,
    /// kcm-rs's CPU seconds.
    cpu: f64,
    /// The benchmark process's (kube-sim's) CPU seconds.
    sim_cpu: f64,
    /// kcm-rs's peak resident memory, MiB.
    peak_mib: f64,
    /// The longest kcm-rs's `/healthz` went unanswered.
    health: Duration,
}

impl Phase {
    /// The phase's rows, against `ceiling`.
    fn rows(&self, scenario: &'static str, what: &str, ceiling: &Ceiling) -> Vec<Row> {
        let secs = self.elapsed.as_secs_f64();
        let writes = self.mix.total();
        let mut rows = vec![
            Row::against(
                scenario,
                format!("{what}: wall time until all complete (ceiling: its writes' time)"),
                secs,
                ceiling.elapsed.as_secs_f64(),
                "s",
            ),
            Row::against(scenario, "kcm-rs writes per second", writes as f64 / secs, ceiling.rate(), "/s"),
            Row::plain(
                scenario,
                "kcm-rs writes per Deployment (409 Conflicts)",
                format!(
                    "{:.1} ({:.2})",
                    writes as f64 / self.deployments as f64,
                    self.conflicts as f64 / self.deployments as f64
                ),
            ),
            Row::plain(
                scenario,
                "kcm-rs CPU (cores, average) / peak resident",
                format!("{:.2} / {:.0} MiB", self.cpu / secs, self.peak_mib),
            ),
            Row::plain(
                scenario,
                "CPU (cores, average) of kcm-rs + the benchmark process (kube-sim); ceiling: the benchmark process",
                format!(
                    "{:.2} + {:.2}; ceiling {:.2}",
                    self.cpu / secs,
                    self.sim_cpu / secs,
                    ceiling.cpu / ceiling.elapsed.as_secs_f64()
                ),
            ),
            Row::plain(
                scenario,
                "longest /healthz went unanswered during the phase (probed every 0.5 s)",
                format!("{:.2} s", self.health.as_secs_f64()),
            ),
        ];
        if ceiling.skipped.total() > 0 {
            rows.push(Row::plain(scenario, "writes the ceiling left out", ceiling.skipped.per(1)));
        }
        println!(
            "{scenario}: {what}: {:.1} s, {writes} kcm-rs writes ({:.0}/s): {} per Deployment; ceiling: {} writes in {:.1} s ({:.0}/s)",
            secs,
            writes as f64 / secs,
            self.mix.per(self.deployments),
            ceiling.writes,
            ceiling.elapsed.as_secs_f64(),
            ceiling.rate()
        );
        rows
    }
}

/// Creates `count` Deployments with `replicas` of `image` through `api`.
async fn create_deployments(api: &Api<Deployment>, count: usize, replicas: i32) -> Vec<Deployment> {
    futures::stream::iter(0..count)
        .map(|i| {
            let api = api.clone();
            async move {
                api.create(&PostParams::default(), &deployment(&name(i), replicas, &image("1.0")))
                    .await
                    .expect("created")
            }
        })
        .buffered(CONCURRENCY)
        .collect()
        .await
}

/// Sets image `version` on the first `count` Deployments.
async fn set_image(api: &Api<Deployment>, count: usize, version: &str) -> Vec<Deployment> {
    let patch = Patch::Merge(
        json!({"spec": {"template": {"spec": {"containers": [{"name": "web", "image": image(version)}]}}}}),
    );
    futures::stream::iter(0..count)
        .map(|i| {
            let (api, patch) = (api.clone(), &patch);
            async move { api.patch(&name(i), &PatchParams::default(), patch).await.expect("patched") }
        })
        .buffered(CONCURRENCY)
        .collect()
        .await
}

/// Waits until kcm-rs has completed the rollout of `count` Deployments of
/// `replicas` to `version`, from `start`, and takes the phase's figures.
async fn phase(
    sim: &Sim,
    count: usize,
    replicas: i32,
    version: &str,
    start: Instant,
    before: (Mix, u64),
    mut probe: Probe,
) -> Phase {
    let want = image(version);
    let mut tracker = Tracker::new(sim, Builtin::Deployment, move |b| observe::complete(b, replicas, &want));
    let elapsed = tracker.wait(sim, count, "Deployments complete", start, LIMIT, &mut probe).await;
    let (after, conflicts) = Mix::kcm_rs(sim);
    Phase {
        deployments: count,
        elapsed,
        mix: after.since(&before.0),
        conflicts: conflicts - before.1,
        cpu: probe.cpu(),
        sim_cpu: probe.own_cpu(),
        peak_mib: probe.peak_mib,
        health: Duration::ZERO,
    }
}

/// Scenario `bringup`, kcm-rs's part.
async fn bringup(count: usize) -> Phase {
    let sim = sim(NODES, 300_000).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let mut kcm = Kcm::start(&sim, &dir).await;
    kcm.settle(&sim, Duration::from_secs(2), Duration::from_secs(600)).await;
    let api: Api<Deployment> = Api::namespaced(sim.client().expect("client"), NAMESPACE);
    let before = Mix::kcm_rs(&sim);
    let probe = Probe::new(kcm.pid);
    kcm.health();
    let start = Instant::now();
    create_deployments(&api, count, REPLICAS).await;
    let mut phase = phase(&sim, count, REPLICAS, "1.0", start, before, probe).await;
    phase.health = kcm.health();
    kcm.stop(&dir, "bringup").await;
    phase
}

/// Scenario `bringup`, the ceiling: the Deployments created (not timed),
/// then kcm-rs's writes replayed.
async fn bringup_ceiling(count: usize, mix: &Mix) -> Ceiling {
    let sim = sim(NODES, 300_000).await;
    let api: Api<Deployment> = Api::namespaced(sim.client().expect("client"), NAMESPACE);
    let slots = create_deployments(&api, count, REPLICAS)
        .await
        .into_iter()
        .map(|d| Slot::new(d, Vec::new(), Vec::new()))
        .collect();
    ceiling::replay(&sim, slots, mix).await
}

/// Scenario `rollout`, kcm-rs's part: the time until `count` new
/// Deployments are available, and the rollout to a new image.
async fn rollout(count: usize) -> (Duration, Phase) {
    let sim = sim(NODES, 400_000).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let mut kcm = Kcm::start(&sim, &dir).await;
    kcm.settle(&sim, Duration::from_secs(2), Duration::from_secs(600)).await;
    let api: Api<Deployment> = Api::namespaced(sim.client().expect("client"), NAMESPACE);
    let before = Mix::kcm_rs(&sim);
    let start = Instant::now();
    create_deployments(&api, count, ROLLOUT_REPLICAS).await;
    let created = phase(&sim, count, ROLLOUT_REPLICAS, "1.0", start, before, Probe::new(kcm.pid)).await;
    kcm.settle(&sim, Duration::from_secs(2), Duration::from_secs(600)).await;
    let before = Mix::kcm_rs(&sim);
    let probe = Probe::new(kcm.pid);
    kcm.health();
    let start = Instant::now();
    set_image(&api, count, "2.0").await;
    let mut rolled = phase(&sim, count, ROLLOUT_REPLICAS, "2.0", start, before, probe).await;
    rolled.health = kcm.health();
    kcm.stop(&dir, "rollout").await;
    (created.elapsed, rolled)
}

/// Scenario `rollout`, the ceiling: converged Deployments with their
/// ReplicaSets and Running pods, set to the new image (not timed), then
/// kcm-rs's writes of the rollout replayed.
async fn rollout_ceiling(count: usize, mix: &Mix) -> Ceiling {
    let converged = Converged::calibrate(ROLLOUT_REPLICAS).await;
    let sim = sim(NODES, 400_000).await;
    let client = sim.client().expect("client");
    let made: Vec<(Deployment, k8s_openapi::api::apps::v1::ReplicaSet, Vec<String>)> = futures::stream::iter(0..count)
        .map(|i| {
            let (converged, client) = (&converged, &client);
            async move { converged.objects(client, &name(i), |j| format!("node-{}", (i + j) % NODES + 1)).await }
        })
        .buffered(8)
        .collect()
        .await;
    let mut probe = Probe::new(std::process::id());
    let pods = count * ROLLOUT_REPLICAS as usize;
    Tracker::new(&sim, Builtin::Pod, observe::ready)
        .wait(&sim, pods, "pods Ready", Instant::now(), LIMIT, &mut probe)
        .await;
    let api: Api<Deployment> = Api::namespaced(client, NAMESPACE);
    let patched = set_image(&api, count, "2.0").await;
    let slots = made.into_iter().zip(patched).map(|((_, rs, pods), d)| Slot::new(d, vec![rs], pods)).collect();
    ceiling::replay(&sim, slots, mix).await
}

/// Scenario `writes`: kcm-rs's writes per converged 1-replica Deployment,
/// then over a steady window.
async fn writes(count: usize) -> Vec<Row> {
    let sim = sim(NODES, 100_000).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let kcm = Kcm::start(&sim, &dir).await;
    kcm.settle(&sim, Duration::from_secs(2), Duration::from_secs(600)).await;
    let api: Api<Deployment> = Api::namespaced(sim.client().expect("client"), NAMESPACE);
    let (before, _) = Mix::kcm_rs(&sim);
    let start = Instant::now();
    create_deployments(&api, count, 1).await;
    let mut tracker = Tracker::new(&sim, Builtin::Deployment, |b| observe::complete(b, 1, &image("1.0")));
    let converged = tracker.wait(&sim, count, "Deployments complete", start, LIMIT, &mut Probe::new(kcm.pid)).await;
    kcm.settle(&sim, Duration::from_secs(5), Duration::from_secs(600)).await;
    let (after, _) = Mix::kcm_rs(&sim);
    tokio::time::sleep(STEADY).await;
    let (steady, _) = Mix::kcm_rs(&sim);
    kcm.stop(&dir, "writes").await;
    let per = after.since(&before);
    let steady = steady.since(&after);
    println!(
        "writes: {count} Deployments x 1 complete after {:.1} s; kcm-rs writes per Deployment {:.2}: {}; in {} s after: {} ({})",
        converged.as_secs_f64(),
        per.total() as f64 / count as f64,
        per.per(count),
        STEADY.as_secs(),
        steady.total(),
        steady.per(1)
    );
    vec![
        Row::plain(
            "writes",
            format!("kcm-rs writes per converged 1-replica Deployment ({count} made)"),
            format!("{:.2}", per.total() as f64 / count as f64),
        ),
        Row::plain("writes", "… by verb and resource", per.per(count)),
        Row::plain(
            "writes",
            format!("writes over {} s after convergence (steady state)", STEADY.as_secs()),
            steady.total().to_string(),
        ),
    ]
}
