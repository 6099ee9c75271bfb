//! The node IPAM controller's decisions (upstream
//! `pkg/controller/nodeipam/`, kube-controller-manager's
//! `node-ipam-controller` with its only in-tree allocator,
//! `RangeAllocator`): every node gets a pod CIDR of each cluster CIDR's
//! family, cut from `--cluster-cidr` by `--node-cidr-mask-size*`, the
//! service CIDRs kept out.
//!
//! - [`cidr`]: a CIDR parsed and written as upstream's Go does;
//! - [`config`]: the cluster CIDRs, mask sizes and service CIDRs checked
//!   as upstream's constructor checks them;
//! - [`cidrset`]: one cluster CIDR's node CIDRs and which are taken
//!   (upstream's arithmetic and round-robin search);
//! - [`allocator`]: the range allocator's sets, occupied at start,
//!   allocated from for a node without CIDRs, released when one goes.
//!
//! The driver (`kcm-rs`'s `drivers::nodeipam`) owns the lock around the
//! allocator, the queue, the node patch, the events and the metrics.

pub mod allocator;
pub mod cidr;
pub mod cidrset;
pub mod config;

/// The event reason when a cluster CIDR has no free node CIDR (upstream's
/// `RecordNodeStatusChange(.., "CIDRNotAvailable")`).
pub const CIDR_NOT_AVAILABLE: &str = "CIDRNotAvailable";

/// The event reason when the node could not be patched after
/// [`CIDR_UPDATE_RETRIES`] tries.
pub const CIDR_ASSIGNMENT_FAILED: &str = "CIDRAssignmentFailed";

/// Upstream's `cidrUpdateRetries`: patches of one sync before it gives up.
pub const CIDR_UPDATE_RETRIES: usize = 3;

/// The message of a node status change event (upstream
/// `RecordNodeStatusChange`): `Node node-1 status is now: CIDRNotAvailable`.
pub fn node_status_change_message(node: &str, status: &str) -> String {
    format!("Node {node} status is now: {status}")
}
