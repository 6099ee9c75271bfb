//! A claim's sync (upstream `syncClaim`, `syncUnboundClaim`,
//! `syncBoundClaim`).

use k8s_openapi::api::core::v1::{PersistentVolume, PersistentVolumeClaim};
use k8s_openapi::api::storage::v1::StorageClass;
use kcm_objects::EventType;

use crate::pvbinder::cx::{Cx, Flow, Reply, Request, Step};
use crate::pvbinder::matching::{
    check_volume_satisfies_claim, claim_class, claim_has_class, find_best_match, is_volume_bound_to_claim,
};
use crate::pvbinder::metrics::Metric;
use crate::pvbinder::status::{bind, claim_event, update_claim_status, update_claim_status_with_event};
use crate::pvbinder::{
    ANN_BIND_COMPLETED, ANN_BOUND_BY_CONTROLLER, ANN_SELECTED_NODE, Settings, View, claim_key, claim_ref_key,
    claim_volume_name, has_annotation, migration, provision,
};

/// The default class's annotation, and its beta spelling (upstream
/// `util.IsDefaultAnnotation`).
const DEFAULT_CLASS_ANNOTATIONS: [&str; 2] =
    ["storageclass.kubernetes.io/is-default-class", "storageclass.beta.kubernetes.io/is-default-class"];

/// One sync of the claim (upstream `syncClaim`).
///
/// # Errors
/// [`Flow::Need`] for the next request to perform, [`Flow::Fail`] when the
/// sync failed and is to be retried.
pub fn sync_claim(view: &dyn View, claim: &PersistentVolumeClaim, settings: Settings, cx: &mut Cx<'_>) -> Step<()> {
    let claim = migration::update_claim_annotations(cx, claim)?;
    if has_annotation(&claim.metadata, ANN_BIND_COMPLETED) {
        sync_bound_claim(view, &claim, settings, cx)
    } else {
        sync_unbound_claim(view, &claim, settings, cx)
    }
}

/// Whether the claim's class waits for its first consumer (upstream
/// `IsDelayBindingMode`; a class that is not there does not).
fn is_delay_binding(view: &dyn View, claim: &PersistentVolumeClaim) -> Result<bool, String> {
    let name = claim_class(claim);
    if name.is_empty() {
        return Ok(false);
    }
    let Some(class) = view.class(name) else { return Ok(false) };
    match class.volume_binding_mode.as_deref() {
        Some(mode) => Ok(mode == "WaitForFirstConsumer"),
        None => Err(format!("VolumeBindingMode not set for StorageClass {name:?}")),
    }
}

/// The default StorageClass: the newest of those marked default, by name
/// among equals (upstream `util.GetDefaultClass`).
fn default_class(view: &dyn View) -> Option<std::sync::Arc<StorageClass>> {
    let is_default = |class: &StorageClass| {
        let annotations = class.metadata.annotations.as_ref();
        DEFAULT_CLASS_ANNOTATIONS.iter().any(|key| annotations.and_then(|a| a.get(*key)).is_some_and(|v| v == "true"))
    };
    let mut defaults: Vec<_> = view.classes().into_iter().filter(|c| is_default(c)).collect();
    defaults.sort_by(|a, b| {
        let created = |c: &StorageClass| c.metadata.creation_timestamp.as_ref().map(|t| t.0);
        created(b).cmp(&created(a)).then_with(|| a.metadata.name.cmp(&b.metadata.name))
    });
    defaults.into_iter().next()
}

fn sync_unbound_claim(view: &dyn View, claim: &PersistentVolumeClaim, settings: Settings, cx: &mut Cx<'_>) -> Step<()> {
    let vac = settings.vac_enabled;
    let requested = claim_volume_name(claim);
    if requested.is_empty() {
        let delay_binding = is_delay_binding(view, claim).map_err(Flow::Fail)?;
        let found = find_best_match(claim, &view.volumes(), delay_binding, vac)
            .map_err(|e| Flow::Fail(format!("error finding PV for claim {:?}: {e}", claim_key(claim))))?;
        if let Some(volume) = found {
            // The end of a provisioning timed since the claim was handed
            // to its provisioner, or one more error on its way.
            let bound = bind(cx, &volume, claim, vac);
            if let Err(Flow::Need(_)) = bound {
                return bound;
            }
            cx.record(Metric::OperationEnded { key: claim_key(claim), failed: bound.is_err() })?;
            return bound;
        }
        if !claim_has_class(claim)
            && let Some(class) = default_class(view)
        {
            let mut updated = claim.clone();
            updated.spec.get_or_insert_with(Default::default).storage_class_name = class.metadata.name.clone();
            let written = cx.claim(Request::UpdateClaim(Box::new(updated)));
            if let Err(Flow::Need(_)) = written {
                return written.map(drop);
            }
            cx.record(Metric::RetroactiveClass { ok: written.is_ok() })?;
            return written.map(drop);
        }
        let selected_node = claim.metadata.annotations.as_ref().is_some_and(|a| a.contains_key(ANN_SELECTED_NODE));
        if delay_binding && !selected_node {
            cx.event(wait_for_consumer_event(view, claim))?;
        } else if !claim_class(claim).is_empty() {
            return provision::provision_claim(view, claim, settings, cx);
        } else {
            let message = "no persistent volumes available for this claim and no storage class is set";
            cx.event(claim_event(claim, EventType::Normal, "FailedBinding", message.to_owned()))?;
        }
        return update_claim_status(cx, claim, "Pending", None, vac).map(drop);
    }
    let Some(volume) = view.volume(requested) else {
        return update_claim_status(cx, claim, "Pending", None, vac).map(drop);
    };
    if volume.spec.as_ref().and_then(|s| s.claim_ref.as_ref()).is_none() {
        if let Err(reason) = check_volume_satisfies_claim(&volume, claim, vac) {
            let message = format!("Cannot bind to requested volume {requested:?}: {reason}");
            cx.event(claim_event(claim, EventType::Warning, "VolumeMismatch", message))?;
            return update_claim_status(cx, claim, "Pending", None, vac).map(drop);
        }
        return bind(cx, &volume, claim, vac);
    }
    if is_volume_bound_to_claim(&volume, claim) {
        return bind(cx, &volume, claim, vac);
    }
    let message = format!("volume {requested:?} already bound to a different claim.");
    cx.event(claim_event(claim, EventType::Warning, "FailedBinding", message))?;
    if !has_annotation(&claim.metadata, ANN_BOUND_BY_CONTROLLER) {
        return update_claim_status(cx, claim, "Pending", None, vac).map(drop);
    }
    Err(Flow::Fail(format!(
        "invalid binding of claim {:?} to volume {requested:?}: volume already claimed by {:?}",
        claim_key(claim),
        claim_ref_key(&volume).unwrap_or_default()
    )))
}

/// The event of a claim waiting for its first consumer, naming the pods
/// not yet scheduled that use it (upstream
/// `emitEventForUnboundDelayBindingClaim`).
fn wait_for_consumer_event(view: &dyn View, claim: &PersistentVolumeClaim) -> crate::plan::Event {
    let pods = view.pods_of_claim(&claim_key(claim));
    let waiting: Vec<&str> = pods
        .iter()
        .filter(|pod| !crate::common::pod::is_pod_terminated(pod) && pod.node_name().is_none())
        .map(|pod| &*pod.metadata.name)
        .collect();
    let (reason, message) = match waiting.as_slice() {
        [] => ("WaitForFirstConsumer", "waiting for first consumer to be created before binding".to_owned()),
        [one] => ("WaitForPodScheduled", format!("waiting for pod {one} to be scheduled")),
        many => ("WaitForPodScheduled", format!("waiting for pods {} to be scheduled", many.join(","))),
    };
    claim_event(claim, EventType::Normal, reason, message)
}

/// The volume read from the API server, `None` when it is not there: a
/// bound claim is called lost only once its volume is gone there too.
///
/// Upstream trusts its cache here. A provisioner that creates a volume and
/// binds its claim itself (kube-sim's) could then make a claim look lost
/// while the volume's watch event is still on its way.
fn read_volume(cx: &mut Cx<'_>, name: &str) -> Step<Option<PersistentVolume>> {
    match cx.call(Request::GetVolume(name.to_owned()))? {
        Reply::Volume(volume) => Ok(Some(*volume)),
        Reply::NotFound => Ok(None),
        Reply::Failed(message) => Err(Flow::Fail(message)),
        other => Err(Flow::Fail(format!("unexpected answer {other:?}"))),
    }
}

fn sync_bound_claim(view: &dyn View, claim: &PersistentVolumeClaim, settings: Settings, cx: &mut Cx<'_>) -> Step<()> {
    let vac = settings.vac_enabled;
    let lost = |cx: &mut Cx<'_>, reason, message| {
        update_claim_status_with_event(cx, claim, "Lost", vac, (EventType::Warning, reason, message))
    };
    let name = claim_volume_name(claim);
    if name.is_empty() {
        return lost(
            cx,
            "ClaimLost",
            "Bound claim has lost reference to PersistentVolume. Data on the volume is lost!",
        );
    }
    let volume = match view.volume(name) {
        Some(volume) => (*volume).clone(),
        None => match read_volume(cx, name)? {
            Some(volume) => volume,
            None => {
                return lost(cx, "ClaimLost", "Bound claim has lost its PersistentVolume. Data on the volume is lost!");
            }
        },
    };
    let claim_ref = volume.spec.as_ref().and_then(|s| s.claim_ref.as_ref());
    match claim_ref {
        None => bind(cx, &volume, claim, vac),
        Some(r) if r.uid == claim.metadata.uid => bind(cx, &volume, claim, vac),
        Some(_) => lost(cx, "ClaimMisbound", "Two claims are bound to the same volume, this one is bound incorrectly"),
    }
}
