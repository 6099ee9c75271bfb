//! The admission plugins as a client sees them: the ServiceAccount plugin
//! refusing pods whose ServiceAccount is missing and adding the token
//! volume as the API server does, and switched off as
//! `--disable-admission-plugins=ServiceAccount` switches it off;
//! TaintNodesByCondition tainting new Nodes not-ready.

use kube_sim::admission::{AdmissionConfig, Plugin};
use kube_sim::api::ApiConfig;
use kube_sim::{Sim, SimConfig};
use serde_json::{Value, json};

use super::util::{self, call, create};

const PODS: &str = "/api/v1/namespaces/default/pods";

fn pod(name: &str, spec: Value) -> Value {
    let mut spec = spec;
    if spec.get("containers").is_none() {
        spec["containers"] = json!([{"name": "web", "image": "nginx"}]);
    }
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec})
}

/// The random part of the token volume's name replaced by `xxxxx`.
fn masked(spec: &Value) -> Value {
    let text = spec.to_string();
    let Some(at) = text.find("kube-api-access-") else { return spec.clone() };
    let generated = &text[at..at + "kube-api-access-".len() + 5];
    serde_json::from_str(&text.replace(generated, "kube-api-access-xxxxx")).expect("still JSON")
}

#[tokio::test]
async fn a_pod_gets_the_default_service_account_and_its_token_volume_as_on_a_real_cluster() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    let created = create(&client, PODS, &pod("web", json!({}))).await;
    // `kubectl get pod web -o json` on a cluster after `kubectl run web
    // --image=nginx`, before scheduling.
    let shown = json!({
        "containers": [{
            "image": "nginx", "imagePullPolicy": "Always", "name": "web", "resources": {},
            "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
            "volumeMounts": [{"mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
                "name": "kube-api-access-xxxxx", "readOnly": true}],
        }],
        "dnsPolicy": "ClusterFirst", "enableServiceLinks": true,
        "preemptionPolicy": "PreemptLowerPriority", "priority": 0, "restartPolicy": "Always",
        "schedulerName": "default-scheduler", "securityContext": {},
        "serviceAccount": "default", "serviceAccountName": "default",
        "terminationGracePeriodSeconds": 30,
        "tolerations": [
            {"effect": "NoExecute", "key": "node.kubernetes.io/not-ready", "operator": "Exists", "tolerationSeconds": 300},
            {"effect": "NoExecute", "key": "node.kubernetes.io/unreachable", "operator": "Exists", "tolerationSeconds": 300},
        ],
        "volumes": [{"name": "kube-api-access-xxxxx", "projected": {"defaultMode": 420, "sources": [
            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
            {"configMap": {"items": [{"key": "ca.crt", "path": "ca.crt"}], "name": "kube-root-ca.crt"}},
            {"downwardAPI": {"items": [{"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}, "path": "namespace"}]}},
        ]}}],
    });
    let mut spec = masked(&created["spec"]);
    spec.as_object_mut().expect("a spec").remove("nodeName");
    assert_eq!(spec, shown);
    let name = created["spec"]["volumes"][0]["name"].as_str().expect("a volume name");
    let suffix = name.strip_prefix("kube-api-access-").expect("the prefix");
    assert!(suffix.len() == 5 && suffix.chars().all(|c| "bcdfghjklmnpqrstvwxz2456789".contains(c)), "{name}");
}

#[tokio::test]
async fn init_containers_mount_the_token_and_the_service_account_gives_its_pull_secrets() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    let sa = json!({"apiVersion": "v1", "kind": "ServiceAccount",
        "metadata": {"name": "robot"}, "imagePullSecrets": [{"name": "registry"}]});
    create(&client, "/api/v1/namespaces/default/serviceaccounts", &sa).await;
    let spec = json!({"serviceAccountName": "robot", "initContainers": [{"name": "init", "image": "busybox"}]});
    let created = create(&client, PODS, &pod("with-init", spec)).await;
    let spec = masked(&created["spec"]);
    let mount = json!([{"mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
        "name": "kube-api-access-xxxxx", "readOnly": true}]);
    assert_eq!(spec["initContainers"][0]["volumeMounts"], mount);
    assert_eq!(spec["containers"][0]["volumeMounts"], mount);
    assert_eq!(spec["imagePullSecrets"], json!([{"name": "registry"}]));
    assert_eq!((&spec["serviceAccountName"], &spec["serviceAccount"]), (&json!("robot"), &json!("robot")));

    let own = json!({"serviceAccountName": "robot", "imagePullSecrets": [{"name": "mine"}]});
    let created = create(&client, PODS, &pod("own-secrets", own)).await;
    assert_eq!(created["spec"]["imagePullSecrets"], json!([{"name": "mine"}]), "a pod's own pull secrets are kept");
}

#[tokio::test]
async fn automount_false_on_the_pod_or_its_service_account_mounts_nothing() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    let sa = json!({"apiVersion": "v1", "kind": "ServiceAccount",
        "metadata": {"name": "quiet"}, "automountServiceAccountToken": false});
    create(&client, "/api/v1/namespaces/default/serviceaccounts", &sa).await;
    let off = create(&client, PODS, &pod("off", json!({"automountServiceAccountToken": false}))).await;
    let quiet = create(&client, PODS, &pod("quiet", json!({"serviceAccountName": "quiet"}))).await;
    let loud = create(
        &client,
        PODS,
        &pod("loud", json!({"serviceAccountName": "quiet", "automountServiceAccountToken": true})),
    )
    .await;
    for created in [&off, &quiet] {
        assert!(created["spec"].get("volumes").is_none(), "{}", created["spec"]);
        assert!(created["spec"]["containers"][0].get("volumeMounts").is_none(), "{}", created["spec"]);
    }
    assert_eq!(loud["spec"]["volumes"].as_array().map(Vec::len), Some(1), "the pod's preference wins");
}

#[tokio::test]
async fn a_pod_whose_service_account_is_missing_is_forbidden() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    let answer = call(&client, "POST", PODS, &[], Some(&pod("web", json!({"serviceAccountName": "robot"})))).await;
    assert_eq!(answer.code(), 403, "{}", answer.body);
    let status = answer.json();
    assert_eq!(
        status["message"],
        "pods \"web\" is forbidden: error looking up service account default/robot: serviceaccount \"robot\" not found"
    );
    assert_eq!(status["reason"], "Forbidden");
    assert_eq!(status["details"], json!({"name": "web", "kind": "pods"}));

    // Before the name is generated, admission names the pod by its prefix,
    // as a ReplicaSet's FailedCreate events show it.
    let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "fresh"}});
    create(&client, "/api/v1/namespaces", &ns).await;
    let generated = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "web-7d4b9-"},
        "spec": {"containers": [{"name": "web", "image": "nginx"}]}});
    let answer = call(&client, "POST", "/api/v1/namespaces/fresh/pods", &[], Some(&generated)).await;
    assert_eq!(answer.code(), 403, "{}", answer.body);
    assert_eq!(
        answer.json()["message"],
        "pods \"web-7d4b9-\" is forbidden: error looking up service account fresh/default: serviceaccount \"default\" not found"
    );
}

#[tokio::test]
async fn a_create_waits_for_the_default_service_account_a_controller_is_creating() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "new"}});
    create(&client, "/api/v1/namespaces", &ns).await;
    // The pod's create and the ServiceAccount's race, as a controller
    // manager's serviceaccount-controller races a user's first pod: the API
    // server looks `default` up again for a while before refusing the pod.
    let pod_client = client.clone();
    let pod_create = tokio::spawn(async move {
        call(&pod_client, "POST", "/api/v1/namespaces/new/pods", &[], Some(&pod("first", json!({})))).await
    });
    let sa = json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default"}});
    create(&client, "/api/v1/namespaces/new/serviceaccounts", &sa).await;
    let answer = pod_create.await.expect("the create ran");
    assert_eq!(answer.code(), 201, "{}", answer.body);
}

#[tokio::test]
async fn mirror_pods_are_left_alone_but_may_not_name_service_accounts_or_secrets() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    let mirror = |name: &str, spec: Value| {
        let mut p = pod(name, spec);
        p["metadata"]["annotations"] = json!({"kubernetes.io/config.mirror": "hash"});
        p
    };
    let created = create(&client, PODS, &mirror("static-web", json!({"nodeName": "node-1"}))).await;
    assert!(created["spec"].get("serviceAccountName").is_none(), "{}", created["spec"]);
    assert!(created["spec"].get("volumes").is_none(), "{}", created["spec"]);
    for (name, spec, why) in [
        ("named", json!({"serviceAccountName": "default"}), "a mirror pod may not reference service accounts"),
        (
            "secret",
            json!({"volumes": [{"name": "s", "secret": {"secretName": "s"}}]}),
            "a mirror pod may not reference secrets",
        ),
        (
            "token",
            json!({"volumes": [{"name": "t", "projected": {"sources": [{"serviceAccountToken": {"path": "t"}}]}}]}),
            "a mirror pod may not use ServiceAccountToken volume projections",
        ),
    ] {
        let answer = call(&client, "POST", PODS, &[], Some(&mirror(name, spec))).await;
        assert_eq!(answer.code(), 403, "{name}: {}", answer.body);
        assert_eq!(answer.json()["message"], format!("pods \"{name}\" is forbidden: {why}"));
    }
}

#[tokio::test]
async fn with_the_plugin_disabled_pods_need_no_service_account_and_get_none() {
    let admission = AdmissionConfig::default().disable(Plugin::ServiceAccount);
    let sim = Sim::start(SimConfig { api: ApiConfig { admission, ..ApiConfig::default() }, ..SimConfig::default() })
        .await
        .expect("kube-sim starts");
    let client = sim.client().expect("client");
    let created = create(&client, PODS, &pod("web", json!({}))).await;
    for field in ["serviceAccountName", "serviceAccount", "volumes"] {
        assert!(created["spec"].get(field).is_none(), "{field}: {}", created["spec"]);
    }
}

/// kube-apiserver's TaintNodesByCondition: a Node created through the API
/// gets `node.kubernetes.io/not-ready:NoSchedule` beside its own taints
/// (the node-lifecycle-controller takes it off once the node is Ready); an
/// update does not put it back, and with the plugin off there is none.
#[tokio::test]
async fn a_new_node_is_tainted_not_ready_until_a_controller_untaints_it() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    let node = |name: &str| {
        json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
            "spec": {"taints": [{"key": "dedicated", "value": "db", "effect": "NoSchedule"}]}})
    };
    let created = create(&client, "/api/v1/nodes", &node("joined")).await;
    let not_ready = json!({"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"});
    assert_eq!(
        created["spec"]["taints"],
        json!([{"key": "dedicated", "value": "db", "effect": "NoSchedule"}, not_ready])
    );
    let untaint = json!({"spec": {"taints": [{"key": "dedicated", "value": "db", "effect": "NoSchedule"}]}});
    let headers = [("content-type", "application/merge-patch+json")];
    let patched = call(&client, "PATCH", "/api/v1/nodes/joined", &headers, Some(&untaint)).await;
    assert_eq!(patched.code(), 200, "{}", patched.body);
    assert_eq!(patched.json()["spec"]["taints"], untaint["spec"]["taints"], "an update is not admitted again");

    let admission = AdmissionConfig::default().disable(Plugin::TaintNodesByCondition);
    let sim = Sim::start(SimConfig { api: ApiConfig { admission, ..ApiConfig::default() }, ..SimConfig::default() })
        .await
        .expect("kube-sim starts");
    let created = create(&sim.client().expect("client"), "/api/v1/nodes", &node("plain")).await;
    assert_eq!(created["spec"]["taints"], json!([{"key": "dedicated", "value": "db", "effect": "NoSchedule"}]));
}
