//! Unused legacy service account tokens, end to end: the real `kcm-rs`
//! binary (only `legacy-serviceaccount-token-cleaner-controller` selected)
//! with a short `--legacy-service-account-token-clean-up-period` against
//! kube-sim and against the testbed, set up with kubectl. The API server's
//! tracking ConfigMap is dated long ago; a token Secret its ServiceAccount
//! lists, last used long ago, is labelled
//! `kubernetes.io/legacy-token-invalid-since` with today's date; one
//! invalid since long ago is deleted; one a pod mounts, and one its
//! ServiceAccount does not list, are left alone. The cleaner evaluates
//! once its caches sync (then daily), so everything is in place before the
//! daemon starts (set up with kcm-rs stopped, then started with the
//! flags); the test waits on conditions, never on timings.
//!
//! The cleaner runs alone: on the testbed kcm-rs's flags give the signing
//! key, so the serviceaccount-token-controller would fill these Secrets
//! while the cleaner evaluates, and a Secret updated after the cleaner's
//! cache saw it makes its delete (conditioned on that resourceVersion) a
//! conflict, left (as upstream leaves it) to the next evaluation, a day
//! later.

use std::path::PathBuf;

use k8s_openapi::api::core::v1::Secret;
use kube::Api;
use kube_sim::testing::{kubectl_ok, kubectl_ok_with_stdin, wait_for};

use crate::common::{Cluster, Env, PATIENCE, on_both, start_provisioned};

/// The controller alone, as upstream names it.
const CONTROLLERS: &str = "--controllers=legacy-serviceaccount-token-cleaner-controller";

/// The API server's legacy token tracking ConfigMap, in `kube-system`.
const TRACKING: &str = "kube-apiserver-legacy-service-account-token-tracking";

const LONG_AGO: &str = "2020-01-01";

/// A legacy token Secret of `robot` in `ns` with these labels.
fn token_secret(ns: &str, name: &str, labels: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: {name}\n  namespace: {ns}\n  labels:\n{labels}  annotations:\n    \
         kubernetes.io/service-account.name: robot\ntype: kubernetes.io/service-account-token\n"
    )
}

/// The cluster with the test's namespace provisioned (its `default`
/// ServiceAccount and `kube-root-ca.crt`, as the controller manager that
/// ran before would have made them; the pod below needs both), and no
/// kcm-rs running: the set-up comes first.
async fn stopped() -> Env {
    let mut env = start_provisioned(&[CONTROLLERS]).await;
    env.daemon.kill().await.expect("kcm-rs stopped");
    env
}

/// The tracking ConfigMap's `since` set to [`LONG_AGO`], and on the
/// testbed, whose API server every test shares, set back to its date when
/// this drops (at the test's end, or when it fails).
struct TrackedSinceLongAgo {
    /// The kubeconfig and date to set back, on the testbed.
    restore: Option<(PathBuf, String)>,
}

impl TrackedSinceLongAgo {
    async fn set(env: &Env) -> TrackedSinceLongAgo {
        let get = ["get", "configmap", TRACKING, "-n", "kube-system", "-o", "jsonpath={.data.since}"];
        let since = kubectl_ok(&env.kubeconfig, &get).await;
        let restore =
            matches!(env.cluster, Cluster::Testbed { .. }).then(|| (env.kubeconfig.clone(), since.trim().to_owned()));
        let guard = TrackedSinceLongAgo { restore };
        kubectl_ok(
            &env.kubeconfig,
            &["patch", "configmap", TRACKING, "-n", "kube-system", "-p", &since_patch(LONG_AGO)],
        )
        .await;
        guard
    }
}

/// A merge patch setting the tracking ConfigMap's `since`.
fn since_patch(date: &str) -> String {
    format!(r#"{{"data":{{"since":"{date}"}}}}"#)
}

impl Drop for TrackedSinceLongAgo {
    fn drop(&mut self) {
        let Some((kubeconfig, since)) = &self.restore else { return };
        let out = std::process::Command::new("kubectl")
            .args(["patch", "configmap", TRACKING, "-n", "kube-system", "-p", &since_patch(since)])
            .env("KUBECONFIG", kubeconfig)
            .output();
        if !out.as_ref().is_ok_and(|o| o.status.success()) && !std::thread::panicking() {
            panic!("kubectl did not set the shared tracking ConfigMap's since back to {since}: {out:?}");
        }
    }
}

on_both!(unused_legacy_tokens_are_labelled_invalid_then_deleted);

/// With the API server tracking legacy token use since long ago, the
/// unused token is labelled invalid since today and the one invalid since
/// long ago is deleted; the mounted one and the unlisted one keep their
/// label.
async fn unused_legacy_tokens_are_labelled_invalid_then_deleted() {
    let mut env = stopped().await;
    let _since = TrackedSinceLongAgo::set(&env).await;
    let ns = env.ns.clone();
    let account = format!(
        "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: robot\n  namespace: {ns}\nsecrets:\n\
         - name: unused\n- name: invalid\n- name: mounted\n"
    );
    kubectl_ok_with_stdin(&env.kubeconfig, &["apply", "-f", "-"], &account).await;
    let last_used = format!("    kubernetes.io/legacy-token-last-used: \"{LONG_AGO}\"\n");
    let invalid = format!("{last_used}    kubernetes.io/legacy-token-invalid-since: \"{LONG_AGO}\"\n");
    for (name, labels) in [("unused", &last_used), ("invalid", &invalid), ("mounted", &invalid), ("unlisted", &invalid)]
    {
        kubectl_ok_with_stdin(&env.kubeconfig, &["apply", "-f", "-"], &token_secret(&ns, name, labels)).await;
    }
    let pod = format!(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: app\n  namespace: {ns}\nspec:\n  containers:\n  \
         - name: app\n    image: nginx\n  volumes:\n  - name: token\n    secret:\n      secretName: mounted\n"
    );
    kubectl_ok_with_stdin(&env.kubeconfig, &["apply", "-f", "-"], &pod).await;

    env.daemon = env.spawn_on(env.port, &[CONTROLLERS, "--legacy-service-account-token-clean-up-period=1ms"]);
    let secrets: Api<Secret> = Api::namespaced(env.client.clone(), &ns);
    wait_for(&env.cluster, PATIENCE, "the unused token labelled invalid and the invalid one deleted", || async {
        let unused = secrets.get_opt("unused").await.map_err(|e| e.to_string())?.ok_or("no unused Secret")?;
        let labels = unused.metadata.labels.unwrap_or_default();
        let since = labels.get("kubernetes.io/legacy-token-invalid-since").ok_or("unused not labelled")?.clone();
        match secrets.get_opt("invalid").await.map_err(|e| e.to_string())? {
            Some(_) => Err("invalid still there".to_owned()),
            None => Ok(since),
        }
    })
    .await;
    let today = jiff::Timestamp::now().to_zoned(jiff::tz::TimeZone::UTC).date();
    let since = secrets.get("unused").await.expect("unused").metadata.labels.unwrap_or_default()
        ["kubernetes.io/legacy-token-invalid-since"]
        .clone();
    let dates = [today, today.yesterday().expect("a date")].map(|d| d.strftime("%Y-%m-%d").to_string());
    assert!(dates.contains(&since), "invalid since today (or yesterday, across midnight): {since}");
    for name in ["mounted", "unlisted"] {
        let left = secrets.get(name).await.unwrap_or_else(|e| panic!("{name} left alone: {e}"));
        let labels = left.metadata.labels.unwrap_or_default();
        assert_eq!(
            labels.get("kubernetes.io/legacy-token-invalid-since").map(String::as_str),
            Some(LONG_AGO),
            "{name}"
        );
    }
}
