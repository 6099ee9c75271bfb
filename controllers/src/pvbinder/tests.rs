//! Upstream's binder tables (`binder_test.go` `TestSync`, `TestSyncBlockVolume`),
//! run against an API server played in memory: each sync runs to its end,
//! its requests answered by the world, and the volumes, claims and events
//! it leaves are compared with upstream's expectations.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::{
    GCEPersistentDiskVolumeSource, ObjectReference, PersistentVolume, PersistentVolumeClaim, PersistentVolumeClaimSpec,
    PersistentVolumeClaimStatus, PersistentVolumeSpec, PersistentVolumeStatus, VolumeResourceRequirements,
};
use k8s_openapi::api::storage::v1::StorageClass;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use kcm_objects::Pod;

use super::*;

const NS: &str = "default";

/// The reclaim policies and annotations upstream's tables spell out.
const R: &str = "Retain";
const D: &str = "Delete";
const BY: &str = ANN_BOUND_BY_CONTROLLER;
const DONE: &str = ANN_BIND_COMPLETED;

/// The API server and caches of one test.
#[derive(Default, Clone)]
struct World {
    volumes: BTreeMap<String, PersistentVolume>,
    claims: BTreeMap<String, PersistentVolumeClaim>,
    /// Claims the API server has but the controller's caches do not
    /// (upstream's `annSkipLocalStore`).
    unseen_claims: BTreeMap<String, PersistentVolumeClaim>,
    /// Volumes the API server has but the controller's caches do not.
    unseen_volumes: BTreeMap<String, PersistentVolume>,
    classes: Vec<StorageClass>,
    pods: Vec<Pod>,
    events: Vec<String>,
    queued: Vec<String>,
    metrics: Vec<metrics::Metric>,
    version: u64,
}

/// The caches as one sync sees them.
struct Snapshot(World);

impl View for Snapshot {
    fn volumes(&self) -> Vec<Arc<PersistentVolume>> {
        self.0.volumes.values().cloned().map(Arc::new).collect()
    }
    fn volume(&self, name: &str) -> Option<Arc<PersistentVolume>> {
        self.0.volumes.get(name).cloned().map(Arc::new)
    }
    fn claim(&self, key: &str) -> Option<Arc<PersistentVolumeClaim>> {
        self.0.claims.get(key).cloned().map(Arc::new)
    }
    fn class(&self, name: &str) -> Option<Arc<StorageClass>> {
        self.0.classes.iter().find(|c| c.metadata.name.as_deref() == Some(name)).cloned().map(Arc::new)
    }
    fn classes(&self) -> Vec<Arc<StorageClass>> {
        self.0.classes.iter().cloned().map(Arc::new).collect()
    }
    fn pods_of_claim(&self, key: &str) -> Vec<Arc<Pod>> {
        let uses = |pod: &Pod| {
            pod.spec.rare().claim_volumes.iter().any(|v| format!("{}/{}", pod.metadata.namespace, v.claim_name) == key)
        };
        self.0.pods.iter().filter(|p| uses(p)).cloned().map(Arc::new).collect()
    }
}

impl World {
    fn bump(&mut self, meta: &mut ObjectMeta) {
        self.version += 1;
        meta.resource_version = Some(self.version.to_string());
    }

    /// Answers one request as an API server would.
    fn answer(&mut self, request: Request) -> Reply {
        match request {
            Request::UpdateVolume(mut volume) | Request::UpdateVolumeStatus(mut volume) => {
                let name = volume.metadata.name.clone().unwrap_or_default();
                if !self.volumes.contains_key(&name) {
                    return Reply::NotFound;
                }
                self.bump(&mut volume.metadata);
                self.volumes.insert(name, (*volume).clone());
                Reply::Volume(volume)
            }
            Request::UpdateClaim(mut claim) | Request::UpdateClaimStatus(mut claim) => {
                let key = claim_key(&claim);
                self.bump(&mut claim.metadata);
                self.claims.insert(key, (*claim).clone());
                Reply::Claim(claim)
            }
            Request::GetClaim { namespace, name } => {
                let key = format!("{namespace}/{name}");
                match self.unseen_claims.get(&key).or_else(|| self.claims.get(&key)) {
                    Some(claim) => Reply::Claim(Box::new(claim.clone())),
                    None => Reply::NotFound,
                }
            }
            Request::GetVolume(name) => match self.unseen_volumes.get(&name).or_else(|| self.volumes.get(&name)) {
                Some(volume) => Reply::Volume(Box::new(volume.clone())),
                None => Reply::NotFound,
            },
            Request::Event(event) => {
                self.events.push(format!("{} {}", event.type_, event.reason));
                Reply::Done
            }
            Request::QueueClaim(key) => {
                self.queued.push(key);
                Reply::Done
            }
            Request::Metric(metric) => {
                self.metrics.push(metric);
                Reply::Done
            }
        }
    }

    /// Runs one sync to its end: `Err` with its failure.
    fn sync(&mut self, run: impl Fn(&Snapshot, &mut Cx<'_>) -> Step<()>) -> Result<(), String> {
        let snapshot = Snapshot(self.clone());
        let mut replies = Vec::new();
        loop {
            match run(&snapshot, &mut Cx::new(&replies)) {
                Ok(()) => return Ok(()),
                Err(Flow::Fail(message)) => return Err(message),
                Err(Flow::Need(request)) => {
                    assert!(replies.len() < 32, "a sync that never ends");
                    replies.push(self.answer(*request));
                }
            }
        }
    }
}

const SETTINGS: Settings = Settings { dynamic_provisioning: true, vac_enabled: true };

/// Upstream's `newVolume`: GCE PD, RWO+ROX, Filesystem, bound to `claim`
/// (`uid`, possibly empty) when `claim` is not empty.
#[expect(clippy::too_many_arguments, reason = "upstream's newVolume, whose tables these are")]
fn volume(
    name: &str,
    capacity: &str,
    uid: &str,
    claim: &str,
    phase: &str,
    policy: &str,
    class: &str,
    annotations: &[&str],
) -> PersistentVolume {
    PersistentVolume {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            resource_version: Some("1".to_owned()),
            annotations: (!annotations.is_empty()).then(|| {
                annotations
                    .iter()
                    .map(|a| {
                        (
                            (*a).to_owned(),
                            if *a == ANN_DYNAMICALLY_PROVISIONED {
                                "kubernetes.io/mock".to_owned()
                            } else {
                                "yes".to_owned()
                            },
                        )
                    })
                    .collect()
            }),
            ..ObjectMeta::default()
        },
        spec: Some(PersistentVolumeSpec {
            capacity: Some([("storage".to_owned(), Quantity(capacity.to_owned()))].into()),
            gce_persistent_disk: Some(GCEPersistentDiskVolumeSource::default()),
            access_modes: Some(vec!["ReadWriteOnce".to_owned(), "ReadOnlyMany".to_owned()]),
            persistent_volume_reclaim_policy: Some(policy.to_owned()),
            storage_class_name: Some(class.to_owned()),
            volume_mode: Some("Filesystem".to_owned()),
            claim_ref: (!claim.is_empty()).then(|| ObjectReference {
                kind: Some("PersistentVolumeClaim".to_owned()),
                api_version: Some("v1".to_owned()),
                uid: (!uid.is_empty()).then(|| uid.to_owned()),
                namespace: Some(NS.to_owned()),
                name: Some(claim.to_owned()),
                ..ObjectReference::default()
            }),
            ..PersistentVolumeSpec::default()
        }),
        status: Some(PersistentVolumeStatus {
            phase: (!phase.is_empty()).then(|| phase.to_owned()),
            ..Default::default()
        }),
    }
}

/// Upstream's `newClaim`: RWO+ROX, Filesystem; a `Bound` claim's status
/// reports its request.
fn claim(
    name: &str,
    uid: &str,
    capacity: &str,
    bound_to: &str,
    phase: &str,
    class: Option<&str>,
    annotations: &[&str],
) -> PersistentVolumeClaim {
    let request: BTreeMap<_, _> = [("storage".to_owned(), Quantity(capacity.to_owned()))].into();
    let modes = vec!["ReadWriteOnce".to_owned(), "ReadOnlyMany".to_owned()];
    PersistentVolumeClaim {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            namespace: Some(NS.to_owned()),
            uid: Some(uid.to_owned()),
            resource_version: Some("1".to_owned()),
            annotations: (!annotations.is_empty())
                .then(|| annotations.iter().map(|a| ((*a).to_owned(), "yes".to_owned())).collect()),
            ..ObjectMeta::default()
        },
        spec: Some(PersistentVolumeClaimSpec {
            access_modes: Some(modes.clone()),
            resources: Some(VolumeResourceRequirements { requests: Some(request.clone()), ..Default::default() }),
            volume_name: (!bound_to.is_empty()).then(|| bound_to.to_owned()),
            storage_class_name: class.map(str::to_owned),
            volume_mode: Some("Filesystem".to_owned()),
            ..PersistentVolumeClaimSpec::default()
        }),
        status: Some(PersistentVolumeClaimStatus {
            phase: Some(phase.to_owned()),
            access_modes: (phase == "Bound").then_some(modes),
            capacity: (phase == "Bound").then_some(request),
            ..Default::default()
        }),
    }
}

fn with_capacity(mut claim: PersistentVolumeClaim, capacity: &str) -> PersistentVolumeClaim {
    claim.status.get_or_insert_with(Default::default).capacity =
        Some([("storage".to_owned(), Quantity(capacity.to_owned()))].into());
    claim
}

fn with_selector(mut claim: PersistentVolumeClaim) -> PersistentVolumeClaim {
    let labels = [("foo".to_owned(), "true".to_owned()), ("bar".to_owned(), "false".to_owned())].into();
    claim.spec.get_or_insert_with(Default::default).selector =
        Some(LabelSelector { match_labels: Some(labels), ..Default::default() });
    claim
}

fn with_labels(mut volume: PersistentVolume) -> PersistentVolume {
    volume.metadata.labels =
        Some([("foo".to_owned(), "true".to_owned()), ("bar".to_owned(), "false".to_owned())].into());
    volume
}

fn with_mode(mut volume: PersistentVolume, mode: &str) -> PersistentVolume {
    volume.spec.get_or_insert_with(Default::default).volume_mode = Some(mode.to_owned());
    volume
}

fn with_claim_mode(mut claim: PersistentVolumeClaim, mode: &str) -> PersistentVolumeClaim {
    claim.spec.get_or_insert_with(Default::default).volume_mode = Some(mode.to_owned());
    claim
}

fn with_access_modes(mut claim: PersistentVolumeClaim, modes: &[&str]) -> PersistentVolumeClaim {
    claim.spec.get_or_insert_with(Default::default).access_modes =
        Some(modes.iter().map(|m| (*m).to_owned()).collect());
    claim
}

fn with_annotation(mut claim: PersistentVolumeClaim, key: &str, value: &str) -> PersistentVolumeClaim {
    claim.metadata.annotations.get_or_insert_with(Default::default).insert(key.to_owned(), value.to_owned());
    claim
}

fn storage_class(name: &str, provisioner: &str, mode: &str) -> StorageClass {
    StorageClass {
        metadata: ObjectMeta { name: Some(name.to_owned()), ..ObjectMeta::default() },
        provisioner: provisioner.to_owned(),
        reclaim_policy: Some("Delete".to_owned()),
        volume_binding_mode: Some(mode.to_owned()),
        ..StorageClass::default()
    }
}

/// What a test compares of a volume: upstream's fields, not the
/// resourceVersion.
fn volume_view(volume: &PersistentVolume) -> String {
    let spec = volume.spec.clone().unwrap_or_default();
    let claim_ref = spec.claim_ref.map(|r| (r.uid.unwrap_or_default(), r.name.unwrap_or_default())).unwrap_or_default();
    let status = volume.status.clone().unwrap_or_default();
    format!(
        "{} {:?} {:?} phase={:?} message={:?} annotations={:?} finalizers={:?}",
        volume_name(volume),
        spec.capacity,
        claim_ref,
        status.phase.unwrap_or_default(),
        status.message.unwrap_or_default(),
        volume.metadata.annotations.clone().unwrap_or_default(),
        volume.metadata.finalizers.clone().unwrap_or_default(),
    )
}

fn claim_view(claim: &PersistentVolumeClaim) -> String {
    let status = claim.status.clone().unwrap_or_default();
    format!(
        "{} {:?} volume={:?} phase={:?} capacity={:?} modes={:?} annotations={:?}",
        claim_key(claim),
        claim.metadata.uid,
        claim_volume_name(claim),
        status.phase.unwrap_or_default(),
        status.capacity.unwrap_or_default(),
        status.access_modes.unwrap_or_default(),
        claim.metadata.annotations.clone().unwrap_or_default(),
    )
}

/// One of upstream's cases.
struct Case {
    name: &'static str,
    volumes: Vec<PersistentVolume>,
    expected_volumes: Vec<PersistentVolume>,
    claims: Vec<PersistentVolumeClaim>,
    expected_claims: Vec<PersistentVolumeClaim>,
    events: &'static [&'static str],
    /// Sync the claim (else the volume) of the first object given.
    of_claim: bool,
    /// The sync fails (upstream `testSyncClaimError`).
    fails: bool,
}

fn run(case: Case, world: World) {
    let mut world = World { version: 100, ..world };
    world.volumes = case.volumes.iter().map(|v| (volume_name(v).to_owned(), v.clone())).collect();
    world.claims = case.claims.iter().map(|c| (claim_key(c), c.clone())).collect();
    let result = if case.of_claim {
        let claim = case.claims[0].clone();
        world.sync(|view, cx| sync_claim(view, &claim, SETTINGS, cx))
    } else {
        let volume = case.volumes[0].clone();
        world.sync(|view, cx| sync_volume(view, &volume, SETTINGS, cx))
    };
    assert_eq!(result.is_err(), case.fails, "{}: {result:?}", case.name);
    let volumes: Vec<_> = world.volumes.values().map(volume_view).collect();
    let mut expected_volumes: Vec<_> = case.expected_volumes.iter().map(volume_view).collect();
    expected_volumes.sort();
    assert_eq!(volumes, expected_volumes, "{}: volumes", case.name);
    let claims: Vec<_> = world.claims.values().map(claim_view).collect();
    let mut expected_claims: Vec<_> = case.expected_claims.iter().map(claim_view).collect();
    expected_claims.sort();
    assert_eq!(claims, expected_claims, "{}: claims", case.name);
    assert_eq!(world.events, case.events, "{}: events", case.name);
}

mod bind;
mod recorded;
mod volumes;
