//! The two periodic passes (upstream `monitorNodeHealth` every
//! `--node-monitor-period`, `doNoExecuteTaintingPass` every 100 ms): each
//! node's health and status, the `RegisteredNode`, `RemovingNode` and
//! `NodeNotReady` events, `MarkPodsNotReady`, the `NoExecute` steps, the
//! zone states and the `node_collector_*` gauges; then the draining of
//! each zone's rate-limited tainting queue.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use jiff::Timestamp;
use k8s_openapi::api::core::v1::ObjectReference;
use kcm_controllers::node::monitor::{self, TaintAction};
use kcm_controllers::node::queue::{NODE_EVICTION_PERIOD, Outcome};
use kcm_controllers::node::taints::{NoExecuteStep, TaintSwap};
use kcm_controllers::node::zone;
use kcm_controllers::node::{self as core, POD_NODE_NAME_INDEX};
use kcm_objects::Node;
use tokio::time::Instant;

use super::shared::Inner;
use kcm_runtime::events::EventType;
use kcm_runtime::informer;

impl Inner {
    /// Upstream `wait.Until(monitorNodeHealth, period)`: a pass, then the
    /// period, forever.
    pub(super) async fn monitor_loop(&self) {
        loop {
            self.monitor_pass().await;
            tokio::time::sleep(self.monitor_period).await;
        }
    }

    /// Upstream `wait.Until(doNoExecuteTaintingPass, 100ms)`.
    pub(super) async fn tainting_loop(&self) {
        loop {
            self.tainting_pass().await;
            tokio::time::sleep(NODE_EVICTION_PERIOD).await;
        }
    }

    /// Upstream `monitorNodeHealth`.
    async fn monitor_pass(&self) {
        let started = Instant::now();
        let mut nodes = self.nodes.list();
        nodes.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
        let membership = self.lock().classify(nodes.iter().map(AsRef::as_ref));
        if let Some(m) = &self.metrics {
            // Every zone's eviction counter exists from the start, at 0
            // (upstream initialises it with the zone's queue).
            for zone in self.lock().queue_zones() {
                m.evictions.with_label_values(&[&zone]);
            }
        }
        for (name, uid) in &membership.added {
            tracing::info!(node = %name, "controller observed a new Node");
            self.node_event(
                name,
                uid,
                EventType::Normal,
                core::EVENT_REGISTERED_NODE,
                core::registered_node_message(name),
            );
            if let Some(node) = nodes.iter().find(|n| &*n.metadata.name == name) {
                self.mark_reachable(node).await;
            }
        }
        for (name, uid) in &membership.deleted {
            tracing::info!(node = %name, "controller observed a Node deletion");
            self.node_event(name, uid, EventType::Normal, core::EVENT_REMOVING_NODE, core::removing_node_message(name));
        }
        futures::stream::iter(nodes.iter().cloned())
            .map(|node| self.update_node(node))
            .buffer_unordered(self.monitor_parallelism)
            .collect::<Vec<()>>()
            .await;
        let disruption = self.lock().finish(Timestamp::now());
        if let Some(m) = &self.metrics {
            for (zone, r) in &disruption.reports {
                m.zone_size.with_label_values(&[zone]).set(r.size as f64);
                m.zone_health.with_label_values(&[zone]).set(r.health);
                m.unhealthy_nodes.with_label_values(&[zone]).set(r.unhealthy as f64);
            }
            for zone in &disruption.vanished {
                m.zone_size.with_label_values(&[zone]).set(0.0);
                m.zone_health.with_label_values(&[zone]).set(100.0);
                m.unhealthy_nodes.with_label_values(&[zone]).set(0.0);
            }
        }
        for (zone, rate) in &disruption.rates {
            tracing::info!(zone = %zone.replace('\0', "\\0"), rate = %rate, "zone taint rate changed");
        }
        if disruption.entered_full_disruption {
            tracing::info!("Controller detected that all Nodes are not-Ready. Entering master disruption mode");
            for node in &nodes {
                self.mark_reachable(node).await;
            }
        }
        if disruption.left_full_disruption {
            tracing::info!("Controller detected that some Nodes are Ready. Exiting master disruption mode");
        }
        if let Some(m) = &self.metrics {
            m.update_all_nodes_health.observe(started.elapsed().as_secs_f64());
        }
    }

    /// One node of the monitor pass.
    async fn update_node(&self, cached: Arc<Node>) {
        let started = Instant::now();
        let name = cached.metadata.name.to_string();
        let Some((node, assessment)) = self.settle_health(cached).await else { return };
        let actions = self.lock().settle(&node, &assessment, Timestamp::now());
        match &actions.no_execute {
            NoExecuteStep::SwapNow(swap) => {
                if let Err(e) = self.swap_taints(&node, swap).await {
                    tracing::warn!(node = %name, error = %e, "failed to swap the NoExecute taint; will try again next pass");
                }
            }
            NoExecuteStep::MarkReachable => self.mark_reachable(&node).await,
            NoExecuteStep::Queue { .. } | NoExecuteStep::Nothing => {}
        }
        if actions.event_not_ready {
            let uid = node.metadata.uid.to_string();
            self.node_event(
                &name,
                &uid,
                EventType::Normal,
                core::EVENT_NODE_NOT_READY,
                core::node_not_ready_message(&name),
            );
        }
        if actions.mark_pods {
            let pods = self.pods.by_index(POD_NODE_NAME_INDEX, &name).unwrap_or_default();
            let mut ok = true;
            for pod in pods {
                if let Err(e) = self.mark_pod_not_ready(&pod, &name).await {
                    tracing::warn!(node = %name, pod = %informer::key_of(pod.as_ref()), error = %e, "unable to mark pod NotReady");
                    ok = false;
                }
            }
            self.lock().pods_marked(&name, ok);
        }
        if let Some(m) = &self.metrics {
            m.update_node_health.observe(started.elapsed().as_secs_f64());
        }
    }

    /// Upstream `markNodeAsReachable`: removes both `NoExecute` taints,
    /// then forgets the node in its zone's queue.
    async fn mark_reachable(&self, node: &Node) {
        match self.swap_taints(node, &TaintSwap::reachable()).await {
            Ok(removed) => {
                if removed {
                    tracing::info!(node = %node.metadata.name, "node is healthy again, removed NoExecute taints");
                }
                self.lock().reachable(node);
            }
            Err(e) => tracing::warn!(node = %node.metadata.name, error = %e, "failed to remove taints from node"),
        }
    }

    /// Upstream `doNoExecuteTaintingPass`.
    async fn tainting_pass(&self) {
        let zones = self.lock().queue_zones();
        for zone in zones {
            loop {
                let Some(item) = self.lock().next_due(&zone, Timestamp::now()) else { break };
                let node = self.nodes.get(&item.value);
                let outcome = match monitor::tainting_action(node.as_deref()) {
                    TaintAction::Done => Outcome::Done,
                    TaintAction::Retry(wait) => Outcome::Retry(wait),
                    TaintAction::Swap(swap) => {
                        let node = node.expect("a swap is only decided for a cached node");
                        match self.swap_taints(&node, &swap).await {
                            Ok(_) => {
                                if let Some(m) = &self.metrics {
                                    m.evictions.with_label_values(&[&zone::zone_key(&node)]).inc();
                                }
                                tracing::info!(node = %item.value, taint = %swap.add[0].key, "tainted node NoExecute");
                                Outcome::Done
                            }
                            Err(e) => {
                                tracing::warn!(node = %item.value, error = %e, "failed to taint node NoExecute; retrying");
                                Outcome::Retry(Duration::ZERO)
                            }
                        }
                    }
                };
                self.lock().complete(&zone, &item.value, outcome, Timestamp::now());
            }
        }
    }

    /// An event on a node (upstream `RecordNodeEvent`).
    fn node_event(&self, name: &str, uid: &str, kind: EventType, reason: &str, message: String) {
        let reference = ObjectReference {
            api_version: Some("v1".into()),
            kind: Some("Node".into()),
            name: Some(name.into()),
            uid: Some(uid.into()),
            ..Default::default()
        };
        self.recorder.event(&reference, kind, reason, message);
    }
}
