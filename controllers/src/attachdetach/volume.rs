//! Which of a pod's claims need attaching, and how (upstream
//! `util.CreateVolumeSpec`, the attachable plugins' `CanAttach` and
//! `GetVolumeName`).
//!
//! kube-controller-manager 1.37 attaches through three plugins: CSI (a
//! `VolumeAttachment` for the driver's external attacher, unless the
//! driver's `CSIDriver` says `attachRequired: false`), and Fibre Channel
//! and iSCSI, whose attach does nothing but report the volume on the
//! node. A claim is looked up in the cache; it must be bound, and its
//! volume bound back to it (`claimRef.uid`).

use std::sync::Arc;

use k8s_openapi::api::core::v1::{PersistentVolume, PersistentVolumeClaim};

use crate::common::csi_migration::migrated_plugin;

/// The unique-name prefix of CSI volumes (upstream `csi.CSIPluginName`).
pub const CSI_PLUGIN: &str = "kubernetes.io/csi";

/// The unique-name prefix of Fibre Channel volumes.
pub const FC_PLUGIN: &str = "kubernetes.io/fc";

/// The unique-name prefix of iSCSI volumes.
pub const ISCSI_PLUGIN: &str = "kubernetes.io/iscsi";

/// How a volume is attached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Attacher {
    /// Through a `VolumeAttachment` answered by the driver's external
    /// attacher.
    Csi {
        /// `spec.csi.driver`.
        driver: String,
        /// `spec.csi.volumeHandle`.
        handle: String,
    },
    /// Fibre Channel and iSCSI: upstream's attach does nothing, and the
    /// volume is attached as soon as it is wanted.
    Nothing,
}

/// A persistent volume a pod on a node needs attached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attachable {
    /// Upstream's unique volume name, as `status.volumesAttached` and
    /// `status.volumesInUse` spell it: `kubernetes.io/csi/<driver>^<handle>`,
    /// `kubernetes.io/iscsi/<portal>:<iqn>:<lun>`, ...
    pub unique: String,
    /// The PersistentVolume's name (events name the volume by it).
    pub pv_name: String,
    /// How it is attached.
    pub attacher: Attacher,
    /// Whether it may be attached to several nodes at once (upstream
    /// `IsMultiAttachAllowed`: no access modes, or `ReadWriteMany` or
    /// `ReadOnlyMany` among them).
    pub multi_attach: bool,
}

/// What a pod's claim comes to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolved {
    /// A volume to attach.
    Attachable(Attachable),
    /// Nothing to attach (a plugin with no attacher, or a CSI driver that
    /// needs none).
    NotAttachable,
    /// Not yet known (claim missing or unbound, volume missing or not bound
    /// back): upstream's error, logged.
    Pending(String),
    /// A volume kcm-rs cannot attach, with the reason.
    Unsupported(String),
}

/// What `claim` (a pod's `persistentVolumeClaim.claimName`, or a generic
/// ephemeral volume's claim, `None` when not cached) comes to, reading its
/// volume with `volume` and whether a CSI driver needs attaching with
/// `attach_required` (upstream `skipAttach`: true unless the driver's
/// `CSIDriver` says `attachRequired: false`).
pub fn resolve(
    claim_key: &str,
    claim: Option<&PersistentVolumeClaim>,
    volume: impl FnOnce(&str) -> Option<Arc<PersistentVolume>>,
    attach_required: impl FnOnce(&str) -> bool,
) -> Resolved {
    match bound_volume(claim_key, claim, volume) {
        Ok(pv) => attachable(&pv, attach_required),
        Err(why) => Resolved::Pending(why),
    }
}

/// The volume `claim` is bound to, bound back to it (upstream
/// `createInTreeVolumeSpec` from the caches); else upstream's error.
///
/// # Errors
/// The claim is not cached or not bound, its volume is not cached or not
/// bound back to it.
pub fn bound_volume(
    claim_key: &str,
    claim: Option<&PersistentVolumeClaim>,
    volume: impl FnOnce(&str) -> Option<Arc<PersistentVolume>>,
) -> Result<Arc<PersistentVolume>, String> {
    let Some(claim) = claim else {
        return Err(format!("failed to find PVC {claim_key} in PVCInformer cache"));
    };
    let phase = claim.status.as_ref().and_then(|s| s.phase.as_deref()).unwrap_or_default();
    let pv_name = claim.spec.as_ref().and_then(|s| s.volume_name.as_deref()).unwrap_or_default();
    if phase != "Bound" || pv_name.is_empty() {
        return Err(format!(
            "PVC {claim_key} has non-bound phase ({phase:?}) or empty pvc.Spec.VolumeName ({pv_name:?})"
        ));
    }
    let Some(pv) = volume(pv_name) else {
        return Err(format!("failed to find PV {pv_name:?} in PVInformer cache"));
    };
    let claim_uid = claim.metadata.uid.as_deref().unwrap_or_default();
    let bound_uid = pv.spec.as_ref().and_then(|s| s.claim_ref.as_ref()).map(|r| r.uid.as_deref().unwrap_or_default());
    match bound_uid {
        None => Err(format!(
            "found PV object {pv_name:?} but it has a nil pv.Spec.ClaimRef indicating it is not yet bound to the \
             claim"
        )),
        Some(uid) if uid != claim_uid => Err(format!(
            "found PV object {pv_name:?} but its pv.Spec.ClaimRef.UID ({uid:?}) does not point to claim.UID \
             ({claim_uid:?})"
        )),
        Some(_) => Ok(pv),
    }
}

/// The plugin a volume belongs to among the controller's (CSI, Fibre
/// Channel, iSCSI), as upstream's metrics label it
/// (`GetFullQualifiedPluginNameForVolume`: `kubernetes.io/csi:<driver>`,
/// `kubernetes.io/fc`, `kubernetes.io/iscsi`); `None` for any other
/// source.
pub fn plugin_name(pv: &PersistentVolume) -> Option<String> {
    let spec = pv.spec.as_ref()?;
    if let Some(csi) = &spec.csi {
        Some(format!("{CSI_PLUGIN}:{}", csi.driver))
    } else if spec.fc.is_some() {
        Some(FC_PLUGIN.to_owned())
    } else if spec.iscsi.is_some() {
        Some(ISCSI_PLUGIN.to_owned())
    } else {
        None
    }
}

/// The plugin name [`plugin_name`] gives, from a unique volume name
/// (upstream's `N/A` for one of no plugin it knows).
pub fn plugin_of_unique(unique: &str) -> String {
    if let Some((driver, _)) = csi_parts(unique) {
        return format!("{CSI_PLUGIN}:{driver}");
    }
    let of = |plugin: &str| unique.strip_prefix(plugin).is_some_and(|rest| rest.starts_with('/'));
    [FC_PLUGIN, ISCSI_PLUGIN].into_iter().find(|plugin| of(plugin)).unwrap_or("N/A").to_owned()
}

/// What a bound PersistentVolume comes to.
pub fn attachable(pv: &PersistentVolume, attach_required: impl FnOnce(&str) -> bool) -> Resolved {
    let Some(spec) = pv.spec.as_ref() else { return Resolved::NotAttachable };
    let pv_name = pv.metadata.name.clone().unwrap_or_default();
    let multi_attach = match spec.access_modes.as_deref() {
        None | Some([]) => true,
        Some(modes) => modes.iter().any(|m| m == "ReadWriteMany" || m == "ReadOnlyMany"),
    };
    let (unique, attacher) = if let Some(csi) = &spec.csi {
        if !attach_required(&csi.driver) {
            return Resolved::NotAttachable;
        }
        let unique = format!("{CSI_PLUGIN}/{}^{}", csi.driver, csi.volume_handle);
        (unique, Attacher::Csi { driver: csi.driver.clone(), handle: csi.volume_handle.clone() })
    } else if let Some(fc) = &spec.fc {
        let name = match (fc.target_wwns.as_deref(), fc.lun, fc.wwids.as_deref()) {
            (Some(wwns), Some(lun), _) if !wwns.is_empty() => format!("[{}]:{lun}", wwns.join(" ")),
            (_, _, Some(wwids)) if !wwids.is_empty() => format!("[{}]", wwids.join(" ")),
            _ => {
                return Resolved::Unsupported(format!(
                    "fc volume {pv_name:?} has neither targetWWNs with a lun nor wwids"
                ));
            }
        };
        (format!("{FC_PLUGIN}/{name}"), Attacher::Nothing)
    } else if let Some(iscsi) = &spec.iscsi {
        let name = format!("{}:{}:{}", iscsi.target_portal, iscsi.iqn, iscsi.lun);
        (format!("{ISCSI_PLUGIN}/{name}"), Attacher::Nothing)
    } else if let Some((plugin, driver)) = migrated_plugin(pv) {
        return Resolved::Unsupported(format!(
            "volume {pv_name:?} is an in-tree {plugin} volume: kcm-rs does not translate in-tree volumes to their \
             CSI driver ({driver}) for attaching"
        ));
    } else {
        return Resolved::NotAttachable;
    };
    Resolved::Attachable(Attachable { unique, pv_name, attacher, multi_attach })
}

/// The name of the `VolumeAttachment` of a CSI volume on a node (upstream
/// `getAttachmentName`): `csi-` and the hex SHA-256 of handle, driver and
/// node name run together.
pub fn attachment_name(handle: &str, driver: &str, node: &str) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, format!("{handle}{driver}{node}").as_bytes());
    let hex: String = digest.as_ref().iter().map(|b| format!("{b:02x}")).collect();
    format!("csi-{hex}")
}

/// The CSI driver and volume handle a unique name spells, if it is a CSI
/// one (upstream's detacher splits it so).
pub fn csi_parts(unique: &str) -> Option<(&str, &str)> {
    unique.strip_prefix(CSI_PLUGIN)?.strip_prefix('/')?.split_once('^')
}
