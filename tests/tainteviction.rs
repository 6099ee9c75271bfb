//! The taint-eviction-controller end to end: the real `kcm-rs` binary
//! against kube-sim and against the testbed, driven with kubectl as a user
//! would (`kubectl create`, `kubectl taint nodes`). Pods on a node tainted
//! `NoExecute` are deleted at once, when their `tolerationSeconds` end, or
//! never; the `DisruptionTarget` condition is on the pod before it is
//! deleted; removing the taint cancels a pending deletion; a ReplicaSet's
//! evicted pods are replaced on other nodes. The testbed's nodes are every
//! test's: a taint a test puts on one is taken off when it ends
//! ([`Taint`]). Every test waits on conditions and asserts on order, never
//! on timings.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use futures::TryStreamExt;
use k8s_openapi::api::core::v1::{Event, Pod};
use kube::api::{Api, ListParams};
use kube::runtime::watcher;
use kube_sim::testing::{kubectl_ok, kubectl_ok_with_stdin, wait_for};
use tokio::process::Command;

use crate::common::{Cluster, Env, PATIENCE, on_both, start};

// === utils ===

/// `kubectl create` of a pod bound to `node`, tolerating the taint
/// `dedicated` for `seconds` (`Some(None)`: for good; `None`: no such
/// toleration, only the API server's defaults).
async fn create_pod(env: &Env, name: &str, node: &str, toleration: Option<Option<u32>>) {
    let tolerations = match toleration {
        None => String::new(),
        Some(seconds) => {
            let seconds = seconds.map(|s| format!("\n    tolerationSeconds: {s}")).unwrap_or_default();
            format!("\n  tolerations:\n  - key: dedicated\n    operator: Exists\n    effect: NoExecute{seconds}")
        }
    };
    let manifest = format!(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n  namespace: {}\nspec:\n  nodeName: {node}\n  \
         containers:\n  - name: app\n    image: nginx{tolerations}\n",
        env.ns
    );
    kubectl_ok_with_stdin(&env.kubeconfig, &["create", "-f", "-"], &manifest).await;
}

/// Waits until every pod named is Running.
async fn running(env: &Env, names: &[&str]) {
    let api: Api<Pod> = Api::namespaced(env.client.clone(), &env.ns);
    wait_for(&env.cluster, PATIENCE, &format!("pods {names:?} Running"), || async {
        for name in names {
            let pod = api.get_opt(name).await.expect("get pod");
            let phase = pod.as_ref().and_then(|p| p.status.as_ref()?.phase.clone());
            if phase.as_deref() != Some("Running") {
                return Err(format!("{name}: {phase:?}"));
            }
        }
        Ok(())
    })
    .await;
}

/// Every state of every pod of the test's namespace a watch sees, in order.
struct Recorder {
    seen: Arc<Mutex<Vec<Pod>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Recorder {
    fn start(env: &Env) -> Self {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let api: Api<Pod> = Api::namespaced(env.client.clone(), &env.ns);
        let stream = watcher(api, watcher::Config::default());
        let out = seen.clone();
        let task = tokio::spawn(async move {
            futures::pin_mut!(stream);
            while let Ok(Some(event)) = stream.try_next().await {
                if let watcher::Event::Apply(p) | watcher::Event::InitApply(p) | watcher::Event::Delete(p) = event {
                    out.lock().expect("lock").push(p);
                }
            }
        });
        Recorder { seen, task }
    }

    /// The states of pod `name` seen so far.
    fn states(&self, name: &str) -> Vec<Pod> {
        let seen = self.seen.lock().expect("lock");
        seen.iter().filter(|p| p.metadata.name.as_deref() == Some(name)).cloned().collect()
    }

    /// Index in the whole record of the first state of `name` being deleted.
    fn first_deleting(&self, name: &str) -> Option<usize> {
        let seen = self.seen.lock().expect("lock");
        seen.iter().position(|p| p.metadata.name.as_deref() == Some(name) && p.metadata.deletion_timestamp.is_some())
    }

    /// Waits until the watch has shown pod `name` being deleted.
    async fn deleting(&self, env: &Env, name: &str) {
        wait_for(&env.cluster, PATIENCE, &format!("the watch to show pod {name} deleted"), || async {
            match self.first_deleting(name) {
                Some(_) => Ok(()),
                None => Err(format!("{} states of {name}", self.states(name).len())),
            }
        })
        .await;
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A `NoExecute` taint put on a node with `kubectl taint`, taken off when
/// this drops (at the test's end, or when it fails) unless the test took it
/// off already: on the testbed the nodes are every test's. kube-sim's go
/// with the test.
struct Taint {
    kubeconfig: Option<PathBuf>,
    node: String,
    key: String,
}

impl Taint {
    /// `kubectl taint nodes <node> <key>[=<value>]:NoExecute`.
    async fn put(env: &Env, node: &str, key: &str, value: Option<&str>) -> Taint {
        let kubeconfig = matches!(env.cluster, Cluster::Testbed { .. }).then(|| env.kubeconfig.clone());
        let taint = Taint { kubeconfig, node: node.to_owned(), key: key.to_owned() };
        let spec = value.map_or_else(|| format!("{key}:NoExecute"), |v| format!("{key}={v}:NoExecute"));
        kubectl_ok(&env.kubeconfig, &["taint", "nodes", node, &spec]).await;
        taint
    }
}

impl Drop for Taint {
    fn drop(&mut self) {
        let Some(kubeconfig) = &self.kubeconfig else { return };
        let removal = format!("{}:NoExecute-", self.key);
        let out = std::process::Command::new("kubectl")
            .args(["taint", "nodes", &self.node, &removal])
            .env("KUBECONFIG", kubeconfig)
            .output();
        // kubectl fails a removal of a taint not there: already taken off.
        let taken_off =
            out.as_ref().is_ok_and(|o| o.status.success() || String::from_utf8_lossy(&o.stderr).contains("not found"));
        if !taken_off && !std::thread::panicking() {
            panic!("kubectl did not take the test's taint {removal} off the shared node {}: {out:?}", self.node);
        }
    }
}

/// Whether the pod carries `DisruptionTarget=True` with the taint manager's
/// reason and message.
fn disrupted(pod: &Pod) -> bool {
    let conditions = pod.status.as_ref().and_then(|s| s.conditions.as_ref());
    conditions.into_iter().flatten().any(|c| {
        c.type_ == "DisruptionTarget"
            && c.status == "True"
            && c.reason.as_deref() == Some("DeletionByTaintManager")
            && c.message.as_deref() == Some("Taint manager: deleting due to NoExecute taint")
    })
}

/// Waits until pod `name` is being deleted (or gone).
async fn deleting(env: &Env, name: &str) {
    let api: Api<Pod> = Api::namespaced(env.client.clone(), &env.ns);
    wait_for(&env.cluster, PATIENCE, &format!("pod {name} deleted"), || async {
        match api.get_opt(name).await.expect("get pod") {
            None => Ok(()),
            Some(p) if p.metadata.deletion_timestamp.is_some() => Ok(()),
            Some(p) => Err(format!("{:?}", p.status.and_then(|s| s.conditions))),
        }
    })
    .await;
}

/// Asserts that the recorder saw pod `name` carry the condition before it
/// was deleted: a state with the condition and no deletionTimestamp, and
/// the condition on every state being deleted.
fn condition_before_deletion(recorder: &Recorder, name: &str) {
    let states = recorder.states(name);
    let first_deleting = states.iter().position(|p| p.metadata.deletion_timestamp.is_some());
    let Some(first_deleting) = first_deleting else { panic!("{name} was never seen being deleted") };
    assert!(
        states[..first_deleting].iter().any(disrupted),
        "{name}: no state with DisruptionTarget before the deletion"
    );
    assert!(states[first_deleting..].iter().all(disrupted), "{name}: DisruptionTarget missing once deleting");
}

/// The messages of the `TaintManagerEviction` events about pod `name`,
/// checking they come from the taint-eviction-controller.
async fn eviction_events(env: &Env, name: &str) -> Vec<String> {
    let api: Api<Event> = Api::namespaced(env.client.clone(), &env.ns);
    let list = api.list(&ListParams::default()).await.expect("events listed");
    let ours: Vec<Event> = list
        .items
        .into_iter()
        .filter(|e| {
            e.involved_object.name.as_deref() == Some(name) && e.reason.as_deref() == Some("TaintManagerEviction")
        })
        .collect();
    for e in &ours {
        let component = e.source.as_ref().and_then(|s| s.component.as_deref());
        assert_eq!(component, Some("taint-eviction-controller"), "{e:?}");
        assert_eq!(e.type_.as_deref(), Some("Normal"), "{e:?}");
    }
    ours.into_iter().filter_map(|e| e.message).collect()
}

/// Waits for a `TaintManagerEviction` event about `name` saying `message`.
async fn event(env: &Env, name: &str, message: &str) {
    wait_for(&env.cluster, PATIENCE, &format!("event {message:?}"), || async {
        let seen = eviction_events(env, name).await;
        if seen.iter().any(|m| m == message) { Ok(()) } else { Err(format!("{seen:?}")) }
    })
    .await;
}

// === tests ===

on_both!(
    noexecute_taint_deletes_at_once_after_toleration_seconds_or_never,
    removing_the_taint_before_expiry_cancels_the_eviction,
    a_replica_sets_evicted_pods_are_replaced_on_other_nodes,
);

/// node-1 tainted `dedicated=db:NoExecute`: its pod without a toleration is
/// deleted at once, the one tolerating it for 5 s once they end (after the
/// first), each marked `DisruptionTarget` before and announced by a
/// `TaintManagerEviction` event; the pod tolerating it for good, and the
/// one on node-2, are untouched. `/metrics` counts the two deletions.
async fn noexecute_taint_deletes_at_once_after_toleration_seconds_or_never() {
    let env = start().await;
    create_pod(&env, "untolerating", "node-1", None).await;
    create_pod(&env, "five-seconds", "node-1", Some(Some(5))).await;
    create_pod(&env, "forever", "node-1", Some(None)).await;
    create_pod(&env, "elsewhere", "node-2", None).await;
    running(&env, &["untolerating", "five-seconds", "forever", "elsewhere"]).await;
    // The API server's DefaultTolerationSeconds admission gave each pod the
    // 300 s not-ready and unreachable tolerations, which do not cover
    // `dedicated`.
    let api: Api<Pod> = Api::namespaced(env.client.clone(), &env.ns);
    let untolerating = api.get("untolerating").await.expect("pod");
    let tolerations = untolerating.spec.and_then(|s| s.tolerations).unwrap_or_default();
    for key in ["node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"] {
        let default = tolerations.iter().any(|t| {
            t.key.as_deref() == Some(key)
                && t.operator.as_deref() == Some("Exists")
                && t.effect.as_deref() == Some("NoExecute")
                && t.toleration_seconds == Some(300)
        });
        assert!(default, "no default toleration for {key}: {tolerations:?}");
    }
    let recorder = Recorder::start(&env);

    let _taint = Taint::put(&env, "node-1", "dedicated", Some("db")).await;

    recorder.deleting(&env, "untolerating").await;
    recorder.deleting(&env, "five-seconds").await;
    event(&env, "five-seconds", &format!("Marking for deletion Pod {}/five-seconds", env.ns)).await;

    // The untolerating pod went first; each carried the condition before.
    let (first, second) = (recorder.first_deleting("untolerating"), recorder.first_deleting("five-seconds"));
    assert!(first.is_some() && first < second, "untolerating deleted at {first:?}, five-seconds at {second:?}");
    condition_before_deletion(&recorder, "untolerating");
    condition_before_deletion(&recorder, "five-seconds");
    assert_eq!(
        eviction_events(&env, "untolerating").await,
        [format!("Marking for deletion Pod {}/untolerating", env.ns)]
    );

    // Upstream's metrics: two deletions, two latencies observed, the
    // upstream queue names.
    wait_for(&env.cluster, PATIENCE, "taint_eviction_controller_* metrics", || async {
        let out = Command::new("curl")
            .args(["-sk", &format!("https://127.0.0.1:{}/metrics", env.port)])
            .output()
            .await
            .expect("curl runs");
        let body = String::from_utf8_lossy(&out.stdout);
        let lines = [
            "taint_eviction_controller_pod_deletions_total 2",
            "taint_eviction_controller_pod_deletion_duration_seconds_count 2",
            "workqueue_adds_total{name=\"noexec_taint_node\"}",
            "workqueue_adds_total{name=\"noexec_taint_pod\"}",
        ];
        // Exact lines, or for the queues any value.
        let present = |l: &str| body.lines().any(|b| b == l || (l.ends_with('}') && b.starts_with(l)));
        let missing: Vec<&str> = lines.into_iter().filter(|l| !present(l)).collect();
        if missing.is_empty() { Ok(()) } else { Err(format!("missing {missing:?}")) }
    })
    .await;

    // Tolerating for good, or on an untainted node: untouched.
    for name in ["forever", "elsewhere"] {
        let pod = api.get(name).await.expect("still there");
        assert!(pod.metadata.deletion_timestamp.is_none(), "{name} is being deleted");
        assert!(!disrupted(&pod), "{name} got DisruptionTarget");
        assert!(eviction_events(&env, name).await.is_empty(), "{name} has eviction events");
    }
}

/// A pod tolerating node-1's taint for 10 s stays when the taint is taken
/// off before then: a `Cancelling deletion` event, no `DisruptionTarget`,
/// while its twin on node-2, tainted later, is deleted once its 10 s end.
async fn removing_the_taint_before_expiry_cancels_the_eviction() {
    let env = start().await;
    // `canary` shows when the controller has seen node-1's taint; `clock`,
    // tainted later with the same toleration, shows when `patient`'s time
    // would have ended.
    create_pod(&env, "canary", "node-1", None).await;
    create_pod(&env, "patient", "node-1", Some(Some(10))).await;
    create_pod(&env, "clock", "node-2", Some(Some(10))).await;
    running(&env, &["canary", "patient", "clock"]).await;

    let _first = Taint::put(&env, "node-1", "dedicated", None).await;
    deleting(&env, "canary").await;
    let _second = Taint::put(&env, "node-2", "dedicated", None).await;
    kubectl_ok(&env.kubeconfig, &["taint", "nodes", "node-1", "dedicated:NoExecute-"]).await;

    let cancelled = format!("Cancelling deletion of Pod {}/patient", env.ns);
    event(&env, "patient", &cancelled).await;
    deleting(&env, "clock").await;

    let api: Api<Pod> = Api::namespaced(env.client.clone(), &env.ns);
    let patient = api.get("patient").await.expect("patient stays");
    assert!(patient.metadata.deletion_timestamp.is_none(), "patient is being deleted");
    assert!(!disrupted(&patient), "patient got DisruptionTarget");
    assert_eq!(eviction_events(&env, "patient").await, [cancelled]);
}

/// The node of a four-pod ReplicaSet's first pod tainted
/// `maintenance=now:NoExecute`: its pods there are evicted (an event each)
/// and replaced, four pods Running on the other nodes.
async fn a_replica_sets_evicted_pods_are_replaced_on_other_nodes() {
    let env = start().await;
    let manifest = format!(
        "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata:\n  name: web\n  namespace: {}\nspec:\n  replicas: 4\n  \
         selector:\n    matchLabels:\n      app: web\n  template:\n    metadata:\n      labels:\n        app: web\n    \
         spec:\n      containers:\n      - name: web\n        image: nginx\n",
        env.ns
    );
    kubectl_ok_with_stdin(&env.kubeconfig, &["create", "-f", "-"], &manifest).await;
    let api: Api<Pod> = Api::namespaced(env.client.clone(), &env.ns);
    let web = ListParams::default().labels("app=web");
    let node_of = |p: &Pod| p.spec.as_ref().and_then(|s| s.node_name.clone()).unwrap_or_default();
    let is_running = |p: &Pod| p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running");
    wait_for(&env.cluster, PATIENCE, "4 web pods Running", || async {
        let pods = api.list(&web).await.expect("pods listed").items;
        let up = pods.iter().filter(|p| is_running(p)).count();
        if up == 4 { Ok(()) } else { Err(format!("{up} Running")) }
    })
    .await;
    let before = api.list(&web).await.expect("pods listed").items;
    let victim = node_of(&before[0]);
    let evicted: Vec<String> =
        before.iter().filter(|p| node_of(p) == victim).filter_map(|p| p.metadata.name.clone()).collect();

    let _taint = Taint::put(&env, &victim, "maintenance", Some("now")).await;

    wait_for(&env.cluster, PATIENCE, "4 active web pods Running, none on the tainted node", || async {
        let pods = api.list(&web).await.expect("pods listed").items;
        let active: Vec<&Pod> = pods.iter().filter(|p| p.metadata.deletion_timestamp.is_none()).collect();
        let on_victim = active.iter().filter(|p| node_of(p) == victim).count();
        let up = active.iter().filter(|p| is_running(p) && node_of(p) != victim).count();
        let evicted_left = active.iter().any(|p| evicted.contains(p.metadata.name.as_ref().expect("named")));
        if up == 4 && active.len() == 4 && !evicted_left {
            Ok(())
        } else {
            Err(format!("{} active, {up} Running elsewhere, {on_victim} on {victim}", active.len()))
        }
    })
    .await;
    for name in &evicted {
        assert_eq!(eviction_events(&env, name).await, [format!("Marking for deletion Pod {}/{name}", env.ns)]);
    }
}
