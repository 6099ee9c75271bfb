//! The Namespace controller's decisions (upstream
//! `pkg/controller/namespace/deletion/namespaced_resources_deleter.go` and
//! `status_condition_utils.go`), without I/O.
//!
//! The driver (`kcm-rs` `drivers::namespace`) discovers the namespaced
//! resource types, deletes their content and lists what is left; this
//! module decides from those observations:
//! - which discovered types can be deleted ([`deletable`]) and how
//!   ([`supports_delete_collection`]), parsing group versions
//!   ([`parse_group_version`]);
//! - how long pods still need to terminate ([`estimate_graceful_termination`]);
//! - the order: pods first, the rest once no pod remains ([`waves`],
//!   [`first_wave_settled`]);
//! - what one type's leftovers mean ([`remaining_outcome`]);
//! - the five deletion conditions, written only when they change
//!   ([`conditions`], [`merge_conditions`]);
//! - what to do next: fail, requeue after half the estimate, or finalize
//!   ([`next_step`], [`finalized`]).
//!
//! # Layout
//! - `resources`: resource types, which are content, how to delete them;
//! - `order`: ordered deletion, pods first;
//! - `remaining`: the pod estimate, one type's leftovers, the pass report;
//! - `conditions`: the deletion conditions and their merge;
//! - `next_step`: the step after a pass, and finalizing.

mod conditions;
mod next_step;
mod order;
mod remaining;
mod resources;

use std::time::Duration;

pub use self::conditions::{Condition, condition_type, conditions, merge_conditions, reason};
pub use self::next_step::{NextStep, finalized, next_step};
pub use self::order::{Waves, first_wave_settled, waves};
pub use self::remaining::{DeletionReport, PodGrace, Remaining, estimate_graceful_termination, remaining_outcome};
pub use self::resources::{Gvr, deletable, parse_group_version, supports_delete_collection};

/// The finalizer token this controller owns (`v1.FinalizerKubernetes`).
pub const FINALIZER_KUBERNETES: &str = "kubernetes";

/// How long after a namespace is seen being deleted it is first synced
/// (upstream `namespaceDeletionGracePeriod`: lets HA API servers catch up).
pub const DELETION_GRACE_PERIOD: Duration = Duration::from_secs(5);

/// The estimate, in seconds, for content held only by finalizers
/// (upstream `finalizerEstimateSeconds`).
pub const FINALIZER_ESTIMATE_SECONDS: u64 = 15;

#[cfg(test)]
mod testing;
