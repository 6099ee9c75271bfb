//! What the binder's metrics count (upstream
//! `pkg/controller/volume/persistentvolume/metrics/metrics.go`); the
//! driver owns the series themselves.
//!
//! - [`count`]: the `pv_collector_*` gauges, counted from the caches at
//!   each scrape: volumes by plugin and volume mode, and by class as bound
//!   (phase `Bound`) or not; claims by namespace, class and
//!   VolumeAttributesClass as bound (phase `Bound`) or not.
//! - [`Metric`]: what a sync asks to be recorded, through its
//!   [`Cx`](crate::pvbinder::Cx): a retroactive default class written or
//!   not, an operation started or ended.
//! - [`OperationStartTimes`]: upstream's `OperationStartTimeCache`. A
//!   provisioning starts when the claim is handed to its provisioner and
//!   ends when the claim is bound; a deletion starts when a released volume
//!   is left to its deleter and ends when the volume is gone. A failure on
//!   the way counts an error and keeps the start time; the end observes the
//!   whole duration and forgets it.

use std::collections::{BTreeMap, HashMap};
use std::time::Instant;

use k8s_openapi::api::core::v1::{PersistentVolume, PersistentVolumeClaim};

use crate::pvbinder::{claim_class, claim_phase, volume_phase};

/// The plugin name when none can be found (upstream
/// `pluginNameNotAvailable`).
pub const NOT_AVAILABLE: &str = "N/A";

/// The plugin upstream's collector names a volume by: the one plugin of
/// the binder's plugin manager that supports it. That manager holds only
/// the plugins that provision, delete or recycle (upstream
/// `ProbeProvisionableRecyclableVolumePlugins`): host path and NFS. The
/// `fc`, `iscsi` and CSI plugins are probed but filtered out, so a CSI
/// volume is `N/A` here as it is upstream (whose plugin name would
/// otherwise read `kubernetes.io/csi:<driver>`).
pub fn plugin_name(volume: &PersistentVolume) -> &'static str {
    let Some(spec) = volume.spec.as_ref() else { return NOT_AVAILABLE };
    match (spec.host_path.is_some(), spec.nfs.is_some()) {
        (true, false) => "kubernetes.io/host-path",
        (false, true) => "kubernetes.io/nfs",
        // None matched, or several did: upstream's lookup fails either way.
        _ => NOT_AVAILABLE,
    }
}

/// The labels of the claim gauges: `namespace`, `storage_class`,
/// `volume_attributes_class`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ClaimLabels {
    /// The claim's namespace.
    pub namespace: String,
    /// Its class (the beta annotation first, as upstream
    /// `GetPersistentVolumeClaimClass`).
    pub storage_class: String,
    /// Its VolumeAttributesClass, `""` when none.
    pub volume_attributes_class: String,
}

/// The `pv_collector_*` gauges at one scrape, by label values.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Counts {
    /// `pv_collector_total_pv_count{plugin_name, volume_mode}`.
    pub total_pv: BTreeMap<(String, String), u64>,
    /// `pv_collector_bound_pv_count{storage_class}`.
    pub bound_pv: BTreeMap<String, u64>,
    /// `pv_collector_unbound_pv_count{storage_class}`.
    pub unbound_pv: BTreeMap<String, u64>,
    /// `pv_collector_bound_pvc_count{namespace, storage_class, volume_attributes_class}`.
    pub bound_pvc: BTreeMap<ClaimLabels, u64>,
    /// `pv_collector_unbound_pvc_count{namespace, storage_class, volume_attributes_class}`.
    pub unbound_pvc: BTreeMap<ClaimLabels, u64>,
}

/// Counts volumes and claims as upstream's collector does. A volume's
/// class is its `spec.storageClassName` alone (upstream reads no
/// annotation there); a volume with no `volumeMode` (the API server
/// defaults it) counts as `Filesystem`.
pub fn count<'a>(
    volumes: impl IntoIterator<Item = &'a PersistentVolume>,
    claims: impl IntoIterator<Item = &'a PersistentVolumeClaim>,
) -> Counts {
    let mut counts = Counts::default();
    for volume in volumes {
        let spec = volume.spec.as_ref();
        let mode = spec.and_then(|s| s.volume_mode.as_deref()).unwrap_or("Filesystem");
        *counts.total_pv.entry((plugin_name(volume).to_owned(), mode.to_owned())).or_default() += 1;
        let class = spec.and_then(|s| s.storage_class_name.clone()).unwrap_or_default();
        let by_class = if volume_phase(volume) == "Bound" { &mut counts.bound_pv } else { &mut counts.unbound_pv };
        *by_class.entry(class).or_default() += 1;
    }
    for claim in claims {
        let labels = ClaimLabels {
            namespace: claim.metadata.namespace.clone().unwrap_or_default(),
            storage_class: claim_class(claim).to_owned(),
            volume_attributes_class: claim
                .spec
                .as_ref()
                .and_then(|s| s.volume_attributes_class_name.clone())
                .unwrap_or_default(),
        };
        let by_labels = if claim_phase(claim) == "Bound" { &mut counts.bound_pvc } else { &mut counts.unbound_pvc };
        *by_labels.entry(labels).or_default() += 1;
    }
    counts
}

/// An operation timed end to end: the `operation_name` label.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    /// A claim handed to its provisioner, until it is bound.
    Provision,
    /// A released volume left to its deleter, until it is gone.
    Delete,
}

impl Operation {
    /// Upstream's label value.
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::Provision => "provision",
            Operation::Delete => "delete",
        }
    }
}

/// What a sync asks to be recorded; answered [`Reply::Done`](crate::pvbinder::Reply::Done).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Metric {
    /// The default class was written to a claim that had none, or the
    /// write failed (upstream `RecordRetroactiveStorageClassMetric`).
    RetroactiveClass {
        /// Whether the write succeeded.
        ok: bool,
    },
    /// An operation on `key` (a claim's `namespace/name`, or a volume's
    /// name) started, unless one is already timed (upstream
    /// `AddIfNotExist`).
    OperationStarted {
        /// The claim or volume.
        key: String,
        /// The provisioner's name, the `plugin_name` label.
        plugin: String,
        /// Which operation.
        operation: Operation,
    },
    /// The operation on `key` failed, or ended (upstream `RecordMetric`).
    OperationEnded {
        /// The claim or volume.
        key: String,
        /// Whether it failed.
        failed: bool,
    },
}

/// What an ended operation adds to the series.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// One more `volume_operation_errors_total{plugin_name, operation_name}`.
    Error {
        /// `plugin_name` (`N/A` when empty).
        plugin: String,
        /// `operation_name`.
        operation: Operation,
    },
    /// One `volume_operation_total_seconds{plugin_name, operation_name}`
    /// observation.
    Latency {
        /// `plugin_name`.
        plugin: String,
        /// `operation_name`.
        operation: Operation,
        /// From its start to its end.
        seconds: f64,
    },
}

/// The start of each operation being timed, by key (upstream
/// `OperationStartTimeCache`).
#[derive(Debug, Default)]
pub struct OperationStartTimes {
    started: HashMap<String, (String, Operation, Instant)>,
}

impl OperationStartTimes {
    /// Times an operation on `key` from `now`, unless one is timed already.
    pub fn add_if_not_exist(&mut self, key: &str, plugin: &str, operation: Operation, now: Instant) {
        self.started.entry(key.to_owned()).or_insert_with(|| (plugin.to_owned(), operation, now));
    }

    /// Forgets the operation on `key` (a claim deleted before it was bound).
    pub fn delete(&mut self, key: &str) {
        self.started.remove(key);
    }

    /// The operation on `key` failed (an error, its start kept) or ended
    /// at `now` (its duration, its start forgotten); nothing when none is
    /// timed (upstream `RecordMetric`).
    pub fn record(&mut self, key: &str, failed: bool, now: Instant) -> Option<Outcome> {
        if failed {
            let (plugin, operation, _) = self.started.get(key)?;
            let plugin = if plugin.is_empty() { NOT_AVAILABLE.to_owned() } else { plugin.clone() };
            return Some(Outcome::Error { plugin, operation: *operation });
        }
        let (plugin, operation, start) = self.started.remove(key)?;
        Some(Outcome::Latency { plugin, operation, seconds: now.saturating_duration_since(start).as_secs_f64() })
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use serde_json::json;

    use super::*;

    fn volume(spec: serde_json::Value, phase: &str) -> PersistentVolume {
        serde_json::from_value(json!({"metadata": {"name": "v"}, "spec": spec, "status": {"phase": phase}})).unwrap()
    }

    fn claim(
        namespace: &str,
        spec: serde_json::Value,
        annotations: serde_json::Value,
        phase: &str,
    ) -> PersistentVolumeClaim {
        serde_json::from_value(json!({
            "metadata": {"name": "c", "namespace": namespace, "annotations": annotations},
            "spec": spec, "status": {"phase": phase},
        }))
        .unwrap()
    }

    #[test]
    fn plugin_name_is_what_the_binders_plugin_manager_finds() {
        let cases = [
            (json!({"hostPath": {"path": "/tmp/x"}}), "kubernetes.io/host-path"),
            (json!({"nfs": {"server": "s", "path": "/"}}), "kubernetes.io/nfs"),
            (json!({"csi": {"driver": "hostpath.csi.k8s.io", "volumeHandle": "h"}}), "N/A"),
            (json!({"fc": {"wwids": ["w"]}}), "N/A"),
            (json!({"iscsi": {"targetPortal": "p", "iqn": "i", "lun": 0}}), "N/A"),
            (json!({"local": {"path": "/mnt"}}), "N/A"),
            (json!({}), "N/A"),
        ];
        for (spec, want) in cases {
            assert_eq!(plugin_name(&volume(spec.clone(), "Available")), want, "{spec}");
        }
    }

    #[test]
    fn volumes_count_by_plugin_and_mode_and_by_class_bound_or_not() {
        let volumes = [
            volume(
                json!({"hostPath": {"path": "/a"}, "volumeMode": "Filesystem", "storageClassName": "fast"}),
                "Bound",
            ),
            volume(json!({"hostPath": {"path": "/b"}, "volumeMode": "Block", "storageClassName": "fast"}), "Available"),
            volume(json!({"csi": {"driver": "d", "volumeHandle": "h"}, "storageClassName": "fast"}), "Released"),
            volume(json!({"nfs": {"server": "s", "path": "/"}, "volumeMode": "Filesystem"}), "Bound"),
        ];
        let counts = count(&volumes, []);
        let pair = |p: &str, m: &str| (p.to_owned(), m.to_owned());
        let want = BTreeMap::from([
            (pair("kubernetes.io/host-path", "Filesystem"), 1),
            (pair("kubernetes.io/host-path", "Block"), 1),
            (pair("N/A", "Filesystem"), 1),
            (pair("kubernetes.io/nfs", "Filesystem"), 1),
        ]);
        assert_eq!(counts.total_pv, want);
        assert_eq!(counts.bound_pv, BTreeMap::from([("fast".to_owned(), 1), (String::new(), 1)]));
        assert_eq!(counts.unbound_pv, BTreeMap::from([("fast".to_owned(), 2)]));
    }

    #[test]
    fn claims_count_by_namespace_class_and_attributes_class() {
        let beta = json!({"volume.beta.kubernetes.io/storage-class": "old"});
        let claims = [
            claim("a", json!({"storageClassName": "fast"}), json!({}), "Bound"),
            claim("a", json!({"storageClassName": "fast"}), json!({}), "Bound"),
            claim("a", json!({"storageClassName": "fast", "volumeAttributesClassName": "gold"}), json!({}), "Pending"),
            claim("b", json!({"storageClassName": "fast"}), beta, "Lost"),
            claim("b", json!({}), json!({}), ""),
        ];
        let counts = count([], &claims);
        let labels = |ns: &str, class: &str, vac: &str| ClaimLabels {
            namespace: ns.to_owned(),
            storage_class: class.to_owned(),
            volume_attributes_class: vac.to_owned(),
        };
        assert_eq!(counts.bound_pvc, BTreeMap::from([(labels("a", "fast", ""), 2)]));
        let want =
            BTreeMap::from([(labels("a", "fast", "gold"), 1), (labels("b", "old", ""), 1), (labels("b", "", ""), 1)]);
        assert_eq!(counts.unbound_pvc, want);
    }

    #[test]
    fn an_operation_counts_errors_until_it_ends_then_observes_its_whole_duration() {
        let t0 = Instant::now();
        let mut times = OperationStartTimes::default();
        assert_eq!(times.record("ns/c", true, t0), None, "nothing timed, nothing recorded");
        times.add_if_not_exist("ns/c", "csi.example.com", Operation::Provision, t0);
        times.add_if_not_exist("ns/c", "other", Operation::Provision, t0 + Duration::from_secs(1));
        let error = Outcome::Error { plugin: "csi.example.com".to_owned(), operation: Operation::Provision };
        assert_eq!(times.record("ns/c", true, t0 + Duration::from_secs(2)), Some(error));
        let latency =
            Outcome::Latency { plugin: "csi.example.com".to_owned(), operation: Operation::Provision, seconds: 3.0 };
        assert_eq!(times.record("ns/c", false, t0 + Duration::from_secs(3)), Some(latency));
        assert_eq!(times.record("ns/c", false, t0 + Duration::from_secs(4)), None);
    }

    #[test]
    fn an_error_without_plugin_name_is_labelled_not_available_and_a_deleted_claim_is_forgotten() {
        let t0 = Instant::now();
        let mut times = OperationStartTimes::default();
        times.add_if_not_exist("v", "", Operation::Delete, t0);
        let error = Outcome::Error { plugin: "N/A".to_owned(), operation: Operation::Delete };
        assert_eq!(times.record("v", true, t0), Some(error));
        times.delete("v");
        assert_eq!(times.record("v", false, t0), None);
    }
}
