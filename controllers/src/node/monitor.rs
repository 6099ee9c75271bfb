//! The node lifecycle controller's remembered state and the steps of its
//! monitor pass (upstream `monitorNodeHealth`, `classifyNodes`,
//! `processTaintBaseEviction`'s queue side, `handleDisruption`'s effects,
//! `doNoExecuteTaintingPass`'s decision), with the I/O left to the driver.
//!
//! A pass, every `--node-monitor-period`, goes:
//! 1. [`Monitor::classify`] the cached nodes: new ones get a
//!    `RegisteredNode` event and their `NoExecute` taints removed (a
//!    restarted controller starts clean; the taints come back if the node is
//!    still down), gone ones a `RemovingNode` event; new zones get a queue;
//! 2. per node: [`Monitor::assess`] (health, maybe a status write, retried
//!    on a fresh read), [`Monitor::remember`], then [`Monitor::settle`]:
//!    which `NoExecute` step, whether to emit `NodeNotReady` and mark the
//!    node's pods not ready;
//! 3. [`Monitor::finish`]: zone states and rates, entering or leaving the
//!    full-disruption mode.
//!
//! Every 100 ms the driver drains each zone's queue through
//! [`Monitor::next_due`] / [`Monitor::complete`], deciding each item with
//! [`tainting_action`].

use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::coordination::v1::Lease;
use kcm_objects::Node;

use super::LABEL_EXCLUDE_DISRUPTION;
use super::health::{self, Assessment, Grace, NodeHealth, TRUE};
use super::queue::{Outcome, TimedValue, ZoneQueue};
use super::taints::{self, NoExecuteStep, TaintSwap};
use super::zone::{Disruption, Rates, Zones, zone_key};

/// How long a queued node waits when the cache cannot say what to do yet
/// (upstream: 50 ms).
pub const TAINT_RETRY_WAIT: Duration = Duration::from_millis(50);

/// The controller's settings.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Config {
    /// Grace periods.
    pub grace: Grace,
    /// Zone rates and thresholds.
    pub rates: Rates,
}

/// Nodes that appeared or went since the last pass.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Membership {
    /// New nodes (name, uid): emit `RegisteredNode` and remove their
    /// `NoExecute` taints ([`TaintSwap::reachable`]).
    pub added: Vec<(String, String)>,
    /// Gone nodes (name, uid): emit `RemovingNode`.
    pub deleted: Vec<(String, String)>,
}

/// What to do for one node after its health is settled.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeActions {
    /// The `NoExecute` step. `Queue` is already done (the node is in its
    /// zone's queue); `SwapNow` and `MarkReachable` are writes for the
    /// driver (after a successful `MarkReachable`, call
    /// [`Monitor::reachable`]).
    pub no_execute: NoExecuteStep,
    /// Emit `NodeNotReady` on the node.
    pub event_not_ready: bool,
    /// Mark the node's pods not ready, then report with
    /// [`Monitor::pods_marked`].
    pub mark_pods: bool,
}

/// What the tainting pass does for a queued node.
#[derive(Debug, Clone, PartialEq)]
pub enum TaintAction {
    /// Nothing to do (node gone, or ready again): done.
    Done,
    /// The cache cannot say yet: retry after the wait.
    Retry(Duration),
    /// Apply this swap; done if it succeeds (count an eviction), retry at
    /// once if not.
    Swap(TaintSwap),
}

/// Upstream's tainting-pass decision for a queued node, from the cache.
pub fn tainting_action(node: Option<&Node>) -> TaintAction {
    let Some(node) = node else { return TaintAction::Done };
    match health::condition(&node.status.conditions, health::READY) {
        None => TaintAction::Retry(TAINT_RETRY_WAIT),
        Some(ready) => taints::no_execute_swap(&ready.status).map_or(TaintAction::Done, TaintAction::Swap),
    }
}

/// What the pod worker does for a pod newly bound to a node (upstream
/// `processPod`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PodStep {
    /// Nothing: the node is ready, has not been looked at yet, or has no
    /// Ready condition (the next node pass handles the pod).
    Nothing,
    /// The node is not in the cache (yet): retry with backoff.
    NodeNotCached,
    /// The node is not ready: mark the pod not ready.
    MarkNotReady,
}

/// Whether `node` is left out of the zone computation.
pub fn excluded_from_disruption(node: &Node) -> bool {
    node.metadata.labels.get(LABEL_EXCLUDE_DISRUPTION).is_some()
}

/// What the controller remembers between passes.
#[derive(Debug, Clone)]
pub struct Monitor {
    /// Settings.
    config: Config,
    /// Per node: probe and transition times, last Ready, last Lease.
    health: HashMap<String, NodeHealth>,
    /// Nodes seen (name -> uid), for `RegisteredNode` / `RemovingNode`.
    known: HashMap<String, String>,
    /// Zone states.
    zones: Zones,
    /// Per zone: nodes waiting for a `NoExecute` taint. Never removed, as
    /// upstream (a zone that comes back reuses its queue).
    queues: BTreeMap<String, ZoneQueue>,
    /// Nodes whose pods still need marking not ready.
    retry: HashSet<String>,
    /// This pass's Ready statuses per zone (excluded nodes left out).
    pass: BTreeMap<String, Vec<Option<String>>>,
}

impl Monitor {
    /// Nothing remembered: every node will get a full grace period.
    pub fn new(config: Config) -> Self {
        Monitor {
            config,
            health: HashMap::new(),
            known: HashMap::new(),
            zones: Zones::new(),
            queues: BTreeMap::new(),
            retry: HashSet::new(),
            pass: BTreeMap::new(),
        }
    }

    /// Step 1 of a pass (upstream `classifyNodes` and what follows it):
    /// starts the pass over `nodes`.
    pub fn classify<'a>(&mut self, nodes: impl IntoIterator<Item = &'a Node>) -> Membership {
        self.pass.clear();
        let mut out = Membership::default();
        let mut present = HashSet::new();
        for node in nodes {
            let name = node.metadata.name.to_string();
            let zone = zone_key(node);
            self.ensure_zone(&zone);
            if !self.known.contains_key(&name) {
                let uid = node.metadata.uid.to_string();
                self.known.insert(name.clone(), uid.clone());
                if let Some(q) = self.queues.get_mut(&zone) {
                    q.remove(&name);
                }
                out.added.push((name.clone(), uid));
            }
            present.insert(name);
        }
        let gone: Vec<String> = self.known.keys().filter(|n| !present.contains(*n)).cloned().collect();
        for name in gone {
            let uid = self.known.remove(&name).unwrap_or_default();
            self.health.remove(&name);
            self.retry.remove(&name);
            out.deleted.push((name, uid));
        }
        out.added.sort();
        out.deleted.sort();
        out
    }

    fn ensure_zone(&mut self, zone: &str) {
        if self.zones.insert(zone) {
            let rate = self.config.rates.eviction_rate;
            self.queues.entry(zone.to_owned()).or_insert_with(|| ZoneQueue::new(rate));
        }
    }

    /// Judges `node` (upstream `tryUpdateNodeHealth`); store the result
    /// with [`remember`](Self::remember) whatever happens to the write.
    pub fn assess(&self, node: &Node, lease: Option<&Lease>, now: Timestamp) -> Assessment {
        let name = &*node.metadata.name;
        health::assess(node, lease, self.health.get(name), now, self.config.grace)
    }

    /// Stores what was learnt about `node`.
    pub fn remember(&mut self, node: &str, health: NodeHealth) {
        self.health.insert(node.to_owned(), health);
    }

    /// The remembered Ready status of `node` (`Some(None)`: known, no
    /// Ready condition; `None`: not known yet). The pod workers use it.
    pub fn ready_status(&self, node: &str) -> Option<Option<&str>> {
        self.health.get(node).map(NodeHealth::ready_status)
    }

    /// The pod worker's decision for a pod bound to `node`, given whether
    /// that node is in the cache.
    pub fn pod_step(&self, node: &str, node_cached: bool) -> PodStep {
        let Some(ready) = self.ready_status(node) else { return PodStep::Nothing };
        if !node_cached {
            return PodStep::NodeNotCached;
        }
        match ready {
            Some(status) if status != TRUE => PodStep::MarkNotReady,
            _ => PodStep::Nothing,
        }
    }

    /// Step 2 of a pass, once `node`'s health is settled (its status
    /// written if needed): counts it in its zone and says what to do.
    pub fn settle(&mut self, node: &Node, assessment: &Assessment, now: Timestamp) -> NodeActions {
        let name = node.metadata.name.to_string();
        let current = assessment.current_ready.as_ref().map(|c| c.status.clone());
        if !excluded_from_disruption(node) {
            self.pass.entry(zone_key(node)).or_default().push(current.clone());
        }
        let nothing = NodeActions { no_execute: NoExecuteStep::Nothing, event_not_ready: false, mark_pods: false };
        let Some(current) = current else { return nothing };
        let observed = assessment.observed_ready.status.as_str();
        let no_execute = taints::no_execute_step(node, observed);
        if let NoExecuteStep::Queue { forget_first } = no_execute {
            let zone = zone_key(node);
            self.ensure_zone(&zone);
            let queue = self.queues.get_mut(&zone).expect("ensured above");
            if forget_first {
                queue.remove(&name);
            }
            queue.add(&name, &node.metadata.uid.to_string(), now);
        }
        let event_not_ready = current != TRUE && observed == TRUE;
        let mark_pods = event_not_ready || (self.retry.contains(&name) && observed != TRUE);
        if !mark_pods {
            self.retry.remove(&name);
        }
        NodeActions { no_execute, event_not_ready, mark_pods }
    }

    /// Whether marking `node`'s pods not ready worked; if not, the next
    /// pass tries again while the node stays not ready.
    pub fn pods_marked(&mut self, node: &str, ok: bool) {
        if ok {
            self.retry.remove(node);
        } else {
            self.retry.insert(node.to_owned());
        }
    }

    /// The `NoExecute` taints of `node` are gone: forget it in its zone's
    /// queue, so a later outage taints it again.
    pub fn reachable(&mut self, node: &Node) {
        let name = &*node.metadata.name;
        if let Some(q) = self.queues.get_mut(&zone_key(node)) {
            q.remove(name);
        }
    }

    /// Step 3 of a pass (upstream `handleDisruption`): zone states and
    /// rates. When [`Disruption::entered_full_disruption`] is set, the
    /// driver removes the `NoExecute` taints of every node (and calls
    /// [`reachable`](Self::reachable) for each).
    pub fn finish(&mut self, now: Timestamp) -> Disruption {
        let pass = std::mem::take(&mut self.pass);
        let ready: BTreeMap<String, Vec<Option<&str>>> =
            pass.iter().map(|(z, v)| (z.clone(), v.iter().map(Option::as_deref).collect())).collect();
        let disruption = self.zones.handle_disruption(&ready, &self.config.rates);
        for (zone, rate) in &disruption.rates {
            let default = self.config.rates.eviction_rate;
            self.queues.entry(zone.clone()).or_insert_with(|| ZoneQueue::new(default)).swap_limiter(*rate, now);
        }
        if disruption.left_full_disruption {
            for health in self.health.values_mut() {
                health.restart_grace(now);
            }
        }
        disruption
    }

    /// The zones that have a queue.
    pub fn queue_zones(&self) -> Vec<String> {
        self.queues.keys().cloned().collect()
    }

    /// The next node of `zone` to taint, if its rate and due time allow.
    pub fn next_due(&mut self, zone: &str, now: Timestamp) -> Option<TimedValue> {
        self.queues.get_mut(zone)?.next_due(now)
    }

    /// How tainting `name` in `zone` went.
    pub fn complete(&mut self, zone: &str, name: &str, outcome: Outcome, now: Timestamp) {
        if let Some(q) = self.queues.get_mut(zone) {
            q.complete(name, outcome, now);
        }
    }
}

#[cfg(test)]
mod tests {
    //! Whole passes over a small simulated cluster: nodes heartbeat (or
    //! not), the monitor runs every 5 s and the tainting pass every
    //! 100 ms, and the writes the controller asks for are applied to the
    //! nodes, so each test reads as a timeline.

    use k8s_openapi::api::core::v1::Taint;

    use super::*;
    use crate::node::health::{FALSE, READY, UNKNOWN};
    use crate::node::queue::NODE_EVICTION_PERIOD;
    use crate::node::taints::{NO_EXECUTE, NO_SCHEDULE, TAINT_UNREACHABLE, no_schedule_swap, node_taints};
    use crate::node::testing::{NodeBuilder, lease};

    const PERIOD: i64 = 5;

    fn ms(t: i64) -> Timestamp {
        Timestamp::from_millisecond(t).unwrap()
    }

    /// A cluster of nodes, the controller's state, and what it did.
    struct Cluster {
        nodes: BTreeMap<String, Node>,
        leases: BTreeMap<String, Lease>,
        /// Nodes whose kubelet is alive: they post status every 10 s.
        alive: BTreeMap<String, bool>,
        /// Nodes that only renew their Lease.
        lease_only: HashSet<String>,
        monitor: Monitor,
        /// (ms, node, what) for events, pod marks and NoExecute taints.
        log: Vec<(i64, String, String)>,
    }

    impl Cluster {
        fn new(nodes: &[(&str, &str)]) -> Self {
            let mut c = Cluster {
                nodes: BTreeMap::new(),
                leases: BTreeMap::new(),
                alive: BTreeMap::new(),
                lease_only: HashSet::new(),
                monitor: Monitor::new(Config::default()),
                log: Vec::new(),
            };
            for (name, zone) in nodes {
                c.nodes.insert(name.to_string(), NodeBuilder::new(name).zone(zone).ready(TRUE, ms(0)).build());
                c.alive.insert(name.to_string(), true);
            }
            c
        }

        fn kubelets(&mut self, t: i64) {
            for (name, alive) in &self.alive {
                if !alive {
                    continue;
                }
                if self.lease_only.contains(name) {
                    self.leases.insert(name.clone(), lease(name, ms(t)));
                    continue;
                }
                let node = self.nodes.get_mut(name).unwrap();
                let conditions = &mut node.status.conditions;
                let ready = conditions.iter_mut().find(|c| c.type_ == READY).unwrap();
                ready.last_heartbeat_time = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(ms(t)));
                if ready.status != TRUE {
                    ready.status = TRUE.into();
                    ready.last_transition_time = ready.last_heartbeat_time.clone();
                }
            }
        }

        fn set_taints(&mut self, name: &str, swap: &TaintSwap, t: i64) -> bool {
            let node = self.nodes.get_mut(name).unwrap();
            if let Some(next) = swap.apply(node_taints(node), ms(t)) {
                node.spec.taints = next.into();
                return true;
            }
            false
        }

        fn monitor_pass(&mut self, t: i64) {
            let now = ms(t);
            let nodes: Vec<Node> = self.nodes.values().cloned().collect();
            let membership = self.monitor.classify(&nodes);
            for (name, _) in &membership.added {
                self.set_taints(name, &TaintSwap::reachable(), t);
                let node = self.nodes[name].clone();
                self.monitor.reachable(&node);
            }
            for node in &nodes {
                let name = node.metadata.name.to_string();
                let mut a = self.monitor.assess(node, self.leases.get(&name), now);
                let mut node = node.clone();
                if let Some(conditions) = a.status_update.clone() {
                    node.status.conditions = conditions.into();
                    self.nodes.insert(name.clone(), node.clone());
                    a.written(now, self.leases.get(&name));
                }
                self.monitor.remember(&name, a.health.clone());
                let actions = self.monitor.settle(&node, &a, now);
                match &actions.no_execute {
                    NoExecuteStep::SwapNow(swap) => {
                        self.set_taints(&name, swap, t);
                    }
                    NoExecuteStep::MarkReachable => {
                        if self.set_taints(&name, &TaintSwap::reachable(), t) {
                            self.log.push((t, name.clone(), "untainted".into()));
                        }
                        self.monitor.reachable(&node);
                    }
                    _ => {}
                }
                if actions.event_not_ready {
                    self.log.push((t, name.clone(), "NodeNotReady".into()));
                }
                if actions.mark_pods {
                    self.log.push((t, name.clone(), "pods not ready".into()));
                    self.monitor.pods_marked(&name, true);
                }
            }
            let d = self.monitor.finish(now);
            if d.entered_full_disruption {
                for name in self.nodes.keys().cloned().collect::<Vec<_>>() {
                    self.set_taints(&name, &TaintSwap::reachable(), t);
                    let node = self.nodes[&name].clone();
                    self.monitor.reachable(&node);
                }
                self.log.push((t, "*".into(), "full disruption".into()));
            }
            // The node update handler: NoSchedule taints follow.
            for name in self.nodes.keys().cloned().collect::<Vec<_>>() {
                if let Some(swap) = no_schedule_swap(&self.nodes[&name]) {
                    self.set_taints(&name, &swap, t);
                }
            }
        }

        fn tainting_pass(&mut self, t: i64) {
            let now = ms(t);
            for zone in self.monitor.queue_zones() {
                while let Some(item) = self.monitor.next_due(&zone, now) {
                    let outcome = match tainting_action(self.nodes.get(&item.value)) {
                        TaintAction::Done => Outcome::Done,
                        TaintAction::Retry(wait) => Outcome::Retry(wait),
                        TaintAction::Swap(swap) => {
                            self.set_taints(&item.value, &swap, t);
                            self.log.push((t, item.value.clone(), format!("tainted {}", swap.add[0].key)));
                            Outcome::Done
                        }
                    };
                    self.monitor.complete(&zone, &item.value, outcome, now);
                }
            }
        }

        /// Runs from `from` to `to` seconds: kubelets every 10 s, the
        /// monitor every 5 s, the tainting pass every 100 ms.
        fn run(&mut self, from: i64, to: i64) {
            let step = NODE_EVICTION_PERIOD.as_millis() as i64;
            let mut t = from * 1000;
            while t <= to * 1000 {
                if t % 10_000 == 0 {
                    self.kubelets(t);
                }
                if t % (PERIOD * 1000) == 0 {
                    self.monitor_pass(t);
                }
                self.tainting_pass(t);
                t += step;
            }
        }

        fn ready(&self, name: &str) -> String {
            health::condition(&self.nodes[name].status.conditions, READY).unwrap().status.clone()
        }

        fn taints(&self, name: &str) -> Vec<String> {
            node_taints(&self.nodes[name]).iter().map(|t: &Taint| format!("{}:{}", t.key, t.effect)).collect()
        }

        fn log_of(&self, name: &str) -> Vec<(i64, String)> {
            self.log.iter().filter(|(_, n, _)| n == name).map(|(t, _, w)| (t / 1000, w.clone())).collect()
        }
    }

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn a_dead_node_goes_unknown_then_gets_both_unreachable_taints_and_recovers() {
        let mut c = Cluster::new(&[("n1", "a"), ("n2", "a"), ("n3", "a")]);
        c.run(0, 20);
        // n3's kubelet dies after its 20 s heartbeat (seen by the pass at
        // 20 s: probe 20 s). Unknown once now > 20 + 50: the pass at 75 s.
        c.alive.insert("n3".into(), false);
        c.run(21, 70);
        assert_eq!(c.ready("n3"), TRUE);
        c.run(71, 75);
        assert_eq!(c.ready("n3"), UNKNOWN);
        assert_eq!(c.taints("n3"), s(&["node.kubernetes.io/unreachable:NoSchedule"]));
        // The NoExecute taint follows one pass later (decided on the
        // condition observed before the write), through the queue.
        c.run(76, 80);
        assert_eq!(
            c.taints("n3"),
            s(&["node.kubernetes.io/unreachable:NoSchedule", "node.kubernetes.io/unreachable:NoExecute"])
        );
        assert_eq!(
            c.log_of("n3"),
            [(75, "NodeNotReady".into()), (75, "pods not ready".into()), (80, format!("tainted {TAINT_UNREACHABLE}"))]
        );
        // Minutes later, nothing more happens.
        c.run(81, 400);
        assert_eq!(c.log_of("n3").len(), 3);
        assert!(c.log_of("n1").is_empty() && c.log_of("n2").is_empty());
        // The kubelet comes back: Ready at its next heartbeat, taints gone
        // at the next pass.
        c.alive.insert("n3".into(), true);
        c.run(401, 410);
        assert_eq!(c.ready("n3"), TRUE);
        assert!(c.taints("n3").is_empty());
        assert_eq!(c.log_of("n3").last(), Some(&(410, "untainted".into())));
        assert_eq!(c.monitor.zones.state(":\x00:a"), Some(crate::node::zone::ZoneState::Normal));
    }

    #[test]
    fn a_restarted_controller_gives_every_node_a_fresh_grace_period() {
        let mut c = Cluster::new(&[("n1", "a"), ("n2", "a")]);
        c.run(0, 20);
        c.alive.insert("n2".into(), false);
        // The controller restarts at 60 s, with n2 silent since 20 s and
        // already tainted by the old instance.
        c.run(21, 59);
        c.set_taints("n2", &TaintSwap { add: vec![taints::unreachable_no_execute()], remove: vec![] }, 59_000);
        c.monitor = Monitor::new(Config::default());
        c.run(60, 60);
        // First pass: n2 registered, its NoExecute taint removed, probe = 60 s.
        assert!(c.taints("n2").is_empty());
        c.run(61, 110);
        assert_eq!(c.ready("n2"), TRUE, "healthy until 60 + 50 s");
        c.run(111, 120);
        assert_eq!(c.ready("n2"), UNKNOWN);
        assert!(c.taints("n2").contains(&format!("{TAINT_UNREACHABLE}:{NO_EXECUTE}")));
    }

    #[test]
    fn a_node_that_only_renews_its_lease_is_healthy() {
        let mut c = Cluster::new(&[("n1", "a")]);
        c.lease_only.insert("n1".into());
        c.run(0, 600);
        assert_eq!(c.ready("n1"), TRUE);
        assert!(c.log.is_empty());
    }

    #[test]
    fn every_zone_down_adds_no_noexecute_taint() {
        let mut c = Cluster::new(&[("n1", "a"), ("n2", "b"), ("n3", "c")]);
        c.run(0, 20);
        for n in ["n1", "n2", "n3"] {
            c.alive.insert(n.into(), false);
        }
        c.run(21, 600);
        for n in ["n1", "n2", "n3"] {
            assert_eq!(c.ready(n), UNKNOWN);
            assert_eq!(c.taints(n), s(&[&format!("{TAINT_UNREACHABLE}:{NO_SCHEDULE}")]), "{n}: NoSchedule only");
            assert!(!c.log_of(n).iter().any(|(_, w)| w.starts_with("tainted")), "{n}: {:?}", c.log_of(n));
        }
        assert_eq!(c.log_of("*"), [(75, "full disruption".into())]);
        // One node back: zones b and c are now single fully disrupted zones
        // beside a healthy one, so their queued nodes are tainted at the
        // normal rate (each new bucket starts drained: 10 s).
        c.alive.insert("n1".into(), true);
        c.run(601, 610);
        assert_eq!(c.ready("n1"), TRUE);
        c.run(611, 630);
        for n in ["n2", "n3"] {
            assert_eq!(c.log_of(n).last(), Some(&(620, format!("tainted {TAINT_UNREACHABLE}"))), "{n}");
        }
    }

    #[test]
    fn one_zone_down_is_tainted_at_the_normal_rate_one_node_per_ten_seconds() {
        let mut c = Cluster::new(&[("a1", "a"), ("a2", "a"), ("a3", "a"), ("b1", "b")]);
        c.run(0, 20);
        for n in ["a1", "a2", "a3"] {
            c.alive.insert(n.into(), false);
        }
        c.run(21, 200);
        let tainted: Vec<i64> = ["a1", "a2", "a3"]
            .iter()
            .flat_map(|n| c.log_of(n))
            .filter(|(_, w)| w.starts_with("tainted"))
            .map(|(t, _)| t)
            .collect();
        assert_eq!(tainted, [80, 90, 100]);
    }

    #[test]
    fn excluded_nodes_do_not_count_towards_disruption() {
        let mut c = Cluster::new(&[("n1", "a"), ("n2", "a")]);
        let n2 = c.nodes["n2"].clone();
        let labels = n2.metadata.labels.iter().chain([(LABEL_EXCLUDE_DISRUPTION, "")]).collect();
        c.nodes.get_mut("n2").unwrap().metadata.labels = labels;
        c.run(0, 20);
        c.alive.insert("n1".into(), false);
        c.run(21, 100);
        // n1 is the only counted node, and down: full disruption, no taint.
        assert_eq!(c.log_of("*"), [(75, "full disruption".into())]);
        assert!(!c.taints("n1").contains(&format!("{TAINT_UNREACHABLE}:{NO_EXECUTE}")));
    }

    #[test]
    fn a_not_ready_node_gets_the_not_ready_taints_and_they_swap_when_it_goes_silent() {
        let mut c = Cluster::new(&[("n1", "a"), ("n2", "a")]);
        c.run(0, 20);
        // The kubelet reports NotReady (and keeps heartbeating).
        c.alive.insert("n1".into(), false);
        let node = c.nodes.get_mut("n1").unwrap();
        let ready = node.status.conditions.iter_mut().next().unwrap();
        ready.status = FALSE.into();
        ready.last_heartbeat_time = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(ms(21_000)));
        c.run(21, 30);
        assert_eq!(
            c.taints("n1"),
            s(&["node.kubernetes.io/not-ready:NoSchedule", "node.kubernetes.io/not-ready:NoExecute"])
        );
        // Last heartbeat seen at 25 s: Unknown at 80 s; the NoExecute taint
        // is swapped at the next pass, without the queue.
        c.run(31, 80);
        assert_eq!(c.ready("n1"), UNKNOWN);
        assert!(c.taints("n1").contains(&"node.kubernetes.io/not-ready:NoExecute".to_owned()));
        c.run(81, 85);
        assert_eq!(
            c.taints("n1"),
            s(&["node.kubernetes.io/unreachable:NoSchedule", "node.kubernetes.io/unreachable:NoExecute"])
        );
    }

    #[test]
    fn pods_bound_to_a_node_that_is_not_ready_are_marked() {
        let mut c = Cluster::new(&[("n1", "a"), ("n2", "a")]);
        assert_eq!(c.monitor.pod_step("n1", true), PodStep::Nothing, "not looked at yet");
        c.run(0, 20);
        c.alive.insert("n1".into(), false);
        assert_eq!(c.monitor.pod_step("n1", true), PodStep::Nothing, "still ready");
        c.run(21, 75);
        assert_eq!(c.monitor.pod_step("n1", true), PodStep::MarkNotReady);
        assert_eq!(c.monitor.pod_step("n1", false), PodStep::NodeNotCached);
        assert_eq!(c.monitor.pod_step("n2", true), PodStep::Nothing);
        let mut m = Monitor::new(Config::default());
        let never_posted = NodeBuilder::new("n3").build();
        let a = m.assess(&never_posted, None, ms(1_000));
        m.remember("n3", a.health);
        assert_eq!(m.pod_step("n3", true), PodStep::Nothing, "no Ready condition: left to the node pass");
    }

    #[test]
    fn queued_nodes_that_vanished_or_lack_ready_are_handled() {
        assert_eq!(tainting_action(None), TaintAction::Done);
        assert_eq!(tainting_action(Some(&NodeBuilder::new("n").build())), TaintAction::Retry(TAINT_RETRY_WAIT));
        assert_eq!(tainting_action(Some(&NodeBuilder::new("n").ready(TRUE, ms(0)).build())), TaintAction::Done);
    }
}
