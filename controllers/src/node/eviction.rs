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
use k8s_openapi::api::core::v1::{PodCondition, Taint};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kcm_objects::Toleration;

use crate::common::toleration::tolerates;

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
mod tests {
    use super::*;
    use crate::node::testing::ts;

    // === utils ===

    fn taint(key: &str, value: &str, effect: &str) -> Taint {
        Taint {
            key: key.into(),
            value: (!value.is_empty()).then(|| value.into()),
            effect: effect.into(),
            time_added: None,
        }
    }

    fn no_exec(key: &str) -> Taint {
        taint(key, "", NO_EXECUTE)
    }

    /// `key:NoExecute`, operator Exists, for `seconds` (None: for good).
    fn tolerate(key: &str, seconds: Option<i64>) -> Toleration {
        Toleration {
            key: Some(key.into()),
            operator: Some("Exists".into()),
            effect: Some(NO_EXECUTE.into()),
            toleration_seconds: seconds,
            value: None,
        }
    }

    const UNREACHABLE: &str = "node.kubernetes.io/unreachable";
    const NOT_READY: &str = "node.kubernetes.io/not-ready";

    /// The tolerations the API server's DefaultTolerationSeconds adds.
    fn defaults() -> Vec<Toleration> {
        vec![tolerate(NOT_READY, Some(300)), tolerate(UNREACHABLE, Some(300))]
    }

    fn pod<'a>(node: &'a str, tolerations: &'a [Toleration]) -> PodFacts<'a> {
        PodFacts { uid: "uid-1", node_name: node, tolerations }
    }

    fn scheduled(node: &str, created: i64, fire: i64) -> Scheduled {
        Scheduled { uid: "uid-1".into(), node: node.into(), created_at: ts(created), fire_at: ts(fire) }
    }

    fn delete_at(created: i64, fire: i64) -> Decision {
        Decision::DeleteAt { created_at: ts(created), fire_at: ts(fire) }
    }

    // === tests ===

    #[test]
    fn decisions_follow_upstream() {
        let none: Vec<Toleration> = vec![];
        let defaults = defaults();
        let forever = vec![tolerate("dedicated", None)];
        let several = vec![tolerate(UNREACHABLE, Some(300)), tolerate("dedicated", None), tolerate("gpu", Some(60))];
        let zero = vec![tolerate("dedicated", Some(0))];
        let negative = vec![tolerate("dedicated", Some(-5))];
        // Only the first toleration of a taint counts, as upstream.
        let first_wins = vec![tolerate("dedicated", None), tolerate("dedicated", Some(10))];
        let wildcard = vec![Toleration { operator: Some("Exists".into()), ..Toleration::default() }];
        let huge = vec![tolerate("dedicated", Some(i64::MAX))];

        let unreachable = [no_exec(UNREACHABLE)];
        let dedicated = [no_exec("dedicated")];
        let three = [no_exec(UNREACHABLE), no_exec("dedicated"), no_exec("gpu")];
        let untainted: [Taint; 0] = [];
        let now = 1_000;

        type Case<'a> = (&'a str, Option<&'a [Taint]>, &'a [Toleration], Option<Scheduled>, Decision);
        let cases: Vec<Case<'_>> = vec![
            ("untolerated taint: delete at once", Some(&dedicated), &none, None, Decision::DeleteNow),
            ("default tolerations do not cover other taints", Some(&dedicated), &defaults, None, Decision::DeleteNow),
            (
                "untolerated taint replaces a later deletion",
                Some(&dedicated),
                &none,
                Some(scheduled("n1", 900, 1_200)),
                Decision::DeleteNow,
            ),
            ("tolerationSeconds: delete when it ends", Some(&unreachable), &defaults, None, delete_at(now, now + 300)),
            ("the minimum over the tolerations used", Some(&three), &several, None, delete_at(now, now + 60)),
            ("a toleration without seconds: never", Some(&dedicated), &forever, None, Decision::Nothing),
            (
                "... and a scheduled deletion is cancelled",
                Some(&dedicated),
                &forever,
                Some(scheduled("n1", 900, 950)),
                Decision::Cancel,
            ),
            ("the first tolerating toleration counts", Some(&dedicated), &first_wins, None, Decision::Nothing),
            ("an empty key with Exists tolerates everything", Some(&three), &wildcard, None, Decision::Nothing),
            ("tolerationSeconds 0: delete now", Some(&dedicated), &zero, None, delete_at(now, now)),
            ("negative tolerationSeconds: delete now", Some(&dedicated), &negative, None, delete_at(now, now)),
            ("seconds past the end of time: never", Some(&dedicated), &huge, None, Decision::Nothing),
            (
                "a scheduled deletion keeps its time",
                Some(&unreachable),
                &defaults,
                Some(scheduled("n1", 900, 1_200)),
                Decision::Nothing,
            ),
            (
                "a deletion scheduled at this very instant is redone from its start",
                Some(&three),
                &several,
                Some(scheduled("n1", now, now + 300)),
                delete_at(now, now + 60),
            ),
            ("taints removed: cancel", Some(&untainted), &none, Some(scheduled("n1", 900, 1_200)), Decision::Cancel),
            ("taints removed, nothing scheduled", Some(&untainted), &none, None, Decision::Nothing),
            (
                "node deleted: the scheduled deletion stands",
                None,
                &defaults,
                Some(scheduled("n1", 900, 1_200)),
                Decision::Nothing,
            ),
            ("node deleted, nothing scheduled", None, &none, None, Decision::Nothing),
        ];
        for (what, taints, tolerations, existing, want) in cases {
            let got = decide(taints, Some(&pod("n1", tolerations)), existing.as_ref(), ts(now));
            assert_eq!(got, want, "{what}");
        }
    }

    #[test]
    fn a_gone_pod_cancels_its_deletion() {
        let taints = [no_exec("dedicated")];
        assert_eq!(decide(Some(&taints), None, Some(&scheduled("n1", 900, 1_200)), ts(1_000)), Decision::Cancel);
        assert_eq!(decide(Some(&taints), None, None, ts(1_000)), Decision::Nothing);
    }

    #[test]
    fn a_pod_rescheduled_elsewhere_is_judged_on_its_new_node() {
        let defaults = defaults();
        let now = ts(1_000);
        let old = scheduled("n1", 900, 1_200);
        // Now on an untainted node (or one the controller does not know).
        let moved = pod("n2", &defaults);
        assert_eq!(decide(Some(&[]), Some(&moved), Some(&old), now), Decision::Cancel);
        assert_eq!(decide(None, Some(&moved), Some(&old), now), Decision::Cancel);
        // Recreated under the same name on a tainted node: its own clock.
        let recreated = PodFacts { uid: "uid-2", ..pod("n1", &defaults) };
        let unreachable = [no_exec(UNREACHABLE)];
        assert_eq!(decide(Some(&unreachable), Some(&recreated), Some(&old), now), delete_at(1_000, 1_300));
        // Not scheduled yet: nothing to do until the node is known.
        let unscheduled = pod("", &defaults);
        assert_eq!(decide(Some(&unreachable), Some(&unscheduled), None, now), Decision::Nothing);
    }

    #[test]
    fn a_timeline_from_taint_to_removal() {
        let defaults = defaults();
        let facts = pod("n1", &defaults);
        let taints = [no_exec(UNREACHABLE)];
        // 10:00:00 the taint is seen: deletion at 10:05:00.
        let first = decide(Some(&taints), Some(&facts), None, ts(36_000));
        assert_eq!(first, delete_at(36_000, 36_300));
        let state = scheduled("n1", 36_000, 36_300);
        // 10:01:00 another look (a pod update): the time stands.
        assert_eq!(decide(Some(&taints), Some(&facts), Some(&state), ts(36_060)), Decision::Nothing);
        // 10:02:00 the taint goes: cancelled.
        assert_eq!(decide(Some(&[]), Some(&facts), Some(&state), ts(36_120)), Decision::Cancel);
    }

    #[test]
    fn only_no_execute_taints_count() {
        let taints = [
            taint("a", "", "NoSchedule"),
            no_exec("b"),
            taint("c", "", "PreferNoSchedule"),
            taint("d", "x", NO_EXECUTE),
        ];
        let kept: Vec<String> = no_execute_taints(&taints).into_iter().map(|t| t.key).collect();
        assert_eq!(kept, ["b", "d"]);
    }

    #[test]
    fn min_toleration_time_as_upstream() {
        let t = |s: Option<i64>| tolerate("k", s);
        let (a, b, c, never) = (t(Some(300)), t(Some(60)), t(Some(0)), t(None));
        assert_eq!(min_toleration_time(&[]), Some(Duration::ZERO));
        assert_eq!(min_toleration_time(&[&a, &never, &b]), Some(Duration::from_secs(60)));
        assert_eq!(min_toleration_time(&[&a, &c]), Some(Duration::ZERO));
        assert_eq!(min_toleration_time(&[&never, &never]), None);
    }

    #[test]
    fn the_disruption_condition_is_written_once() {
        let now = ts(2_000);
        let written = disruption_condition(&[], now).expect("absent: written");
        assert_eq!(written.type_, "DisruptionTarget");
        assert_eq!(written.status, "True");
        assert_eq!(written.reason.as_deref(), Some("DeletionByTaintManager"));
        assert_eq!(written.message.as_deref(), Some("Taint manager: deleting due to NoExecute taint"));
        assert_eq!(written.last_transition_time, Some(Time(now)));

        // Already there (an earlier try): nothing to write.
        let ready = PodCondition { type_: "Ready".into(), status: "True".into(), ..PodCondition::default() };
        assert_eq!(disruption_condition(&[ready.clone(), written.clone()], ts(2_500)), None);

        // Written by someone else with another reason: rewritten, same
        // transition time since the status did not flip.
        let other = PodCondition { reason: Some("PreemptionByScheduler".into()), ..written.clone() };
        let rewritten = disruption_condition(&[ready, other], ts(2_500)).expect("changed");
        assert_eq!(rewritten.reason.as_deref(), Some("DeletionByTaintManager"));
        assert_eq!(rewritten.last_transition_time, Some(Time(now)));

        // False before: flips, transition now.
        let off = PodCondition { status: "False".into(), ..written };
        let flipped = disruption_condition(&[off], ts(3_000)).expect("flipped");
        assert_eq!(flipped.last_transition_time, Some(Time(ts(3_000))));
    }

    #[test]
    fn event_messages_are_upstreams() {
        assert_eq!(marking_message("default", "web-1"), "Marking for deletion Pod default/web-1");
        assert_eq!(cancelling_message("default", "web-1"), "Cancelling deletion of Pod default/web-1");
    }
}
