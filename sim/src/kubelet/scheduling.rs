//! The scheduler stand-in: binds a pending pod to the least loaded Ready,
//! schedulable node whose taints it tolerates and whose labels match its
//! `nodeSelector`, and retries the pods that fit nowhere when something
//! changes. What the bound pod then shows is `status.rs`'s.

use std::collections::HashMap;

use serde_json::{Value, json};

use super::status::bound_status;
use super::{Kubelet, PodRef};

impl Kubelet {
    pub(super) fn retry_unschedulable(&mut self) {
        let waiting: Vec<(String, String)> = self.unschedulable.keys().cloned().collect();
        for (ns, name) in waiting {
            match self.api.store.get(&self.pod_key, &ns, &name) {
                Some(stored) => self.evaluate(&stored.value()),
                None => {
                    self.unschedulable.remove(&(ns, name));
                }
            }
        }
    }

    /// Binds a pod to the least loaded node it fits on.
    pub(super) fn bind(&mut self, pod: &Value, pod_ref: PodRef) {
        let key = (pod_ref.namespace.clone(), pod_ref.name.clone());
        let (nodes, _) = self.api.store.list(&self.node_key, None);
        let mut load: HashMap<&str, usize> = HashMap::new();
        for node in self.placement.values() {
            *load.entry(node.as_str()).or_default() += 1;
        }
        let choice = nodes
            .iter()
            .map(|(_, s)| s.value())
            .filter(|node| fits(pod, node))
            .map(|node| node.pointer("/metadata/name").and_then(Value::as_str).unwrap_or("").to_owned())
            .filter(|name| !self.nodes.is_stopped(name))
            .min_by_key(|name| (load.get(name.as_str()).copied().unwrap_or(0), name.clone()));
        let Some(node) = choice else {
            self.unschedulable.insert(key, ());
            return;
        };
        self.unschedulable.remove(&key);
        let index = self.placement.len();
        let uid = pod_ref.uid.clone();
        let node_for_write = node.clone();
        let result = self.api.store.update::<()>(&self.pod_key, &pod_ref.namespace, &pod_ref.name, |s| {
            let mut v = s.value();
            let unbound = v.pointer("/spec/nodeName").and_then(Value::as_str).is_none_or(str::is_empty);
            if !unbound || v.pointer("/metadata/uid").and_then(Value::as_str) != Some(uid.as_str()) {
                return Ok(None);
            }
            v["spec"]["nodeName"] = json!(node_for_write);
            let spec = v["spec"].clone();
            let mut status = v.get("status").cloned().unwrap_or_else(|| json!({}));
            bound_status(&mut status, &spec, &node_for_write, index);
            v["status"] = status;
            Ok(Some(v))
        });
        if result.is_ok() {
            self.placement.insert(pod_ref.uid, node);
        }
    }
}

/// Whether the scheduler may place `pod` on `node`.
pub(super) fn fits(pod: &Value, node: &Value) -> bool {
    let ready = node
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .is_some_and(|cs| cs.iter().any(|c| c["type"] == "Ready" && c["status"] == "True"));
    let unschedulable = node.pointer("/spec/unschedulable").and_then(Value::as_bool).unwrap_or(false);
    if !ready || unschedulable {
        return false;
    }
    let labels = node.pointer("/metadata/labels").and_then(Value::as_object);
    let selector_ok = pod
        .pointer("/spec/nodeSelector")
        .and_then(Value::as_object)
        .is_none_or(|sel| sel.iter().all(|(k, v)| labels.and_then(|l| l.get(k)) == Some(v)));
    let tolerations = pod.pointer("/spec/tolerations").and_then(Value::as_array).cloned().unwrap_or_default();
    let taints_ok = node.pointer("/spec/taints").and_then(Value::as_array).is_none_or(|taints| {
        taints
            .iter()
            .filter(|t| matches!(t["effect"].as_str(), Some("NoSchedule" | "NoExecute")))
            .all(|t| tolerations.iter().any(|tol| tolerates(tol, t)))
    });
    selector_ok && taints_ok
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
