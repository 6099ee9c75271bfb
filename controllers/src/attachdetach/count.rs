//! What the controller's gauges count (upstream
//! `attachdetach/metrics`): volumes in use on each node by plugin
//! (`storage_count_attachable_volumes_in_use`), and the volumes wanted
//! and attached by plugin (`attachdetach_controller_total_volumes`).

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::PersistentVolume;
use kcm_objects::Pod;

use super::view::NodeView;
use super::volume::{Attacher, plugin_name, plugin_of_unique};
use super::wanted::{PodClaim, pod_claims};

/// Counts by (node, plugin) of the claims of every pod bound to a node,
/// terminated or not, whose volume `volume` finds bound (upstream counts
/// every pod with a node; a volume of no controller plugin is not
/// counted).
pub fn volumes_in_use<'a>(
    pods: impl IntoIterator<Item = &'a Pod>,
    mut volume: impl FnMut(&Pod, &PodClaim) -> Option<Arc<PersistentVolume>>,
) -> BTreeMap<(String, String), i64> {
    let mut counts = BTreeMap::new();
    for pod in pods {
        let Some(node) = pod.node_name() else { continue };
        for claim in pod_claims(pod) {
            if let Some(plugin) = volume(pod, &claim).as_deref().and_then(plugin_name) {
                *counts.entry((node.to_owned(), plugin)).or_insert(0) += 1;
            }
        }
    }
    counts
}

/// One node's volumes by plugin: those its pods want (upstream's
/// `desired_state_of_world`), and those attached or being attached or
/// detached there (`actual_state_of_world`: its attachments, the volumes
/// it reports, and the wanted volumes whose attach does nothing).
pub fn node_totals(view: &NodeView) -> (BTreeMap<String, i64>, BTreeMap<String, i64>) {
    let mut desired = BTreeMap::new();
    for wanted in &view.wanted {
        *desired.entry(plugin_of_unique(&wanted.volume.unique)).or_insert(0) += 1;
    }
    let reported = view.facts.iter().flat_map(|f| f.reported.iter().map(|(name, _)| name.as_str()));
    let attached = view.attachments.iter().map(|a| a.unique.as_str());
    let immediate =
        (view.wanted.iter()).filter(|w| w.volume.attacher == Attacher::Nothing).map(|w| w.volume.unique.as_str());
    let uniques: std::collections::BTreeSet<&str> = reported.chain(attached).chain(immediate).collect();
    let mut actual = BTreeMap::new();
    for unique in uniques {
        *actual.entry(plugin_of_unique(unique)).or_insert(0) += 1;
    }
    (desired, actual)
}
