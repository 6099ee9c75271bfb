//! create, update and patch as clients see them: server-owned metadata,
//! optimistic concurrency, generation, the status and scale subresources,
//! the three patch types, validation, `fieldValidation`, defaulting and
//! dry runs.

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

use super::util::{self, call, get, workload};

// === utils ===

const DEPLOYMENTS: &str = "/apis/apps/v1/namespaces/default/deployments";
const CONFIGMAPS: &str = "/api/v1/namespaces/default/configmaps";

fn deployment(name: &str, replicas: i64) -> Deployment {
    serde_json::from_value(workload("Deployment", name, replicas)).expect("a valid deployment")
}

fn configmap(name: &str, data: Value) -> ConfigMap {
    serde_json::from_value(json!({"metadata": {"name": name}, "data": data})).expect("a valid configmap")
}

fn generation(d: &Deployment) -> i64 {
    d.metadata.generation.expect("deployments have a generation")
}

/// The API error of a kube-rs call that must fail.
fn api_error<T: std::fmt::Debug>(result: Result<T, kube::Error>) -> kube::core::Status {
    match result {
        Err(kube::Error::Api(status)) => *status,
        other => panic!("expected an API error, got {other:?}"),
    }
}

/// The causes of a 422 Status as (reason, field, message).
fn causes(status: &Value) -> Vec<(String, String, String)> {
    status["details"]["causes"]
        .as_array()
        .map(|cs| {
            cs.iter()
                .map(|c| {
                    let s = |k: &str| c[k].as_str().unwrap_or("").to_owned();
                    (s("reason"), s("field"), s("message"))
                })
                .collect()
        })
        .unwrap_or_default()
}

// === create ===

#[tokio::test]
async fn create_with_generate_name_fills_name_uid_timestamp_and_generation() {
    let sim = util::start().await;
    let api: Api<Deployment> = Api::default_namespaced(sim.client().expect("client"));
    let mut d = deployment("web", 1);
    d.metadata.name = None;
    d.metadata.generate_name = Some("web-".into());
    let first = api.create(&PostParams::default(), &d).await.expect("created");
    let second = api.create(&PostParams::default(), &d).await.expect("created");
    for created in [&first, &second] {
        let name = created.metadata.name.as_deref().expect("a name");
        assert!(name.starts_with("web-") && name.len() == "web-".len() + 5, "generated name {name:?}");
        assert!(name[4..].chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit()), "{name}");
        assert!(created.metadata.uid.as_deref().is_some_and(|u| u.len() == 36), "uid {:?}", created.metadata.uid);
        assert!(created.metadata.creation_timestamp.is_some());
        assert!(created.metadata.resource_version.is_some());
        assert_eq!(generation(created), 1);
        assert_eq!(created.metadata.namespace.as_deref(), Some("default"));
    }
    assert_ne!(first.metadata.name, second.metadata.name);
    assert_ne!(first.metadata.uid, second.metadata.uid);
    // What was returned is what is stored.
    let stored = api.get(first.metadata.name.as_deref().expect("name")).await.expect("stored");
    assert_eq!(stored.metadata.uid, first.metadata.uid);
}

#[tokio::test]
async fn server_owned_metadata_in_a_create_is_replaced() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    let mut body = workload("Deployment", "web", 1);
    body["metadata"]["uid"] = json!("client-chosen");
    body["metadata"]["generation"] = json!(7);
    body["metadata"]["resourceVersion"] = json!("12345");
    body["metadata"]["creationTimestamp"] = json!("2001-01-01T00:00:00Z");
    let answer = call(&client, "POST", DEPLOYMENTS, &[], Some(&body)).await;
    assert_eq!(answer.code(), 201);
    let created = answer.json();
    assert_ne!(created["metadata"]["uid"], "client-chosen");
    assert_eq!(created["metadata"]["generation"], 1);
    assert_ne!(created["metadata"]["resourceVersion"], "12345");
    assert_ne!(created["metadata"]["creationTimestamp"], "2001-01-01T00:00:00Z");
}

#[tokio::test]
async fn create_of_an_existing_name_is_already_exists() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    let body = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "twice"}});
    assert_eq!(call(&client, "POST", CONFIGMAPS, &[], Some(&body)).await.code(), 201);
    let answer = call(&client, "POST", CONFIGMAPS, &[], Some(&body)).await;
    assert_eq!(answer.code(), 409);
    let status = answer.json();
    assert_eq!(status["reason"], "AlreadyExists");
    assert_eq!(status["message"], "configmaps \"twice\" already exists");
    assert_eq!(status["details"], json!({"name": "twice", "kind": "configmaps"}));

    // With a generateName too (as a StatefulSet's pods have, beside their
    // name), the taken name is the server's failure to generate one
    // (upstream's CheckGeneratedNameError), retried after a second.
    let named = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "twice", "generateName": "tw-"}});
    let answer = call(&client, "POST", CONFIGMAPS, &[], Some(&named)).await;
    let retry = answer.headers.get("retry-after").and_then(|v| v.to_str().ok());
    assert_eq!((answer.code(), retry), (409, Some("1")));
    let status = answer.json();
    assert_eq!(status["reason"], "AlreadyExists");
    assert_eq!(
        status["message"],
        "configmaps \"twice\" already exists, the server was not able to generate a unique name for the object"
    );
    assert_eq!(status["details"], json!({"name": "twice", "kind": "configmaps", "retryAfterSeconds": 1}));
}

#[tokio::test]
async fn create_in_a_missing_namespace_is_not_found() {
    let sim = util::start().await;
    let api: Api<ConfigMap> = Api::namespaced(sim.client().expect("client"), "nowhere");
    let status = api_error(api.create(&PostParams::default(), &configmap("c", json!({}))).await);
    assert_eq!((status.code, status.reason.as_str()), (404, "NotFound"));
    assert_eq!(status.message, "namespaces \"nowhere\" not found");
}

#[tokio::test]
async fn create_without_a_name_is_invalid() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    let body = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}});
    let answer = call(&client, "POST", CONFIGMAPS, &[], Some(&body)).await;
    assert_eq!(answer.code(), 422);
    let status = answer.json();
    assert_eq!(status["reason"], "Invalid");
    assert_eq!(causes(&status)[0].1, "metadata.name");
}

// === update ===

#[tokio::test]
async fn update_with_stale_resource_version_is_a_conflict() {
    let sim = util::start().await;
    let api: Api<ConfigMap> = Api::default_namespaced(sim.client().expect("client"));
    let original = api.create(&PostParams::default(), &configmap("c", json!({"k": "1"}))).await.expect("created");
    let mut first = original.clone();
    first.data = Some([("k".to_owned(), "2".to_owned())].into());
    let updated = api.replace("c", &PostParams::default(), &first).await.expect("first update");
    assert_ne!(updated.metadata.resource_version, original.metadata.resource_version);

    let mut stale = original.clone();
    stale.data = Some([("k".to_owned(), "3".to_owned())].into());
    let status = api_error(api.replace("c", &PostParams::default(), &stale).await);
    assert_eq!((status.code, status.reason.as_str()), (409, "Conflict"));
    assert_eq!(
        status.message,
        "Operation cannot be fulfilled on configmaps \"c\": the object has been modified; \
         please apply your changes to the latest version and try again"
    );
    assert_eq!(api.get("c").await.expect("c").data, updated.data, "the stale write stored nothing");

    // Without a resourceVersion the update is unconditional.
    stale.metadata.resource_version = None;
    let forced = api.replace("c", &PostParams::default(), &stale).await.expect("unconditional update");
    assert_eq!(forced.data, stale.data);
}

#[tokio::test]
async fn update_of_a_missing_object_is_not_found() {
    let sim = util::start().await;
    let api: Api<ConfigMap> = Api::default_namespaced(sim.client().expect("client"));
    let status = api_error(api.replace("ghost", &PostParams::default(), &configmap("ghost", json!({}))).await);
    assert_eq!((status.code, status.reason.as_str()), (404, "NotFound"));
}

#[tokio::test]
async fn generation_bumps_on_spec_change_only() {
    let sim = util::start().await;
    let api: Api<Deployment> = Api::default_namespaced(sim.client().expect("client"));
    let mut d = api.create(&PostParams::default(), &deployment("web", 1)).await.expect("created");
    assert_eq!(generation(&d), 1);

    d.metadata.labels = Some([("team".to_owned(), "a".to_owned())].into());
    d = api.replace("web", &PostParams::default(), &d).await.expect("labels");
    assert_eq!(generation(&d), 1, "labels are not spec");
    // A Deployment's annotations are copied to its ReplicaSets: upstream
    // counts them as spec.
    d.metadata.annotations = Some([("note".to_owned(), "x".to_owned())].into());
    d = api.replace("web", &PostParams::default(), &d).await.expect("annotations");
    assert_eq!(generation(&d), 2, "a Deployment's annotations bump its generation");

    let status = json!({"status": {"replicas": 1, "observedGeneration": 2},
        "metadata": {"annotations": {"note": "y"}}});
    d = api.patch_status("web", &PatchParams::default(), &Patch::Merge(status)).await.expect("status");
    assert_eq!(generation(&d), 2, "status writes are not spec, whatever they carry");

    d.spec.replicas = Some(3);
    d = api.replace("web", &PostParams::default(), &d).await.expect("spec");
    assert_eq!(generation(&d), 3, "a spec change bumps the generation");
    let patch =
        Patch::Merge(json!({"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "nginx:2"}]}}}}));
    d = api.patch("web", &PatchParams::default(), &patch).await.expect("patched");
    assert_eq!(generation(&d), 4);
    // A client cannot set it.
    let patch = Patch::Merge(json!({"metadata": {"generation": 42}}));
    d = api.patch("web", &PatchParams::default(), &patch).await.expect("patched");
    assert_eq!(generation(&d), 4);
}

#[tokio::test]
async fn main_resource_writes_leave_status_alone_and_status_writes_leave_spec_and_labels_alone() {
    let sim = util::start().await;
    let api: Api<Deployment> = Api::default_namespaced(sim.client().expect("client"));
    api.create(&PostParams::default(), &deployment("web", 1)).await.expect("created");

    // A status write carrying spec and label changes changes neither; its
    // annotations are kept (upstream's Deployment status strategy: the
    // deployment controller writes its revision annotation this way).
    let mut d = api.get("web").await.expect("web");
    d.spec.replicas = Some(9);
    d.metadata.labels = Some([("sneaky".to_owned(), "yes".to_owned())].into());
    d.metadata.annotations = Some([("deployment.kubernetes.io/revision".to_owned(), "1".to_owned())].into());
    d.status = Some(serde_json::from_value(json!({"replicas": 5, "readyReplicas": 4})).expect("status"));
    let after_status = api.replace_status("web", &PostParams::default(), &d).await.expect("status written");
    assert_eq!(after_status.spec.replicas, Some(1));
    assert_eq!(after_status.metadata.labels, None);
    assert_eq!(after_status.metadata.annotations, d.metadata.annotations);
    assert_eq!(after_status.status.as_ref().and_then(|s| s.replicas), Some(5));
    assert_eq!(generation(&after_status), 1);

    // A main-resource write carrying a status change changes only the rest.
    let mut d = after_status.clone();
    d.spec.replicas = Some(2);
    d.status = Some(serde_json::from_value(json!({"replicas": 0})).expect("status"));
    let after_main = api.replace("web", &PostParams::default(), &d).await.expect("written");
    assert_eq!(after_main.spec.replicas, Some(2));
    let status = after_main.status.as_ref().expect("status");
    assert_eq!((status.replicas, status.ready_replicas), (Some(5), Some(4)));
    let stored = api.get("web").await.expect("web");
    assert_eq!(stored.status, after_main.status);
}

#[tokio::test]
async fn an_identical_update_does_not_change_the_resource_version() {
    let sim = util::start().await;
    let api: Api<Deployment> = Api::default_namespaced(sim.client().expect("client"));
    let created = api.create(&PostParams::default(), &deployment("web", 1)).await.expect("created");
    let same = api.replace("web", &PostParams::default(), &created).await.expect("replaced");
    assert_eq!(same.metadata.resource_version, created.metadata.resource_version);
    assert_eq!(generation(&same), 1);
    let same = api.patch("web", &PatchParams::default(), &Patch::Merge(json!({"spec": {"replicas": 1}}))).await;
    assert_eq!(same.expect("patched").metadata.resource_version, created.metadata.resource_version);
}

// === scale ===

#[tokio::test]
async fn the_scale_subresource_reads_and_writes_spec_replicas() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    let api: Api<Deployment> = Api::default_namespaced(client.clone());
    api.create(&PostParams::default(), &deployment("web", 2)).await.expect("created");
    let path = format!("{DEPLOYMENTS}/web/scale");

    let scale = get(&client, &path).await.json();
    assert_eq!((&scale["kind"], &scale["apiVersion"]), (&json!("Scale"), &json!("autoscaling/v1")));
    assert_eq!(scale["metadata"]["name"], "web");
    assert_eq!(scale["spec"]["replicas"], 2);
    assert_eq!(scale["status"]["selector"], "app=web");

    // PUT.
    let mut put = scale.clone();
    put["spec"]["replicas"] = json!(4);
    let answer = call(&client, "PUT", &path, &[], Some(&put)).await;
    assert_eq!(answer.code(), 200);
    assert_eq!(answer.json()["spec"]["replicas"], 4);
    let d = api.get("web").await.expect("web");
    assert_eq!((d.spec.replicas, generation(&d)), (Some(4), 2));

    // PATCH, through kube-rs as a controller or HPA would.
    let patched = api
        .patch_scale("web", &PatchParams::default(), &Patch::Merge(json!({"spec": {"replicas": 1}})))
        .await
        .expect("scale patched");
    assert_eq!(patched.spec.and_then(|s| s.replicas), Some(1));
    let d = api.get("web").await.expect("web");
    assert_eq!((d.spec.replicas, generation(&d)), (Some(1), 3));
    let read = api.get_scale("web").await.expect("scale");
    assert_eq!(read.status.map(|s| s.selector), Some(Some("app=web".to_owned())));

    // A stale Scale is a conflict; a negative one is invalid.
    let answer = call(&client, "PUT", &path, &[], Some(&put)).await;
    assert_eq!((answer.code(), answer.json()["reason"].clone()), (409, json!("Conflict")));
    let negative =
        json!({"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "web"}, "spec": {"replicas": -1}});
    let answer = call(&client, "PUT", &path, &[], Some(&negative)).await;
    assert_eq!(answer.code(), 422);
    assert_eq!(causes(&answer.json())[0].1, "spec.replicas");
}

// === patch ===

#[tokio::test]
async fn merge_patch_changes_only_the_given_fields_and_null_removes() {
    let sim = util::start().await;
    let api: Api<ConfigMap> = Api::default_namespaced(sim.client().expect("client"));
    api.create(&PostParams::default(), &configmap("c", json!({"a": "1", "b": "2"}))).await.expect("created");
    let patch = Patch::Merge(json!({"data": {"b": null, "c": "3"}, "metadata": {"labels": {"x": "y"}}}));
    let patched = api.patch("c", &PatchParams::default(), &patch).await.expect("patched");
    let data = patched.data.expect("data");
    assert_eq!(data.into_iter().collect::<Vec<_>>(), [("a".into(), "1".into()), ("c".into(), "3".into())]);
    assert_eq!(patched.metadata.labels.expect("labels").get("x").map(String::as_str), Some("y"));
}

#[tokio::test]
async fn json_patch_applies_operations_and_a_failing_test_is_unprocessable() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    let api: Api<ConfigMap> = Api::default_namespaced(client.clone());
    let created =
        api.create(&PostParams::default(), &configmap("c", json!({"a": "1", "b": "2"}))).await.expect("created");
    let path = format!("{CONFIGMAPS}/c");
    let json_patch = [("content-type", "application/json-patch+json")];
    let ops = json!([
        {"op": "test", "path": "/data/a", "value": "1"},
        {"op": "replace", "path": "/data/a", "value": "x"},
        {"op": "remove", "path": "/data/b"},
        {"op": "add", "path": "/data/c", "value": "3"},
    ]);
    let answer = call(&client, "PATCH", &path, &json_patch, Some(&ops)).await;
    assert_eq!(answer.code(), 200, "{}", answer.body);
    assert_eq!(answer.json()["data"], json!({"a": "x", "c": "3"}));

    let failing = json!([
        {"op": "test", "path": "/data/a", "value": "1"},
        {"op": "replace", "path": "/data/a", "value": "never"},
    ]);
    let answer = call(&client, "PATCH", &path, &json_patch, Some(&failing)).await;
    assert_eq!(answer.code(), 422, "{}", answer.body);
    assert_eq!(answer.json()["reason"], "Invalid");
    let stored = api.get("c").await.expect("c");
    assert_eq!(stored.data.expect("data").get("a").map(String::as_str), Some("x"), "a failed patch stores nothing");
    assert_ne!(stored.metadata.resource_version, created.metadata.resource_version);
}

#[tokio::test]
async fn strategic_merge_patch_merges_containers_by_name() {
    let sim = util::start().await;
    let api: Api<Deployment> = Api::default_namespaced(sim.client().expect("client"));
    let mut body = workload("Deployment", "web", 1);
    body["spec"]["template"]["spec"]["containers"] =
        json!([{"name": "app", "image": "nginx:1"}, {"name": "sidecar", "image": "busybox:1"}]);
    api.create(&PostParams::default(), &serde_json::from_value(body).expect("deployment")).await.expect("created");

    let patch = json!({"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "nginx:2"}]}}}});
    let patched = api.patch("web", &PatchParams::default(), &Patch::Strategic(patch)).await.expect("patched");
    let containers: Vec<(String, Option<String>)> = patched
        .spec
        .template
        .spec
        .map(|s| s.containers.into_iter().map(|c| (c.name, c.image)).collect())
        .unwrap_or_default();
    assert_eq!(
        containers,
        [("app".to_owned(), Some("nginx:2".to_owned())), ("sidecar".to_owned(), Some("busybox:1".to_owned()))]
    );
    assert_eq!(patched.metadata.generation, Some(2));

    // `$patch: delete` removes one element by its merge key.
    let patch = json!({"spec": {"template": {"spec": {"containers": [{"name": "sidecar", "$patch": "delete"}]}}}});
    let patched = api.patch("web", &PatchParams::default(), &Patch::Strategic(patch)).await.expect("patched");
    let names: Vec<String> =
        patched.spec.template.spec.map(|s| s.containers.into_iter().map(|c| c.name).collect()).unwrap_or_default();
    assert_eq!(names, ["app"]);
}

#[tokio::test]
async fn server_side_apply_is_unsupported_media_type_with_a_clear_message() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    let api: Api<ConfigMap> = Api::default_namespaced(client.clone());
    api.create(&PostParams::default(), &configmap("c", json!({}))).await.expect("created");
    let apply =
        Patch::Apply(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"k": "v"}}));
    let status = api_error(api.patch("c", &PatchParams::apply("tests"), &apply).await);
    assert_eq!((status.code, status.reason.as_str()), (415, "UnsupportedMediaType"));
    assert!(
        status.message.contains("server-side apply") && status.message.contains("not supported"),
        "{}",
        status.message
    );

    let answer = call(
        &client,
        "PATCH",
        &format!("{CONFIGMAPS}/c?fieldManager=kubectl"),
        &[("content-type", "application/apply-patch+yaml")],
        Some(&json!({"data": {"k": "v"}})),
    )
    .await;
    assert_eq!(answer.code(), 415);
    assert!(api.get("c").await.expect("c").data.unwrap_or_default().is_empty(), "nothing applied");
}

// === validation and defaulting ===

#[tokio::test]
async fn invalid_deployments_are_refused_with_the_upstream_messages() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    let mut negative = workload("Deployment", "neg", -1);
    let mut mismatch = workload("Deployment", "mismatch", 1);
    mismatch["spec"]["template"]["metadata"]["labels"] = json!({"app": "other"});
    let mut frozen = workload("Deployment", "frozen", 1);
    frozen["spec"]["strategy"] =
        json!({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 0}});
    let cases = [
        (
            &mut negative,
            "spec.replicas",
            "Invalid value: -1: must be greater than or equal to 0",
            "Deployment.apps \"neg\" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0",
        ),
        (
            &mut mismatch,
            "spec.template.metadata.labels",
            "Invalid value: map[string]string{\"app\":\"other\"}: `selector` does not match template `labels`",
            "Deployment.apps \"mismatch\" is invalid: spec.template.metadata.labels: Invalid value: \
             map[string]string{\"app\":\"other\"}: `selector` does not match template `labels`",
        ),
        (
            &mut frozen,
            "spec.strategy.rollingUpdate.maxUnavailable",
            "Invalid value: intstr.IntOrString{Type:0, IntVal:0, StrVal:\"\"}: may not be 0 when `maxSurge` is 0",
            "Deployment.apps \"frozen\" is invalid: spec.strategy.rollingUpdate.maxUnavailable: Invalid value: \
             intstr.IntOrString{Type:0, IntVal:0, StrVal:\"\"}: may not be 0 when `maxSurge` is 0",
        ),
    ];
    for (body, field, message, summary) in cases {
        let name = body["metadata"]["name"].as_str().unwrap_or("").to_owned();
        let answer = call(&client, "POST", DEPLOYMENTS, &[], Some(body)).await;
        assert_eq!(answer.code(), 422, "{name}: {}", answer.body);
        let status = answer.json();
        assert_eq!(status["reason"], "Invalid", "{name}");
        assert_eq!(status["message"], summary, "{name}");
        assert_eq!((&status["details"]["name"], &status["details"]["kind"]), (&json!(name), &json!("Deployment")));
        assert_eq!(status["details"]["group"], "apps");
        assert_eq!(causes(&status), [("FieldValueInvalid".to_owned(), field.to_owned(), message.to_owned())], "{name}");
        assert_eq!(get(&client, &format!("{DEPLOYMENTS}/{name}")).await.code(), 404, "{name} not stored");
    }

    // Updates are validated too.
    let api: Api<Deployment> = Api::default_namespaced(client);
    api.create(&PostParams::default(), &deployment("ok", 1)).await.expect("created");
    let status =
        api_error(api.patch("ok", &PatchParams::default(), &Patch::Merge(json!({"spec": {"replicas": -1}}))).await);
    assert_eq!((status.code, status.reason.as_str()), (422, "Invalid"));
}

#[tokio::test]
async fn strict_field_validation_refuses_unknown_fields() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    let mut body = workload("Deployment", "web", 1);
    body["spec"]["replica"] = json!(3);
    let answer = call(&client, "POST", &format!("{DEPLOYMENTS}?fieldValidation=Strict"), &[], Some(&body)).await;
    assert_eq!(answer.code(), 400, "{}", answer.body);
    let status = answer.json();
    assert_eq!(status["reason"], "BadRequest");
    assert_eq!(status["message"], "strict decoding error: unknown field \"spec.replica\"");
    assert_eq!(get(&client, &format!("{DEPLOYMENTS}/web")).await.code(), 404);
}

#[tokio::test]
async fn unknown_fields_are_dropped_with_a_warning_by_default() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    let mut body = workload("Deployment", "web", 1);
    body["spec"]["replica"] = json!(3);
    let answer = call(&client, "POST", DEPLOYMENTS, &[], Some(&body)).await;
    assert_eq!(answer.code(), 201, "{}", answer.body);
    let warnings: Vec<&str> = answer.headers.get_all("warning").iter().filter_map(|v| v.to_str().ok()).collect();
    assert_eq!(warnings, ["299 - \"unknown field \\\"spec.replica\\\"\""]);
    let stored = get(&client, &format!("{DEPLOYMENTS}/web")).await.json();
    assert!(stored["spec"].get("replica").is_none(), "the unknown field was dropped");
    assert_eq!(stored["spec"]["replicas"], 1);

    // Ignore drops it without a word.
    let mut body = workload("Deployment", "quiet", 1);
    body["spec"]["replica"] = json!(3);
    let answer = call(&client, "POST", &format!("{DEPLOYMENTS}?fieldValidation=Ignore"), &[], Some(&body)).await;
    assert_eq!(answer.code(), 201);
    assert!(answer.headers.get("warning").is_none());
}

#[tokio::test]
async fn defaults_are_visible_on_created_deployments() {
    let sim = util::start().await;
    let api: Api<Deployment> = Api::default_namespaced(sim.client().expect("client"));
    let created = api.create(&PostParams::default(), &deployment("web", 1)).await.expect("created");
    let d = serde_json::to_value(&created).expect("json");
    assert_eq!(
        d["spec"]["strategy"],
        json!({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}})
    );
    assert_eq!(d["spec"]["revisionHistoryLimit"], 10);
    assert_eq!(d["spec"]["progressDeadlineSeconds"], 600);
    let pod_spec = &d["spec"]["template"]["spec"];
    assert_eq!(pod_spec["restartPolicy"], "Always");
    assert_eq!(pod_spec["dnsPolicy"], "ClusterFirst");
    assert_eq!(pod_spec["terminationGracePeriodSeconds"], 30);
    assert_eq!(pod_spec["containers"][0]["terminationMessagePath"], "/dev/termination-log");
    assert_eq!(pod_spec["containers"][0]["imagePullPolicy"], "IfNotPresent");
    // Defaults do not overwrite what the client chose.
    let mut body = workload("Deployment", "chosen", 1);
    body["spec"]["revisionHistoryLimit"] = json!(2);
    body["spec"]["strategy"] = json!({"type": "Recreate"});
    let chosen =
        api.create(&PostParams::default(), &serde_json::from_value(body).expect("deployment")).await.expect("created");
    let chosen = serde_json::to_value(&chosen).expect("json");
    assert_eq!(chosen["spec"]["revisionHistoryLimit"], 2);
    assert_eq!(chosen["spec"]["strategy"], json!({"type": "Recreate"}));
}

#[tokio::test]
async fn defaults_are_visible_on_created_pods() {
    let sim = util::start().await;
    let api: Api<Pod> = Api::default_namespaced(sim.client().expect("client"));
    let pod: Pod = serde_json::from_value(json!({
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "app", "image": "nginx"}]},
    }))
    .expect("pod");
    let created = serde_json::to_value(api.create(&PostParams::default(), &pod).await.expect("created")).expect("json");
    let spec = &created["spec"];
    assert_eq!(spec["restartPolicy"], "Always");
    assert_eq!(spec["terminationGracePeriodSeconds"], 30);
    assert_eq!(spec["schedulerName"], "default-scheduler");
    let mut tolerations: Vec<Value> = spec["tolerations"].as_array().cloned().unwrap_or_default();
    tolerations.sort_by_key(|t| t["key"].as_str().unwrap_or("").to_owned());
    assert_eq!(
        tolerations,
        [
            json!({"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}),
            json!({"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}),
        ]
    );
    assert_eq!(created["status"]["phase"], "Pending");
    assert_eq!(created["status"]["qosClass"], "BestEffort");
}

// === dry run ===

#[tokio::test]
async fn dry_run_stores_nothing() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    let answer =
        call(&client, "POST", &format!("{DEPLOYMENTS}?dryRun=All"), &[], Some(&workload("Deployment", "web", 1))).await;
    assert_eq!(answer.code(), 201);
    let shown = answer.json();
    assert_eq!(shown["metadata"]["name"], "web");
    assert_eq!(shown["spec"]["revisionHistoryLimit"], 10, "a dry run shows the defaulted object");
    assert_eq!(get(&client, &format!("{DEPLOYMENTS}/web")).await.code(), 404);

    let api: Api<Deployment> = Api::default_namespaced(client.clone());
    let created = api.create(&PostParams::default(), &deployment("web", 1)).await.expect("created");
    let dry = PatchParams { dry_run: true, ..PatchParams::default() };
    let shown = api.patch("web", &dry, &Patch::Merge(json!({"spec": {"replicas": 5}}))).await.expect("dry patch");
    assert_eq!(shown.spec.replicas, Some(5));
    let stored = api.get("web").await.expect("web");
    assert_eq!(stored.spec.replicas, Some(1));
    assert_eq!(stored.metadata.resource_version, created.metadata.resource_version);

    let dry_delete = kube::api::DeleteParams { dry_run: true, ..Default::default() };
    api.delete("web", &dry_delete).await.expect("dry delete");
    assert_eq!(api.get("web").await.expect("still there").metadata.uid, created.metadata.uid);
}
