//! The StatefulSet controller's decisions (upstream
//! `pkg/controller/statefulset`: `stateful_set.go` `sync`,
//! `stateful_set_control.go`, `stateful_set_utils.go`,
//! `stateful_pod_control.go`, `stateful_set_status_updater.go`).
//!
//! A *plan-returning* core: [`sync`] turns a [`Snapshot`] (the StatefulSet,
//! the cached pods, PersistentVolumeClaims and ControllerRevisions of its
//! namespace, `now`) into a [`Plan`], in upstream's order:
//! 1. adopt the orphan ControllerRevisions its selector matches (after a
//!    live re-check of the set);
//! 2. claim its pods: members (`<set>-<ordinal>`) its selector matches are
//!    adopted, owned pods that no longer match or are not members are
//!    released;
//! 3. the revisions: the update revision is the set's template now (an
//!    existing equal revision is reused, renumbered when it is not the
//!    latest: a rollback), the current one is `status.currentRevision`
//!    (or the update revision when that is unknown);
//! 4. the pods (`control`): delete failed and succeeded pods, create the
//!    missing ordinals (claims first), repair identities, storage and claim
//!    owner references, delete condemned pods (ordinals outside
//!    `[start, start + replicas)`) highest first; `OrderedReady` does one
//!    thing at a time and halts on the first pod not Running, Ready and
//!    available, `Parallel` bursts;
//! 5. the update: `RollingUpdate` deletes pods not at the update revision,
//!    highest ordinal first, down to `partition`, one at a time or within
//!    `maxUnavailable` (gate `MaxUnavailableStatefulSet`); `OnDelete`
//!    leaves them;
//! 6. the status, with the rollover to the update revision once every pod
//!    is updated and ready, written when it changed;
//! 7. the history beyond `revisionHistoryLimit`, oldest first, except the
//!    revisions in use.
//!
//! # Layout
//! - `identity`: ordinals, names, identity and storage checks and repairs,
//!   the claims of an ordinal;
//! - `pod_state`: created, ready, available, healthy, a pod's revision;
//! - `retention`: claim owner references for the retention policy;
//! - `revisions`: the set's ControllerRevisions, and history cleanup;
//! - `control`: the slots and condemned pods of one sync, processed;
//! - `claims`: the claims those pods need created or rewritten;
//! - `rolling`: the RollingUpdate deletions;
//! - `status`: the status, the rollover, when to write it;
//! - `write`: the [`Write`]s and their events' texts;
//! - `call`: the single API calls ([`Call`]) a write comes down to, sent
//!   one after the other, each answer judged and its event recorded;
//! - `expand`: a plan step performed as those calls;
//! - `sync`: the dispatcher, the claims on pods and revisions;
//! - `machine`: [`SyncMachine`], the sync as a core of the sync protocol.
//!
//! # How a sync is driven
//! [`SyncMachine`] runs [`sync`]'s plan as a core of the sync protocol and
//! decides what a refused write means (see `machine`): [`after_failure`]
//! (the status and the history cleanup upstream writes even then) after a
//! failed pod or claim write, and the collision loop of a revision create
//! whose name is taken (see [`history`](crate::common::history)), after
//! which [`after_failure`] records the new collision count and the sync
//! runs again. Each of its own [`Write`]s goes out as single [`Call`]s
//! (a pod's claims, then the pod; a repair's live read, then its update,
//! read and sent again after a conflict), and the events are recorded as
//! the core is told their answers, so its driver performs each call as it
//! is and decides nothing.
//!
//! # Where kcm-rs differs
//! - A revision is also equal to the set's template when their templates
//!   are semantically equal (nulls and empty values aside), not only when
//!   their bytes are: the bytes kube-controller-manager wrote (a Go
//!   encoding) are not the bytes kcm-rs writes, and comparing them alone
//!   would roll every StatefulSet of a cluster switched to kcm-rs. The
//!   comparison is the Deployment controller's (`equal_ignore_hash`, in
//!   `common::template_hash`), so a
//!   template differing only in a `pod-template-hash` label counts as
//!   unchanged.
//! - In `Parallel` mode a pod planned for creation is not also given its
//!   claim owner references a second time in the same sync (upstream sends
//!   that update again from a stale cache and fails with a conflict).
//! - A pod's repair is made on a live read of the pod (`call`), not on the
//!   cached copy upstream updates: the cache holds pods in a slim form, and
//!   a write made from it would drop the fields it does not keep.
//!
//! [`Plan`]: crate::plan::Plan

mod call;
mod claims;
mod control;
mod expand;
mod identity;
mod machine;
mod pod_state;
mod retention;
mod revisions;
mod rolling;
mod status;
mod sync;
#[cfg(test)]
mod testing;
#[cfg(test)]
mod tests;
mod write;

use std::sync::Arc;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::{ControllerRevision, StatefulSet};
use k8s_openapi::api::core::v1::PersistentVolumeClaim;
use kcm_objects::Pod;

pub use self::call::{Call, REPAIR_ATTEMPTS};
pub use self::claims::CONFLICTING_CONTROLLER;
pub use self::identity::{
    Repair, claim_name, claims_for, end_ordinal, identity_matches, is_member_of, names_claim, parent_and_ordinal,
    pod_name, start_ordinal, storage_matches,
};
pub use self::machine::SyncMachine;
pub use self::retention::{PodOwner, claim_owner_matches_set_and_pod, update_claim_owner_ref_for_set_and_pod};
pub use self::revisions::{apply_revision, new_revision};
pub use self::status::{complete_rolling_update, inconsistent_status};
pub use self::sync::{after_failure, sync};
pub use self::write::{StatusUpdate, Write, claim_event, pod_event};
use crate::common::object;
use crate::plan::ObjectRef;

/// A plan of the StatefulSet controller: shared actions and its own [`Write`]s.
pub type Plan = crate::plan::Plan<Write>;

/// One action of a [`Plan`].
pub type Action = crate::plan::Action<Write>;

/// The controller's name (`--controllers`), its alias and its queue's name.
pub const CONTROLLER_NAME: &str = "statefulset-controller";
/// The short name `--controllers` also accepts.
pub const CONTROLLER_ALIAS: &str = "statefulset";
/// The workqueue's name (its metrics' `name` label).
pub const QUEUE_NAME: &str = "statefulset";
/// `--concurrent-statefulset-syncs`' default.
pub const DEFAULT_CONCURRENT_SYNCS: usize = 5;

/// The label naming a pod's member, `<set>-<ordinal>` (upstream
/// `StatefulSetPodNameLabel`).
pub const POD_NAME_LABEL: &str = "statefulset.kubernetes.io/pod-name";
/// The label holding a pod's ordinal (upstream `PodIndexLabel`).
pub const POD_INDEX_LABEL: &str = "apps.kubernetes.io/pod-index";
/// The label naming the revision a pod was made from (upstream
/// `StatefulSetRevisionLabel`).
pub const REVISION_LABEL: &str = "controller-revision-hash";

/// Settings of the StatefulSet controller.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// Honour `rollingUpdate.maxUnavailable` (feature gate
    /// `MaxUnavailableStatefulSet`: alpha in 1.24, beta and on in 1.35,
    /// switched off again in 1.35.4 and 1.36 after a regression with
    /// `Parallel` pods, on again in 1.37 with the fix; kcm-rs sets it from
    /// `--feature-gates`). Off, a rolling update replaces one pod at a time.
    pub max_unavailable: bool,
}

impl Default for Options {
    /// Kubernetes 1.37's defaults.
    fn default() -> Self {
        Self { max_unavailable: true }
    }
}

/// What one sync of a StatefulSet reads.
#[derive(Clone, Copy, Debug)]
pub struct Snapshot<'a> {
    /// The StatefulSet, from the cache.
    pub set: &'a StatefulSet,
    /// The cached pods it may claim: at least those it controls and the
    /// orphans of its namespace (others are ignored).
    pub pods: &'a [Arc<Pod>],
    /// The cached PersistentVolumeClaims of its namespace (at least those
    /// named for its claim templates).
    pub claims: &'a [Arc<PersistentVolumeClaim>],
    /// The cached ControllerRevisions of its namespace (at least those it
    /// controls and the orphans).
    pub revisions: &'a [Arc<ControllerRevision>],
    /// The time of the sync.
    pub now: Timestamp,
}

/// The queue key of a StatefulSet, `namespace/name`.
pub fn key(set: &StatefulSet) -> String {
    object::key(&set.metadata)
}

/// The StatefulSet as events and preconditions name it.
pub fn object_ref(set: &StatefulSet) -> ObjectRef {
    object::object_ref("apps/v1", "StatefulSet", &set.metadata)
}

/// `spec.replicas`, 1 when unset (the API default).
pub fn replicas(set: &StatefulSet) -> i32 {
    set.spec.replicas.unwrap_or(1)
}

fn name(set: &StatefulSet) -> &str {
    set.metadata.name.as_deref().unwrap_or_default()
}

fn namespace(set: &StatefulSet) -> &str {
    set.metadata.namespace.as_deref().unwrap_or_default()
}

fn min_ready_seconds(set: &StatefulSet) -> i32 {
    set.spec.min_ready_seconds.unwrap_or(0)
}

/// `spec.updateStrategy.type`, `RollingUpdate` when unset (the API default).
fn strategy_type(set: &StatefulSet) -> &str {
    set.spec.update_strategy.as_ref().and_then(|s| s.type_.as_deref()).unwrap_or("RollingUpdate")
}

/// `Parallel` pod management (upstream `allowsBurst`); `OrderedReady`
/// otherwise.
fn allows_burst(set: &StatefulSet) -> bool {
    set.spec.pod_management_policy.as_deref() == Some("Parallel")
}
