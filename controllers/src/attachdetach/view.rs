//! What one node's reconcile reads ([`NodeView`]): the node as cached,
//! what its pods want attached, its `VolumeAttachment`s, and where else
//! its single-node volumes are attached.

use std::collections::BTreeMap;

use jiff::{SignedDuration, Timestamp};

use super::volume::Attachable;

/// A pod events are recorded on.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct PodRef {
    /// `metadata.namespace`.
    pub namespace: String,
    /// `metadata.name`.
    pub name: String,
    /// `metadata.uid`.
    pub uid: String,
}

/// What the node object says, when it is cached.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NodeFacts {
    /// Whether its `Ready` condition is `True`.
    pub ready: bool,
    /// Whether it has the `node.kubernetes.io/out-of-service` taint.
    pub out_of_service: bool,
    /// `status.volumesInUse`: the volumes the kubelet has mounted or is
    /// mounting.
    pub in_use: Vec<String>,
    /// `status.volumesAttached`, as (name, devicePath).
    pub reported: Vec<(String, String)>,
}

/// A volume the node's pods want attached.
#[derive(Debug, Clone, PartialEq)]
pub struct Wanted {
    /// The volume.
    pub volume: Attachable,
    /// The scheduled pods that use it (events are recorded on them).
    pub pods: Vec<PodRef>,
}

/// A `VolumeAttachment` of the node, resolved to the volume it attaches.
#[derive(Debug, Clone, PartialEq)]
pub struct Attachment {
    /// Its name.
    pub name: String,
    /// The unique name of its volume.
    pub unique: String,
    /// `status.attached`.
    pub attached: bool,
    /// `status.attachError.message`.
    pub error: Option<String>,
    /// Whether it is being deleted (the attacher is detaching).
    pub deleting: bool,
}

/// Where a single-node volume is attached besides this node.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Elsewhere {
    /// The other nodes it is attached to.
    pub nodes: Vec<String>,
    /// The pods there that use it.
    pub pods: Vec<PodRef>,
}

/// The flags of the reconciler.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    /// How long a volume still mounted may keep a node from detaching it
    /// before an unhealthy node loses it anyway (upstream's fixed
    /// `ReconcilerMaxWaitForUnmountDuration`, six minutes; no flag since
    /// 1.37).
    pub max_wait_unmount: SignedDuration,
    /// Not `--disable-force-detach-on-timeout`.
    pub force_detach_on_timeout: bool,
}

/// Everything one node's reconcile reads.
#[derive(Debug, Clone)]
pub struct NodeView {
    /// The node's name.
    pub node: String,
    /// The node, if cached.
    pub facts: Option<NodeFacts>,
    /// What its pods want (nothing unless the node is cached and has the
    /// `volumes.kubernetes.io/controller-managed-attach-detach`
    /// annotation).
    pub wanted: Vec<Wanted>,
    /// Its `VolumeAttachment`s.
    pub attachments: Vec<Attachment>,
    /// For each wanted single-node volume, where else it is attached.
    pub elsewhere: BTreeMap<String, Elsewhere>,
    /// The reconciler's flags.
    pub settings: Settings,
    /// The time of the sync.
    pub now: Timestamp,
}
