//! Rows of Pods: READY, STATUS (upstream's reason rules), RESTARTS, IP,
//! NODE, readiness gates, and the conditions of finished pods.

use std::collections::BTreeSet;

use jiff::Timestamp;
use serde_json::{Value, json};

use super::access::{flag, get, int, list, str_at, text, time};
use super::cells::{Row, age, name};
use super::format::{or_none, since};

/// Why a pod is where it is: the STATUS column, plus READY and RESTARTS.
pub(super) fn print_pod(obj: &Value, now: Timestamp) -> Row {
    let phase = text(obj, &["status", "phase"]);
    let conditions = list(obj, &["status", "conditions"]);
    let mut reason = match text(obj, &["status", "reason"]) {
        "" => phase.to_owned(),
        r => r.to_owned(),
    };
    let gated =
        conditions.iter().any(|c| text(c, &["type"]) == "PodScheduled" && text(c, &["reason"]) == "SchedulingGated");
    if gated {
        reason = "SchedulingGated".to_owned();
    }

    let init_specs = list(obj, &["spec", "initContainers"]);
    let sidecars: BTreeSet<&str> =
        init_specs.iter().filter(|c| text(c, &["restartPolicy"]) == "Always").map(|c| text(c, &["name"])).collect();
    let total = list(obj, &["spec", "containers"]).len() + sidecars.len();
    let mut ready = 0usize;
    let mut restarts = Restarts::default();
    let mut sidecar_restarts = Restarts::default();

    let mut initializing = false;
    for (i, status) in list(obj, &["status", "initContainerStatuses"]).iter().enumerate() {
        let is_sidecar = sidecars.contains(text(status, &["name"]));
        restarts.add(status);
        if is_sidecar {
            sidecar_restarts.add(status);
        }
        let terminated = get(status, &["state", "terminated"]);
        let waiting_reason = str_at(status, &["state", "waiting", "reason"]).unwrap_or("");
        if terminated.is_some_and(|t| int(t, &["exitCode"]).unwrap_or(0) == 0) {
            continue;
        }
        if is_sidecar && get(status, &["started"]).and_then(Value::as_bool) == Some(true) {
            if flag(status, &["ready"]) {
                ready += 1;
            }
            continue;
        }
        reason = if let Some(t) = terminated {
            format!("Init:{}", terminated_reason(t))
        } else if !waiting_reason.is_empty() && waiting_reason != "PodInitializing" {
            format!("Init:{waiting_reason}")
        } else {
            format!("Init:{i}/{}", init_specs.len())
        };
        initializing = true;
        break;
    }

    let initialized = conditions.iter().any(|c| text(c, &["type"]) == "Initialized" && text(c, &["status"]) == "True");
    if !initializing || initialized {
        restarts = sidecar_restarts;
        let mut has_running = false;
        for status in list(obj, &["status", "containerStatuses"]).iter().rev() {
            restarts.add(status);
            let waiting_reason = str_at(status, &["state", "waiting", "reason"]).unwrap_or("");
            if !waiting_reason.is_empty() {
                reason = waiting_reason.to_owned();
            } else if let Some(t) = get(status, &["state", "terminated"]) {
                reason = terminated_reason(t);
            } else if flag(status, &["ready"]) && get(status, &["state", "running"]).is_some() {
                has_running = true;
                ready += 1;
            }
        }
        if reason == "Completed" && has_running {
            let pod_ready = conditions.iter().any(|c| text(c, &["type"]) == "Ready" && text(c, &["status"]) == "True");
            reason = if pod_ready { "Running" } else { "NotReady" }.to_owned();
        }
    }

    if get(obj, &["metadata", "deletionTimestamp"]).is_some() {
        if text(obj, &["status", "reason"]) == "NodeLost" {
            reason = "Unknown".to_owned();
        } else if phase != "Succeeded" && phase != "Failed" {
            reason = "Terminating".to_owned();
        }
    }
    let cells = vec![
        name(obj),
        Value::from(format!("{ready}/{total}")),
        Value::from(reason),
        Value::from(restarts.cell(now)),
        age(obj, now),
        Value::from(or_none(&pod_ip(obj))),
        Value::from(or_none(text(obj, &["spec", "nodeName"]))),
        Value::from(or_none(text(obj, &["status", "nominatedNodeName"]))),
        Value::from(readiness_gates(obj, conditions)),
    ];
    let conditions = match phase {
        "Succeeded" => vec![row_completed("Succeeded", "The pod has completed successfully.")],
        "Failed" => vec![row_completed("Failed", "The pod failed.")],
        _ => Vec::new(),
    };
    Row { cells, conditions }
}

/// The `Completed` row condition finished pods carry.
fn row_completed(reason: &str, message: &str) -> Value {
    json!({"type": "Completed", "status": "True", "reason": reason, "message": message})
}

/// A terminated container's reason, or its signal or exit code without one.
fn terminated_reason(terminated: &Value) -> String {
    match text(terminated, &["reason"]) {
        "" => match int(terminated, &["signal"]).unwrap_or(0) {
            0 => format!("ExitCode:{}", int(terminated, &["exitCode"]).unwrap_or(0)),
            signal => format!("Signal:{signal}"),
        },
        r => r.to_owned(),
    }
}

/// Restart count and the latest restart, summed over container statuses.
#[derive(Default, Clone, Copy)]
struct Restarts {
    /// Sum of `restartCount`.
    count: i64,
    /// The latest `lastState.terminated.finishedAt` seen.
    last: Option<Timestamp>,
}

impl Restarts {
    /// Adds one container status.
    fn add(&mut self, status: &Value) {
        self.count += int(status, &["restartCount"]).unwrap_or(0);
        if let Some(finished) = time(status, &["lastState", "terminated", "finishedAt"])
            && self.last.is_none_or(|last| last < finished)
        {
            self.last = Some(finished);
        }
    }

    /// "2" or "2 (5m ago)".
    fn cell(&self, now: Timestamp) -> String {
        match self.last {
            Some(last) if self.count != 0 => {
                format!("{} ({} ago)", self.count, since(now, Some(last)))
            }
            _ => self.count.to_string(),
        }
    }
}

/// The pod's primary IP, as the internal type sees it (podIP wins).
fn pod_ip(obj: &Value) -> String {
    match text(obj, &["status", "podIP"]) {
        "" => list(obj, &["status", "podIPs"]).first().map(|ip| text(ip, &["ip"])).unwrap_or("").to_owned(),
        ip => ip.to_owned(),
    }
}

/// READINESS GATES: "true gates/all gates", or `<none>`.
fn readiness_gates(obj: &Value, conditions: &[Value]) -> String {
    let gates = list(obj, &["spec", "readinessGates"]);
    if gates.is_empty() {
        return "<none>".to_owned();
    }
    let passing = gates
        .iter()
        .filter(|gate| {
            let wanted = text(gate, &["conditionType"]);
            conditions.iter().find(|c| text(c, &["type"]) == wanted).is_some_and(|c| text(c, &["status"]) == "True")
        })
        .count();
    format!("{passing}/{}", gates.len())
}
