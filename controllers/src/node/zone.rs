//! Zones and their states (upstream `ComputeZoneState`, `handleDisruption`,
//! `setLimiterInZone`, `GetZoneKey`).
//!
//! Nodes are grouped by zone (region and zone labels). Each monitor pass
//! computes every zone's state from its nodes' Ready conditions:
//! - `FullDisruption`: no node ready, at least one not;
//! - `PartialDisruption`: more than two nodes not ready, and at least
//!   `--unhealthy-zone-threshold` (0.55) of them;
//! - `Normal` otherwise (`Initial` until the first pass).
//!
//! The state sets how fast the zone's `NoExecute` taints may be added: a
//! normal zone at `--node-eviction-rate` (0.1 nodes/s); a partially
//! disrupted zone at `--secondary-node-eviction-rate` (0.01) if it has more
//! than `--large-cluster-size-threshold` (50) nodes, else not at all; a
//! fully disrupted zone at the normal rate while other zones are fine (a
//! zone can fail), but if **every** zone is fully disrupted the controller
//! assumes the problem is its own view of the cluster (a control-plane
//! network failure), removes every `NoExecute` taint it placed and stops
//! tainting, until some node is ready again; then every node gets a fresh
//! grace period.
//!
//! Worked example: zone `a` with 60 nodes, 40 of them silent: 40 > 2 and
//! 40/60 = 0.67 ≥ 0.55, so `PartialDisruption`, and 60 > 50, so taints go
//! on at 0.01/s (one node every 100 s). With 10 nodes, 6 silent, the rate
//! is 0: nothing is tainted.

use std::collections::BTreeMap;

use kcm_objects::Node;

/// Region label (GA).
pub const LABEL_REGION: &str = "topology.kubernetes.io/region";
/// Zone label (GA).
pub const LABEL_ZONE: &str = "topology.kubernetes.io/zone";
/// Region label (deprecated beta, still preferred when present).
pub const LABEL_REGION_BETA: &str = "failure-domain.beta.kubernetes.io/region";
/// Zone label (deprecated beta, still preferred when present).
pub const LABEL_ZONE_BETA: &str = "failure-domain.beta.kubernetes.io/zone";

/// The zone key of a node: `region + ":\0:" + zone`, or `""` when it has
/// neither label (the whole cluster is then one zone). The beta labels win
/// over the GA ones, as upstream.
pub fn zone_key(node: &Node) -> String {
    let labels = &node.metadata.labels;
    let get = |beta: &str, ga: &str| {
        labels.get(beta).filter(|v| !v.is_empty()).or_else(|| labels.get(ga)).unwrap_or_default().to_owned()
    };
    let region = get(LABEL_REGION_BETA, LABEL_REGION);
    let zone = get(LABEL_ZONE_BETA, LABEL_ZONE);
    if region.is_empty() && zone.is_empty() {
        return String::new();
    }
    format!("{region}:\x00:{zone}")
}

/// A zone's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ZoneState {
    /// Seen, not yet computed.
    Initial,
    /// Healthy enough: the normal taint rate.
    Normal,
    /// Many nodes down: the secondary rate, or none for small zones.
    PartialDisruption,
    /// No node ready.
    FullDisruption,
}

/// The tuning flags of the disruption logic.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rates {
    /// `--node-eviction-rate` (0.1).
    pub eviction_rate: f32,
    /// `--secondary-node-eviction-rate` (0.01).
    pub secondary_eviction_rate: f32,
    /// `--large-cluster-size-threshold` (50).
    pub large_cluster_size_threshold: u32,
    /// `--unhealthy-zone-threshold` (0.55).
    pub unhealthy_zone_threshold: f32,
}

impl Default for Rates {
    fn default() -> Self {
        Rates {
            eviction_rate: 0.1,
            secondary_eviction_rate: 0.01,
            large_cluster_size_threshold: 50,
            unhealthy_zone_threshold: 0.55,
        }
    }
}

impl Rates {
    /// The taint rate (nodes per second) of a zone of `size` nodes in
    /// `state` (upstream `setLimiterInZone`; `None` leaves it as it is).
    pub fn rate(&self, size: usize, state: ZoneState) -> Option<f32> {
        match state {
            ZoneState::Normal | ZoneState::FullDisruption => Some(self.eviction_rate),
            ZoneState::PartialDisruption => {
                let large = u32::try_from(size).map_or(true, |s| s > self.large_cluster_size_threshold);
                Some(if large { self.secondary_eviction_rate } else { 0.0 })
            }
            ZoneState::Initial => None,
        }
    }
}

/// A zone's state from its nodes' Ready statuses (`None`: no Ready
/// condition, counted as not ready), and how many are not ready.
pub fn compute_zone_state(ready: &[Option<&str>], unhealthy_zone_threshold: f32) -> (usize, ZoneState) {
    let ready_nodes = ready.iter().filter(|s| **s == Some(super::health::TRUE)).count();
    let not_ready = ready.len() - ready_nodes;
    let state = if ready_nodes == 0 && not_ready > 0 {
        ZoneState::FullDisruption
    } else if not_ready > 2 && not_ready as f32 / ready.len() as f32 >= unhealthy_zone_threshold {
        ZoneState::PartialDisruption
    } else {
        ZoneState::Normal
    };
    (not_ready, state)
}

/// One zone's gauges (`node_collector_zone_size`, `..._zone_health`,
/// `..._unhealthy_nodes_in_zone`).
#[derive(Debug, Clone, PartialEq)]
pub struct ZoneReport {
    /// Nodes counted in the zone.
    pub size: usize,
    /// Of which not ready.
    pub unhealthy: usize,
    /// Percentage of ready nodes.
    pub health: f64,
}

/// What a disruption pass decided.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Disruption {
    /// Gauges per zone present this pass.
    pub reports: BTreeMap<String, ZoneReport>,
    /// Zones that have no node any more: their gauges go back to size 0,
    /// health 100, unhealthy 0.
    pub vanished: Vec<String>,
    /// Every zone just became fully disrupted: remove the `NoExecute`
    /// taints of every node and stop tainting (the rates below are 0).
    pub entered_full_disruption: bool,
    /// Some node is ready again after a full disruption: every node gets a
    /// fresh grace period.
    pub left_full_disruption: bool,
    /// New taint rates, per zone.
    pub rates: BTreeMap<String, f32>,
}

/// The zones' states, remembered between passes.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Zones {
    states: BTreeMap<String, ZoneState>,
}

impl Zones {
    /// No zone known.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether `zone` has a state.
    pub fn contains(&self, zone: &str) -> bool {
        self.states.contains_key(zone)
    }

    /// Starts tracking `zone` as `Initial`; false when it was known.
    pub fn insert(&mut self, zone: &str) -> bool {
        if self.contains(zone) {
            return false;
        }
        self.states.insert(zone.to_owned(), ZoneState::Initial);
        true
    }

    /// The state of `zone`.
    pub fn state(&self, zone: &str) -> Option<ZoneState> {
        self.states.get(zone).copied()
    }

    /// Upstream `handleDisruption`: given every zone's nodes' Ready
    /// statuses (excluded nodes left out), updates the states and says
    /// what changes.
    pub fn handle_disruption(
        &mut self,
        ready_by_zone: &BTreeMap<String, Vec<Option<&str>>>,
        rates: &Rates,
    ) -> Disruption {
        let mut out = Disruption::default();
        let mut new_states = BTreeMap::new();
        let mut all_are_fully_disrupted = true;
        for (zone, ready) in ready_by_zone {
            let (unhealthy, state) = compute_zone_state(ready, rates.unhealthy_zone_threshold);
            let size = ready.len();
            let health = if size == 0 { 100.0 } else { 100.0 * (size - unhealthy) as f64 / size as f64 };
            out.reports.insert(zone.clone(), ZoneReport { size, unhealthy, health });
            all_are_fully_disrupted &= state == ZoneState::FullDisruption;
            new_states.insert(zone.clone(), state);
            self.states.entry(zone.clone()).or_insert(ZoneState::Initial);
        }
        out.vanished = self.states.keys().filter(|z| !ready_by_zone.contains_key(*z)).cloned().collect();
        for zone in &out.vanished {
            self.states.remove(zone);
        }
        let all_were_fully_disrupted = self.states.values().all(|s| *s == ZoneState::FullDisruption);
        if all_are_fully_disrupted && all_were_fully_disrupted {
            return out;
        }
        if all_are_fully_disrupted {
            out.entered_full_disruption = true;
            for (zone, state) in &mut self.states {
                out.rates.insert(zone.clone(), 0.0);
                *state = ZoneState::FullDisruption;
            }
            return out;
        }
        out.left_full_disruption = all_were_fully_disrupted;
        for (zone, state) in &mut self.states {
            let new = new_states[zone];
            if *state == new && !out.left_full_disruption {
                continue;
            }
            if let Some(rate) = rates.rate(ready_by_zone[zone].len(), new) {
                out.rates.insert(zone.clone(), rate);
            }
            *state = new;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::node::health::{FALSE, TRUE, UNKNOWN};
    use crate::node::testing::NodeBuilder;

    const T: Option<&str> = Some(TRUE);
    const F: Option<&str> = Some(FALSE);
    const U: Option<&str> = Some(UNKNOWN);

    /// Ready statuses and the expected (unhealthy, state).
    type Case<'a> = (&'a [Option<&'a str>], (usize, ZoneState));

    fn zone(ready: usize, down: usize) -> Vec<Option<&'static str>> {
        std::iter::repeat_n(T, ready).chain(std::iter::repeat_n(U, down)).collect()
    }

    fn zones(entries: &[(&str, Vec<Option<&'static str>>)]) -> BTreeMap<String, Vec<Option<&'static str>>> {
        entries.iter().map(|(z, r)| (z.to_string(), r.clone())).collect()
    }

    #[test]
    fn zone_keys_prefer_the_beta_labels() {
        assert_eq!(zone_key(&NodeBuilder::new("n").build()), "");
        assert_eq!(zone_key(&NodeBuilder::new("n").zone("a").build()), ":\x00:a");
        let both = NodeBuilder::new("n").label(LABEL_REGION, "r").zone("a").label(LABEL_ZONE_BETA, "old-a").build();
        assert_eq!(zone_key(&both), "r:\x00:old-a");
    }

    #[test]
    fn zone_states_follow_upstreams_thresholds() {
        let cases: &[Case] = &[
            (&[], (0, ZoneState::Normal)),
            (&[T, T, T], (0, ZoneState::Normal)),
            (&[U], (1, ZoneState::FullDisruption)),
            (&[F, U, None], (3, ZoneState::FullDisruption)),
            // Two down of three: 0.67 but not more than two.
            (&[T, U, U], (2, ZoneState::Normal)),
            (&[T, U, U, U], (3, ZoneState::PartialDisruption)),
            // 3 of 6 = 0.5 < 0.55.
            (&[T, T, T, U, U, U], (3, ZoneState::Normal)),
            // 11 of 20 = 0.55: at the threshold counts.
            (&zone(9, 11), (11, ZoneState::PartialDisruption)),
            // A node with no Ready condition counts as not ready.
            (&[T, None, None, None], (3, ZoneState::PartialDisruption)),
        ];
        for (ready, expected) in cases {
            assert_eq!(compute_zone_state(ready, 0.55), *expected, "{ready:?}");
        }
    }

    #[test]
    fn rates_per_state() {
        let r = Rates::default();
        assert_eq!(r.rate(3, ZoneState::Normal), Some(0.1));
        assert_eq!(r.rate(60, ZoneState::PartialDisruption), Some(0.01), "large zone: secondary rate");
        assert_eq!(r.rate(50, ZoneState::PartialDisruption), Some(0.0), "at the threshold: not large");
        assert_eq!(r.rate(3, ZoneState::FullDisruption), Some(0.1), "one zone down, others fine");
        assert_eq!(r.rate(3, ZoneState::Initial), None);
    }

    #[test]
    fn the_first_pass_sets_every_zones_rate() {
        let mut z = Zones::new();
        let d = z.handle_disruption(&zones(&[("a", zone(3, 0)), ("b", zone(2, 1))]), &Rates::default());
        assert_eq!(d.rates, BTreeMap::from([("a".into(), 0.1), ("b".into(), 0.1)]));
        assert_eq!(d.reports["b"], ZoneReport { size: 3, unhealthy: 1, health: 100.0 * 2.0 / 3.0 });
        assert!(!d.entered_full_disruption && !d.left_full_disruption);
        // Nothing changed: nothing to do.
        let d = z.handle_disruption(&zones(&[("a", zone(3, 0)), ("b", zone(2, 1))]), &Rates::default());
        assert!(d.rates.is_empty());
    }

    #[test]
    fn more_than_55_percent_down_slows_a_large_zone_and_stops_a_small_one() {
        let mut z = Zones::new();
        let rates = Rates::default();
        z.handle_disruption(&zones(&[("big", zone(60, 0)), ("small", zone(10, 0))]), &rates);
        let d = z.handle_disruption(&zones(&[("big", zone(20, 40)), ("small", zone(4, 6))]), &rates);
        assert_eq!(d.rates, BTreeMap::from([("big".into(), 0.01), ("small".into(), 0.0)]));
        assert_eq!(z.state("big"), Some(ZoneState::PartialDisruption));
        assert_eq!(d.reports["big"].unhealthy, 40);
        // Recovery: back to the normal rate.
        let d = z.handle_disruption(&zones(&[("big", zone(60, 0)), ("small", zone(10, 0))]), &rates);
        assert_eq!(d.rates, BTreeMap::from([("big".into(), 0.1), ("small".into(), 0.1)]));
    }

    #[test]
    fn one_zone_down_keeps_tainting_at_the_normal_rate() {
        let mut z = Zones::new();
        let rates = Rates::default();
        z.handle_disruption(&zones(&[("a", zone(3, 0)), ("b", zone(3, 0))]), &rates);
        let d = z.handle_disruption(&zones(&[("a", zone(0, 3)), ("b", zone(3, 0))]), &rates);
        assert_eq!(d.rates, BTreeMap::from([("a".into(), 0.1)]));
        assert!(!d.entered_full_disruption);
        assert_eq!(z.state("a"), Some(ZoneState::FullDisruption));
    }

    #[test]
    fn every_zone_down_stops_all_tainting_until_a_node_is_back() {
        let mut z = Zones::new();
        let rates = Rates::default();
        z.handle_disruption(&zones(&[("a", zone(3, 0)), ("b", zone(3, 0))]), &rates);
        let d = z.handle_disruption(&zones(&[("a", zone(0, 3)), ("b", zone(0, 3))]), &rates);
        assert!(d.entered_full_disruption);
        assert_eq!(d.rates, BTreeMap::from([("a".into(), 0.0), ("b".into(), 0.0)]));
        // Staying down: nothing more.
        let d = z.handle_disruption(&zones(&[("a", zone(0, 3)), ("b", zone(0, 3))]), &rates);
        assert_eq!(d, Disruption { reports: d.reports.clone(), ..Disruption::default() });
        // One node back: every zone gets the rate of its new state, and
        // every node a fresh grace period.
        let d = z.handle_disruption(&zones(&[("a", zone(1, 2)), ("b", zone(0, 3))]), &rates);
        assert!(d.left_full_disruption && !d.entered_full_disruption);
        assert_eq!(d.rates, BTreeMap::from([("a".into(), 0.1), ("b".into(), 0.1)]));
        assert_eq!(z.state("b"), Some(ZoneState::FullDisruption));
    }

    #[test]
    fn a_cluster_down_from_the_start_is_in_full_disruption() {
        let mut z = Zones::new();
        z.insert("a");
        let d = z.handle_disruption(&zones(&[("a", vec![F, U])]), &Rates::default());
        assert!(d.entered_full_disruption);
        assert_eq!(d.rates, BTreeMap::from([("a".into(), 0.0)]));
    }

    #[test]
    fn vanished_zones_are_forgotten_and_reported() {
        let mut z = Zones::new();
        let rates = Rates::default();
        z.handle_disruption(&zones(&[("a", zone(3, 0)), ("b", zone(1, 0))]), &rates);
        let d = z.handle_disruption(&zones(&[("a", zone(3, 0))]), &rates);
        assert_eq!(d.vanished, ["b"]);
        assert!(!z.contains("b"));
        assert!(z.insert("b"), "a returning zone starts again");
    }
}
