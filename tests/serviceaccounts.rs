//! What every namespace gets from kcm-rs, end to end: the real `kcm-rs`
//! binary against kube-sim and against the testbed, driven with kubectl as
//! upstream's e2e (`test/e2e/auth/service_accounts.go`) drives a cluster.
//! A new namespace gets its `default` ServiceAccount, made again when
//! deleted (serviceaccount-controller); the `kube-root-ca.crt` ConfigMap
//! exists in any namespace, holding the `--root-ca-file` bundle and
//! upstream's description, and is restored after deletion and after its
//! data is edited (root-ca-certificate-publisher-controller, "should
//! guarantee kube-root-ca.crt exist in any namespace"). The namespaces a
//! test makes are named after its own ([`Env::extra_namespace`]). Every
//! test waits on conditions, never on timings.

use std::path::Path;

use k8s_openapi::api::core::v1::{ConfigMap, ServiceAccount};
use kube::Api;
use kube_sim::testing::{kubectl_ok, wait_for};

use crate::common::{Backend, Env, PATIENCE, backend, on_both, start, start_with, testbed};

// === utils ===

/// A CA bundle of one self-signed certificate, written to `dir`.
fn write_root_ca(dir: &Path) -> (std::path::PathBuf, String) {
    let ca = rcgen::generate_simple_self_signed(vec!["kube-ca".to_owned()]).expect("certificate");
    let pem = ca.cert.pem();
    let path = dir.join("ca.crt");
    std::fs::write(&path, &pem).expect("written");
    (path, pem)
}

/// kcm-rs publishing a CA: on kube-sim a generated one, on the testbed the
/// testbed's own (its flags' `--root-ca-file`); the bundle, and the
/// directory holding a generated one.
async fn start_publishing() -> (Env, String, Option<tempfile::TempDir>) {
    match backend() {
        Backend::Sim => {
            let dir = tempfile::tempdir().expect("tempdir");
            let (path, pem) = write_root_ca(dir.path());
            let flag = format!("--root-ca-file={}", path.display());
            (start_with(Default::default(), &[&flag], |_| {}).await, pem, Some(dir))
        }
        Backend::Testbed => {
            let env = start().await;
            let pem = std::fs::read_to_string(testbed::shared().await.pki.join("ca.crt")).expect("the testbed's CA");
            (env, pem, None)
        }
    }
}

/// The `ca.crt` of `ns`'s `kube-root-ca.crt`, once it holds `want`.
async fn wait_for_ca(env: &Env, ns: &str, want: &str, what: &str) -> ConfigMap {
    let config_maps: Api<ConfigMap> = Api::namespaced(env.client.clone(), ns);
    wait_for(&env.cluster, PATIENCE, what, || async {
        let cm = config_maps.get_opt("kube-root-ca.crt").await.map_err(|e| e.to_string())?;
        let cm = cm.ok_or("no kube-root-ca.crt")?;
        let ca = cm.data.as_ref().and_then(|d| d.get("ca.crt")).cloned();
        if ca.as_deref() == Some(want) { Ok(cm) } else { Err(format!("data {:?}", cm.data)) }
    })
    .await
}

// === tests ===

on_both!(
    a_new_namespace_gets_its_default_service_account_again_after_deletion,
    kube_root_ca_crt_exists_in_any_namespace_and_is_restored,
    pods_of_a_namespace_applied_with_its_deployment_run_once_it_has_its_account_and_ca,
);

/// A namespace made with kubectl lists one ServiceAccount, `default`;
/// deleted, a new `default` (another uid) takes its place.
async fn a_new_namespace_gets_its_default_service_account_again_after_deletion() {
    let (env, _, _dir) = start_publishing().await;
    let ns = env.extra_namespace("team-a");
    kubectl_ok(&env.kubeconfig, &["create", "namespace", &ns]).await;
    let accounts: Api<ServiceAccount> = Api::namespaced(env.client.clone(), &ns);
    let uid = || async {
        let sa = accounts.get_opt("default").await.map_err(|e| e.to_string())?;
        sa.and_then(|sa| sa.metadata.uid).ok_or_else(|| "no default ServiceAccount".to_owned())
    };
    let first = wait_for(&env.cluster, PATIENCE, &format!("{ns}'s default ServiceAccount"), uid).await;
    let listed = kubectl_ok(&env.kubeconfig, &["get", "serviceaccounts", "-n", &ns, "-o", "name"]).await;
    assert_eq!(listed.trim(), "serviceaccount/default");

    kubectl_ok(&env.kubeconfig, &["delete", "serviceaccount", "default", "-n", &ns]).await;
    wait_for(&env.cluster, PATIENCE, "default made again", || async {
        let now = uid().await?;
        if now == first { Err("still the first one".into()) } else { Ok(()) }
    })
    .await;
}

/// `kube-root-ca.crt` holds the `--root-ca-file` bundle, with upstream's
/// description, in the namespaces made before kcm-rs started and in a new
/// one; deleted, it comes back; its data edited, it is set back; each
/// sync counted on `/metrics`.
async fn kube_root_ca_crt_exists_in_any_namespace_and_is_restored() {
    let (env, pem, _dir) = start_publishing().await;
    // Namespaces made before and after kcm-rs started.
    for ns in [env.ns.as_str(), "default", "kube-system"] {
        wait_for_ca(&env, ns, &pem, &format!("kube-root-ca.crt in {ns}")).await;
    }
    let ns = env.extra_namespace("team-b");
    kubectl_ok(&env.kubeconfig, &["create", "namespace", &ns]).await;
    let published = wait_for_ca(&env, &ns, &pem, &format!("kube-root-ca.crt in {ns}")).await;
    let annotations = published.metadata.annotations.unwrap_or_default();
    assert_eq!(
        annotations.get("kubernetes.io/description").map(String::as_str),
        Some(kcm_controllers::rootcacertpublisher::DESCRIPTION)
    );
    assert_eq!(published.data.map(|d| d.len()), Some(1), "ca.crt alone");

    kubectl_ok(&env.kubeconfig, &["delete", "configmap", "kube-root-ca.crt", "-n", &ns]).await;
    wait_for_ca(&env, &ns, &pem, "kube-root-ca.crt restored after deletion").await;

    // The publisher updates the ConfigMap from its cache, as upstream: a
    // label and an annotation it does not write survive it.
    let edit = r#"{"metadata": {"labels": {"team": "b"}, "annotations": {"example.com/note": "kept"}},
        "data": {"ca.crt": "", "extra": "x"}}"#;
    kubectl_ok(&env.kubeconfig, &["patch", "configmap", "kube-root-ca.crt", "-n", &ns, "--type=merge", "-p", edit])
        .await;
    let restored = wait_for_ca(&env, &ns, &pem, "kube-root-ca.crt restored after an edit").await;
    assert_eq!(restored.data.map(|d| d.len()), Some(1), "the added key removed");
    let label = restored.metadata.labels.as_ref().and_then(|l| l.get("team")).map(String::as_str);
    let note = restored.metadata.annotations.as_ref().and_then(|a| a.get("example.com/note")).map(String::as_str);
    assert_eq!((label, note), (Some("b"), Some("kept")));

    let (_, metrics) = env.scrape("/metrics").await;
    assert!(metrics.contains("root_ca_cert_publisher_sync_total{code=\"200\"}"), "{metrics}");
    assert!(metrics.contains("root_ca_cert_publisher_sync_duration_seconds_bucket{code=\"200\""), "{metrics}");
}

/// The namespace and its workload in one `kubectl apply`, as a user
/// applies a manifest: the Deployment's two pods run, as `default`, with
/// their token volume. The API server holds the ReplicaSet's first pods
/// until serviceaccount-controller has made `default` (and past its
/// patience refuses them, the ReplicaSet controller retrying), and the
/// kubelet mounts their token volume once `kube-root-ca.crt` is published.
async fn pods_of_a_namespace_applied_with_its_deployment_run_once_it_has_its_account_and_ca() {
    let (env, _, _dir) = start_publishing().await;
    let ns = env.extra_namespace("team-d");
    let manifest = format!(
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: {ns}\n---\n\
         apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: {ns}\nspec:\n  replicas: 2\n  \
         selector:\n    matchLabels: {{app: web}}\n  template:\n    metadata:\n      labels: {{app: web}}\n    spec:\n      \
         containers:\n      - name: web\n        image: nginx\n"
    );
    kube_sim::testing::kubectl_ok_with_stdin(&env.kubeconfig, &["apply", "-f", "-"], &manifest).await;
    let pods: Api<k8s_openapi::api::core::v1::Pod> = Api::namespaced(env.client.clone(), &ns);
    let running = wait_for(&env.cluster, PATIENCE, &format!("{ns}'s two pods Running"), || async {
        let list = pods.list(&Default::default()).await.map_err(|e| e.to_string())?;
        let phases: Vec<String> =
            list.items.iter().map(|p| p.status.as_ref().and_then(|s| s.phase.clone()).unwrap_or_default()).collect();
        if phases == ["Running", "Running"] { Ok(list.items) } else { Err(format!("phases {phases:?}")) }
    })
    .await;
    for pod in running {
        let spec = pod.spec.expect("a spec");
        assert_eq!(spec.service_account_name.as_deref(), Some("default"));
        let volume = &spec.volumes.expect("the token volume")[0];
        assert!(volume.name.starts_with("kube-api-access-"), "{}", volume.name);
    }
}
