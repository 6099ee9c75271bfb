//! One node's reconcile (upstream `reconciler.reconcile` and the node
//! status updater, for one node): from what the pods on the node want
//! attached, what its `VolumeAttachment`s say, and what the node reports,
//! the writes that bring them together.
//!
//! Upstream keeps an in-memory actual state of the world, fed by its own
//! attach and detach operations and checked against the API every
//! `--attach-detach-reconcile-sync-period`. kcm-rs reads the actual state
//! from the caches at every sync instead: a CSI volume is attached when
//! its `VolumeAttachment` says `status.attached`; a Fibre Channel or iSCSI
//! volume as soon as it is wanted (their attach does nothing). What the
//! caches cannot tell is kept in [`Memory`]: when a detach was first
//! wanted (for the six minutes an unmount may take),
//! which failures and multi-attach refusals were already recorded, when an
//! attachment was created (for the external attacher's two minutes), and
//! the node's last `volumesInUse` once it is gone.

use std::collections::{BTreeMap, BTreeSet};

use jiff::{SignedDuration, Timestamp};

use super::view::{Attachment, Elsewhere, NodeView, PodRef, Wanted};
use super::volume::{Attacher, attachment_name};

/// How long the external attacher has before the attach is reported as
/// timed out (upstream `csiTimeout`).
pub const ATTACH_TIMEOUT: SignedDuration = SignedDuration::from_mins(2);

/// What the caches cannot tell about one node, kept between its syncs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Memory {
    /// When each unwanted volume's detach was first wanted.
    detach_wanted_since: BTreeMap<String, Timestamp>,
    /// The attach failure last recorded for each volume.
    failures: BTreeMap<String, String>,
    /// Volumes whose multi-attach refusal was recorded.
    refused: BTreeSet<String>,
    /// When each volume's attachment was created or last timed out.
    attaching_since: BTreeMap<String, Timestamp>,
    /// The node's last `volumesInUse`, kept once it is gone.
    in_use: Option<Vec<String>>,
}

impl Memory {
    /// Whether there is nothing left to remember (the node can be
    /// forgotten).
    pub fn is_empty(&self) -> bool {
        self.detach_wanted_since.is_empty()
            && self.failures.is_empty()
            && self.refused.is_empty()
            && self.attaching_since.is_empty()
    }
}

/// Why a detach did not wait for the volume to be unmounted (the `reason`
/// label of `attachdetach_controller_forced_detaches`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ForceReason {
    /// The longest unmount wait passed on an unhealthy node.
    Timeout,
    /// The node has the out-of-service taint.
    OutOfService,
}

impl ForceReason {
    /// Upstream's label value.
    pub fn label(self) -> &'static str {
        match self {
            ForceReason::Timeout => "timeout",
            ForceReason::OutOfService => "out-of-service",
        }
    }
}

/// A `VolumeAttachment` to create.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewAttachment {
    /// Its name ([`attachment_name`]).
    pub name: String,
    /// `spec.attacher`: the CSI driver.
    pub driver: String,
    /// `spec.source.persistentVolumeName`.
    pub pv_name: String,
}

/// An event to record on a pod.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PodEvent {
    /// The pod.
    pub pod: PodRef,
    /// Warning (else Normal).
    pub warning: bool,
    /// `SuccessfulAttachVolume` or `FailedAttachVolume`.
    pub reason: &'static str,
    /// Upstream's message.
    pub message: String,
}

/// The writes of one sync, in the order they are made: the node's
/// reported volumes first (a volume leaves the report before it is
/// detached), then the detaches, then the attaches.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Plan {
    /// The node's new `status.volumesAttached`, when it changes.
    pub report: Option<Vec<(String, String)>>,
    /// `VolumeAttachment`s to delete.
    pub delete: Vec<String>,
    /// `VolumeAttachment`s to create.
    pub create: Vec<NewAttachment>,
    /// Forced detaches among the deletes, by reason.
    pub forced: Vec<ForceReason>,
    /// Events to record.
    pub events: Vec<PodEvent>,
    /// When to look again, if the sync waits on time (an unmount's
    /// longest wait, the attacher's two minutes).
    pub recheck_after: Option<SignedDuration>,
}

/// The reason of a successful attach's event.
pub const SUCCESSFUL_ATTACH: &str = "SuccessfulAttachVolume";

/// The reason of a failed or refused attach's event.
pub const FAILED_ATTACH: &str = "FailedAttachVolume";

/// The writes that bring the node's attachments and report to what its
/// pods want, updating `memory`.
pub fn plan(view: &NodeView, memory: &mut Memory) -> Plan {
    let mut out = Plan::default();
    if let Some(facts) = &view.facts {
        memory.in_use = Some(facts.in_use.clone());
    }
    let reported: &[(String, String)] = view.facts.as_ref().map_or(&[], |f| &f.reported);
    let by_unique: BTreeMap<&str, &Attachment> = view.attachments.iter().map(|a| (a.unique.as_str(), a)).collect();
    let mut report: Vec<(String, String)> = Vec::new();
    let mut wanted_names = BTreeSet::new();

    for wanted in &view.wanted {
        let unique = wanted.volume.unique.as_str();
        wanted_names.insert(unique);
        memory.detach_wanted_since.remove(unique);
        if is_attached(view, wanted, by_unique.get(unique).copied(), memory, &mut out) {
            memory.failures.remove(unique);
            memory.refused.remove(unique);
            memory.attaching_since.remove(unique);
            match reported.iter().find(|(name, _)| name == unique) {
                Some(entry) => report.push(entry.clone()),
                None => {
                    report.push((unique.to_owned(), String::new()));
                    let message = format!("AttachVolume.Attach succeeded for volume {:?} ", wanted.volume.pv_name);
                    events(&mut out, &wanted.pods, false, SUCCESSFUL_ATTACH, &message);
                }
            }
        }
    }

    let unwanted = (reported.iter().map(|(name, _)| name.as_str()))
        .chain(view.attachments.iter().map(|a| a.unique.as_str()))
        .filter(|unique| !wanted_names.contains(unique))
        .collect::<BTreeSet<_>>();
    for unique in unwanted {
        let attachment = by_unique.get(unique).copied();
        let entry = reported.iter().find(|(name, _)| name == unique);
        if attachment.is_some_and(|a| a.deleting) {
            continue;
        }
        if !detach(view, unique, attachment, memory, &mut out) {
            report.extend(entry.cloned());
        }
    }

    let known: BTreeSet<&str> = wanted_names
        .iter()
        .copied()
        .chain(reported.iter().map(|(n, _)| n.as_str()))
        .chain(by_unique.keys().copied())
        .collect();
    memory.detach_wanted_since.retain(|u, _| known.contains(u.as_str()));
    memory.failures.retain(|u, _| wanted_names.contains(u.as_str()));
    memory.refused.retain(|u| wanted_names.contains(u.as_str()));
    memory.attaching_since.retain(|u, _| wanted_names.contains(u.as_str()));

    report.sort_by_key(|(name, _)| reported.iter().position(|(n, _)| n == name).unwrap_or(usize::MAX));
    if view.facts.is_some() && !same_entries(reported, &report) {
        out.report = Some(report);
    }
    out
}

/// Whether a wanted volume is attached; if not, what it takes.
fn is_attached(
    view: &NodeView,
    wanted: &Wanted,
    attachment: Option<&Attachment>,
    memory: &mut Memory,
    out: &mut Plan,
) -> bool {
    let Attacher::Csi { driver, handle } = &wanted.volume.attacher else { return true };
    let unique = wanted.volume.unique.as_str();
    match attachment {
        Some(a) if a.deleting => {
            fail(wanted, "volume attachment is being deleted", memory, out);
            false
        }
        Some(a) if a.attached => true,
        Some(a) => {
            if let Some(error) = &a.error {
                fail(wanted, error, memory, out);
                return false;
            }
            let since = *memory.attaching_since.entry(unique.to_owned()).or_insert(view.now);
            let waited = view.now.duration_since(since);
            if waited >= ATTACH_TIMEOUT {
                let message =
                    format!("timed out waiting for external-attacher of {driver} CSI driver to attach volume {handle}");
                memory.failures.remove(unique);
                fail(wanted, &message, memory, out);
                memory.attaching_since.insert(unique.to_owned(), view.now);
                recheck(out, ATTACH_TIMEOUT);
            } else {
                recheck(out, ATTACH_TIMEOUT - waited);
            }
            false
        }
        None => {
            let elsewhere = view.elsewhere.get(unique).filter(|e| !e.nodes.is_empty());
            if let (false, Some(elsewhere)) = (wanted.volume.multi_attach, elsewhere) {
                if memory.refused.insert(unique.to_owned()) {
                    refuse(wanted, elsewhere, out);
                }
                return false;
            }
            out.create.push(NewAttachment {
                name: attachment_name(handle, driver, &view.node),
                driver: driver.clone(),
                pv_name: wanted.volume.pv_name.clone(),
            });
            memory.attaching_since.insert(unique.to_owned(), view.now);
            recheck(out, ATTACH_TIMEOUT);
            false
        }
    }
}

/// Whether an unwanted volume is detached now (else it waits for its
/// unmount, and stays reported).
fn detach(view: &NodeView, unique: &str, attachment: Option<&Attachment>, memory: &mut Memory, out: &mut Plan) -> bool {
    let since = *memory.detach_wanted_since.entry(unique.to_owned()).or_insert(view.now);
    let waited = view.now.duration_since(since);
    let settings = view.settings;
    let expired = waited > settings.max_wait_unmount;
    let healthy = view.facts.as_ref().is_some_and(|f| f.ready);
    let out_of_service = view.facts.as_ref().is_some_and(|f| f.out_of_service);
    let timed_out = expired && settings.force_detach_on_timeout;
    let mounted = memory.in_use.as_ref().is_none_or(|in_use| in_use.iter().any(|u| u == unique));
    let forced = timed_out && !healthy;
    if mounted && !forced && !out_of_service {
        if !expired {
            recheck(out, settings.max_wait_unmount - waited + SignedDuration::from_secs(1));
        }
        return false;
    }
    if let Some(a) = attachment {
        out.delete.push(a.name.clone());
    }
    if timed_out {
        out.forced.push(ForceReason::Timeout);
    } else if out_of_service {
        out.forced.push(ForceReason::OutOfService);
    }
    true
}

/// Records a failed attach once per distinct message.
fn fail(wanted: &Wanted, error: &str, memory: &mut Memory, out: &mut Plan) {
    let unique = &wanted.volume.unique;
    if memory.failures.get(unique).is_some_and(|last| last == error) {
        return;
    }
    memory.failures.insert(unique.clone(), error.to_owned());
    let message = format!("AttachVolume.Attach failed for volume {:?} : {error}", wanted.volume.pv_name);
    events(out, &wanted.pods, true, FAILED_ATTACH, &message);
}

/// Records that a single-node volume waits for its detach elsewhere
/// (upstream `reportMultiAttachError`).
fn refuse(wanted: &Wanted, elsewhere: &Elsewhere, out: &mut Plan) {
    let pv = &wanted.volume.pv_name;
    for pod in &wanted.pods {
        let detail = if elsewhere.pods.is_empty() {
            "Volume is already exclusively attached to one node, waiting on detach before it can be attached to \
             another node"
                .to_owned()
        } else {
            let local: Vec<&str> =
                elsewhere.pods.iter().filter(|p| p.namespace == pod.namespace).map(|p| p.name.as_str()).collect();
            let others = elsewhere.pods.len() - local.len();
            match (local.is_empty(), others) {
                (false, 0) => format!("Volume is already used by pod(s) {}", local.join(", ")),
                (false, n) => format!(
                    "Volume is already used by pod(s) {} and {n} pod(s) in different namespaces",
                    local.join(", ")
                ),
                (true, n) => format!("Volume is already used by {n} pod(s) in different namespaces"),
            }
        };
        let message = format!("Waiting for detach for volume {pv:?} {detail}");
        out.events.push(PodEvent { pod: pod.clone(), warning: true, reason: FAILED_ATTACH, message });
    }
}

fn events(out: &mut Plan, pods: &[PodRef], warning: bool, reason: &'static str, message: &str) {
    out.events.extend(pods.iter().map(|pod| PodEvent {
        pod: pod.clone(),
        warning,
        reason,
        message: message.to_owned(),
    }));
}

fn recheck(out: &mut Plan, after: SignedDuration) {
    out.recheck_after = Some(out.recheck_after.map_or(after, |now| now.min(after)));
}

/// Whether two reports hold the same entries, in any order.
fn same_entries(a: &[(String, String)], b: &[(String, String)]) -> bool {
    a.len() == b.len() && a.iter().all(|entry| b.contains(entry))
}
