//! What happens to a released volume (upstream `reclaimVolume`,
//! `deleteVolumeOperation`, `recycleVolumeOperation`).
//!
//! Upstream runs the delete and recycle operations in goroutines of their
//! own, with an exponential backoff per volume, and a failed operation
//! does not fail the sync; here they run within the volume's sync, and a
//! failure is likewise only logged and evented: the next sync (an event,
//! or the `--pvclaimbinder-sync-period` resync) tries again.
//!
//! Volumes are deleted by their external provisioner, which watches for
//! `Released` volumes of its own. The in-tree operations kcm-rs does not
//! run fail with an event saying so: the host-path deleter (upstream's
//! removes a directory under `/tmp` on the controller manager's own host)
//! and the host-path and NFS recyclers (upstream's run a recycler pod).

use k8s_openapi::api::core::v1::PersistentVolume;
use kcm_objects::EventType;

use crate::common::csi_migration::csi_driver;
use crate::pvbinder::cx::{Cx, Reply, Request, Step};
use crate::pvbinder::matching::volume_class;
use crate::pvbinder::metrics::{Metric, NOT_AVAILABLE, Operation};
use crate::pvbinder::status::{update_volume_phase_with_event, volume_event};
use crate::pvbinder::{
    ANN_DYNAMICALLY_PROVISIONED, ANN_MIGRATED_TO, Settings, View, annotation, claim_ref_key, claim_volume_name,
    reclaim_policy, volume_name,
};

/// The in-tree plugins upstream's binder loads that delete or recycle.
const HOST_PATH: &str = "kubernetes.io/host-path";
const NFS: &str = "kubernetes.io/nfs";

/// Why kcm-rs cannot run an in-tree operation a volume needs.
const NO_IN_TREE_DELETER: &str = "kcm-rs does not run in-tree volume plugins: the host-path deleter is not implemented";
const NO_IN_TREE_RECYCLER: &str =
    "kcm-rs does not run in-tree volume plugins: host-path and NFS recycling is not implemented";

/// Applies the volume's reclaim policy (upstream `reclaimVolume`).
pub(super) fn reclaim_volume(
    view: &dyn View,
    volume: &PersistentVolume,
    _settings: Settings,
    cx: &mut Cx<'_>,
) -> Step<()> {
    if annotation(&volume.metadata, ANN_MIGRATED_TO).is_some_and(|driver| !driver.is_empty()) {
        // Its CSI driver's external provisioner reclaims it.
        return Ok(());
    }
    match reclaim_policy(volume) {
        "Retain" => Ok(()),
        "Recycle" => recycle(view, volume, cx),
        "Delete" => delete(view, volume, cx),
        _ => update_volume_phase_with_event(
            cx,
            volume,
            "Failed",
            EventType::Warning,
            "VolumeUnknownReclaimPolicy",
            "Volume has unrecognized PersistentVolumeReclaimPolicy",
        )
        .map(drop),
    }
}

/// The in-tree deleter a volume would need, if any (upstream
/// `findDeletablePlugin` over the plugins upstream's binder loads: host
/// path and NFS, of which only host path deletes): `Ok(None)` for a volume
/// an external deleter handles.
fn deleter(volume: &PersistentVolume) -> Result<Option<()>, String> {
    if let Some(plugin) = annotation(&volume.metadata, ANN_DYNAMICALLY_PROVISIONED).filter(|p| !p.is_empty()) {
        return match plugin {
            HOST_PATH => Ok(Some(())),
            NFS => Err("no deletable volume plugin matched".to_owned()),
            p if p.starts_with("kubernetes.io/") => Err(format!("no volume plugin matched name: {p}")),
            _ => Ok(None),
        };
    }
    let spec = volume.spec.as_ref();
    if annotation(&volume.metadata, ANN_MIGRATED_TO).is_some() || spec.is_some_and(|s| s.csi.is_some()) {
        return Ok(None);
    }
    let reason = match spec {
        Some(s) if s.host_path.is_some() => return Ok(Some(())),
        Some(s) if s.nfs.is_some() => "no deletable volume plugin matched",
        _ => "no volume plugin matched",
    };
    Err(format!("error getting deleter volume plugin for volume {:?}: {reason}", volume_name(volume)))
}

/// Upstream `deleteVolumeOperation`.
fn delete(view: &dyn View, volume: &PersistentVolume, cx: &mut Cx<'_>) -> Step<()> {
    let failed = |cx: &mut Cx<'_>, message: &str| {
        update_volume_phase_with_event(cx, volume, "Failed", EventType::Warning, "VolumeFailedDelete", message)
            .map(drop)
    };
    let plugin = provisioner_name(view, volume);
    let key = volume_name(volume).to_owned();
    cx.record(Metric::OperationStarted { key: key.clone(), plugin, operation: Operation::Delete })?;
    let error = |cx: &mut Cx<'_>| cx.record(Metric::OperationEnded { key: key.clone(), failed: true });
    match deleter(volume) {
        Err(message) => {
            failed(cx, &message)?;
            error(cx)
        }
        // An external deleter deletes it; the driver ends the timing when
        // the volume is gone.
        Ok(None) => Ok(()),
        Ok(Some(_)) => {
            let Some(live) = get_volume(cx, volume_name(volume))? else { return Ok(()) };
            if !is_volume_released(view, &live) {
                return Ok(());
            }
            let path = volume.spec.as_ref().and_then(|s| s.host_path.as_ref()).map(|h| h.path.as_str());
            let path = path.unwrap_or_default();
            if !(path.starts_with("/tmp/") && path.len() > "/tmp/".len()) {
                failed(cx, &format!("host_path deleter only supports /tmp/.+ but received provided {path}"))?;
                return error(cx);
            }
            failed(cx, NO_IN_TREE_DELETER)?;
            error(cx)
        }
    }
}

/// The name a deletion is timed by (upstream
/// `getProvisionerNameFromVolume`): the in-tree deleter's, else the
/// provisioner of the volume's class (named by its CSI driver when
/// migrated); `N/A` when neither is there.
fn provisioner_name(view: &dyn View, volume: &PersistentVolume) -> String {
    match deleter(volume) {
        Err(_) => NOT_AVAILABLE.to_owned(),
        Ok(Some(())) => HOST_PATH.to_owned(),
        Ok(None) => view.class(volume_class(volume)).map_or_else(
            || NOT_AVAILABLE.to_owned(),
            |class| csi_driver(&class.provisioner).unwrap_or(&class.provisioner).to_owned(),
        ),
    }
}

/// Upstream `recycleVolumeOperation`.
fn recycle(view: &dyn View, volume: &PersistentVolume, cx: &mut Cx<'_>) -> Step<()> {
    let Some(live) = get_volume(cx, volume_name(volume))? else { return Ok(()) };
    if !is_volume_released(view, &live) {
        return Ok(());
    }
    let key = claim_ref_key(volume).unwrap_or_default();
    let mut users: Vec<String> = view
        .pods_of_claim(&key)
        .iter()
        .filter(|pod| !crate::common::pod::is_pod_terminated(pod))
        .map(|pod| format!("{}/{}", pod.metadata.namespace, pod.metadata.name))
        .collect();
    users.sort();
    users.dedup();
    if !users.is_empty() && view.claim(&key).is_none() {
        let message = format!("Volume is used by pods: {}", users.join(","));
        return cx.event(volume_event(volume, EventType::Normal, "VolumeFailedRecycle", message));
    }
    let spec = live.spec.as_ref();
    let message = if spec.is_some_and(|s| s.host_path.is_some() || s.nfs.is_some()) {
        format!("Recycle failed: {NO_IN_TREE_RECYCLER}")
    } else {
        "No recycler plugin found for the volume!".to_owned()
    };
    update_volume_phase_with_event(cx, &live, "Failed", EventType::Warning, "VolumeFailedRecycle", &message).map(drop)
}

/// The volume read from the API server; `None` when the read fails, which
/// ends the operation (upstream logs it and returns).
fn get_volume(cx: &mut Cx<'_>, name: &str) -> Step<Option<PersistentVolume>> {
    match cx.call(Request::GetVolume(name.to_owned()))? {
        Reply::Volume(volume) => Ok(Some(*volume)),
        _ => Ok(None),
    }
}

/// Whether the volume's claim is gone, or bound to another volume
/// (upstream `isVolumeReleased`).
fn is_volume_released(view: &dyn View, volume: &PersistentVolume) -> bool {
    let Some(claim_ref) = volume.spec.as_ref().and_then(|s| s.claim_ref.as_ref()) else { return false };
    if claim_ref.uid.as_deref().is_none_or(str::is_empty) {
        return false;
    }
    let claim = view.claim(&claim_ref_key(volume).unwrap_or_default());
    match claim {
        Some(claim) if claim.metadata.uid == claim_ref.uid => {
            let bound_to = claim_volume_name(&claim);
            !bound_to.is_empty() && bound_to != volume_name(volume)
        }
        _ => true,
    }
}
