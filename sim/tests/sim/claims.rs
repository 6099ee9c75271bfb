//! PersistentVolumeClaims as a client sees them: kubectl's columns, the API
//! server's rules (defaults, validation, status only through `/status`),
//! the StorageObjectInUseProtection finalizer, the simulated provisioner
//! binding a new claim unless it is held, and pods that wait, unscheduled,
//! for their claims.

use kube_sim::admission::{AdmissionConfig, Plugin};
use kube_sim::api::ApiConfig;
use kube_sim::testing::{kubeconfig, kubectl_ok, kubectl_ok_with_stdin, wait_for};
use kube_sim::{Sim, SimConfig};
use serde_json::{Value, json};

use super::util::{self, PATIENCE, call, create, get, merge};

// === utils ===

const CLAIMS: &str = "/api/v1/namespaces/default/persistentvolumeclaims";

/// A claim for 1Gi, ReadWriteOnce, with `annotations`.
fn claim(name: &str, annotations: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "annotations": annotations},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}})
}

/// A pod mounting the claim `claim_name`.
fn pod_using(name: &str, claim_name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
        "spec": {"containers": [{"name": "app", "image": "nginx",
            "volumeMounts": [{"name": "data", "mountPath": "/data"}]}],
            "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": claim_name}}]}})
}

/// Waits for the claim to be Bound, and gives it.
async fn wait_bound(sim: &Sim, name: &str) -> Value {
    let client = sim.client().expect("client");
    wait_for(sim, PATIENCE, &format!("{name} to be bound"), || {
        let client = client.clone();
        async move {
            let claim = get(&client, &format!("{CLAIMS}/{name}")).await.json();
            if claim["status"]["phase"] == "Bound" { Ok(claim) } else { Err(claim.to_string()) }
        }
    })
    .await
}

/// The scheduler's verdict when a PreFilter refuses, on the three nodes.
fn verdict(message: &str) -> String {
    format!(
        "0/3 nodes are available: {message}. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
    )
}

// === tests ===

#[tokio::test]
async fn kubectl_shows_a_claim_the_provisioner_bound() {
    let sim = util::start().await;
    let (_dir, config) = kubeconfig(&sim);
    let manifest = "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: data\nspec:\n  accessModes: [ReadWriteOnce]\n  resources:\n    requests:\n      storage: 2Gi\n";
    kubectl_ok_with_stdin(&config, &["apply", "-f", "-"], manifest).await;
    let bound = wait_bound(&sim, "data").await;
    let uid = bound["metadata"]["uid"].as_str().unwrap_or("");
    assert_eq!(bound["spec"]["volumeName"], format!("pvc-{uid}"));
    assert_eq!(bound["spec"]["volumeMode"], "Filesystem");
    assert_eq!(
        bound["status"],
        json!({"phase": "Bound", "accessModes": ["ReadWriteOnce"], "capacity": {"storage": "2Gi"}})
    );
    let annotations = &bound["metadata"]["annotations"];
    assert_eq!(
        (&annotations["pv.kubernetes.io/bind-completed"], &annotations["pv.kubernetes.io/bound-by-controller"]),
        (&json!("yes"), &json!("yes"))
    );

    let table = kubectl_ok(&config, &["get", "pvc"]).await;
    let lines: Vec<Vec<&str>> = table.lines().map(|l| l.split_whitespace().collect()).collect();
    assert_eq!(
        lines[0],
        ["NAME", "STATUS", "VOLUME", "CAPACITY", "ACCESS", "MODES", "STORAGECLASS", "VOLUMEATTRIBUTESCLASS", "AGE"]
    );
    assert_eq!(lines[1][..6], ["data", "Bound", &format!("pvc-{uid}"), "2Gi", "RWO", "<unset>"]);
    let wide = kubectl_ok(&config, &["get", "persistentvolumeclaims", "-o", "wide"]).await;
    assert!(wide.lines().next().unwrap_or("").ends_with("VOLUMEMODE"), "{wide}");
    assert!(wide.contains("Filesystem"), "{wide}");
    kubectl_ok(&config, &["label", "pvc", "data", "tier=db"]).await;
    let labelled = kubectl_ok(&config, &["get", "pvc", "-l", "tier=db", "-o", "name"]).await;
    assert_eq!(labelled.trim(), "persistentvolumeclaim/data");
    let explained = kubectl_ok(&config, &["explain", "pvc.spec.volumeMode"]).await;
    assert!(explained.contains("KIND:       PersistentVolumeClaim"), "{explained}");
}

#[tokio::test]
async fn claims_follow_the_api_servers_rules() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    let mut no_modes = claim("bare", json!({}));
    no_modes["spec"] = json!({"resources": {"requests": {}}});
    let refused = call(&client, "POST", CLAIMS, &[], Some(&no_modes)).await;
    assert_eq!(refused.code(), 422);
    assert_eq!(
        refused.json()["message"],
        "PersistentVolumeClaim \"bare\" is invalid: [spec.accessModes: Required value: at least 1 access mode is required, spec.resources[storage]: Required value]"
    );

    let mut with_status = claim("data", json!({"kube-sim.io/provision": "pending"}));
    with_status["status"] = json!({"phase": "Bound"});
    let created = create(&client, CLAIMS, &with_status).await;
    assert_eq!(created["status"], json!({"phase": "Pending"}), "status is reset on create");
    let mut grown = created.clone();
    grown["spec"]["resources"]["requests"]["storage"] = json!("5Gi");
    let immutable = call(&client, "PUT", &format!("{CLAIMS}/data"), &[], Some(&grown)).await;
    assert_eq!(immutable.code(), 422, "{}", immutable.body);
    assert!(
        immutable.json()["message"].as_str().unwrap_or("").contains(
            "spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims"
        ),
        "{}",
        immutable.body
    );
    let mut relabelled = created.clone();
    relabelled["metadata"]["labels"] = json!({"tier": "db"});
    relabelled["status"] = json!({"phase": "Lost"});
    let updated = call(&client, "PUT", &format!("{CLAIMS}/data"), &[], Some(&relabelled)).await.json();
    assert_eq!(
        (&updated["metadata"]["labels"]["tier"], &updated["status"]["phase"]),
        (&json!("db"), &json!("Pending"))
    );
    let mut lost = updated.clone();
    lost["status"]["phase"] = json!("Lost");
    let status = call(&client, "PUT", &format!("{CLAIMS}/data/status"), &[], Some(&lost)).await;
    assert_eq!((status.code(), status.json()["status"]["phase"].clone()), (200, json!("Lost")));
}

#[tokio::test]
async fn a_held_claim_stays_pending_and_its_pod_unscheduled_until_released() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    create(&client, CLAIMS, &claim("data", json!({"kube-sim.io/provision": "pending"}))).await;
    create(&client, "/api/v1/namespaces/default/pods", &pod_using("db", "data")).await;
    let message = verdict("pod has unbound immediate PersistentVolumeClaims");
    util::wait_event(&sim, "default", "db", "FailedScheduling", |m| m == message).await;
    let held = get(&client, &format!("{CLAIMS}/data")).await.json();
    assert_eq!((&held["status"]["phase"], held["spec"].get("volumeName")), (&json!("Pending"), None));

    let release = json!({"metadata": {"annotations": {"kube-sim.io/provision": null}}});
    assert_eq!(merge(&client, &format!("{CLAIMS}/data"), release).await.code(), 200);
    wait_bound(&sim, "data").await;
    util::wait_running(&sim, "default", "db").await;
}

#[tokio::test]
async fn a_pod_waits_for_its_missing_claim() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    create(&client, "/api/v1/namespaces/default/pods", &pod_using("db", "data")).await;
    let message = verdict("persistentvolumeclaim \"data\" not found");
    util::wait_event(&sim, "default", "db", "FailedScheduling", |m| m == message).await;
    let pod = get(&client, "/api/v1/namespaces/default/pods/db").await.json();
    assert_eq!((&pod["status"]["phase"], pod["spec"].get("nodeName")), (&json!("Pending"), None));
    create(&client, CLAIMS, &claim("data", json!({}))).await;
    util::wait_running(&sim, "default", "db").await;
}

#[tokio::test]
async fn a_deleted_claim_stays_terminating_until_its_protection_finalizer_goes() {
    let sim = util::start().await;
    let client = sim.client().expect("client");
    let created = create(&client, CLAIMS, &claim("data", json!({}))).await;
    assert_eq!(created["metadata"]["finalizers"], json!(["kubernetes.io/pvc-protection"]));
    wait_bound(&sim, "data").await;
    assert_eq!(call(&client, "DELETE", &format!("{CLAIMS}/data"), &[], None).await.code(), 200);
    let (_dir, config) = kubeconfig(&sim);
    let table = kubectl_ok(&config, &["get", "pvc", "data", "--no-headers"]).await;
    assert_eq!(table.split_whitespace().nth(1), Some("Terminating"), "{table}");

    create(&client, "/api/v1/namespaces/default/pods", &pod_using("db", "data")).await;
    let message = verdict("persistentvolumeclaim \"data\" is being deleted");
    util::wait_event(&sim, "default", "db", "FailedScheduling", |m| m == message).await;
    let release = json!({"metadata": {"finalizers": null}});
    assert_eq!(merge(&client, &format!("{CLAIMS}/data"), release).await.code(), 200);
    assert_eq!(get(&client, &format!("{CLAIMS}/data")).await.code(), 404);
    let message = verdict("persistentvolumeclaim \"data\" not found");
    util::wait_event(&sim, "default", "db", "FailedScheduling", |m| m == message).await;
}

#[tokio::test]
async fn without_storage_protection_claims_get_no_finalizer() {
    let admission = AdmissionConfig::default().disable(Plugin::StorageObjectInUseProtection);
    let api = ApiConfig { admission, ..ApiConfig::default() };
    let sim = Sim::start(SimConfig { api, ..SimConfig::default() }).await.expect("kube-sim starts");
    let client = sim.client().expect("client");
    let created = create(&client, CLAIMS, &claim("data", json!({}))).await;
    assert_eq!(created["metadata"].get("finalizers"), None);
}
