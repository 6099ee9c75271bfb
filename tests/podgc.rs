//! The pod garbage collector end to end: the real `kcm-rs` binary (only
//! `pod-garbage-collector-controller` selected) against kube-sim (and,
//! where no node control is needed, against the testbed), set up with
//! kubectl and kube-sim's node controls before the daemon starts, so
//! that its first pass (at once, once its caches sync) finds the work:
//! terminated pods beyond a small `--terminated-pod-gc-threshold` (the
//! oldest go, the newest stay), the pods of a node removed from the
//! cluster (marked `Failed` with `DisruptionTarget`, then deleted, after
//! upstream's 40 s quarantine, which no flag shortens), an unscheduled
//! terminating pod, and a terminating pod of a stopped node tainted
//! out-of-service; each counted on `/metrics` with upstream's reason.
//! Every test waits on conditions, never on timings.

use k8s_openapi::api::core::v1::Pod;
use kube::Api;
use kube_sim::testing::{kubectl_ok, kubectl_ok_with_stdin, wait_for};

use crate::common::{Env, PATIENCE, on_both, start_provisioned};

// === utils ===

/// The controller alone, as upstream names it.
const CONTROLLERS: &str = "--controllers=pod-garbage-collector-controller";

/// The cluster with the test's namespace provisioned (its `default`
/// ServiceAccount and `kube-root-ca.crt`, as the controller manager that
/// ran before would have made them), and no kcm-rs running: the set-up
/// comes first, then [`run`] starts it.
async fn stopped() -> Env {
    let mut env = start_provisioned(&[CONTROLLERS]).await;
    env.daemon.kill().await.expect("kcm-rs stopped");
    env
}

/// Starts kcm-rs, set up done, with these flags, serving on the test's port.
fn run(env: &mut Env, args: &[&str]) {
    env.daemon = env.spawn_on(env.port, args);
}

/// A pod with this extra YAML under `metadata` and `spec`.
fn pod_yaml(name: &str, metadata: &str, spec: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n{metadata}spec:\n{spec}  containers:\n  - name: app\n    \
         image: busybox\n"
    )
}

/// `kubectl apply`s `yaml` in the test's namespace.
async fn apply(env: &Env, yaml: &str) {
    kubectl_ok_with_stdin(&env.kubeconfig, &["apply", "-n", &env.ns, "-f", "-"], yaml).await;
}

fn pods(env: &Env) -> Api<Pod> {
    Api::namespaced(env.client.clone(), &env.ns)
}

/// The pods of the test's namespace by name, sorted.
async fn pod_names(env: &Env) -> Result<Vec<String>, String> {
    let list = pods(env).list(&Default::default()).await.map_err(|e| e.to_string())?;
    let mut names: Vec<String> = list.items.into_iter().filter_map(|p| p.metadata.name).collect();
    names.sort();
    Ok(names)
}

fn phase(pod: &Pod) -> Option<&str> {
    pod.status.as_ref()?.phase.as_deref()
}

/// Waits until every pod named has this phase.
async fn phases(env: &Env, names: &[&str], want: &str) {
    wait_for(&env.cluster, PATIENCE, &format!("{names:?} {want}"), || async {
        for name in names {
            let pod = pods(env).get(name).await.map_err(|e| e.to_string())?;
            if phase(&pod) != Some(want) {
                return Err(format!("{name} is {:?}", phase(&pod)));
            }
        }
        Ok(())
    })
    .await;
}

/// Waits until `/metrics` shows `value` for the force deletions of `reason`
/// in the test's namespace, with no error.
async fn counted(env: &Env, reason: &str, value: u64) {
    let labels = format!("namespace=\"{}\",reason=\"{reason}\"", env.ns);
    wait_for(&env.cluster, PATIENCE, &format!("{value} force deletions counted as {reason}"), || async {
        let (_, body) = env.scrape("/metrics").await;
        let series = |metric: &str| {
            body.lines()
                .find(|l| l.starts_with(&format!("{metric}{{")) && l.contains(&labels))
                .and_then(|l| l.rsplit_once(' '))
                .and_then(|(_, v)| v.parse::<u64>().ok())
        };
        let total = series("pod_gc_collector_force_delete_pods_total");
        let errors = series("pod_gc_collector_force_delete_pod_errors_total");
        if total == Some(value) && errors.is_none() {
            Ok(())
        } else {
            Err(format!("total {total:?}, errors {errors:?}"))
        }
    })
    .await;
}

/// Removes the test's finalizer, letting a deleted pod go.
async fn release(env: &Env, name: &str) {
    kubectl_ok(
        &env.kubeconfig,
        &[
            "patch",
            "pod",
            name,
            "-n",
            &env.ns,
            "--type=json",
            "-p",
            r#"[{"op":"remove","path":"/metadata/finalizers"}]"#,
        ],
    )
    .await;
}

const HOLD: &str = "  finalizers:\n  - example.com/hold\n";

// === tests ===

on_both!(terminated_pods_beyond_the_threshold_go_oldest_first, an_unscheduled_terminating_pod_is_marked_failed);

/// Five pods fail, one runs; with a threshold of 2 the three oldest
/// terminated pods are deleted, the two newest and the running one stay.
/// (On the shared testbed the threshold counts the other tests' terminated
/// pods too: older, they go first.)
async fn terminated_pods_beyond_the_threshold_go_oldest_first() {
    let mut env = stopped().await;
    let fails = "  annotations:\n    kube-sim.io/fail-after: 0s\n";
    let done = ["done-1", "done-2", "done-3", "done-4", "done-5"];
    // Created in name order: equal creation seconds fall back on the name.
    for name in done {
        apply(&env, &pod_yaml(name, fails, "")).await;
    }
    apply(&env, &pod_yaml("runner", "", "")).await;
    phases(&env, &done, "Failed").await;
    phases(&env, &["runner"], "Running").await;
    run(&mut env, &[CONTROLLERS, "--terminated-pod-gc-threshold=2"]);
    wait_for(&env.cluster, PATIENCE, "the three oldest terminated pods deleted", || async {
        let names = pod_names(&env).await?;
        if names == ["done-4", "done-5", "runner"] { Ok(()) } else { Err(format!("pods {names:?}")) }
    })
    .await;
    counted(&env, "terminated", 3).await;
}

/// A node leaves the cluster with its pods bound to it: after the
/// quarantine they are marked `Failed` with `DisruptionTarget` (seen on the
/// one a finalizer keeps) and deleted; a pod of another node stays.
/// kube-sim only: it removes a node of its own with kube-sim's controls.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pods_of_a_removed_node_are_marked_failed_and_deleted() {
    let mut env = stopped().await;
    let on = |node: &str| format!("  nodeName: {node}\n");
    apply(&env, &pod_yaml("lost", "", &on("node-3"))).await;
    apply(&env, &pod_yaml("held", HOLD, &on("node-3"))).await;
    apply(&env, &pod_yaml("safe", "", &on("node-1"))).await;
    phases(&env, &["lost", "held", "safe"], "Running").await;
    env.cluster.controls().remove_node("node-3").expect("node-3 leaves");
    run(&mut env, &[CONTROLLERS]);
    let held = wait_for(&env.cluster, PATIENCE, "the held orphan marked Failed and deleted", || async {
        let pod = pods(&env).get("held").await.map_err(|e| e.to_string())?;
        if phase(&pod) == Some("Failed") && pod.metadata.deletion_timestamp.is_some() {
            Ok(pod)
        } else {
            Err(format!("phase {:?}, deletion {:?}", phase(&pod), pod.metadata.deletion_timestamp))
        }
    })
    .await;
    let conditions = held.status.and_then(|s| s.conditions).unwrap_or_default();
    let target = conditions.iter().find(|c| c.type_ == "DisruptionTarget").expect("DisruptionTarget");
    assert_eq!(
        (target.status.as_str(), target.reason.as_deref(), target.message.as_deref()),
        ("True", Some("DeletionByPodGC"), Some("PodGC: node no longer exists"))
    );
    assert_eq!(held.metadata.deletion_grace_period_seconds, Some(0), "force-deleted");
    release(&env, "held").await;
    wait_for(&env.cluster, PATIENCE, "both orphans gone, the other pod kept", || async {
        let names = pod_names(&env).await?;
        if names == ["safe"] { Ok(()) } else { Err(format!("pods {names:?}")) }
    })
    .await;
    counted(&env, "orphaned", 2).await;
}

/// A pod that fits no node, kept by a finalizer and deleted: the collector
/// marks it `Failed` and force-deletes it; without the finalizer it goes.
async fn an_unscheduled_terminating_pod_is_marked_failed() {
    let mut env = stopped().await;
    let nowhere = "  nodeSelector:\n    example.com/pool: none\n";
    apply(&env, &pod_yaml("stuck", HOLD, nowhere)).await;
    phases(&env, &["stuck"], "Pending").await;
    kubectl_ok(&env.kubeconfig, &["delete", "pod", "stuck", "-n", &env.ns, "--wait=false"]).await;
    run(&mut env, &[CONTROLLERS]);
    phases(&env, &["stuck"], "Failed").await;
    counted(&env, "unscheduled", 1).await;
    release(&env, "stuck").await;
    wait_for(&env.cluster, PATIENCE, "the pod gone", || async {
        let names = pod_names(&env).await?;
        if names.is_empty() { Ok(()) } else { Err(format!("pods {names:?}")) }
    })
    .await;
}

/// A node shut down (its kubelet stopped, Ready False) and tainted
/// `node.kubernetes.io/out-of-service`: its terminating pod, which no
/// kubelet will finish, is marked `Failed` and force-deleted; a
/// terminating pod of a stopped node without the taint stays. kube-sim
/// only: it stops the nodes' kubelets with kube-sim's controls.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_terminating_pod_of_an_out_of_service_node_is_force_deleted() {
    let mut env = stopped().await;
    let on = |node: &str| format!("  nodeName: {node}\n");
    apply(&env, &pod_yaml("down", "", &on("node-2"))).await;
    apply(&env, &pod_yaml("waiting", "", &on("node-1"))).await;
    phases(&env, &["down", "waiting"], "Running").await;
    let not_ready = r#"{"status":{"conditions":[{"type":"Ready","status":"False","reason":"KubeletNotReady"}]}}"#;
    for node in ["node-1", "node-2"] {
        env.cluster.controls().stop_node(node).expect("stopped");
        kubectl_ok(&env.kubeconfig, &["patch", "node", node, "--subresource=status", "-p", not_ready]).await;
    }
    let taint = "node.kubernetes.io/out-of-service=nodeshutdown:NoExecute";
    kubectl_ok(&env.kubeconfig, &["taint", "node", "node-2", taint]).await;
    for name in ["down", "waiting"] {
        kubectl_ok(&env.kubeconfig, &["delete", "pod", name, "-n", &env.ns, "--wait=false"]).await;
    }
    run(&mut env, &[CONTROLLERS]);
    counted(&env, "out-of-service", 1).await;
    let names = pod_names(&env).await.expect("pods");
    assert_eq!(names, ["waiting"], "only the out-of-service node's pod is force-deleted");
    let waiting = pods(&env).get("waiting").await.expect("waiting");
    assert!(waiting.metadata.deletion_timestamp.is_some(), "still terminating");
}
