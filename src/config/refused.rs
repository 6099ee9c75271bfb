//! kube-controller-manager flags kcm-rs does not implement: the table
//! [`UNIMPLEMENTED_UPSTREAM_FLAGS`] that [`Flags::command`](super::Flags::command)
//! turns into hidden arguments so that each is refused by name. Parsing and
//! the refusal message are `command.rs`'s.

/// How an upstream flag takes its value, so the refusal consumes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlagKind {
    /// A boolean: `--flag` or `--flag=false`.
    Bool,
    /// Takes a value: `--flag value` or `--flag=value`.
    Value,
}

/// One kube-controller-manager flag kcm-rs does not implement.
#[derive(Debug, Clone, Copy)]
pub struct UpstreamFlag {
    /// Flag name without the leading `--`.
    pub name: &'static str,
    /// Whether it takes a value.
    pub kind: FlagKind,
}

const fn b(name: &'static str) -> UpstreamFlag {
    UpstreamFlag { name, kind: FlagKind::Bool }
}

const fn v(name: &'static str) -> UpstreamFlag {
    UpstreamFlag { name, kind: FlagKind::Value }
}

/// kube-controller-manager's flags that kcm-rs does not implement. Each is
/// refused at start-up with an error naming it.
///
/// Every flag kube-controller-manager 1.37.2 accepts that kcm-rs neither
/// implements nor accepts for a controller it waits for, hidden deprecated
/// ones (`--allow-untagged-cloud`) included. Flags 1.37 removed
/// (`--concurrent-service-syncs`, `--attach-detach-reconcile-max-wait-unmount-duration`,
/// `--volume-host-allow-local-loopback`, `--volume-host-cidr-denylist`) are
/// not here: kcm-rs, like kube-controller-manager 1.37.2, rejects them as
/// unknown flags. The integration test `upstream_help` checks that every
/// flag kube-controller-manager 1.37.2's `--help` lists is either a flag of
/// kcm-rs or in this table.
pub const UNIMPLEMENTED_UPSTREAM_FLAGS: &[UpstreamFlag] = &[
    v("allow-metric-labels"),
    v("allow-metric-labels-manifest"),
    b("allow-untagged-cloud"),
    v("cloud-config"),
    v("cloud-provider"),
    v("concurrent-device-taint-eviction-syncs"),
    v("concurrent-disruption-syncs"),
    v("concurrent-horizontal-pod-autoscaler-syncs"),
    v("concurrent-rc-syncs"),
    v("concurrent-resource-quota-syncs"),
    v("concurrent-resourceclaim-syncs"),
    v("concurrent-validating-admission-policy-status-syncs"),
    b("configure-cloud-routes"),
    b("contention-profiling"),
    v("controller-shutdown-timeout"),
    v("controller-start-interval"),
    b("disable-http2-serving"),
    v("disabled-metrics"),
    v("emulated-version"),
    b("enable-leader-migration"),
    v("external-cloud-volume-plugin"),
    v("flex-volume-plugin-dir"),
    v("horizontal-pod-autoscaler-cpu-initialization-period"),
    v("horizontal-pod-autoscaler-downscale-stabilization"),
    v("horizontal-pod-autoscaler-initial-readiness-delay"),
    v("horizontal-pod-autoscaler-sync-period"),
    v("horizontal-pod-autoscaler-tolerance"),
    v("http2-max-streams-per-connection"),
    v("leader-migration-config"),
    v("log-flush-frequency"),
    v("log-json-info-buffer-size"),
    b("log-json-split-stream"),
    v("log-text-info-buffer-size"),
    b("log-text-split-stream"),
    v("min-compatibility-version"),
    b("permit-address-sharing"),
    b("permit-port-sharing"),
    b("profiling"),
    v("pv-recycler-increment-timeout-nfs"),
    v("pv-recycler-minimum-timeout-hostpath"),
    v("pv-recycler-minimum-timeout-nfs"),
    v("pv-recycler-pod-template-filepath-hostpath"),
    v("pv-recycler-pod-template-filepath-nfs"),
    v("pv-recycler-timeout-increment-hostpath"),
    v("resource-quota-sync-period"),
    v("route-reconciliation-period"),
    v("show-hidden-metrics-for-version"),
    v("tls-curve-preferences"),
    v("tls-sni-cert-key"),
    v("vmodule"),
];
