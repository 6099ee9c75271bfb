//! What the storage controllers' end-to-end tests share
//! (`tests/pvcprotection.rs`, `tests/ephemeralvolume.rs`,
//! `tests/vacprotection.rs`): objects applied and deleted with kubectl, the
//! test namespace's claims, and the wait for a claim to be gone.

use k8s_openapi::api::core::v1::PersistentVolumeClaim;
use kube::Api;
use kube_sim::testing::{kubectl_ok, kubectl_ok_with_stdin, wait_for};

use super::{Env, PATIENCE};

/// The test namespace's claims.
pub fn claims(env: &Env) -> Api<PersistentVolumeClaim> {
    Api::namespaced(env.client.clone(), &env.ns)
}

/// `kubectl apply`s `object` in the test namespace.
pub async fn apply(env: &Env, object: &serde_json::Value) {
    kubectl_ok_with_stdin(&env.kubeconfig, &["apply", "-n", &env.ns, "-f", "-"], &object.to_string()).await;
}

/// `kubectl delete`s `kind` `name` without waiting for it to go.
pub async fn delete(env: &Env, kind: &str, name: &str) {
    kubectl_ok(&env.kubeconfig, &["delete", kind, name, "-n", &env.ns, "--wait=false"]).await;
}

/// Waits until claim `name` is gone.
pub async fn claim_gone(env: &Env, name: &str) {
    wait_for(&env.cluster, PATIENCE, &format!("claim {name} deleted"), || async {
        match claims(env).get_opt(name).await.map_err(|e| e.to_string())? {
            None => Ok(()),
            Some(c) => Err(format!("still there: {:?}, {:?}", c.metadata.deletion_timestamp, c.metadata.finalizers)),
        }
    })
    .await;
}
