//! Node rules: `ValidateNode` and `ValidateNodeUpdate`, which upstream's
//! node strategy runs on writes of the main resource and of `/status`
//! alike: the taints, no address listed twice in `status.addresses`, and a
//! `podCIDRs` or `providerID` that, once set, never changes.

use std::collections::BTreeSet;

use serde_json::Value;

use super::access::{at, list, text};
use super::errors::Errors;
use super::render::go_quote;
use super::taints::node_taints;

/// Upstream's detail for a change of a write-once spec field.
fn write_once(field: &str) -> String {
    format!("node updates may not change {field} except from \"\" to valid")
}

/// `ValidateNode` (the parts kube-sim checks); `old` is set on update,
/// adding the `ValidateNodeUpdate` rules.
pub(super) fn node(errs: &mut Errors, node: &Value, old: Option<&Value>) {
    let spec = at(node, "spec");
    if let Some(old) = old {
        addresses(errs, list(at(node, "status"), "addresses"));
        let old_spec = at(old, "spec");
        let old_cidrs = list(old_spec, "podCIDRs");
        if !old_cidrs.is_empty() && old_cidrs != list(spec, "podCIDRs") {
            errs.forbidden("spec.podCIDRs", &write_once("podCIDR"));
        }
        let old_provider = text(old_spec, "providerID");
        if !old_provider.is_empty() && old_provider != text(spec, "providerID") {
            errs.forbidden("spec.providerID", &write_once("providerID"));
        }
        if text(old_spec, "externalID") != text(spec, "externalID") {
            errs.forbidden("spec.externalID", "may not be updated");
        }
    }
    // Upstream's field path is `metadata.taints`.
    node_taints(errs, list(spec, "taints"), "metadata.taints");
}

/// No `{type, address}` pair twice in `status.addresses`.
fn addresses(errs: &mut Errors, addresses: &[Value]) {
    let mut seen = BTreeSet::new();
    for (i, address) in addresses.iter().enumerate() {
        let (kind, value) = (text(address, "type"), text(address, "address"));
        if !seen.insert((kind, value)) {
            let shown = format!("core.NodeAddress{{Type:{}, Address:{}}}", go_quote(kind), go_quote(value));
            errs.duplicate(&format!("status.addresses[{i}]"), shown);
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn lines(new: &Value, old: Option<&Value>) -> Vec<String> {
        let mut errs = Errors::default();
        node(&mut errs, new, old);
        errs.finish().iter().map(ToString::to_string).collect()
    }

    #[test]
    fn updates_keep_write_once_fields_and_unique_addresses() {
        let old = json!({"spec": {"podCIDRs": ["10.0.0.0/24"], "providerID": "sim://a"},
            "status": {"addresses": [{"type": "InternalIP", "address": "10.1.0.1"}]}});
        assert!(lines(&old, Some(&old)).is_empty());
        let new = json!({"spec": {"podCIDRs": ["10.0.1.0/24"], "providerID": "sim://b"},
            "status": {"addresses": [{"type": "InternalIP", "address": "10.1.0.1"},
                {"type": "InternalIP", "address": "10.1.0.1"}]}});
        assert_eq!(
            lines(&new, Some(&old)),
            vec![
                "status.addresses[1]: Duplicate value: core.NodeAddress{Type:\"InternalIP\", Address:\"10.1.0.1\"}",
                "spec.podCIDRs: Forbidden: node updates may not change podCIDR except from \"\" to valid",
                "spec.providerID: Forbidden: node updates may not change providerID except from \"\" to valid",
            ]
        );
        let first = json!({"spec": {}});
        assert!(lines(&json!({"spec": {"podCIDRs": ["10.0.0.0/24"], "providerID": "x"}}), Some(&first)).is_empty());
    }

    #[test]
    fn taints_are_checked_under_metadata() {
        let tainted = json!({"spec": {"taints": [{"key": "a"}]}});
        assert_eq!(lines(&tainted, None), vec!["metadata.taints[0].effect: Required value"]);
    }
}
