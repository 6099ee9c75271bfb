//! The ReplicaSet controller end to end: the real `kcm-rs` binary against
//! kube-sim (whose kubelet stand-in binds pods and makes them Running and
//! Ready): pods and status, scaling, adoption and release, replacement,
//! events, and never more active pods than replicas under failing creates,
//! dropped watches, compaction and a restart. Every test waits on
//! conditions, never on timings.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex};

use futures::TryStreamExt;
use k8s_openapi::api::apps::v1::{ReplicaSet, ReplicaSetSpec};
use k8s_openapi::api::core::v1::{Container, Event, Pod, PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::runtime::watcher;
use kube_sim::testing::{kubectl_ok, wait_for};
use serde_json::json;

use crate::common::{Cluster, Env, PATIENCE, disturb, failing_pod_creates, on_both, start, start_with_flags};

// === utils ===

/// Counts the active pods labelled `app=<app>` at every watch event and
/// keeps the highest count seen; abort the task to stop.
fn watch_highest(env: &Env, app: &str) -> (Arc<Mutex<usize>>, tokio::task::JoinHandle<()>) {
    let max_seen = Arc::new(Mutex::new(0usize));
    let api: Api<Pod> = Api::namespaced(env.client.clone(), &env.ns);
    let stream = watcher(api, watcher::Config::default().labels(&format!("app={app}")));
    let max = max_seen.clone();
    let task = tokio::spawn(async move {
        // name -> active, and during a relist the names listed so far.
        let mut active: HashMap<String, bool> = HashMap::new();
        let mut listing: Option<HashSet<String>> = None;
        futures::pin_mut!(stream);
        while let Ok(Some(event)) = stream.try_next().await {
            match event {
                watcher::Event::Init => {
                    listing = Some(HashSet::new());
                }
                watcher::Event::InitApply(p) | watcher::Event::Apply(p) => {
                    let name = p.metadata.name.clone().unwrap_or_default();
                    if let Some(listed) = &mut listing {
                        listed.insert(name.clone());
                    }
                    active.insert(name, p.metadata.deletion_timestamp.is_none());
                }
                watcher::Event::Delete(p) => {
                    active.remove(&p.metadata.name.clone().unwrap_or_default());
                }
                watcher::Event::InitDone => {
                    if let Some(listed) = listing.take() {
                        active.retain(|name, _| listed.contains(name));
                    }
                }
            }
            // Mid-relist the map mixes two states: judge at list end.
            if listing.is_none() {
                let now = active.values().filter(|a| **a).count();
                let mut max = max.lock().expect("lock");
                *max = (*max).max(now);
            }
        }
    });
    (max_seen, task)
}

fn labels(app: &str) -> BTreeMap<String, String> {
    BTreeMap::from([("app".to_owned(), app.to_owned())])
}

fn replica_set(name: &str, replicas: i32) -> ReplicaSet {
    ReplicaSet {
        metadata: ObjectMeta { name: Some(name.into()), ..Default::default() },
        spec: ReplicaSetSpec {
            replicas: Some(replicas),
            selector: LabelSelector { match_labels: Some(labels(name)), ..Default::default() },
            template: Some(PodTemplateSpec {
                metadata: Some(ObjectMeta { labels: Some(labels(name)), ..Default::default() }),
                spec: Some(pod_spec()),
            }),
            ..Default::default()
        },
        status: None,
    }
}

fn pod_spec() -> PodSpec {
    PodSpec {
        containers: vec![Container { name: "web".into(), image: Some("nginx".into()), ..Default::default() }],
        ..Default::default()
    }
}

async fn create_rs(env: &Env, name: &str, replicas: i32) -> ReplicaSet {
    let api: Api<ReplicaSet> = Api::namespaced(env.client.clone(), &env.ns);
    api.create(&PostParams::default(), &replica_set(name, replicas)).await.expect("ReplicaSet created")
}

async fn scale(env: &Env, name: &str, replicas: i32) {
    let api: Api<ReplicaSet> = Api::namespaced(env.client.clone(), &env.ns);
    api.patch(name, &PatchParams::default(), &Patch::Merge(json!({"spec": {"replicas": replicas}})))
        .await
        .expect("ReplicaSet scaled");
}

/// The pods labelled `app=<app>` that are not being deleted.
async fn active_pods(env: &Env, app: &str) -> Vec<Pod> {
    let api: Api<Pod> = Api::namespaced(env.client.clone(), &env.ns);
    let list = api.list(&ListParams::default().labels(&format!("app={app}"))).await.expect("pods listed");
    list.items.into_iter().filter(|p| p.metadata.deletion_timestamp.is_none()).collect()
}

fn names(pods: &[Pod]) -> Vec<String> {
    let mut names: Vec<String> = pods.iter().filter_map(|p| p.metadata.name.clone()).collect();
    names.sort();
    names
}

async fn rs(env: &Env, name: &str) -> ReplicaSet {
    let api: Api<ReplicaSet> = Api::namespaced(env.client.clone(), &env.ns);
    api.get(name).await.expect("ReplicaSet read")
}

/// Waits until the ReplicaSet has exactly `n` active pods, and its status
/// says `n` replicas, all Ready and available, for its current generation.
async fn converged(env: &Env, name: &str, n: i32) {
    wait_for(&env.cluster, PATIENCE, &format!("{name} to converge on {n} Ready pods"), || async move {
        let pods = active_pods(env, name).await;
        let rs = rs(env, name).await;
        let status = rs.status.clone().unwrap_or_default();
        let seen = format!(
            "{} active pods, status replicas={} ready={:?} available={:?} observedGeneration={:?} (generation {:?})",
            pods.len(),
            status.replicas,
            status.ready_replicas,
            status.available_replicas,
            status.observed_generation,
            rs.metadata.generation
        );
        let ok = pods.len() == usize::try_from(n).unwrap_or(0)
            && status.replicas == n
            && status.ready_replicas.unwrap_or(0) == n
            && status.available_replicas.unwrap_or(0) == n
            && status.observed_generation == rs.metadata.generation;
        if ok { Ok(()) } else { Err(seen) }
    })
    .await;
}

/// Events recorded on ReplicaSet `name` with `reason`.
async fn events(env: &Env, name: &str, reason: &str) -> Vec<Event> {
    let api: Api<Event> = Api::namespaced(env.client.clone(), &env.ns);
    let list = api.list(&ListParams::default()).await.expect("events listed");
    list.items
        .into_iter()
        .filter(|e| e.involved_object.name.as_deref() == Some(name) && e.reason.as_deref() == Some(reason))
        .collect()
}

/// Total `count` of the events (aggregated events count several).
fn count(events: &[Event]) -> i32 {
    events.iter().map(|e| e.count.unwrap_or(1)).sum()
}

// === tests ===

on_both!(
    a_replica_set_gets_exactly_its_pods_and_status,
    scaling_up_and_down_creates_and_deletes_pods_kubectl_scale_included,
    an_orphan_is_adopted_and_a_not_ready_pod_goes_first,
    a_pod_deleted_by_hand_is_replaced,
    a_relabelled_pod_is_released_and_replaced,
    ten_bound_ready_pods_then_fifty_then_zero_then_five,
    a_matching_orphan_present_first_is_adopted_and_one_fewer_pod_is_created,
    a_terminating_pod_is_reported_in_status_terminating_replicas,
    with_the_gate_off_status_terminating_replicas_is_not_written,
);

async fn a_replica_set_gets_exactly_its_pods_and_status() {
    let env = start().await;
    let created = create_rs(&env, "web", 3).await;
    converged(&env, "web", 3).await;

    let pods = active_pods(&env, "web").await;
    assert_eq!(pods.len(), 3);
    for pod in &pods {
        assert_eq!(pod.metadata.generate_name.as_deref(), Some("web-"));
        assert!(pod.metadata.name.as_deref().is_some_and(|n| n.starts_with("web-")));
        let refs = pod.metadata.owner_references.clone().unwrap_or_default();
        assert_eq!(refs.len(), 1, "{refs:?}");
        let owner = &refs[0];
        assert_eq!((owner.kind.as_str(), owner.name.as_str()), ("ReplicaSet", "web"));
        assert_eq!(Some(&owner.uid), created.metadata.uid.as_ref());
        assert_eq!(owner.controller, Some(true));
        assert_eq!(owner.block_owner_deletion, Some(true));
    }
    let status = rs(&env, "web").await.status.unwrap_or_default();
    assert_eq!(status.fully_labeled_replicas, Some(3));

    wait_for(&env.cluster, PATIENCE, "SuccessfulCreate events for every pod", || async {
        let seen = count(&events(&env, "web", "SuccessfulCreate").await);
        if seen >= 3 { Ok(()) } else { Err(format!("{seen} SuccessfulCreate")) }
    })
    .await;
    let messages: Vec<String> =
        events(&env, "web", "SuccessfulCreate").await.into_iter().filter_map(|e| e.message).collect();
    assert!(messages.iter().all(|m| m.starts_with("Created pod: web-")), "{messages:?}");
    let sources: Vec<Option<String>> =
        events(&env, "web", "SuccessfulCreate").await.into_iter().map(|e| e.source.and_then(|s| s.component)).collect();
    assert!(sources.iter().all(|s| s.as_deref() == Some("replicaset-controller")), "{sources:?}");
}

async fn scaling_up_and_down_creates_and_deletes_pods_kubectl_scale_included() {
    let env = start().await;
    create_rs(&env, "scaled", 3).await;
    converged(&env, "scaled", 3).await;

    scale(&env, "scaled", 5).await;
    converged(&env, "scaled", 5).await;
    let five = names(&active_pods(&env, "scaled").await);

    // As a user would: kubectl, through the /scale subresource.
    kubectl_ok(&env.kubeconfig, &["scale", "rs", "scaled", "--replicas=1", "-n", &env.ns]).await;
    converged(&env, "scaled", 1).await;
    let one = names(&active_pods(&env, "scaled").await);
    assert!(five.contains(&one[0]), "the survivor {one:?} is one of {five:?}");
    wait_for(&env.cluster, PATIENCE, "SuccessfulDelete events for the 4 deleted pods", || async {
        let seen = count(&events(&env, "scaled", "SuccessfulDelete").await);
        if seen >= 4 { Ok(()) } else { Err(format!("{seen} SuccessfulDelete")) }
    })
    .await;
}

async fn an_orphan_is_adopted_and_a_not_ready_pod_goes_first() {
    let env = start().await;
    create_rs(&env, "adopter", 2).await;
    converged(&env, "adopter", 2).await;
    let before = names(&active_pods(&env, "adopter").await);

    // An orphan with the ReplicaSet's labels that never becomes Ready: the
    // ReplicaSet adopts it, then has one pod too many, and deletes the
    // not-Ready one first (upstream's ranking).
    let orphan = Pod {
        metadata: ObjectMeta {
            name: Some("orphan".into()),
            labels: Some(labels("adopter")),
            annotations: Some(BTreeMap::from([("kube-sim.io/ready".to_owned(), "never".to_owned())])),
            ..Default::default()
        },
        spec: Some(pod_spec()),
        status: None,
    };
    let pods: Api<Pod> = Api::namespaced(env.client.clone(), &env.ns);
    pods.create(&PostParams::default(), &orphan).await.expect("orphan created");

    wait_for(&env.cluster, PATIENCE, "the orphan to be adopted", || async {
        let owners = pods.get_opt("orphan").await.ok().flatten().and_then(|p| p.metadata.owner_references);
        match owners {
            Some(refs) if refs.iter().any(|r| r.name == "adopter" && r.controller == Some(true)) => Ok(()),
            None => Ok(()), // already adopted and deleted
            other => Err(format!("{other:?}")),
        }
    })
    .await;
    converged(&env, "adopter", 2).await;
    assert_eq!(names(&active_pods(&env, "adopter").await), before, "the Ready pods are kept");
    wait_for(&env.cluster, PATIENCE, "the orphan to be deleted", || async {
        match pods.get_opt("orphan").await.ok().flatten() {
            Some(p) if p.metadata.deletion_timestamp.is_none() => Err("still there".into()),
            _ => Ok(()),
        }
    })
    .await;
}

async fn a_pod_deleted_by_hand_is_replaced() {
    let env = start().await;
    create_rs(&env, "healed", 3).await;
    converged(&env, "healed", 3).await;
    let before = names(&active_pods(&env, "healed").await);

    let pods: Api<Pod> = Api::namespaced(env.client.clone(), &env.ns);
    pods.delete(&before[0], &DeleteParams::default()).await.expect("pod deleted");
    wait_for(&env.cluster, PATIENCE, "a replacement pod", || async {
        let now = names(&active_pods(&env, "healed").await);
        let replaced = now.len() == 3 && !now.contains(&before[0]);
        if replaced { Ok(()) } else { Err(format!("{now:?}")) }
    })
    .await;
    converged(&env, "healed", 3).await;
    let after = names(&active_pods(&env, "healed").await);
    assert_eq!(after.iter().filter(|n| before.contains(n)).count(), 2, "{before:?} -> {after:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failing_creates_never_overshoot() {
    // Every fifth create refused.
    const REPLICAS: usize = 30;
    let env = start().await;
    env.cluster.controls().set_faults(failing_pod_creates(5)).expect("faults set");

    // Watch every pod event and count the ReplicaSet's active pods at each.
    let (max_seen, watch) = watch_highest(&env, "faulty");

    create_rs(&env, "faulty", i32::try_from(REPLICAS).expect("fits")).await;
    converged(&env, "faulty", i32::try_from(REPLICAS).expect("fits")).await;
    let failed = env
        .cluster
        .controls()
        .stats()
        .iter()
        .filter(|s| s.verb == "create" && s.resource == "pods" && s.code == 500)
        .map(|s| s.count)
        .sum::<u64>();
    watch.abort();
    let max = *max_seen.lock().expect("lock");
    assert!(max <= REPLICAS, "saw {max} active pods for {REPLICAS} replicas");
    assert!(failed > 0, "no create failed: the faults were not exercised");
    wait_for(&env.cluster, PATIENCE, "FailedCreate events", || async {
        let seen = count(&events(&env, "faulty", "FailedCreate").await);
        if seen > 0 { Ok(()) } else { Err("none".into()) }
    })
    .await;
}

async fn a_relabelled_pod_is_released_and_replaced() {
    let env = start().await;
    let created = create_rs(&env, "relabel", 2).await;
    converged(&env, "relabel", 2).await;
    let before = names(&active_pods(&env, "relabel").await);

    let pods: Api<Pod> = Api::namespaced(env.client.clone(), &env.ns);
    pods.patch(
        &before[0],
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"labels": {"app": "elsewhere"}}})),
    )
    .await
    .expect("pod relabelled");
    wait_for(&env.cluster, PATIENCE, "the relabelled pod to be released", || async {
        let pod = pods.get(&before[0]).await.map_err(|e| e.to_string())?;
        let owned = pod
            .metadata
            .owner_references
            .unwrap_or_default()
            .iter()
            .any(|r| Some(&r.uid) == created.metadata.uid.as_ref());
        if owned { Err("still owned".into()) } else { Ok(()) }
    })
    .await;
    converged(&env, "relabel", 2).await;
    let after = names(&active_pods(&env, "relabel").await);
    assert!(!after.contains(&before[0]), "{after:?}");
    assert!(pods.get(&before[0]).await.is_ok(), "the released pod is left alone");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restarts_dropped_watches_and_compaction_mid_scale_never_overshoot() {
    const REPLICAS: usize = 30;
    let mut env = start().await;
    env.cluster.controls().set_faults(failing_pod_creates(5)).expect("faults set");
    let (max_seen, watch) = watch_highest(&env, "chaos");

    create_rs(&env, "chaos", 3).await;
    converged(&env, "chaos", 3).await;
    scale(&env, "chaos", i32::try_from(REPLICAS).expect("fits")).await;
    // Disturb the controller while it scales: the new process's
    // expectations start empty.
    wait_for(&env.cluster, PATIENCE, "the scale-up to start", || async {
        let n = active_pods(&env, "chaos").await.len();
        if n > 3 { Ok(()) } else { Err(format!("{n} pods")) }
    })
    .await;
    disturb(&mut env).await;

    converged(&env, "chaos", i32::try_from(REPLICAS).expect("fits")).await;
    scale(&env, "chaos", 4).await;
    converged(&env, "chaos", 4).await;
    watch.abort();
    let max = *max_seen.lock().expect("lock");
    assert!(max <= REPLICAS, "saw {max} active pods for {REPLICAS} replicas");
}

async fn ten_bound_ready_pods_then_fifty_then_zero_then_five() {
    let env = start().await;
    create_rs(&env, "big", 10).await;
    converged(&env, "big", 10).await;
    let pods = active_pods(&env, "big").await;
    assert!(
        pods.iter().all(|p| p.spec.as_ref().and_then(|s| s.node_name.as_deref()).is_some_and(|n| !n.is_empty())),
        "every pod is bound to a node"
    );
    for n in [50, 0, 5] {
        scale(&env, "big", n).await;
        converged(&env, "big", n).await;
    }
}

async fn a_matching_orphan_present_first_is_adopted_and_one_fewer_pod_is_created() {
    // The orphan and the ReplicaSet exist before kcm-rs starts, so its first
    // sync (after the caches sync) sees both, whatever the watch timing.
    let mut env = start().await;
    env.daemon.kill().await.expect("kcm-rs stopped");
    // What the controller manager that ran before gave the namespace (this
    // kcm-rs may have been stopped before doing it): the orphan needs both.
    if let Cluster::Sim(sim) = &env.cluster {
        kube_sim::testing::provision_namespace(sim, &env.ns).await;
    }
    let orphan = Pod {
        metadata: ObjectMeta { name: Some("early".into()), labels: Some(labels("lean")), ..Default::default() },
        spec: Some(pod_spec()),
        status: None,
    };
    let pods: Api<Pod> = Api::namespaced(env.client.clone(), &env.ns);
    pods.create(&PostParams::default(), &orphan).await.expect("orphan created");
    create_rs(&env, "lean", 3).await;
    env.daemon = env.spawn();
    converged(&env, "lean", 3).await;
    let owned = pods.get("early").await.expect("the orphan is still there").metadata.owner_references;
    assert!(
        owned.unwrap_or_default().iter().any(|r| r.name == "lean" && r.controller == Some(true)),
        "the orphan is adopted"
    );
    wait_for(&env.cluster, PATIENCE, "two SuccessfulCreate events", || async {
        let seen = count(&events(&env, "lean", "SuccessfulCreate").await);
        if seen >= 2 { Ok(()) } else { Err(format!("{seen} SuccessfulCreate")) }
    })
    .await;
    assert_eq!(count(&events(&env, "lean", "SuccessfulCreate").await), 2, "one fewer pod created than replicas");
}

/// Holds one of `name`'s pods in deletion with a finalizer, and returns it.
async fn hold_one_pod_in_deletion(env: &Env, name: &str) -> String {
    let held = names(&active_pods(env, name).await).remove(0);
    let pods: Api<Pod> = Api::namespaced(env.client.clone(), &env.ns);
    let finalizer = json!({"metadata": {"finalizers": ["kcm-rs.test/hold"]}});
    pods.patch(&held, &PatchParams::default(), &Patch::Merge(finalizer)).await.expect("finalizer added");
    pods.delete(&held, &DeleteParams::default()).await.expect("pod deleted");
    held
}

async fn release(env: &Env, pod: &str) {
    let pods: Api<Pod> = Api::namespaced(env.client.clone(), &env.ns);
    let clear = json!({"metadata": {"finalizers": null}});
    pods.patch(pod, &PatchParams::default(), &Patch::Merge(clear)).await.expect("finalizer removed");
}

async fn a_terminating_pod_is_reported_in_status_terminating_replicas() {
    let env = start().await;
    create_rs(&env, "ending", 2).await;
    converged(&env, "ending", 2).await;
    let held = hold_one_pod_in_deletion(&env, "ending").await;

    // DeploymentReplicaSetTerminatingReplicas is on at 1.37: the held pod is
    // counted while a replacement brings the active pods back to two.
    wait_for(&env.cluster, PATIENCE, "terminatingReplicas 1 beside 2 Ready pods", || async {
        let status = rs(&env, "ending").await.status.unwrap_or_default();
        let active = active_pods(&env, "ending").await.len();
        let seen = format!("terminatingReplicas={:?}, {active} active pods", status.terminating_replicas);
        if status.terminating_replicas == Some(1) && active == 2 { Ok(()) } else { Err(seen) }
    })
    .await;

    release(&env, &held).await;
    wait_for(&env.cluster, PATIENCE, "terminatingReplicas 0 once the pod is gone", || async {
        let status = rs(&env, "ending").await.status.unwrap_or_default();
        if status.terminating_replicas == Some(0) { Ok(()) } else { Err(format!("{:?}", status.terminating_replicas)) }
    })
    .await;
}

/// With the `DeploymentReplicaSetTerminatingReplicas` gate off, a pod held
/// in deletion is replaced and the status says nothing of it.
async fn with_the_gate_off_status_terminating_replicas_is_not_written() {
    let env = start_with_flags(&["--feature-gates=DeploymentReplicaSetTerminatingReplicas=false"]).await;
    create_rs(&env, "kept", 2).await;
    converged(&env, "kept", 2).await;
    let held = hold_one_pod_in_deletion(&env, "kept").await;
    wait_for(&env.cluster, PATIENCE, "a replacement beside the held pod", || async {
        let active = names(&active_pods(&env, "kept").await);
        if active.len() == 2 && !active.contains(&held) { Ok(()) } else { Err(format!("{active:?}")) }
    })
    .await;
    converged(&env, "kept", 2).await;
    assert_eq!(rs(&env, "kept").await.status.unwrap_or_default().terminating_replicas, None);
    release(&env, &held).await;
}
