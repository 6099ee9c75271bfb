//! Stage two: the [`Config`] derived once from the [`Flags`]
//! ([`Flags::into_config`]): the `--controllers` list resolved to the
//! controllers to run, leader-election timing checked as client-go checks
//! it, serving and logging settings put in their final shape.

use std::net::SocketAddr;

use super::{
    ClientSettings, Config, ControllerSet, EndpointSliceSettings, Error, FeatureGates, Flags, LeaderElectionSettings,
    LoggingSettings, NodeLifecycleSettings, Result, ServingSettings, SimSettings, TlsFiles, format_go_duration,
    level_for_verbosity,
};

/// The garbage collector's canonical name, which `--enable-garbage-collector`
/// switches off.
const GARBAGE_COLLECTOR: &str = "garbage-collector-controller";

impl Flags {
    /// Derives the [`Config`] (stage two).
    ///
    /// # Errors
    ///
    /// [`Error`] when the flags are individually well-formed but do not make a
    /// runnable configuration together.
    pub fn into_config(self, implemented: &[&'static str]) -> Result<Config> {
        Config::from_flags(self, implemented)
    }
}

impl Config {
    /// Stage two: see the module documentation.
    ///
    /// # Errors
    ///
    /// See [`Error`].
    pub fn from_flags(flags: Flags, implemented: &[&'static str]) -> Result<Config> {
        let mut controllers = ControllerSet::resolve(&flags.controllers, implemented)?;
        if !flags.enable_garbage_collector {
            // Upstream's garbage collector start-up returns "not started" when the flag is off.
            controllers.remove(GARBAGE_COLLECTOR);
        }

        let feature_gates = FeatureGates::resolve(&flags.feature_gates)?;

        let workers = |flag: &'static str, value: i32| -> Result<usize> {
            usize::try_from(value).ok().filter(|n| *n > 0).ok_or(Error::NonPositiveWorkers { flag, value })
        };

        let burst = u32::try_from(flags.kube_api_burst)
            .map_err(|_| Error::Negative { flag: "kube-api-burst", value: flags.kube_api_burst.to_string() })?;
        if flags.kube_api_qps > 0.0 && burst == 0 {
            return Err(Error::Burst);
        }

        let leader_election = if flags.leader_elect { Some(leader_election(&flags)?) } else { None };

        let tls = match (&flags.tls_cert_file, &flags.tls_private_key_file) {
            (Some(cert), Some(key)) => Some(TlsFiles { cert: cert.clone(), key: key.clone() }),
            (None, None) => None,
            _ => return Err(Error::TlsPair),
        };
        let serving = (flags.secure_port != 0)
            .then(|| ServingSettings { addr: SocketAddr::new(flags.bind_address, flags.secure_port), tls });

        for (flag, value) in [
            ("node-eviction-rate", flags.node_eviction_rate),
            ("secondary-node-eviction-rate", flags.secondary_node_eviction_rate),
            ("unhealthy-zone-threshold", flags.unhealthy_zone_threshold),
        ] {
            if value < 0.0 || value.is_nan() {
                return Err(Error::Negative { flag, value: value.to_string() });
            }
        }
        let large_cluster_size_threshold =
            u32::try_from(flags.large_cluster_size_threshold).map_err(|_| Error::Negative {
                flag: "large-cluster-size-threshold",
                value: flags.large_cluster_size_threshold.to_string(),
            })?;

        Ok(Config {
            client: ClientSettings {
                kubeconfig: flags.kubeconfig.clone(),
                master: flags.master.clone().filter(|m| !m.is_empty()),
                qps: flags.kube_api_qps,
                burst,
                content_type: flags.kube_api_content_type.clone(),
            },
            controllers,
            feature_gates,
            concurrent_daemonset_syncs: workers("concurrent-daemonset-syncs", flags.concurrent_daemonset_syncs)?,
            concurrent_deployment_syncs: workers("concurrent-deployment-syncs", flags.concurrent_deployment_syncs)?,
            concurrent_job_syncs: workers("concurrent-job-syncs", flags.concurrent_job_syncs)?,
            concurrent_replicaset_syncs: workers("concurrent-replicaset-syncs", flags.concurrent_replicaset_syncs)?,
            concurrent_statefulset_syncs: workers("concurrent-statefulset-syncs", flags.concurrent_statefulset_syncs)?,
            concurrent_ttl_after_finished_syncs: workers(
                "concurrent-ttl-after-finished-syncs",
                flags.concurrent_ttl_after_finished_syncs,
            )?,
            concurrent_cron_job_syncs: workers("concurrent-cron-job-syncs", flags.concurrent_cron_job_syncs)?,
            concurrent_namespace_syncs: workers("concurrent-namespace-syncs", flags.concurrent_namespace_syncs)?,
            namespace_sync_period: flags.namespace_sync_period.0,
            concurrent_gc_syncs: workers("concurrent-gc-syncs", flags.concurrent_gc_syncs)?,
            concurrent_endpoint_syncs: workers("concurrent-endpoint-syncs", flags.concurrent_endpoint_syncs)?,
            endpoint_updates_batch_period: flags.endpoint_updates_batch_period.0,
            mirroring_concurrent_service_endpoint_syncs: within(
                "mirroring-concurrent-service-endpoint-syncs",
                flags.mirroring_concurrent_service_endpoint_syncs,
                1..=50,
            )?,
            mirroring_endpointslice_updates_batch_period: flags.mirroring_endpointslice_updates_batch_period.0,
            mirroring_max_endpoints_per_subset: within(
                "mirroring-max-endpoints-per-subset",
                flags.mirroring_max_endpoints_per_subset,
                1..=1000,
            )?,
            min_resync_period: flags.min_resync_period.0,
            root_ca_file: flags.root_ca_file.clone(),
            concurrent_serviceaccount_token_syncs: workers(
                "concurrent-serviceaccount-token-syncs",
                flags.concurrent_serviceaccount_token_syncs,
            )?,
            service_account_private_key_file: flags.service_account_private_key_file.clone(),
            legacy_service_account_token_clean_up_period: flags.legacy_service_account_token_clean_up_period.0,
            terminated_pod_gc_threshold: flags.terminated_pod_gc_threshold,
            endpoint_slice: EndpointSliceSettings {
                concurrent_syncs: within(
                    "concurrent-service-endpoint-syncs",
                    flags.concurrent_service_endpoint_syncs,
                    1..=50,
                )?,
                max_endpoints_per_slice: within("max-endpoints-per-slice", flags.max_endpoints_per_slice, 1..=1000)?,
                updates_batch_period: flags.endpointslice_updates_batch_period.0,
            },
            node_lifecycle: NodeLifecycleSettings {
                monitor_period: flags.node_monitor_period.0,
                monitor_grace_period: flags.node_monitor_grace_period.0,
                startup_grace_period: flags.node_startup_grace_period.0,
                eviction_rate: flags.node_eviction_rate,
                secondary_eviction_rate: flags.secondary_node_eviction_rate,
                large_cluster_size_threshold,
                unhealthy_zone_threshold: flags.unhealthy_zone_threshold,
            },
            leader_election,
            serving,
            logging: LoggingSettings {
                verbosity: flags.verbosity,
                level: level_for_verbosity(flags.verbosity),
                format: flags.logging_format,
            },
            sim: flags.sim.then_some(SimSettings { nodes: flags.sim_nodes }),
        })
    }
}

/// `value` of `flag`, refused outside `range` with upstream's messages
/// (`... must not be less than 1, but got 0`).
fn within(flag: &'static str, value: i32, range: std::ops::RangeInclusive<i32>) -> Result<usize> {
    if value < *range.start() {
        return Err(Error::OutOfRange { flag, bound: "less", limit: *range.start(), value });
    }
    if value > *range.end() {
        return Err(Error::OutOfRange { flag, bound: "more", limit: *range.end(), value });
    }
    // Not negative: the range starts at 1.
    Ok(value.unsigned_abs() as usize)
}

/// Checks leader-election settings as upstream's option validation and
/// client-go's `NewLeaderElector` do.
fn leader_election(flags: &Flags) -> Result<LeaderElectionSettings> {
    if flags.leader_elect_resource_lock != "leases" {
        return Err(Error::ResourceLock(flags.leader_elect_resource_lock.clone()));
    }
    let lease = flags.leader_elect_lease_duration.0;
    let renew = flags.leader_elect_renew_deadline.0;
    let retry = flags.leader_elect_retry_period.0;
    for (flag, d) in [
        ("leader-elect-lease-duration", lease),
        ("leader-elect-renew-deadline", renew),
        ("leader-elect-retry-period", retry),
    ] {
        if d.is_zero() {
            return Err(Error::NonPositiveDuration(flag));
        }
    }
    if lease <= renew {
        return Err(Error::LeaseNotAboveRenew { lease: format_go_duration(lease), renew: format_go_duration(renew) });
    }
    // client-go's JitterFactor is 1.2; compare in nanoseconds to stay exact.
    if renew.as_nanos() * 5 <= retry.as_nanos() * 6 {
        return Err(Error::RenewNotAboveRetry { renew: format_go_duration(renew), retry: format_go_duration(retry) });
    }
    if flags.leader_elect_resource_name.is_empty() {
        return Err(Error::Required("leader-elect-resource-name"));
    }
    if flags.leader_elect_resource_namespace.is_empty() {
        return Err(Error::Required("leader-elect-resource-namespace"));
    }
    Ok(LeaderElectionSettings {
        lease_duration: lease,
        renew_deadline: renew,
        retry_period: retry,
        resource_name: flags.leader_elect_resource_name.clone(),
        resource_namespace: flags.leader_elect_resource_namespace.clone(),
    })
}
