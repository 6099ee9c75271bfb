//! The Deployment controller end to end: the real `kcm-rs` binary against
//! kube-sim and the testbed's kube-apiserver, driven by kubectl as a user would (`create deployment`,
//! `set image`, `rollout status|history|undo|pause|resume`, `scale`).
//!
//! Every rollout runs under a [`RolloutChecker`]: a watch on the
//! Deployment's pods and ReplicaSets that, after every event, counts them
//! by upstream's rules and records a violation when the strategy's bounds
//! are broken (the ReplicaSets' `spec.replicas` summed above `replicas +
//! maxSurge`, fewer than `replicas - maxUnavailable` available pods once
//! the rollout started from a fully available state; for Recreate, old and
//! new pods together). Each scenario asserts at its end that none was
//! recorded.
//!
//! The surge bound is on the ReplicaSets' desired replicas, as upstream's
//! e2e `checkRollingUpdateStatus` judges it, not on the pods: the
//! Deployment controller sizes ReplicaSets, and the ReplicaSet controller
//! deletes an old set's surplus pods and creates a new set's pods in
//! parallel, so for a moment the pods may outnumber the bound on upstream
//! too.
//!
//! Each scenario has its own kube-sim and `kcm-rs`, so they run in
//! parallel (on the testbed, its own namespace, in turn); every wait is on
//! a condition (`wait_for`, or `kubectl
//! rollout status`, which watches), never on a timing.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::api::{Api, ListParams, PostParams};
use kube::runtime::watcher;
use kube_sim::testing::{Kubectl, kubectl, kubectl_ok, wait_for};
use serde_json::json;
use tokio::sync::oneshot;

use crate::common::mirror::{Holds, follow};
use crate::common::{Env, PATIENCE, default_service_account, events, on_both, start};

const REVISION: &str = "deployment.kubernetes.io/revision";
const HASH: &str = "pod-template-hash";

// === the rollout checker ===

/// A `maxSurge` or `maxUnavailable` value as written in the spec.
#[derive(Debug, Clone, Copy)]
enum Bound {
    /// An absolute number of pods.
    Count(i32),
    /// A percentage of `spec.replicas`.
    Percent(i32),
}

impl Bound {
    fn of(value: &IntOrString) -> Bound {
        match value {
            IntOrString::Int(n) => Bound::Count(*n),
            IntOrString::String(s) => {
                Bound::Percent(s.trim_end_matches('%').parse().unwrap_or_else(|_| panic!("a percentage: {s}")))
            }
        }
    }

    /// Resolved against `replicas`, rounding up (surge) or down
    /// (unavailable), as upstream's `GetScaledValueFromIntOrPercent`.
    fn resolve(self, replicas: i32, round_up: bool) -> i32 {
        match self {
            Bound::Count(n) => n,
            Bound::Percent(p) if round_up => (p * replicas + 99) / 100,
            Bound::Percent(p) => p * replicas / 100,
        }
    }
}

/// The Deployment's strategy, as the checker judges it.
///
/// This is written again here rather than taken from `kcm-controllers`: the
/// checker is the oracle for that code and must not share its mistakes.
#[derive(Debug, Clone, Copy)]
enum Strategy {
    /// RollingUpdate with its `maxSurge` and `maxUnavailable`.
    Rolling { max_surge: Bound, max_unavailable: Bound },
    /// Recreate: old pods are gone before new ones start.
    Recreate,
}

impl Strategy {
    /// Upstream's defaults: 25% and 25%.
    const DEFAULT: Strategy = Strategy::Rolling { max_surge: Bound::Percent(25), max_unavailable: Bound::Percent(25) };

    /// Read from a Deployment's spec (defaulted by the API server).
    fn of(d: &Deployment) -> Strategy {
        let strategy = d.spec.strategy.clone().unwrap_or_default();
        if strategy.type_.as_deref() == Some("Recreate") {
            return Strategy::Recreate;
        }
        let rolling = strategy.rolling_update.unwrap_or_default();
        let bound = |v: Option<IntOrString>| v.map_or(Bound::Percent(25), |v| Bound::of(&v));
        Strategy::Rolling { max_surge: bound(rolling.max_surge), max_unavailable: bound(rolling.max_unavailable) }
    }

    /// `(maxSurge, maxUnavailable)` for `replicas` (upstream's
    /// `ResolveFenceposts`, maxUnavailable clamped to replicas); Recreate
    /// allows no surge and any unavailability.
    fn fenceposts(self, replicas: i32) -> (i32, i32) {
        match self {
            Strategy::Rolling { max_surge, max_unavailable } => {
                let surge = max_surge.resolve(replicas, true);
                let unavailable = max_unavailable.resolve(replicas, false);
                let unavailable = if surge == 0 && unavailable == 0 { 1 } else { unavailable };
                (surge, unavailable.min(replicas))
            }
            Strategy::Recreate => (0, replicas),
        }
    }
}

/// What the checker knows and has found.
#[derive(Debug)]
struct Checked {
    replicas: i32,
    strategy: Strategy,
    min_ready_seconds: i64,
    /// The ReplicaSets' desired replicas are judged (off after a
    /// scale-down until they fit the new bound).
    replica_sets_surge_armed: bool,
    /// Availability is judged: on once every replica was available, off
    /// after a scale-up until then again.
    availability_armed: bool,
    pods: BTreeMap<String, Pod>,
    replica_sets: BTreeMap<String, ReplicaSet>,
    /// Events judged, so a checker that saw nothing cannot pass.
    events: usize,
    violations: Vec<String>,
}

/// Upstream counts a pod while it is neither terminal nor being deleted.
fn is_active(pod: &Pod) -> bool {
    pod.metadata.deletion_timestamp.is_none() && !is_terminal(pod)
}

fn is_terminal(pod: &Pod) -> bool {
    matches!(pod.status.as_ref().and_then(|s| s.phase.as_deref()), Some("Succeeded" | "Failed"))
}

/// Ready for longer than `min_ready_seconds` (strictly, as upstream's
/// `IsPodAvailable`).
fn is_available(pod: &Pod, min_ready_seconds: i64, now: jiff::Timestamp) -> bool {
    let conditions = pod.status.as_ref().and_then(|s| s.conditions.as_ref());
    let ready = conditions.and_then(|c| c.iter().find(|c| c.type_ == "Ready" && c.status == "True"));
    match ready {
        None => false,
        Some(_) if min_ready_seconds == 0 => true,
        Some(c) => c
            .last_transition_time
            .as_ref()
            .is_some_and(|t| t.0 + jiff::SignedDuration::from_secs(min_ready_seconds) < now),
    }
}

impl Checked {
    fn fenceposts(&self) -> (i32, i32) {
        self.strategy.fenceposts(self.replicas)
    }

    fn violation(&mut self, what: String) {
        self.violations.push(what);
    }

    /// Judges the pods after `event`.
    fn judge_pods(&mut self, event: &str) {
        self.events += 1;
        let (_, unavailable) = self.fenceposts();
        let active: Vec<&Pod> = self.pods.values().filter(|p| is_active(p)).collect();
        let count = active.len();
        let now = jiff::Timestamp::now();
        let available = active.iter().filter(|p| is_available(p, self.min_ready_seconds, now)).count();
        let available = i32::try_from(available).expect("fits");
        let replicas = self.replicas;
        if let Strategy::Rolling { .. } = self.strategy {
            let min_available = replicas - unavailable;
            if self.availability_armed && available < min_available {
                self.violation(format!(
                    "{event}: {available} available pods (of {count} active) < replicas {replicas} - \
                     maxUnavailable {unavailable}"
                ));
            }
            if available >= replicas {
                self.availability_armed = true;
            }
        } else {
            // Recreate: no new pod while an old one runs, terminating or not.
            let hashes: BTreeSet<&str> = self
                .pods
                .values()
                .filter(|p| !is_terminal(p))
                .filter_map(|p| p.metadata.labels.as_ref().and_then(|l| l.get(HASH)).map(String::as_str))
                .collect();
            if hashes.len() > 1 {
                self.violation(format!("{event}: pods of several templates run together: {hashes:?}"));
            }
        }
    }

    /// Judges the ReplicaSets' desired replicas after `event`.
    fn judge_replica_sets(&mut self, event: &str) {
        self.events += 1;
        let (surge, _) = self.fenceposts();
        let desired: i32 = self.replica_sets.values().map(|rs| rs.spec.replicas.unwrap_or(1)).sum();
        let replicas = self.replicas;
        if desired > replicas + surge && self.replica_sets_surge_armed {
            let sizes: Vec<(String, i32)> = self
                .replica_sets
                .values()
                .map(|rs| (rs.metadata.name.clone().unwrap_or_default(), rs.spec.replicas.unwrap_or(1)))
                .collect();
            self.violation(format!(
                "{event}: ReplicaSets want {desired} replicas > replicas {replicas} + maxSurge {surge}: {sizes:?}"
            ));
        } else if desired <= replicas + surge {
            self.replica_sets_surge_armed = true;
        }
    }
}

/// Watches the pods and ReplicaSets of one Deployment (labelled
/// `app=<name>`) and judges the rollout bounds after every event.
struct RolloutChecker {
    state: Arc<Mutex<Checked>>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl RolloutChecker {
    /// Starts watching; returns once both watches have listed.
    async fn start(env: &Env, name: &str, replicas: i32, strategy: Strategy, min_ready_seconds: i64) -> Self {
        let state = Arc::new(Mutex::new(Checked {
            replicas,
            strategy,
            min_ready_seconds,
            replica_sets_surge_armed: true,
            availability_armed: false,
            pods: BTreeMap::new(),
            replica_sets: BTreeMap::new(),
            events: 0,
            violations: Vec::new(),
        }));
        let config = watcher::Config::default().labels(&format!("app={name}"));
        let (pods_listed, pods_ready) = oneshot::channel();
        let (sets_listed, sets_ready) = oneshot::channel();
        let pods: Api<Pod> = Api::namespaced(env.client.clone(), &env.ns);
        let sets: Api<ReplicaSet> = Api::namespaced(env.client.clone(), &env.ns);
        let tasks = vec![
            tokio::spawn(follow(pods, config.clone(), state.clone(), pods_listed)),
            tokio::spawn(follow(sets, config, state.clone(), sets_listed)),
        ];
        pods_ready.await.expect("the pod watch lists");
        sets_ready.await.expect("the ReplicaSet watch lists");
        RolloutChecker { state, tasks }
    }

    /// Call before scaling the Deployment to `replicas`: a scale-down
    /// suspends the surge check until the surplus is gone, a scale-up the
    /// availability check until every replica is available again (upstream
    /// e2e does not judge a rollout right after a scaling event either).
    fn scale(&self, replicas: i32) {
        let mut s = self.state.lock().expect("lock");
        if replicas < s.replicas {
            s.replica_sets_surge_armed = false;
        }
        if replicas > s.replicas {
            s.availability_armed = false;
        }
        s.replicas = replicas;
    }

    /// The violations recorded so far.
    fn violations(&self) -> Vec<String> {
        self.state.lock().expect("lock").violations.clone()
    }

    /// Stops watching and fails the test with every violation seen.
    fn assert_clean(self) {
        for task in &self.tasks {
            assert!(!task.is_finished(), "a checker's watch ended early: events after it were not judged");
            task.abort();
        }
        let s = self.state.lock().expect("lock");
        assert!(s.events > 0, "the checker saw no event");
        assert!(s.violations.is_empty(), "rollout bounds broken:\n{}", s.violations.join("\n"));
    }
}

impl Holds<Pod> for Checked {
    fn held(&mut self) -> &mut BTreeMap<String, Pod> {
        &mut self.pods
    }

    fn judge(&mut self, what: &str) {
        self.judge_pods(what);
    }
}

impl Holds<ReplicaSet> for Checked {
    fn held(&mut self) -> &mut BTreeMap<String, ReplicaSet> {
        &mut self.replica_sets
    }

    fn judge(&mut self, what: &str) {
        self.judge_replica_sets(what);
    }
}

// === utils ===

/// An image of the app `name`, version `v`; kubectl names the container
/// after it (`name`).
fn image(name: &str, v: &str) -> String {
    format!("registry.example.com/{name}:{v}")
}

/// `kubectl create deployment`, then waits until the rollout is complete.
async fn create_and_roll_out(env: &Env, name: &str, replicas: i32) {
    let out = kubectl_ok(
        &env.kubeconfig,
        &[
            "-n",
            &env.ns,
            "create",
            "deployment",
            name,
            &format!("--image={}", image(name, "1")),
            &format!("--replicas={replicas}"),
        ],
    )
    .await;
    assert_eq!(out.trim(), format!("deployment.apps/{name} created"));
    rolled_out(env, name).await;
}

/// A scenario's start: kube-sim and `kcm-rs`, a checker on Deployment
/// `name`, and the Deployment made with `kubectl create deployment`
/// (then given `min_ready_seconds`) and rolled out.
async fn rolled_out_under_checker(
    name: &str,
    replicas: i32,
    strategy: Strategy,
    min_ready_seconds: i64,
) -> (Env, RolloutChecker) {
    let env = start().await;
    let checker = RolloutChecker::start(&env, name, replicas, strategy, min_ready_seconds).await;
    create_and_roll_out(&env, name, replicas).await;
    if min_ready_seconds > 0 {
        let patch = json!({"spec": {"minReadySeconds": min_ready_seconds}}).to_string();
        kubectl_ok(&env.kubeconfig, &["-n", &env.ns, "patch", "deployment", name, "-p", &patch]).await;
        rolled_out(&env, name).await;
    }
    (env, checker)
}

/// `kubectl rollout status`, which must report success.
async fn rolled_out(env: &Env, name: &str) {
    let out = rollout_status(env, name).await;
    assert!(out.ok, "kubectl rollout status failed:\n{}\n{}", out.stdout, out.stderr);
    assert!(out.stdout.contains(&format!("deployment \"{name}\" successfully rolled out")), "{}", out.stdout);
}

async fn rollout_status(env: &Env, name: &str) -> Kubectl {
    kubectl(&env.kubeconfig, &["-n", &env.ns, "rollout", "status", &format!("deployment/{name}"), "--timeout=120s"])
        .await
}

async fn deployment(env: &Env, name: &str) -> Deployment {
    let api: Api<Deployment> = Api::namespaced(env.client.clone(), &env.ns);
    api.get(name).await.expect("Deployment read")
}

/// The ReplicaSets of Deployment `name`, by revision.
async fn replica_sets(env: &Env, name: &str) -> Vec<ReplicaSet> {
    let api: Api<ReplicaSet> = Api::namespaced(env.client.clone(), &env.ns);
    let mut list = api.list(&ListParams::default().labels(&format!("app={name}"))).await.expect("listed").items;
    list.sort_by_key(|rs| revision(rs).parse::<i64>().unwrap_or(0));
    list
}

fn annotation<'a>(meta: &'a kube::api::ObjectMeta, key: &str) -> &'a str {
    meta.annotations.as_ref().and_then(|a| a.get(key)).map_or("", String::as_str)
}

fn revision(rs: &ReplicaSet) -> &str {
    annotation(&rs.metadata, REVISION)
}

fn spec_replicas(rs: &ReplicaSet) -> i32 {
    rs.spec.replicas.unwrap_or(1)
}

fn rs_image(rs: &ReplicaSet) -> String {
    let template = rs.spec.template.as_ref().and_then(|t| t.spec.as_ref());
    template.and_then(|s| s.containers.first()).and_then(|c| c.image.clone()).unwrap_or_default()
}

/// (name, revision, spec.replicas, image) of every ReplicaSet, for
/// failure messages and assertions.
fn summary(sets: &[ReplicaSet]) -> Vec<(String, String, i32, String)> {
    sets.iter()
        .map(|rs| {
            (rs.metadata.name.clone().unwrap_or_default(), revision(rs).to_owned(), spec_replicas(rs), rs_image(rs))
        })
        .collect()
}

/// The active pods of Deployment `name`.
async fn active_pods(env: &Env, name: &str) -> Vec<Pod> {
    let api: Api<Pod> = Api::namespaced(env.client.clone(), &env.ns);
    let list = api.list(&ListParams::default().labels(&format!("app={name}"))).await.expect("pods listed");
    list.items.into_iter().filter(is_active).collect()
}

fn pod_image(pod: &Pod) -> String {
    pod.spec.as_ref().and_then(|s| s.containers.first()).and_then(|c| c.image.clone()).unwrap_or_default()
}

/// The condition `type_` of a Deployment as (status, reason, message).
fn condition(d: &Deployment, type_: &str) -> Option<(String, String, String)> {
    let conditions = d.status.as_ref().and_then(|s| s.conditions.as_ref())?;
    conditions.iter().find(|c| c.type_.as_deref() == Some(type_)).map(|c| {
        (
            c.status.clone().unwrap_or_default(),
            c.reason.clone().unwrap_or_default(),
            c.message.clone().unwrap_or_default(),
        )
    })
}

/// Rows of `kubectl rollout history` as (revision, change-cause).
async fn history(env: &Env, name: &str) -> Vec<(String, String)> {
    let out = kubectl_ok(&env.kubeconfig, &["-n", &env.ns, "rollout", "history", &format!("deployment/{name}")]).await;
    out.lines()
        .skip_while(|l| !l.starts_with("REVISION"))
        .skip(1)
        .filter_map(|l| {
            let mut cols = l.split_whitespace();
            Some((cols.next()?.to_owned(), cols.collect::<Vec<_>>().join(" ")))
        })
        .collect()
}

/// Waits until every active pod of `name` runs `image`, and there are
/// `replicas` of them.
async fn all_pods_run(env: &Env, name: &str, image: &str, replicas: usize) {
    wait_for(&env.cluster, PATIENCE, &format!("{replicas} pods of {name} running {image}"), || async move {
        let pods = active_pods(env, name).await;
        let images: Vec<String> = pods.iter().map(pod_image).collect();
        if images.len() == replicas && images.iter().all(|i| i == image) { Ok(()) } else { Err(format!("{images:?}")) }
    })
    .await;
}

/// Waits until the ReplicaSets of `name` have the given (revision,
/// spec.replicas) pairs, by revision, and each has as many pods as it
/// wants (upstream e2e's `waitForReplicaSetDesiredReplicas`: a ReplicaSet
/// scaled down while its own creates are still in flight deletes only once
/// they are observed, so a user acting before then can see more pods than
/// `replicas + maxSurge` for a moment, on upstream too).
async fn sizes_are(env: &Env, name: &str, want: &[(&str, i32)]) {
    wait_for(&env.cluster, PATIENCE, &format!("ReplicaSets of {name} at {want:?}"), || async move {
        let sets = replica_sets(env, name).await;
        let seen: Vec<(&str, i32)> = sets.iter().map(|rs| (revision(rs), spec_replicas(rs))).collect();
        let settled = sets.iter().all(|rs| {
            let status = rs.status.clone().unwrap_or_default();
            status.replicas == spec_replicas(rs) && status.observed_generation == rs.metadata.generation
        });
        if seen == want && settled { Ok(()) } else { Err(format!("{:?}", summary(&sets))) }
    })
    .await;
}

/// Makes the pods of Deployment `name`'s template never Ready (kube-sim's
/// kubelet honours `kube-sim.io/ready: never`) and changes its image to
/// `v`: a rollout that cannot progress.
async fn break_template(env: &Env, name: &str, v: &str) {
    let patch = json!({"spec": {"template": {
        "metadata": {"annotations": {"kube-sim.io/ready": "never"}},
        "spec": {"containers": [{"name": name, "image": image(name, v)}]},
    }}});
    kubectl_ok(&env.kubeconfig, &["-n", &env.ns, "patch", "deployment", name, "-p", &patch.to_string()]).await;
}

// === scenarios ===

on_both!(
    the_checker_reports_a_surge_and_an_availability_drop,
    set_image_rolls_out_within_bounds_and_undo_rolls_back_to_the_old_replica_set,
    a_paused_deployment_does_not_roll_out_until_resumed,
    kubectl_scale_mid_rollout_scales_every_replica_set_proportionally,
    recreate_stops_every_old_pod_before_starting_new_ones,
    a_rollout_whose_pods_never_become_ready_exceeds_its_progress_deadline,
    a_deployment_reports_the_sum_of_its_replica_sets_terminating_replicas,
    a_deployment_adopts_the_orphan_replica_sets_its_selector_matches_and_only_those,
);

/// The checker itself: pods and ReplicaSets made by hand (no Deployment
/// involved) break both bounds, and each break is reported with the event
/// and counts.
async fn the_checker_reports_a_surge_and_an_availability_drop() {
    let env = start().await;
    // Pods made by hand need the namespace's ServiceAccount, which kcm-rs
    // makes moments after it starts (the testbed's start waits for it).
    default_service_account(&env.cluster, &env.client, &env.ns).await;
    let strategy = Strategy::Rolling { max_surge: Bound::Count(1), max_unavailable: Bound::Count(0) };
    let checker = RolloutChecker::start(&env, "probe", 2, strategy, 0).await;
    let pods: Api<Pod> = Api::namespaced(env.client.clone(), &env.ns);
    let pod = |name: &str| -> Pod {
        serde_json::from_value(json!({"metadata": {"name": name, "labels": {"app": "probe"}},
            "spec": {"containers": [{"name": "app", "image": image("probe", "1")}]}}))
        .expect("a pod")
    };
    for name in ["probe-a", "probe-b"] {
        pods.create(&PostParams::default(), &pod(name)).await.expect("created");
    }
    wait_for(&env.cluster, PATIENCE, "both pods Ready", || async {
        let ready =
            active_pods(&env, "probe").await.iter().filter(|p| is_available(p, 0, jiff::Timestamp::now())).count();
        if ready == 2 { Ok(()) } else { Err(format!("{ready} Ready")) }
    })
    .await;
    assert_eq!(checker.violations(), Vec::<String>::new());

    // Availability was armed at 2 available of 2: dropping to 1 breaks
    // maxUnavailable 0.
    pods.delete("probe-a", &Default::default()).await.expect("deleted");
    // ReplicaSets that want 2, then 4 replicas: 2 is within 2 + 1, 4 is
    // not.
    let sets: Api<ReplicaSet> = Api::namespaced(env.client.clone(), &env.ns);
    for set in ["probe-x", "probe-y"] {
        let labels = json!({"app": "probe", "set": set});
        let rs: ReplicaSet = serde_json::from_value(json!({
            "metadata": {"name": set, "labels": labels},
            "spec": {"replicas": 2, "selector": {"matchLabels": labels}, "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "app", "image": image("probe", "1")}]}}}}))
        .expect("a ReplicaSet");
        sets.create(&PostParams::default(), &rs).await.expect("created");
    }
    wait_for(&env.cluster, PATIENCE, "both violations", || async {
        let seen = checker.violations();
        let surge = seen.iter().any(|v| {
            v.starts_with("ReplicaSet probe-y changed")
                && v.contains("ReplicaSets want 4 replicas > replicas 2 + maxSurge 1")
        });
        let drop = seen.iter().any(|v| v.contains("1 available pods (of 1 active) < replicas 2 - maxUnavailable 0"));
        if surge && drop { Ok(()) } else { Err(format!("{seen:?}")) }
    })
    .await;
}

async fn set_image_rolls_out_within_bounds_and_undo_rolls_back_to_the_old_replica_set() {
    let name = "web";
    // Pods count as available 1 s after they are Ready.
    let (env, checker) = rolled_out_under_checker(name, 4, Strategy::DEFAULT, 1).await;
    let first = replica_sets(&env, name).await;
    assert_eq!(first.len(), 1, "{:?}", summary(&first));
    let first_name = first[0].metadata.name.clone().unwrap_or_default();
    assert_eq!(revision(&first[0]), "1");
    let hash = first[0].metadata.labels.as_ref().and_then(|l| l.get(HASH)).cloned().unwrap_or_default();
    assert_eq!(first_name, format!("{name}-{hash}"), "named after the template hash");
    assert!(hash.chars().all(|c| "bcdfghjklmnpqrstvwxz2456789".contains(c)), "{hash}");

    // A rolling update.
    let out = kubectl_ok(
        &env.kubeconfig,
        &["-n", &env.ns, "set", "image", &format!("deployment/{name}"), &format!("{name}={}", image(name, "2"))],
    )
    .await;
    assert_eq!(out.trim(), format!("deployment.apps/{name} image updated"));
    rolled_out(&env, name).await;
    all_pods_run(&env, name, &image(name, "2"), 4).await;
    let sets = replica_sets(&env, name).await;
    assert_eq!(
        summary(&sets).iter().map(|(_, r, n, i)| (r.as_str(), *n, i.clone())).collect::<Vec<_>>(),
        [("1", 0, image(name, "1")), ("2", 4, image(name, "2"))]
    );
    let second_name = sets[1].metadata.name.clone().unwrap_or_default();
    let d = deployment(&env, name).await;
    assert_eq!(annotation(&d.metadata, REVISION), "2");
    let status = d.status.clone().unwrap_or_default();
    assert_eq!(
        (status.replicas, status.updated_replicas, status.ready_replicas, status.available_replicas),
        (Some(4), Some(4), Some(4), Some(4))
    );
    assert_eq!(status.observed_generation, d.metadata.generation);
    assert_eq!(
        condition(&d, "Available"),
        Some(("True".into(), "MinimumReplicasAvailable".into(), "Deployment has minimum availability.".into()))
    );
    assert_eq!(
        condition(&d, "Progressing"),
        Some((
            "True".into(),
            "NewReplicaSetAvailable".into(),
            format!("ReplicaSet \"{second_name}\" has successfully progressed.")
        ))
    );
    // Events are written after the writes they tell of, by a queue of
    // their own: the last scale-down's may still be on its way.
    let up = format!("Scaled up replica set {second_name} from 0 to ");
    let down = format!("Scaled down replica set {first_name} from ");
    let scaled = wait_for(&env.cluster, PATIENCE, "the rollout's ScalingReplicaSet events", || async {
        let scaled = events(&env, &env.ns, name, "ScalingReplicaSet").await;
        let messages: Vec<String> = scaled.iter().filter_map(|e| e.message.clone()).collect();
        let told = messages.iter().any(|m| m.starts_with(&up))
            && messages.iter().any(|m| m.starts_with(&down) && m.ends_with(" to 0"));
        if told { Ok(scaled) } else { Err(format!("{messages:?}")) }
    })
    .await;
    assert!(
        scaled.iter().all(|e| e.source.as_ref().and_then(|s| s.component.as_deref()) == Some("deployment-controller")),
        "{scaled:?}"
    );
    assert_eq!(history(&env, name).await, [("1".into(), "<none>".into()), ("2".into(), "<none>".into())]);

    // Undo: the first ReplicaSet comes back as revision 3; none is created.
    let out = kubectl_ok(&env.kubeconfig, &["-n", &env.ns, "rollout", "undo", &format!("deployment/{name}")]).await;
    assert_eq!(out.trim(), format!("deployment.apps/{name} rolled back"));
    rolled_out(&env, name).await;
    all_pods_run(&env, name, &image(name, "1"), 4).await;
    let sets = replica_sets(&env, name).await;
    assert_eq!(
        summary(&sets).iter().map(|(n, r, k, _)| (n.clone(), r.clone(), *k)).collect::<Vec<_>>(),
        [(second_name, "2".into(), 0), (first_name, "3".into(), 4)]
    );
    assert_eq!(annotation(&sets[1].metadata, "deployment.kubernetes.io/revision-history"), "1");
    assert_eq!(annotation(&deployment(&env, name).await.metadata, REVISION), "3");
    assert_eq!(history(&env, name).await, [("2".into(), "<none>".into()), ("3".into(), "<none>".into())]);
    checker.assert_clean();
}

async fn a_paused_deployment_does_not_roll_out_until_resumed() {
    let name = "paused";
    let (env, checker) = rolled_out_under_checker(name, 3, Strategy::DEFAULT, 0).await;

    kubectl_ok(&env.kubeconfig, &["-n", &env.ns, "rollout", "pause", &format!("deployment/{name}")]).await;
    kubectl_ok(
        &env.kubeconfig,
        &["-n", &env.ns, "set", "image", &format!("deployment/{name}"), &format!("{name}={}", image(name, "2"))],
    )
    .await;
    wait_for(&env.cluster, PATIENCE, "the paused Deployment to be observed", || async {
        let d = deployment(&env, name).await;
        let observed = d.status.as_ref().and_then(|s| s.observed_generation) == d.metadata.generation;
        let paused = condition(&d, "Progressing");
        let want = Some(("Unknown".to_owned(), "DeploymentPaused".to_owned(), "Deployment is paused".to_owned()));
        if observed && paused == want { Ok(()) } else { Err(format!("{:?} {paused:?}", d.status)) }
    })
    .await;
    let sets = replica_sets(&env, name).await;
    assert_eq!(sets.len(), 1, "no new ReplicaSet while paused: {:?}", summary(&sets));
    all_pods_run(&env, name, &image(name, "1"), 3).await;

    kubectl_ok(&env.kubeconfig, &["-n", &env.ns, "rollout", "resume", &format!("deployment/{name}")]).await;
    rolled_out(&env, name).await;
    all_pods_run(&env, name, &image(name, "2"), 3).await;
    let sets = replica_sets(&env, name).await;
    assert_eq!(summary(&sets).iter().map(|s| (s.1.as_str(), s.2)).collect::<Vec<_>>(), [("1", 0), ("2", 3)]);
    checker.assert_clean();
}

/// Upstream's e2e `testProportionalScalingDeployment`, with its numbers.
async fn kubectl_scale_mid_rollout_scales_every_replica_set_proportionally() {
    let name = "prop";
    let strategy = Strategy::Rolling { max_surge: Bound::Count(3), max_unavailable: Bound::Count(2) };
    let (env, checker) = rolled_out_under_checker(name, 10, strategy, 0).await;
    // The same as the default 25% for 10 replicas, but not for 30.
    let patch = r#"{"spec":{"strategy":{"rollingUpdate":{"maxSurge":3,"maxUnavailable":2}}}}"#;
    kubectl_ok(&env.kubeconfig, &["-n", &env.ns, "patch", "deployment", name, "-p", patch]).await;
    rolled_out(&env, name).await;

    // A rollout that cannot progress: 10 + 3 - 8 = 5 new pods that never
    // become Ready, 8 old ones left.
    break_template(&env, name, "404").await;
    sizes_are(&env, name, &[("1", 8), ("2", 5)]).await;

    checker.scale(30);
    let out =
        kubectl_ok(&env.kubeconfig, &["-n", &env.ns, "scale", &format!("deployment/{name}"), "--replicas=30"]).await;
    assert_eq!(out.trim(), format!("deployment.apps/{name} scaled"));
    // 8 + round(20 * 8/13) = 20 and 5 + round(20 * 5/13) = 13.
    sizes_are(&env, name, &[("1", 20), ("2", 13)]).await;
    for rs in replica_sets(&env, name).await {
        let surge = (
            annotation(&rs.metadata, "deployment.kubernetes.io/desired-replicas"),
            annotation(&rs.metadata, "deployment.kubernetes.io/max-replicas"),
        );
        assert_eq!(surge, ("30", "33"), "{:?}", rs.metadata.name);
    }

    // Back to the template that works: the first ReplicaSet takes over.
    kubectl_ok(&env.kubeconfig, &["-n", &env.ns, "rollout", "undo", &format!("deployment/{name}")]).await;
    rolled_out(&env, name).await;
    all_pods_run(&env, name, &image(name, "1"), 30).await;
    sizes_are(&env, name, &[("2", 0), ("3", 30)]).await;
    checker.assert_clean();
}

async fn recreate_stops_every_old_pod_before_starting_new_ones() {
    let env = start().await;
    let name = "recreate";
    let checker = RolloutChecker::start(&env, name, 3, Strategy::Recreate, 0).await;
    // The strategy is set before the controller can see the Deployment.
    let manifest = json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "labels": {"app": name}},
        "spec": {
            "replicas": 3,
            "strategy": {"type": "Recreate"},
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": name, "image": image(name, "1")}]}},
        },
    });
    let api: Api<Deployment> = Api::namespaced(env.client.clone(), &env.ns);
    let d: Deployment = serde_json::from_value(manifest).expect("a Deployment");
    api.create(&PostParams::default(), &d).await.expect("created");
    rolled_out(&env, name).await;
    assert!(matches!(Strategy::of(&deployment(&env, name).await), Strategy::Recreate));

    kubectl_ok(
        &env.kubeconfig,
        &["-n", &env.ns, "set", "image", &format!("deployment/{name}"), &format!("{name}={}", image(name, "2"))],
    )
    .await;
    rolled_out(&env, name).await;
    all_pods_run(&env, name, &image(name, "2"), 3).await;
    let sets = replica_sets(&env, name).await;
    assert_eq!(summary(&sets).iter().map(|s| (s.1.as_str(), s.2)).collect::<Vec<_>>(), [("1", 0), ("2", 3)]);
    let d = deployment(&env, name).await;
    assert_eq!(
        condition(&d, "Available").map(|c| (c.0, c.1)),
        Some(("True".into(), "MinimumReplicasAvailable".into()))
    );
    checker.assert_clean();
}

async fn a_rollout_whose_pods_never_become_ready_exceeds_its_progress_deadline() {
    let name = "stuck";
    // 25% of 4: maxSurge 1, maxUnavailable 1.
    let (env, checker) = rolled_out_under_checker(name, 4, Strategy::DEFAULT, 0).await;
    kubectl_ok(
        &env.kubeconfig,
        &["-n", &env.ns, "patch", "deployment", name, "-p", r#"{"spec":{"progressDeadlineSeconds":3}}"#],
    )
    .await;
    rolled_out(&env, name).await;

    break_template(&env, name, "404").await;
    let out = rollout_status(&env, name).await;
    assert!(!out.ok, "kubectl rollout status succeeded: {}", out.stdout);
    assert!(out.stderr.contains(&format!("deployment \"{name}\" exceeded its progress deadline")), "{}", out.stderr);

    let sets = replica_sets(&env, name).await;
    let new = sets.last().and_then(|rs| rs.metadata.name.clone()).unwrap_or_default();
    let d = deployment(&env, name).await;
    assert_eq!(
        condition(&d, "Progressing"),
        Some((
            "False".into(),
            "ProgressDeadlineExceeded".into(),
            format!("ReplicaSet \"{new}\" has timed out progressing.")
        ))
    );
    // Still available: the old pods were kept (4 - 1).
    assert_eq!(condition(&d, "Available").map(|c| c.0), Some("True".into()));
    assert!(d.status.as_ref().and_then(|s| s.available_replicas).unwrap_or(0) >= 3, "{:?}", d.status);
    checker.assert_clean();
}

/// The Deployment and ReplicaSets of the Kubernetes documentation's
/// example (concepts/workloads/controllers/deployment), as upstream's
/// kube-controller-manager left them: `nginx-deployment-75675f5897` is
/// the name upstream gave that template's ReplicaSet, hash and all.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_switched_from_upstream_keeps_its_replica_sets_pods_and_revision() {
    const UPSTREAM_HASH: &str = "75675f5897";
    let mut env = start().await;
    env.daemon.kill().await.expect("kcm-rs stopped");
    // The namespace's ServiceAccount and CA bundle, as upstream's
    // controller manager left them too (the pods below need both).
    kube_sim::testing::provision_namespace(env.cluster.sim(), &env.ns).await;
    let name = "nginx-deployment";
    let rs_name = format!("{name}-{UPSTREAM_HASH}");
    let labels = json!({"app": "nginx"});
    let hashed = json!({"app": "nginx", HASH: UPSTREAM_HASH});
    let container = json!([{"name": "nginx", "image": "nginx:1.14.2", "ports": [{"containerPort": 80}]}]);

    let deployments: Api<Deployment> = Api::namespaced(env.client.clone(), &env.ns);
    let d: Deployment = serde_json::from_value(json!({
        "metadata": {"name": name, "labels": labels, "annotations": {REVISION: "2"}},
        "spec": {"replicas": 3, "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels}, "spec": {"containers": container}}},
    }))
    .expect("a Deployment");
    let d = deployments.create(&PostParams::default(), &d).await.expect("Deployment created");
    // The premise: kcm-rs would name this template's ReplicaSet otherwise,
    // so only recognising the template (not the name) passes.
    let stored = d.spec.template.clone();
    assert_ne!(kcm_controllers::common::template_hash::compute_hash(&stored, None), UPSTREAM_HASH);
    let owner = json!([{"apiVersion": "apps/v1", "kind": "Deployment", "name": name,
        "uid": d.metadata.uid, "controller": true, "blockOwnerDeletion": true}]);
    // Revision 1 (an older template, scaled to 0; its hash is only a label
    // here) and revision 2, current.
    let sets: Api<ReplicaSet> = Api::namespaced(env.client.clone(), &env.ns);
    let old_hash = "5d59d67564";
    let old_container = json!([{"name": "nginx", "image": "nginx:1.14.1", "ports": [{"containerPort": 80}]}]);
    for (rs, hash, revision, replicas, containers) in [
        (format!("{name}-{old_hash}"), old_hash, "1", 0, &old_container),
        (rs_name.clone(), UPSTREAM_HASH, "2", 3, &container),
    ] {
        let hashed = json!({"app": "nginx", HASH: hash});
        let body: ReplicaSet = serde_json::from_value(json!({
            "metadata": {"name": rs, "labels": hashed, "ownerReferences": owner, "annotations": {
                REVISION: revision,
                "deployment.kubernetes.io/desired-replicas": "3",
                "deployment.kubernetes.io/max-replicas": "4"}},
            "spec": {"replicas": replicas, "selector": {"matchLabels": hashed},
                "template": {"metadata": {"labels": hashed}, "spec": {"containers": containers}}},
        }))
        .expect("a ReplicaSet");
        sets.create(&PostParams::default(), &body).await.expect("ReplicaSet created");
    }
    let current = sets.get(&rs_name).await.expect("read");
    let rs_owner = json!([{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": rs_name,
        "uid": current.metadata.uid, "controller": true, "blockOwnerDeletion": true}]);
    let pods: Api<Pod> = Api::namespaced(env.client.clone(), &env.ns);
    for suffix in ["7ci7o", "kzszj", "qqcnn"] {
        let pod: Pod = serde_json::from_value(json!({
            "metadata": {"name": format!("{rs_name}-{suffix}"), "labels": hashed, "ownerReferences": rs_owner},
            "spec": {"containers": container},
        }))
        .expect("a pod");
        pods.create(&PostParams::default(), &pod).await.expect("pod created");
    }
    wait_for(&env.cluster, PATIENCE, "the upstream pods to be Ready", || async {
        let ready =
            active_pods(&env, "nginx").await.iter().filter(|p| is_available(p, 0, jiff::Timestamp::now())).count();
        if ready == 3 { Ok(()) } else { Err(format!("{ready} Ready")) }
    })
    .await;
    let before_sets: Vec<(Option<String>, Option<String>)> = replica_sets(&env, "nginx")
        .await
        .iter()
        .map(|rs| (rs.metadata.name.clone(), rs.metadata.uid.clone()))
        .collect();
    let before_pods: BTreeSet<Option<String>> =
        active_pods(&env, "nginx").await.iter().map(|p| p.metadata.uid.clone()).collect();
    let writes = |resource: &str, verb: &str| -> u64 {
        env.cluster
            .controls()
            .stats()
            .iter()
            .filter(|s| s.resource == resource && s.verb == verb)
            .map(|s| s.count)
            .sum()
    };
    let (rs_created, pods_created, pods_deleted) =
        (writes("replicasets", "create"), writes("pods", "create"), writes("pods", "delete"));

    env.daemon = env.spawn();
    let checker = RolloutChecker::start(&env, "nginx", 3, Strategy::DEFAULT, 0).await;
    wait_for(&env.cluster, PATIENCE, "kcm-rs to fill the Deployment's status", || async {
        let d = deployment(&env, name).await;
        let s = d.status.clone().unwrap_or_default();
        let filled = s.observed_generation == d.metadata.generation
            && (s.replicas, s.updated_replicas, s.ready_replicas, s.available_replicas)
                == (Some(3), Some(3), Some(3), Some(3))
            && condition(&d, "Available").is_some_and(|c| c.0 == "True")
            && condition(&d, "Progressing").is_some_and(|c| c.1 == "NewReplicaSetAvailable");
        if filled { Ok(()) } else { Err(format!("{s:?}")) }
    })
    .await;
    rolled_out(&env, name).await;

    let after_sets: Vec<(Option<String>, Option<String>)> = replica_sets(&env, "nginx")
        .await
        .iter()
        .map(|rs| (rs.metadata.name.clone(), rs.metadata.uid.clone()))
        .collect();
    assert_eq!(after_sets, before_sets, "no ReplicaSet created or replaced");
    let after_pods: BTreeSet<Option<String>> =
        active_pods(&env, "nginx").await.iter().map(|p| p.metadata.uid.clone()).collect();
    assert_eq!(after_pods, before_pods, "no pod replaced");
    assert_eq!(
        (writes("replicasets", "create"), writes("pods", "create"), writes("pods", "delete")),
        (rs_created, pods_created, pods_deleted),
        "kcm-rs created or deleted nothing"
    );
    let d = deployment(&env, name).await;
    assert_eq!(annotation(&d.metadata, REVISION), "2");
    let revisions: Vec<(String, String)> = replica_sets(&env, "nginx")
        .await
        .iter()
        .map(|rs| (rs.metadata.name.clone().unwrap_or_default(), revision(rs).to_owned()))
        .collect();
    assert_eq!(revisions, [(format!("{name}-{old_hash}"), "1".into()), (rs_name, "2".into())]);
    checker.assert_clean();
}

async fn a_deployment_reports_the_sum_of_its_replica_sets_terminating_replicas() {
    use kube::api::{DeleteParams, Patch, PatchParams};
    let env = start().await;
    create_and_roll_out(&env, "draining", 2).await;
    let pods: Api<Pod> = Api::namespaced(env.client.clone(), &env.ns);
    let held: Vec<String> = active_pods(&env, "draining").await.into_iter().filter_map(|p| p.metadata.name).collect();
    for pod in &held {
        let finalizer = json!({"metadata": {"finalizers": ["kcm-rs.test/hold"]}});
        pods.patch(pod, &PatchParams::default(), &Patch::Merge(finalizer)).await.expect("finalizer added");
        pods.delete(pod, &DeleteParams::default()).await.expect("pod deleted");
    }
    // DeploymentReplicaSetTerminatingReplicas is on at 1.37.
    wait_for(&env.cluster, PATIENCE, "terminatingReplicas 2 on the ReplicaSet and the Deployment", || async {
        let of_rs: Vec<Option<i32>> = replica_sets(&env, "draining")
            .await
            .into_iter()
            .map(|rs| rs.status.and_then(|s| s.terminating_replicas))
            .collect();
        let of_d = deployment(&env, "draining").await.status.and_then(|s| s.terminating_replicas);
        let seen = format!("ReplicaSets {of_rs:?}, Deployment {of_d:?}");
        if of_rs == [Some(2)] && of_d == Some(2) { Ok(()) } else { Err(seen) }
    })
    .await;
    for pod in &held {
        let clear = json!({"metadata": {"finalizers": null}});
        pods.patch(pod, &PatchParams::default(), &Patch::Merge(clear)).await.expect("finalizer removed");
    }
    wait_for(&env.cluster, PATIENCE, "terminatingReplicas back to 0", || async {
        let of_d = deployment(&env, "draining").await.status.and_then(|s| s.terminating_replicas);
        if of_d == Some(0) { Ok(()) } else { Err(format!("{of_d:?}")) }
    })
    .await;
}

async fn a_deployment_adopts_the_orphan_replica_sets_its_selector_matches_and_only_those() {
    let env = start().await;
    let sets: Api<ReplicaSet> = Api::namespaced(env.client.clone(), &env.ns);
    for (name, app) in [("adoptee", "adopter"), ("bystander", "someone-else")] {
        let labels = json!({"app": app, "set": name});
        let body: ReplicaSet = serde_json::from_value(json!({
            "metadata": {"name": name, "labels": labels},
            "spec": {"replicas": 0, "selector": {"matchLabels": labels},
                "template": {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "c", "image": "old"}]}}},
        }))
        .expect("a ReplicaSet");
        sets.create(&PostParams::default(), &body).await.expect("orphan created");
    }
    create_and_roll_out(&env, "adopter", 1).await;
    let uid = deployment(&env, "adopter").await.metadata.uid;
    let controller = |rs: &ReplicaSet| {
        rs.metadata.owner_references.iter().flatten().find(|r| r.controller == Some(true)).map(|r| r.uid.clone())
    };
    wait_for(&env.cluster, PATIENCE, "the matching orphan to be adopted", || async {
        let adoptee = sets.get("adoptee").await.map_err(|e| e.to_string())?;
        if controller(&adoptee) == uid { Ok(()) } else { Err(format!("{:?}", adoptee.metadata.owner_references)) }
    })
    .await;
    let bystander = sets.get("bystander").await.expect("read");
    assert_eq!(controller(&bystander), None, "a ReplicaSet the selector does not match stays an orphan");
}
