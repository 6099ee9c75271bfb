//! A controller's history as ControllerRevisions (upstream
//! `pkg/controller/history/controller_history.go`), shared by the
//! DaemonSet and StatefulSet controllers.
//!
//! A ControllerRevision is an immutable snapshot (`data`) of the part of
//! its parent that defines a version (for a StatefulSet, a patch holding
//! its pod template), numbered by `revision`. This module names, hashes,
//! builds, compares and orders them ([`revision`](self)); decides which
//! ones a parent owns, adopts or releases ([`claim_controller_revisions`]);
//! and plans the writes to them as [`Write`]s, including the create's
//! name-collision loop ([`after_already_exists`]). Nothing here does I/O:
//! upstream's `Interface` methods become a [`Write`] for the executor and,
//! where upstream loops on an API answer, a pure function the core calls
//! with that answer.
//!
//! # Layout
//! - `revision`: names, hashes, construction, equality, order, listing;
//! - `claim`: adoption and release by controllerRef
//!   (`ControllerRevisionControllerRefManager`);
//! - `write`: the writes ([`Write`]) and the AlreadyExists step of
//!   `CreateControllerRevision`.

mod claim;
mod revision;
mod write;

pub use self::claim::{claim_controller_revisions, plan_claims};
pub use self::revision::{
    CONTROLLER_REVISION_HASH_LABEL, MAX_PREFIX_LEN, controller_revision_name, equal_revision, find_equal_revisions,
    hash_controller_revision, list_controller_revisions, new_controller_revision, number, raw_data,
    sort_controller_revisions,
};
pub use self::write::{AfterAlreadyExists, Write, after_already_exists, delete, get, update_revision};

#[cfg(test)]
pub(crate) mod testing;
