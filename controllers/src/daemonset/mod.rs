//! The DaemonSet controller's decisions (upstream `pkg/controller/daemon`:
//! `daemon_controller.go`, `update.go`, `util/daemonset_util.go`), in the
//! plan-returning shape: [`sync`] turns a [`Snapshot`] (the DaemonSet, the
//! cached pods of its namespace, every node, the ControllerRevisions of its
//! namespace, the expectations, the failed-pod backoff, `now`) into a
//! [`Outcome`]: a [`Plan`], the backoff steps and the sync's own error,
//! which [`SyncMachine`] hands out step by step.
//!
//! One sync, in upstream's order (`syncDaemonSet`):
//! 1. a DaemonSet selecting everything gets the Warning `SelectingAll` and
//!    nothing else; one being deleted gets nothing at all (its status
//!    cannot be trusted while the garbage collector removes its history);
//! 2. its history (`history`): claim the revisions, label the old
//!    ones missing `controller-revision-hash`, find the revision of the
//!    current template (creating it, or keeping the newest of duplicates
//!    and relabelling pods to it), and bump its number;
//! 3. claim the pods (adopt matching orphans after a live re-check, release
//!    owned pods that no longer match) and group them by node;
//! 4. if the expectations are not satisfied, the status only (without
//!    raising observedGeneration); otherwise `manage` (a pod on every node
//!    that should run one, none elsewhere, failed pods replaced with
//!    backoff), then, if manage had nothing to do, the update strategy
//!    (`RollingUpdate` with maxUnavailable or maxSurge; `OnDelete` waits for
//!    the user), then the history cleanup, then the status.
//!
//! # How a sync is driven
//! - [`SyncMachine`] runs [`sync`]'s plan as a core of the sync protocol
//!   and decides what a refused write means (see `machine`): the status
//!   after a failed create or delete ([`after_manage_error`]), the
//!   current revision's taken name ([`after_already_exists`]), the
//!   sync's own [`Outcome::error`].
//! - Before driving it, the driver calls [`FailedPodsBackoff::next`] for
//!   each key of [`SyncMachine::backoff_next`] (upstream steps the backoff
//!   when it decides to kill a failed pod).
//! - The plan's pods are the ReplicaSet controller's: expectations
//!   ([`Expectations`]), slow-start create batches
//!   ([`slow_start`](crate::common::slow_start)), deletes.
//! - The driver's node handler: [`should_ignore_node_update`], then
//!   [`node_update_requires_sync`] for each DaemonSet.
//!
//! # Where kcm-rs differs from upstream, and why
//! - The current revision is found by comparing its data with the
//!   template semantically, not byte for byte (see `history`): a revision
//!   kube-controller-manager wrote stays current after the switch.
//! - A plan cannot observe its own writes, so the update strategy waits for
//!   the sync after a `manage` that created or deleted pods; upstream's
//!   expectations hold it back the same way with real informers (its unit
//!   tests' fake pod control observes writes at once).
//! - The deletions run alongside the first slow-start step, so a failed
//!   deletion also stops the later creation steps (upstream creates first,
//!   then deletes whatever happened).
//! - When the current revision's name is taken by that very revision (a
//!   stale cache), the sync is retried instead of continuing with it.
//! - Nodes are visited in name order where upstream iterates a Go map, so
//!   which rolling-update candidates go first is deterministic.

mod backoff;
mod history;
mod machine;
mod manage;
mod node_affinity;
mod node_events;
mod placement;
mod status;
mod sync;
mod template;
mod update;

#[cfg(test)]
mod testing;
#[cfg(test)]
mod tests;

use std::sync::Arc;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::{ControllerRevision, DaemonSet, DaemonSetStatus};
use kcm_objects::{Node, Pod};

pub use self::backoff::{
    FAILED_PODS_BACKOFF_INITIAL, FAILED_PODS_BACKOFF_MAX, FailedPodsBackoff, failed_pods_backoff_key,
};
pub use self::history::{get_patch, matches_revision};
pub use self::machine::SyncMachine;
pub use self::node_affinity::required_node_affinity_matches;
pub use self::node_events::{node_update_requires_sync, should_ignore_node_update};
pub use self::placement::{add_or_update_daemon_pod_tolerations, node_should_run_daemon_pod};
pub use self::status::calculate_status;
#[cfg(test)]
pub(crate) use self::status::status_counts;
pub use self::sync::{after_already_exists, after_manage_error, sync};
pub use self::template::{
    create_pod_template, is_pod_updated, replace_daemon_set_pod_node_name_node_affinity, surge_count,
    template_generation, unavailable_count,
};
use crate::common::expectations::Expectations;
use crate::common::object;
use crate::plan::ObjectRef;

/// A plan of the DaemonSet controller: shared actions and its own [`Write`]s.
pub type Plan = crate::plan::Plan<Write>;

/// One action of a [`Plan`].
pub type Action = crate::plan::Action<Write>;

/// Most pods one sync creates, and most it deletes (upstream
/// `BurstReplicas`: higher values risk a registry DoS when every node pulls
/// at once).
pub const BURST_REPLICAS: usize = 250;

/// The label naming the revision a daemon pod (and the revision itself)
/// was made from (`apps/v1` `DefaultDaemonSetUniqueLabelKey`).
pub const CONTROLLER_REVISION_HASH_LABEL: &str = "controller-revision-hash";

/// The label carrying the deprecated template generation
/// (`extensions/v1beta1` `DaemonSetTemplateGenerationKey`).
pub const TEMPLATE_GENERATION_LABEL: &str = "pod-template-generation";

/// The annotation holding the deprecated template generation
/// (`apps/v1` `DeprecatedTemplateGeneration`).
pub const DEPRECATED_TEMPLATE_GENERATION: &str = "deprecated.daemonset.template.generation";

/// Event reason: the DaemonSet selects every pod.
pub const SELECTING_ALL: &str = "SelectingAll";
/// Event reason: a daemon pod failed and is killed.
pub const FAILED_DAEMON_POD: &str = "FailedDaemonPod";
/// Event reason: a daemon pod succeeded and is deleted.
pub const SUCCEEDED_DAEMON_POD: &str = "SucceededDaemonPod";

/// Settings of the DaemonSet controller.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// Most pods created, and most deleted, per sync.
    pub burst_replicas: usize,
}

impl Default for Options {
    fn default() -> Self {
        Self { burst_replicas: BURST_REPLICAS }
    }
}

/// What one sync of a DaemonSet reads.
#[derive(Clone, Copy, Debug)]
pub struct Snapshot<'a> {
    /// The DaemonSet, from the cache.
    pub daemon_set: &'a DaemonSet,
    /// The cached pods of its namespace (pods of other namespaces are
    /// ignored), active or not: it claims them and groups its own by node.
    pub pods: &'a [Arc<Pod>],
    /// Every cached node.
    pub nodes: &'a [Arc<Node>],
    /// The cached ControllerRevisions of its namespace (others are ignored).
    pub revisions: &'a [Arc<ControllerRevision>],
    /// The controller's expectations.
    pub expectations: &'a Expectations,
    /// The controller's failed-pod backoff.
    pub backoff: &'a FailedPodsBackoff,
    /// The time of the sync.
    pub now: Timestamp,
}

/// The outcome of one sync.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Outcome {
    /// The writes, in order.
    pub plan: Plan,
    /// Failed-pod backoff keys to step ([`FailedPodsBackoff::next`]) at
    /// the sync's `now` before running the plan.
    pub backoff_next: Vec<String>,
    /// The error the sync also returns, if any (requeue with rate limiting
    /// after the plan).
    pub error: Option<String>,
}

/// A DaemonSet write of a plan
/// ([`Action::Own`](crate::plan::Action::Own)).
#[derive(Clone, Debug, PartialEq)]
pub enum Write {
    /// Write the DaemonSet's status subresource: the cached object with this
    /// status at `resource_version`. On a failure the executor re-reads the
    /// object once and retries with the fresh resourceVersion (upstream
    /// `StatusUpdateRetries = 1`), except for a collision bump (see
    /// [`after_already_exists`]), which must not retry on a conflict: a
    /// changed DaemonSet means the count it was planned from is stale.
    UpdateStatus {
        /// Namespace of the DaemonSet.
        namespace: String,
        /// Name of the DaemonSet.
        name: String,
        /// resourceVersion of the cached object the status was computed from.
        resource_version: Option<String>,
        /// The whole new status.
        status: Box<DaemonSetStatus>,
        /// Retry once on failure with a re-read object.
        retry: bool,
    },
    /// JSON merge patch of one pod's `controller-revision-hash` label
    /// (deduplicating the current revision). Any error fails the step.
    RelabelPod {
        /// Namespace of the pod.
        namespace: String,
        /// Name of the pod.
        name: String,
        /// The label's new value.
        hash: String,
    },
}

impl Write {
    /// The merge patch body of a [`Write::RelabelPod`].
    pub fn relabel_body(hash: &str) -> serde_json::Value {
        serde_json::json!({"metadata": {"labels": {CONTROLLER_REVISION_HASH_LABEL: hash}}})
    }
}

/// The queue key of a DaemonSet, `namespace/name`.
pub fn key(ds: &DaemonSet) -> String {
    object::key(&ds.metadata)
}

/// The DaemonSet as events and preconditions name it.
pub fn object_ref(ds: &DaemonSet) -> ObjectRef {
    object::object_ref("apps/v1", "DaemonSet", &ds.metadata)
}
