//! Taint-based eviction: which pods on a node with `NoExecute` taints are
//! deleted, and when (upstream `pkg/controller/tainteviction`, the
//! `taint-eviction-controller`, formerly the NoExecuteTaintManager).
//!
//! The rules, as upstream applies them to one pod on one node:
//! - a `NoExecute` taint the pod does not tolerate: delete the pod now;
//! - every taint tolerated: the tolerations used are the *first* one that
//!   tolerates each taint; the pod may stay for the smallest
//!   `tolerationSeconds` among them (0 or less: not at all); if none of them
//!   sets `tolerationSeconds`, the pod stays for good;
//! - the time runs from when the controller first saw the taint affect the
//!   pod (not from the taint's `timeAdded`), and a deletion already
//!   scheduled keeps its time when the pod is looked at again;
//! - the node loses its `NoExecute` taints, or the pod goes away: the
//!   scheduled deletion is cancelled (with upstream's cancel event);
//! - the node is deleted: the controller forgets its taints and leaves
//!   scheduled deletions as they are (they still happen).
//!
//! [`decide`] applies these rules; time is an input. The driver
//! (`kcm_rs::drivers::tainteviction`) keeps one [`Scheduled`] deletion per
//! pod, runs the timers, and performs the deletion: it writes the
//! [`disruption_condition`] onto the pod's status, then deletes the pod.
//!
//! One difference from upstream: a scheduled deletion remembers the pod's
//! uid and node. A pod deleted and recreated under the same name (on any
//! node) is a new pod: the old deletion is cancelled, and the new pod is
//! judged on its own node. Upstream keys deletions by name only, so the old
//! timer could delete the new pod.

use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{PodCondition, Taint, Toleration};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

/// The taint effect this controller acts on.
pub const NO_EXECUTE: &str = "NoExecute";

/// Reason of the controller's Events (both marking and cancelling).
pub const EVENT_REASON: &str = "TaintManagerEviction";

/// Type of the pod condition written before a deletion.
pub const DISRUPTION_TARGET: &str = "DisruptionTarget";

/// Reason of the [`DISRUPTION_TARGET`] condition.
pub const DISRUPTION_REASON: &str = "DeletionByTaintManager";

/// Message of the [`DISRUPTION_TARGET`] condition.
pub const DISRUPTION_MESSAGE: &str = "Taint manager: deleting due to NoExecute taint";

/// The facts about one pod that the decision reads.
#[derive(Clone, Copy, Debug)]
pub struct PodFacts<'a> {
    /// `metadata.uid`.
    pub uid: &'a str,
    /// `spec.nodeName` (`""` while unscheduled).
    pub node_name: &'a str,
    /// `spec.tolerations`.
    pub tolerations: &'a [Toleration],
}

/// A deletion the controller has scheduled and not yet carried out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scheduled {
    /// Uid of the pod it was scheduled for.
    pub uid: String,
    /// Node the pod was on.
    pub node: String,
    /// When the controller first saw a taint affect the pod: the start of
    /// its toleration.
    pub created_at: Timestamp,
    /// When the pod is to be deleted.
    pub fire_at: Timestamp,
}

/// What to do about one pod's deletion.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Nothing changes: no deletion is due and none is scheduled, or the
    /// scheduled one stands.
    Nothing,
    /// Cancel the scheduled deletion (upstream's cancel event).
    Cancel,
    /// Delete the pod now, cancelling (with the event) a deletion scheduled
    /// for later.
    DeleteNow,
    /// Delete the pod at `fire_at` (now or later), replacing (cancelling,
    /// with the event) any scheduled deletion.
    DeleteAt {
        /// Start of the toleration.
        created_at: Timestamp,
        /// When to delete.
        fire_at: Timestamp,
    },
}

/// Upstream's "Marking for deletion" Event message, recorded when a
/// deletion starts.
pub fn marking_message(namespace: &str, name: &str) -> String {
    format!("Marking for deletion Pod {namespace}/{name}")
}

/// Upstream's "Cancelling deletion" Event message.
pub fn cancelling_message(namespace: &str, name: &str) -> String {
    format!("Cancelling deletion of Pod {namespace}/{name}")
}

/// The taints with effect `NoExecute`, in order (upstream
/// `getNoExecuteTaints`).
pub fn no_execute_taints(taints: &[Taint]) -> Vec<Taint> {
    taints.iter().filter(|t| t.effect == NO_EXECUTE).cloned().collect()
}

/// Whether `toleration` tolerates `taint` (`v1.Toleration.ToleratesTaint`):
/// an empty effect matches every effect, an empty key every key (only
/// meaningful with `Exists`); `Exists` ignores the value, `Equal` (the
/// default) compares it. Unknown operators tolerate nothing.
pub fn tolerates(toleration: &Toleration, taint: &Taint) -> bool {
    let effect = toleration.effect.as_deref().unwrap_or("");
    if !effect.is_empty() && effect != taint.effect {
        return false;
    }
    let key = toleration.key.as_deref().unwrap_or("");
    if !key.is_empty() && key != taint.key {
        return false;
    }
    match toleration.operator.as_deref().unwrap_or("") {
        "Exists" => true,
        "Equal" | "" => toleration.value.as_deref().unwrap_or("") == taint.value.as_deref().unwrap_or(""),
        _ => false,
    }
}

/// For each taint, the first toleration that tolerates it; `None` if some
/// taint is tolerated by none (upstream `GetMatchingTolerations`).
pub fn matching_tolerations<'a>(taints: &[Taint], tolerations: &'a [Toleration]) -> Option<Vec<&'a Toleration>> {
    taints.iter().map(|taint| tolerations.iter().find(|t| tolerates(t, taint))).collect()
}

/// How long the pod may stay given the tolerations used (upstream
/// `getMinTolerationTime`): zero if there are none or one has
/// `tolerationSeconds` ≤ 0, else the smallest set `tolerationSeconds`;
/// `None` (forever) when none sets it.
///
/// Example: `[unreachable 300 s, dedicated (no seconds), gpu 60 s]` → 60 s.
pub fn min_toleration_time(used: &[&Toleration]) -> Option<Duration> {
    if used.is_empty() {
        return Some(Duration::ZERO);
    }
    let mut min: Option<u64> = None;
    for seconds in used.iter().filter_map(|t| t.toleration_seconds) {
        let Ok(seconds) = u64::try_from(seconds) else { return Some(Duration::ZERO) };
        if seconds == 0 {
            return Some(Duration::ZERO);
        }
        min = Some(min.map_or(seconds, |m| m.min(seconds)));
    }
    min.map(Duration::from_secs)
}

/// What to do about one pod (upstream `processPodOnNode`, with the pod and
/// node handling of `handlePodUpdate` and `handleNodeUpdate`).
///
/// - `node_taints`: `Some` with the `NoExecute` taints (perhaps none) of the
///   node the pod is on, or `None` when that node is not known (deleted);
/// - `pod`: `None` when the pod is gone;
/// - `scheduled`: the deletion already scheduled under the pod's name.
///
/// Example: taint seen at 10:00:00 on a pod tolerating it for 300 s →
/// `DeleteAt { created_at: 10:00:00, fire_at: 10:05:00 }`; seen again at
/// 10:01:00 → `Nothing` (10:05:00 stands); taint removed at 10:02:00 →
/// `Cancel`.
pub fn decide(
    node_taints: Option<&[Taint]>,
    pod: Option<&PodFacts<'_>>,
    scheduled: Option<&Scheduled>,
    now: Timestamp,
) -> Decision {
    let Some(pod) = pod else {
        return cancel_if(scheduled);
    };
    // A deletion scheduled for another pod of the same name (deleted and
    // recreated) or on another node is not this pod's.
    let scheduled = match scheduled {
        Some(s) if s.uid != pod.uid || s.node != pod.node_name => {
            return match decide_on_node(node_taints, pod, None, now) {
                Decision::Nothing => Decision::Cancel,
                replacing => replacing,
            };
        }
        other => other,
    };
    decide_on_node(node_taints, pod, scheduled, now)
}

/// [`decide`] for a pod whose `scheduled` deletion (if any) is its own.
fn decide_on_node(
    node_taints: Option<&[Taint]>,
    pod: &PodFacts<'_>,
    scheduled: Option<&Scheduled>,
    now: Timestamp,
) -> Decision {
    if pod.node_name.is_empty() {
        return Decision::Nothing;
    }
    // Node deleted: its taints are forgotten; what was scheduled stands.
    let Some(taints) = node_taints else { return Decision::Nothing };
    if taints.is_empty() {
        return cancel_if(scheduled);
    }
    let Some(used) = matching_tolerations(taints, pod.tolerations) else {
        return Decision::DeleteNow;
    };
    // A sum past the end of time is a toleration for good.
    let Some(fire_at) = min_toleration_time(&used).and_then(|min| now.checked_add(min).ok()) else {
        return cancel_if(scheduled);
    };
    match scheduled {
        // Upstream keeps a scheduled deletion that started earlier than
        // now: its fire time is never pushed back by a later look.
        Some(s) if s.created_at < now => Decision::Nothing,
        Some(s) => Decision::DeleteAt { created_at: s.created_at, fire_at },
        None => Decision::DeleteAt { created_at: now, fire_at },
    }
}

fn cancel_if(scheduled: Option<&Scheduled>) -> Decision {
    if scheduled.is_some() { Decision::Cancel } else { Decision::Nothing }
}

/// The `DisruptionTarget` condition to write before deleting a pod whose
/// status has `conditions`, or `None` if the status already says so
/// (upstream `UpdatePodCondition`: the transition time moves only when the
/// status flips).
pub fn disruption_condition(conditions: &[PodCondition], now: Timestamp) -> Option<PodCondition> {
    let mut wanted = PodCondition {
        type_: DISRUPTION_TARGET.into(),
        status: "True".into(),
        reason: Some(DISRUPTION_REASON.into()),
        message: Some(DISRUPTION_MESSAGE.into()),
        last_transition_time: Some(Time(now)),
        ..PodCondition::default()
    };
    let Some(old) = conditions.iter().find(|c| c.type_ == DISRUPTION_TARGET) else {
        return Some(wanted);
    };
    if old.status == wanted.status {
        wanted.last_transition_time = old.last_transition_time.clone();
    }
    let same = old.status == wanted.status
        && old.reason == wanted.reason
        && old.message == wanted.message
        && old.last_probe_time.is_none()
        && old.last_transition_time == wanted.last_transition_time;
    (!same).then_some(wanted)
}

#[cfg(test)]
mod tests;
