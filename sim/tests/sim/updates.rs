//! What an update or a patch may change, as the API server decides it:
//! every patch type on `/scale`, the metadata the server owns or freezes
//! (uid, name, namespace, timestamps), the few fields of a pod that may
//! change, immutable spec fields, and optional fields left empty.

use kube_sim::testing::{kubeconfig, kubectl_ok};
use serde_json::{Value, json};

use super::util::{self, Answer, call, create, get, workload};

// === utils ===

const DEPLOYMENTS: &str = "/apis/apps/v1/namespaces/default/deployments";
const REPLICA_SETS: &str = "/apis/apps/v1/namespaces/default/replicasets";
const PODS: &str = "/api/v1/namespaces/default/pods";
const STRATEGIC: (&str, &str) = ("content-type", "application/strategic-merge-patch+json");
const MERGE: (&str, &str) = ("content-type", "application/merge-patch+json");
const JSON_PATCH: (&str, &str) = ("content-type", "application/json-patch+json");

/// A pod named `name`, not yet bound to a node.
fn pod(name: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "annotations": {"kube-sim.io/ready": "never"}},
        "spec": {
            "schedulerName": "nobody",
            "containers": [{"name": "app", "image": "nginx:1"}],
            "tolerations": [{"key": "a", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 10}],
        },
    })
}

/// Code, reason and message of an answer.
fn refusal(answer: &Answer) -> (u16, String, String) {
    let status = answer.json();
    let text = |k: &str| status[k].as_str().unwrap_or("").to_owned();
    (answer.code(), text("reason"), text("message"))
}

// === scale ===

#[tokio::test]
async fn every_patch_type_works_on_the_scale_subresource() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    for (kind, collection) in [("Deployment", DEPLOYMENTS), ("ReplicaSet", REPLICA_SETS)] {
        create(&client, collection, &workload(kind, "web", 1)).await;
        let scale = format!("{collection}/web/scale");
        // What upstream's conformance test sends.
        let answer = call(&client, "PATCH", &scale, &[STRATEGIC], Some(&json!({"spec": {"replicas": 2}}))).await;
        assert_eq!(answer.code(), 200, "{kind}: {}", answer.body);
        assert_eq!((&answer.json()["kind"], &answer.json()["spec"]["replicas"]), (&json!("Scale"), &json!(2)));
        let answer = call(&client, "PATCH", &scale, &[MERGE], Some(&json!({"spec": {"replicas": 3}}))).await;
        assert_eq!(answer.json()["spec"]["replicas"], 3, "{kind}");
        let ops = json!([{"op": "replace", "path": "/spec/replicas", "value": 4}]);
        let answer = call(&client, "PATCH", &scale, &[JSON_PATCH], Some(&ops)).await;
        assert_eq!(answer.json()["spec"]["replicas"], 4, "{kind}");
        assert_eq!(get(&client, &format!("{collection}/web")).await.json()["spec"]["replicas"], 4, "{kind}");
    }

    let (_dir, config) = kubeconfig(&sim);
    for (patch_type, patch) in [("strategic", r#"{"spec":{"replicas":5}}"#), ("merge", r#"{"spec":{"replicas":6}}"#)] {
        let out = kubectl_ok(
            &config,
            &["patch", "deployment", "web", "--subresource=scale", "--type", patch_type, "-p", patch],
        )
        .await;
        // kubectl names the object it got back.
        assert_eq!(out.trim(), "scale.autoscaling/web patched", "{patch_type}");
    }
    assert_eq!(
        kubectl_ok(&config, &["scale", "replicaset", "web", "--replicas=6"]).await.trim(),
        "replicaset.apps/web scaled"
    );
    assert_eq!(get(&client, &format!("{REPLICA_SETS}/web")).await.json()["spec"]["replicas"], 6);
}

// === metadata ===

#[tokio::test]
async fn a_put_with_another_uid_fails_its_precondition_and_an_empty_uid_is_the_stored_one() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    let created = create(&client, DEPLOYMENTS, &workload("Deployment", "web", 1)).await;
    let uid = created["metadata"]["uid"].as_str().expect("a uid").to_owned();
    let path = format!("{DEPLOYMENTS}/web");

    let mut forged = created.clone();
    forged["metadata"]["uid"] = json!("forged");
    let answer = call(&client, "PUT", &path, &[], Some(&forged)).await;
    let expected = format!(
        "Operation cannot be fulfilled on deployments.apps \"web\": StorageError: invalid object, Code: 4, \
         Key: /registry/deployments/default/web, ResourceVersion: 0, AdditionalErrorMsg: \
         Precondition failed: UID in precondition: forged, UID in object meta: {uid}"
    );
    assert_eq!(refusal(&answer), (409, "Conflict".to_owned(), expected));
    // The same precondition holds for the status and scale subresources.
    let answer = call(&client, "PUT", &format!("{path}/status"), &[], Some(&forged)).await;
    assert_eq!(answer.code(), 409, "{}", answer.body);
    let mut scale = get(&client, &format!("{path}/scale")).await.json();
    scale["metadata"]["uid"] = json!("forged");
    assert_eq!(call(&client, "PUT", &format!("{path}/scale"), &[], Some(&scale)).await.code(), 409);

    let mut anonymous = created.clone();
    anonymous["metadata"].as_object_mut().expect("metadata").remove("uid");
    anonymous["spec"]["replicas"] = json!(2);
    let answer = call(&client, "PUT", &path, &[], Some(&anonymous)).await;
    assert_eq!(answer.code(), 200, "{}", answer.body);
    assert_eq!(answer.json()["metadata"]["uid"], json!(uid));
}

#[tokio::test]
async fn a_patch_that_changes_the_uid_is_invalid() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    create(&client, DEPLOYMENTS, &workload("Deployment", "web", 1)).await;
    let path = format!("{DEPLOYMENTS}/web");
    for (header, body) in [
        (MERGE, json!({"metadata": {"uid": "forged"}})),
        (STRATEGIC, json!({"metadata": {"uid": "forged"}})),
        (JSON_PATCH, json!([{"op": "replace", "path": "/metadata/uid", "value": "forged"}])),
    ] {
        let answer = call(&client, "PATCH", &path, &[header], Some(&body)).await;
        let expected = r#"Deployment.apps "web" is invalid: metadata.uid: Invalid value: "forged": field is immutable"#;
        assert_eq!(refusal(&answer), (422, "Invalid".to_owned(), expected.to_owned()), "{}", header.1);
    }
}

#[tokio::test]
async fn name_and_namespace_must_be_the_urls() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    let created = create(&client, DEPLOYMENTS, &workload("Deployment", "web", 1)).await;
    let path = format!("{DEPLOYMENTS}/web");
    let bad_request = |message: &str| (400, "BadRequest".to_owned(), message.to_owned());

    let mut moved = created.clone();
    moved["metadata"]["namespace"] = json!("other");
    assert_eq!(
        refusal(&call(&client, "PUT", &path, &[], Some(&moved)).await),
        bad_request("the namespace of the object (other) does not match the namespace on the URL (default)")
    );
    let answer = call(&client, "PATCH", &path, &[MERGE], Some(&json!({"metadata": {"name": "other"}}))).await;
    assert_eq!(
        refusal(&answer),
        bad_request("the name of the object (other) does not match the name on the URL (web)")
    );
    let answer = call(&client, "PATCH", &path, &[STRATEGIC], Some(&json!({"metadata": {"namespace": "other"}}))).await;
    assert_eq!(
        refusal(&answer),
        bad_request("the namespace of the object (other) does not match the namespace on the URL (default)")
    );

    // An empty namespace is the URL's.
    let mut unplaced = created.clone();
    unplaced["metadata"].as_object_mut().expect("metadata").remove("namespace");
    unplaced["metadata"]["labels"] = json!({"x": "y"});
    let answer = call(&client, "PUT", &path, &[], Some(&unplaced)).await;
    assert_eq!((answer.code(), answer.json()["metadata"]["namespace"].clone()), (200, json!("default")));
}

#[tokio::test]
async fn server_owned_metadata_is_kept_and_deletion_metadata_cannot_be_set() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    let created = create(&client, DEPLOYMENTS, &workload("Deployment", "web", 1)).await;
    let path = format!("{DEPLOYMENTS}/web");

    // creationTimestamp and generation are the server's: silently kept.
    let mut rewritten = created.clone();
    rewritten["metadata"]["creationTimestamp"] = json!("2001-01-01T00:00:00Z");
    rewritten["metadata"]["generation"] = json!(40);
    rewritten["metadata"]["selfLink"] = json!("/somewhere");
    rewritten["metadata"]["labels"] = json!({"x": "y"});
    let answer = call(&client, "PUT", &path, &[], Some(&rewritten)).await;
    assert_eq!(answer.code(), 200, "{}", answer.body);
    let metadata = &answer.json()["metadata"];
    assert_eq!(
        (&metadata["creationTimestamp"], &metadata["generation"], metadata.get("selfLink")),
        (&created["metadata"]["creationTimestamp"], &json!(1), None)
    );

    // A deletion timestamp or grace period comes only from a delete.
    let stamp = json!({"metadata": {"deletionTimestamp": "2026-01-02T03:04:05Z"}});
    let expected = "Deployment.apps \"web\" is invalid: metadata.deletionTimestamp: \
                    Invalid value: 2026-01-02 03:04:05 +0000 UTC: field is immutable";
    let answer = call(&client, "PATCH", &path, &[MERGE], Some(&stamp)).await;
    assert_eq!(refusal(&answer), (422, "Invalid".to_owned(), expected.to_owned()));
    let grace = json!({"metadata": {"deletionGracePeriodSeconds": 30}});
    let expected = "Deployment.apps \"web\" is invalid: metadata.deletionGracePeriodSeconds: \
                    Invalid value: 30: field is immutable";
    let answer = call(&client, "PATCH", &path, &[MERGE], Some(&grace)).await;
    assert_eq!(refusal(&answer), (422, "Invalid".to_owned(), expected.to_owned()));
}

// === empty optional fields ===

#[tokio::test]
async fn optional_lists_and_maps_left_empty_are_not_stored() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    let owner = create(&client, DEPLOYMENTS, &workload("Deployment", "web", 1)).await;
    let mut rs = workload("ReplicaSet", "web-1", 1);
    rs["metadata"]["ownerReferences"] = json!([{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web",
        "uid": owner["metadata"]["uid"], "controller": true}]);
    rs["spec"]["template"]["spec"]["containers"][0]["env"] = json!([]);
    rs["spec"]["template"]["spec"]["volumes"] = json!([]);
    let created = create(&client, REPLICA_SETS, &rs).await;
    let container = &created["spec"]["template"]["spec"]["containers"][0];
    assert_eq!((container.get("env"), created["spec"]["template"]["spec"].get("volumes")), (None, None));

    // What the garbage collector does when the owner is deleted with
    // --cascade=orphan: the owner reference is patched away.
    let path = format!("{REPLICA_SETS}/web-1");
    let orphaning = json!({"metadata": {"ownerReferences": [{"$patch": "delete", "uid": owner["metadata"]["uid"]}],
        "uid": created["metadata"]["uid"]}});
    let answer = call(&client, "PATCH", &path, &[STRATEGIC], Some(&orphaning)).await;
    assert_eq!(answer.code(), 200, "{}", answer.body);
    assert_eq!(answer.json()["metadata"].get("ownerReferences"), None, "{}", answer.body);
    let ops = json!([{"op": "replace", "path": "/metadata/labels", "value": {}}]);
    let answer = call(&client, "PATCH", &path, &[JSON_PATCH], Some(&ops)).await;
    assert_eq!(answer.json()["metadata"].get("labels"), None, "{}", answer.body);
    let stored = get(&client, &path).await.json();
    assert_eq!((stored["metadata"].get("ownerReferences"), stored["metadata"].get("labels")), (None, None));
    // Required lists and empty structs are still written.
    let containers = &stored["spec"]["template"]["spec"]["containers"];
    assert_eq!((containers[0]["resources"].clone(), stored["status"].is_object()), (json!({}), true), "{stored}");

    // A custom resource is kept as written.
    let resource = json!({"group": "example.com", "version": "v1", "plural": "widgets", "kind": "Widget",
        "namespaced": true});
    assert!(call(&client, "POST", "/sim/v1/resources", &[], Some(&resource)).await.status.is_success());
    let widget = json!({"apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": {"name": "w", "labels": {}}, "spec": {"items": []}});
    let created = create(&client, "/apis/example.com/v1/namespaces/default/widgets", &widget).await;
    assert_eq!((&created["metadata"]["labels"], &created["spec"]["items"]), (&json!({}), &json!([])));
}

/// The API server encodes from Go types: a plain (non-pointer) scalar
/// tagged `omitempty` is never written at its zero value, a pointer's zero
/// is. kcm-rs's daemonset-controller writes `updatedNumberScheduled: 0`
/// while no pod has the new template; kube-apiserver returns no such field.
#[tokio::test]
async fn zero_values_of_plain_omitempty_scalars_are_not_stored() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    let mut ds = workload("DaemonSet", "agent", 0);
    ds["spec"].as_object_mut().expect("spec").remove("replicas");
    ds["spec"]["template"]["spec"]["hostNetwork"] = json!(false);
    let created = create(&client, "/apis/apps/v1/namespaces/default/daemonsets", &ds).await;
    assert_eq!(created["spec"]["template"]["spec"].get("hostNetwork"), None, "{created}");
    let status = json!({"status": {"currentNumberScheduled": 0, "numberMisscheduled": 0,
        "desiredNumberScheduled": 3, "numberReady": 0, "observedGeneration": 1, "updatedNumberScheduled": 0,
        "numberAvailable": 0, "numberUnavailable": 3}});
    let answer = util::merge(&client, "/apis/apps/v1/namespaces/default/daemonsets/agent/status", status).await;
    assert_eq!(answer.code(), 200, "{}", answer.body);
    let written = &answer.json()["status"];
    assert_eq!(
        *written,
        json!({"currentNumberScheduled": 0, "numberMisscheduled": 0, "desiredNumberScheduled": 3,
            "numberReady": 0, "observedGeneration": 1, "numberUnavailable": 3}),
        "updatedNumberScheduled and numberAvailable are plain int32 omitempty"
    );

    // A ReplicaSet's terminatingReplicas is a pointer: its 0 stays.
    create(&client, REPLICA_SETS, &workload("ReplicaSet", "web-1", 0)).await;
    let status = json!({"status": {"replicas": 0, "readyReplicas": 0, "terminatingReplicas": 0}});
    let answer = util::merge(&client, &format!("{REPLICA_SETS}/web-1/status"), status).await;
    assert_eq!(answer.code(), 200, "{}", answer.body);
    assert_eq!(answer.json()["status"], json!({"replicas": 0, "terminatingReplicas": 0}));
}

// === pods ===

#[tokio::test]
async fn a_pod_update_may_change_only_what_upstream_lets_change() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    let mut bound = pod("p");
    bound["spec"]["nodeName"] = json!("node-1");
    create(&client, PODS, &bound).await;
    let path = format!("{PODS}/p");
    let patch = |body: Value| {
        let (client, path) = (client.clone(), path.clone());
        async move { call(&client, "PATCH", &path, &[STRATEGIC], Some(&body)).await }
    };

    // Images, a lower deadline, more tolerations and labels may change (a
    // strategic merge patch replaces the tolerations list: it has no merge
    // key).
    let mut tolerations = get(&client, &path).await.json()["spec"]["tolerations"].clone();
    let before = tolerations.as_array().map_or(0, Vec::len);
    tolerations.as_array_mut().expect("tolerations").push(json!({"key": "b", "operator": "Exists"}));
    let allowed = json!({"metadata": {"labels": {"x": "y"}}, "spec": {
        "containers": [{"name": "app", "image": "nginx:2"}], "activeDeadlineSeconds": 60,
        "tolerations": tolerations}});
    let answer = patch(allowed).await;
    assert_eq!(answer.code(), 200, "{}", answer.body);
    assert_eq!(answer.json()["spec"]["containers"][0]["image"], "nginx:2");
    assert_eq!(answer.json()["spec"]["tolerations"].as_array().map(Vec::len), Some(before + 1));

    let prefix = "Pod \"p\" is invalid: spec: Forbidden: pod updates may not change fields other than \
                  `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,\
                  `spec.tolerations` (only additions to existing tolerations),\
                  `spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)\n";
    for refused in [
        json!({"spec": {"nodeName": "node-2"}}),
        json!({"spec": {"containers": [{"name": "app", "resources": {"limits": {"cpu": "1"}}}]}}),
        json!({"spec": {"ephemeralContainers": [{"name": "debug", "image": "busybox"}]}}),
        json!({"spec": {"restartPolicy": "Never"}}),
    ] {
        let (code, reason, message) = refusal(&patch(refused.clone()).await);
        assert_eq!((code, reason.as_str()), (422, "Invalid"), "{refused}: {message}");
        assert!(message.starts_with(prefix), "{refused}: {message}");
    }
    let (code, _, message) = refusal(&patch(json!({"spec": {"activeDeadlineSeconds": 90}})).await);
    assert_eq!(
        (code, message.as_str()),
        (
            422,
            "Pod \"p\" is invalid: spec.activeDeadlineSeconds: Invalid value: 90: \
             must be less than or equal to previous value"
        )
    );
    let (code, _, message) =
        refusal(&patch(json!({"spec": {"tolerations": [{"key": "b", "operator": "Exists"}]}})).await);
    assert_eq!(
        (code, message.as_str()),
        (
            422,
            "Pod \"p\" is invalid: spec.tolerations: Forbidden: \
             existing toleration can not be modified except its tolerationSeconds"
        )
    );

    // A status write cannot change the spec either.
    let mut current = get(&client, &path).await.json();
    current["spec"]["nodeName"] = json!("node-3");
    let answer = call(&client, "PUT", &format!("{path}/status"), &[], Some(&current)).await;
    assert_eq!(answer.code(), 200, "{}", answer.body);
    assert_eq!(get(&client, &path).await.json()["spec"]["nodeName"], "node-1");

    // kubectl set image is one of the updates a pod takes.
    let (_dir, config) = kubeconfig(&sim);
    assert_eq!(kubectl_ok(&config, &["set", "image", "pod/p", "app=nginx:3"]).await.trim(), "pod/p image updated");
    assert_eq!(get(&client, &path).await.json()["spec"]["containers"][0]["image"], "nginx:3");
}

// === immutable spec fields ===

#[tokio::test]
async fn selectors_and_immutable_data_cannot_change() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    let reselect = json!({"spec": {"selector": {"matchLabels": {"tier": "x"}},
        "template": {"metadata": {"labels": {"tier": "x"}}}}});
    for (kind, collection) in [("Deployment", DEPLOYMENTS), ("ReplicaSet", REPLICA_SETS)] {
        create(&client, collection, &workload(kind, "web", 1)).await;
        let answer = call(&client, "PATCH", &format!("{collection}/web"), &[STRATEGIC], Some(&reselect)).await;
        let expected = format!(
            "{kind}.apps \"web\" is invalid: spec.selector: Invalid value: \
             v1.LabelSelector{{MatchLabels:map[string]string{{\"app\":\"web\", \"tier\":\"x\"}}, \
             MatchExpressions:[]v1.LabelSelectorRequirement(nil)}}: field is immutable"
        );
        assert_eq!(refusal(&answer), (422, "Invalid".to_owned(), expected));
    }

    let configmaps = "/api/v1/namespaces/default/configmaps";
    let frozen = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "immutable": true,
        "data": {"a": "1"}});
    create(&client, configmaps, &frozen).await;
    let answer = call(&client, "PATCH", &format!("{configmaps}/c"), &[MERGE], Some(&json!({"data": {"a": "2"}}))).await;
    let expected = "ConfigMap \"c\" is invalid: data: Forbidden: field is immutable when `immutable` is set";
    assert_eq!(refusal(&answer), (422, "Invalid".to_owned(), expected.to_owned()));
}
