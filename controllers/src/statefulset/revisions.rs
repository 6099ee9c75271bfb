//! The set's revisions as ControllerRevisions (upstream `newRevision`,
//! `ApplyRevision`, `nextRevision`, `getStatefulSetRevisions`,
//! `truncateHistory`), built on the shared [`history`](crate::common::history)
//! module.
//!
//! A revision's data is the patch `{"spec":{"template":{...,"$patch":
//! "replace"}}}` holding the set's pod template; applying it to the set gives
//! the set as that revision made its pods. The update revision is the
//! template now: the latest revision if it holds it, else an older equal
//! one renumbered to the next number (a rollback), else a new revision. The
//! current revision is the one `status.currentRevision` names.

use std::collections::HashSet;

use k8s_openapi::api::apps::v1::{ControllerRevision, StatefulSet};
use k8s_openapi::api::core::v1::PodTemplateSpec;
use k8s_openapi::apimachinery::pkg::runtime::RawExtension;
use kcm_objects::Pod;
use serde_json::json;

use super::pod_state::pod_revision;
use crate::common::history::{self, Write as HistoryWrite, number};
use crate::common::template_hash::equal_ignore_hash;

/// Why a revision cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The revision's data holds no pod template.
    #[error("controller revision {0} holds no pod template")]
    NoTemplate(String),
}

/// The revision numbered `revision` of the set's template now, its name
/// hashed with `collision_count` (upstream `newRevision`): the template's
/// labels, the set's annotations, the set as controller.
pub fn new_revision(set: &StatefulSet, revision: i64, collision_count: i32) -> ControllerRevision {
    let mut template = serde_json::to_value(&set.spec.template).unwrap_or_else(|_| json!({}));
    if let Some(t) = template.as_object_mut() {
        t.insert("$patch".into(), json!("replace"));
    }
    let patch = json!({ "spec": { "template": template } });
    let labels = set.spec.template.metadata.as_ref().and_then(|m| m.labels.as_ref());
    let mut cr = history::new_controller_revision(
        &set.metadata,
        "apps/v1",
        "StatefulSet",
        labels,
        RawExtension(patch),
        revision,
        Some(collision_count),
    );
    let annotations = cr.metadata.annotations.get_or_insert_default();
    annotations.extend(set.metadata.annotations.clone().unwrap_or_default());
    cr
}

/// The pod template a revision holds.
fn template_of(revision: &ControllerRevision) -> Option<PodTemplateSpec> {
    let mut template = revision.data.0.get("spec")?.get("template")?.clone();
    template.as_object_mut()?.remove("$patch");
    serde_json::from_value(template).ok()
}

/// The set with the template `revision` holds (upstream `ApplyRevision`).
pub fn apply_revision(set: &StatefulSet, revision: &ControllerRevision) -> Result<StatefulSet, Error> {
    let template =
        template_of(revision).ok_or_else(|| Error::NoTemplate(revision.metadata.name.clone().unwrap_or_default()))?;
    let mut applied = set.clone();
    applied.spec.template = template;
    Ok(applied)
}

/// One more than the latest revision's number, 1 for none (upstream
/// `nextRevision`); `revisions` sorted oldest first.
fn next_revision(revisions: &[&ControllerRevision]) -> i64 {
    revisions.last().map_or(1, |r| number(r) + 1)
}

/// Whether a stored revision holds the set's template now: equal data, or
/// semantically equal templates (see "Where kcm-rs differs" in the module
/// above).
fn holds(stored: &ControllerRevision, planned: &ControllerRevision) -> bool {
    history::equal_revision(Some(stored), Some(planned))
        || matches!((template_of(stored), template_of(planned)), (Some(a), Some(b)) if equal_ignore_hash(&a, &b))
}

/// The revisions of one sync.
#[derive(Debug)]
pub(super) struct Revisions {
    pub current: ControllerRevision,
    pub update: ControllerRevision,
    pub collision_count: i32,
    /// The history write making `update` exist with its number, if any.
    pub write: Option<HistoryWrite>,
}

/// Upstream `getStatefulSetRevisions`, `revisions` sorted oldest first.
pub(super) fn stateful_set_revisions(set: &StatefulSet, revisions: &[&ControllerRevision]) -> Revisions {
    let collision_count = set.status.as_ref().and_then(|s| s.collision_count).unwrap_or(0);
    let planned = new_revision(set, next_revision(revisions), collision_count);
    let equal: Vec<&ControllerRevision> = revisions.iter().copied().filter(|r| holds(r, &planned)).collect();
    let (update, write) = match (equal.last(), revisions.last()) {
        (Some(e), Some(latest)) if e.metadata.name == latest.metadata.name => ((*e).clone(), None),
        (Some(e), _) => {
            let write = history::update_revision(e, number(&planned));
            let mut update = (*e).clone();
            update.revision = planned.revision;
            (update, write)
        }
        (None, _) => {
            let write = HistoryWrite::Create { revision: Box::new(planned.clone()) };
            (planned, Some(write))
        }
    };
    let current_name = set.status.as_ref().and_then(|s| s.current_revision.as_deref());
    let current = revisions
        .iter()
        .find(|r| current_name.is_some() && r.metadata.name.as_deref() == current_name)
        .map_or_else(|| update.clone(), |r| (*r).clone());
    Revisions { current, update, collision_count, write }
}

/// The revisions beyond `revisionHistoryLimit` (10 when unset) to delete,
/// oldest first, never the current or update revision or one a pod was
/// made from (upstream `truncateHistory`); `revisions` sorted oldest first.
pub(super) fn truncate_history(
    set: &StatefulSet,
    pods: &[&Pod],
    revisions: &[&ControllerRevision],
    live: [&str; 2],
) -> Vec<HistoryWrite> {
    let mut in_use: HashSet<&str> = live.into_iter().collect();
    in_use.extend(pods.iter().map(|p| pod_revision(p)));
    let history: Vec<&ControllerRevision> = revisions
        .iter()
        .copied()
        .filter(|r| !in_use.contains(r.metadata.name.as_deref().unwrap_or_default()))
        .collect();
    let limit = usize::try_from(set.spec.revision_history_limit.unwrap_or(10)).unwrap_or(0);
    let excess = history.len().saturating_sub(limit);
    history.into_iter().take(excess).map(history::delete).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::statefulset::testing::{SetBuilder, member, stored};

    /// Upstream `TestNewRevision`-style checks and `TestApplyRevision`: the
    /// revision holds the template, applying it gives the template back.
    #[test]
    fn test_apply_revision() {
        let set = SetBuilder::new(3).image("v1").build();
        let revision = new_revision(&set, 1, 0);
        assert_eq!(revision.revision, Some(1));
        assert!(revision.metadata.name.as_deref().unwrap().starts_with("foo-"));
        let updated = SetBuilder::new(3).image("v2").build();
        let restored = apply_revision(&updated, &revision).unwrap();
        assert_eq!(restored.spec.template, set.spec.template);
        assert_eq!(revision.metadata.labels.as_ref().unwrap().get("app").map(String::as_str), Some("foo"));
    }

    /// Upstream `TestStatefulSetControlRollback`'s revision logic: an
    /// unchanged set reuses the latest revision; a set back on an older
    /// template renumbers that revision; a new template creates one.
    #[test]
    fn test_get_stateful_set_revisions() {
        let v1 = SetBuilder::new(3).image("v1").build();
        let v2 = SetBuilder::new(3).image("v2").build();
        let r1 = stored(new_revision(&v1, 1, 0));
        let r2 = stored(new_revision(&v2, 2, 0));

        let got = stateful_set_revisions(&v2, &[&r1, &r2]);
        assert_eq!((got.update.metadata.name.clone(), got.write), (r2.metadata.name.clone(), None));

        let got = stateful_set_revisions(&v1, &[&r1, &r2]);
        assert_eq!(got.update.metadata.name, r1.metadata.name);
        assert_eq!(got.update.revision, Some(3));
        assert!(matches!(got.write, Some(HistoryWrite::Update { .. })), "{:?}", got.write);

        let v3 = SetBuilder::new(3).image("v3").build();
        let got = stateful_set_revisions(&v3, &[&r1, &r2]);
        assert_eq!(got.update.revision, Some(3));
        assert!(matches!(got.write, Some(HistoryWrite::Create { .. })));
        assert_eq!(got.current.metadata.name, got.update.metadata.name, "no current revision yet: the update one");

        let mut v3 = v3;
        v3.status.get_or_insert_default().current_revision = r2.metadata.name.clone();
        assert_eq!(stateful_set_revisions(&v3, &[&r1, &r2]).current.metadata.name, r2.metadata.name);
    }

    /// Upstream `TestStatefulSetControl_truncateHistory`: non-live revisions
    /// beyond the limit go, oldest first.
    #[test]
    fn test_truncate_history() {
        let sets: Vec<StatefulSet> =
            (1..=5).map(|i| SetBuilder::new(3).image(&format!("v{i}")).history(2).build()).collect();
        let revisions: Vec<ControllerRevision> =
            sets.iter().zip(1..).map(|(s, i)| stored(new_revision(s, i, 0))).collect();
        let refs: Vec<&ControllerRevision> = revisions.iter().collect();
        let name = |i: usize| revisions[i].metadata.name.clone().unwrap();
        let pod = member(&sets[4], 0).revision(&name(1)).build();
        let deletes = truncate_history(&sets[4], &[&pod], &refs, [&name(4), &name(4)]);
        let deleted: Vec<String> = deletes
            .into_iter()
            .map(|w| match w {
                HistoryWrite::Delete { name, .. } => name,
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(deleted, [name(0)], "r2 is live (a pod runs it), r3 and r4 are kept by the limit");
    }
}
