//! What the slim Pod keeps of `status`: phase, conditions, container
//! statuses and addresses, each field with the controller that reads it.

use std::sync::{Arc, LazyLock};

use jiff::Timestamp;
use serde::{Deserialize, Deserializer};

use crate::atom::{Atom, Pool};
use crate::meta::nullable;
use crate::seconds::Seconds;

/// What is kept of `status`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(from = "WireStatus")]
pub struct PodStatus {
    /// `status.phase`.
    pub phase: Option<Atom>,
    /// `status.conditions` (readiness, availability, node lifecycle, the
    /// Job controller's pod failure policy and finish times).
    pub conditions: Box<[PodCondition]>,
    /// `status.containerStatuses` (ReplicaSet ranking by restarts; the Job
    /// controller's exit codes and finish times).
    pub container_statuses: Box<[ContainerStatus]>,
    /// `status.podIPs[].ip` (the endpoint and EndpointSlice controllers).
    pub pod_ips: Box<[Box<str>]>,
    /// What few pods have, out of line: a pod with none of it pays a
    /// pointer.
    rare: Option<Box<RareStatus>>,
}

/// The fields of `status` few pods set.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RareStatus {
    /// `status.reason` (the pod garbage collector deletes `Evicted` pods
    /// first).
    pub reason: Option<Atom>,
    /// `status.initContainerStatuses` (sidecar restarts; the Job
    /// controller's exit codes and finish times).
    pub init_container_statuses: Box<[ContainerStatus]>,
    /// `status.ephemeralContainerStatuses` (the PVC protection controller
    /// asks whether every container stopped).
    pub ephemeral_container_statuses: Box<[ContainerStatus]>,
}

impl PodStatus {
    /// The fields few pods set (all empty when the pod sets none).
    pub fn rare(&self) -> &RareStatus {
        static NONE: LazyLock<RareStatus> = LazyLock::new(RareStatus::default);
        self.rare.as_deref().unwrap_or(&NONE)
    }
}

/// `status` as decoded.
#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct WireStatus {
    phase: Option<Atom>,
    reason: Option<Atom>,
    #[serde(deserialize_with = "nullable")]
    conditions: Box<[PodCondition]>,
    #[serde(deserialize_with = "nullable")]
    container_statuses: Box<[ContainerStatus]>,
    #[serde(deserialize_with = "nullable")]
    init_container_statuses: Box<[ContainerStatus]>,
    #[serde(deserialize_with = "nullable")]
    ephemeral_container_statuses: Box<[ContainerStatus]>,
    #[serde(rename = "podIPs", deserialize_with = "pod_ips")]
    pod_ips: Box<[Box<str>]>,
}

impl From<WireStatus> for PodStatus {
    fn from(wire: WireStatus) -> Self {
        let rare = RareStatus {
            reason: wire.reason,
            init_container_statuses: wire.init_container_statuses,
            ephemeral_container_statuses: wire.ephemeral_container_statuses,
        };
        PodStatus {
            phase: wire.phase,
            conditions: wire.conditions,
            container_statuses: wire.container_statuses,
            pod_ips: wire.pod_ips,
            rare: (rare != RareStatus::default()).then(|| Box::new(rare)),
        }
    }
}

/// A pod condition: type, status and when it last changed. 16 bytes: a
/// pod reports five, and an `Option<Timestamp>` alone would take 24. The
/// type and status are one shared pair: a cluster's pods repeat a handful
/// of them.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(from = "WireCondition")]
pub struct PodCondition {
    /// `type` and `status`, one copy per distinct pair in the process.
    kind: Arc<ConditionKind>,
    /// `lastTransitionTime`, to the second.
    last_transition_time: Seconds,
}

/// A condition's type and status.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct ConditionKind {
    type_: Atom,
    status: Atom,
}

impl From<&ConditionKind> for Arc<ConditionKind> {
    fn from(kind: &ConditionKind) -> Self {
        Arc::new(kind.clone())
    }
}

/// Every distinct [`ConditionKind`] in use.
static KINDS: LazyLock<Pool<ConditionKind>> = LazyLock::new(Pool::new);

/// A pod condition as decoded.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireCondition {
    #[serde(rename = "type", default)]
    type_: Atom,
    #[serde(default)]
    status: Atom,
    #[serde(default)]
    last_transition_time: Seconds,
}

impl From<WireCondition> for PodCondition {
    fn from(wire: WireCondition) -> Self {
        let kind = KINDS.intern(&ConditionKind { type_: wire.type_, status: wire.status });
        PodCondition { kind, last_transition_time: wire.last_transition_time }
    }
}

impl PodCondition {
    /// A condition of `type_` with `status`, changed last at `since`.
    pub fn new(type_: &str, status: &str, since: Option<Timestamp>) -> PodCondition {
        let wire = WireCondition {
            type_: Atom::new(type_),
            status: Atom::new(status),
            last_transition_time: Seconds::new(since),
        };
        PodCondition::from(wire)
    }

    /// `type`.
    pub fn type_(&self) -> &Atom {
        &self.kind.type_
    }

    /// `status`: `True`, `False` or `Unknown`.
    pub fn status(&self) -> &Atom {
        &self.kind.status
    }

    /// `lastTransitionTime`, to the second.
    pub fn last_transition_time(&self) -> Option<Timestamp> {
        self.last_transition_time.get()
    }
}

/// What is kept of a container's status.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(from = "WireContainerStatus")]
pub struct ContainerStatus {
    /// `name`.
    pub name: Atom,
    /// `restartCount`.
    pub restart_count: i32,
    /// `ready`.
    pub ready: bool,
    /// `state.terminated`, when the container has finished (the Job
    /// controller matches exit codes against a pod failure policy and
    /// dates a pod's end from it). Boxed: most cached pods run, and pay a
    /// pointer for it.
    pub terminated: Option<Box<Terminated>>,
    /// Whether `state.waiting` is set (the PVC protection controller: a
    /// waiting or terminated container is not running).
    pub waiting: bool,
}

/// What is kept of a container's `state.terminated`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Terminated {
    /// `exitCode`.
    pub exit_code: i32,
    /// `finishedAt`, when the kubelet reported it.
    pub finished_at: Option<Timestamp>,
}

/// A container status as decoded: `state` holds the terminated state.
#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct WireContainerStatus {
    name: Atom,
    restart_count: i32,
    ready: bool,
    #[serde(deserialize_with = "nullable")]
    state: WireContainerState,
}

/// `state` of a container status; `running` is skipped, `waiting` only
/// noted.
#[derive(Default, Deserialize)]
#[serde(default)]
struct WireContainerState {
    terminated: Option<Box<Terminated>>,
    waiting: Option<serde::de::IgnoredAny>,
}

impl From<WireContainerStatus> for ContainerStatus {
    fn from(wire: WireContainerStatus) -> Self {
        ContainerStatus {
            name: wire.name,
            restart_count: wire.restart_count,
            ready: wire.ready,
            terminated: wire.state.terminated,
            waiting: wire.state.waiting.is_some(),
        }
    }
}

/// A `status.podIPs[]` entry.
#[derive(Default, Deserialize)]
#[serde(default)]
struct PodIp {
    ip: Box<str>,
}

/// Decodes `status.podIPs` into the list of addresses.
fn pod_ips<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Box<[Box<str>]>, D::Error> {
    let list: Vec<PodIp> = nullable(deserializer)?;
    Ok(list.into_iter().map(|p| p.ip).filter(|ip| !ip.is_empty()).collect())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn keeps_condition_times_to_the_second() {
        let status: PodStatus = serde_json::from_value(json!({"conditions": [
            {"type": "Ready", "status": "False", "lastTransitionTime": "2026-12-01T10:00:07Z"},
            {"type": "PodScheduled", "status": "True", "lastTransitionTime": null},
            {"type": "Initialized", "status": "True"},
            {"type": "Old", "status": "True", "lastTransitionTime": "1969-12-31T23:59:59Z"},
        ]}))
        .unwrap();
        let condition = |type_: &str| status.conditions.iter().find(|c| c.type_() == type_).unwrap();
        let time = |type_: &str| condition(type_).last_transition_time();
        assert_eq!(time("Ready"), Some("2026-12-01T10:00:07Z".parse().unwrap()));
        assert_eq!(condition("Ready").status().as_str(), "False");
        assert_eq!(time("PodScheduled"), None);
        assert_eq!(time("Initialized"), None);
        assert_eq!(time("Old"), Some("1969-12-31T23:59:59Z".parse().unwrap()));
        assert_eq!(
            &PodCondition::new("Ready", "False", time("Ready")),
            condition("Ready"),
            "a condition made from its parts equals the decoded one"
        );
    }
}
