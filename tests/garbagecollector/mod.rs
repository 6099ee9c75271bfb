//! The garbage collector end to end: the real `kcm-rs` binary against
//! kube-sim and, but for the fault scenarios, the testbed's kube-apiserver,
//! driven by `kubectl delete` as a user would. ReplicaSets and their pods
//! are the main owner/dependent chain (background, foreground and orphan
//! cascades); a custom resource type served at run time (a
//! CustomResourceDefinition on the testbed) owns ConfigMaps; owners that
//! never existed, owners the collector cannot watch yet, dependents with
//! two owners, references across namespaces, failing deletes with dropped
//! watches, and the metrics. Every test waits on conditions, never on
//! timings; foreground ordering is checked on the resourceVersions a watch
//! reports, not on when things happened.

mod helpers;

use k8s_openapi::api::apps::v1::ReplicaSet;
use k8s_openapi::api::core::v1::{ConfigMap, Event, Namespace, Pod};
use kube::api::{Api, ApiResource, DynamicObject, ListParams, PostParams};
use kube_sim::controls::CustomResource;
use kube_sim::faults::{FaultRule, FaultSpec};
use kube_sim::testing::wait_for;
use serde_json::json;

use crate::common::collector::{self, Feed};
use crate::common::recorder::{Recorder, assert_foreground};
use crate::common::{Backend, PATIENCE, backend, on_both, start, widgets};
use helpers::{
    collector_discovered, config_map, config_map_gone, config_maps, count, create_widget, dependents, dependents_gone,
    gone, in_namespace, kubectl_delete, monitoring_more_than, owned_config_map, pods, replica_set_with_pods,
    replica_sets, requests, value, widget_resource,
};

on_both!(
    kubectl_delete_rs_removes_its_pods,
    cascade_foreground_removes_the_pods_before_the_rs,
    cascade_orphan_keeps_the_pods_without_the_reference,
    a_custom_resource_registered_at_run_time_cascades_to_config_maps,
    a_custom_resource_owner_held_by_foreground_waits_for_its_config_maps,
    a_dependent_of_an_owner_that_never_existed_goes_after_a_live_lookup,
    a_reference_to_an_owner_in_another_namespace_is_reported,
    a_dependent_with_two_owners_goes_only_with_the_last,
    a_cluster_scoped_owner_cascades_to_namespaced_dependents,
    metrics_name_the_upstream_queues_and_the_graph,
);

async fn kubectl_delete_rs_removes_its_pods() {
    let env = start().await;
    let uid = replica_set_with_pods(&env, "web", 3).await;
    kubectl_delete(&env, "rs", "web", "background").await;
    gone(&env, &replica_sets(), "web").await;
    dependents_gone(&env, &pods(), &uid).await;
}

async fn cascade_foreground_removes_the_pods_before_the_rs() {
    let env = start().await;
    let uid = replica_set_with_pods(&env, "web", 3).await;
    let pod_uids: Vec<String> =
        dependents(&env, &pods(), &uid).await.into_iter().filter_map(|p| p.metadata.uid).collect();
    collector::observed(&env, Feed::Pods).await;
    let recorder = Recorder::watch(in_namespace(&env, &[replica_sets(), pods()])).await;
    kubectl_delete(&env, "rs", "web", "foreground").await;
    gone(&env, &replica_sets(), "web").await;
    dependents_gone(&env, &pods(), &uid).await;
    // The watches may lag the reads above: wait for them to report it all.
    let everything: Vec<String> = std::iter::once(uid.clone()).chain(pod_uids.iter().cloned()).collect();
    recorder.deletions(&env, &everything).await;
    assert_foreground(&recorder, &uid, &pod_uids);
}

async fn cascade_orphan_keeps_the_pods_without_the_reference() {
    let env = start().await;
    let uid = replica_set_with_pods(&env, "web", 3).await;
    let before: Vec<String> =
        dependents(&env, &pods(), &uid).await.into_iter().filter_map(|p| p.metadata.name).collect();
    // Orphaning touches only the dependents the collector has observed.
    collector::observed(&env, Feed::Pods).await;
    kubectl_delete(&env, "rs", "web", "orphan").await;
    gone(&env, &replica_sets(), "web").await;
    // The finalizer goes only after every reference is removed: the pods
    // are all there, not being deleted, without the reference.
    let api: Api<Pod> = Api::namespaced(env.client.clone(), &env.ns);
    let pods = api.list(&ListParams::default().labels("app=web")).await.expect("pods listed").items;
    let mut after: Vec<String> = pods.iter().filter_map(|p| p.metadata.name.clone()).collect();
    after.sort();
    let mut before = before;
    before.sort();
    assert_eq!(after, before);
    for pod in &pods {
        assert!(pod.metadata.deletion_timestamp.is_none(), "{:?} is being deleted", pod.metadata.name);
        let refs = pod.metadata.owner_references.clone().unwrap_or_default();
        assert!(refs.iter().all(|r| r.uid != uid), "{:?} still names the ReplicaSet: {refs:?}", pod.metadata.name);
    }
}

async fn a_custom_resource_registered_at_run_time_cascades_to_config_maps() {
    let env = start().await;
    collector_discovered(&env).await;
    env.serve(&widgets()).await;
    let uid = create_widget(&env, "w").await;
    for name in ["cm-a", "cm-b"] {
        owned_config_map(&env, name, ("example.com/v1", "Widget", "w", &uid)).await;
    }
    kubectl_delete(&env, "widgets", "w", "background").await;
    gone(&env, &widget_resource(), "w").await;
    dependents_gone(&env, &config_maps(), &uid).await;
}

async fn a_custom_resource_owner_held_by_foreground_waits_for_its_config_maps() {
    let env = start().await;
    collector_discovered(&env).await;
    env.serve(&widgets()).await;
    let uid = create_widget(&env, "w").await;
    owned_config_map(&env, "cm", ("example.com/v1", "Widget", "w", &uid)).await;
    // Blocking, so that the owner waits for it.
    let api: Api<ConfigMap> = Api::namespaced(env.client.clone(), &env.ns);
    let patch = json!({"metadata": {"ownerReferences": [{"apiVersion": "example.com/v1", "kind": "Widget",
        "name": "w", "uid": uid, "blockOwnerDeletion": true}]}});
    api.patch("cm", &Default::default(), &kube::api::Patch::Merge(patch)).await.expect("patched");
    let cm_uid = config_map(&env, "cm").await.and_then(|c| c.metadata.uid).expect("uid");
    collector::observed(&env, Feed::ConfigMaps).await;
    let recorder = Recorder::watch(in_namespace(&env, &[widget_resource(), config_maps()])).await;
    kubectl_delete(&env, "widgets", "w", "foreground").await;
    gone(&env, &widget_resource(), "w").await;
    recorder.deletions(&env, &[uid.clone(), cm_uid.clone()]).await;
    assert_foreground(&recorder, &uid, &[cm_uid]);
}

async fn a_dependent_of_an_owner_that_never_existed_goes_after_a_live_lookup() {
    let env = start().await;
    let ghost = "4f6e1d2c-0000-4000-8000-000000000001";
    owned_config_map(&env, "stray", ("apps/v1", "ReplicaSet", "ghost", ghost)).await;
    config_map_gone(&env, "stray").await;
    // Only the collector reads ReplicaSet "ghost": it asked the API server
    // (which only kube-sim counts).
    if backend() == Backend::Sim {
        assert!(count(&env, "get", "replicasets", 404) >= 1, "no live lookup of the owner: {:?}", requests(&env));
    }
}

/// kube-sim only: the collector is kept from watching the owner's type by
/// kube-sim's faults, and its live reads are counted in kube-sim's stats.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dependent_of_an_owner_not_yet_watched_is_kept() {
    let env = start().await;
    env.serve(&widgets()).await;
    // The collector can discover widgets but never list or watch them: the
    // owner stays a virtual node, verified live again and again.
    let blind = |verb: &str| FaultRule {
        verb: Some(verb.into()),
        resource: Some("widgets".into()),
        error_rate: 1.0,
        ..FaultRule::default()
    };
    env.cluster.controls().set_faults(FaultSpec { rules: vec![blind("list"), blind("watch")] }).expect("faults set");
    let uid = create_widget(&env, "w").await;
    owned_config_map(&env, "kept", ("example.com/v1", "Widget", "w", &uid)).await;
    wait_for(&env.cluster, PATIENCE, "the collector to verify the owner live several times", || async {
        let gets = count(&env, "get", "widgets", 200);
        if gets >= 3 { Ok(()) } else { Err(format!("{gets} live reads of the owner")) }
    })
    .await;
    let kept = config_map(&env, "kept").await.expect("the dependent is kept");
    assert!(kept.metadata.deletion_timestamp.is_none());
    // Once the owner goes, the dependent follows.
    env.cluster.controls().clear_faults();
    let api: Api<DynamicObject> = Api::namespaced_with(env.client.clone(), &env.ns, &widget_resource());
    api.delete("w", &Default::default()).await.expect("widget deleted");
    config_map_gone(&env, "kept").await;
}

/// The owner lives in a namespace of the test's own, deleted at the end
/// (by kcm-rs's namespace controller).
async fn a_reference_to_an_owner_in_another_namespace_is_reported() {
    let env = start().await;
    let namespaces: Api<Namespace> = Api::all(env.client.clone());
    let other = format!("{}-other", env.ns);
    let ns = serde_json::from_value(json!({"metadata": {"name": other}})).expect("valid");
    namespaces.create(&PostParams::default(), &ns).await.expect("namespace created");
    let owners: Api<ConfigMap> = Api::namespaced(env.client.clone(), &other);
    let owner: ConfigMap = serde_json::from_value(json!({"metadata": {"name": "owner"}})).expect("valid");
    let uid = owners.create(&PostParams::default(), &owner).await.expect("created").metadata.uid.expect("uid");
    owned_config_map(&env, "misplaced", ("v1", "ConfigMap", "owner", &uid)).await;
    let events: Api<Event> = Api::namespaced(env.client.clone(), &env.ns);
    wait_for(&env.cluster, PATIENCE, "an OwnerRefInvalidNamespace event", || async {
        let list = events.list(&ListParams::default()).await.expect("events listed");
        let found: Vec<_> = list
            .items
            .into_iter()
            .filter(|e| e.reason.as_deref() == Some("OwnerRefInvalidNamespace"))
            .map(|e| (e.type_, e.involved_object.name, e.message, e.source.and_then(|s| s.component)))
            .collect();
        let want = (
            Some("Warning".to_owned()),
            Some("misplaced".to_owned()),
            Some(format!(
                "ownerRef [v1/ConfigMap, namespace: {ns}, name: owner, uid: {uid}] does not exist in namespace \
                 \"{ns}\"",
                ns = env.ns
            )),
            Some("garbage-collector-controller".to_owned()),
        );
        if found.contains(&want) { Ok(()) } else { Err(format!("{found:?}")) }
    })
    .await;
    // As upstream: no owner of that name in the dependent's namespace, so
    // the dependent is collected; the owner elsewhere is untouched.
    config_map_gone(&env, "misplaced").await;
    assert!(owners.get_opt("owner").await.expect("get").is_some());
    namespaces.delete(&other, &Default::default()).await.expect("namespace deleted");
    wait_for(&env.cluster, PATIENCE, &format!("namespace {other} to be gone"), || async {
        let left = namespaces.get_opt(&other).await.expect("get namespace");
        left.map_or(Ok(()), |n| Err(format!("{:?}", n.status)))
    })
    .await;
}

async fn a_dependent_with_two_owners_goes_only_with_the_last() {
    let env = start().await;
    let api: Api<ConfigMap> = Api::namespaced(env.client.clone(), &env.ns);
    let mut uids = Vec::new();
    for name in ["owner-1", "owner-2"] {
        let owner: ConfigMap = serde_json::from_value(json!({"metadata": {"name": name}})).expect("valid");
        uids.push(api.create(&PostParams::default(), &owner).await.expect("created").metadata.uid.expect("uid"));
    }
    let shared: ConfigMap = serde_json::from_value(json!({"metadata": {"name": "shared", "ownerReferences": [
        {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner-1", "uid": uids[0]},
        {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner-2", "uid": uids[1]}]}}))
    .expect("valid");
    api.create(&PostParams::default(), &shared).await.expect("created");
    kubectl_delete(&env, "configmap", "owner-1", "background").await;
    // The reference to the gone owner is removed; the dependent stays.
    wait_for(&env.cluster, PATIENCE, "the dangling reference to be removed", || async {
        let cm = config_map(&env, "shared").await.expect("the dependent is kept");
        assert!(cm.metadata.deletion_timestamp.is_none(), "the dependent is being deleted");
        let owners: Vec<String> = cm.metadata.owner_references.unwrap_or_default().into_iter().map(|r| r.uid).collect();
        if owners == [uids[1].clone()] { Ok(()) } else { Err(format!("owners {owners:?}")) }
    })
    .await;
    kubectl_delete(&env, "configmap", "owner-2", "background").await;
    config_map_gone(&env, "shared").await;
}

/// kube-sim only: the deletes fail and the watches drop by kube-sim's
/// faults and controls, and the failed deletes are counted in its stats.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failing_deletes_and_dropped_watches_hold_a_foreground_cascade_until_they_recover() {
    let env = start().await;
    let uid = replica_set_with_pods(&env, "web", 3).await;
    collector::observed(&env, Feed::Pods).await;
    let failing = FaultRule {
        verb: Some("delete".into()),
        resource: Some("pods".into()),
        error_rate: 1.0,
        ..FaultRule::default()
    };
    env.cluster.controls().set_faults(FaultSpec { rules: vec![failing] }).expect("faults set");
    kubectl_delete(&env, "rs", "web", "foreground").await;
    env.cluster.controls().drop_watches();
    wait_for(&env.cluster, PATIENCE, "the collector to retry failed pod deletes", || async {
        let failed = count(&env, "delete", "pods", 500);
        if failed >= 6 { Ok(()) } else { Err(format!("{failed} failed deletes")) }
    })
    .await;
    // Meanwhile the owner is held and no pod is lost.
    let api: Api<ReplicaSet> = Api::namespaced(env.client.clone(), &env.ns);
    let rs = api.get("web").await.expect("the ReplicaSet is still there");
    assert!(rs.metadata.deletion_timestamp.is_some());
    assert_eq!(rs.metadata.finalizers, Some(vec!["foregroundDeletion".to_owned()]));
    assert_eq!(dependents(&env, &pods(), &uid).await.len(), 3);
    env.cluster.controls().clear_faults();
    gone(&env, &replica_sets(), "web").await;
    dependents_gone(&env, &pods(), &uid).await;
}

async fn a_cluster_scoped_owner_cascades_to_namespaced_dependents() {
    let env = start().await;
    let gadgets = CustomResource {
        group: "example.com".into(),
        version: "v1".into(),
        plural: "gadgets".into(),
        kind: "Gadget".into(),
        namespaced: false,
        short_names: vec![],
        verbs: None,
    };
    let known = collector_discovered(&env).await;
    env.serve(&gadgets).await;
    let resource = ApiResource {
        group: "example.com".into(),
        version: "v1".into(),
        api_version: "example.com/v1".into(),
        kind: "Gadget".into(),
        plural: "gadgets".into(),
    };
    let api: Api<DynamicObject> = Api::all_with(env.client.clone(), &resource);
    let obj: DynamicObject =
        serde_json::from_value(json!({"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": {"name": "g"}}))
            .expect("valid");
    let uid = api.create(&PostParams::default(), &obj).await.expect("created").metadata.uid.expect("uid");
    owned_config_map(&env, "of-gadget", ("example.com/v1", "Gadget", "g", &uid)).await;
    // New to the collector, the owner is read live (where a cluster-scoped
    // object lives: only kube-sim counts the reads) and keeps its
    // dependent, until the collector watches its type.
    if backend() == Backend::Sim {
        wait_for(&env.cluster, PATIENCE, "the collector to read the owner", || async {
            let gets = count(&env, "get", "gadgets", 200);
            if gets >= 1 { Ok(()) } else { Err(format!("{gets} reads")) }
        })
        .await;
    }
    monitoring_more_than(&env, known).await;
    assert!(config_map(&env, "of-gadget").await.is_some_and(|c| c.metadata.deletion_timestamp.is_none()));
    api.delete("g", &Default::default()).await.expect("gadget deleted");
    config_map_gone(&env, "of-gadget").await;
}

async fn metrics_name_the_upstream_queues_and_the_graph() {
    let env = start().await;
    replica_set_with_pods(&env, "web", 2).await;
    kubectl_delete(&env, "rs", "web", "orphan").await;
    gone(&env, &replica_sets(), "web").await;
    wait_for(&env.cluster, PATIENCE, "the collector's metrics", || async {
        let (code, body) = env.scrape("/metrics").await;
        let seen = [
            r#"workqueue_adds_total{name="garbage_collector_attempt_to_delete"}"#,
            r#"workqueue_adds_total{name="garbage_collector_attempt_to_orphan"}"#,
            "kcm_garbagecollector_graph_nodes",
            "kcm_garbagecollector_monitored_resources",
        ]
        .map(|s| (s, value(&body, s)));
        let ok = code == 200
            && seen.iter().all(|(_, v)| v.is_some_and(|v| v >= 1.0))
            && value(&body, "garbagecollector_controller_resources_sync_error_total").is_some();
        if ok { Ok(()) } else { Err(format!("code {code}: {seen:?}")) }
    })
    .await;
}
