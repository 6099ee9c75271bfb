//! The TTL controller's decisions (upstream `pkg/controller/ttl/ttl_controller.go`):
//! every node carries the annotation [`TTL_ANNOTATION`], the number of
//! seconds a kubelet may cache the Secrets and ConfigMaps its pods use,
//! chosen by the size of the cluster.
//!
//! The size is counted from the node events ([`Boundaries::node_added`],
//! [`Boundaries::node_deleted`]), as upstream counts it, and moves between
//! the steps of [`TTL_BOUNDARIES`] with hysteresis: the steps overlap, so
//! the TTL goes up when the count passes a step's `size_max` and comes back
//! down only when it falls below the next step's `size_min`. With 100 nodes
//! the 101st raises the TTL from 0 s to 15 s; deleting nodes lowers it
//! again only once fewer than 90 are left.
//!
//! [`sync`] answers the patch of one node: a strategic merge patch of the
//! annotation alone (the rest of the node untouched), or nothing when the
//! annotation already holds the desired TTL.

use kcm_objects::Node;
use serde_json::json;

/// The annotation this controller sets (upstream `v1.ObjectTTLAnnotationKey`).
pub const TTL_ANNOTATION: &str = "node.alpha.kubernetes.io/ttl";

/// One step of the TTL by cluster size (upstream `ttlBoundary`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TtlBoundary {
    /// Below this many nodes the step is left for the one before.
    pub size_min: usize,
    /// Above this many nodes the step is left for the next one.
    pub size_max: usize,
    /// The TTL of the step, in seconds.
    pub ttl_seconds: u32,
}

/// Upstream's `ttlBoundaries`, in order; the last step has no upper bound
/// (upstream's `math.MaxInt32`).
pub const TTL_BOUNDARIES: [TtlBoundary; 5] = [
    TtlBoundary { size_min: 0, size_max: 100, ttl_seconds: 0 },
    TtlBoundary { size_min: 90, size_max: 500, ttl_seconds: 15 },
    TtlBoundary { size_min: 450, size_max: 1000, ttl_seconds: 30 },
    TtlBoundary { size_min: 900, size_max: 2000, ttl_seconds: 60 },
    TtlBoundary { size_min: 1800, size_max: i32::MAX as usize, ttl_seconds: 300 },
];

/// The node count and the step it has reached (upstream's `nodeCount`,
/// `boundaryStep` and `desiredTTLSeconds`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Boundaries {
    /// Nodes counted: one up per add event, one down per delete.
    node_count: usize,
    /// The index into [`TTL_BOUNDARIES`] of the current step.
    step: usize,
    /// The TTL every node should carry, in seconds.
    desired_ttl_seconds: u32,
}

// === impl Boundaries ===

impl Boundaries {
    /// A node was added: the count goes up, and past the step's
    /// `size_max` the next step's TTL is desired.
    pub fn node_added(&mut self) {
        self.node_count += 1;
        if self.node_count > TTL_BOUNDARIES[self.step].size_max && self.step + 1 < TTL_BOUNDARIES.len() {
            self.step += 1;
            self.desired_ttl_seconds = TTL_BOUNDARIES[self.step].ttl_seconds;
        }
    }

    /// A node was deleted: the count goes down, and below the step's
    /// `size_min` the step before's TTL is desired.
    pub fn node_deleted(&mut self) {
        self.node_count = self.node_count.saturating_sub(1);
        if self.node_count < TTL_BOUNDARIES[self.step].size_min && self.step > 0 {
            self.step -= 1;
            self.desired_ttl_seconds = TTL_BOUNDARIES[self.step].ttl_seconds;
        }
    }

    /// The TTL every node should carry, in seconds (upstream
    /// `getDesiredTTLSeconds`).
    pub fn desired_ttl_seconds(&self) -> u32 {
        self.desired_ttl_seconds
    }
}

/// What the annotation of `node` holds, read as upstream's
/// `getIntFromAnnotation` reads it: `Err` with the text when it is there
/// but no integer (upstream logs it and patches).
pub fn current_ttl(node: &Node) -> Option<Result<i64, &str>> {
    let value = node.metadata.annotations.get(TTL_ANNOTATION)?;
    Some(value.parse().map_err(|_| value))
}

/// The strategic merge patch that gives `node` the annotation `ttl_seconds`,
/// or `None` when it already carries that TTL (upstream
/// `updateNodeIfNeeded`).
pub fn sync(node: &Node, ttl_seconds: u32) -> Option<serde_json::Value> {
    if current_ttl(node) == Some(Ok(i64::from(ttl_seconds))) {
        return None;
    }
    Some(annotation_patch(ttl_seconds))
}

/// The patch upstream's `patchNodeWithAnnotation` computes when the
/// annotation changes: the annotation alone.
fn annotation_patch(ttl_seconds: u32) -> serde_json::Value {
    json!({ "metadata": { "annotations": { TTL_ANNOTATION: ttl_seconds.to_string() } } })
}

#[cfg(test)]
mod tests;
