//! A DaemonSet's history (upstream `update.go` `constructHistory`,
//! `snapshot`, `dedupCurHistories`, `cleanupHistory`, `Match`,
//! `getPatch`), on top of the shared [`history`](crate::common::history) module.
//!
//! A revision's data is a patch restoring the pod template:
//! `{"spec":{"template":{...,"$patch":"replace"}}}`. It is named
//! `<ds>-<hash>` with the template's hash (the Deployment's,
//! [`compute_hash`], with `status.collisionCount`) and labelled
//! `controller-revision-hash=<hash>`; pods made from it carry the same
//! label. The current revision is the one whose data is the template's
//! patch. kcm-rs compares the two semantically (nil equals empty, see
//! [`semantic`](crate::common::semantic)) where upstream compares bytes: a
//! revision written by kube-controller-manager spells Go's zero fields
//! (`"creationTimestamp":null`, `"resources":{}`) that k8s-openapi leaves
//! out, and a byte comparison would take every existing revision for an old
//! one and roll every daemon pod of the cluster on the switch.

use std::collections::BTreeSet;

use k8s_openapi::api::apps::v1::{ControllerRevision, DaemonSet};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::apimachinery::pkg::runtime::RawExtension;
use kcm_objects::Pod;
use serde_json::{Value, json};

use super::{Action, Plan};
use super::{CONTROLLER_REVISION_HASH_LABEL, Write as DaemonSetWrite};
use crate::common::controller_ref::new_controller_ref;
use crate::common::history::{self, Write, number, sort_controller_revisions};
use crate::common::semantic::semantically_equal;
use crate::common::template_hash::compute_hash;

/// Revisions kept besides the current one when `revisionHistoryLimit` is
/// unset (the API default).
const DEFAULT_REVISION_HISTORY_LIMIT: i32 = 10;

/// The data of `ds`'s current revision (upstream `getPatch`).
pub fn get_patch(ds: &DaemonSet) -> Value {
    let mut template = serde_json::to_value(&ds.spec.template).unwrap_or_else(|_| json!({}));
    if let Some(map) = template.as_object_mut() {
        map.insert("$patch".into(), json!("replace"));
    }
    json!({"spec": {"template": template}})
}

/// Whether `revision` holds `ds`'s current template (upstream `Match`,
/// semantically: see the module doc).
pub fn matches_revision(ds: &DaemonSet, revision: &ControllerRevision) -> bool {
    semantically_equal(&get_patch(ds), &revision.data.0)
}

/// The revision of the current template to create (upstream `snapshot`).
pub(super) fn snapshot(ds: &DaemonSet, revision: i64) -> ControllerRevision {
    let status = ds.status.as_ref();
    let hash = compute_hash(&ds.spec.template, status.and_then(|s| s.collision_count));
    let mut labels = ds.spec.template.metadata.as_ref().and_then(|m| m.labels.clone()).unwrap_or_default();
    labels.insert(CONTROLLER_REVISION_HASH_LABEL.into(), hash.clone());
    ControllerRevision {
        metadata: ObjectMeta {
            name: Some(format!("{}-{hash}", ds.metadata.name.as_deref().unwrap_or_default())),
            namespace: ds.metadata.namespace.clone(),
            labels: Some(labels),
            annotations: ds.metadata.annotations.clone(),
            owner_references: Some(vec![new_controller_ref(&ds.metadata, "apps/v1", "DaemonSet")]),
            ..Default::default()
        },
        data: RawExtension(get_patch(ds)),
        revision: Some(revision),
    }
}

/// The current revision's hash and the old revisions.
pub(super) struct History<'a> {
    /// `controller-revision-hash` of the current revision.
    pub hash: String,
    /// The claimed revisions that are not the current one.
    pub old: Vec<&'a ControllerRevision>,
}

/// Plans `ds`'s history over its `claimed` revisions (upstream
/// `constructHistory`): the hash label on revisions missing it (their
/// name), the current revision created or deduplicated (relabelling the
/// `pods` it claimed), and its number raised above every old one.
pub(super) fn construct_history<'a>(
    ds: &DaemonSet,
    claimed: &[&'a ControllerRevision],
    pods: &[&Pod],
    plan: &mut Plan,
) -> History<'a> {
    let hash_of = |cr: &ControllerRevision| cr.metadata.labels.as_ref()?.get(CONTROLLER_REVISION_HASH_LABEL).cloned();
    let mut current = Vec::new();
    let mut old = Vec::new();
    for &cr in claimed {
        if hash_of(cr).is_none() {
            let mut labelled = cr.clone();
            let name = labelled.metadata.name.clone().unwrap_or_default();
            labelled.metadata.labels.get_or_insert_default().insert(CONTROLLER_REVISION_HASH_LABEL.into(), name);
            plan.push(Action::ControllerRevision(Write::Update { revision: Box::new(labelled.clone()) }));
            if matches_revision(ds, cr) {
                current.push(labelled);
            } else {
                old.push(cr);
            }
        } else if matches_revision(ds, cr) {
            current.push(cr.clone());
        } else {
            old.push(cr);
        }
    }
    let next = old.iter().map(|cr| number(cr)).max().unwrap_or(0) + 1;
    let hash = if current.is_empty() {
        let created = snapshot(ds, next);
        let hash = hash_of(&created).unwrap_or_default();
        plan.push(Action::ControllerRevision(Write::Create { revision: Box::new(created) }));
        hash
    } else {
        let keep = dedup_current(&current, pods, plan);
        if let Some(update) = history::update_revision(keep, next.max(number(keep))) {
            plan.push(Action::ControllerRevision(update));
        }
        hash_of(keep).unwrap_or_default()
    };
    History { hash, old }
}

/// The newest of the current revisions (the last of the highest number);
/// the pods get its hash, the others are deleted (upstream
/// `dedupCurHistories`).
fn dedup_current<'c>(current: &'c [ControllerRevision], pods: &[&Pod], plan: &mut Plan) -> &'c ControllerRevision {
    let mut keep = &current[0];
    for cr in current {
        if number(cr) >= number(keep) {
            keep = cr;
        }
    }
    if current.len() == 1 {
        return keep;
    }
    let keep_hash = keep.metadata.labels.as_ref().and_then(|l| l.get(CONTROLLER_REVISION_HASH_LABEL));
    let keep_hash = keep_hash.cloned().unwrap_or_default();
    for pod in pods.iter().filter(|p| p.metadata.labels.get(CONTROLLER_REVISION_HASH_LABEL) != Some(&keep_hash)) {
        plan.push(Action::Own(DaemonSetWrite::RelabelPod {
            namespace: pod.metadata.namespace.to_string(),
            name: pod.metadata.name.to_string(),
            hash: keep_hash.clone(),
        }));
    }
    for cr in current.iter().filter(|cr| cr.metadata.name != keep.metadata.name) {
        plan.push(Action::ControllerRevision(history::delete(cr)));
    }
    keep
}

/// Deletes the oldest of `old` beyond `revisionHistoryLimit`, sparing those
/// a pod still carries the hash of (upstream `cleanupHistory`; `pods` are
/// the claimed pods with a node, terminal ones included).
pub(super) fn cleanup_history(ds: &DaemonSet, old: &[&ControllerRevision], pods: &[&Pod], plan: &mut Plan) {
    let limit = ds.spec.revision_history_limit.unwrap_or(DEFAULT_REVISION_HISTORY_LIMIT);
    let mut to_kill = i64::try_from(old.len()).unwrap_or(i64::MAX) - i64::from(limit);
    if to_kill <= 0 {
        return;
    }
    let live: BTreeSet<&str> = pods
        .iter()
        .filter_map(|p| p.metadata.labels.get(CONTROLLER_REVISION_HASH_LABEL))
        .filter(|h| !h.is_empty())
        .collect();
    let mut old = old.to_vec();
    sort_controller_revisions(&mut old);
    for cr in old {
        if to_kill <= 0 {
            break;
        }
        let hash = cr.metadata.labels.as_ref().and_then(|l| l.get(CONTROLLER_REVISION_HASH_LABEL));
        if hash.is_some_and(|h| live.contains(h.as_str())) {
            continue;
        }
        plan.push(Action::ControllerRevision(history::delete(cr)));
        to_kill -= 1;
    }
}
