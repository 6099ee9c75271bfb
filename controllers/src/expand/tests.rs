//! Upstream's `TestSyncHandler`, row by row: the row's cached claim and
//! the volume its fake client serves, one sync run as the driver runs it
//! (the volume read by name, [`decide`], the status patch applied as the
//! API server applies it), then whether the sync failed, the events, and
//! the claim's annotations. Then the rows upstream's table lacks: the
//! handlers' filters, a volume bound elsewhere, a claim not grown, a
//! FlexVolume, a resizer already named.

use k8s_openapi::api::core::v1::{PersistentVolume, PersistentVolumeClaim};
use serde_json::{Value, json};

use super::*;

// === fixtures (upstream's) ===

/// `getFakePersistentVolume`: a volume of `plugin` (a CSI driver when its
/// name holds `csi`, AWS EBS otherwise) bound to a claim in `default` of
/// uid `claim_uid`.
fn volume(name: &str, plugin: &str, size: &str, claim_uid: &str) -> Value {
    let source = if plugin.contains("csi") {
        json!({"csi": {"driver": plugin, "volumeHandle": name}})
    } else {
        json!({"awsElasticBlockStore": {"volumeID": name, "fsType": "ext4"}})
    };
    let mut volume = json!({
        "metadata": {"name": name},
        "spec": {"claimRef": {"namespace": "default", "uid": claim_uid}, "capacity": {"storage": size}},
    });
    volume["spec"].as_object_mut().expect("spec").extend(source.as_object().expect("source").clone());
    volume
}

/// `getFakePersistentVolumeClaim`, `Bound` (the phase the handlers ask
/// for; upstream's sync does not read it).
fn claim(name: &str, volume_name: &str, status_size: &str, request_size: &str, uid: &str) -> Value {
    json!({
        "metadata": {"name": name, "namespace": "default", "uid": uid, "resourceVersion": "7"},
        "spec": {"volumeName": volume_name, "resources": {"requests": {"storage": request_size}}},
        "status": {"phase": "Bound", "capacity": {"storage": status_size}},
    })
}

fn typed<T: k8s_openapi::serde::de::DeserializeOwned>(value: Value) -> T {
    serde_json::from_value(value).expect("a valid object")
}

/// What one sync did.
#[derive(Debug)]
struct Outcome {
    failed: Option<String>,
    events: Vec<(EventType, String, String)>,
    annotations: Value,
}

/// One sync of `claim`, the fake client serving `volume` (upstream's
/// reactors: the read answers the row's volume whatever the name, the
/// status patch is applied to the claim).
fn sync(claim: Value, volume: Option<Value>) -> Outcome {
    let mut claim: PersistentVolumeClaim = typed(claim);
    let mut events = Vec::new();
    let record = |events: &mut Vec<_>, e: Event| events.push((e.type_, e.reason, e.message));
    let failed = (|| {
        volume_name(&claim)?;
        let volume: PersistentVolume = typed(volume.ok_or("persistentvolumes not found")?);
        match decide(&claim, &volume) {
            Decision::Nothing => {}
            Decision::NotBound(error) => return Err(error),
            Decision::External(event) | Decision::Flex(event) => record(&mut events, event),
            Decision::Migrated { event, patch, .. } => {
                record(&mut events, event);
                if let Some(patch) = patch {
                    assert_eq!(patch["metadata"]["resourceVersion"], "7", "the patch carries the claim's version");
                    let annotations = patch["metadata"]["annotations"].as_object().expect("annotations");
                    let mine = claim.metadata.annotations.get_or_insert_default();
                    annotations.iter().for_each(|(k, v)| drop(mine.insert(k.clone(), v.as_str().unwrap().into())));
                }
            }
        }
        Ok::<_, String>(())
    })()
    .err();
    Outcome { failed, events, annotations: json!(claim.metadata.annotations) }
}

fn normal(message: &str) -> (EventType, String, String) {
    (EventType::Normal, EXTERNAL_EXPANDING.to_owned(), message.to_owned())
}

const EBS_WAITING: &str =
    "CSI migration enabled for kubernetes.io/aws-ebs; waiting for external resizer to expand the pvc";

// === upstream's rows ===

#[test]
fn when_pvc_has_no_pv_binding() {
    let outcome = sync(claim("no-pv-pvc", "", "1Gi", "1Gi", ""), None);
    assert!(outcome.failed.is_some(), "{outcome:?}");
    assert!(outcome.events.is_empty());
}

#[test]
fn when_pvc_and_pv_has_everything_for_in_tree_plugin() {
    let outcome = sync(
        claim("good-pvc", "vol-3", "1Gi", "2Gi", "good-pvc-vol-3"),
        Some(volume("vol-3", "kubernetes.io/aws-ebs", "1Gi", "good-pvc-vol-3")),
    );
    assert_eq!(outcome.failed, None);
    assert_eq!(outcome.annotations, json!({ANN_STORAGE_RESIZER: "ebs.csi.aws.com"}));
    assert_eq!(outcome.events, [normal(EBS_WAITING)]);
}

#[test]
fn if_pv_has_pre_resize_capacity_annotation_the_claim_is_handed_on() {
    let mut pv = volume("vol-4", "kubernetes.io/aws-ebs", "2Gi", "good-pvc-vol-4");
    pv["metadata"]["annotations"] = json!({ANN_PRE_RESIZE_CAPACITY: "1Gi"});
    let outcome = sync(claim("good-pvc", "vol-4", "2Gi", "2Gi", "good-pvc-vol-4"), Some(pv));
    assert_eq!(outcome.failed, None);
    assert_eq!(outcome.events, [normal(EBS_WAITING)]);
}

#[test]
fn for_csi_plugin_without_migration_path() {
    let outcome = sync(
        claim("ceph-csi-pvc", "vol-5", "1Gi", "2Gi", "ceph-csi-pvc-vol-6"),
        Some(volume("vol-5", "com.csi.ceph", "1Gi", "ceph-csi-pvc-vol-6")),
    );
    assert_eq!(outcome.failed, None);
    assert_eq!(outcome.events, [normal("waiting for an external controller to expand this PVC")]);
    assert_eq!(outcome.annotations, Value::Null);
}

// === beyond upstream's table ===

#[test]
fn a_volume_bound_to_another_claim_fails_the_sync() {
    let outcome = sync(
        claim("good-pvc", "vol-3", "1Gi", "2Gi", "good-pvc-vol-3"),
        Some(volume("vol-3", "kubernetes.io/aws-ebs", "1Gi", "someone-else")),
    );
    assert_eq!(
        outcome.failed.as_deref(),
        Some("persistent Volume is not bound to PVC being updated : default/good-pvc")
    );
    assert!(outcome.events.is_empty());
}

#[test]
fn a_claim_not_grown_needs_nothing() {
    let outcome = sync(
        claim("good-pvc", "vol-3", "2Gi", "2Gi", "uid"),
        Some(volume("vol-3", "kubernetes.io/aws-ebs", "2Gi", "uid")),
    );
    assert_eq!(outcome.failed, None);
    assert!(outcome.events.is_empty());
    assert_eq!(outcome.annotations, Value::Null);
}

#[test]
fn a_flex_volume_gets_a_warning_and_no_annotation() {
    let mut pv = volume("vol-6", "csi", "1Gi", "uid");
    pv["spec"] = json!({"claimRef": {"namespace": "default", "uid": "uid"}, "flexVolume": {"driver": "acme/lvm"}});
    let outcome = sync(claim("flex-pvc", "vol-6", "1Gi", "2Gi", "uid"), Some(pv));
    assert_eq!(outcome.failed, None);
    assert_eq!(outcome.events.len(), 1);
    assert_eq!((outcome.events[0].0, outcome.events[0].1.as_str()), (EventType::Warning, VOLUME_RESIZE_FAILED));
    assert_eq!(outcome.annotations, Value::Null);
}

#[test]
fn a_resizer_already_named_is_not_patched_again() {
    let mut pvc = claim("good-pvc", "vol-3", "1Gi", "2Gi", "uid");
    pvc["metadata"]["annotations"] = json!({ANN_STORAGE_RESIZER: "ebs.csi.aws.com"});
    let pvc: PersistentVolumeClaim = typed(pvc);
    assert_eq!(resizer_patch(&pvc, "ebs.csi.aws.com"), None);
    assert!(resizer_patch(&pvc, "pd.csi.storage.gke.io").is_some());
}

#[test]
fn handlers_queue_bound_claims_that_grew() {
    let bound: PersistentVolumeClaim = typed(claim("c", "v", "1Gi", "1Gi", "u"));
    let mut pending = claim("c", "v", "1Gi", "1Gi", "u");
    pending["status"]["phase"] = json!("Pending");
    let pending: PersistentVolumeClaim = typed(pending);
    assert!(should_queue(&bound));
    assert!(!should_queue(&pending));
    let requested: PersistentVolumeClaim = typed(claim("c", "v", "1Gi", "2Gi", "u"));
    let expanded: PersistentVolumeClaim = typed(claim("c", "v", "1536Mi", "1Gi", "u"));
    let relabelled = bound.clone();
    assert!(update_queues(&bound, &requested));
    assert!(update_queues(&bound, &expanded));
    assert!(!update_queues(&bound, &relabelled));
    assert!(!update_queues(&requested, &bound), "a smaller request queues nothing");
}
