//! The StatefulSet controller end to end, ported from upstream's
//! `test/e2e/apps/statefulset.go`: the real `kcm-rs` binary against
//! kube-sim and the testbed's kube-apiserver, driven with kubectl. Every
//! test watches the set's pods and checks, at every event, that no two live
//! pods carry one identity and (`OrderedReady`) that no ordinal is created
//! before every lower one is Running and Ready. A pod is made unhealthy as
//! a failing readiness probe would make it: its Ready condition set False
//! through `pods/status`.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use futures::TryStreamExt;
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};
use kube::api::{Api, ListParams, Patch, PatchParams};
use kube::runtime::watcher;
use kube_sim::faults::{FaultRule, FaultSpec};
use kube_sim::testing::{kubectl_ok, kubectl_ok_with_stdin, wait_for};
use serde_json::{Value, json};

use crate::common::provisioner::Provisioner;
use crate::common::{Env, PATIENCE, disturb, on_both, start};

// === utils ===

/// The StatefulSet `name` (pods labelled `app=<name>`) as a user writes
/// it, with `spec` merged over two replicas of nginx.
fn manifest(name: &str, spec: Value) -> String {
    let mut set = json!({
        "apiVersion": "apps/v1", "kind": "StatefulSet",
        "metadata": {"name": name},
        "spec": {
            "replicas": 2, "serviceName": name,
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}}
        }
    });
    if let (Some(base), Some(extra)) = (set["spec"].as_object_mut(), spec.as_object()) {
        base.extend(extra.clone());
    }
    set.to_string()
}

async fn apply(env: &Env, name: &str, spec: Value) {
    kubectl_ok_with_stdin(&env.kubeconfig, &["-n", &env.ns, "apply", "-f", "-"], &manifest(name, spec)).await;
}

fn running_and_ready(pod: &Pod) -> bool {
    let status = pod.status.clone().unwrap_or_default();
    status.phase.as_deref() == Some("Running")
        && status.conditions.unwrap_or_default().iter().any(|c| c.type_ == "Ready" && c.status == "True")
}

/// Watches the pods of set `app`, records every broken invariant and the
/// order in which pods began to be deleted.
struct Checker {
    violations: Arc<Mutex<Vec<String>>>,
    deletions: Arc<Mutex<Vec<String>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Checker {
    fn start(env: &Env, app: &str, ordered: bool) -> Self {
        let violations = Arc::new(Mutex::new(Vec::new()));
        let api: Api<Pod> = Api::namespaced(env.client.clone(), &env.ns);
        let stream = watcher(api, watcher::Config::default().labels(&format!("app={app}")));
        let deletions = Arc::new(Mutex::new(Vec::new()));
        let (seen, deleted, prefix) = (violations.clone(), deletions.clone(), format!("{app}-"));
        let task = tokio::spawn(async move {
            let mut pods: BTreeMap<String, Pod> = BTreeMap::new();
            futures::pin_mut!(stream);
            while let Ok(Some(event)) = stream.try_next().await {
                let pod = match event {
                    watcher::Event::InitApply(p) | watcher::Event::Apply(p) => p,
                    watcher::Event::Delete(p) => {
                        let name = p.metadata.name.clone().unwrap_or_default();
                        if pods.remove(&name).is_some_and(|old| old.metadata.deletion_timestamp.is_none()) {
                            deleted.lock().expect("lock").push(name);
                        }
                        continue;
                    }
                    watcher::Event::Init | watcher::Event::InitDone => continue,
                };
                let name = pod.metadata.name.clone().unwrap_or_default();
                let fresh = pods.get(&name).is_none_or(|old| old.metadata.uid != pod.metadata.uid);
                let was_live = !fresh && pods.get(&name).is_some_and(|old| old.metadata.deletion_timestamp.is_none());
                if pod.metadata.deletion_timestamp.is_some() && (fresh || was_live) {
                    deleted.lock().expect("lock").push(name.clone());
                }
                let ordinal: Option<u32> = name.strip_prefix(&prefix).and_then(|o| o.parse().ok());
                if let (true, true, Some(ordinal)) = (ordered, fresh, ordinal) {
                    let unready: Vec<String> = (0..ordinal)
                        .map(|o| format!("{prefix}{o}"))
                        .filter(|n| {
                            !pods
                                .get(n)
                                .is_some_and(|p| p.metadata.deletion_timestamp.is_none() && running_and_ready(p))
                        })
                        .collect();
                    if !unready.is_empty() {
                        seen.lock().expect("lock").push(format!("{name} created before {unready:?} were Ready"));
                    }
                }
                pods.insert(name, pod);
                let mut identities: BTreeMap<String, usize> = BTreeMap::new();
                for p in pods.values().filter(|p| p.metadata.deletion_timestamp.is_none()) {
                    let label = p.metadata.labels.clone().unwrap_or_default();
                    let identity = label.get("statefulset.kubernetes.io/pod-name").cloned().unwrap_or_default();
                    *identities.entry(identity).or_default() += 1;
                }
                if let Some((id, n)) = identities.iter().find(|(id, n)| !id.is_empty() && **n > 1) {
                    seen.lock().expect("lock").push(format!("{n} live pods carry the identity {id}"));
                }
            }
        });
        Self { violations, deletions, task }
    }

    /// Stops watching, fails on any broken invariant, and gives the pods
    /// in the order their deletion began.
    fn finish(self) -> Vec<String> {
        self.task.abort();
        let violations = self.violations.lock().expect("lock").clone();
        assert!(violations.is_empty(), "invariants broken: {violations:#?}");
        self.deletions.lock().expect("lock").clone()
    }
}

/// The live pods of set `app`, by name.
async fn pods(env: &Env, app: &str) -> BTreeMap<String, Pod> {
    let api: Api<Pod> = Api::namespaced(env.client.clone(), &env.ns);
    let list = api.list(&ListParams::default().labels(&format!("app={app}"))).await.expect("pods listed");
    let live = list.items.into_iter().filter(|p| p.metadata.deletion_timestamp.is_none());
    live.map(|p| (p.metadata.name.clone().unwrap_or_default(), p)).collect()
}

/// Waits until exactly `names` are the set's live pods, all Running and Ready.
async fn wait_ready(env: &Env, app: &str, names: &[&str]) {
    wait_for(&env.cluster, PATIENCE, &format!("{app}'s pods to be {names:?}, Ready"), || async move {
        let pods = pods(env, app).await;
        let seen: Vec<(String, bool)> = pods.iter().map(|(n, p)| (n.clone(), running_and_ready(p))).collect();
        let want: Vec<(String, bool)> = names.iter().map(|n| ((*n).to_owned(), true)).collect();
        if seen == want { Ok(()) } else { Err(format!("{seen:?}")) }
    })
    .await;
}

/// Sets pod `name`'s readiness as its readiness probe would: its
/// containers' `ready` and its Ready and ContainersReady conditions (kube-sim's
/// kubelet, as a real one, derives the conditions from the containers).
async fn set_ready(env: &Env, name: &str, ready: bool) {
    let api: Api<Pod> = Api::namespaced(env.client.clone(), &env.ns);
    let status = api.get_status(name).await.expect("pod read").status.unwrap_or_default();
    let mut conditions = status.conditions.unwrap_or_default();
    for c in conditions.iter_mut().filter(|c| c.type_ == "Ready" || c.type_ == "ContainersReady") {
        c.status = if ready { "True" } else { "False" }.into();
    }
    let mut containers = status.container_statuses.unwrap_or_default();
    for c in &mut containers {
        c.ready = ready;
    }
    let patch = json!({"status": {"conditions": conditions, "containerStatuses": containers}});
    api.patch_status(name, &PatchParams::default(), &Patch::Merge(patch)).await.expect("readiness written");
}

async fn set(env: &Env, name: &str) -> StatefulSet {
    Api::<StatefulSet>::namespaced(env.client.clone(), &env.ns).get(name).await.expect("StatefulSet read")
}

/// Waits until the set's status shows `ready` Ready replicas of `replicas`
/// for its generation, and gives it.
async fn wait_status(env: &Env, name: &str, replicas: i32, ready: i32) -> StatefulSet {
    wait_for(&env.cluster, PATIENCE, &format!("{name}'s status: {ready}/{replicas} Ready"), || async move {
        let set = set(env, name).await;
        let s = set.status.clone().unwrap_or_default();
        let ok = s.replicas == replicas
            && s.ready_replicas.unwrap_or(0) == ready
            && s.observed_generation == set.metadata.generation;
        if ok { Ok(set) } else { Err(format!("{s:?}")) }
    })
    .await
}

fn image(pod: &Pod) -> String {
    pod.spec.as_ref().and_then(|s| s.containers[0].image.clone()).unwrap_or_default()
}

/// Waits until the set's pods run `images`, in ordinal order, all Ready.
async fn wait_images(env: &Env, app: &str, images: &[&str]) {
    wait_for(&env.cluster, PATIENCE, &format!("{app}'s pods to run {images:?}"), || async move {
        let pods = pods(env, app).await;
        let seen: Vec<(String, bool)> = pods.values().map(|p| (image(p), running_and_ready(p))).collect();
        let want: Vec<(String, bool)> = images.iter().map(|i| ((*i).to_owned(), true)).collect();
        if seen == want { Ok(()) } else { Err(format!("{seen:?}")) }
    })
    .await;
}

// === tests ===

on_both!(
    ordered_scaling_halts_on_an_unhealthy_pod,
    burst_scaling_runs_to_completion_with_unhealthy_pods,
    rolling_update_and_rollback_through_kubectl_rollout,
    canary_and_phased_updates_follow_the_partition,
    a_deleted_or_failed_pod_is_recreated_with_its_identity,
    a_member_that_lost_its_identity_label_gets_it_back_in_place,
    the_scale_and_status_subresources_show_the_set,
    on_delete_replaces_only_deleted_pods,
    a_pod_is_available_after_min_ready_seconds,
    claims_follow_the_retention_policy,
    ordered_creation_waits_for_a_pods_storage,
);

/// Upstream "Scaling should happen in predictable order and halt if any
/// stateful pod is unhealthy".
async fn ordered_scaling_halts_on_an_unhealthy_pod() {
    let env = start().await;
    let checker = Checker::start(&env, "ss", true);
    apply(&env, "ss", json!({"replicas": 1})).await;
    wait_ready(&env, "ss", &["ss-0"]).await;

    // The controller has seen it unhealthy before the set is scaled.
    set_ready(&env, "ss-0", false).await;
    wait_status(&env, "ss", 1, 0).await;
    kubectl_ok(&env.kubeconfig, &["-n", &env.ns, "scale", "statefulset", "ss", "--replicas=3"]).await;
    wait_for(&env.cluster, PATIENCE, "the scale-up observed", || async {
        let g = set(&env, "ss").await.status.and_then(|s| s.observed_generation);
        if g == Some(2) { Ok(()) } else { Err(format!("observedGeneration {g:?}")) }
    })
    .await;
    assert_eq!(pods(&env, "ss").await.keys().collect::<Vec<_>>(), ["ss-0"], "no pod after an unhealthy one");

    set_ready(&env, "ss-0", true).await;
    wait_ready(&env, "ss", &["ss-0", "ss-1", "ss-2"]).await;
    wait_status(&env, "ss", 3, 3).await;

    // Every pod unhealthy, as upstream's BreakHTTPProbe makes them: the
    // highest is not the first unhealthy one, so none is deleted.
    for pod in ["ss-0", "ss-1", "ss-2"] {
        set_ready(&env, pod, false).await;
    }
    wait_status(&env, "ss", 3, 0).await;
    kubectl_ok(&env.kubeconfig, &["-n", &env.ns, "scale", "sts", "ss", "--replicas=0"]).await;
    wait_for(&env.cluster, PATIENCE, "the scale-down observed", || async {
        let g = set(&env, "ss").await.status.and_then(|s| s.observed_generation);
        if g == Some(3) { Ok(()) } else { Err(format!("observedGeneration {g:?}")) }
    })
    .await;
    assert_eq!(pods(&env, "ss").await.len(), 3, "no scale-down while a pod is unhealthy");

    for pod in ["ss-0", "ss-1", "ss-2"] {
        set_ready(&env, pod, true).await;
    }
    wait_ready(&env, "ss", &[]).await;
    wait_status(&env, "ss", 0, 0).await;
    assert_eq!(checker.finish(), ["ss-2", "ss-1", "ss-0"], "scaled down in reverse order");
}

/// Upstream "Burst scaling should run to completion even with unhealthy
/// pods": `Parallel` creates and deletes every pod at once.
async fn burst_scaling_runs_to_completion_with_unhealthy_pods() {
    let env = start().await;
    let checker = Checker::start(&env, "burst", false);
    apply(&env, "burst", json!({"replicas": 1, "podManagementPolicy": "Parallel"})).await;
    wait_ready(&env, "burst", &["burst-0"]).await;
    set_ready(&env, "burst-0", false).await;

    kubectl_ok(&env.kubeconfig, &["-n", &env.ns, "scale", "sts", "burst", "--replicas=3"]).await;
    wait_status(&env, "burst", 3, 2).await;
    kubectl_ok(&env.kubeconfig, &["-n", &env.ns, "scale", "sts", "burst", "--replicas=0"]).await;
    wait_ready(&env, "burst", &[]).await;
    wait_status(&env, "burst", 0, 0).await;
    checker.finish();
}

/// Upstream "should perform rolling updates and roll backs of template
/// modifications", with `kubectl rollout status|history|undo`.
async fn rolling_update_and_rollback_through_kubectl_rollout() {
    let env = start().await;
    let checker = Checker::start(&env, "roll", true);
    apply(&env, "roll", json!({"replicas": 3})).await;
    kubectl_ok(&env.kubeconfig, &["-n", &env.ns, "rollout", "status", "sts/roll", "--timeout=90s"]).await;
    let first = wait_status(&env, "roll", 3, 3).await.status.unwrap_or_default();
    assert_eq!(first.current_revision, first.update_revision);

    kubectl_ok(&env.kubeconfig, &["-n", &env.ns, "set", "image", "sts/roll", "web=nginx:1.28"]).await;
    let out = kubectl_ok(&env.kubeconfig, &["-n", &env.ns, "rollout", "status", "sts/roll", "--timeout=90s"]).await;
    assert!(out.contains("partitioned roll out complete") || out.contains("rolling update complete"), "{out}");
    wait_images(&env, "roll", &["nginx:1.28"; 3]).await;
    let second = wait_status(&env, "roll", 3, 3).await.status.unwrap_or_default();
    assert_ne!(second.update_revision, first.update_revision);
    assert_eq!(second.current_revision, second.update_revision, "rolled over");
    assert_eq!(second.updated_replicas, Some(3));

    let history = kubectl_ok(&env.kubeconfig, &["-n", &env.ns, "rollout", "history", "sts/roll"]).await;
    let revisions: Vec<&str> = history.lines().filter_map(|l| l.split_whitespace().next()).collect();
    assert!(revisions.contains(&"1") && revisions.contains(&"2"), "{history}");

    kubectl_ok(&env.kubeconfig, &["-n", &env.ns, "rollout", "undo", "sts/roll"]).await;
    kubectl_ok(&env.kubeconfig, &["-n", &env.ns, "rollout", "status", "sts/roll", "--timeout=90s"]).await;
    wait_images(&env, "roll", &["nginx:1.27"; 3]).await;
    let third = wait_status(&env, "roll", 3, 3).await.status.unwrap_or_default();
    assert_eq!(third.update_revision, first.update_revision, "the first revision is reused");
    let history = kubectl_ok(&env.kubeconfig, &["-n", &env.ns, "rollout", "history", "sts/roll"]).await;
    let numbers: Vec<&str> = history.lines().skip(2).filter_map(|l| l.split_whitespace().next()).collect();
    assert_eq!(numbers, ["2", "3"], "the reused revision is renumbered: {history}");
    checker.finish();
}

/// Upstream "should perform canary updates and phased rolling updates of
/// template modifications": a partition keeps the ordinals below it.
async fn canary_and_phased_updates_follow_the_partition() {
    let env = start().await;
    let checker = Checker::start(&env, "canary", true);
    let strategy = |partition: i32| json!({"type": "RollingUpdate", "rollingUpdate": {"partition": partition}});
    apply(&env, "canary", json!({"replicas": 3, "updateStrategy": strategy(3)})).await;
    wait_status(&env, "canary", 3, 3).await;

    let template = |image: &str| {
        json!({"metadata": {"labels": {"app": "canary"}},
            "spec": {"containers": [{"name": "web", "image": image}]}})
    };
    let new = "nginx:1.28";
    apply(&env, "canary", json!({"replicas": 3, "updateStrategy": strategy(3), "template": template(new)})).await;
    let status = wait_status(&env, "canary", 3, 3).await.status.unwrap_or_default();
    assert_ne!(status.current_revision, status.update_revision);
    wait_images(&env, "canary", &["nginx:1.27", "nginx:1.27", "nginx:1.27"]).await;

    for (partition, images) in [(2, ["nginx:1.27", "nginx:1.27", new]), (0, [new, new, new])] {
        apply(&env, "canary", json!({"replicas": 3, "updateStrategy": strategy(partition), "template": template(new)}))
            .await;
        wait_images(&env, "canary", &images).await;
    }
    wait_for(&env.cluster, PATIENCE, "the rollover to the update revision", || async {
        let s = set(&env, "canary").await.status.unwrap_or_default();
        if s.current_revision == s.update_revision { Ok(()) } else { Err(format!("{s:?}")) }
    })
    .await;
    checker.finish();
}

/// Upstream "should recreate a pod that is deleted" and "should recreate
/// evicted statefulset" (a Failed pod): the same identity comes back as a
/// new pod.
async fn a_deleted_or_failed_pod_is_recreated_with_its_identity() {
    let env = start().await;
    let checker = Checker::start(&env, "rec", true);
    apply(&env, "rec", json!({"replicas": 2})).await;
    wait_ready(&env, "rec", &["rec-0", "rec-1"]).await;
    let before = pods(&env, "rec").await;

    kubectl_ok(&env.kubeconfig, &["-n", &env.ns, "delete", "pod", "rec-1", "--wait=false"]).await;
    let api: Api<Pod> = Api::namespaced(env.client.clone(), &env.ns);
    let failed = json!({"status": {"phase": "Failed", "reason": "Evicted"}});
    api.patch_status("rec-0", &PatchParams::default(), &Patch::Merge(failed)).await.expect("rec-0 Failed");
    wait_for(&env.cluster, PATIENCE, "both pods replaced and Ready", || async {
        let now = pods(&env, "rec").await;
        let replaced = ["rec-0", "rec-1"]
            .iter()
            .all(|n| now.get(*n).is_some_and(|p| running_and_ready(p) && p.metadata.uid != before[*n].metadata.uid));
        if replaced { Ok(()) } else { Err(format!("{:?}", now.keys().collect::<Vec<_>>())) }
    })
    .await;
    for (name, pod) in pods(&env, "rec").await {
        let labels = pod.metadata.labels.unwrap_or_default();
        assert_eq!(labels["statefulset.kubernetes.io/pod-name"], name);
        assert_eq!(pod.spec.as_ref().and_then(|s| s.hostname.clone()), Some(name.clone()));
        assert_eq!(pod.spec.and_then(|s| s.subdomain), Some("rec".to_owned()));
    }
    let events = crate::common::events(&env, &env.ns, "rec", "SuccessfulCreate").await;
    assert!(events.iter().any(|e| e.message.as_deref() == Some("create Pod rec-0 in StatefulSet rec successful")));
    checker.finish();
}

/// Upstream `UpdateStatefulPod`: a member whose identity label was taken
/// off is given it back on its live copy, in place (same uid, what else was
/// written to it kept), with a `SuccessfulUpdate` event.
async fn a_member_that_lost_its_identity_label_gets_it_back_in_place() {
    let env = start().await;
    apply(&env, "rep", json!({"replicas": 1})).await;
    wait_ready(&env, "rep", &["rep-0"]).await;
    let before = pods(&env, "rep").await;
    let ns = env.ns.as_str();
    let unlabel = ["-n", ns, "label", "pod", "rep-0", "statefulset.kubernetes.io/pod-name-", "kept=yes"];
    kubectl_ok(&env.kubeconfig, &unlabel).await;
    wait_for(&env.cluster, PATIENCE, "rep-0's identity label back", || async {
        let now = pods(&env, "rep").await;
        let labels = now.get("rep-0").and_then(|p| p.metadata.labels.clone()).unwrap_or_default();
        let back = labels.get("statefulset.kubernetes.io/pod-name").is_some_and(|v| v == "rep-0");
        if back { Ok(()) } else { Err(format!("{labels:?}")) }
    })
    .await;
    let after = &pods(&env, "rep").await["rep-0"];
    assert_eq!(after.metadata.uid, before["rep-0"].metadata.uid, "repaired in place, not recreated");
    assert_eq!(after.metadata.labels.as_ref().map(|l| l["kept"].as_str()), Some("yes"));
    wait_for(&env.cluster, PATIENCE, "the SuccessfulUpdate event", || async {
        let events = crate::common::events(&env, ns, "rep", "SuccessfulUpdate").await;
        let found =
            events.iter().any(|e| e.message.as_deref() == Some("update Pod rep-0 in StatefulSet rep successful"));
        if found { Ok(()) } else { Err(format!("{} SuccessfulUpdate events", events.len())) }
    })
    .await;
}

/// Upstream "should have a working scale subresource" and the status
/// endpoints: `kubectl scale` and `get --subresource`.
async fn the_scale_and_status_subresources_show_the_set() {
    let env = start().await;
    apply(&env, "sub", json!({"replicas": 1})).await;
    wait_status(&env, "sub", 1, 1).await;
    kubectl_ok(&env.kubeconfig, &["-n", &env.ns, "scale", "sts", "sub", "--replicas=2"]).await;
    wait_ready(&env, "sub", &["sub-0", "sub-1"]).await;
    let scale =
        kubectl_ok(&env.kubeconfig, &["-n", &env.ns, "get", "sts", "sub", "--subresource=scale", "-o", "json"]).await;
    let scale: Value = serde_json::from_str(&scale).expect("scale JSON");
    assert_eq!((scale["spec"]["replicas"].as_i64(), scale["status"]["replicas"].as_i64()), (Some(2), Some(2)));
    assert_eq!(scale["status"]["selector"], "app=sub");
    let status =
        kubectl_ok(&env.kubeconfig, &["-n", &env.ns, "get", "sts", "sub", "--subresource=status", "-o", "json"]).await;
    let status: Value = serde_json::from_str(&status).expect("status JSON");
    for field in ["replicas", "readyReplicas", "currentReplicas", "updatedReplicas", "availableReplicas"] {
        assert_eq!(status["status"][field], 2, "{field}: {status}");
    }
    let table = kubectl_ok(&env.kubeconfig, &["-n", &env.ns, "get", "sts", "sub"]).await;
    assert!(table.lines().nth(1).is_some_and(|l| l.split_whitespace().nth(1) == Some("2/2")), "{table}");
}

/// Upstream "PersistentVolumeClaim retention policy" cases: with
/// `whenScaled: Delete` a scaled-away pod's claim is deleted, with
/// `whenDeleted: Delete` every claim goes with the set. The
/// StorageObjectInUseProtection admission (kube-apiserver's and
/// kube-sim's) keeps a deleted claim Terminating until kcm-rs's
/// pvc-protection controller sees no pod using it: the claims must go
/// completely. On the testbed the test binds the claims itself
/// ([`Provisioner`]), as kube-sim does.
async fn claims_follow_the_retention_policy() {
    let env = start().await;
    let provisioner = Provisioner::start(&env);
    let claim_template = json!([{"metadata": {"name": "data"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]);
    let policy = json!({"whenScaled": "Delete", "whenDeleted": "Retain"});
    apply(
        &env,
        "keep",
        json!({"replicas": 2, "volumeClaimTemplates": claim_template.clone(),
        "persistentVolumeClaimRetentionPolicy": policy}),
    )
    .await;
    let policy = json!({"whenScaled": "Retain", "whenDeleted": "Delete"});
    apply(
        &env,
        "drop",
        json!({"replicas": 1, "volumeClaimTemplates": claim_template,
        "persistentVolumeClaimRetentionPolicy": policy}),
    )
    .await;
    wait_ready(&env, "keep", &["keep-0", "keep-1"]).await;
    wait_ready(&env, "drop", &["drop-0"]).await;
    let claims: Api<PersistentVolumeClaim> = Api::namespaced(env.client.clone(), &env.ns);
    let gone = |name: &'static str| {
        let claims = claims.clone();
        async move {
            match claims.get_opt(name).await.map_err(|e| e.to_string())? {
                None => Ok(()),
                Some(claim) => Err(format!("{:?}", claim.metadata)),
            }
        }
    };
    let volume = pods(&env, "keep").await["keep-1"].spec.clone().unwrap_or_default().volumes.unwrap_or_default();
    assert_eq!(volume[0].persistent_volume_claim.as_ref().map(|c| c.claim_name.as_str()), Some("data-keep-1"));

    kubectl_ok(&env.kubeconfig, &["-n", &env.ns, "scale", "sts", "keep", "--replicas=1"]).await;
    wait_for(&env.cluster, PATIENCE, "data-keep-1 gone with its pod", || gone("data-keep-1")).await;
    // As upstream's e2e (`verifyStatefulSetPVCsExistWithOwnerRefs`): the
    // set is deleted once its claim names it as owner. The controller sets
    // that reference in a sync that sees the claim cached; a set deleted
    // before then leaves its claims behind, upstream as here.
    wait_for(&env.cluster, PATIENCE, "data-drop-0 owned by its set", || async {
        let claim = claims.get("data-drop-0").await.map_err(|e| e.to_string())?;
        let owners = claim.metadata.owner_references.unwrap_or_default();
        if owners.iter().any(|o| o.kind == "StatefulSet" && o.name == "drop") {
            Ok(())
        } else {
            Err(format!("owner references {owners:?}"))
        }
    })
    .await;
    kubectl_ok(&env.kubeconfig, &["-n", &env.ns, "delete", "sts", "drop", "--wait=false"]).await;
    wait_for(&env.cluster, PATIENCE, "data-drop-0 gone with its set", || gone("data-drop-0")).await;
    let kept = claims.get("data-keep-0").await.expect("data-keep-0");
    assert!(kept.metadata.deletion_timestamp.is_none(), "a claim in use stays");
    if let Some(p) = provisioner {
        p.finish().await;
    }
}

/// Upstream "should implement legacy replacement when the update strategy
/// is OnDelete": a new template reaches only the pods a user deletes.
async fn on_delete_replaces_only_deleted_pods() {
    let env = start().await;
    let checker = Checker::start(&env, "ond", true);
    let on_delete = json!({"type": "OnDelete"});
    apply(&env, "ond", json!({"replicas": 2, "updateStrategy": on_delete})).await;
    wait_status(&env, "ond", 2, 2).await;
    kubectl_ok(&env.kubeconfig, &["-n", &env.ns, "set", "image", "sts/ond", "web=nginx:1.28"]).await;
    let status = wait_status(&env, "ond", 2, 2).await.status.unwrap_or_default();
    assert_ne!(status.current_revision, status.update_revision);
    assert_eq!(status.updated_replicas.unwrap_or(0), 0, "{status:?}");
    wait_images(&env, "ond", &["nginx:1.27", "nginx:1.27"]).await;

    kubectl_ok(&env.kubeconfig, &["-n", &env.ns, "delete", "pod", "ond-1", "--wait=false"]).await;
    wait_images(&env, "ond", &["nginx:1.27", "nginx:1.28"]).await;
    kubectl_ok(&env.kubeconfig, &["-n", &env.ns, "delete", "pod", "ond-0", "--wait=false"]).await;
    wait_images(&env, "ond", &["nginx:1.28", "nginx:1.28"]).await;
    checker.finish();
}

/// Upstream "MinReadySeconds should be honored when enabled": a Ready pod
/// counts as available only once `minReadySeconds` have passed, which the
/// controller notices by itself (nothing else changes meanwhile).
async fn a_pod_is_available_after_min_ready_seconds() {
    let env = start().await;
    apply(&env, "slow", json!({"replicas": 1, "minReadySeconds": 3})).await;
    let counts = |want: (i32, i32)| {
        let env = &env;
        async move {
            let s = set(env, "slow").await.status.unwrap_or_default();
            let seen = (s.ready_replicas.unwrap_or(0), s.available_replicas.unwrap_or(0));
            if seen == want { Ok(()) } else { Err(format!("(ready, available) = {seen:?}")) }
        }
    };
    wait_for(&env.cluster, PATIENCE, "ready, not yet available", || counts((1, 0))).await;
    wait_for(&env.cluster, PATIENCE, "available", || counts((1, 1))).await;
}

/// Failing pod and claim creates, dropped watches, compaction and a
/// restarted kcm-rs while an `OrderedReady` set with claims scales: the
/// order and the identities hold throughout, and the set converges.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn faults_and_a_restart_mid_scale_keep_order_and_identity() {
    let mut env = start().await;
    let failing = |resource: &str| FaultRule {
        verb: Some("create".into()),
        resource: Some(resource.into()),
        error_rate: 0.2,
        ..Default::default()
    };
    let faults = FaultSpec { rules: vec![failing("pods"), failing("persistentvolumeclaims")] };
    env.cluster.controls().set_faults(faults).expect("faults set");
    let checker = Checker::start(&env, "chaos", true);
    let claims = json!([{"metadata": {"name": "data"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]);
    apply(&env, "chaos", json!({"replicas": 6, "volumeClaimTemplates": claims})).await;
    wait_for(&env.cluster, PATIENCE, "the scale-up to start", || async {
        let n = pods(&env, "chaos").await.len();
        if n >= 2 { Ok(()) } else { Err(format!("{n} pods")) }
    })
    .await;
    disturb(&mut env).await;

    let all: Vec<String> = (0..6).map(|o| format!("chaos-{o}")).collect();
    wait_ready(&env, "chaos", &all.iter().map(String::as_str).collect::<Vec<_>>()).await;
    wait_status(&env, "chaos", 6, 6).await;
    kubectl_ok(&env.kubeconfig, &["-n", &env.ns, "scale", "sts", "chaos", "--replicas=2"]).await;
    wait_ready(&env, "chaos", &["chaos-0", "chaos-1"]).await;
    wait_status(&env, "chaos", 2, 2).await;
    checker.finish();
}

/// A pod whose claim is not yet bound waits unscheduled, and an
/// `OrderedReady` set waits with it (kube-sim's provisioner, and the
/// test's [`Provisioner`] on the testbed, hold a claim annotated
/// `kube-sim.io/provision: pending`).
async fn ordered_creation_waits_for_a_pods_storage() {
    let env = start().await;
    let provisioner = Provisioner::start(&env);
    let checker = Checker::start(&env, "vol", true);
    let held = json!([{"metadata": {"name": "data", "annotations": {"kube-sim.io/provision": "pending"}},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]);
    apply(&env, "vol", json!({"replicas": 2, "volumeClaimTemplates": held})).await;
    wait_status(&env, "vol", 1, 0).await;
    let claims: Api<PersistentVolumeClaim> = Api::namespaced(env.client.clone(), &env.ns);
    let release = json!({"metadata": {"annotations": {"kube-sim.io/provision": null}}});
    for (claim, pod, ready) in [("data-vol-0", "vol-0", 1), ("data-vol-1", "vol-1", 2)] {
        // The controller creates a pod's claims, then the pod.
        wait_for(&env.cluster, PATIENCE, &format!("{claim} and {pod} created"), || async {
            claims.get(claim).await.map_err(|e| e.to_string())?;
            if pods(&env, "vol").await.contains_key(pod) { Ok(()) } else { Err(format!("no {pod}")) }
        })
        .await;
        assert_eq!(pods(&env, "vol").await.len(), ready, "the next pod waits for this one's storage");
        claims.patch(claim, &PatchParams::default(), &Patch::Merge(&release)).await.expect("claim released");
        // Once this pod is Ready the next one may be created at once: the
        // status counts it then, so only the Ready pods are waited for.
        let ready = i32::try_from(ready).expect("small");
        wait_for(&env.cluster, PATIENCE, &format!("vol's status: {ready} Ready"), || async {
            let set = set(&env, "vol").await;
            let s = set.status.clone().unwrap_or_default();
            let ok = s.ready_replicas.unwrap_or(0) == ready && s.observed_generation == set.metadata.generation;
            if ok { Ok(()) } else { Err(format!("{s:?}")) }
        })
        .await;
    }
    wait_ready(&env, "vol", &["vol-0", "vol-1"]).await;
    checker.finish();
    if let Some(p) = provisioner {
        p.finish().await;
    }
}
