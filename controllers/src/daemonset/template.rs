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
use crate::deployment::scaled_value;

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
