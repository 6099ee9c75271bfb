//! kube-controller-manager's controllers: the upstream table [`CONTROLLERS`]
//! (names, aliases, whether `*` starts each) and [`ControllerSet::resolve`],
//! which resolves a `--controllers` list as upstream does, given the names
//! of the controllers kcm-rs implements (the daemon's controller table,
//! `crate::controllers`, knows them; configuration does not). The
//! `--controllers` help text is built from this table in `command.rs`.

use std::collections::BTreeSet;

use super::gate_table::gate;
use super::{Error, Result};

/// Whether upstream's `*` starts a controller (1.37).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpstreamDefault {
    /// Started by `*`.
    On,
    /// Disabled by default: listed in upstream's "Disabled-by-default controllers".
    Off,
    /// Started by `*` only when all these feature gates are on (upstream's
    /// `requiredFeatureGates`); see [`UpstreamDefault::under_star`].
    Gated(&'static [&'static str]),
}

impl UpstreamDefault {
    /// Whether `*` starts the controller with 1.37's default feature gates
    /// (a gated controller follows its gates' 1.37 defaults: the
    /// resourceclaim-controller runs, as DynamicResourceAllocation is GA).
    pub fn under_star(self) -> bool {
        match self {
            UpstreamDefault::On => true,
            UpstreamDefault::Off => false,
            UpstreamDefault::Gated(names) => names.iter().all(|name| gate(name).is_some_and(|g| g.at_target().default)),
        }
    }
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
}

const fn c(name: &'static str, aliases: &'static [&'static str], d: UpstreamDefault) -> ControllerDescriptor {
    ControllerDescriptor { name, aliases, upstream_default: d }
}

use UpstreamDefault::{Gated, Off, On};

/// Every kube-controller-manager 1.37 controller, in upstream's help order
/// (sorted by canonical name), as `NewControllerDescriptors` of
/// k8s.io/kubernetes v1.37.2 registers them: names, aliases, disabled by
/// default, required feature gates. The cloud controllers
/// (cloud-node-lifecycle, node-route, service-lb) are not among them: 1.37
/// removed them from kube-controller-manager (they live in the cloud
/// controller managers), so their names are unknown controllers here too.
/// The integration test `upstream_help` compares this table, through
/// `--help`, with kube-controller-manager 1.37.2's.
pub const CONTROLLERS: &[ControllerDescriptor] = &[
    c("bootstrap-signer-controller", &["bootstrapsigner"], Off),
    c("certificatesigningrequest-approving-controller", &["csrapproving"], On),
    c("certificatesigningrequest-cleaner-controller", &["csrcleaner"], On),
    c("certificatesigningrequest-signing-controller", &["csrsigning"], On),
    c("clusterrole-aggregation-controller", &["clusterrole-aggregation"], On),
    c("cronjob-controller", &["cronjob"], On),
    c("daemonset-controller", &["daemonset"], On),
    c("deployment-controller", &["deployment"], On),
    c("device-taint-eviction-controller", &[], Gated(&["DynamicResourceAllocation", "DRADeviceTaints"])),
    c("disruption-controller", &["disruption"], On),
    c("endpoints-controller", &["endpoint"], On),
    c("endpointslice-controller", &["endpointslice"], On),
    c("endpointslice-mirroring-controller", &["endpointslicemirroring"], On),
    c("ephemeral-volume-controller", &["ephemeral-volume"], On),
    c("garbage-collector-controller", &["garbagecollector"], On),
    c("horizontal-pod-autoscaler-controller", &["horizontalpodautoscaling"], On),
    c("job-controller", &["job"], On),
    c("kube-apiserver-serving-clustertrustbundle-publisher-controller", &[], Gated(&["ClusterTrustBundle"])),
    c("legacy-serviceaccount-token-cleaner-controller", &["legacy-service-account-token-cleaner"], On),
    c("namespace-controller", &["namespace"], On),
    c("node-ipam-controller", &["nodeipam"], On),
    c("node-lifecycle-controller", &["nodelifecycle"], On),
    c("persistentvolume-attach-detach-controller", &["attachdetach"], On),
    c("persistentvolume-binder-controller", &["persistentvolume-binder"], On),
    c("persistentvolume-expander-controller", &["persistentvolume-expander"], On),
    c("persistentvolume-protection-controller", &["pv-protection"], On),
    c("persistentvolumeclaim-protection-controller", &["pvc-protection"], On),
    c("pod-garbage-collector-controller", &["podgc"], On),
    c("podcertificaterequest-cleaner-controller", &[], Gated(&["PodCertificateRequest"])),
    c("podgroup-protection-controller", &[], Gated(&["GenericWorkload"])),
    c("replicaset-controller", &["replicaset"], On),
    c("replicationcontroller-controller", &["replicationcontroller"], On),
    c("resourceclaim-controller", &["resource-claim-controller"], Gated(&["DynamicResourceAllocation"])),
    c("resourcepoolstatusrequest-controller", &[], Gated(&["DRAResourcePoolStatus"])),
    c("resourcequota-controller", &["resourcequota"], On),
    c("root-ca-certificate-publisher-controller", &["root-ca-cert-publisher"], On),
    c("selinux-warning-controller", &[], Off),
    c("service-cidr-controller", &[], Gated(&["MultiCIDRServiceAllocator"])),
    c("serviceaccount-controller", &["serviceaccount"], On),
    c("serviceaccount-token-controller", &["serviceaccount-token"], On),
    c("statefulset-controller", &["statefulset"], On),
    c("storage-version-migrator-controller", &["svm"], On),
    c(
        "storageversion-garbage-collector-controller",
        &["storage-version-gc"],
        Gated(&["APIServerIdentity", "StorageVersionAPI"]),
    ),
    c("taint-eviction-controller", &[], Gated(&["SeparateTaintEvictionController"])),
    c("token-cleaner-controller", &["tokencleaner"], Off),
    c("ttl-after-finished-controller", &["ttl-after-finished"], On),
    c("ttl-controller", &["ttl"], On),
    c("validatingadmissionpolicy-status-controller", &[], On),
    c("volumeattributesclass-protection-controller", &[], Gated(&["VolumeAttributesClass"])),
];

/// Canonical name for `name` (itself, or the controller an alias stands for);
/// `None` when no upstream controller has that name.
pub fn canonical_controller_name(name: &str) -> Option<&'static str> {
    CONTROLLERS.iter().find(|c| c.name == name || c.aliases.contains(&name)).map(|c| c.name)
}

/// The controllers to run, resolved from `--controllers` (and
/// `--enable-garbage-collector`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ControllerSet {
    enabled: BTreeSet<&'static str>,
    not_running: Vec<&'static str>,
}

impl ControllerSet {
    /// Resolves a `--controllers` list as upstream does.
    ///
    /// Each entry is `name`, `-name` or `*`; aliases are rewritten to
    /// canonical names keeping the `-`. For each controller the first entry
    /// naming it wins; otherwise it runs if `*` is present and upstream enables
    /// it by default. Controllers kcm-rs does not implement, whether `*` or
    /// their name selects them, do not run and are listed by
    /// [`ControllerSet::not_running`], for the daemon to say so at start:
    /// kubeadm's `--controllers=*,bootstrapsigner,tokencleaner` must start
    /// kcm-rs.
    ///
    /// # Errors
    ///
    /// [`Error::UnknownController`] for a name no upstream controller has (the
    /// first such entry).
    pub fn resolve<S: AsRef<str>>(entries: &[S], implemented: &[&'static str]) -> Result<ControllerSet> {
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
        let mut not_running = Vec::new();
        for desc in CONTROLLERS {
            let explicit = canonical.iter().find(|(_, n)| *n == desc.name).map(|(disable, _)| !disable);
            let on = match explicit {
                Some(on) => on,
                None => star && desc.upstream_default.under_star(),
            };
            if !on {
                continue;
            }
            if implemented.contains(&desc.name) {
                enabled.insert(desc.name);
            } else {
                not_running.push(desc.name);
            }
        }
        Ok(ControllerSet { enabled, not_running })
    }

    /// Whether the controller of this canonical name runs.
    pub fn contains(&self, name: &str) -> bool {
        self.enabled.contains(name)
    }

    /// The canonical names of the controllers that run, sorted.
    pub fn iter(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.enabled.iter().copied()
    }

    /// Controllers upstream would start for this list that kcm-rs does not
    /// implement (selected by `*` or by name), in upstream's order: they do
    /// not run, and the daemon says so at start-up.
    pub fn not_running(&self) -> &[&'static str] {
        &self.not_running
    }

    pub(super) fn remove(&mut self, name: &str) {
        self.enabled.remove(name);
    }
}
