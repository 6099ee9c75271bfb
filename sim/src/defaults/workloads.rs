//! Defaults of the apps/v1 workload specs that take more than a replica
//! count (`pkg/apis/apps/v1/defaults.go`): Deployment, DaemonSet and
//! StatefulSet. Their pod templates get the pod spec defaults in `pod.rs`.

use serde_json::{Map, Value, json};

use super::fields::{children, default_str, default_value, object_entry};
use super::kinds::persistent_volume_claim_spec;

/// `SetDefaults_Deployment`.
pub(super) fn deployment_spec(spec: &mut Map<String, Value>) {
    default_value(spec, "replicas", json!(1));
    if let Some(strategy) = object_entry(spec, "strategy") {
        default_str(strategy, "type", "RollingUpdate");
        if strategy.get("type").and_then(Value::as_str) == Some("RollingUpdate")
            && let Some(rolling) = object_entry(strategy, "rollingUpdate")
        {
            default_value(rolling, "maxUnavailable", json!("25%"));
            default_value(rolling, "maxSurge", json!("25%"));
        }
    }
    default_value(spec, "revisionHistoryLimit", json!(10));
    default_value(spec, "progressDeadlineSeconds", json!(600));
}

/// `SetDefaults_DaemonSet`: a rolling update of one node at a time
/// (`maxUnavailable` 1, `maxSurge` 0) unless told otherwise, and ten
/// old revisions kept.
pub(super) fn daemon_set_spec(spec: &mut Map<String, Value>) {
    if let Some(strategy) = object_entry(spec, "updateStrategy") {
        default_str(strategy, "type", "RollingUpdate");
        if strategy.get("type").and_then(Value::as_str) == Some("RollingUpdate")
            && let Some(rolling) = object_entry(strategy, "rollingUpdate")
        {
            default_value(rolling, "maxUnavailable", json!(1));
            default_value(rolling, "maxSurge", json!(0));
        }
    }
    default_value(spec, "revisionHistoryLimit", json!(10));
}

/// `SetDefaults_StatefulSet`, and what the API server's encoding and the
/// generated defaulters give each `volumeClaimTemplates` entry (see
/// [`claim_template`]).
///
/// The rolling update gets `partition` 0 and `maxUnavailable` 1 (the
/// `MaxUnavailableStatefulSet` gate is on by default since 1.35) when it
/// is given or when the strategy type was left out; an explicit `type:
/// RollingUpdate` without `rollingUpdate` stays without one, as upstream
/// leaves it.
pub(super) fn stateful_set_spec(spec: &mut Map<String, Value>) {
    default_str(spec, "podManagementPolicy", "OrderedReady");
    if let Some(strategy) = object_entry(spec, "updateStrategy") {
        if strategy.get("type").is_none_or(|t| t.is_null() || t == "") {
            strategy.insert("type".to_owned(), json!("RollingUpdate"));
            default_value(strategy, "rollingUpdate", json!({}));
        }
        if strategy.get("type").and_then(Value::as_str) == Some("RollingUpdate")
            && let Some(rolling) = strategy.get_mut("rollingUpdate").and_then(Value::as_object_mut)
        {
            default_value(rolling, "partition", json!(0));
            default_value(rolling, "maxUnavailable", json!(1));
        }
    }
    if let Some(policy) = object_entry(spec, "persistentVolumeClaimRetentionPolicy") {
        default_str(policy, "whenDeleted", "Retain");
        default_str(policy, "whenScaled", "Retain");
    }
    default_value(spec, "replicas", json!(1));
    default_value(spec, "revisionHistoryLimit", json!(10));
    for claim in children(spec, "volumeClaimTemplates") {
        claim_template(claim);
    }
}

/// A claim template as a real cluster stores it: typed as a
/// PersistentVolumeClaim (the v1 conversion names it), `volumeMode`
/// Filesystem and `status.phase` Pending (`SetDefaults_PersistentVolumeClaim`).
fn claim_template(claim: &mut Map<String, Value>) {
    default_str(claim, "apiVersion", "v1");
    default_str(claim, "kind", "PersistentVolumeClaim");
    if let Some(spec) = object_entry(claim, "spec") {
        persistent_volume_claim_spec(spec);
    }
    if let Some(status) = object_entry(claim, "status") {
        default_str(status, "phase", "Pending");
    }
}
