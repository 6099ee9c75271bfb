//! get, list and watch as clients see them: NotFound statuses, label and
//! field selectors, pagination, watches from a version, bookmarks, initial
//! events, selector transitions, timeouts and `410 Expired` after
//! compaction (and kube-rs's watcher recovering from it).

use std::collections::BTreeMap;
use std::time::Duration;

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Pod};
use kube::api::{Api, ListParams, PostParams};
use kube::runtime::watcher;
use kube_sim::SimConfig;
use kube_sim::api::ApiConfig;
use serde_json::{Value, json};

use super::util::{self, Watch, get};

// === utils ===

const CONFIGMAPS: &str = "/api/v1/namespaces/default/configmaps";

fn configmap(name: &str, labels: &[(&str, &str)]) -> ConfigMap {
    let labels: BTreeMap<String, String> = labels.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
    serde_json::from_value(json!({"metadata": {"name": name, "labels": labels}, "data": {"k": "v"}}))
        .expect("a valid configmap")
}

async fn create_cm(api: &Api<ConfigMap>, name: &str, labels: &[(&str, &str)]) -> ConfigMap {
    api.create(&PostParams::default(), &configmap(name, labels)).await.expect("configmap created")
}

fn names<K: kube::Resource>(items: &[K]) -> Vec<String> {
    items.iter().filter_map(|o| o.meta().name.clone()).collect()
}

fn rv_of(object: &Value) -> u64 {
    object["metadata"]["resourceVersion"].as_str().and_then(|v| v.parse().ok()).expect("a numeric resourceVersion")
}

/// `(type, name)` of a watch event.
fn summary(event: &Value) -> (String, String) {
    (
        event["type"].as_str().unwrap_or("").to_owned(),
        event["object"]["metadata"]["name"].as_str().unwrap_or("").to_owned(),
    )
}

fn event(kind: &str, name: &str) -> (String, String) {
    (kind.to_owned(), name.to_owned())
}

async fn merge_labels(api: &Api<ConfigMap>, name: &str, labels: Value) {
    let patch = kube::api::Patch::Merge(json!({"metadata": {"labels": labels}}));
    api.patch(name, &kube::api::PatchParams::default(), &patch).await.expect("patched");
}

// === get ===

#[tokio::test]
async fn get_returns_the_stored_object() {
    let sim = util::start().await;
    let api: Api<ConfigMap> = Api::default_namespaced(sim.client().expect("client"));
    let created = create_cm(&api, "settings", &[("app", "web")]).await;
    let got = api.get("settings").await.expect("found");
    assert_eq!(got.metadata.uid, created.metadata.uid);
    assert_eq!(got.metadata.resource_version, created.metadata.resource_version);
    assert_eq!(got.metadata.namespace.as_deref(), Some("default"));
    assert_eq!(got.data, created.data);
    let raw = get(&sim.client().expect("client"), &format!("{CONFIGMAPS}/settings")).await.json();
    assert_eq!((&raw["kind"], &raw["apiVersion"]), (&json!("ConfigMap"), &json!("v1")));
}

#[tokio::test]
async fn get_of_a_missing_object_is_a_not_found_status_with_details() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    let answer = get(&client, "/api/v1/namespaces/default/pods/nope").await;
    assert_eq!(answer.code(), 404);
    let status = answer.json();
    assert_eq!(status["kind"], "Status");
    assert_eq!(status["reason"], "NotFound");
    assert_eq!(status["message"], "pods \"nope\" not found");
    assert_eq!(status["details"], json!({"name": "nope", "kind": "pods"}));

    let answer = get(&client, "/apis/apps/v1/namespaces/default/deployments/gone").await;
    assert_eq!(answer.code(), 404);
    let status = answer.json();
    assert_eq!(status["message"], "deployments.apps \"gone\" not found");
    assert_eq!(status["details"], json!({"name": "gone", "kind": "deployments", "group": "apps"}));

    // kube-rs surfaces it as an API error with the same reason.
    let deployments: Api<Deployment> = Api::default_namespaced(client);
    match deployments.get("gone").await {
        Err(kube::Error::Api(s)) => assert_eq!((s.code, s.reason.as_str()), (404, "NotFound")),
        other => panic!("expected NotFound, got {other:?}"),
    }
}

// === list ===

#[tokio::test]
async fn label_selectors_select_by_equality_sets_and_existence() {
    let sim = util::start_bare().await;
    let api: Api<ConfigMap> = Api::default_namespaced(sim.client().expect("client"));
    create_cm(&api, "a", &[("app", "web"), ("tier", "front")]).await;
    create_cm(&api, "b", &[("app", "web"), ("tier", "back")]).await;
    create_cm(&api, "c", &[("app", "db")]).await;
    create_cm(&api, "d", &[]).await;
    let cases: &[(&str, &[&str])] = &[
        ("", &["a", "b", "c", "d"]),
        ("app=web", &["a", "b"]),
        ("app==web", &["a", "b"]),
        ("app!=web", &["c", "d"]),
        ("tier in (front,middle)", &["a"]),
        ("app in (web,db),tier notin (back)", &["a", "c"]),
        ("tier notin (front)", &["b", "c", "d"]),
        ("tier", &["a", "b"]),
        ("!tier", &["c", "d"]),
        ("app,!tier", &["c"]),
        ("app=web,tier=back", &["b"]),
        ("app=nothing", &[]),
    ];
    for (selector, want) in cases {
        let list = api.list(&ListParams::default().labels(selector)).await.expect("listed");
        assert_eq!(names(&list.items), *want, "labelSelector {selector:?}");
    }
}

#[tokio::test]
async fn malformed_label_selectors_are_bad_requests() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    let answer = get(&client, &format!("{CONFIGMAPS}?labelSelector=app%20in%20web")).await;
    assert_eq!(answer.code(), 400);
    assert_eq!(answer.json()["reason"], "BadRequest");
}

#[tokio::test]
async fn field_selectors_select_pods_by_name_namespace_node_and_phase() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let ns: Namespace = serde_json::from_value(json!({"metadata": {"name": "other"}})).expect("namespace");
    namespaces.create(&PostParams::default(), &ns).await.expect("namespace created");
    kube_sim::testing::provision_namespace(&sim, "other").await;
    let pod = |name: &str, spec: Value| -> Pod {
        let mut spec = spec;
        spec["containers"] = json!([{"name": "app", "image": "nginx"}]);
        serde_json::from_value(json!({"metadata": {"name": name}, "spec": spec})).expect("a valid pod")
    };
    // "running" is bound to node-1 and started by the kubelet stand-in;
    // the others select a node that does not exist and stay Pending.
    let nowhere = json!({"nodeSelector": {"kubernetes.io/hostname": "nowhere"}});
    let default: Api<Pod> = Api::default_namespaced(client.clone());
    let other: Api<Pod> = Api::namespaced(client.clone(), "other");
    default.create(&PostParams::default(), &pod("running", json!({"nodeName": "node-1"}))).await.expect("created");
    default.create(&PostParams::default(), &pod("pending", nowhere.clone())).await.expect("created");
    other.create(&PostParams::default(), &pod("elsewhere", nowhere)).await.expect("created");
    kube_sim::testing::wait_for(&sim, util::PATIENCE, "pod running to be Running", || {
        let default = default.clone();
        async move {
            let p = default.get("running").await.map_err(|e| e.to_string())?;
            let phase = p.status.and_then(|s| s.phase).unwrap_or_default();
            if phase == "Running" { Ok(()) } else { Err(phase) }
        }
    })
    .await;

    let all: Api<Pod> = Api::all(client.clone());
    let cases: &[(&Api<Pod>, &str, &[&str])] = &[
        (&default, "metadata.name=running", &["running"]),
        (&default, "metadata.name!=running", &["pending"]),
        (&all, "metadata.namespace=other", &["elsewhere"]),
        (&all, "metadata.namespace!=other", &["pending", "running"]),
        (&default, "spec.nodeName=node-1", &["running"]),
        (&default, "spec.nodeName=", &["pending"]),
        (&all, "spec.nodeName==", &["pending", "elsewhere"]),
        (&default, "status.phase=Running", &["running"]),
        (&all, "status.phase=Pending", &["pending", "elsewhere"]),
        (&all, "status.phase!=Pending,metadata.namespace=default", &["running"]),
    ];
    for (api, selector, want) in cases {
        let list = api.list(&ListParams::default().fields(selector)).await.expect("listed");
        let mut got = names(&list.items);
        let mut want: Vec<String> = want.iter().map(|s| (*s).to_owned()).collect();
        got.sort();
        want.sort();
        assert_eq!(got, want, "fieldSelector {selector:?}");
    }
}

#[tokio::test]
async fn unsupported_field_selectors_are_bad_requests() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    let answer = get(&client, "/api/v1/namespaces/default/pods?fieldSelector=spec.foo%3Dbar").await;
    assert_eq!(answer.code(), 400);
    let status = answer.json();
    assert_eq!(status["reason"], "BadRequest");
    assert!(status["message"].as_str().is_some_and(|m| m.contains("field label not supported: spec.foo")), "{status}");
    // A field selectable on pods is not selectable on configmaps.
    let answer = get(&client, &format!("{CONFIGMAPS}?fieldSelector=status.phase%3DRunning")).await;
    assert_eq!(answer.code(), 400);
    // Watches refuse it too.
    let answer = get(&client, "/api/v1/pods?watch=true&fieldSelector=spec.foo%3Dbar").await;
    assert_eq!(answer.code(), 400);
}

#[tokio::test]
async fn limit_and_continue_page_through_every_object_once() {
    let sim = util::start_bare().await;
    let api: Api<ConfigMap> = Api::default_namespaced(sim.client().expect("client"));
    let mut created = Vec::new();
    for i in 0..7 {
        created.push(create_cm(&api, &format!("cm-{i}"), &[]).await);
    }
    let max_item_rv = created
        .iter()
        .filter_map(|c| c.metadata.resource_version.as_deref()?.parse::<u64>().ok())
        .max()
        .expect("versions");

    let first = api.list(&ListParams::default().limit(3)).await.expect("page 1");
    let list_rv = first.metadata.resource_version.clone().expect("list resourceVersion");
    assert!(list_rv.parse::<u64>().expect("numeric") >= max_item_rv, "the list version covers every item");
    assert_eq!(first.items.len(), 3);
    assert_eq!(first.metadata.remaining_item_count, Some(4));
    let mut seen = names(&first.items);
    let mut token = first.metadata.continue_.clone();
    let mut pages = 1;
    // A change between pages does not disturb the paging.
    create_cm(&api, "zz-late", &[]).await;
    while let Some(t) = token.filter(|t| !t.is_empty()) {
        let page = api.list(&ListParams::default().limit(3).continue_token(&t)).await.expect("next page");
        assert_eq!(
            page.metadata.resource_version.as_deref(),
            Some(list_rv.as_str()),
            "every page has the list version"
        );
        assert!(page.items.len() <= 3);
        seen.extend(names(&page.items));
        token = page.metadata.continue_.clone();
        pages += 1;
        assert!(pages < 10, "paging does not end");
    }
    seen.retain(|n| n != "zz-late");
    let expected: Vec<String> = (0..7).map(|i| format!("cm-{i}")).collect();
    assert_eq!(seen, expected, "every object exactly once, in order");
    assert_eq!(pages, 3);
}

#[tokio::test]
async fn paging_with_a_selector_returns_only_matching_objects_and_no_remaining_count() {
    let sim = util::start().await;
    let api: Api<ConfigMap> = Api::default_namespaced(sim.client().expect("client"));
    for i in 0..6 {
        let app = if i % 2 == 0 { "web" } else { "db" };
        create_cm(&api, &format!("cm-{i}"), &[("app", app)]).await;
    }
    let params = ListParams::default().labels("app=web").limit(2);
    let first = api.list(&params).await.expect("page 1");
    assert_eq!(names(&first.items), ["cm-0", "cm-2"]);
    // With a selector the API server cannot know how many remain.
    assert_eq!(first.metadata.remaining_item_count, None);
    let token = first.metadata.continue_.clone().expect("more to come");
    let second = api.list(&params.clone().continue_token(&token)).await.expect("page 2");
    assert_eq!(names(&second.items), ["cm-4"]);
    assert!(second.metadata.continue_.as_deref().unwrap_or("").is_empty(), "last page");
}

#[tokio::test]
async fn later_pages_show_objects_as_they_were_at_the_list_version() {
    let sim = util::start_bare().await;
    let api: Api<ConfigMap> = Api::default_namespaced(sim.client().expect("client"));
    for name in ["a", "b", "c"] {
        create_cm(&api, name, &[]).await;
    }
    let first = api.list(&ListParams::default().limit(1)).await.expect("page 1");
    let list_rv: u64 = first.metadata.resource_version.as_deref().expect("version").parse().expect("numeric");
    // Change an object of a later page, delete another, add one: the rest of
    // the list still reads as of the first page, as etcd's MVCC reads do.
    merge_labels(&api, "b", json!({"changed": "yes"})).await;
    api.delete("c", &Default::default()).await.expect("deleted");
    create_cm(&api, "bb", &[]).await;
    let token = first.metadata.continue_.clone().expect("more to come");
    let rest = api.list(&ListParams::default().continue_token(&token)).await.expect("the rest");
    assert_eq!(names(&rest.items), ["b", "c"]);
    let b = &rest.items[0];
    assert!(b.metadata.labels.as_ref().is_none_or(|l| !l.contains_key("changed")), "b as it was");
    let b_rv: u64 = b.metadata.resource_version.as_deref().expect("version").parse().expect("numeric");
    assert!(b_rv <= list_rv, "no page holds an object newer than the list ({b_rv} > {list_rv})");
}

#[tokio::test]
async fn an_invalid_continue_token_is_a_bad_request() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    let answer = get(&client, &format!("{CONFIGMAPS}?limit=1&continue=not-a-token")).await;
    assert_eq!(answer.code(), 400);
    assert_eq!(answer.json()["reason"], "BadRequest");
}

#[tokio::test]
async fn a_continue_token_from_before_compaction_is_expired() {
    let sim = util::start().await;
    let api: Api<ConfigMap> = Api::default_namespaced(sim.client().expect("client"));
    for name in ["a", "b", "c"] {
        create_cm(&api, name, &[]).await;
    }
    let first = api.list(&ListParams::default().limit(1)).await.expect("page 1");
    let token = first.metadata.continue_.clone().expect("a continue token");
    create_cm(&api, "d", &[]).await;
    sim.controls().compact();
    let answer = get(&sim.client().expect("client"), &format!("{CONFIGMAPS}?limit=1&continue={token}")).await;
    assert_eq!(answer.code(), 410);
    let status = answer.json();
    assert_eq!(status["reason"], "Expired");
    assert_eq!(status["code"], 410);
}

// === watch ===

#[tokio::test]
async fn a_watch_from_a_resource_version_sees_later_changes_in_order() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    let api: Api<ConfigMap> = Api::default_namespaced(client.clone());
    let a = create_cm(&api, "a", &[]).await;
    let from = a.metadata.resource_version.clone().expect("rv");
    // Changes made before the watch opens are replayed from history...
    create_cm(&api, "b", &[]).await;
    merge_labels(&api, "a", json!({"x": "1"})).await;
    let mut watch = Watch::open(&client, &format!("{CONFIGMAPS}?watch=true&resourceVersion={from}")).await;
    // ...and later ones follow live.
    api.delete("b", &Default::default()).await.expect("deleted");
    create_cm(&api, "c", &[]).await;

    let mut events = Vec::new();
    let mut last_rv = from.parse::<u64>().expect("numeric");
    for _ in 0..4 {
        let e = watch.expect_change().await;
        let rv = rv_of(&e["object"]);
        assert!(rv > last_rv, "versions increase: {rv} after {last_rv}");
        last_rv = rv;
        events.push(summary(&e));
    }
    assert_eq!(
        events,
        [event("ADDED", "b"), event("MODIFIED", "a"), event("DELETED", "b"), event("ADDED", "c")],
        "nothing at or before {from}, then every change in order"
    );
    let modified_a = api.get("a").await.expect("a");
    assert_eq!(modified_a.metadata.labels.and_then(|l| l.get("x").cloned()).as_deref(), Some("1"));
}

#[tokio::test]
async fn a_watch_only_sees_its_namespace_and_type() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    let from = api_rv(&client).await;
    let mut watch = Watch::open(&client, &format!("{CONFIGMAPS}?watch=true&resourceVersion={from}")).await;
    let system: Api<ConfigMap> = Api::namespaced(client.clone(), "kube-system");
    create_cm(&system, "elsewhere", &[]).await;
    let secrets: Api<k8s_openapi::api::core::v1::Secret> = Api::default_namespaced(client.clone());
    let secret = serde_json::from_value(json!({"metadata": {"name": "s"}})).expect("secret");
    secrets.create(&PostParams::default(), &secret).await.expect("secret created");
    create_cm(&Api::default_namespaced(client.clone()), "here", &[]).await;
    assert_eq!(summary(&watch.expect_change().await), event("ADDED", "here"));
}

/// The resourceVersion of a fresh configmap list in `default`.
async fn api_rv(client: &kube::Client) -> String {
    let list = get(client, CONFIGMAPS).await.json();
    list["metadata"]["resourceVersion"].as_str().expect("list version").to_owned()
}

#[tokio::test]
async fn watches_from_zero_or_no_version_start_with_the_current_objects() {
    let sim = util::start_bare().await;
    let client = sim.client().expect("client");
    let api: Api<ConfigMap> = Api::default_namespaced(client.clone());
    create_cm(&api, "a", &[]).await;
    create_cm(&api, "b", &[]).await;
    let mut existing = vec![event("ADDED", "a"), event("ADDED", "b")];
    for (i, query) in ["watch=true&resourceVersion=0", "watch=true"].into_iter().enumerate() {
        let mut watch = Watch::open(&client, &format!("{CONFIGMAPS}?{query}")).await;
        let mut initial = Vec::new();
        for _ in 0..existing.len() {
            initial.push(summary(&watch.expect_change().await));
        }
        initial.sort();
        assert_eq!(initial, existing, "{query}");
        let late = format!("late-{i}");
        create_cm(&api, &late, &[]).await;
        assert_eq!(summary(&watch.expect_change().await), event("ADDED", &late), "{query}");
        existing.push(event("ADDED", &late));
    }
}

#[tokio::test]
async fn watches_that_ask_for_bookmarks_get_them() {
    let sim = util::start_with(SimConfig {
        api: ApiConfig { bookmark_interval: Duration::from_millis(50), ..ApiConfig::default() },
        ..SimConfig::default()
    })
    .await;
    let client = sim.client().expect("client");
    let api: Api<ConfigMap> = Api::default_namespaced(client.clone());
    let from = api_rv(&client).await;
    let mut watch =
        Watch::open(&client, &format!("{CONFIGMAPS}?watch=true&resourceVersion={from}&allowWatchBookmarks=true")).await;
    let created = create_cm(&api, "a", &[]).await;
    let created_rv: u64 = created.metadata.resource_version.as_deref().and_then(|v| v.parse().ok()).expect("rv");
    // Bookmarks carry only the kind and a version; once the change has been
    // passed, a bookmark's version is at least the change's.
    let mut saw_change = false;
    loop {
        let e = watch.expect().await;
        match e["type"].as_str() {
            Some("ADDED") => {
                assert_eq!(summary(&e), event("ADDED", "a"));
                saw_change = true;
            }
            Some("BOOKMARK") => {
                let object = &e["object"];
                assert_eq!((&object["kind"], &object["apiVersion"]), (&json!("ConfigMap"), &json!("v1")));
                assert!(object.get("data").is_none(), "a bookmark carries no object data: {object}");
                if saw_change {
                    assert!(rv_of(object) >= created_rv, "bookmark {object} before the change it passed");
                    break;
                }
            }
            other => panic!("unexpected event {other:?}: {e}"),
        }
    }
}

#[tokio::test]
async fn timeout_seconds_ends_the_stream_and_no_bookmarks_come_unasked() {
    let sim = util::start_with(SimConfig {
        api: ApiConfig { bookmark_interval: Duration::from_millis(20), ..ApiConfig::default() },
        ..SimConfig::default()
    })
    .await;
    let client = sim.client().expect("client");
    let from = api_rv(&client).await;
    let mut watch =
        Watch::open(&client, &format!("{CONFIGMAPS}?watch=true&resourceVersion={from}&timeoutSeconds=1")).await;
    // The stream ends by itself (Watch::next fails the test after the
    // deadline), and with bookmarks not asked for, none was sent.
    if let Some(e) = watch.next().await {
        panic!("no events expected on an idle watch without bookmarks, got {e}");
    }
}

#[tokio::test]
async fn initial_events_are_added_then_the_initial_events_end_bookmark() {
    let sim = util::start_bare().await;
    let client = sim.client().expect("client");
    let api: Api<ConfigMap> = Api::default_namespaced(client.clone());
    create_cm(&api, "a", &[]).await;
    create_cm(&api, "b", &[]).await;
    let query = "watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true";
    let mut watch = Watch::open(&client, &format!("{CONFIGMAPS}?{query}")).await;
    let mut initial = vec![summary(&watch.expect().await), summary(&watch.expect().await)];
    initial.sort();
    assert_eq!(initial, [event("ADDED", "a"), event("ADDED", "b")]);
    let bookmark = watch.expect().await;
    assert_eq!(bookmark["type"], "BOOKMARK", "{bookmark}");
    assert_eq!(bookmark["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"], "true");
    create_cm(&api, "c", &[]).await;
    assert_eq!(summary(&watch.expect_change().await), event("ADDED", "c"));

    // sendInitialEvents needs NotOlderThan and bookmarks.
    let answer = get(&client, &format!("{CONFIGMAPS}?watch=true&sendInitialEvents=true")).await;
    assert_eq!(answer.code(), 422);
    assert_eq!(answer.json()["reason"], "Invalid");
}

#[tokio::test]
async fn a_watch_with_a_label_selector_reports_leaving_as_deleted_and_entering_as_added() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    let api: Api<ConfigMap> = Api::default_namespaced(client.clone());
    create_cm(&api, "x", &[("app", "web")]).await;
    create_cm(&api, "y", &[("app", "db")]).await;
    let from = api_rv(&client).await;
    let mut watch =
        Watch::open(&client, &format!("{CONFIGMAPS}?watch=true&resourceVersion={from}&labelSelector=app%3Dweb")).await;
    merge_labels(&api, "x", json!({"app": "db"})).await;
    merge_labels(&api, "y", json!({"app": "web"})).await;
    // Changes outside the selection before and after are not sent.
    merge_labels(&api, "x", json!({"other": "change"})).await;
    create_cm(&api, "z", &[("app", "db")]).await;
    merge_labels(&api, "y", json!({"tier": "front"})).await;
    let left = watch.expect_change().await;
    assert_eq!(summary(&left), event("DELETED", "x"));
    assert_eq!(left["object"]["metadata"]["labels"]["app"], "db", "the DELETED object is its new state");
    assert_eq!(summary(&watch.expect_change().await), event("ADDED", "y"));
    assert_eq!(summary(&watch.expect_change().await), event("MODIFIED", "y"));
}

#[tokio::test]
async fn a_watch_with_a_name_field_selector_follows_one_object() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    let api: Api<ConfigMap> = Api::default_namespaced(client.clone());
    create_cm(&api, "other", &[]).await;
    create_cm(&api, "mine", &[]).await;
    let mut watch = Watch::open(&client, &format!("{CONFIGMAPS}?watch=true&fieldSelector=metadata.name%3Dmine")).await;
    assert_eq!(summary(&watch.expect_change().await), event("ADDED", "mine"));
    merge_labels(&api, "other", json!({"x": "1"})).await;
    merge_labels(&api, "mine", json!({"x": "1"})).await;
    api.delete("mine", &Default::default()).await.expect("deleted");
    assert_eq!(summary(&watch.expect_change().await), event("MODIFIED", "mine"));
    assert_eq!(summary(&watch.expect_change().await), event("DELETED", "mine"));
}

#[tokio::test]
async fn kube_watcher_with_streaming_lists_starts_from_initial_events() {
    let sim = util::start_bare().await;
    let api: Api<ConfigMap> = Api::default_namespaced(sim.client().expect("client"));
    create_cm(&api, "a", &[]).await;
    let mut stream = watcher(api.clone(), watcher::Config::default().streaming_lists()).boxed();
    let mut initial = Vec::new();
    let done = tokio::time::timeout(util::DEADLINE, async {
        loop {
            match stream.try_next().await.expect("no watcher error") {
                Some(watcher::Event::InitApply(c)) => initial.extend(c.metadata.name),
                Some(watcher::Event::InitDone) => break,
                Some(_) => {}
                None => panic!("the watcher ended"),
            }
        }
    })
    .await;
    assert!(done.is_ok(), "no InitDone: the initial-events-end bookmark was not understood");
    assert_eq!(initial, ["a"]);
    create_cm(&api, "b", &[]).await;
    let next = tokio::time::timeout(util::DEADLINE, stream.try_next()).await.expect("an event in time");
    match next.expect("no watcher error") {
        Some(watcher::Event::Apply(c)) => assert_eq!(c.metadata.name.as_deref(), Some("b")),
        other => panic!("expected b applied, got {other:?}"),
    }
}

#[tokio::test]
async fn a_watch_from_a_compacted_version_gets_a_410_expired_error_event() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    let api: Api<ConfigMap> = Api::default_namespaced(client.clone());
    let old = create_cm(&api, "a", &[]).await.metadata.resource_version.expect("rv");
    create_cm(&api, "b", &[]).await;
    sim.controls().compact();
    let mut watch = Watch::open(&client, &format!("{CONFIGMAPS}?watch=true&resourceVersion={old}")).await;
    let error = watch.expect().await;
    assert_eq!(error["type"], "ERROR", "{error}");
    let status = &error["object"];
    assert_eq!((&status["kind"], &status["status"]), (&json!("Status"), &json!("Failure")));
    assert_eq!((&status["code"], &status["reason"]), (&json!(410), &json!("Expired")));
    assert!(watch.next().await.is_none(), "the stream ends after the error");

    // A version at or after the compaction still resumes.
    let now = api_rv(&client).await;
    let mut watch = Watch::open(&client, &format!("{CONFIGMAPS}?watch=true&resourceVersion={now}")).await;
    create_cm(&api, "c", &[]).await;
    assert_eq!(summary(&watch.expect_change().await), event("ADDED", "c"));
}

#[tokio::test]
async fn kube_watcher_relists_after_410_and_still_delivers_later_changes() {
    let sim = util::start_bare().await;
    let client = sim.client().expect("client");
    let api: Api<ConfigMap> = Api::default_namespaced(client.clone());
    create_cm(&api, "before", &[]).await;
    let mut stream = watcher(api.clone(), watcher::Config::default()).boxed();

    // Reads events until `done` says so, failing on watcher errors other
    // than the expected 410.
    async fn until(
        stream: &mut (impl futures::Stream<Item = Result<watcher::Event<ConfigMap>, watcher::Error>> + Unpin),
        what: &str,
        mut done: impl FnMut(&watcher::Event<ConfigMap>) -> bool,
    ) {
        let found = tokio::time::timeout(util::DEADLINE, async {
            loop {
                match stream.try_next().await {
                    Ok(Some(e)) if done(&e) => return,
                    Ok(Some(_)) => {}
                    Ok(None) => panic!("the watcher ended"),
                    Err(watcher::Error::WatchError(s)) if s.code == 410 => {}
                    Err(e) => panic!("watcher error: {e}"),
                }
            }
        })
        .await;
        assert!(found.is_ok(), "timed out waiting for {what}");
    }

    let named = |e: &watcher::Event<ConfigMap>, name: &str| match e {
        watcher::Event::Apply(c) | watcher::Event::InitApply(c) => c.metadata.name.as_deref() == Some(name),
        _ => false,
    };
    until(&mut stream, "the initial list", |e| matches!(e, watcher::Event::InitDone)).await;
    create_cm(&api, "seen", &[]).await;
    until(&mut stream, "seen", |e| named(e, "seen")).await;

    // Move the store past the watcher's version, forget the history and
    // close its watch: it resumes from a version that is gone, gets 410,
    // and must relist.
    create_cm(&Api::namespaced(client.clone(), "kube-system"), "elsewhere", &[]).await;
    sim.controls().compact();
    sim.controls().drop_watches();
    until(&mut stream, "a relist", |e| matches!(e, watcher::Event::Init)).await;
    let mut relisted = Vec::new();
    until(&mut stream, "the relist to finish", |e| {
        if let watcher::Event::InitApply(c) = e {
            relisted.extend(c.metadata.name.clone());
        }
        matches!(e, watcher::Event::InitDone)
    })
    .await;
    relisted.sort();
    assert_eq!(relisted, ["before", "seen"]);
    create_cm(&api, "after", &[]).await;
    until(&mut stream, "after", |e| named(e, "after")).await;
}
