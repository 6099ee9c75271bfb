//! What is decoded of `spec.affinity`: only the node a DaemonSet pod was
//! made for, which a pending pod (no `spec.nodeName` yet) names in its
//! required node affinity as `matchFields: metadata.name In [<node>]`
//! (upstream `daemon/util.GetTargetNodeName`). Every other affinity field is
//! skipped unread.

use serde::Deserialize;

use crate::atom::Atom;
use crate::meta::nullable;

/// `spec.affinity`.
#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct WireAffinity {
    #[serde(deserialize_with = "nullable")]
    node_affinity: WireNodeAffinity,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct WireNodeAffinity {
    required_during_scheduling_ignored_during_execution: Option<WireNodeSelector>,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct WireNodeSelector {
    #[serde(deserialize_with = "nullable")]
    node_selector_terms: Vec<WireTerm>,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct WireTerm {
    #[serde(deserialize_with = "nullable")]
    match_fields: Vec<WireRequirement>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct WireRequirement {
    key: Box<str>,
    operator: Box<str>,
    #[serde(deserialize_with = "nullable")]
    values: Vec<Atom>,
}

impl WireAffinity {
    /// The value of the first `metadata.name In` field requirement of the
    /// required node affinity's terms, if it has exactly one value (upstream
    /// reports an error otherwise, and the pod is not counted on any node).
    pub(crate) fn target_node_name(self) -> Option<Atom> {
        let selector = self.node_affinity.required_during_scheduling_ignored_during_execution?;
        let requirement = selector
            .node_selector_terms
            .into_iter()
            .flat_map(|t| t.match_fields)
            .find(|r| &*r.key == "metadata.name" && &*r.operator == "In")?;
        let [value] = <[Atom; 1]>::try_from(requirement.values).ok()?;
        Some(value)
    }
}
