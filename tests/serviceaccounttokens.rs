//! Legacy service account token Secrets, end to end: the real `kcm-rs`
//! binary with `--service-account-private-key-file` against kube-sim (a
//! committed key) and against the testbed (the key kube-apiserver verifies
//! tokens with), driven with kubectl as upstream's e2e
//! (`test/e2e/auth/service_accounts.go`) drives a cluster. A Secret of type
//! `kubernetes.io/service-account-token` naming `default` is filled with
//! `token`, `ca.crt` and `namespace`; the token verifies with the public
//! key, carries upstream's legacy claims, and on the testbed authenticates
//! as the ServiceAccount; deleting the ServiceAccount deletes the Secret,
//! and a token Secret naming no ServiceAccount is deleted
//! (serviceaccount-token-controller). Every test waits on conditions,
//! never on timings.

use std::path::{Path, PathBuf};

use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use k8s_openapi::api::authentication::v1::{TokenReview, TokenReviewSpec};
use k8s_openapi::api::core::v1::{Secret, ServiceAccount};
use kube::Api;
use kube_sim::testing::{kubectl_ok, kubectl_ok_with_stdin, wait_for};

use crate::common::{Backend, Env, PATIENCE, backend, on_both, start, start_with, testbed};

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

/// kcm-rs signing tokens and publishing a CA: on kube-sim with the fixture
/// key and a generated CA, on the testbed with the testbed's `sa.key` and
/// CA (its flags'). The CA bundle, the public key to verify tokens with,
/// and the directory holding a generated CA.
async fn start_signing() -> (Env, String, Vec<u8>, Option<tempfile::TempDir>) {
    match backend() {
        Backend::Sim => {
            let dir = tempfile::tempdir().expect("tempdir");
            let ca = rcgen::generate_simple_self_signed(vec!["kube-ca".to_owned()]).expect("certificate");
            let pem = ca.cert.pem();
            let ca_path = dir.path().join("ca.crt");
            std::fs::write(&ca_path, &pem).expect("written");
            let key = format!("--service-account-private-key-file={}", key_fixture("rsa-pkcs1.key").display());
            let root_ca = format!("--root-ca-file={}", ca_path.display());
            let env = start_with(Default::default(), &[&key, &root_ca], |_| {}).await;
            (env, pem, std::fs::read(key_fixture("rsa.pub")).expect("public key"), Some(dir))
        }
        Backend::Testbed => {
            let env = start().await;
            let pki = testbed::shared().await.pki.clone();
            let pem = std::fs::read_to_string(pki.join("ca.crt")).expect("the testbed's CA");
            (env, pem, std::fs::read(pki.join("sa.pub")).expect("the testbed's sa.pub"), None)
        }
    }
}

/// Asks the API server who `token` authenticates as (a TokenReview): its
/// user name, or why not.
async fn review(env: &Env, token: &str) -> Result<String, String> {
    let request =
        TokenReview { spec: TokenReviewSpec { token: token.to_owned(), ..Default::default() }, ..Default::default() };
    let reviewed = Api::<TokenReview>::all(env.client.clone())
        .create(&Default::default(), &request)
        .await
        .map_err(|e| e.to_string())?;
    let status = reviewed.status.unwrap_or_default();
    match (status.authenticated, status.user.and_then(|u| u.username)) {
        (Some(true), Some(user)) => Ok(user),
        _ => Err(format!("not authenticated: {:?}", status.error)),
    }
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

on_both!(
    a_legacy_token_secret_is_filled_and_deleted_with_its_service_account,
    a_token_secret_naming_no_service_account_is_deleted
);

/// A token Secret applied for a new namespace's `default` is filled: the
/// CA bundle, the namespace, the ServiceAccount's uid annotation, and a
/// token signed with the key (upstream's legacy claims, no expiry), which
/// on the testbed kube-apiserver takes as the ServiceAccount's. Deleting
/// the ServiceAccount deletes the Secret.
async fn a_legacy_token_secret_is_filled_and_deleted_with_its_service_account() {
    let (env, ca, public, _dir) = start_signing().await;
    let ns = env.extra_namespace("team-t");
    kubectl_ok(&env.kubeconfig, &["create", "namespace", &ns]).await;
    let accounts: Api<ServiceAccount> = Api::namespaced(env.client.clone(), &ns);
    let uid = wait_for(&env.cluster, PATIENCE, &format!("{ns}'s default ServiceAccount"), || async {
        let sa = accounts.get_opt("default").await.map_err(|e| e.to_string())?;
        sa.and_then(|sa| sa.metadata.uid).ok_or_else(|| "no default ServiceAccount".to_owned())
    })
    .await;

    kubectl_ok_with_stdin(&env.kubeconfig, &["apply", "-f", "-"], &token_secret("default-token", &ns, "default")).await;
    let secret = wait_for_filled(&env, &ns, "default-token").await;
    let data = secret.data.unwrap_or_default();
    assert_eq!(data["ca.crt"].0, ca.as_bytes(), "the --root-ca-file bundle");
    assert_eq!(data["namespace"].0, ns.as_bytes());
    let annotations = secret.metadata.annotations.unwrap_or_default();
    assert_eq!(annotations.get("kubernetes.io/service-account.uid"), Some(&uid), "the uid annotation set");

    let token = String::from_utf8(data["token"].0.clone()).expect("UTF-8");
    let mut validation = Validation::new(Algorithm::RS256);
    validation.required_spec_claims.clear();
    validation.validate_exp = false;
    let decoding = DecodingKey::from_rsa_pem(&public).expect("public key parsed");
    let claims = jsonwebtoken::decode::<serde_json::Value>(&token, &decoding, &validation).expect("verifies").claims;
    assert_eq!(
        claims,
        serde_json::json!({
            "iss": "kubernetes/serviceaccount",
            "sub": format!("system:serviceaccount:{ns}:default"),
            "kubernetes.io/serviceaccount/namespace": ns,
            "kubernetes.io/serviceaccount/secret.name": "default-token",
            "kubernetes.io/serviceaccount/service-account.name": "default",
            "kubernetes.io/serviceaccount/service-account.uid": uid,
        })
    );
    if backend() == Backend::Testbed {
        assert_eq!(review(&env, &token).await, Ok(format!("system:serviceaccount:{ns}:default")));
    }

    kubectl_ok(&env.kubeconfig, &["delete", "serviceaccount", "default", "-n", &ns]).await;
    wait_for_deleted(&env, &ns, "default-token", "the token Secret deleted with its ServiceAccount").await;
}

/// A token Secret naming a ServiceAccount that does not exist is deleted.
async fn a_token_secret_naming_no_service_account_is_deleted() {
    let (env, _, _, _dir) = start_signing().await;
    let ns = env.extra_namespace("team-u");
    kubectl_ok(&env.kubeconfig, &["create", "namespace", &ns]).await;
    kubectl_ok_with_stdin(&env.kubeconfig, &["apply", "-f", "-"], &token_secret("ghost-token", &ns, "ghost")).await;
    wait_for_deleted(&env, &ns, "ghost-token", "the token Secret of no ServiceAccount deleted").await;
}
