//! The executor: drives a controller core of the sync protocol
//! (`kcm_controllers::protocol`) against the API server, step by step, and
//! tells it each write's answer, typed.
//!
//! It owns the I/O of every shared [`Action`] (pod, ReplicaSet and
//! ControllerRevision writes; creates, deletes with a uid precondition,
//! ownerReference patches, object and status updates, live reads, the live
//! re-check before adoption, events) and reads the API server's errors
//! into [`Refusal`]s. Within one sync, an object written twice is sent the
//! second time with the resourceVersion the first write returned. What a
//! controller remembers between syncs (the pod expectations) stays with
//! the controller: the executor reports through [`Bookkeeping`]. A core's
//! own writes are performed by an [`OwnWriter`]: the controller's driver
//! (the DaemonSet's, the StatefulSet's and the Job's); the executor names
//! no controller.
//! What a refusal means is the core's to decide, not the executor's.
//!
//! # Layout
//! - `drive`: [`Executor::drive`], the loop, each shared action's typed
//!   answer, and [`OwnWriter`];
//! - `executor`: [`Executor`] itself, its events, and the resourceVersions
//!   one sync's writes returned;
//! - `bookkeeping`: [`Bookkeeping`], what the executor reports;
//! - `claims`: the owner re-check and the ownerReference patches;
//! - `pods`: pod creates and deletes;
//! - `replicasets`: ReplicaSet creates, live reads and deletes;
//! - `revisions`: ControllerRevision writes (DaemonSet and StatefulSet
//!   history) and the live read of one;
//! - `updates`: object and status updates.
//!
//! The API errors are read with `drivers::api_errors`.
//!
//! [`Action`]: kcm_controllers::plan::Action
//! [`Refusal`]: kcm_controllers::protocol::Refusal

mod bookkeeping;
mod claims;
mod drive;
mod executor;
mod pods;
mod replicasets;
mod revisions;
#[cfg(test)]
pub(crate) mod testing;
mod updates;

pub use bookkeeping::{Bookkeeping, NoBookkeeping};
pub use drive::{OwnWriter, next_after};
pub use executor::{Executor, Versions, object_reference};
pub use revisions::{CONFLICT_RETRIES, conflict};
pub use updates::StatusTarget;
