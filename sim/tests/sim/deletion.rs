//! delete and deletecollection as clients see them: graceful pod
//! deletion, finalizers, propagation policies, preconditions, and the
//! namespace lifecycle (Terminating, refused creates, `/finalize`).

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Pod};
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams, Preconditions};
use serde_json::{Value, json};

use super::util::{self, call, get};

// === utils ===

const CONFIGMAPS: &str = "/api/v1/namespaces/default/configmaps";

fn configmap(name: &str, labels: Value, finalizers: &[&str]) -> ConfigMap {
    serde_json::from_value(json!({"metadata": {"name": name, "labels": labels, "finalizers": finalizers}}))
        .expect("a valid configmap")
}

/// A pod bound to `node` (no scheduler involved).
fn bound_pod(name: &str, node: &str) -> Pod {
    serde_json::from_value(json!({
        "metadata": {"name": name},
        "spec": {"nodeName": node, "containers": [{"name": "app", "image": "nginx"}]},
    }))
    .expect("a valid pod")
}

fn deployment(name: &str) -> Deployment {
    serde_json::from_value(json!({
        "metadata": {"name": name},
        "spec": {
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": [{"name": "app", "image": "nginx"}]}},
        },
    }))
    .expect("a valid deployment")
}

fn namespace(name: &str) -> Namespace {
    serde_json::from_value(json!({"metadata": {"name": name}})).expect("a valid namespace")
}

/// Waits until `name` is gone from `api`.
async fn wait_gone<K>(sim: &kube_sim::Sim, api: &Api<K>, name: &str)
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    kube_sim::testing::wait_for(sim, util::PATIENCE, &format!("{name} to be gone"), || async move {
        match api.get_opt(name).await {
            Ok(None) => Ok(()),
            Ok(Some(o)) => Err(format!("still there: {:?}", o.meta())),
            Err(e) => Err(e.to_string()),
        }
    })
    .await;
}

async fn wait_running(sim: &kube_sim::Sim, api: &Api<Pod>, name: &str) {
    kube_sim::testing::wait_for(sim, util::PATIENCE, &format!("{name} to run"), || async move {
        let pod = api.get(name).await.map_err(|e| e.to_string())?;
        let phase = pod.status.and_then(|s| s.phase).unwrap_or_default();
        if phase == "Running" { Ok(()) } else { Err(phase) }
    })
    .await;
}

fn finalizers<K: kube::Resource>(object: &K) -> Vec<String> {
    object.meta().finalizers.clone().unwrap_or_default()
}

/// The API error of a kube-rs call that must fail.
fn api_error<T: std::fmt::Debug>(result: Result<T, kube::Error>) -> kube::core::Status {
    match result {
        Err(kube::Error::Api(status)) => *status,
        other => panic!("expected an API error, got {other:?}"),
    }
}

// === pods ===

#[tokio::test]
async fn deleting_a_pod_bound_to_a_node_is_graceful_until_the_kubelet_finishes_it() {
    let sim = util::start().await;
    let pods: Api<Pod> = Api::default_namespaced(sim.client().expect("client"));
    pods.create(&PostParams::default(), &bound_pod("web", "node-1")).await.expect("created");
    wait_running(&sim, &pods, "web").await;
    // With the node stopped its kubelet cannot finish the deletion, so the
    // marked state stays observable.
    sim.controls().stop_node("node-1").expect("node-1 exists");
    let answer = pods.delete("web", &DeleteParams::default()).await.expect("deleted");
    let marked = answer.left().expect("a graceful delete answers with the object");
    assert!(marked.metadata.deletion_timestamp.is_some());
    assert_eq!(marked.metadata.deletion_grace_period_seconds, Some(30));

    let stored = pods.get("web").await.expect("still stored during the grace period");
    assert!(stored.metadata.deletion_timestamp.is_some());
    assert_eq!(stored.metadata.deletion_grace_period_seconds, Some(30));
    assert_eq!(stored.metadata.uid, marked.metadata.uid);

    // A second delete may shorten the grace period.
    let shorter = pods.delete("web", &DeleteParams { grace_period_seconds: Some(5), ..Default::default() }).await;
    let shorter = shorter.expect("deleted again").left().expect("still there");
    assert_eq!(shorter.metadata.deletion_grace_period_seconds, Some(5));

    sim.controls().start_node("node-1").expect("node-1 exists");
    wait_gone(&sim, &pods, "web").await;
}

#[tokio::test]
async fn watchers_see_a_graceful_delete_as_modified_then_deleted() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    let pods: Api<Pod> = Api::default_namespaced(client.clone());
    pods.create(&PostParams::default(), &bound_pod("web", "node-1")).await.expect("created");
    wait_running(&sim, &pods, "web").await;
    let list = get(&client, "/api/v1/namespaces/default/pods").await.json();
    let from = list["metadata"]["resourceVersion"].as_str().expect("list version").to_owned();
    let path = format!("/api/v1/namespaces/default/pods?watch=true&resourceVersion={from}");
    let mut watch = util::Watch::open(&client, &path).await;
    pods.delete("web", &DeleteParams::default()).await.expect("deleted");
    let marked = watch.expect_change().await;
    assert_eq!(marked["type"], "MODIFIED");
    assert!(marked["object"]["metadata"]["deletionTimestamp"].is_string(), "{marked}");
    // The kubelet stand-in may write the pod's status before it goes.
    loop {
        let e = watch.expect_change().await;
        if e["type"] == "DELETED" {
            assert_eq!(e["object"]["metadata"]["name"], "web");
            break;
        }
        assert_eq!(e["type"], "MODIFIED", "{e}");
    }
}

#[tokio::test]
async fn delete_with_grace_period_zero_is_immediate() {
    let sim = util::start().await;
    let pods: Api<Pod> = Api::default_namespaced(sim.client().expect("client"));
    pods.create(&PostParams::default(), &bound_pod("web", "node-1")).await.expect("created");
    wait_running(&sim, &pods, "web").await;
    sim.controls().stop_node("node-1").expect("node-1 exists");
    pods.delete("web", &DeleteParams { grace_period_seconds: Some(0), ..Default::default() }).await.expect("deleted");
    assert!(pods.get_opt("web").await.expect("get").is_none(), "gone at once, with no kubelet involved");
}

#[tokio::test]
async fn deleting_an_unscheduled_pod_is_immediate() {
    let sim = util::start().await;
    let pods: Api<Pod> = Api::default_namespaced(sim.client().expect("client"));
    let pod: Pod = serde_json::from_value(json!({
        "metadata": {"name": "stuck"},
        "spec": {"nodeSelector": {"kubernetes.io/hostname": "nowhere"}, "containers": [{"name": "app", "image": "nginx"}]},
    }))
    .expect("pod");
    pods.create(&PostParams::default(), &pod).await.expect("created");
    pods.delete("stuck", &DeleteParams::default()).await.expect("deleted");
    assert!(pods.get_opt("stuck").await.expect("get").is_none());
}

// === finalizers ===

#[tokio::test]
async fn an_object_with_a_finalizer_stays_until_the_finalizer_is_removed() {
    let sim = util::start().await;
    let api: Api<ConfigMap> = Api::default_namespaced(sim.client().expect("client"));
    api.create(&PostParams::default(), &configmap("held", json!({}), &["example.com/hold"])).await.expect("created");
    let marked = api.delete("held", &DeleteParams::default()).await.expect("deleted").left().expect("still there");
    assert!(marked.metadata.deletion_timestamp.is_some());
    assert_eq!(marked.metadata.deletion_grace_period_seconds, Some(0));

    let stored = api.get("held").await.expect("held by its finalizer");
    assert!(stored.metadata.deletion_timestamp.is_some());
    assert_eq!(finalizers(&stored), ["example.com/hold"]);
    // Other changes are still allowed while it is held.
    let patch = Patch::Merge(json!({"metadata": {"labels": {"x": "y"}}}));
    api.patch("held", &PatchParams::default(), &patch).await.expect("labels may change");
    assert!(api.get("held").await.expect("held").metadata.deletion_timestamp.is_some());

    let patch = Patch::Merge(json!({"metadata": {"finalizers": null}}));
    api.patch("held", &PatchParams::default(), &patch).await.expect("finalizer removed");
    assert!(api.get_opt("held").await.expect("get").is_none(), "gone with its last finalizer");
}

#[tokio::test]
async fn no_new_finalizers_can_be_added_once_deleting() {
    let sim = util::start().await;
    let api: Api<ConfigMap> = Api::default_namespaced(sim.client().expect("client"));
    api.create(&PostParams::default(), &configmap("held", json!({}), &["example.com/a"])).await.expect("created");
    api.delete("held", &DeleteParams::default()).await.expect("deleted");
    let patch = Patch::Merge(json!({"metadata": {"finalizers": ["example.com/a", "example.com/b"]}}));
    let status = api_error(api.patch("held", &PatchParams::default(), &patch).await);
    assert_eq!((status.code, status.reason.as_str()), (422, "Invalid"));
    assert_eq!(
        status.message,
        "ConfigMap \"held\" is invalid: metadata.finalizers: Forbidden: no new finalizers can be added if the \
         object is being deleted, found new finalizers []string{\"example.com/b\"}"
    );
    let cause = status.details.and_then(|d| d.causes.into_iter().next()).expect("a cause");
    assert_eq!((cause.reason.as_str(), cause.field.as_str()), ("FieldValueForbidden", "metadata.finalizers"));
    assert_eq!(finalizers(&api.get("held").await.expect("held")), ["example.com/a"]);
}

#[tokio::test]
async fn propagation_policies_set_the_garbage_collector_finalizers() {
    let sim = util::start().await;
    let api: Api<Deployment> = Api::default_namespaced(sim.client().expect("client"));
    for (name, params, finalizer) in [
        ("orphaned", DeleteParams::orphan(), "orphan"),
        ("foreground", DeleteParams::foreground(), "foregroundDeletion"),
    ] {
        api.create(&PostParams::default(), &deployment(name)).await.expect("created");
        api.delete(name, &params).await.expect("deleted");
        let stored = api.get(name).await.expect("held for the garbage collector");
        assert!(stored.metadata.deletion_timestamp.is_some(), "{name}");
        assert_eq!(finalizers(&stored), [finalizer], "{name}");
        // Removing the finalizer, as the garbage collector does, finishes it.
        let patch = Patch::Merge(json!({"metadata": {"finalizers": null}}));
        api.patch(name, &PatchParams::default(), &patch).await.expect("finalizer removed");
        wait_gone(&sim, &api, name).await;
    }
    api.create(&PostParams::default(), &deployment("background")).await.expect("created");
    api.delete("background", &DeleteParams::background()).await.expect("deleted");
    assert!(api.get_opt("background").await.expect("get").is_none(), "background deletion is immediate");

    // The same policies as query parameters.
    let client = sim.client().expect("client");
    let configmaps: Api<ConfigMap> = Api::default_namespaced(client.clone());
    configmaps.create(&PostParams::default(), &configmap("q", json!({}), &[])).await.expect("created");
    let answer = call(&client, "DELETE", &format!("{CONFIGMAPS}/q?propagationPolicy=Orphan"), &[], None).await;
    assert_eq!(answer.code(), 200);
    assert_eq!(answer.json()["metadata"]["finalizers"], json!(["orphan"]));
    let answer = call(&client, "DELETE", &format!("{CONFIGMAPS}/q?propagationPolicy=Sideways"), &[], None).await;
    assert_eq!((answer.code(), answer.json()["reason"].clone()), (400, json!("BadRequest")));
}

#[tokio::test]
async fn delete_preconditions_that_do_not_match_are_a_conflict() {
    let sim = util::start().await;
    let api: Api<ConfigMap> = Api::default_namespaced(sim.client().expect("client"));
    let created = api.create(&PostParams::default(), &configmap("c", json!({}), &[])).await.expect("created");
    let uid = created.metadata.uid.clone();
    let rv = created.metadata.resource_version.clone();
    let with = |uid: Option<String>, resource_version: Option<String>| DeleteParams {
        preconditions: Some(Preconditions { uid, resource_version }),
        ..Default::default()
    };

    let status = api_error(api.delete("c", &with(Some("not-the-uid".into()), None)).await);
    assert_eq!((status.code, status.reason.as_str()), (409, "Conflict"));
    assert!(status.message.contains("Precondition failed: UID in precondition: not-the-uid"), "{}", status.message);
    let status = api_error(api.delete("c", &with(None, Some("1".into()))).await);
    assert_eq!((status.code, status.reason.as_str()), (409, "Conflict"));
    assert!(status.message.contains("Precondition failed: ResourceVersion in precondition: 1"), "{}", status.message);
    assert!(api.get_opt("c").await.expect("get").is_some(), "a failed precondition deletes nothing");

    api.delete("c", &with(uid, rv)).await.expect("matching preconditions delete");
    assert!(api.get_opt("c").await.expect("get").is_none());
}

#[tokio::test]
async fn delete_of_a_missing_object_is_not_found() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    let answer = call(&client, "DELETE", &format!("{CONFIGMAPS}/ghost"), &[], None).await;
    assert_eq!(answer.code(), 404);
    let status = answer.json();
    assert_eq!(status["reason"], "NotFound");
    assert_eq!(status["details"], json!({"name": "ghost", "kind": "configmaps"}));
}

#[tokio::test]
async fn deletecollection_with_a_label_selector_deletes_only_the_matching_objects() {
    let sim = util::start_bare().await;
    let client = sim.client().expect("client");
    let api: Api<ConfigMap> = Api::default_namespaced(client.clone());
    let system: Api<ConfigMap> = Api::namespaced(client.clone(), "kube-system");
    for (name, app) in [("a", "web"), ("b", "web"), ("c", "db")] {
        api.create(&PostParams::default(), &configmap(name, json!({"app": app}), &[])).await.expect("created");
    }
    system.create(&PostParams::default(), &configmap("w", json!({"app": "web"}), &[])).await.expect("created");

    let deleted = api
        .delete_collection(&DeleteParams::default(), &ListParams::default().labels("app=web"))
        .await
        .expect("deleted")
        .left()
        .expect("the deleted objects");
    let mut deleted: Vec<String> = deleted.items.iter().filter_map(|c| c.metadata.name.clone()).collect();
    deleted.sort();
    assert_eq!(deleted, ["a", "b"]);
    let left: Vec<String> = api
        .list(&ListParams::default())
        .await
        .expect("list")
        .items
        .into_iter()
        .filter_map(|c| c.metadata.name)
        .collect();
    assert_eq!(left, ["c"]);
    assert!(system.get_opt("w").await.expect("get").is_some(), "other namespaces are untouched");
}

// === namespaces ===

#[tokio::test]
async fn a_new_namespace_is_active_with_the_kubernetes_finalizer() {
    let sim = util::start().await;
    let namespaces: Api<Namespace> = Api::all(sim.client().expect("client"));
    let created = namespaces.create(&PostParams::default(), &namespace("team")).await.expect("created");
    assert_eq!(created.spec.and_then(|s| s.finalizers), Some(vec!["kubernetes".to_owned()]));
    assert_eq!(created.status.and_then(|s| s.phase).as_deref(), Some("Active"));
    let labels = created.metadata.labels.unwrap_or_default();
    assert_eq!(labels.get("kubernetes.io/metadata.name").map(String::as_str), Some("team"));
}

#[tokio::test]
async fn deleting_a_namespace_marks_it_terminating() {
    let sim = util::start().await;
    let namespaces: Api<Namespace> = Api::all(sim.client().expect("client"));
    namespaces.create(&PostParams::default(), &namespace("team")).await.expect("created");
    let answer = namespaces.delete("team", &DeleteParams::default()).await.expect("deleted");
    let marked = answer.left().expect("the namespace stays");
    assert_eq!(marked.status.and_then(|s| s.phase).as_deref(), Some("Terminating"));
    let stored = namespaces.get("team").await.expect("still there");
    assert!(stored.metadata.deletion_timestamp.is_some());
    assert_eq!(stored.status.and_then(|s| s.phase).as_deref(), Some("Terminating"));
    assert_eq!(stored.spec.and_then(|s| s.finalizers), Some(vec!["kubernetes".to_owned()]));

    // Deleting it again is a conflict while its finalizers are pending.
    let status = api_error(namespaces.delete("team", &DeleteParams::default()).await);
    assert_eq!((status.code, status.reason.as_str()), (409, "Conflict"));
    assert_eq!(
        status.message,
        "Operation cannot be fulfilled on namespaces \"team\": The system is ensuring all content is removed from \
         this namespace.  Upon completion, this namespace will automatically be purged by the system."
    );
    assert!(namespaces.get_opt("team").await.expect("get").is_some());
}

#[tokio::test]
async fn creates_in_a_terminating_namespace_are_forbidden() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    let namespaces: Api<Namespace> = Api::all(client.clone());
    namespaces.create(&PostParams::default(), &namespace("team")).await.expect("created");
    let configmaps: Api<ConfigMap> = Api::namespaced(client.clone(), "team");
    configmaps
        .create(&PostParams::default(), &configmap("before", json!({}), &[]))
        .await
        .expect("allowed while Active");
    namespaces.delete("team", &DeleteParams::default()).await.expect("deleted");

    let answer = call(
        &client,
        "POST",
        "/api/v1/namespaces/team/configmaps",
        &[],
        Some(&json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "after"}})),
    )
    .await;
    assert_eq!(answer.code(), 403);
    let status = answer.json();
    assert_eq!(status["reason"], "Forbidden");
    assert_eq!(
        status["message"],
        "configmaps \"after\" is forbidden: unable to create new content in namespace team because it is being terminated"
    );
    assert_eq!(status["details"]["causes"][0]["reason"], "NamespaceTerminating");
    assert_eq!(status["details"]["causes"][0]["field"], "metadata.namespace");
    // Existing content can still be read and updated.
    let patch = Patch::Merge(json!({"data": {"k": "v"}}));
    configmaps.patch("before", &PatchParams::default(), &patch).await.expect("updates still allowed");
}

#[tokio::test]
async fn finalize_with_no_finalizers_removes_a_terminating_namespace() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    let namespaces: Api<Namespace> = Api::all(client.clone());
    namespaces.create(&PostParams::default(), &namespace("team")).await.expect("created");

    // Finalizing an Active namespace only updates its finalizers.
    let mut ns = serde_json::to_value(namespaces.get("team").await.expect("team")).expect("json");
    ns["spec"]["finalizers"] = json!(["kubernetes", "example.com/extra"]);
    let answer = call(&client, "PUT", "/api/v1/namespaces/team/finalize", &[], Some(&ns)).await;
    assert_eq!(answer.code(), 200, "{}", answer.body);
    assert_eq!(answer.json()["spec"]["finalizers"], json!(["kubernetes", "example.com/extra"]));

    namespaces.delete("team", &DeleteParams::default()).await.expect("deleted");
    let mut ns = serde_json::to_value(namespaces.get("team").await.expect("team")).expect("json");
    ns["spec"]["finalizers"] = json!([]);
    let answer = call(&client, "PUT", "/api/v1/namespaces/team/finalize", &[], Some(&ns)).await;
    assert_eq!(answer.code(), 200, "{}", answer.body);
    assert_eq!(get(&client, "/api/v1/namespaces/team").await.code(), 404, "gone once finalized");
}

#[tokio::test]
async fn only_finalize_changes_a_namespace_s_finalizers() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    let namespaces: Api<Namespace> = Api::all(client.clone());
    namespaces.create(&PostParams::default(), &namespace("team")).await.expect("created");
    namespaces.delete("team", &DeleteParams::default()).await.expect("deleted");

    // An update of the namespace itself keeps spec.finalizers (and status),
    // so it cannot end a namespace's deletion behind the controller's back.
    let mut ns = namespaces.get("team").await.expect("team");
    ns.spec.as_mut().expect("spec").finalizers = Some(Vec::new());
    ns.metadata.labels.get_or_insert_default().insert("x".into(), "y".into());
    let updated = namespaces.replace("team", &PostParams::default(), &ns).await.expect("updated");
    assert_eq!(updated.spec.and_then(|s| s.finalizers), Some(vec!["kubernetes".to_owned()]));
    assert_eq!(updated.metadata.labels.unwrap_or_default().get("x").map(String::as_str), Some("y"));
    let patch = Patch::Merge(json!({"spec": {"finalizers": null}, "status": {"phase": "Active"}}));
    let patched = namespaces.patch("team", &PatchParams::default(), &patch).await.expect("patched");
    assert_eq!(patched.spec.and_then(|s| s.finalizers), Some(vec!["kubernetes".to_owned()]));
    assert_eq!(patched.status.and_then(|s| s.phase).as_deref(), Some("Terminating"));
    assert!(namespaces.get_opt("team").await.expect("get").is_some(), "still terminating");
}

/// A delete without preconditions that races with other writes to the
/// object is not refused: the API server starts it over (its guaranteed
/// update), and so does kube-sim, for a plain delete and for the mark of an
/// object held by a finalizer alike.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_delete_racing_with_updates_is_retried_not_refused() {
    let sim = util::start().await;
    let api: Api<ConfigMap> = Api::default_namespaced(sim.client().expect("client"));
    for round in 0..40 {
        let finalizers: &[&str] = if round % 2 == 0 { &[] } else { &["kcm-rs.test/hold"] };
        api.create(&PostParams::default(), &configmap("raced", json!({}), finalizers)).await.expect("created");
        let writers: Vec<_> = (0..3)
            .map(|w| {
                let api = api.clone();
                tokio::spawn(async move {
                    for i in 0..20 {
                        let patch = json!({"metadata": {"labels": {format!("w{w}"): i.to_string()}}});
                        // The delete may win: a missing object ends the writer.
                        if api.patch("raced", &PatchParams::default(), &Patch::Merge(&patch)).await.is_err() {
                            break;
                        }
                    }
                })
            })
            .collect();
        let deleted = api.delete("raced", &DeleteParams::default()).await;
        assert!(deleted.is_ok(), "round {round}: {:?}", deleted.err());
        for writer in writers {
            writer.await.expect("writer");
        }
        if !finalizers.is_empty() {
            let release = json!({"metadata": {"finalizers": null}});
            api.patch("raced", &PatchParams::default(), &Patch::Merge(&release)).await.expect("released");
        }
        assert!(api.get_opt("raced").await.expect("get").is_none(), "round {round}: gone");
    }
}
