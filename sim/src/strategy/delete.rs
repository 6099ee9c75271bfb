//! Delete: what a delete makes of an object it does not remove at once
//! (`rest.BeforeDelete` and the pod strategy's `CheckGracefulDelete`), and
//! when a write leaves nothing holding a deletion up.
//!
//! - Pods bound to a node and still running are deleted gracefully:
//!   `deletionTimestamp` and `deletionGracePeriodSeconds` are set and the
//!   kubelet finishes the deletion; other objects' grace period is 0.
//! - `propagationPolicy=Orphan` adds the `orphan` finalizer and
//!   `Foreground` adds `foregroundDeletion`; `Background` removes both.
//!   With no policy, a batch/v1 Job orphans its pods (its strategy's
//!   `DefaultGarbageCollectionPolicy`, kept for backward compatibility),
//!   unless a finalizer already says otherwise; every other type deletes
//!   its dependents in the background.
//! - An object with finalizers is only marked; it goes when its last
//!   finalizer is removed. A namespace moves to phase Terminating and stays
//!   until its `spec.finalizers` are emptied through `/finalize`.

use serde_json::{Value, json};

use crate::object;
use crate::resources::{Builtin, ResourceType};

/// The warning the Job REST storage gives a delete that names no
/// propagation policy (upstream `deleteOptionWarnings`).
pub const JOB_DELETE_WARNING: &str = "child pods are preserved by default when jobs are deleted; \
     set propagationPolicy=Background to remove them or set propagationPolicy=Orphan to suppress this warning";

/// Whether a delete of this type that names no propagation policy orphans
/// the dependents (`DefaultGarbageCollectionPolicy` `OrphanDependents`:
/// batch/v1 Jobs).
pub fn orphans_by_default(rt: &ResourceType) -> bool {
    rt.builtin == Some(Builtin::Job)
}

/// Whether an update left an object with nothing holding up its deletion.
pub fn should_delete_after_update(rt: &ResourceType, object: &Value) -> bool {
    let grace_done =
        object.pointer("/metadata/deletionGracePeriodSeconds").and_then(Value::as_i64).is_none_or(|g| g == 0);
    let namespace_finalized = rt.builtin != Some(Builtin::Namespace)
        || object.pointer("/spec/finalizers").and_then(Value::as_array).is_none_or(Vec::is_empty);
    object::is_terminating(object) && object::finalizers(object).is_empty() && grace_done && namespace_finalized
}

/// The marked state of an object this delete does not remove at once, or
/// `None` when it goes now.
pub fn mark_for_deletion(
    rt: &ResourceType,
    object: &Value,
    propagation: Option<&str>,
    requested_grace: Option<i64>,
) -> Option<Value> {
    let mut next = object.clone();
    let mut finalizers = object::finalizers(object);
    // A finalizer already set decides over the type's default
    // (`shouldOrphanDependents`).
    let decided = finalizers.iter().any(|f| f == "orphan" || f == "foregroundDeletion");
    let propagation = propagation.or((orphans_by_default(rt) && !decided).then_some("Orphan"));
    match propagation {
        Some("Orphan") => {
            finalizers.retain(|f| f != "foregroundDeletion");
            if !finalizers.iter().any(|f| f == "orphan") {
                finalizers.push("orphan".into());
            }
        }
        Some("Foreground") => {
            finalizers.retain(|f| f != "orphan");
            if !finalizers.iter().any(|f| f == "foregroundDeletion") {
                finalizers.push("foregroundDeletion".into());
            }
        }
        Some("Background") => finalizers.retain(|f| f != "orphan" && f != "foregroundDeletion"),
        _ => {}
    }
    let grace = grace_period(rt, object, requested_grace);
    let already = object::is_terminating(object);
    let md = object::metadata_mut(&mut next);
    if finalizers.is_empty() {
        md.remove("finalizers");
    } else {
        md.insert("finalizers".into(), json!(finalizers));
    }
    let current_grace = object.pointer("/metadata/deletionGracePeriodSeconds").and_then(Value::as_i64);
    // A second delete may shorten a grace period, never lengthen it.
    let grace = current_grace.map_or(grace, |g| g.min(grace));
    if !already || current_grace != Some(grace) {
        let now = jiff::Timestamp::now();
        let when = jiff::Timestamp::from_second(now.as_second() + grace).unwrap_or(now);
        md.insert("deletionTimestamp".into(), json!(when.to_string()));
        md.insert("deletionGracePeriodSeconds".into(), json!(grace));
    }
    if rt.builtin == Some(Builtin::Namespace) {
        next["status"]["phase"] = json!("Terminating");
    }
    if should_delete_after_update(rt, &next) {
        return None;
    }
    Some(next)
}

/// Seconds a delete waits for the kubelet (the pod strategy's
/// `CheckGracefulDelete`): only pods on a node that are still running get a
/// grace period, the one asked for or the pod's own (30 s by default).
fn grace_period(rt: &ResourceType, object: &Value, requested: Option<i64>) -> i64 {
    if rt.builtin != Some(Builtin::Pod) {
        return 0;
    }
    let bound = object.pointer("/spec/nodeName").and_then(Value::as_str).is_some_and(|n| !n.is_empty());
    let finished = matches!(object.pointer("/status/phase").and_then(Value::as_str), Some("Succeeded" | "Failed"));
    if !bound || finished {
        return 0;
    }
    requested
        .or_else(|| object.pointer("/spec/terminationGracePeriodSeconds").and_then(Value::as_i64))
        .unwrap_or(30)
        .max(0)
}
