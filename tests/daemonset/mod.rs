//! The DaemonSet controller end to end, ported from upstream's
//! `test/e2e/apps/daemon_set.go`: the real `kcm-rs` binary against
//! kube-sim and the testbed's kube-apiserver (three nodes each, `node-1` ..
//! `node-3`), driven by kubectl (`create -f`, `label node`, `taint node`,
//! `set image`, `rollout status|history|undo`, `get --raw`, `patch
//! --subresource=status`, `delete -l`) and, on kube-sim only, its node
//! controls. The testbed's nodes are every test's: a scenario that labels
//! or taints one undoes it ([`NodeChange`]).
//!
//! Every scenario that runs daemon pods runs under a [`DaemonChecker`]
//! (`checker`): after every watch event on the pods, no node holds two
//! daemon pods outside a surge, and no more than `maxUnavailable` nodes lack
//! an available one once all had one. One scenario runs under failing pod
//! creates and a disturbed kcm-rs (dropped watches, compaction, restart).

mod checker;

use std::collections::BTreeMap;
use std::path::PathBuf;

use k8s_openapi::api::apps::v1::DaemonSet;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams};
use kube_sim::SimConfig;
use kube_sim::kubelet::NodeSpec;
use kube_sim::testing::{kubectl, kubectl_ok, kubectl_ok_with_stdin, wait_for};
use serde_json::{Value, json};

use crate::common::{Cluster, Env, PATIENCE, disturb, events, failing_pod_creates, on_both, start, start_with};
use checker::{Bounds, DaemonChecker, is_available, is_terminal, target_node};

const NODES: [&str; 3] = ["node-1", "node-2", "node-3"];
const HASH: &str = "controller-revision-hash";

// === utils ===

fn image(v: &str) -> String {
    format!("registry.example.com/daemon:{v}")
}

/// A DaemonSet `name` selecting `app=<name>`, one container `app` on
/// image version 1, with `spec` merged over its spec.
fn daemon_set(name: &str, spec: &Value) -> Value {
    let mut ds = json!({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": name, "labels": {"app": name}},
        "spec": {"selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "app", "image": image("1")}]}}}});
    merge(&mut ds["spec"], spec);
    ds
}

fn merge(into: &mut Value, from: &Value) {
    match (into, from) {
        (Value::Object(into), Value::Object(from)) => {
            for (k, v) in from {
                merge(into.entry(k.clone()).or_insert(Value::Null), v);
            }
        }
        (into, from) => *into = from.clone(),
    }
}

async fn create(env: &Env, ds: &Value) {
    let out = kubectl_ok_with_stdin(&env.kubeconfig, &["-n", &env.ns, "create", "-f", "-"], &ds.to_string()).await;
    assert_eq!(out.trim(), format!("daemonset.apps/{} created", ds["metadata"]["name"].as_str().expect("name")));
}

/// The pods of DaemonSet `name` that are not terminal, by node.
async fn pods_by_node(env: &Env, name: &str) -> BTreeMap<String, Vec<Pod>> {
    let api: Api<Pod> = Api::namespaced(env.client.clone(), &env.ns);
    let list = api.list(&ListParams::default().labels(&format!("app={name}"))).await.expect("pods listed");
    let mut by_node: BTreeMap<String, Vec<Pod>> = BTreeMap::new();
    for pod in list.items.into_iter().filter(|p| !is_terminal(p)) {
        by_node.entry(target_node(&pod).unwrap_or_default()).or_default().push(pod);
    }
    by_node
}

fn summary(by_node: &BTreeMap<String, Vec<Pod>>) -> Vec<(String, Vec<String>)> {
    let pod = |p: &Pod| {
        let phase = p.status.as_ref().and_then(|s| s.phase.as_deref()).unwrap_or("no phase");
        format!("{} {} {phase}", p.metadata.name.as_deref().unwrap_or_default(), pod_hash(p))
    };
    by_node.iter().map(|(node, pods)| (node.clone(), pods.iter().map(pod).collect())).collect()
}

/// Waits until exactly `nodes` each run one available pod of `name`
/// (with template hash `hash`, if given) and nothing else runs.
async fn runs_on(env: &Env, name: &str, nodes: &[&str], hash: Option<&str>) -> BTreeMap<String, Pod> {
    wait_for(&env.cluster, PATIENCE, &format!("{name} available on exactly {nodes:?}"), || async {
        let by_node = pods_by_node(env, name).await;
        let placed: Vec<&str> = by_node.keys().map(String::as_str).collect();
        let settled = placed == nodes
            && by_node
                .values()
                .all(|pods| pods.len() == 1 && is_available(&pods[0]) && hash.is_none_or(|h| pod_hash(&pods[0]) == h));
        if settled {
            Ok(by_node.into_iter().map(|(node, mut pods)| (node, pods.remove(0))).collect())
        } else {
            Err(format!("{:?}", summary(&by_node)))
        }
    })
    .await
}

fn pod_hash(pod: &Pod) -> &str {
    pod.metadata.labels.as_ref().and_then(|l| l.get(HASH)).map_or("", String::as_str)
}

async fn get_ds(env: &Env, name: &str) -> DaemonSet {
    Api::<DaemonSet>::namespaced(env.client.clone(), &env.ns).get(name).await.expect("DaemonSet read")
}

/// Waits until a pod of DaemonSet `name` carries the new template's `hash`.
async fn rollout_started(env: &Env, name: &str, hash: &str) {
    wait_for(&env.cluster, PATIENCE, "the rollout under way", || async {
        let by_node = pods_by_node(env, name).await;
        let started = by_node.values().flatten().any(|p| pod_hash(p) == hash);
        if started { Ok(()) } else { Err(format!("{:?}", summary(&by_node))) }
    })
    .await;
}

/// `kubectl rollout status ds/<name>`, which must report success.
async fn rolled_out(env: &Env, name: &str) {
    let out =
        kubectl(&env.kubeconfig, &["-n", &env.ns, "rollout", "status", &format!("ds/{name}"), "--timeout=120s"]).await;
    assert!(out.ok, "kubectl rollout status failed:\n{}\n{}", out.stdout, out.stderr);
    assert!(out.stdout.contains(&format!("daemon set \"{name}\" successfully rolled out")), "{}", out.stdout);
}

/// Waits until DaemonSet `name`'s status, which the controller computes
/// from its cache, counts `count` available pods for its generation. A
/// rollout started before then may find old pods the controller still sees
/// unavailable, which it replaces at once, beyond `maxSurge` and
/// `maxUnavailable` (upstream's rule), so the bounds would not hold.
async fn seen_available(env: &Env, name: &str, count: i32) {
    wait_for(&env.cluster, PATIENCE, &format!("the controller counting {count} available pods"), || async {
        let ds = get_ds(env, name).await;
        let status = ds.status.unwrap_or_default();
        let seen = status.observed_generation == ds.metadata.generation && status.number_available == Some(count);
        if seen { Ok(()) } else { Err(format!("{status:?}")) }
    })
    .await;
}

/// The revisions `kubectl rollout history` lists.
async fn history(env: &Env, name: &str) -> Vec<String> {
    let out = kubectl_ok(&env.kubeconfig, &["-n", &env.ns, "rollout", "history", &format!("ds/{name}")]).await;
    out.lines()
        .skip_while(|l| !l.starts_with("REVISION"))
        .skip(1)
        .filter_map(|l| l.split_whitespace().next().map(str::to_owned))
        .collect()
}

/// The current revision's hash: that of the ControllerRevision with the
/// highest number.
async fn current_hash(env: &Env, name: &str) -> String {
    let ds = get_ds(env, name).await;
    wait_for(&env.cluster, PATIENCE, "the DaemonSet's status caught up", || async {
        let status = get_ds(env, name).await.status.unwrap_or_default();
        let generation = ds.metadata.generation;
        if status.observed_generation == generation { Ok(()) } else { Err(format!("{status:?}")) }
    })
    .await;
    let out = kubectl_ok(
        &env.kubeconfig,
        &[
            "-n",
            &env.ns,
            "get",
            "controllerrevisions",
            "-l",
            &format!("app={name}"),
            "--sort-by=.revision",
            "-o",
            "json",
        ],
    )
    .await;
    let list: Value = serde_json::from_str(&out).expect("JSON");
    let last = list["items"].as_array().and_then(|i| i.last()).cloned().expect("a revision");
    last["metadata"]["labels"][HASH].as_str().expect("hash label").to_owned()
}

/// A change to a node, undone when this drops (at the test's end, or when
/// it fails): on the testbed the nodes are every test's. kube-sim's go
/// with the test.
struct NodeChange {
    kubeconfig: Option<PathBuf>,
    /// The kubectl arguments that undo it.
    undo: Vec<String>,
}

impl NodeChange {
    /// `kubectl <args>`, undone on drop by `kubectl <undo>`.
    async fn make(env: &Env, args: &[&str], undo: &[&str]) -> NodeChange {
        let kubeconfig = matches!(env.cluster, Cluster::Testbed { .. }).then(|| env.kubeconfig.clone());
        let change = NodeChange { kubeconfig, undo: undo.iter().map(|a| (*a).to_owned()).collect() };
        kubectl_ok(&env.kubeconfig, args).await;
        change
    }
}

impl Drop for NodeChange {
    fn drop(&mut self) {
        let Some(kubeconfig) = &self.kubeconfig else { return };
        let out = std::process::Command::new("kubectl").args(&self.undo).env("KUBECONFIG", kubeconfig).output();
        let undone = out.as_ref().is_ok_and(|o| o.status.success());
        if !undone && !std::thread::panicking() {
            panic!("kubectl {:?} did not undo the test's change to a shared node: {out:?}", self.undo);
        }
    }
}

/// Waits until kcm-rs's node cache holds every change made to `node` so
/// far, and returns the label that proved it (removed on drop). A
/// node's watch events arrive in order, so once kcm-rs places a pod of a
/// probe DaemonSet that selects a label written after those changes and
/// tolerates every taint, it has seen them too. Without it, a DaemonSet
/// created right after a taint may be synced against the untainted node
/// (the Node and DaemonSet watches are separate streams), and a
/// `NoSchedule` taint does not take away a pod already made.
async fn seen_by_kcm_rs(env: &Env, node: &str) -> NodeChange {
    let label = format!("kcm-rs.test/seen-{}", env.ns);
    let guard = NodeChange::make(
        env,
        &["label", "node", node, &format!("{label}=yes")],
        &["label", "node", node, &format!("{label}-")],
    )
    .await;
    let probe = json!({"template": {"spec": {"nodeSelector": {label.as_str(): "yes"}, "tolerations": [{"operator": "Exists"}]}}});
    create(env, &daemon_set("seen", &probe)).await;
    wait_for(&env.cluster, PATIENCE, &format!("kcm-rs placed a probe pod on {node}"), || async {
        let by_node = pods_by_node(env, "seen").await;
        if by_node.contains_key(node) { Ok(()) } else { Err(format!("{:?}", summary(&by_node))) }
    })
    .await;
    guard
}

// === scenarios ===

on_both!(
    simple_daemon_runs_on_every_node_and_revives_a_deleted_pod,
    complex_daemon_follows_its_node_selector,
    tainted_node_runs_a_daemon_pod_only_with_a_toleration,
    failed_daemon_pod_is_replaced,
    rolling_update_replaces_every_pod_one_node_at_a_time,
    on_delete_replaces_only_the_pods_a_user_deletes,
    rolling_update_with_max_surge_never_leaves_a_node_without_a_pod,
    rollback_restarts_only_the_updated_pods,
    status_subresource_is_read_and_patched,
    daemon_sets_listed_and_deleted_as_a_collection,
    restart_mid_rollout_resumes_without_extra_pods,
);

/// Upstream "should run and stop simple daemon": a pod on every node; a
/// deleted pod revived; the DaemonSet deleted takes its pods along.
async fn simple_daemon_runs_on_every_node_and_revives_a_deleted_pod() {
    let env = start().await;
    let checker = DaemonChecker::start(&env, &env.ns, "simple", &NODES, Bounds::DEFAULT).await;
    create(&env, &daemon_set("simple", &json!({}))).await;
    let pods = runs_on(&env, "simple", &NODES, None).await;
    let victim = pods["node-2"].metadata.name.clone().expect("name");
    kubectl_ok(&env.kubeconfig, &["-n", &env.ns, "delete", "pod", &victim]).await;
    let revived = runs_on(&env, "simple", &NODES, None).await;
    assert_ne!(revived["node-2"].metadata.name.as_deref(), Some(victim.as_str()), "a new pod on node-2");
    assert!(!events(&env, &env.ns, "simple", "SuccessfulCreate").await.is_empty(), "SuccessfulCreate recorded");
    wait_for(&env.cluster, PATIENCE, "the status counts three ready pods", || async {
        let status = get_ds(&env, "simple").await.status.unwrap_or_default();
        let seen = (status.desired_number_scheduled, status.current_number_scheduled, status.number_ready);
        if seen == (3, 3, 3) && status.number_available == Some(3) { Ok(()) } else { Err(format!("{status:?}")) }
    })
    .await;
    let out = kubectl_ok(&env.kubeconfig, &["-n", &env.ns, "get", "ds", "simple", "--no-headers"]).await;
    let columns: Vec<&str> = out.split_whitespace().collect();
    assert_eq!(columns[..6], ["simple", "3", "3", "3", "3", "3"], "{out}");
    checker.assert_clean();
}

/// Upstream "should run and stop complex daemon": a node selector; a node
/// labelled gets a pod, relabelled loses it; the selector changed to the
/// new label brings it back.
async fn complex_daemon_follows_its_node_selector() {
    let env = start().await;
    let ds = daemon_set("complex", &json!({"template": {"spec": {"nodeSelector": {"color": "blue"}}}}));
    create(&env, &ds).await;
    let checker = DaemonChecker::start(&env, &env.ns, "complex", &[], Bounds::DEFAULT).await;
    let _label =
        NodeChange::make(&env, &["label", "node", "node-1", "color=blue"], &["label", "node", "node-1", "color-"])
            .await;
    runs_on(&env, "complex", &["node-1"], None).await;
    kubectl_ok(&env.kubeconfig, &["label", "node", "node-1", "color=green", "--overwrite"]).await;
    runs_on(&env, "complex", &[], None).await;
    let patch = json!({"spec": {"template": {"spec": {"nodeSelector": {"color": "green"}}}}}).to_string();
    kubectl_ok(&env.kubeconfig, &["-n", &env.ns, "patch", "ds", "complex", "-p", &patch]).await;
    runs_on(&env, "complex", &["node-1"], None).await;
    checker.assert_clean();
}

/// A NoSchedule taint keeps a daemon pod off a node unless the DaemonSet
/// tolerates it (upstream "should run daemon on tainted nodes" in spirit:
/// the daemon's own tolerations are added, user taints are honoured).
async fn tainted_node_runs_a_daemon_pod_only_with_a_toleration() {
    let env = start().await;
    let taint = "dedicated=infra:NoSchedule";
    let _taint =
        NodeChange::make(&env, &["taint", "node", "node-3", taint], &["taint", "node", "node-3", &format!("{taint}-")])
            .await;
    let _seen = seen_by_kcm_rs(&env, "node-3").await;
    let checker = DaemonChecker::start(&env, &env.ns, "tainted", &["node-1", "node-2"], Bounds::DEFAULT).await;
    create(&env, &daemon_set("tainted", &json!({}))).await;
    runs_on(&env, "tainted", &["node-1", "node-2"], None).await;
    checker.set_nodes(&NODES);
    let toleration = json!({"spec": {"template": {"spec": {"tolerations": [
        {"key": "dedicated", "operator": "Equal", "value": "infra", "effect": "NoSchedule"}]}}}});
    kubectl_ok(&env.kubeconfig, &["-n", &env.ns, "patch", "ds", "tainted", "-p", &toleration.to_string()]).await;
    runs_on(&env, "tainted", &NODES, Some(&current_hash(&env, "tainted").await)).await;
    let pods = pods_by_node(&env, "tainted").await;
    let tolerations = pods["node-1"][0].spec.as_ref().and_then(|s| s.tolerations.clone()).unwrap_or_default();
    let keys: Vec<&str> = tolerations.iter().filter_map(|t| t.key.as_deref()).collect();
    for key in ["node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable", "node.kubernetes.io/unschedulable"] {
        assert!(keys.contains(&key), "the daemon tolerations are added: {keys:?}");
    }
    checker.assert_clean();
}

/// Upstream "should retry creating failed daemon pods": a daemon pod that
/// fails is killed (a `FailedDaemonPod` Warning) and replaced.
async fn failed_daemon_pod_is_replaced() {
    let env = start().await;
    let checker = DaemonChecker::start(&env, &env.ns, "fails", &NODES, Bounds::DEFAULT).await;
    create(&env, &daemon_set("fails", &json!({}))).await;
    let pods = runs_on(&env, "fails", &NODES, None).await;
    let failed = pods["node-1"].metadata.name.clone().expect("name");
    let status = json!({"status": {"phase": "Failed"}}).to_string();
    kubectl_ok(
        &env.kubeconfig,
        &["-n", &env.ns, "patch", "pod", &failed, "--subresource=status", "--type=merge", "-p", &status],
    )
    .await;
    let replaced = runs_on(&env, "fails", &NODES, None).await;
    assert_ne!(replaced["node-1"].metadata.name.as_deref(), Some(failed.as_str()));
    let warnings = events(&env, &env.ns, "fails", "FailedDaemonPod").await;
    let message = warnings.first().and_then(|e| e.message.clone()).expect("a FailedDaemonPod event");
    assert_eq!(message, format!("Found failed daemon pod {}/{failed} on node node-1, will try to kill it", env.ns));
    checker.assert_clean();
}

/// Upstream "should update pod when spec was updated and update strategy is
/// RollingUpdate", through kubectl: `set image`, `rollout status`,
/// `rollout history`.
async fn rolling_update_replaces_every_pod_one_node_at_a_time() {
    let env = start().await;
    let checker = DaemonChecker::start(&env, &env.ns, "rolling", &NODES, Bounds::DEFAULT).await;
    create(&env, &daemon_set("rolling", &json!({}))).await;
    rolled_out(&env, "rolling").await;
    let first = runs_on(&env, "rolling", &NODES, Some(&current_hash(&env, "rolling").await)).await;
    kubectl_ok(&env.kubeconfig, &["-n", &env.ns, "set", "image", "ds/rolling", &format!("app={}", image("2"))]).await;
    rolled_out(&env, "rolling").await;
    let second = runs_on(&env, "rolling", &NODES, Some(&current_hash(&env, "rolling").await)).await;
    for node in NODES {
        assert_ne!(first[node].metadata.uid, second[node].metadata.uid, "{node}'s pod replaced");
        let running = second[node].spec.as_ref().and_then(|s| s.containers[0].image.clone());
        assert_eq!(running, Some(image("2")), "{node} runs the new image");
    }
    assert_eq!(history(&env, "rolling").await, ["1", "2"]);
    checker.assert_clean();
}

/// Upstream "should not update pod when spec was updated and update
/// strategy is OnDelete": the pods keep the old template until a user
/// deletes one, whose replacement has the new one.
async fn on_delete_replaces_only_the_pods_a_user_deletes() {
    let env = start().await;
    let checker = DaemonChecker::start(&env, &env.ns, "ondelete", &NODES, Bounds::DEFAULT).await;
    create(&env, &daemon_set("ondelete", &json!({"updateStrategy": {"type": "OnDelete"}}))).await;
    let before = runs_on(&env, "ondelete", &NODES, None).await;
    kubectl_ok(&env.kubeconfig, &["-n", &env.ns, "set", "image", "ds/ondelete", &format!("app={}", image("2"))]).await;
    let new_hash = current_hash(&env, "ondelete").await;
    let status = get_ds(&env, "ondelete").await.status.unwrap_or_default();
    // 0 is not written (a plain omitempty int32).
    assert_eq!(status.updated_number_scheduled.unwrap_or(0), 0, "{status:?}");
    let victim = before["node-3"].metadata.name.clone().expect("name");
    kubectl_ok(&env.kubeconfig, &["-n", &env.ns, "delete", "pod", &victim]).await;
    let after = wait_for(&env.cluster, PATIENCE, "node-3's pod replaced with the new template", || async {
        let by_node = pods_by_node(&env, "ondelete").await;
        let replaced = by_node.get("node-3").is_some_and(|p| p.len() == 1 && pod_hash(&p[0]) == new_hash);
        let settled = replaced && by_node.values().flatten().all(is_available) && by_node.len() == 3;
        if settled { Ok(by_node) } else { Err(format!("{:?}", summary(&by_node))) }
    })
    .await;
    for node in ["node-1", "node-2"] {
        assert_eq!(after[node][0].metadata.uid, before[node].metadata.uid, "{node}'s pod is left alone");
    }
    checker.assert_clean();
}

/// Upstream "should surge pods onto nodes when spec was updated and update
/// strategy is RollingUpdate": maxSurge 1, maxUnavailable 0: a new pod
/// starts beside the old one, which goes once the new one is ready.
async fn rolling_update_with_max_surge_never_leaves_a_node_without_a_pod() {
    let env = start().await;
    let surge = Bounds { max_surge: 1, max_unavailable: 0 };
    let checker = DaemonChecker::start(&env, &env.ns, "surge", &NODES, surge).await;
    let strategy = json!({"updateStrategy": {"type": "RollingUpdate",
        "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}});
    create(&env, &daemon_set("surge", &strategy)).await;
    runs_on(&env, "surge", &NODES, None).await;
    seen_available(&env, "surge", 3).await;
    kubectl_ok(&env.kubeconfig, &["-n", &env.ns, "set", "image", "ds/surge", &format!("app={}", image("2"))]).await;
    rolled_out(&env, "surge").await;
    runs_on(&env, "surge", &NODES, Some(&current_hash(&env, "surge").await)).await;
    checker.assert_clean();
}

/// Upstream "should rollback without unnecessary restarts": an update to
/// pods that never become ready stalls after the first node; `kubectl
/// rollout undo` replaces that one pod and leaves the others alone.
async fn rollback_restarts_only_the_updated_pods() {
    let env = start().await;
    let checker = DaemonChecker::start(&env, &env.ns, "undo", &NODES, Bounds::DEFAULT).await;
    create(&env, &daemon_set("undo", &json!({}))).await;
    let before = runs_on(&env, "undo", &NODES, None).await;
    seen_available(&env, "undo", 3).await;
    let stuck = json!({"spec": {"template": {"metadata": {"annotations": {"kube-sim.io/ready": "never"}},
        "spec": {"containers": [{"name": "app", "image": image("bad")}]}}}});
    kubectl_ok(&env.kubeconfig, &["-n", &env.ns, "patch", "ds", "undo", "-p", &stuck.to_string()]).await;
    let new_hash = current_hash(&env, "undo").await;
    let updated = wait_for(&env.cluster, PATIENCE, "one node updated, the rollout stalled", || async {
        let by_node = pods_by_node(&env, "undo").await;
        let new: Vec<&Pod> = by_node.values().flatten().filter(|p| pod_hash(p) == new_hash).collect();
        match new.as_slice() {
            [pod] if pod.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running") => {
                Ok(target_node(pod).expect("node"))
            }
            _ => Err(format!("new hash {new_hash}: {:?}", summary(&by_node))),
        }
    })
    .await;
    kubectl_ok(&env.kubeconfig, &["-n", &env.ns, "rollout", "undo", "ds/undo"]).await;
    rolled_out(&env, "undo").await;
    let after = runs_on(&env, "undo", &NODES, Some(&current_hash(&env, "undo").await)).await;
    for node in NODES {
        let kept = before[node].metadata.uid == after[node].metadata.uid;
        assert_eq!(kept, node != updated, "{node}: only the updated node's pod is replaced");
    }
    assert_eq!(history(&env, "undo").await, ["2", "3"], "the rolled-back revision is renumbered");
    checker.assert_clean();
}

/// Upstream "should verify changes to a daemon set status": the status
/// subresource read (`get --raw`) and patched by a user, a condition kept
/// by the controller's next writes.
async fn status_subresource_is_read_and_patched() {
    let env = start().await;
    create(&env, &daemon_set("stat", &json!({}))).await;
    runs_on(&env, "stat", &NODES, None).await;
    let path = format!("/apis/apps/v1/namespaces/{}/daemonsets/stat/status", env.ns);
    let raw: Value = serde_json::from_str(&kubectl_ok(&env.kubeconfig, &["get", "--raw", &path]).await).expect("JSON");
    assert_eq!(raw["status"]["desiredNumberScheduled"], 3, "{raw}");
    let condition = json!({"status": {"conditions": [{"type": "StatusPatched", "status": "True",
        "reason": "E2E", "message": "Set from e2e test"}]}});
    kubectl_ok(
        &env.kubeconfig,
        &["-n", &env.ns, "patch", "ds", "stat", "--subresource=status", "--type=merge", "-p", &condition.to_string()],
    )
    .await;
    // The controller's next status writes (a pod deleted and revived) keep
    // the user's condition.
    let pods = runs_on(&env, "stat", &NODES, None).await;
    kubectl_ok(
        &env.kubeconfig,
        &["-n", &env.ns, "delete", "pod", pods["node-1"].metadata.name.as_deref().expect("name")],
    )
    .await;
    wait_for(&env.cluster, PATIENCE, "a pod revived", || async {
        let seen: Vec<String> =
            pods_by_node(&env, "stat").await.values().flatten().filter_map(|p| p.metadata.uid.clone()).collect();
        let replaced = !seen.contains(pods["node-1"].metadata.uid.as_ref().expect("uid"));
        if replaced && seen.len() == 3 { Ok(()) } else { Err(format!("pods {seen:?}")) }
    })
    .await;
    runs_on(&env, "stat", &NODES, None).await;
    wait_for(&env.cluster, PATIENCE, "the status counts every ready pod again", || async {
        let status = get_ds(&env, "stat").await.status.unwrap_or_default();
        if status.number_ready == 3 { Ok(status) } else { Err(format!("{status:?}")) }
    })
    .await;
    let conditions = get_ds(&env, "stat").await.status.and_then(|s| s.conditions).unwrap_or_default();
    let kept =
        conditions.iter().any(|c| c.type_.as_deref() == Some("StatusPatched") && c.reason.as_deref() == Some("E2E"));
    assert!(kept, "the patched condition is kept: {conditions:?}");
}

/// Upstream "should list and delete a collection of DaemonSets": listed by
/// label, deleted together, their pods collected.
async fn daemon_sets_listed_and_deleted_as_a_collection() {
    let env = start().await;
    for name in ["one", "two"] {
        let mut ds = daemon_set(name, &json!({}));
        ds["metadata"]["labels"]["e2e"] = json!("collection");
        create(&env, &ds).await;
    }
    runs_on(&env, "one", &NODES, None).await;
    let listed = kubectl_ok(&env.kubeconfig, &["-n", &env.ns, "get", "ds", "-l", "e2e=collection", "-o", "name"]).await;
    assert_eq!(listed.lines().collect::<Vec<_>>(), ["daemonset.apps/one", "daemonset.apps/two"]);
    kubectl_ok(&env.kubeconfig, &["-n", &env.ns, "delete", "ds", "-l", "e2e=collection"]).await;
    for name in ["one", "two"] {
        runs_on(&env, name, &[], None).await;
    }
    let left = kubectl_ok(&env.kubeconfig, &["-n", &env.ns, "get", "ds", "-o", "name"]).await;
    assert_eq!(left.trim(), "");
}

/// A node joining gets a daemon pod; a node leaving takes none with it
/// (its pod is left to the pod garbage collector, which deletes it once
/// the node has been gone for its 40 s quarantine), and is not given a new
/// one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn joining_node_gets_a_pod_and_a_leaving_node_none() {
    let env = start().await;
    let checker = DaemonChecker::start(&env, &env.ns, "joins", &NODES, Bounds::DEFAULT).await;
    create(&env, &daemon_set("joins", &json!({}))).await;
    runs_on(&env, "joins", &NODES, None).await;
    let node = NodeSpec { name: "node-4".into(), labels: Default::default(), taints: Vec::new() };
    env.cluster.controls().add_node(&node).expect("node-4 joins");
    checker.set_nodes(&["node-1", "node-2", "node-3", "node-4"]);
    runs_on(&env, "joins", &["node-1", "node-2", "node-3", "node-4"], None).await;
    checker.set_nodes(&["node-1", "node-2", "node-4"]);
    env.cluster.controls().remove_node("node-3").expect("node-3 leaves");
    assert!(pods_by_node(&env, "joins").await.contains_key("node-3"), "node-3's pod stays with the node gone");
    runs_on(&env, "joins", &["node-1", "node-2", "node-4"], None).await;
    wait_for(&env.cluster, PATIENCE, "three nodes desired", || async {
        let status = get_ds(&env, "joins").await.status.unwrap_or_default();
        if status.desired_number_scheduled == 3 { Ok(()) } else { Err(format!("{status:?}")) }
    })
    .await;
    checker.assert_clean();
}

/// kcm-rs killed mid-rollout and started again: the new process resumes
/// the rollout from what the cluster shows, with no extra pod on any node.
async fn restart_mid_rollout_resumes_without_extra_pods() {
    let mut env = start().await;
    let checker = DaemonChecker::start(&env, &env.ns, "resume", &NODES, Bounds::DEFAULT).await;
    let slow = json!({"template": {"metadata": {"annotations": {"kube-sim.io/start-delay": "2s"}}}});
    create(&env, &daemon_set("resume", &slow)).await;
    runs_on(&env, "resume", &NODES, None).await;
    seen_available(&env, "resume", 3).await;
    kubectl_ok(&env.kubeconfig, &["-n", &env.ns, "set", "image", "ds/resume", &format!("app={}", image("2"))]).await;
    let new_hash = current_hash(&env, "resume").await;
    rollout_started(&env, "resume", &new_hash).await;
    env.daemon.kill().await.expect("kcm-rs killed");
    env.daemon = env.spawn();
    rolled_out(&env, "resume").await;
    runs_on(&env, "resume", &NODES, Some(&new_hash)).await;
    checker.assert_clean();
}

/// Ten nodes, every third pod create refused, and mid-rollout dropped
/// watches, a compacted history and a restarted kcm-rs: every node ends
/// with one pod of the new template, the refusals are `FailedCreate`
/// events, and no node ever holds two pods nor more than `maxUnavailable`
/// nodes lack one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failing_creates_and_a_disturbed_kcm_rs_mid_rollout_on_ten_nodes() {
    let config = SimConfig { nodes: 10, ..SimConfig::default() };
    let mut env = start_with(config, &[], |sim| {
        sim.controls().set_faults(failing_pod_creates(3)).expect("faults set");
    })
    .await;
    let mut nodes: Vec<String> = (1..=10).map(|i| format!("node-{i}")).collect();
    nodes.sort();
    let nodes: Vec<&str> = nodes.iter().map(String::as_str).collect();
    let bounds = Bounds { max_surge: 0, max_unavailable: 2 };
    let checker = DaemonChecker::start(&env, &env.ns, "chaos", &nodes, bounds).await;
    let strategy = json!({"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 2}}});
    create(&env, &daemon_set("chaos", &strategy)).await;
    runs_on(&env, "chaos", &nodes, None).await;
    seen_available(&env, "chaos", 10).await;
    kubectl_ok(&env.kubeconfig, &["-n", &env.ns, "set", "image", "ds/chaos", &format!("app={}", image("2"))]).await;
    let new_hash = current_hash(&env, "chaos").await;
    rollout_started(&env, "chaos", &new_hash).await;
    disturb(&mut env).await;
    rolled_out(&env, "chaos").await;
    runs_on(&env, "chaos", &nodes, Some(&new_hash)).await;
    let refused = events(&env, &env.ns, "chaos", "FailedCreate").await;
    assert!(!refused.is_empty(), "the refused creates are FailedCreate events");
    checker.assert_clean();
}
