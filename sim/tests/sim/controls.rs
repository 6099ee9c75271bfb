//! The simulator's controls, through the `/sim/v1` endpoints and from Rust:
//! injected faults, restarts, dropped and held watches, compaction, request stats,
//! custom resource types and node stop/start.

use futures::StreamExt;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{ConfigMap, Pod, Secret};
use kube::api::{
    ApiResource, DeleteParams, DynamicObject, GroupVersionKind, ListParams, Patch, PatchParams, PostParams,
};
use kube::runtime::watcher;
use kube_sim::testing::wait_for;
use serde_json::json;
use tokio::sync::mpsc;

use super::util::{self, DEADLINE, PATIENCE, call};

// === utils ===

/// A client that does not retry 429s (kube's default client does), so the
/// answers are what the server sent.
fn raw_client(sim: &kube_sim::Sim) -> kube::Client {
    let mut config = kube::Config::new(sim.url().parse().expect("a valid URL"));
    config.default_retry = false;
    kube::Client::try_from(config).expect("client")
}

fn config_map(name: &str) -> ConfigMap {
    serde_json::from_value(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name},
        "data": {"k": "v"}}))
    .expect("a valid ConfigMap")
}

fn pod(name: &str) -> Pod {
    serde_json::from_value(json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
        "spec": {"containers": [{"name": "app", "image": "nginx"}]}}))
    .expect("a valid pod")
}

fn rv<K: kube::Resource>(object: &K) -> u64 {
    object.meta().resource_version.as_deref().and_then(|v| v.parse().ok()).expect("a numeric resourceVersion")
}

/// Count of `GET /sim/v1/stats` for one (verb, resource, code).
async fn stat(client: &kube::Client, verb: &str, resource: &str, code: u16) -> u64 {
    let stats = util::get(client, "/sim/v1/stats").await;
    assert_eq!(stats.code(), 200, "{}", stats.body);
    stats.json()["requests"]
        .as_array()
        .expect("a list of counts")
        .iter()
        .filter(|l| l["verb"] == verb && l["resource"] == resource && l["code"] == code)
        .map(|l| l["count"].as_u64().unwrap_or(0))
        .sum()
}

/// What a kube-rs watcher reported, in order.
#[derive(Debug, PartialEq)]
enum Seen {
    Init,
    InitDone,
    Apply(String),
    Delete(String),
    Error(String),
}

/// Runs a kube-rs watcher on default/configmaps in a task, forwarding what
/// it reports; waits until its initial list is done.
async fn config_map_watcher(client: kube::Client) -> (mpsc::UnboundedReceiver<Seen>, tokio::task::JoinHandle<()>) {
    let api: kube::Api<ConfigMap> = kube::Api::namespaced(client, "default");
    let (tx, mut rx) = mpsc::unbounded_channel();
    let task = tokio::spawn(async move {
        let mut events = watcher(api, watcher::Config::default()).boxed();
        while let Some(event) = events.next().await {
            let name = |cm: &ConfigMap| cm.metadata.name.clone().unwrap_or_default();
            let seen = match event {
                Ok(watcher::Event::Init) => Seen::Init,
                Ok(watcher::Event::InitApply(cm)) | Ok(watcher::Event::Apply(cm)) => Seen::Apply(name(&cm)),
                Ok(watcher::Event::InitDone) => Seen::InitDone,
                Ok(watcher::Event::Delete(cm)) => Seen::Delete(name(&cm)),
                Err(e) => Seen::Error(e.to_string()),
            };
            if tx.send(seen).is_err() {
                return;
            }
        }
    });
    assert_eq!(next_seen(&mut rx).await, Seen::Init);
    while next_seen(&mut rx).await != Seen::InitDone {}
    (rx, task)
}

async fn next_seen(rx: &mut mpsc::UnboundedReceiver<Seen>) -> Seen {
    tokio::time::timeout(DEADLINE, rx.recv()).await.expect("the watcher reports in time").expect("watcher running")
}

/// Reads watcher reports until every name in `names` has been applied,
/// returning everything seen on the way.
async fn until_applied(rx: &mut mpsc::UnboundedReceiver<Seen>, names: &[&str]) -> Vec<Seen> {
    let mut seen = Vec::new();
    while !names.iter().all(|n| seen.contains(&Seen::Apply((*n).to_owned()))) {
        let next = tokio::time::timeout(DEADLINE, rx.recv()).await;
        match next {
            Ok(Some(s)) => seen.push(s),
            _ => panic!("watcher did not report {names:?}; saw {seen:?}"),
        }
    }
    seen
}

// === faults ===

#[tokio::test]
async fn an_error_rate_of_one_fails_matching_requests_with_500_and_leaves_others_alone() {
    let sim = util::start().await;
    let client = raw_client(&sim);
    let spec = json!({"rules": [{"verb": "create", "resource": "pods", "errorRate": 1.0}]});
    let put = call(&client, "PUT", "/sim/v1/faults", &[], Some(&spec)).await;
    assert!(put.status.is_success(), "{put:?}");

    let pods: kube::Api<Pod> = kube::Api::namespaced(client.clone(), "default");
    match pods.create(&PostParams::default(), &pod("web")).await {
        Err(kube::Error::Api(status)) => {
            assert_eq!((status.code, status.reason.as_str()), (500, "InternalError"), "{status:?}")
        }
        other => panic!("expected a 500, got {other:?}"),
    }
    let raw = call(&client, "POST", "/api/v1/namespaces/default/pods", &[], Some(&json!(pod("web")))).await;
    assert_eq!(raw.code(), 500);
    let body = raw.json();
    assert_eq!((body["kind"].as_str(), body["status"].as_str()), (Some("Status"), Some("Failure")), "{body}");
    // Other verbs on pods, and creates of other resources, go through.
    pods.list(&ListParams::default()).await.expect("list pods unaffected");
    let config_maps: kube::Api<ConfigMap> = kube::Api::namespaced(client.clone(), "default");
    config_maps.create(&PostParams::default(), &config_map("c")).await.expect("create configmaps unaffected");

    let del = call(&client, "DELETE", "/sim/v1/faults", &[], None).await;
    assert!(del.status.is_success(), "{del:?}");
    assert_eq!(util::get(&client, "/sim/v1/faults").await.json()["rules"], json!([]));
    pods.create(&PostParams::default(), &pod("web")).await.expect("creates work once faults are cleared");
}

#[tokio::test]
async fn a_throttle_rate_of_one_answers_429_with_retry_after() {
    let sim = util::start().await;
    let client = raw_client(&sim);
    let spec =
        json!({"rules": [{"verb": "list", "resource": "configmaps", "throttleRate": 1.0, "retryAfterSeconds": 7}]});
    assert!(call(&client, "PUT", "/sim/v1/faults", &[], Some(&spec)).await.status.is_success());
    let answer = util::get(&client, "/api/v1/namespaces/default/configmaps").await;
    assert_eq!(answer.code(), 429, "{}", answer.body);
    assert_eq!(answer.headers.get("retry-after").and_then(|v| v.to_str().ok()), Some("7"));
    let body = answer.json();
    assert_eq!((body["kind"].as_str(), body["reason"].as_str()), (Some("Status"), Some("TooManyRequests")), "{body}");
    assert_eq!(body["details"]["retryAfterSeconds"], 7, "{body}");
    // A get of one configmap is another verb.
    let get = util::get(&client, "/api/v1/namespaces/default/configmaps/missing").await;
    assert_eq!(get.code(), 404, "{}", get.body);
}

#[tokio::test]
async fn fault_rules_are_stored_as_given_and_refused_when_invalid() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    let spec = json!({"rules": [
        {"verb": "get", "resource": "deployments/status", "latencyMs": 50, "errorRate": 0.25, "throttleRate": 0.5,
            "retryAfterSeconds": 3},
        {"resource": "pods", "latencyMs": 5},
    ]});
    assert!(call(&client, "PUT", "/sim/v1/faults", &[], Some(&spec)).await.status.is_success());
    let stored = util::get(&client, "/sim/v1/faults").await.json();
    assert_eq!(stored["rules"][0], spec["rules"][0]);
    assert_eq!(stored["rules"][1]["resource"], "pods");
    assert_eq!(stored["rules"][1]["latencyMs"], 5);
    assert_eq!(stored["rules"][1]["errorRate"], 0.0);
    assert!(stored["rules"][1].get("verb").is_none(), "{stored}");
    assert_eq!(sim.controls().faults().rules.len(), 2);

    for invalid in [
        json!({"rules": [{"errorRate": 1.5}]}),
        json!({"rules": [{"errorRate": 0.6, "throttleRate": 0.6}]}),
        json!({"rules": [{"errorRate": -0.1}]}),
        json!({"rules": [{"verb": "get", "latency": 5}]}),
        json!({"rulez": []}),
    ] {
        let answer = call(&client, "PUT", "/sim/v1/faults", &[], Some(&invalid)).await;
        assert_eq!(answer.code(), 400, "{invalid} -> {}", answer.body);
    }
    let not_json = call(&client, "PUT", "/sim/v1/faults", &[("content-type", "application/json")], None).await;
    assert_eq!(not_json.code(), 400);
    assert_eq!(util::get(&client, "/sim/v1/faults").await.json(), stored, "refused specs change nothing");
}

// === connections and history ===

#[tokio::test]
async fn a_restart_ends_open_watches_and_keeps_the_state() {
    use http_body_util::BodyExt;
    let sim = util::start_bare().await;
    let client = sim.client().expect("client");
    let config_maps: kube::Api<ConfigMap> = kube::Api::namespaced(client.clone(), "default");
    let before = config_maps.create(&PostParams::default(), &config_map("before")).await.expect("created");

    let request = http::Request::get("/api/v1/namespaces/default/configmaps?watch=true")
        .body(kube::client::Body::empty())
        .expect("request builds");
    let response = client.send(request).await.expect("watch opened");
    assert_eq!(response.status(), 200);
    let mut body = response.into_body();
    let first = tokio::time::timeout(DEADLINE, body.frame()).await.expect("the ADDED event in time");
    assert!(matches!(first, Some(Ok(_))), "{first:?}");

    let answer = call(&sim.client().expect("client"), "POST", "/sim/v1/restart", &[], None).await;
    assert!(answer.status.is_success(), "{answer:?}");
    // The stream ends (cleanly or not) instead of waiting for more events.
    tokio::time::timeout(DEADLINE, async { while let Some(Ok(_)) = body.frame().await {} })
        .await
        .expect("the watch ends at the restart");

    // A client connecting afresh finds everything as it was, and versions
    // carry on from where they were.
    let config_maps: kube::Api<ConfigMap> = kube::Api::namespaced(sim.client().expect("client"), "default");
    let still = config_maps.get("before").await.expect("state kept");
    assert_eq!(still.metadata.uid, before.metadata.uid);
    assert_eq!(rv(&still), rv(&before));
    let after = config_maps.create(&PostParams::default(), &config_map("after")).await.expect("created");
    assert!(rv(&after) > rv(&before));
    let list = config_maps.list(&ListParams::default()).await.expect("listed");
    let names: Vec<_> = list.items.iter().filter_map(|c| c.metadata.name.clone()).collect();
    assert_eq!(names, ["after", "before"]);
    // The client from before the restart reconnects.
    let old = kube::Api::<ConfigMap>::namespaced(client, "default");
    wait_for(&sim, PATIENCE, "the old client reconnects", || async {
        old.get("after").await.map_err(|e| e.to_string())
    })
    .await;
}

#[tokio::test]
async fn after_watches_are_dropped_a_watcher_resumes_without_losing_events() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    let config_maps: kube::Api<ConfigMap> = kube::Api::namespaced(client.clone(), "default");
    config_maps.create(&PostParams::default(), &config_map("old")).await.expect("created");
    let (mut rx, task) = config_map_watcher(client.clone()).await;
    assert_eq!(stat(&client, "watch", "configmaps", 200).await, 1);

    let answer = call(&client, "POST", "/sim/v1/watches/drop", &[], None).await;
    assert!(answer.status.is_success(), "{answer:?}");
    // Created while the watcher reconnects, and after it has.
    config_maps.create(&PostParams::default(), &config_map("during")).await.expect("created");
    wait_for(&sim, PATIENCE, "the watcher to watch again", || async {
        let watches = stat(&client, "watch", "configmaps", 200).await;
        if watches >= 2 { Ok(()) } else { Err(format!("{watches} watches")) }
    })
    .await;
    config_maps.create(&PostParams::default(), &config_map("after-1")).await.expect("created");
    config_maps.create(&PostParams::default(), &config_map("after-2")).await.expect("created");
    let seen = until_applied(&mut rx, &["during", "after-1", "after-2"]).await;
    // Resumed from its last version: no relist, nothing failed.
    assert!(!seen.iter().any(|s| matches!(s, Seen::Init | Seen::Error(_))), "{seen:?}");
    task.abort();
}

#[tokio::test]
async fn after_compaction_a_watch_from_an_old_version_gets_410_and_a_watcher_relists() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    let config_maps: kube::Api<ConfigMap> = kube::Api::namespaced(client.clone(), "default");
    let old = config_maps.create(&PostParams::default(), &config_map("a")).await.expect("created");
    let (mut rx, task) = config_map_watcher(client.clone()).await;
    config_maps.create(&PostParams::default(), &config_map("b")).await.expect("created");
    assert_eq!(until_applied(&mut rx, &["b"]).await, [Seen::Apply("b".into())]);
    // A change of another type after the watcher's last version.
    let secrets: kube::Api<Secret> = kube::Api::namespaced(client.clone(), "default");
    let secret = serde_json::from_value(json!({"metadata": {"name": "s"}})).expect("a valid Secret");
    secrets.create(&PostParams::default(), &secret).await.expect("created");

    let answer = call(&client, "POST", "/sim/v1/compact", &[], None).await;
    assert!(answer.status.is_success(), "{answer:?}");
    let path = format!("/api/v1/namespaces/default/configmaps?watch=true&resourceVersion={}", rv(&old));
    let mut watch = util::Watch::open(&client, &path).await;
    let event = watch.expect().await;
    assert_eq!(event["type"], "ERROR", "{event}");
    assert_eq!(event["object"]["kind"], "Status", "{event}");
    assert_eq!(event["object"]["code"], 410, "{event}");
    assert_eq!(event["object"]["reason"], "Expired", "{event}");

    // The watcher resumes from a compacted version: it is told 410 and
    // lists again, finding what was created meanwhile.
    sim.controls().drop_watches();
    config_maps.create(&PostParams::default(), &config_map("c")).await.expect("created");
    let seen = until_applied(&mut rx, &["c"]).await;
    assert!(seen.contains(&Seen::Init), "relisted: {seen:?}");
    assert!(seen.iter().any(|s| matches!(s, Seen::Error(e) if e.contains("Expired") || e.contains("410"))), "{seen:?}");
    task.abort();
}

#[tokio::test]
async fn a_held_resource_gets_its_watch_events_on_release_in_order_and_across_reconnects() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    let config_maps: kube::Api<ConfigMap> = kube::Api::namespaced(client.clone(), "default");
    let (mut rx, task) = config_map_watcher(client.clone()).await;
    config_maps.create(&PostParams::default(), &config_map("before")).await.expect("created");
    assert_eq!(until_applied(&mut rx, &["before"]).await, [Seen::Apply("before".into())]);

    let answer = call(&client, "POST", "/sim/v1/watches/configmaps/hold", &[], None).await;
    assert_eq!(answer.code(), 204, "{}", answer.body);
    config_maps.create(&PostParams::default(), &config_map("held-1")).await.expect("created");
    // A reconnect while held resumes from the last version sent: held too.
    sim.controls().drop_watches();
    wait_for(&sim, PATIENCE, "the watcher to watch again", || async {
        let watches = stat(&client, "watch", "configmaps", 200).await;
        if watches >= 2 { Ok(()) } else { Err(format!("{watches} watches")) }
    })
    .await;
    config_maps.create(&PostParams::default(), &config_map("held-2")).await.expect("created");
    let listed = config_maps.list(&ListParams::default()).await.expect("listed");
    let names: Vec<String> = listed.items.iter().filter_map(|c| c.metadata.name.clone()).collect();
    assert!(
        ["before", "held-1", "held-2"].iter().all(|n| names.contains(&(*n).to_owned())),
        "lists are not held: {names:?}"
    );

    let answer = call(&client, "POST", "/sim/v1/watches/configmaps/release", &[], None).await;
    assert_eq!(answer.code(), 204, "{}", answer.body);
    let seen = until_applied(&mut rx, &["held-1", "held-2"]).await;
    assert_eq!(seen, [Seen::Apply("held-1".into()), Seen::Apply("held-2".into())], "in order, no relist");
    let unknown = call(&client, "POST", "/sim/v1/watches/configmaps/pause", &[], None).await;
    assert_eq!(unknown.code(), 404, "{}", unknown.body);
    task.abort();
}

// === stats ===

#[tokio::test]
async fn stats_count_requests_by_verb_resource_and_code() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    let pods: kube::Api<Pod> = kube::Api::namespaced(client.clone(), "default");
    for name in ["a", "b", "c"] {
        pods.create(&PostParams::default(), &pod(name)).await.expect("created");
    }
    let _ = pods.create(&PostParams::default(), &pod("a")).await.expect_err("already exists");
    let _ = pods.get("missing").await.expect_err("not found");
    pods.list(&ListParams::default()).await.expect("listed");
    assert!(stat(&client, "create", "pods", 201).await >= 3);
    assert_eq!(stat(&client, "create", "pods", 409).await, 1);
    assert_eq!(stat(&client, "get", "pods", 404).await, 1);
    assert_eq!(stat(&client, "list", "pods", 200).await, 1);
    let from_rust = sim.controls().stats();
    assert!(from_rust.iter().any(|l| l.verb == "create" && l.resource == "pods" && l.code == 201 && l.count >= 3));
}

#[tokio::test]
async fn stats_tell_clients_apart_by_user_agent_and_name_the_group_and_namespace() {
    let sim = util::start().await;
    let url: http::Uri = sim.url().parse().expect("a URL");
    let client_as = |agent: &str| {
        let mut config = kube::Config::new(url.clone());
        config.headers.push((http::header::USER_AGENT, http::HeaderValue::from_str(agent).expect("a header")));
        kube::Client::try_from(config).expect("client")
    };
    let leases: kube::Api<Lease> = kube::Api::namespaced(client_as("controller/v1"), "kube-system");
    let _ = leases.get("missing").await.expect_err("not found");
    let pods: kube::Api<Pod> = kube::Api::namespaced(client_as("other/v2"), "default");
    pods.list(&ListParams::default()).await.expect("listed");

    let stats = sim.controls().stats();
    let lease_get = stats.iter().find(|l| l.verb == "get" && l.resource == "leases").expect("the lease get counted");
    assert_eq!(
        (lease_get.user_agent.as_str(), lease_get.group.as_str(), lease_get.namespace.as_str(), lease_get.code),
        ("controller/v1", "coordination.k8s.io", "kube-system", 404)
    );
    let pod_list = stats.iter().find(|l| l.verb == "list" && l.resource == "pods").expect("the pod list counted");
    assert_eq!((pod_list.user_agent.as_str(), pod_list.group.as_str(), pod_list.user.as_str()), ("other/v2", "", ""));
    let served = util::get(&sim.client().expect("client"), "/sim/v1/stats").await.json();
    let lines = served["requests"].as_array().expect("a list of counts");
    assert!(lines.iter().any(|l| l["userAgent"] == "controller/v1" && l["group"] == "coordination.k8s.io"), "{served}");
}

#[tokio::test]
async fn stats_tell_impersonated_users_apart() {
    let sim = util::start().await;
    let url: http::Uri = sim.url().parse().expect("a URL");
    // A kubeconfig's `as:` (kubectl's --as): the Impersonate-User header.
    let client_as = |user: &str| {
        let mut config = kube::Config::new(url.clone());
        config.auth_info.impersonate = Some(user.to_owned());
        kube::Client::try_from(config).expect("client")
    };
    for (user, times) in [("replica-a", 2), ("replica-b", 1)] {
        let pods: kube::Api<Pod> = kube::Api::namespaced(client_as(user), "default");
        for _ in 0..times {
            pods.list(&ListParams::default()).await.expect("listed");
        }
    }
    let stats = sim.controls().stats();
    let lists = |user: &str| {
        stats
            .iter()
            .filter(|l| l.verb == "list" && l.resource == "pods" && l.user == user)
            .map(|l| l.count)
            .sum::<u64>()
    };
    assert_eq!((lists("replica-a"), lists("replica-b")), (2, 1), "{stats:?}");
    let served = util::get(&sim.client().expect("client"), "/sim/v1/stats").await.json();
    let lines = served["requests"].as_array().expect("a list of counts");
    assert!(lines.iter().any(|l| l["user"] == "replica-a" && l["count"] == 2), "{served}");
}

// === custom resources ===

#[tokio::test]
async fn a_registered_resource_type_is_discovered_and_served() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    let resource = json!({"group": "example.com", "version": "v1", "plural": "widgets", "kind": "Widget",
        "namespaced": true, "shortNames": ["wdg"]});
    let answer = call(&client, "POST", "/sim/v1/resources", &[], Some(&resource)).await;
    assert!(answer.status.is_success(), "{answer:?}");
    let bad = call(&client, "POST", "/sim/v1/resources", &[], Some(&json!({"group": "", "version": "v1"}))).await;
    assert_eq!(bad.code(), 400, "{}", bad.body);

    let groups = client.list_api_groups().await.expect("groups");
    assert!(groups.groups.iter().any(|g| g.name == "example.com"), "{groups:?}");
    let resources = client.list_api_group_resources("example.com/v1").await.expect("resources");
    let widgets = resources.resources.iter().find(|r| r.name == "widgets").expect("widgets served");
    assert_eq!((widgets.kind.as_str(), widgets.namespaced), ("Widget", true));
    assert_eq!(widgets.short_names.as_deref(), Some(&["wdg".to_owned()][..]));

    let ar = ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk("example.com", "v1", "Widget"), "widgets");
    let widgets: kube::Api<DynamicObject> = kube::Api::namespaced_with(client.clone(), "default", &ar);
    let (mut rx, task) = {
        let (tx, rx) = mpsc::unbounded_channel();
        let events = widgets.clone();
        let task = tokio::spawn(async move {
            let mut stream = watcher(events, watcher::Config::default()).boxed();
            while let Some(event) = stream.next().await {
                if tx.send(event.map_err(|e| e.to_string())).is_err() {
                    return;
                }
            }
        });
        (rx, task)
    };
    let mut widget = DynamicObject::new("w1", &ar);
    widget.data = json!({"spec": {"size": 3}});
    let created = widgets.create(&PostParams::default(), &widget).await.expect("created");
    assert!(created.metadata.uid.is_some());
    let got = widgets.get("w1").await.expect("read");
    assert_eq!(got.data["spec"]["size"], 3);
    assert_eq!(widgets.list(&ListParams::default()).await.expect("listed").items.len(), 1);

    let smp = widgets.patch("w1", &PatchParams::default(), &Patch::Strategic(json!({"spec": {"size": 4}}))).await;
    match smp {
        Err(kube::Error::Api(status)) => assert_eq!(status.code, 415, "{status:?}"),
        other => panic!("strategic merge patch of a custom resource must get 415, got {other:?}"),
    }
    let merged = widgets
        .patch("w1", &PatchParams::default(), &Patch::Merge(json!({"spec": {"size": 5}})))
        .await
        .expect("merge patch works");
    assert_eq!(merged.data["spec"]["size"], 5);
    widgets.delete("w1", &DeleteParams::default()).await.expect("deleted");
    assert!(widgets.get_opt("w1").await.expect("read").is_none());

    // The watcher saw it come, change and go.
    let mut sizes = Vec::new();
    loop {
        let event = tokio::time::timeout(DEADLINE, rx.recv()).await.expect("watch events").expect("watching");
        match event.expect("no watch errors") {
            watcher::Event::Apply(w) | watcher::Event::InitApply(w) => sizes.push(w.data["spec"]["size"].clone()),
            watcher::Event::Delete(w) => {
                assert_eq!(w.metadata.name.as_deref(), Some("w1"));
                break;
            }
            watcher::Event::Init | watcher::Event::InitDone => {}
        }
    }
    assert_eq!(sizes.last(), Some(&json!(5)), "{sizes:?}");
    task.abort();
}

// === nodes ===

#[tokio::test]
async fn nodes_are_stopped_and_started_by_name_and_unknown_nodes_are_404() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    for action in ["stop", "start"] {
        let unknown = call(&client, "POST", &format!("/sim/v1/nodes/node-9/{action}"), &[], None).await;
        assert_eq!(unknown.code(), 404, "{action}: {}", unknown.body);
        let known = call(&client, "POST", &format!("/sim/v1/nodes/node-1/{action}"), &[], None).await;
        assert!(known.status.is_success(), "{action}: {known:?}");
    }
    assert!(sim.controls().stop_node("node-9").is_err());
    assert!(sim.controls().start_node("node-9").is_err());
    let bad_action = call(&client, "POST", "/sim/v1/nodes/node-1/reboot", &[], None).await;
    assert_eq!(bad_action.code(), 404);
}

#[tokio::test]
async fn a_registered_type_serves_only_its_verbs() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    let resource = json!({"group": "example.com", "version": "v1", "plural": "gadgets", "kind": "Gadget",
        "namespaced": true, "verbs": ["create", "delete", "get", "list", "watch"]});
    let answer = call(&client, "POST", "/sim/v1/resources", &[], Some(&resource)).await;
    assert!(answer.status.is_success(), "{answer:?}");
    let unknown = json!({"group": "example.com", "version": "v1", "plural": "x", "kind": "X", "namespaced": true,
        "verbs": ["get", "frobnicate"]});
    let bad = call(&client, "POST", "/sim/v1/resources", &[], Some(&unknown)).await;
    assert_eq!(bad.code(), 400, "{}", bad.body);

    let resources = client.list_api_group_resources("example.com/v1").await.expect("resources");
    let gadgets = resources.resources.iter().find(|r| r.name == "gadgets").expect("gadgets served");
    assert_eq!(gadgets.verbs, ["create", "delete", "get", "list", "watch"]);
    let ar = ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk("example.com", "v1", "Gadget"), "gadgets");
    let gadgets: kube::Api<DynamicObject> = kube::Api::namespaced_with(client.clone(), "default", &ar);
    gadgets.create(&PostParams::default(), &DynamicObject::new("g1", &ar)).await.expect("created");
    let refused = gadgets.delete_collection(&DeleteParams::default(), &ListParams::default()).await;
    assert!(matches!(refused, Err(kube::Error::Api(ref s)) if s.code == 405), "{refused:?}");
    gadgets.delete("g1", &DeleteParams::default()).await.expect("deleted one by one");
}
