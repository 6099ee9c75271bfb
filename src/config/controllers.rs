//! kube-controller-manager's controllers: the upstream table [`CONTROLLERS`]
//! (names, aliases, whether `*` starts each, whether kcm-rs implements it),
//! the [`Controller`]s kcm-rs runs, and [`ControllerSet::resolve`], which
//! resolves a `--controllers` list as upstream does. The `--controllers` help
//! text is built from this table in `flags.rs`.

use std::collections::BTreeSet;
use std::fmt;

use super::{Error, Result};

/// Whether upstream's `*` starts a controller (v1.33, default feature gates).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpstreamDefault {
    /// Started by `*`.
    On,
    /// Disabled by default: listed in upstream's "Disabled-by-default controllers".
    Off,
    /// Behind a feature gate that is off by default; skipped by `*`.
    Gated(&'static str),
}

/// One of kube-controller-manager's controllers, as its `names` package and
/// controller descriptors define it.
#[derive(Debug, Clone, Copy)]
pub struct ControllerDescriptor {
    /// Canonical name (cmd/kube-controller-manager/names).
    pub name: &'static str,
    /// Legacy names `--controllers` still accepts.
    pub aliases: &'static [&'static str],
    /// Whether upstream's `*` enables it.
    pub upstream_default: UpstreamDefault,
    /// Whether kcm-rs implements it.
    pub implemented: bool,
}

const fn c(
    name: &'static str,
    aliases: &'static [&'static str],
    d: UpstreamDefault,
    ours: bool,
) -> ControllerDescriptor {
    ControllerDescriptor { name, aliases, upstream_default: d, implemented: ours }
}

use UpstreamDefault::{Gated, Off, On};

/// Every kube-controller-manager controller (v1.33), in upstream's help order
/// (sorted by canonical name).
pub const CONTROLLERS: &[ControllerDescriptor] = &[
    c("bootstrap-signer-controller", &["bootstrapsigner"], Off, false),
    c("certificatesigningrequest-approving-controller", &["csrapproving"], On, false),
    c("certificatesigningrequest-cleaner-controller", &["csrcleaner"], On, false),
    c("certificatesigningrequest-signing-controller", &["csrsigning"], On, false),
    c("cloud-node-lifecycle-controller", &["cloud-node-lifecycle"], On, false),
    c("clusterrole-aggregation-controller", &["clusterrole-aggregation"], On, false),
    c("cronjob-controller", &["cronjob"], On, false),
    c("daemonset-controller", &["daemonset"], On, false),
    c("deployment-controller", &["deployment"], On, true),
    c("device-taint-eviction-controller", &[], Gated("DRADeviceTaints"), false),
    c("disruption-controller", &["disruption"], On, false),
    c("endpoints-controller", &["endpoint"], On, false),
    c("endpointslice-controller", &["endpointslice"], On, false),
    c("endpointslice-mirroring-controller", &["endpointslicemirroring"], On, false),
    c("ephemeral-volume-controller", &["ephemeral-volume"], On, false),
    c("garbage-collector-controller", &["garbagecollector"], On, true),
    c("horizontal-pod-autoscaler-controller", &["horizontalpodautoscaling"], On, false),
    c("job-controller", &["job"], On, false),
    c("kube-apiserver-serving-clustertrustbundle-publisher-controller", &[], Gated("ClusterTrustBundle"), false),
    c("legacy-serviceaccount-token-cleaner-controller", &["legacy-service-account-token-cleaner"], On, false),
    c("namespace-controller", &["namespace"], On, true),
    c("node-ipam-controller", &["nodeipam"], On, false),
    c("node-lifecycle-controller", &["nodelifecycle"], On, true),
    c("node-route-controller", &["route"], On, false),
    c("persistentvolume-attach-detach-controller", &["attachdetach"], On, false),
    c("persistentvolume-binder-controller", &["persistentvolume-binder"], On, false),
    c("persistentvolume-expander-controller", &["persistentvolume-expander"], On, false),
    c("persistentvolume-protection-controller", &["pv-protection"], On, false),
    c("persistentvolumeclaim-protection-controller", &["pvc-protection"], On, false),
    c("pod-garbage-collector-controller", &["podgc"], On, false),
    c("replicaset-controller", &["replicaset"], On, true),
    c("replicationcontroller-controller", &["replicationcontroller"], On, false),
    c("resourceclaim-controller", &["resource-claim-controller"], Gated("DynamicResourceAllocation"), false),
    c("resourcequota-controller", &["resourcequota"], On, false),
    c("root-ca-certificate-publisher-controller", &["root-ca-cert-publisher"], On, false),
    c("selinux-warning-controller", &[], Off, false),
    c("service-cidr-controller", &[], On, false),
    c("service-lb-controller", &["service"], On, false),
    c("serviceaccount-controller", &["serviceaccount"], On, false),
    c("serviceaccount-token-controller", &["serviceaccount-token"], On, false),
    c("statefulset-controller", &["statefulset"], On, false),
    c("storage-version-migrator-controller", &[], Gated("StorageVersionMigrator"), false),
    c("storageversion-garbage-collector-controller", &["storage-version-gc"], Gated("StorageVersionAPI"), false),
    c("taint-eviction-controller", &[], On, true),
    c("token-cleaner-controller", &["tokencleaner"], Off, false),
    c("ttl-after-finished-controller", &["ttl-after-finished"], On, false),
    c("ttl-controller", &["ttl"], On, false),
    c("validatingadmissionpolicy-status-controller", &["validatingadmissionpolicy-status"], On, false),
    c("volumeattributesclass-protection-controller", &[], Gated("VolumeAttributesClass"), false),
];

/// Canonical name for `name` (itself, or the controller an alias stands for);
/// `None` when no upstream controller has that name.
pub fn canonical_controller_name(name: &str) -> Option<&'static str> {
    CONTROLLERS.iter().find(|c| c.name == name || c.aliases.contains(&name)).map(|c| c.name)
}

/// A controller kcm-rs runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Controller {
    /// `deployment-controller`.
    Deployment,
    /// `replicaset-controller`.
    ReplicaSet,
    /// `namespace-controller`.
    Namespace,
    /// `node-lifecycle-controller`.
    NodeLifecycle,
    /// `taint-eviction-controller`.
    TaintEviction,
    /// `garbage-collector-controller`.
    GarbageCollector,
}

impl Controller {
    /// Every controller kcm-rs implements.
    pub const ALL: [Controller; 6] = [
        Controller::Deployment,
        Controller::ReplicaSet,
        Controller::Namespace,
        Controller::NodeLifecycle,
        Controller::TaintEviction,
        Controller::GarbageCollector,
    ];

    /// Upstream's canonical name.
    pub fn name(self) -> &'static str {
        match self {
            Controller::Deployment => "deployment-controller",
            Controller::ReplicaSet => "replicaset-controller",
            Controller::Namespace => "namespace-controller",
            Controller::NodeLifecycle => "node-lifecycle-controller",
            Controller::TaintEviction => "taint-eviction-controller",
            Controller::GarbageCollector => "garbage-collector-controller",
        }
    }

    /// The controller with this canonical name.
    pub fn from_name(name: &str) -> Option<Controller> {
        Controller::ALL.into_iter().find(|c| c.name() == name)
    }
}

impl fmt::Display for Controller {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The controllers to run, resolved from `--controllers` (and
/// `--enable-garbage-collector`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ControllerSet {
    enabled: BTreeSet<Controller>,
    skipped: Vec<&'static str>,
}

impl ControllerSet {
    /// Resolves a `--controllers` list as upstream does.
    ///
    /// Each entry is `name`, `-name` or `*`; aliases are rewritten to
    /// canonical names keeping the `-`. For each controller the first entry
    /// naming it wins; otherwise it runs if `*` is present and upstream enables
    /// it by default. Controllers kcm-rs does not implement are skipped under
    /// `*` (see [`ControllerSet::skipped`]) and are an error when enabled by
    /// name.
    ///
    /// # Errors
    ///
    /// [`Error::UnknownController`] for a name no upstream controller has (the
    /// first such entry), [`Error::UnimplementedControllers`] naming every
    /// explicitly enabled controller kcm-rs lacks.
    pub fn resolve<S: AsRef<str>>(entries: &[S]) -> Result<ControllerSet> {
        let mut canonical: Vec<(bool, &'static str)> = Vec::new();
        let mut star = false;
        for entry in entries.iter().map(AsRef::as_ref).filter(|e| !e.is_empty()) {
            if entry == "*" {
                star = true;
                continue;
            }
            let (disable, bare) = match entry.strip_prefix('-') {
                Some(bare) => (true, bare),
                None => (false, entry),
            };
            let name = canonical_controller_name(bare).ok_or_else(|| Error::UnknownController(bare.to_owned()))?;
            canonical.push((disable, name));
        }
        let mut enabled = BTreeSet::new();
        let mut skipped = Vec::new();
        let mut unimplemented = Vec::new();
        for desc in CONTROLLERS {
            let explicit = canonical.iter().find(|(_, n)| *n == desc.name).map(|(disable, _)| !disable);
            let on = match explicit {
                Some(on) => on,
                None => star && desc.upstream_default == On,
            };
            if !on {
                continue;
            }
            match (desc.implemented, explicit) {
                (true, _) => {
                    if let Some(c) = Controller::from_name(desc.name) {
                        enabled.insert(c);
                    }
                }
                (false, Some(true)) => unimplemented.push(desc.name),
                (false, _) => skipped.push(desc.name),
            }
        }
        if !unimplemented.is_empty() {
            return Err(Error::UnimplementedControllers(unimplemented));
        }
        Ok(ControllerSet { enabled, skipped })
    }

    /// Whether `controller` runs.
    pub fn contains(&self, controller: Controller) -> bool {
        self.enabled.contains(&controller)
    }

    /// The controllers that run, in a stable order.
    pub fn iter(&self) -> impl Iterator<Item = Controller> + '_ {
        self.enabled.iter().copied()
    }

    /// Controllers upstream would start for this list that kcm-rs does not
    /// implement (selected by `*`, not by name): worth one log line at start-up.
    pub fn skipped(&self) -> &[&'static str] {
        &self.skipped
    }

    pub(super) fn remove(&mut self, controller: Controller) {
        self.enabled.remove(&controller);
    }
}
