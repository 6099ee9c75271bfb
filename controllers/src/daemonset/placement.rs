//! Which nodes run a daemon pod (upstream `NodeShouldRunDaemonPod`,
//! `predicates`, and `util.AddOrUpdateDaemonPodTolerations`).
//!
//! A daemon pod is judged as the pod the DaemonSet would create there: its
//! template, bound to the node, with the tolerations every daemon pod gets.
//! It *should run* when the template's `nodeName` (if any) is the node, the
//! node fits its node selector and required node affinity, and every
//! `NoSchedule` and `NoExecute` taint is tolerated. An existing pod *should
//! continue running* under the same conditions except that only the
//! `NoExecute` taints count (a new `NoSchedule` taint does not evict).
//!
//! The tolerations added, so that node problems never evict daemon pods
//! and never keep them off a node: `not-ready` and `unreachable`
//! (`NoExecute`, forever), `disk-pressure`, `memory-pressure`,
//! `pid-pressure` and `unschedulable` (`NoSchedule`), and, for host-network
//! pods, `network-unavailable` (`NoSchedule`), all with `Exists`.

use k8s_openapi::api::apps::v1::DaemonSet;
use k8s_openapi::api::core::v1::{PodSpec, Taint, Toleration};
use kcm_objects::{Atom, Node};

use super::node_affinity::required_node_affinity_matches;
use crate::common::toleration::tolerates;

const NO_EXECUTE: &str = "NoExecute";
const NO_SCHEDULE: &str = "NoSchedule";

/// The tolerations every daemon pod carries, as `(key, effect)` with
/// `Exists` and no `tolerationSeconds` (`network-unavailable` only with
/// `hostNetwork`).
const DAEMON_TOLERATIONS: [(&str, &str); 6] = [
    ("node.kubernetes.io/not-ready", NO_EXECUTE),
    ("node.kubernetes.io/unreachable", NO_EXECUTE),
    ("node.kubernetes.io/disk-pressure", NO_SCHEDULE),
    ("node.kubernetes.io/memory-pressure", NO_SCHEDULE),
    ("node.kubernetes.io/pid-pressure", NO_SCHEDULE),
    ("node.kubernetes.io/unschedulable", NO_SCHEDULE),
];
const NETWORK_UNAVAILABLE: (&str, &str) = ("node.kubernetes.io/network-unavailable", NO_SCHEDULE);

/// Adds the daemon tolerations to `spec` (upstream
/// `AddOrUpdateDaemonPodTolerations`): one with the same key, operator,
/// value and effect is replaced by the daemon one (so a
/// `tolerationSeconds` on it goes), any other is appended.
pub fn add_or_update_daemon_pod_tolerations(spec: &mut PodSpec) {
    let network = spec.host_network == Some(true);
    for (key, effect) in DAEMON_TOLERATIONS.into_iter().chain(network.then_some(NETWORK_UNAVAILABLE)) {
        let toleration = Toleration {
            key: Some(key.into()),
            operator: Some("Exists".into()),
            effect: Some(effect.into()),
            ..Default::default()
        };
        add_or_update_toleration(spec, toleration);
    }
}

/// Upstream `AddOrUpdateTolerationInPodSpec`: tolerations are unique by
/// key, operator, value and effect.
fn add_or_update_toleration(spec: &mut PodSpec, toleration: Toleration) {
    let tolerations = spec.tolerations.get_or_insert_default();
    let same = |t: &Toleration| {
        let s = |v: &Option<String>| v.clone().unwrap_or_default();
        s(&t.key) == s(&toleration.key)
            && s(&t.effect) == s(&toleration.effect)
            && s(&t.operator) == s(&toleration.operator)
            && s(&t.value) == s(&toleration.value)
    };
    match tolerations.iter_mut().find(|t| same(t)) {
        Some(existing) => *existing = toleration,
        None => tolerations.push(toleration),
    }
}

/// `(should_run, should_continue_running)` of `ds` on `node` (upstream
/// `NodeShouldRunDaemonPod`).
pub fn node_should_run_daemon_pod(node: &Node, ds: &DaemonSet) -> (bool, bool) {
    let mut spec = ds.spec.template.spec.clone().unwrap_or_default();
    let node_name = &*node.metadata.name;
    if spec.node_name.as_deref().is_some_and(|n| !n.is_empty() && n != node_name) {
        return (false, false);
    }
    if !required_node_affinity_matches(&spec, node) {
        return (false, false);
    }
    add_or_update_daemon_pod_tolerations(&mut spec);
    let tolerations: Vec<kcm_objects::Toleration> = spec.tolerations.iter().flatten().map(slim).collect();
    let untolerated = |effects: &[&str]| {
        node.spec
            .taints
            .iter()
            .filter(|t| effects.contains(&t.effect.as_str()))
            .any(|taint: &Taint| !tolerations.iter().any(|t| tolerates(t, taint)))
    };
    if untolerated(&[NO_EXECUTE, NO_SCHEDULE]) {
        return (false, !untolerated(&[NO_EXECUTE]));
    }
    (true, true)
}

/// A toleration as the taint matcher reads it.
fn slim(t: &Toleration) -> kcm_objects::Toleration {
    let atom = |v: &Option<String>| v.as_deref().map(Atom::from);
    kcm_objects::Toleration {
        key: atom(&t.key),
        operator: atom(&t.operator),
        value: atom(&t.value),
        effect: atom(&t.effect),
        toleration_seconds: t.toleration_seconds,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(spec: &PodSpec) -> Vec<(String, String, Option<i64>)> {
        spec.tolerations
            .iter()
            .flatten()
            .map(|t| (t.key.clone().unwrap_or_default(), t.effect.clone().unwrap_or_default(), t.toleration_seconds))
            .collect()
    }

    /// The six daemon tolerations, network-unavailable only with host
    /// networking; one the template already has (same key, operator, value
    /// and effect) is replaced in place, its `tolerationSeconds` gone; any
    /// other is kept; applying twice changes nothing.
    #[test]
    fn add_or_update_daemon_pod_tolerations_table() {
        let mut spec = PodSpec {
            tolerations: Some(vec![
                Toleration {
                    key: Some("node.kubernetes.io/not-ready".into()),
                    operator: Some("Exists".into()),
                    effect: Some("NoExecute".into()),
                    toleration_seconds: Some(300),
                    ..Default::default()
                },
                Toleration { key: Some("dedicated".into()), value: Some("user1".into()), ..Default::default() },
            ]),
            ..Default::default()
        };
        add_or_update_daemon_pod_tolerations(&mut spec);
        let got = keys(&spec);
        assert_eq!(got.len(), 7);
        assert_eq!(got[0], ("node.kubernetes.io/not-ready".into(), "NoExecute".into(), None));
        assert_eq!(got[1].0, "dedicated");
        assert!(!got.iter().any(|(k, _, _)| k == "node.kubernetes.io/network-unavailable"));
        add_or_update_daemon_pod_tolerations(&mut spec);
        assert_eq!(keys(&spec), got);

        let mut host = PodSpec { host_network: Some(true), ..Default::default() };
        add_or_update_daemon_pod_tolerations(&mut host);
        assert_eq!(
            keys(&host).last().unwrap(),
            &("node.kubernetes.io/network-unavailable".into(), "NoSchedule".into(), None)
        );
    }
}
