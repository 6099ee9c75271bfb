//! The attach/detach controller's decisions (upstream
//! `pkg/controller/volume/attachdetach/`), one node at a time.
//!
//! - [`volume`]: which claims need attaching, their unique names, and the
//!   `VolumeAttachment` name of a CSI volume on a node.
//! - [`wanted`]: what a node's pods want attached (the desired state).
//! - [`view`]: what one node's reconcile reads;
//! - [`count`]: what the controller's gauges count;
//! - [`plan`]: the writes that bring the node's attachments and its
//!   `status.volumesAttached` to that.
//!
//! Only nodes with [`MANAGED_ANNOTATION`] have their volumes attached by
//! the controller (the kubelet sets it unless told to attach itself);
//! every other node's attachments are detached once unmounted, as
//! upstream does.

pub mod count;
pub mod plan;
pub mod view;
pub mod volume;
pub mod wanted;

#[cfg(test)]
mod tests;

/// The node annotation by which a kubelet hands its volumes' attaching to
/// the controller (upstream `volumeutil.ControllerManagedAttachAnnotation`).
pub const MANAGED_ANNOTATION: &str = "volumes.kubernetes.io/controller-managed-attach-detach";

/// The taint that lets volumes be detached from a node without waiting for
/// their unmount (upstream `v1.TaintNodeOutOfService`).
pub const OUT_OF_SERVICE_TAINT: &str = "node.kubernetes.io/out-of-service";
