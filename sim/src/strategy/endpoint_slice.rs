//! The EndpointSlice strategy's own step (upstream
//! `pkg/registry/discovery/endpointslice/strategy.go`, `dropTopologyOnV1`):
//! `deprecatedTopology` is not writable through `discovery.k8s.io/v1`, the
//! only version kube-sim serves. A create drops it; an update that changes
//! the endpoints drops it too, after moving a node name it held
//! (`kubernetes.io/hostname`) into an unset `nodeName` when the stored
//! slice already named that node there. An update leaving the endpoints
//! alone keeps it.
//!
//! The generation rules (bumped when anything but metadata changes, or the
//! labels do) are `kinds.rs`'s; upstream's disabled-field dropping has
//! nothing to drop with 1.37's default gates (`hints.forNodes` is GA).

use std::collections::BTreeSet;

use serde_json::{Value, json};

/// The topology key that held an endpoint's node name in v1beta1.
const LABEL_HOSTNAME: &str = "kubernetes.io/hostname";

/// `dropTopologyOnV1` for a create (`old` is `None`) or an update of `old`.
#[doc(alias = "dropTopologyOnV1")]
pub(super) fn drop_topology(slice: &mut Value, old: Option<&Value>) {
    if let Some(old) = old
        && old.get("endpoints") == slice.get("endpoints")
    {
        return;
    }
    let previous: BTreeSet<&str> = old
        .and_then(|o| o.get("endpoints"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|e| e.pointer("/deprecatedTopology").and_then(|t| t.get(LABEL_HOSTNAME)).and_then(Value::as_str))
        .collect();
    let endpoints = slice.get_mut("endpoints").and_then(Value::as_array_mut).into_iter().flatten();
    for endpoint in endpoints.filter_map(Value::as_object_mut) {
        let Some(topology) = endpoint.remove("deprecatedTopology") else { continue };
        let node = topology.get(LABEL_HOSTNAME).and_then(Value::as_str).filter(|n| previous.contains(n));
        if let Some(node) = node
            && endpoint.get("nodeName").is_none_or(Value::is_null)
        {
            endpoint.insert("nodeName".to_owned(), json!(node));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn creates_drop_the_deprecated_topology() {
        let mut slice = json!({"endpoints": [{"addresses": ["10.0.0.1"],
            "deprecatedTopology": {"kubernetes.io/hostname": "n1"}}]});
        drop_topology(&mut slice, None);
        assert_eq!(slice, json!({"endpoints": [{"addresses": ["10.0.0.1"]}]}));
    }

    #[test]
    fn updates_keep_it_with_the_endpoints_and_move_a_known_node_name() {
        let old = json!({"endpoints": [{"addresses": ["10.0.0.1"],
            "deprecatedTopology": {"kubernetes.io/hostname": "n1"}}]});
        let mut same = old.clone();
        drop_topology(&mut same, Some(&old));
        assert_eq!(same, old);
        let mut changed = json!({"endpoints": [
            {"addresses": ["10.0.0.2"], "deprecatedTopology": {"kubernetes.io/hostname": "n1"}},
            {"addresses": ["10.0.0.3"], "deprecatedTopology": {"kubernetes.io/hostname": "n2"}}]});
        drop_topology(&mut changed, Some(&old));
        assert_eq!(
            changed,
            json!({"endpoints": [{"addresses": ["10.0.0.2"], "nodeName": "n1"}, {"addresses": ["10.0.0.3"]}]})
        );
    }
}
