//! Every taint and label write: a JSON merge patch carrying the node's
//! whole new taint list (or the labels) and the resourceVersion it was
//! computed from, so a concurrent change makes it fail with a conflict;
//! then the node is read again and the change recomputed (five tries,
//! jittered 100 ms backoff, as upstream's `UpdateTaintBackoff`).
//!
//! One difference from upstream: a swap (add one taint, remove another) is
//! one patch, where upstream sends two (add, then remove).

use std::collections::BTreeMap;
use std::time::Duration;

use jiff::Timestamp;
use kcm_controllers::node::taints::{self, TaintSwap};
use kcm_gotime::Jitter;
use kcm_objects::{Node, Wire};
use kube::api::{Api, Patch, PatchParams};
use serde_json::json;

use super::shared::Inner;
use crate::drivers::api_errors::code;

/// Tries of a taint or label patch (upstream `UpdateTaintBackoff.Steps`).
const PATCH_TRIES: u32 = 5;

/// Base pause between patch tries, jittered up to twice (upstream
/// `UpdateTaintBackoff`: 100 ms, jitter 1.0).
const PATCH_BACKOFF: Duration = Duration::from_millis(100);

/// Applies `swap` to the taints of `node` (upstream
/// `SwapNodeControllerTaint`), starting from the given (cached) copy: the
/// patch carries the whole new taint list and the resourceVersion it was
/// computed from, so a concurrent change makes it fail with a conflict;
/// then the node is read again and the swap recomputed, up to
/// [`PATCH_TRIES`] times. `Ok(false)`: nothing to change.
async fn swap_node_taints(api: &Api<Wire<Node>>, node: &Node, swap: &TaintSwap) -> Result<bool, kube::Error> {
    let name = node.metadata.name.to_string();
    let mut current = node.clone();
    for attempt in 1..=PATCH_TRIES {
        let Some(next) = swap.apply(taints::node_taints(&current), Timestamp::now()) else { return Ok(false) };
        let patch = json!({
            "metadata": {"resourceVersion": current.metadata.resource_version},
            "spec": {"taints": next},
        });
        match api.patch(&name, &PatchParams::default(), &Patch::Merge(&patch)).await {
            Ok(_) => return Ok(true),
            Err(e) if code(&e) == Some(409) && attempt < PATCH_TRIES => {
                tokio::time::sleep(Jitter::from_entropy().jitter(PATCH_BACKOFF, 1.0)).await;
                current = api.get(&name).await?.into_inner();
            }
            Err(e) => return Err(e),
        }
    }
    Ok(false)
}

impl Inner {
    /// Applies `swap` to the node's taints: [`swap_node_taints`].
    pub(super) async fn swap_taints(&self, node: &Node, swap: &TaintSwap) -> Result<bool, kube::Error> {
        swap_node_taints(&self.slim_nodes_api(), node, swap).await
    }

    /// Sets the beta os/arch labels (upstream `AddOrUpdateLabelsOnNode`).
    pub(super) async fn patch_labels(&self, node: &Node, labels: &BTreeMap<String, String>) -> Result<(), kube::Error> {
        let name = node.metadata.name.to_string();
        let mut current = node.clone();
        let mut labels = labels.clone();
        for attempt in 1..=PATCH_TRIES {
            let patch = json!({"metadata": {"resourceVersion": current.metadata.resource_version, "labels": labels}});
            match self.slim_nodes_api().patch(&name, &PatchParams::default(), &Patch::Merge(&patch)).await {
                Ok(_) => return Ok(()),
                Err(e) if code(&e) == Some(409) && attempt < PATCH_TRIES => {
                    tokio::time::sleep(Jitter::from_entropy().jitter(PATCH_BACKOFF, 1.0)).await;
                    current = self.slim_nodes_api().get(&name).await?.into_inner();
                    labels = taints::beta_labels(&current);
                    if labels.is_empty() {
                        return Ok(());
                    }
                }
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::Taint;
    use kube_sim::{Sim, SimConfig};

    use super::*;

    fn keys(node: &Node) -> Vec<String> {
        taints::node_taints(node).iter().map(|t| format!("{}:{}", t.key, t.effect)).collect()
    }

    #[tokio::test]
    async fn a_taint_swap_on_a_stale_copy_conflicts_then_keeps_the_concurrent_change() {
        let sim = Sim::start(SimConfig { nodes: 1, ..SimConfig::default() }).await.expect("kube-sim starts");
        let api: Api<Wire<Node>> = Api::all(sim.client().expect("client"));
        let stale = api.get("node-1").await.expect("node").into_inner();
        // Someone else taints the node meanwhile.
        let foreign = json!({"spec": {"taints": [{"key": "example.com/gpu", "effect": "NoSchedule"}]}});
        api.patch("node-1", &PatchParams::default(), &Patch::Merge(&foreign)).await.expect("patched");

        let swap = TaintSwap { add: vec![taints::unreachable_no_execute()], remove: Vec::new() };
        assert!(swap_node_taints(&api, &stale, &swap).await.expect("swapped"));
        let node = api.get("node-1").await.expect("node").into_inner();
        assert_eq!(keys(&node), ["example.com/gpu:NoSchedule", "node.kubernetes.io/unreachable:NoExecute"]);
        let conflicts = sim.controls().stats().iter().filter(|l| l.verb == "patch" && l.code == 409).count();
        assert_eq!(conflicts, 1, "the stale patch was refused once");

        // Nothing left to change: no write.
        assert!(!swap_node_taints(&api, &node, &swap).await.expect("no-op"));
        let reachable = swap_node_taints(&api, &node, &TaintSwap::reachable()).await.expect("removed");
        assert!(reachable);
        let node = api.get("node-1").await.expect("node").into_inner();
        assert_eq!(
            node.spec.taints.to_vec(),
            vec![Taint { key: "example.com/gpu".into(), effect: "NoSchedule".into(), ..Taint::default() }]
        );
    }
}
