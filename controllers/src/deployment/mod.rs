//! The Deployment controller's decisions (upstream
//! `pkg/controller/deployment`: `syncDeployment` and everything it calls).
//!
//! [`sync`] turns a [`Snapshot`] (the Deployment, the cached ReplicaSets and
//! pods of its namespace, `now`) into a [`Plan`], in upstream's order:
//! 1. an empty selector: Warning `SelectingAll`, observedGeneration only;
//! 2. claim the ReplicaSets (adopt matching orphans after a live re-check of
//!    the Deployment, release owned ones that no longer match);
//! 3. being deleted: the status only;
//! 4. the `DeploymentPaused`/`DeploymentResumed` Progressing condition;
//! 5. paused: proportional scaling, history cleanup and status, never a new
//!    ReplicaSet;
//! 6. the deprecated `deprecated.deployment.rollback.to` annotation:
//!    rollback;
//! 7. a scaling event (an active ReplicaSet's desired-replicas annotation
//!    differs from `spec.replicas`): proportional scaling;
//! 8. otherwise the strategy: `RollingUpdate` or `Recreate`.
//!
//! Where upstream writes several objects in one sync and later steps read
//! what earlier ones wrote (create the new ReplicaSet, then scale the old
//! ones down; write the revision annotation, then the status), the planner
//! applies each intended write to its own copy of the Deployment and the
//! ReplicaSets as it plans, so the [`Plan`] holds the whole sequence. Each
//! write is its own step: the executor stops at the first failure and the
//! key is retried with rate limiting.
//!
//! # Layout
//! - `hash`: the pod-template hash and template equality ignoring it;
//! - `fenceposts`: maxSurge/maxUnavailable and the new ReplicaSet's size;
//! - `revision`: revision numbers and the annotations copied to
//!   ReplicaSets;
//! - `conditions`: Deployment condition types, reasons and helpers;
//! - `counts`: replica counts summed over ReplicaSets;
//! - `status`: the status the ReplicaSets imply (`calculateStatus`) and
//!   its write;
//! - `progress`: the Progressing condition and the deadline requeue
//!   (`syncRolloutStatus`, `requeueStuckDeployment`, the paused
//!   conditions);
//! - `planner`: the state of one sync, the claim on the ReplicaSets and the
//!   lookups every path shares;
//! - `new_replica_set`: find or create the new ReplicaSet, sync revisions,
//!   what to write after a failed create;
//! - `scale`: scale one ReplicaSet, the scaling event, proportional
//!   scaling;
//! - `cleanup`: history cleanup;
//! - `rolling`, `recreate`, `rollback`: one path each;
//! - `sync`: the dispatcher.
//!
//! # How the plan is run
//! [`SyncMachine`] hands the plan out step by step to the driver's loop and
//! decides what each refusal means (its module doc): the first failed step
//! ends the sync, retried with rate limiting (at most 15 times); a failed
//! create of the new ReplicaSet is recorded first ([`after_create_failure`]).
//! Updates of an object already written earlier in the same plan are sent
//! with the resourceVersion that write returned.
//!
//! # The new ReplicaSet's name
//! `<deployment>-<hash>`, where the hash is 32-bit FNV-1a over a canonical
//! JSON form of the pod template plus `collisionCount`, spelled in upstream's
//! alphabet ([`compute_hash`](crate::common::template_hash::compute_hash)). It differs from upstream's value (a go-spew
//! dump of the Go struct), which does not matter: the new ReplicaSet is found
//! by template equality ignoring the hash label, so ReplicaSets that upstream
//! created are recognised as the current revision.
//!
//! [`Plan`]: crate::plan::Plan

mod cleanup;
mod conditions;
mod counts;
mod fenceposts;
mod machine;
mod new_replica_set;
mod planner;
mod progress;
mod recreate;
mod revision;
mod rollback;
mod rolling;
mod scale;
mod status;
mod sync;
#[cfg(test)]
mod testing;

use std::sync::Arc;

use jiff::Timestamp;
use kcm_objects::Deployment;
use kcm_objects::Pod;
use kcm_objects::ReplicaSet;

pub use self::conditions::{
    AVAILABLE, FOUND_NEW_RS_REASON, MINIMUM_REPLICAS_AVAILABLE, MINIMUM_REPLICAS_UNAVAILABLE, NEW_RS_AVAILABLE_REASON,
    NEW_RS_REASON, PAUSED_DEPLOY_REASON, PROGRESSING, REPLICA_FAILURE, RESUMED_DEPLOY_REASON, RS_CREATE_ERROR_REASON,
    RS_UPDATED_REASON, TIMED_OUT_REASON,
};
pub use self::fenceposts::{max_replicas, max_surge, max_unavailable, resolve_fenceposts};
pub use self::machine::SyncMachine;
pub use self::new_replica_set::{CreateFailure, after_create_failure, is_same_replica_set};
pub use self::revision::{
    DESIRED_REPLICAS_ANNOTATION, MAX_REPLICAS_ANNOTATION, REVISION_ANNOTATION, REVISION_HISTORY_ANNOTATION,
    ROLLBACK_TO_ANNOTATION,
};
pub use self::sync::sync;
use crate::common::object;
use crate::plan::ObjectRef;

/// Event reason: a ReplicaSet was scaled.
pub const SCALING_REPLICA_SET: &str = "ScalingReplicaSet";
/// Event reason: the Deployment selects every pod.
pub const SELECTING_ALL: &str = "SelectingAll";
/// Event reason: a rollback was performed.
pub const ROLLBACK_DONE: &str = "DeploymentRollback";
/// Event reason: the rollback revision does not exist.
pub const ROLLBACK_REVISION_NOT_FOUND: &str = "DeploymentRollbackRevisionNotFound";
/// Event reason: the rollback revision has the current template.
pub const ROLLBACK_TEMPLATE_UNCHANGED: &str = "DeploymentRollbackTemplateUnchanged";

/// Settings of the Deployment controller.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// Fill `status.terminatingReplicas` (upstream feature gate
    /// `DeploymentReplicaSetTerminatingReplicas`: alpha in 1.33, beta and on
    /// since 1.35; kcm-rs sets it from `--feature-gates`).
    pub terminating_replicas: bool,
}

/// What one sync of a Deployment reads.
#[derive(Clone, Copy, Debug)]
pub struct Snapshot<'a> {
    /// The Deployment, from the cache.
    pub deployment: &'a Deployment,
    /// The cached ReplicaSets of its namespace it may claim: at least those
    /// it controls and the orphans (others are ignored).
    pub replica_sets: &'a [Arc<ReplicaSet>],
    /// Cached pods of its namespace. Only the `Recreate` strategy reads them
    /// (it waits for the old pods to be gone); the driver may pass none for
    /// other Deployments.
    pub pods: &'a [Arc<Pod>],
    /// The time of the sync.
    pub now: Timestamp,
}

/// Why a Deployment cannot be synced. Upstream returns these as errors; the
/// object is malformed, so retrying does not help until it changes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// `spec.selector` cannot be evaluated.
    #[error("invalid label selector: {0}")]
    Selector(#[from] crate::common::selector::Error),
    /// maxSurge or maxUnavailable is neither an integer nor a percentage.
    #[error(transparent)]
    IntOrPercent(#[from] crate::common::int_or_percent::InvalidIntOrPercent),
    /// `spec.strategy.type` is neither `RollingUpdate` nor `Recreate`.
    #[error("unexpected deployment strategy type: {0}")]
    Strategy(String),
}

/// The queue key of a Deployment, `namespace/name`.
pub fn key(d: &Deployment) -> String {
    object::key(&d.metadata)
}

/// The Deployment as events and preconditions name it.
pub fn object_ref(d: &Deployment) -> ObjectRef {
    object::object_ref("apps/v1", "Deployment", &d.metadata)
}

/// `spec.replicas`, defaulting to 1 as the API does.
pub fn replicas(d: &Deployment) -> i32 {
    d.spec.replicas.unwrap_or(1)
}

/// Whether the Deployment uses the `Recreate` strategy.
pub fn is_recreate(d: &Deployment) -> bool {
    strategy_type(d) == "Recreate"
}

/// `spec.strategy.type`, `RollingUpdate` when unset (the API default).
fn strategy_type(d: &Deployment) -> &str {
    d.spec.strategy.as_ref().and_then(|s| s.type_.as_deref()).unwrap_or("RollingUpdate")
}

/// `spec.progressDeadlineSeconds` when it is set and not `MaxInt32`
/// (upstream `HasProgressDeadline`).
fn progress_deadline(d: &Deployment) -> Option<i32> {
    d.spec.progress_deadline_seconds.filter(|&s| s != i32::MAX)
}

fn min_ready_seconds(d: &Deployment) -> i32 {
    d.spec.min_ready_seconds.unwrap_or(0)
}
