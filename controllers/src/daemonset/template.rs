//! The pods a DaemonSet creates and how it tells them apart (upstream
//! `util/daemonset_util.go`): the template with the daemon tolerations and
//! the `controller-revision-hash` and `pod-template-generation` labels, the
//! node affinity binding a pod to its node, whether a pod is of the current
//! revision, and the rolling update's maxSurge and maxUnavailable.

use k8s_openapi::api::apps::v1::DaemonSet;
use k8s_openapi::api::core::v1::{
    Affinity, NodeAffinity, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, PodTemplateSpec,
};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kcm_objects::Pod;

use super::placement::add_or_update_daemon_pod_tolerations;
use super::{CONTROLLER_REVISION_HASH_LABEL, DEPRECATED_TEMPLATE_GENERATION, TEMPLATE_GENERATION_LABEL};
use crate::common::int_or_percent::scaled_value;

/// The deprecated template generation annotation, when present and an
/// integer (upstream `GetTemplateGeneration`; an unparsable value counts as
/// none, as the controller treats its error).
pub fn template_generation(ds: &DaemonSet) -> Option<i64> {
    ds.metadata.annotations.as_ref()?.get(DEPRECATED_TEMPLATE_GENERATION)?.parse().ok()
}

/// The template daemon pods are made from (upstream `CreatePodTemplate`):
/// the daemon tolerations, `pod-template-generation` when there is a
/// generation, `controller-revision-hash` when there is a hash.
pub fn create_pod_template(template: &PodTemplateSpec, generation: Option<i64>, hash: &str) -> PodTemplateSpec {
    let mut template = template.clone();
    add_or_update_daemon_pod_tolerations(template.spec.get_or_insert_default());
    let labels = template.metadata.get_or_insert_default().labels.get_or_insert_default();
    if let Some(generation) = generation {
        labels.insert(TEMPLATE_GENERATION_LABEL.into(), generation.to_string());
    }
    if !hash.is_empty() {
        labels.insert(CONTROLLER_REVISION_HASH_LABEL.into(), hash.into());
    }
    template
}

/// `affinity` with its required node affinity replaced by the single term
/// `metadata.name In [node_name]` (upstream
/// `ReplaceDaemonSetPodNodeNameNodeAffinity`), so the scheduler binds the
/// pod to that node. The preferred terms and the pod (anti-)affinities are
/// kept.
pub fn replace_daemon_set_pod_node_name_node_affinity(affinity: Option<Affinity>, node_name: &str) -> Affinity {
    let term = NodeSelectorTerm {
        match_fields: Some(vec![NodeSelectorRequirement {
            key: "metadata.name".into(),
            operator: "In".into(),
            values: Some(vec![node_name.into()]),
        }]),
        match_expressions: None,
    };
    let mut affinity = affinity.unwrap_or_default();
    let node_affinity = affinity.node_affinity.get_or_insert_with(NodeAffinity::default);
    let required = node_affinity.required_during_scheduling_ignored_during_execution.get_or_insert_default();
    *required = NodeSelector { node_selector_terms: vec![term] };
    affinity
}

/// Whether `pod` is of the current revision (upstream `IsPodUpdated`): its
/// `controller-revision-hash` is `hash`, or its `pod-template-generation`
/// is the DaemonSet's template generation (pods made before revisions).
pub fn is_pod_updated(pod: &Pod, hash: &str, generation: Option<i64>) -> bool {
    let labels = &pod.metadata.labels;
    let hash_matches = !hash.is_empty() && labels.get(CONTROLLER_REVISION_HASH_LABEL) == Some(hash);
    let generation_matches =
        generation.is_some_and(|g| labels.get(TEMPLATE_GENERATION_LABEL) == Some(g.to_string().as_str()));
    hash_matches || generation_matches
}

/// The rolling update's `maxSurge` out of `number_to_schedule`, rounded up;
/// 0 when the strategy is not `RollingUpdate` or sets no surge (upstream
/// `SurgeCount`; the `DaemonSetUpdateSurge` gate is GA).
pub fn surge_count(ds: &DaemonSet, number_to_schedule: i32) -> Result<i32, String> {
    match rolling(ds).and_then(|r| r.max_surge.as_ref()) {
        Some(surge) => scaled(surge, number_to_schedule),
        None => Ok(0),
    }
}

/// The rolling update's `maxUnavailable` out of `number_to_schedule`,
/// rounded up; 0 when the strategy is not `RollingUpdate` (upstream
/// `UnavailableCount`: an unset value, which the API server defaults to 1,
/// is an error).
pub fn unavailable_count(ds: &DaemonSet, number_to_schedule: i32) -> Result<i32, String> {
    if !is_rolling_update(ds) {
        return Ok(0);
    }
    let Some(rolling) = rolling(ds) else { return Ok(0) };
    match &rolling.max_unavailable {
        Some(unavailable) => scaled(unavailable, number_to_schedule),
        None => Err("nil value for IntOrString".into()),
    }
}

/// Whether more than one pod may run on a node during an update (upstream
/// `AllowsSurge`).
pub fn allows_surge(ds: &DaemonSet) -> bool {
    surge_count(ds, 1).is_ok_and(|s| s > 0)
}

/// Whether the update strategy is `RollingUpdate` (the API default).
pub(super) fn is_rolling_update(ds: &DaemonSet) -> bool {
    ds.spec.update_strategy.as_ref().and_then(|s| s.type_.as_deref()).unwrap_or("RollingUpdate") == "RollingUpdate"
}

fn rolling(ds: &DaemonSet) -> Option<&k8s_openapi::api::apps::v1::RollingUpdateDaemonSet> {
    if !is_rolling_update(ds) {
        return None;
    }
    ds.spec.update_strategy.as_ref()?.rolling_update.as_ref()
}

fn scaled(value: &IntOrString, total: i32) -> Result<i32, String> {
    scaled_value(value, total, true).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::{NodeAffinity, PreferredSchedulingTerm};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    use super::*;
    use crate::testing::{labels, slim};

    fn requirement(key: &str, operator: &str, values: &[&str]) -> NodeSelectorRequirement {
        NodeSelectorRequirement {
            key: key.into(),
            operator: operator.into(),
            values: Some(values.iter().map(|v| v.to_string()).collect()),
        }
    }

    fn required(terms: Vec<NodeSelectorTerm>) -> Affinity {
        Affinity {
            node_affinity: Some(NodeAffinity {
                required_during_scheduling_ignored_during_execution: Some(NodeSelector { node_selector_terms: terms }),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    fn fields(requirements: Vec<NodeSelectorRequirement>) -> NodeSelectorTerm {
        NodeSelectorTerm { match_fields: Some(requirements), match_expressions: None }
    }

    fn expressions(requirements: Vec<NodeSelectorRequirement>) -> NodeSelectorTerm {
        NodeSelectorTerm { match_expressions: Some(requirements), match_fields: None }
    }

    fn pod(pod_labels: Option<&[(&str, &str)]>) -> Pod {
        slim(&k8s_openapi::api::core::v1::Pod {
            metadata: ObjectMeta { name: Some("pod1".into()), labels: pod_labels.map(labels), ..Default::default() },
            ..Default::default()
        })
    }

    #[test]
    fn is_pod_updated_table() {
        let both = [(TEMPLATE_GENERATION_LABEL, "12345"), (CONTROLLER_REVISION_HASH_LABEL, "55555")];
        let no_hash = [(TEMPLATE_GENERATION_LABEL, "12345")];
        type Labels<'a> = Option<&'a [(&'a str, &'a str)]>;
        let cases: [(&str, i64, Labels<'_>, &str, bool); 10] = [
            ("templateGeneration and hash both match", 12345, Some(&both), "55555", true),
            ("templateGeneration matches, hash doesn't", 12345, Some(&both), "55555123", true),
            ("templateGeneration matches, no hash label, has hash", 12345, Some(&no_hash), "55555", true),
            ("templateGeneration matches, no hash label, no hash", 12345, Some(&no_hash), "", true),
            ("templateGeneration matches, has hash label, no hash", 12345, Some(&both), "", true),
            ("templateGeneration doesn't match, hash does", 12346, Some(&both), "55555", true),
            ("templateGeneration and hash don't match", 12346, Some(&both), "55555123", false),
            ("empty labels, no hash", 12345, Some(&[]), "", false),
            ("empty labels", 12345, Some(&[]), "55555", false),
            ("no labels", 12345, None, "55555", false),
        ];
        for (name, generation, pod_labels, hash, want) in cases {
            assert_eq!(is_pod_updated(&pod(pod_labels), hash, Some(generation)), want, "{name}");
        }
    }

    #[test]
    fn create_pod_template_labels() {
        for (generation, hash, unique) in [(1, "", false), (2, "3242341807", true)] {
            let template = create_pod_template(&PodTemplateSpec::default(), Some(generation), hash);
            let labels = template.metadata.unwrap().labels.unwrap();
            assert_eq!(labels.get(TEMPLATE_GENERATION_LABEL), Some(&generation.to_string()));
            assert_eq!(labels.contains_key(CONTROLLER_REVISION_HASH_LABEL), unique);
            assert_eq!(template.spec.unwrap().tolerations.unwrap().len(), 6, "the daemon tolerations");
        }
    }

    #[test]
    fn replace_daemon_set_pod_node_name_node_affinity_table() {
        let host_1 = || required(vec![fields(vec![requirement("metadata.name", "In", &["host_1"])])]);
        let preferred = vec![PreferredSchedulingTerm {
            preference: expressions(vec![requirement("kubernetes.io/hostname", "In", &["host_1"])]),
            weight: 1,
        }];
        let with_preferred = |mut a: Affinity| {
            a.node_affinity.as_mut().unwrap().preferred_during_scheduling_ignored_during_execution =
                Some(preferred.clone());
            a
        };
        let preferred_only = Affinity {
            node_affinity: Some(NodeAffinity {
                preferred_during_scheduling_ignored_during_execution: Some(preferred.clone()),
                ..Default::default()
            }),
            ..Default::default()
        };
        let cases = [
            (None, host_1()),
            (
                Some(required(vec![expressions(vec![requirement("kubernetes.io/hostname", "In", &["host_1"])])])),
                host_1(),
            ),
            (Some(preferred_only), with_preferred(host_1())),
            (Some(required(vec![fields(vec![requirement("metadata.name", "In", &["host_1", "host_2"])])])), host_1()),
            (
                Some(required(vec![
                    expressions(vec![requirement("hostname", "In", &["host_1"])]),
                    fields(vec![requirement("metadata.name", "In", &["host_2"])]),
                ])),
                host_1(),
            ),
            (Some(required(vec![fields(vec![requirement("metadata.name", "NotIn", &["host_2"])])])), host_1()),
            (Some(required(vec![fields(vec![requirement("metadata.foo", "In", &["bar"])])])), host_1()),
        ];
        for (i, (affinity, want)) in cases.into_iter().enumerate() {
            assert_eq!(replace_daemon_set_pod_node_name_node_affinity(affinity, "host_1"), want, "case {i}");
        }
    }

    #[test]
    fn get_template_generation() {
        let mut ds = DaemonSet::default();
        assert_eq!(template_generation(&ds), None);
        ds.metadata.annotations = Some(labels(&[(DEPRECATED_TEMPLATE_GENERATION, "7")]));
        assert_eq!(template_generation(&ds), Some(7));
        ds.metadata.annotations = Some(labels(&[(DEPRECATED_TEMPLATE_GENERATION, "seven")]));
        assert_eq!(template_generation(&ds), None, "unparsable counts as none");
    }

    #[test]
    fn surge_and_unavailable_counts() {
        let mut ds = DaemonSet::default();
        assert_eq!((surge_count(&ds, 10), unavailable_count(&ds, 10)), (Ok(0), Ok(0)), "no rollingUpdate");
        let rolling =
            |surge: Option<&str>, unavailable: Option<&str>| k8s_openapi::api::apps::v1::DaemonSetUpdateStrategy {
                type_: Some("RollingUpdate".into()),
                rolling_update: Some(k8s_openapi::api::apps::v1::RollingUpdateDaemonSet {
                    max_surge: surge.map(|s| IntOrString::String(s.into())),
                    max_unavailable: unavailable.map(|s| IntOrString::String(s.into())),
                }),
            };
        ds.spec.update_strategy = Some(rolling(None, None));
        assert_eq!(unavailable_count(&ds, 10), Err("nil value for IntOrString".into()));
        ds.spec.update_strategy = Some(rolling(Some("25%"), Some("25%")));
        assert_eq!((surge_count(&ds, 10), unavailable_count(&ds, 10)), (Ok(3), Ok(3)), "both round up");
        assert!(allows_surge(&ds));
        ds.spec.update_strategy.as_mut().unwrap().type_ = Some("OnDelete".into());
        assert_eq!((surge_count(&ds, 10), unavailable_count(&ds, 10)), (Ok(0), Ok(0)));
        assert!(!allows_surge(&ds));
    }
}
