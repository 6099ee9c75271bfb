//! Hints from a Service's `trafficDistribution` (upstream
//! `trafficdist/trafficdist.go`), and their removal when it has none
//! (upstream `topologycache.RemoveHintsFromSlices`, the same as the
//! default heuristic).
//!
//! With `PreferClose` or `PreferSameZone`, every ready endpoint is hinted
//! for its own zone; with `PreferSameNode`, for its zone and its node.
//! 1.37 has `PreferSameTrafficDistribution` GA and locked on, so the three
//! values are always honoured.

use k8s_openapi::api::discovery::v1::{Endpoint, EndpointHints, EndpointSlice, ForNode, ForZone};

use super::slices::{endpoints, endpoints_mut};

/// `trafficDistribution: PreferClose`.
pub const PREFER_CLOSE: &str = "PreferClose";
/// `trafficDistribution: PreferSameZone`.
pub const PREFER_SAME_ZONE: &str = "PreferSameZone";
/// `trafficDistribution: PreferSameNode`.
pub const PREFER_SAME_NODE: &str = "PreferSameNode";

/// What the hints of a Service's endpoints should be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Heuristic {
    /// None at all: cluster-wide routing (upstream `defaultHeuristic`).
    Remove,
    /// Each ready endpoint's own zone, and its node too when
    /// `node_hints` (upstream `preferCloseHeuristic`).
    PreferClose {
        /// `PreferSameNode`.
        node_hints: bool,
    },
}

impl Heuristic {
    /// The heuristic of a `trafficDistribution` value: an unknown or
    /// absent one removes hints.
    pub fn for_distribution(traffic_distribution: Option<&str>) -> Self {
        match traffic_distribution {
            Some(PREFER_CLOSE | PREFER_SAME_ZONE) => Heuristic::PreferClose { node_hints: false },
            Some(PREFER_SAME_NODE) => Heuristic::PreferClose { node_hints: true },
            _ => Heuristic::Remove,
        }
    }

    /// The hints `endpoint` should carry.
    fn hints(self, endpoint: &Endpoint) -> Option<EndpointHints> {
        let Heuristic::PreferClose { node_hints } = self else { return None };
        if !ready(endpoint) {
            return endpoint.hints.clone();
        }
        let for_zones = endpoint.zone.as_ref().map(|zone| vec![ForZone { name: zone.clone() }]);
        let for_nodes = endpoint.node_name.as_ref().filter(|_| node_hints).map(|n| vec![ForNode { name: n.clone() }]);
        (for_zones.is_some() || for_nodes.is_some()).then_some(EndpointHints { for_zones, for_nodes })
    }

    /// Whether any endpoint of `slice` lacks the hints it should have
    /// (only ready endpoints are judged when hinting).
    fn needs_update(self, slice: &EndpointSlice) -> bool {
        endpoints(slice).iter().any(|endpoint| match self {
            Heuristic::Remove => endpoint.hints.is_some(),
            Heuristic::PreferClose { .. } => {
                ready(endpoint) && !same_hints(endpoint.hints.as_ref(), self.hints(endpoint).as_ref())
            }
        })
    }

    /// Sets every endpoint's hints.
    fn update(self, slice: &mut EndpointSlice) {
        for endpoint in endpoints_mut(slice) {
            endpoint.hints = self.hints(endpoint);
        }
    }
}

/// Whether two hint sets say the same (an empty list is no list).
fn same_hints(a: Option<&EndpointHints>, b: Option<&EndpointHints>) -> bool {
    let zones = |h: Option<&EndpointHints>| h.and_then(|h| h.for_zones.clone()).unwrap_or_default();
    let nodes = |h: Option<&EndpointHints>| h.and_then(|h| h.for_nodes.clone()).unwrap_or_default();
    zones(a) == zones(b) && nodes(a) == nodes(b)
}

fn ready(endpoint: &Endpoint) -> bool {
    endpoint.conditions.as_ref().and_then(|c| c.ready) == Some(true)
}

/// Applies `heuristic` to the slices about to be written, and moves the
/// unchanged slices whose hints are wrong into `to_update` (upstream
/// `ReconcileHints`).
pub fn reconcile_hints(
    heuristic: Heuristic,
    to_create: &mut [EndpointSlice],
    to_update: &mut Vec<EndpointSlice>,
    unchanged: &[&EndpointSlice],
) {
    to_update.extend(unchanged.iter().filter(|s| heuristic.needs_update(s)).map(|s| (*s).clone()));
    for slice in to_create.iter_mut().chain(to_update.iter_mut()) {
        heuristic.update(slice);
    }
}

#[cfg(test)]
mod tests {
    //! Upstream's `TestReconcileHints`, case by case.

    use k8s_openapi::api::discovery::v1::EndpointConditions;

    use super::*;
    use crate::testing::ipv4_slice as slice;

    // === utils ===

    fn endpoint(ip: &str, zone: Option<&str>, node: Option<&str>, ready: bool) -> Endpoint {
        Endpoint {
            addresses: vec![ip.into()],
            zone: zone.map(Into::into),
            node_name: node.map(Into::into),
            conditions: Some(EndpointConditions { ready: Some(ready), ..Default::default() }),
            ..Default::default()
        }
    }

    fn hinted(mut e: Endpoint, zone: Option<&str>, node: Option<&str>) -> Endpoint {
        e.hints = Some(EndpointHints {
            for_zones: zone.map(|z| vec![ForZone { name: z.into() }]),
            for_nodes: node.map(|n| vec![ForNode { name: n.into() }]),
        });
        e
    }

    fn zones_of(s: &EndpointSlice) -> Vec<Option<String>> {
        endpoints(s)
            .iter()
            .map(|e| e.hints.as_ref().and_then(|h| h.for_zones.as_ref()).map(|z| z[0].name.clone()))
            .collect()
    }

    // === tests ===

    #[test]
    fn should_set_zone_hints_with_prefer_close() {
        let mut create = vec![slice(
            "",
            vec![endpoint("10.0.0.1", Some("zone-a"), None, true), endpoint("10.0.0.2", Some("zone-b"), None, true)],
        )];
        let mut update = vec![];
        reconcile_hints(Heuristic::for_distribution(Some(PREFER_CLOSE)), &mut create, &mut update, &[]);
        assert_eq!(zones_of(&create[0]), [Some("zone-a".into()), Some("zone-b".into())]);
    }

    #[test]
    fn should_not_create_zone_hint_if_there_are_no_zone_labels_on_endpoints() {
        let mut create = vec![slice("", vec![endpoint("10.0.0.1", None, Some("node-1"), true)])];
        reconcile_hints(Heuristic::for_distribution(Some(PREFER_SAME_ZONE)), &mut create, &mut vec![], &[]);
        assert_eq!(endpoints(&create[0])[0].hints, None);
    }

    #[test]
    fn should_set_same_zone_and_same_node_hints_with_prefer_same_node() {
        let mut create = vec![slice("", vec![endpoint("10.0.0.1", Some("zone-a"), Some("node-1"), true)])];
        reconcile_hints(Heuristic::for_distribution(Some(PREFER_SAME_NODE)), &mut create, &mut vec![], &[]);
        assert_eq!(
            endpoints(&create[0])[0],
            hinted(endpoint("10.0.0.1", Some("zone-a"), Some("node-1"), true), Some("zone-a"), Some("node-1"))
        );
    }

    #[test]
    fn should_not_modify_unchanged_slices_with_correct_hints() {
        let correct = slice("s1", vec![hinted(endpoint("10.0.0.1", Some("zone-a"), None, true), Some("zone-a"), None)]);
        let mut update = vec![];
        reconcile_hints(Heuristic::for_distribution(Some(PREFER_CLOSE)), &mut [], &mut update, &[&correct]);
        assert!(update.is_empty());
    }

    #[test]
    fn should_move_unchanged_slices_with_incorrect_hints_to_update() {
        let wrong = slice("s1", vec![hinted(endpoint("10.0.0.1", Some("zone-a"), None, true), Some("zone-b"), None)]);
        let missing = slice("s2", vec![endpoint("10.0.0.2", Some("zone-b"), None, true)]);
        let mut update = vec![];
        reconcile_hints(Heuristic::for_distribution(Some(PREFER_CLOSE)), &mut [], &mut update, &[&wrong, &missing]);
        assert_eq!(update.iter().map(|s| s.metadata.name.clone().unwrap()).collect::<Vec<_>>(), ["s1", "s2"]);
        assert_eq!(zones_of(&update[0]), [Some("zone-a".into())]);
    }

    #[test]
    fn should_not_set_hints_for_endpoints_which_are_not_ready() {
        let mut create = vec![slice("", vec![endpoint("10.0.0.1", Some("zone-a"), None, false)])];
        reconcile_hints(Heuristic::for_distribution(Some(PREFER_CLOSE)), &mut create, &mut vec![], &[]);
        assert_eq!(endpoints(&create[0])[0].hints, None);
    }

    #[test]
    fn should_remove_hints_when_traffic_distribution_is_unset() {
        let hinted_slice =
            slice("s1", vec![hinted(endpoint("10.0.0.1", Some("zone-a"), None, true), Some("zone-a"), None)]);
        let clean = slice("s2", vec![endpoint("10.0.0.2", Some("zone-a"), None, true)]);
        let mut create = vec![hinted_slice.clone()];
        let mut update = vec![];
        reconcile_hints(Heuristic::for_distribution(None), &mut create, &mut update, &[&hinted_slice, &clean]);
        assert_eq!(endpoints(&create[0])[0].hints, None);
        assert_eq!(update.len(), 1, "only the unchanged slice with hints is rewritten");
        assert_eq!(endpoints(&update[0])[0].hints, None);
    }

    #[test]
    fn should_remove_hints_for_unknown_traffic_distribution() {
        assert_eq!(Heuristic::for_distribution(Some("Random")), Heuristic::Remove);
    }
}
