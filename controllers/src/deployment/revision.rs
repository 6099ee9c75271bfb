//! Revisions and the annotations a Deployment keeps on its ReplicaSets
//! (upstream `deployment_util.go`: `Revision`, `MaxRevision`, `LastRevision`,
//! `SetNewReplicaSetAnnotations`, `SetReplicasAnnotations`,
//! `SetDeploymentAnnotationsTo`).

use kcm_objects::{Deployment, Labels, WholeMeta};

/// The revision of a ReplicaSet, and the current revision of a Deployment.
pub const REVISION_ANNOTATION: &str = "deployment.kubernetes.io/revision";
/// Earlier revisions a ReplicaSet had (it was rolled back to), comma
/// separated.
pub const REVISION_HISTORY_ANNOTATION: &str = "deployment.kubernetes.io/revision-history";
/// `spec.replicas` of the Deployment when it last sized this ReplicaSet.
pub const DESIRED_REPLICAS_ANNOTATION: &str = "deployment.kubernetes.io/desired-replicas";
/// `spec.replicas + maxSurge` of the Deployment when it last sized this
/// ReplicaSet.
pub const MAX_REPLICAS_ANNOTATION: &str = "deployment.kubernetes.io/max-replicas";
/// The revision to roll back to, set by the deprecated rollback subresource
/// (`0` means the previous revision).
pub const ROLLBACK_TO_ANNOTATION: &str = "deprecated.deployment.rollback.to";
/// kubectl's record of the last applied object: never copied.
const LAST_APPLIED_ANNOTATION: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// Longest `revision-history` value kept (upstream
/// `maxRevHistoryLengthInChars`).
pub(super) const MAX_REV_HISTORY_LENGTH_IN_CHARS: usize = 2000;

/// Annotations that belong to the Deployment machinery and are not copied
/// between a Deployment and its ReplicaSets (upstream `skipCopyAnnotation`).
pub(super) fn skip_copy_annotation(key: &str) -> bool {
    matches!(
        key,
        LAST_APPLIED_ANNOTATION
            | REVISION_ANNOTATION
            | REVISION_HISTORY_ANNOTATION
            | DESIRED_REPLICAS_ANNOTATION
            | MAX_REPLICAS_ANNOTATION
            | ROLLBACK_TO_ANNOTATION
    )
}

/// The ReplicaSet's revision: 0 without the annotation, an error when it is
/// not an integer (upstream `Revision`).
pub(super) fn revision(rs: &WholeMeta) -> Result<i64, std::num::ParseIntError> {
    rs.annotations.get(REVISION_ANNOTATION).map_or(Ok(0), str::parse)
}

/// The highest revision among `rss`, unparsable ones skipped (upstream
/// `MaxRevision`).
pub(super) fn max_revision<'a>(rss: impl IntoIterator<Item = &'a WholeMeta>) -> i64 {
    rss.into_iter().filter_map(|rs| revision(rs).ok()).max().unwrap_or(0).max(0)
}

/// The second-highest revision among `rss` (upstream `LastRevision`): the
/// one before the current.
pub(super) fn last_revision<'a>(rss: impl IntoIterator<Item = &'a WholeMeta>) -> i64 {
    let (mut max, mut second) = (0, 0);
    for v in rss.into_iter().filter_map(|rs| revision(rs).ok()) {
        if v >= max {
            second = max;
            max = v;
        } else if v > second {
            second = v;
        }
    }
    second
}

/// The revision to roll back to, if the deprecated annotation holds an
/// integer (upstream `getRollbackTo`).
pub(super) fn rollback_to(d: &Deployment) -> Option<i64> {
    d.metadata.annotations.get(ROLLBACK_TO_ANNOTATION)?.parse().ok()
}

/// Copies the Deployment's own annotations onto the ReplicaSet (adding or
/// overwriting, never removing). Returns whether anything changed.
fn copy_deployment_annotations(d: &Deployment, rs: &mut WholeMeta) -> bool {
    let target = &rs.annotations;
    let copied: Vec<(&str, &str)> =
        d.metadata.annotations.iter().filter(|(k, v)| !skip_copy_annotation(k) && target.get(k) != Some(v)).collect();
    if copied.is_empty() {
        return false;
    }
    rs.annotations = rs.annotations.iter().chain(copied).collect();
    true
}

/// Brings the new ReplicaSet's annotations up to date (upstream
/// `SetNewReplicaSetAnnotations`): the Deployment's annotations, the
/// revision raised to `new_revision` (keeping a previous revision in the
/// revision history: a rollback to this ReplicaSet), and for a ReplicaSet
/// about to be created (`exists == false`) the replicas annotations.
/// Returns whether anything changed.
///
/// Example: a ReplicaSet at revision 1 becoming current again when the
/// other ReplicaSets reach revision 2 gets revision 3 and history `"1"`.
pub(super) fn set_new_replica_set_annotations(
    d: &Deployment,
    rs: &mut WholeMeta,
    new_revision: i64,
    exists: bool,
    max_surge: i32,
) -> bool {
    let mut changed = copy_deployment_annotations(d, rs);
    let annotations = &mut rs.annotations;
    let had_revision = annotations.get(REVISION_ANNOTATION).map(str::to_owned);
    let old_revision = match had_revision.as_deref() {
        None | Some("") => 0,
        Some(v) => match v.parse::<i64>() {
            Ok(n) => n,
            // Upstream leaves a ReplicaSet with a garbled revision alone.
            Err(_) => return false,
        },
    };
    if old_revision < new_revision {
        annotations.insert(REVISION_ANNOTATION, &new_revision.to_string());
        changed = true;
        if let Some(old) = had_revision {
            append_revision_history(annotations, &old);
        }
    }
    if !exists {
        let desired = super::replicas(d);
        changed |= set_replicas_annotations(rs, desired, desired.saturating_add(max_surge));
    }
    changed
}

/// Appends `old` to the revision history, dropping the oldest entries to
/// stay within [`MAX_REV_HISTORY_LENGTH_IN_CHARS`] (and not appending if even
/// that is not enough).
fn append_revision_history(annotations: &mut Labels, old: &str) {
    let history = annotations.get(REVISION_HISTORY_ANNOTATION).unwrap_or_default().to_owned();
    if history.is_empty() {
        annotations.insert(REVISION_HISTORY_ANNOTATION, old);
        return;
    }
    let entries: Vec<&str> = history.split(',').collect();
    let mut total = history.len() + old.len() + 1;
    let mut start = 0;
    while total > MAX_REV_HISTORY_LENGTH_IN_CHARS && start < entries.len() {
        total -= entries[start].len() + 1;
        start += 1;
    }
    if total <= MAX_REV_HISTORY_LENGTH_IN_CHARS {
        let mut kept = entries[start..].to_vec();
        kept.push(old);
        annotations.insert(REVISION_HISTORY_ANNOTATION, &kept.join(","));
    }
}

/// Whether the replicas annotations differ from `desired` and `max`
/// (upstream `ReplicasAnnotationsNeedUpdate`).
pub(super) fn replicas_annotations_need_update(rs: &WholeMeta, desired: i32, max: i32) -> bool {
    let a = &rs.annotations;
    a.get(DESIRED_REPLICAS_ANNOTATION) != Some(desired.to_string().as_str())
        || a.get(MAX_REPLICAS_ANNOTATION) != Some(max.to_string().as_str())
}

/// Sets the replicas annotations; returns whether they changed (upstream
/// `SetReplicasAnnotations`).
pub(super) fn set_replicas_annotations(rs: &mut WholeMeta, desired: i32, max: i32) -> bool {
    let annotations = &mut rs.annotations;
    let mut changed = false;
    for (k, v) in [(DESIRED_REPLICAS_ANNOTATION, desired), (MAX_REPLICAS_ANNOTATION, max)] {
        let v = v.to_string();
        if annotations.get(k) != Some(v.as_str()) {
            annotations.insert(k, &v);
            changed = true;
        }
    }
    changed
}

/// An int32 annotation of a ReplicaSet, if present and valid.
fn int_annotation(rs: &WholeMeta, key: &str) -> Option<i32> {
    rs.annotations.get(key)?.parse().ok()
}

/// The desired-replicas annotation (upstream `GetDesiredReplicasAnnotation`).
pub(super) fn desired_replicas_annotation(rs: &WholeMeta) -> Option<i32> {
    int_annotation(rs, DESIRED_REPLICAS_ANNOTATION)
}

/// The max-replicas annotation (upstream `getMaxReplicasAnnotation`).
pub(super) fn max_replicas_annotation(rs: &WholeMeta) -> Option<i32> {
    int_annotation(rs, MAX_REPLICAS_ANNOTATION)
}

/// Sets the Deployment's revision annotation; returns whether it changed
/// (upstream `SetDeploymentRevision`).
pub(super) fn set_deployment_revision(d: &mut Deployment, revision: &str) -> bool {
    if d.metadata.annotations.get(REVISION_ANNOTATION) == Some(revision) {
        return false;
    }
    d.metadata.annotations.insert(REVISION_ANNOTATION, revision);
    true
}

/// Replaces the Deployment's own annotations with the ReplicaSet's,
/// keeping the machinery's (upstream `SetDeploymentAnnotationsTo`, for a
/// rollback).
pub(super) fn set_deployment_annotations_to(d: &mut Deployment, rs: &WholeMeta) {
    let machinery = d.metadata.annotations.iter().filter(|(k, _)| skip_copy_annotation(k));
    let own = rs.annotations.iter().filter(|(k, _)| !skip_copy_annotation(k));
    d.metadata.annotations = machinery.chain(own).collect();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::deployment::testing::{DeploymentBuilder, rs};

    fn with_revision(name: &str, rev: &str) -> WholeMeta {
        let mut r = rs(name, 0).metadata;
        r.annotations.insert(REVISION_ANNOTATION, rev);
        r
    }

    /// Scenario 24: revisions {1, 4, x}: the max is 4, so a new one is 5.
    #[test]
    fn max_revision_skips_garbage() {
        let rss = [with_revision("a", "1"), with_revision("b", "4"), with_revision("c", "x"), rs("d", 0).metadata];
        assert_eq!(max_revision(&rss), 4);
        assert_eq!(last_revision(&rss), 1);
        assert_eq!(last_revision(&[with_revision("a", "3")]), 0);
        assert_eq!(last_revision(&[with_revision("a", "3"), with_revision("b", "3")]), 3);
    }

    /// Scenario 21: a ReplicaSet rolled back to keeps its old revision in
    /// the history.
    #[test]
    fn revision_bump_records_history() {
        let d = DeploymentBuilder::new(3).build();
        let mut r = with_revision("a", "1");
        assert!(set_new_replica_set_annotations(&d, &mut r, 3, true, 1));
        let a = &r.annotations;
        assert_eq!(a.get(REVISION_ANNOTATION).unwrap(), "3");
        assert_eq!(a.get(REVISION_HISTORY_ANNOTATION).unwrap(), "1");
        assert!(!a.contains_key(DESIRED_REPLICAS_ANNOTATION), "existing: replicas annotations untouched");
        assert!(set_new_replica_set_annotations(&d, &mut r, 5, true, 1));
        assert_eq!(r.annotations.get(REVISION_HISTORY_ANNOTATION).unwrap(), "1,3");
        assert!(!set_new_replica_set_annotations(&d, &mut r, 5, true, 1), "nothing to change");
        assert!(!set_new_replica_set_annotations(&d, &mut r, 4, true, 1), "never lowered");
    }

    #[test]
    fn history_is_bounded() {
        let mut a = Labels::default();
        let long = (0..700).map(|i| i.to_string()).collect::<Vec<_>>().join(",");
        a.insert(REVISION_HISTORY_ANNOTATION, &long);
        append_revision_history(&mut a, "9999");
        let h = a.get(REVISION_HISTORY_ANNOTATION).unwrap();
        assert!(h.len() <= MAX_REV_HISTORY_LENGTH_IN_CHARS, "{}", h.len());
        assert!(h.ends_with(",9999"));
        assert!(!h.starts_with("0,"), "oldest dropped");
    }

    /// Scenario 25: the Deployment's annotations are copied, last-applied
    /// is not, and nothing is removed.
    #[test]
    fn annotations_copy_adds_and_never_removes() {
        let d = DeploymentBuilder::new(2)
            .annotation("foo", "bar")
            .annotation(LAST_APPLIED_ANNOTATION, "{}")
            .annotation(REVISION_ANNOTATION, "7")
            .build();
        let mut r = rs("a", 0).metadata;
        assert!(set_new_replica_set_annotations(&d, &mut r, 1, false, 1));
        let a = &r.annotations;
        assert_eq!(a.get("foo").unwrap(), "bar");
        assert!(!a.contains_key(LAST_APPLIED_ANNOTATION));
        assert_eq!(a.get(REVISION_ANNOTATION).unwrap(), "1");
        assert_eq!(a.get(DESIRED_REPLICAS_ANNOTATION).unwrap(), "2");
        assert_eq!(a.get(MAX_REPLICAS_ANNOTATION).unwrap(), "3");
        let without_foo = DeploymentBuilder::new(2).build();
        assert!(!set_new_replica_set_annotations(&without_foo, &mut r, 1, true, 1));
        assert_eq!(r.annotations.get("foo").unwrap(), "bar");
    }

    #[test]
    fn rollback_annotations_replace_the_deployments_own() {
        let mut d = DeploymentBuilder::new(1).annotation("old", "1").annotation(REVISION_ANNOTATION, "3").build();
        let mut r = rs("a", 0).metadata;
        r.annotations = [("new", "2"), (REVISION_ANNOTATION, "1")].into_iter().collect();
        set_deployment_annotations_to(&mut d, &r);
        let a = d.metadata.annotations.clone();
        assert_eq!(a.get("new"), Some("2"));
        assert!(!a.contains_key("old"));
        assert_eq!(a.get(REVISION_ANNOTATION).unwrap(), "3", "machinery annotations stay");
    }
}
