//! Whether a pod fits a node, and why not: the Filter plugins of the
//! default scheduler profile that look at the node alone, in upstream's
//! order, the first to refuse giving the node's reason:
//!
//! 1. NodeUnschedulable: `spec.unschedulable`, unless the pod tolerates
//!    `node.kubernetes.io/unschedulable:NoSchedule`;
//! 2. TaintToleration: a NoSchedule or NoExecute taint the pod does not
//!    tolerate;
//! 3. NodeAffinity: the node selector and the required node affinity
//!    (`affinity.rs`).
//!
//! kube-sim adds one rule the node lifecycle controller would otherwise
//! make for it: a node that is not Ready, or whose kubelet stand-in is
//! stopped, counts as carrying the NoSchedule taint that controller puts on
//! such a node (`node.kubernetes.io/not-ready` when Ready is False,
//! `node.kubernetes.io/unreachable` otherwise), unless it carries it
//! already, so a pod lands there only if it tolerates that taint.
//!
//! [`FitError`] spells the scheduler's verdict when no node fits, as its
//! `FitError.Error()` does: `0/3 nodes are available: 1 node(s) were
//! unschedulable, 2 node(s) had untolerated taint(s). preemption: 0/3 nodes
//! are available: 3 Preemption is not helpful for scheduling.` (every
//! reason here is one preemption cannot help with), or `no nodes available
//! to schedule pods` in a cluster without nodes.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::affinity;

/// NodeUnschedulable's reason.
pub(super) const REASON_UNSCHEDULABLE: &str = "node(s) were unschedulable";
/// TaintToleration's reason.
pub(super) const REASON_TAINT: &str = "node(s) had untolerated taint(s)";
/// NodeAffinity's Filter reason.
pub(super) const REASON_AFFINITY: &str = "node(s) didn't match Pod's node affinity/selector";
/// The reason of the nodes NodeAffinity's PreFilter left out.
pub(super) const REASON_NOT_PINNED: &str = "node(s) didn't satisfy plugin(s) [NodeAffinity]";
/// The taint of cordoned nodes, which NodeUnschedulable lets tolerations
/// through.
const TAINT_UNSCHEDULABLE: &str = "node.kubernetes.io/unschedulable";

/// Why `pod` cannot be placed on `node` (`stopped`: its kubelet stand-in
/// is stopped), or `None` when it fits.
pub(super) fn misfit(pod: &Value, node: &Value, stopped: bool) -> Option<&'static str> {
    let tolerations = pod.pointer("/spec/tolerations").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    let tolerated = |taint: &Value| tolerations.iter().any(|toleration| tolerates(toleration, taint));
    let cordoned = node.pointer("/spec/unschedulable").and_then(Value::as_bool).unwrap_or(false);
    if cordoned && !tolerated(&json!({"key": TAINT_UNSCHEDULABLE, "effect": "NoSchedule"})) {
        return Some(REASON_UNSCHEDULABLE);
    }
    let taints = node.pointer("/spec/taints").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    let blocking = |taint: &&Value| matches!(taint["effect"].as_str(), Some("NoSchedule" | "NoExecute"));
    let carried =
        |implied: &Value| taints.iter().any(|t| t["key"] == implied["key"] && t["effect"] == implied["effect"]);
    let implied = implied_taint(node, stopped).filter(|implied| !carried(implied));
    if taints.iter().filter(blocking).chain(implied.as_ref()).any(|taint| !tolerated(taint)) {
        return Some(REASON_TAINT);
    }
    if !affinity::matches(pod, node) {
        return Some(REASON_AFFINITY);
    }
    None
}

/// The taint the node lifecycle controller would put on a node that is
/// not Ready or not heartbeating.
fn implied_taint(node: &Value, stopped: bool) -> Option<Value> {
    let ready = node
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .and_then(|cs| cs.iter().find(|c| c["type"] == "Ready"))
        .and_then(|c| c["status"].as_str());
    let key = match ready {
        Some("True") if !stopped => return None,
        Some("False") => "node.kubernetes.io/not-ready",
        _ => "node.kubernetes.io/unreachable",
    };
    Some(json!({"key": key, "effect": "NoSchedule"}))
}

/// Whether a toleration tolerates a taint (as `v1.Toleration.ToleratesTaint`).
pub fn tolerates(toleration: &Value, taint: &Value) -> bool {
    let effect = toleration["effect"].as_str().unwrap_or("");
    if !effect.is_empty() && Some(effect) != taint["effect"].as_str() {
        return false;
    }
    let key = toleration["key"].as_str().unwrap_or("");
    if !key.is_empty() && Some(key) != taint["key"].as_str() {
        return false;
    }
    match toleration["operator"].as_str().unwrap_or("Equal") {
        "Exists" => true,
        "Equal" | "" => toleration["value"].as_str().unwrap_or("") == taint["value"].as_str().unwrap_or(""),
        _ => false,
    }
}

/// Why no node fits: what failed before any node was looked at (a
/// PreFilter's message), or how many nodes each reason turned away.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(super) struct FitError {
    /// Nodes in the cluster.
    pub(super) nodes: usize,
    /// The PreFilter's message, which stands for every node.
    pub(super) pre_filter: Option<String>,
    /// Nodes turned away, by reason.
    pub(super) reasons: BTreeMap<&'static str, usize>,
}

impl std::fmt::Display for FitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.nodes == 0 {
            // `ErrNoNodesAvailable`: no cycle ran.
            return write!(f, "no nodes available to schedule pods");
        }
        write!(f, "0/{} nodes are available:", self.nodes)?;
        match &self.pre_filter {
            Some(message) => write!(f, " {message}.")?,
            None if !self.reasons.is_empty() => {
                // Upstream sorts the "<count> <reason>" strings themselves.
                let mut counted: Vec<String> = self.reasons.iter().map(|(r, n)| format!("{n} {r}")).collect();
                counted.sort();
                write!(f, " {}.", counted.join(", "))?;
            }
            None => {}
        }
        write!(
            f,
            " preemption: 0/{nodes} nodes are available: {nodes} Preemption is not helpful for scheduling.",
            nodes = self.nodes
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ready_node(spec: Value) -> Value {
        json!({"metadata": {"name": "n", "labels": {"disk": "ssd"}}, "spec": spec,
        "status": {"conditions": [{"type": "Ready", "status": "True"}]}})
    }

    #[test]
    fn the_first_filter_to_refuse_gives_the_reason() {
        let taint = json!({"taints": [{"key": "dedicated", "value": "db", "effect": "NoSchedule"}]});
        let plain = json!({"spec": {}});
        let tolerant = json!({"spec": {"tolerations": [{"key": "dedicated", "operator": "Equal", "value": "db"}]}});
        assert_eq!(misfit(&plain, &ready_node(taint.clone()), false), Some(REASON_TAINT));
        assert_eq!(misfit(&tolerant, &ready_node(taint), false), None);
        let prefer = json!({"taints": [{"key": "x", "effect": "PreferNoSchedule"}]});
        assert_eq!(misfit(&plain, &ready_node(prefer), false), None);
        let wants_hdd = json!({"spec": {"nodeSelector": {"disk": "hdd"}}});
        assert_eq!(misfit(&wants_hdd, &ready_node(json!({})), false), Some(REASON_AFFINITY));
        let cordoned = ready_node(json!({"unschedulable": true}));
        assert_eq!(misfit(&wants_hdd, &cordoned, false), Some(REASON_UNSCHEDULABLE));
        let daemon = json!({"spec": {"tolerations": [
            {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}]}});
        assert_eq!(misfit(&daemon, &cordoned, false), None);
        let everything = json!({"spec": {"tolerations": [{"operator": "Exists"}]}});
        let noexecute = json!({"taints": [{"key": "a", "value": "b", "effect": "NoExecute"}]});
        assert_eq!(misfit(&plain, &ready_node(noexecute.clone()), false), Some(REASON_TAINT));
        assert_eq!(misfit(&everything, &ready_node(noexecute), false), None);
    }

    #[test]
    fn nodes_not_ready_or_stopped_count_as_tainted() {
        let plain = json!({"spec": {}});
        let mut not_ready = ready_node(json!({}));
        not_ready["status"]["conditions"][0]["status"] = json!("False");
        assert_eq!(misfit(&plain, &not_ready, false), Some(REASON_TAINT));
        assert_eq!(misfit(&plain, &ready_node(json!({})), true), Some(REASON_TAINT));
        let tolerates_not_ready = json!({"spec": {"tolerations": [
            {"key": "node.kubernetes.io/not-ready", "operator": "Exists"}]}});
        assert_eq!(misfit(&tolerates_not_ready, &not_ready, false), None);
        assert_eq!(misfit(&tolerates_not_ready, &ready_node(json!({})), true), Some(REASON_TAINT));
        let daemon = json!({"spec": {"tolerations": [
            {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"}]}});
        not_ready["spec"]["taints"] = json!([{"key": "node.kubernetes.io/not-ready", "effect": "NoExecute"}]);
        assert_eq!(misfit(&daemon, &not_ready, false), Some(REASON_TAINT), "NoSchedule is implied beside NoExecute");
    }

    #[test]
    fn fit_errors_read_as_the_schedulers() {
        let mut error = FitError { nodes: 3, ..FitError::default() };
        error.reasons.insert(REASON_UNSCHEDULABLE, 1);
        error.reasons.insert(REASON_TAINT, 2);
        assert_eq!(
            error.to_string(),
            "0/3 nodes are available: 1 node(s) were unschedulable, 2 node(s) had untolerated taint(s). \
             preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
        );
        let claim = FitError { nodes: 2, pre_filter: Some("persistentvolumeclaim \"data\" not found".into()), ..error };
        assert_eq!(
            claim.to_string(),
            "0/2 nodes are available: persistentvolumeclaim \"data\" not found. \
             preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
        );
        assert_eq!(FitError::default().to_string(), "no nodes available to schedule pods");
    }
}
