//! The ClusterRole aggregation controller end to end: the real `kcm-rs`
//! binary against kube-sim, driven with kubectl. An aggregating ClusterRole
//! picks up the rules of a role once it is labelled to match its
//! selector, in upstream's order and without duplicates, and drops them
//! when the label is removed; a role it does not select changes nothing.
//! Every test waits on conditions, never on timings.

use k8s_openapi::api::rbac::v1::ClusterRole;
use kube::Api;
use kube_sim::testing::{kubectl_ok, kubectl_ok_with_stdin, wait_for};

use crate::common::{Env, PATIENCE, on_both, start};

// === utils ===

const LABEL: &str = "rbac.example.com/aggregate-to-monitoring";

/// The aggregating role and two roles it may gather, as kubectl creates them.
const ROLES: &str = r#"
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: monitoring
aggregationRule:
  clusterRoleSelectors:
  - matchLabels:
      rbac.example.com/aggregate-to-monitoring: "true"
rules: []
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: monitoring-endpoints
rules:
- apiGroups: [""]
  resources: ["services", "endpoints", "pods"]
  verbs: ["get", "list", "watch"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: monitoring-leases
  labels:
    rbac.example.com/aggregate-to-monitoring: "true"
rules:
- apiGroups: ["coordination.k8s.io"]
  resources: ["leases"]
  verbs: ["get"]
- apiGroups: [""]
  resources: ["services", "endpoints", "pods"]
  verbs: ["get", "list", "watch"]
"#;

/// `monitoring`'s rules as (first apiGroup, resources) pairs, once they
/// are `want`.
async fn wait_for_rules(env: &Env, want: &[(&str, &[&str])], what: &str) {
    let roles: Api<ClusterRole> = Api::all(env.client.clone());
    wait_for(&env.cluster, PATIENCE, what, || async {
        let role = roles.get("monitoring").await.map_err(|e| e.to_string())?;
        let seen: Vec<(String, Vec<String>)> = role
            .rules
            .unwrap_or_default()
            .into_iter()
            .map(|r| (r.api_groups.unwrap_or_default().concat(), r.resources.unwrap_or_default()))
            .collect();
        let wanted: Vec<(String, Vec<String>)> =
            want.iter().map(|(g, r)| ((*g).to_owned(), r.iter().map(|s| (*s).to_owned()).collect())).collect();
        if seen == wanted { Ok(()) } else { Err(format!("rules {seen:?}")) }
    })
    .await;
}

// === tests ===

on_both!(a_cluster_role_aggregates_a_newly_labelled_role_and_drops_it_when_unlabelled,);

async fn a_cluster_role_aggregates_a_newly_labelled_role_and_drops_it_when_unlabelled() {
    let env = start().await;
    kubectl_ok_with_stdin(&env.kubeconfig, &["create", "-f", "-"], ROLES).await;
    let core: (&str, &[&str]) = ("", &["services", "endpoints", "pods"]);
    let leases: (&str, &[&str]) = ("coordination.k8s.io", &["leases"]);
    wait_for_rules(&env, &[leases, core], "the labelled role's rules gathered").await;

    // The shared rule stays where the first role by name put it: once.
    kubectl_ok(&env.kubeconfig, &["label", "clusterrole", "monitoring-endpoints", &format!("{LABEL}=true")]).await;
    wait_for_rules(&env, &[core, leases], "the newly labelled role's rules first, no duplicate").await;

    kubectl_ok(&env.kubeconfig, &["label", "clusterrole", "monitoring-leases", &format!("{LABEL}-")]).await;
    wait_for_rules(&env, &[core], "the unlabelled role's rules dropped").await;

    let described = kubectl_ok(&env.kubeconfig, &["get", "clusterrole", "monitoring", "-o", "yaml"]).await;
    assert!(described.contains("aggregationRule:"), "the rule kept: {described}");
}
