//! Legacy service account token Secrets, end to end: the real `kcm-rs`
//! binary with `--service-account-private-key-file` against kube-sim,
//! driven with kubectl as upstream's e2e (`test/e2e/auth/service_accounts.go`)
//! drives a cluster. A Secret of type `kubernetes.io/service-account-token`
//! naming `default` is filled with `token`, `ca.crt` and `namespace`; the
//! token verifies with the public key and carries upstream's legacy
//! claims; deleting the ServiceAccount deletes the Secret, and a token
//! Secret naming no ServiceAccount is deleted
//! (serviceaccount-token-controller). Every test waits on conditions,
//! never on timings.

use std::path::{Path, PathBuf};

use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use k8s_openapi::api::core::v1::{Secret, ServiceAccount};
use kube::Api;
use kube_sim::testing::{kubectl_ok, kubectl_ok_with_stdin, wait_for};

use crate::common::{Env, PATIENCE, start_with};

// === utils ===

/// A committed RSA key (PKCS #1) and its public half, made with openssl.
fn key_fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src/drivers/serviceaccounttoken/testdata").join(name)
}

/// A legacy token Secret naming the ServiceAccount `account`.
fn token_secret(name: &str, namespace: &str, account: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: {name}\n  namespace: {namespace}\n  annotations:\n    \
         kubernetes.io/service-account.name: {account}\ntype: kubernetes.io/service-account-token\n"
    )
}

/// kube-sim and kcm-rs signing with the fixture key and publishing a
/// generated CA; the bundle, and the directory holding it.
async fn start_signing() -> (Env, String, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("tempdir");
    let ca = rcgen::generate_simple_self_signed(vec!["kube-ca".to_owned()]).expect("certificate");
    let pem = ca.cert.pem();
    let ca_path = dir.path().join("ca.crt");
    std::fs::write(&ca_path, &pem).expect("written");
    let key = format!("--service-account-private-key-file={}", key_fixture("rsa-pkcs1.key").display());
    let root_ca = format!("--root-ca-file={}", ca_path.display());
    (start_with(Default::default(), &[&key, &root_ca], |_| {}).await, pem, dir)
}

/// The Secret's data, once it holds `token`, `ca.crt` and `namespace`.
async fn wait_for_filled(env: &Env, ns: &str, name: &str) -> Secret {
    let secrets: Api<Secret> = Api::namespaced(env.client.clone(), ns);
    wait_for(&env.cluster, PATIENCE, "the token Secret filled", || async {
        let secret = secrets.get_opt(name).await.map_err(|e| e.to_string())?.ok_or("no Secret")?;
        let data = secret.data.clone().unwrap_or_default();
        let filled = ["token", "ca.crt", "namespace"].iter().all(|k| data.get(*k).is_some_and(|v| !v.0.is_empty()));
        if filled { Ok(secret) } else { Err(format!("data keys {:?}", data.keys().collect::<Vec<_>>())) }
    })
    .await
}

/// Waits until the Secret is gone.
async fn wait_for_deleted(env: &Env, ns: &str, name: &str, what: &str) {
    let secrets: Api<Secret> = Api::namespaced(env.client.clone(), ns);
    wait_for(&env.cluster, PATIENCE, what, || async {
        match secrets.get_opt(name).await.map_err(|e| e.to_string())? {
            Some(_) => Err("still there".to_owned()),
            None => Ok(()),
        }
    })
    .await;
}

// === tests ===

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_legacy_token_secret_is_filled_and_deleted_with_its_service_account() {
    let (env, ca, _dir) = start_signing().await;
    kubectl_ok(&env.kubeconfig, &["create", "namespace", "team-t"]).await;
    let accounts: Api<ServiceAccount> = Api::namespaced(env.client.clone(), "team-t");
    let uid = wait_for(&env.cluster, PATIENCE, "team-t's default ServiceAccount", || async {
        let sa = accounts.get_opt("default").await.map_err(|e| e.to_string())?;
        sa.and_then(|sa| sa.metadata.uid).ok_or_else(|| "no default ServiceAccount".to_owned())
    })
    .await;

    kubectl_ok_with_stdin(&env.kubeconfig, &["apply", "-f", "-"], &token_secret("default-token", "team-t", "default"))
        .await;
    let secret = wait_for_filled(&env, "team-t", "default-token").await;
    let data = secret.data.unwrap_or_default();
    assert_eq!(data["ca.crt"].0, ca.as_bytes(), "the --root-ca-file bundle");
    assert_eq!(data["namespace"].0, b"team-t");
    let annotations = secret.metadata.annotations.unwrap_or_default();
    assert_eq!(annotations.get("kubernetes.io/service-account.uid"), Some(&uid), "the uid annotation set");

    let token = String::from_utf8(data["token"].0.clone()).expect("UTF-8");
    let public = std::fs::read(key_fixture("rsa.pub")).expect("public key");
    let mut validation = Validation::new(Algorithm::RS256);
    validation.required_spec_claims.clear();
    validation.validate_exp = false;
    let decoding = DecodingKey::from_rsa_pem(&public).expect("public key parsed");
    let claims = jsonwebtoken::decode::<serde_json::Value>(&token, &decoding, &validation).expect("verifies").claims;
    assert_eq!(
        claims,
        serde_json::json!({
            "iss": "kubernetes/serviceaccount",
            "sub": "system:serviceaccount:team-t:default",
            "kubernetes.io/serviceaccount/namespace": "team-t",
            "kubernetes.io/serviceaccount/secret.name": "default-token",
            "kubernetes.io/serviceaccount/service-account.name": "default",
            "kubernetes.io/serviceaccount/service-account.uid": uid,
        })
    );

    kubectl_ok(&env.kubeconfig, &["delete", "serviceaccount", "default", "-n", "team-t"]).await;
    wait_for_deleted(&env, "team-t", "default-token", "the token Secret deleted with its ServiceAccount").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_secret_naming_no_service_account_is_deleted() {
    let (env, _, _dir) = start_signing().await;
    kubectl_ok(&env.kubeconfig, &["create", "namespace", "team-u"]).await;
    kubectl_ok_with_stdin(&env.kubeconfig, &["apply", "-f", "-"], &token_secret("ghost-token", "team-u", "ghost"))
        .await;
    wait_for_deleted(&env, "team-u", "ghost-token", "the token Secret of no ServiceAccount deleted").await;
}
