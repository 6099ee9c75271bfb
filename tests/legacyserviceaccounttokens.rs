//! Unused legacy service account tokens, end to end: the real `kcm-rs`
//! binary with a short `--legacy-service-account-token-clean-up-period`
//! against kube-sim, set up with kubectl. The API server's tracking
//! ConfigMap is dated long ago; a token Secret its ServiceAccount lists,
//! last used long ago, is labelled `kubernetes.io/legacy-token-invalid-since`
//! with today's date; one invalid since long ago is deleted; one a pod
//! mounts, and one its ServiceAccount does not list, are left alone
//! (legacy-serviceaccount-token-cleaner-controller). The cleaner evaluates
//! once its caches sync (then daily), so everything is in place before the
//! daemon starts; the test waits on conditions, never on timings.

use k8s_openapi::api::core::v1::Secret;
use kube::Api;
use kube_sim::testing::{kubectl_ok, kubectl_ok_with_stdin, wait_for};

use crate::common::{PATIENCE, free_port, sim_with_kubeconfig, spawn_on};

/// A legacy token Secret of `robot` with these labels.
fn token_secret(name: &str, labels: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: {name}\n  namespace: team-l\n  labels:\n{labels}  annotations:\n    \
         kubernetes.io/service-account.name: robot\ntype: kubernetes.io/service-account-token\n"
    )
}

const LONG_AGO: &str = "2020-01-01";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unused_legacy_tokens_are_labelled_invalid_then_deleted() {
    let (sim, _dir, kubeconfig) = sim_with_kubeconfig(Default::default()).await;
    let patch = format!(r#"{{"data":{{"since":"{LONG_AGO}"}}}}"#);
    kubectl_ok(
        &kubeconfig,
        &[
            "patch",
            "configmap",
            "kube-apiserver-legacy-service-account-token-tracking",
            "-n",
            "kube-system",
            "-p",
            &patch,
        ],
    )
    .await;
    kubectl_ok(&kubeconfig, &["create", "namespace", "team-l"]).await;
    // Its ServiceAccount and CA bundle, as the controller manager that ran
    // before kcm-rs gave them (the pod below needs both).
    kube_sim::testing::provision_namespace(&sim, "team-l").await;
    let account = "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: robot\n  namespace: team-l\nsecrets:\n\
                   - name: unused\n- name: invalid\n- name: mounted\n";
    kubectl_ok_with_stdin(&kubeconfig, &["apply", "-f", "-"], account).await;
    let last_used = format!("    kubernetes.io/legacy-token-last-used: \"{LONG_AGO}\"\n");
    let invalid = format!("{last_used}    kubernetes.io/legacy-token-invalid-since: \"{LONG_AGO}\"\n");
    for (name, labels) in [("unused", &last_used), ("invalid", &invalid), ("mounted", &invalid), ("unlisted", &invalid)]
    {
        kubectl_ok_with_stdin(&kubeconfig, &["apply", "-f", "-"], &token_secret(name, labels)).await;
    }
    let pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: app\n  namespace: team-l\nspec:\n  containers:\n  \
               - name: app\n    image: nginx\n  volumes:\n  - name: token\n    secret:\n      secretName: mounted\n";
    kubectl_ok_with_stdin(&kubeconfig, &["apply", "-f", "-"], pod).await;

    let _daemon = spawn_on(&kubeconfig, free_port(), &["--legacy-service-account-token-clean-up-period=1ms"]);
    let secrets: Api<Secret> = Api::namespaced(sim.client().expect("client"), "team-l");
    wait_for(&sim, PATIENCE, "the unused token labelled invalid and the invalid one deleted", || async {
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
