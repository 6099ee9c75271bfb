//! The registry strategies: what the API server does to an object between
//! decoding a write and storing it, as upstream's
//! `pkg/registry/*/strategy.go` (with the generic `rest.BeforeCreate`,
//! `BeforeUpdate` and `BeforeDelete`) do, for every type kube-sim serves:
//!
//! - create (`create.rs`): the namespace from the path, the name (or one
//!   from `generateName`), the server-owned metadata (`uid`,
//!   `creationTimestamp`; `resourceVersion`, the deletion fields, `selfLink`
//!   and `managedFields` cleared), `generation` 1, then defaulting, the
//!   kind's create-time resets and validation;
//! - update (`update.rs`): optimistic concurrency on `resourceVersion`, the
//!   separation of the main resource from its `status`, `scale` and
//!   `finalize` subresources, the server-owned metadata kept from the stored
//!   object, no new finalizers during deletion, and `generation` bumped when
//!   the spec changes;
//! - delete (`delete.rs`): graceful deletion (`deletionTimestamp` and the
//!   grace period), the finalizers of the propagation policies, and when a
//!   write leaves nothing holding a deletion up;
//! - per-kind rules (`kinds.rs`): which kinds have `generation` maintained,
//!   what their `/status` writes may change, and their create-time resets;
//!   a DaemonSet's template generation (`daemon_set.rs`), a Job's
//!   generated selector (`job.rs`), the
//!   EndpointSlice's deprecated topology (`endpoint_slice.rs`) and the
//!   fields a Service changed to ExternalName loses (`service.rs`).
//!
//! Defaulting (`crate::defaults`) and validation (`crate::validation`) are
//! called from here; admission (`crate::admission`) and the store stay with
//! the verbs in `crate::api`, which call these functions.

mod create;
mod daemon_set;
mod delete;
mod endpoint_slice;
mod job;
mod kinds;
mod service;
mod update;

pub use create::{before_create, prepare_for_create};
pub use daemon_set::TEMPLATE_GENERATION;
pub use delete::{JOB_DELETE_WARNING, mark_for_deletion, orphans_by_default, should_delete_after_update};
pub use job::{CONTROLLER_UID_LABEL, JOB_NAME_LABEL, LEGACY_CONTROLLER_UID_LABEL, LEGACY_JOB_NAME_LABEL};
pub use update::next_state;
