//! Discovery, OpenAPI and server-side printing as clients see them: the
//! documents kubectl and kube-rs read to resolve `deploy`, `po`, `get all`,
//! and the Table and metadata-only representations.

use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams, PostParams};
use serde_json::{Value, json};

use super::util::{self, get};

const TABLE: &str = "application/json;as=Table;v=v1;g=meta.k8s.io";

/// The entry named `name` in an `APIResourceList`.
fn resource<'a>(list: &'a Value, name: &str) -> &'a Value {
    list["resources"]
        .as_array()
        .and_then(|rs| rs.iter().find(|r| r["name"] == name))
        .unwrap_or_else(|| panic!("{name} missing from {}", list["groupVersion"]))
}

fn strings(value: &Value) -> Vec<&str> {
    value.as_array().map(|a| a.iter().filter_map(Value::as_str).collect()).unwrap_or_default()
}

fn pod(name: &str) -> Pod {
    serde_json::from_value(json!({
        "metadata": {"name": name},
        "spec": {"containers": [{"name": "app", "image": "nginx"}]},
    }))
    .expect("a valid pod")
}

#[tokio::test]
async fn version_reports_the_served_kubernetes_version() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    let answer = get(&client, "/version").await;
    assert_eq!(answer.code(), 200);
    let v = answer.json();
    assert_eq!((v["major"].as_str(), v["minor"].as_str()), (Some("1"), Some("37")));
    assert_eq!(v["gitVersion"], "v1.37.0");
    // kube-rs reads the same document.
    let info = client.apiserver_version().await.expect("version");
    assert_eq!(info.git_version, "v1.37.0");
}

#[tokio::test]
async fn core_and_named_groups_are_listed() {
    let sim = util::start().await;
    let client = sim.client().expect("client");

    let core = get(&client, "/api").await.json();
    assert_eq!(core["kind"], "APIVersions");
    assert_eq!(strings(&core["versions"]), ["v1"]);

    let groups = get(&client, "/apis").await.json();
    assert_eq!(groups["kind"], "APIGroupList");
    let names: Vec<&str> =
        groups["groups"].as_array().expect("groups").iter().filter_map(|g| g["name"].as_str()).collect();
    for group in ["apps", "coordination.k8s.io", "discovery.k8s.io", "events.k8s.io"] {
        assert!(names.contains(&group), "{group} missing from /apis: {names:?}");
    }

    let apps = get(&client, "/apis/apps").await;
    assert_eq!(apps.code(), 200);
    let apps = apps.json();
    assert_eq!(apps["kind"], "APIGroup");
    assert_eq!(apps["name"], "apps");
    assert_eq!(apps["preferredVersion"], json!({"groupVersion": "apps/v1", "version": "v1"}));
}

#[tokio::test]
async fn core_v1_resources_carry_verbs_short_names_categories_and_subresources() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    let list = get(&client, "/api/v1").await.json();
    assert_eq!(list["kind"], "APIResourceList");
    assert_eq!(list["groupVersion"], "v1");

    let pods = resource(&list, "pods");
    assert_eq!(pods["kind"], "Pod");
    assert_eq!(pods["namespaced"], true);
    let mut verbs = strings(&pods["verbs"]);
    verbs.sort_unstable();
    assert_eq!(verbs, ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]);

    for (name, short) in [
        ("pods", "po"),
        ("namespaces", "ns"),
        ("nodes", "no"),
        ("services", "svc"),
        ("configmaps", "cm"),
        ("serviceaccounts", "sa"),
        ("events", "ev"),
        ("endpoints", "ep"),
    ] {
        assert!(strings(&resource(&list, name)["shortNames"]).contains(&short), "{name} lacks short name {short}");
    }
    for name in ["pods", "services"] {
        assert_eq!(strings(&resource(&list, name)["categories"]), ["all"], "{name} is in category all");
    }
    for name in ["configmaps", "secrets", "namespaces", "nodes", "events"] {
        assert!(!strings(&resource(&list, name)["categories"]).contains(&"all"), "{name} is not in category all");
    }
    for (name, namespaced) in [("namespaces", false), ("nodes", false), ("configmaps", true)] {
        assert_eq!(resource(&list, name)["namespaced"], namespaced, "{name} scope");
    }

    assert_eq!(strings(&resource(&list, "pods/status")["verbs"]), ["get", "patch", "update"]);
    assert_eq!(resource(&list, "namespaces/status")["kind"], "Namespace");
    assert_eq!(strings(&resource(&list, "namespaces/finalize")["verbs"]), ["update"]);
    assert_eq!(resource(&list, "nodes/status")["namespaced"], false);
}

#[tokio::test]
async fn apps_v1_resources_carry_short_names_categories_and_scale() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    let list = get(&client, "/apis/apps/v1").await.json();
    assert_eq!(list["groupVersion"], "apps/v1");
    let scaled = [
        ("deployments", "deploy", "Deployment"),
        ("replicasets", "rs", "ReplicaSet"),
        ("statefulsets", "sts", "StatefulSet"),
    ];
    for (name, short, kind) in scaled {
        let entry = resource(&list, name);
        assert_eq!(entry["kind"], kind);
        assert_eq!(strings(&entry["shortNames"]), [short]);
        assert_eq!(strings(&entry["categories"]), ["all"]);
        let scale = resource(&list, &format!("{name}/scale"));
        assert_eq!(
            (&scale["kind"], &scale["group"], &scale["version"]),
            (&json!("Scale"), &json!("autoscaling"), &json!("v1"))
        );
        assert_eq!(strings(&scale["verbs"]), ["get", "patch", "update"]);
        assert_eq!(resource(&list, &format!("{name}/status"))["kind"], kind);
    }
    let daemon_sets = resource(&list, "daemonsets");
    assert_eq!((strings(&daemon_sets["shortNames"]), strings(&daemon_sets["categories"])), (vec!["ds"], vec!["all"]));
    assert_eq!(resource(&list, "daemonsets/status")["kind"], "DaemonSet");
    let names: Vec<&str> =
        list["resources"].as_array().into_iter().flatten().filter_map(|r| r["name"].as_str()).collect();
    assert!(!names.contains(&"daemonsets/scale") && !names.contains(&"controllerrevisions/status"), "{names:?}");
    let revisions = resource(&list, "controllerrevisions");
    assert_eq!((revisions.get("shortNames"), revisions.get("categories")), (None, None));
    let leases = get(&client, "/apis/coordination.k8s.io/v1").await.json();
    assert_eq!(resource(&leases, "leases")["kind"], "Lease");
    let discovery = get(&client, "/apis/discovery.k8s.io/v1").await.json();
    let slices = resource(&discovery, "endpointslices");
    assert_eq!((&slices["kind"], &slices["namespaced"]), (&json!("EndpointSlice"), &json!(true)));
    assert_eq!(
        strings(&slices["verbs"]),
        ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]
    );
    assert_eq!(slices.get("shortNames"), None);
}

#[tokio::test]
async fn unknown_groups_versions_and_resources_are_404_with_a_status() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    for path in [
        "/apis/nope.example.com",
        "/apis/nope.example.com/v1",
        "/apis/apps/v2",
        "/api/v2",
        "/api/v1/widgets",
        "/api/v1/namespaces/default/widgets",
        "/apis/apps/v1/namespaces/default/widgets/w",
        "/api/v1/namespaces/default/pods/p/bogus",
        "/nothing/here",
    ] {
        let answer = get(&client, path).await;
        assert_eq!(answer.code(), 404, "{path}");
        let status = answer.json();
        assert_eq!(status["kind"], "Status", "{path}");
        assert_eq!(status["apiVersion"], "v1", "{path}");
        assert_eq!(status["status"], "Failure", "{path}");
        assert_eq!(status["reason"], "NotFound", "{path}");
        assert_eq!(status["code"], 404, "{path}");
    }
}

#[tokio::test]
async fn openapi_v3_index_resolves_to_documents_with_the_served_schemas() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    let index = get(&client, "/openapi/v3").await;
    assert_eq!(index.code(), 200);
    let index = index.json();
    let paths = index["paths"].as_object().expect("paths");
    for (gv, schema) in [("api/v1", "io.k8s.api.core.v1.Pod"), ("apis/apps/v1", "io.k8s.api.apps.v1.Deployment")] {
        let url = paths[gv]["serverRelativeURL"].as_str().unwrap_or_else(|| panic!("{gv} missing from the index"));
        let doc = get(&client, url).await;
        assert_eq!(doc.code(), 200, "{url}");
        let doc = doc.json();
        let schema = &doc["components"]["schemas"][schema];
        assert!(schema["properties"]["spec"].is_object(), "{gv}: {schema}");
        assert!(schema["x-kubernetes-group-version-kind"].is_array(), "{gv}: {schema}");
    }
    for url in paths.values().filter_map(|p| p["serverRelativeURL"].as_str()) {
        assert_eq!(get(&client, url).await.code(), 200, "{url}");
    }
    assert_eq!(get(&client, "/openapi/v3/apis/nope/v1").await.code(), 404);
}

#[tokio::test]
async fn kube_discovery_finds_every_group() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    let discovery = kube::Discovery::new(client).run().await.expect("discovery runs");
    for group in ["", "apps", "coordination.k8s.io", "discovery.k8s.io", "events.k8s.io"] {
        assert!(discovery.has_group(group), "group {group:?} not discovered");
    }
    let apps = discovery.get("apps").expect("apps");
    let (deployments, caps) = apps
        .recommended_resources()
        .into_iter()
        .find(|(r, _)| r.plural == "deployments")
        .expect("deployments discovered");
    assert_eq!(deployments.kind, "Deployment");
    assert_eq!(caps.scope, kube::discovery::Scope::Namespaced);
    let subresources: Vec<&str> = caps.subresources.iter().map(|(r, _)| r.plural.as_str()).collect();
    assert!(subresources.contains(&"scale") && subresources.contains(&"status"), "{subresources:?}");
    let core = discovery.get("").expect("core");
    let (nodes, caps) = core.recommended_resources().into_iter().find(|(r, _)| r.plural == "nodes").expect("nodes");
    assert_eq!((nodes.kind.as_str(), caps.scope), ("Node", kube::discovery::Scope::Cluster));
}

#[tokio::test]
async fn pod_tables_have_the_kubectl_columns() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
    pods.create(&PostParams::default(), &pod("web")).await.expect("created");

    let answer = util::call(&client, "GET", "/api/v1/namespaces/default/pods", &[("accept", TABLE)], None).await;
    assert_eq!(answer.code(), 200);
    let table = answer.json();
    assert_eq!((&table["kind"], &table["apiVersion"]), (&json!("Table"), &json!("meta.k8s.io/v1")));
    let columns: Vec<String> = table["columnDefinitions"]
        .as_array()
        .expect("columns")
        .iter()
        .filter(|c| c["priority"] == 0)
        .filter_map(|c| c["name"].as_str().map(str::to_uppercase))
        .collect();
    assert_eq!(columns, ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]);
    let rows = table["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["cells"][0], "web");
    // READY is ready/total containers (the kubelet stand-in may have started it).
    assert!(rows[0]["cells"][1].as_str().is_some_and(|r| r.ends_with("/1")), "{}", rows[0]);
    // The row object defaults to the metadata-only form.
    assert_eq!(rows[0]["object"]["kind"], "PartialObjectMetadata");
    assert_eq!(rows[0]["object"]["metadata"]["name"], "web");

    let one = util::call(&client, "GET", "/api/v1/namespaces/default/pods/web", &[("accept", TABLE)], None).await;
    let one = one.json();
    assert_eq!(one["kind"], "Table");
    assert_eq!(one["rows"][0]["cells"][0], "web");
}

#[tokio::test]
async fn metadata_only_lists_are_partial_object_metadata() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
    for name in ["a", "b"] {
        pods.create(&PostParams::default(), &pod(name)).await.expect("created");
    }

    let list = pods.list_metadata(&ListParams::default()).await.expect("metadata list");
    let names: Vec<String> = list.items.iter().filter_map(|p| p.metadata.name.clone()).collect();
    assert_eq!(names, ["a", "b"]);
    assert!(list.items.iter().all(|p| p.metadata.uid.is_some()));

    let accept = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";
    let raw = util::call(&client, "GET", "/api/v1/namespaces/default/pods", &[("accept", accept)], None).await.json();
    assert_eq!((&raw["kind"], &raw["apiVersion"]), (&json!("PartialObjectMetadataList"), &json!("meta.k8s.io/v1")));
    assert!(raw["metadata"]["resourceVersion"].is_string());
    for item in raw["items"].as_array().expect("items") {
        assert_eq!(item["kind"], "PartialObjectMetadata");
        assert!(item.get("spec").is_none() && item.get("status").is_none(), "{item}");
    }
}
