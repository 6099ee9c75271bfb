//! Stage two: the [`Config`] derived once from the [`Flags`]
//! ([`Flags::into_config`]): the `--controllers` list resolved to the
//! controllers to run, leader-election timing checked as client-go checks
//! it, serving and logging settings put in their final shape, and each
//! controller's settings checked by its own module.

use super::settings::Implemented;
use super::{
    ClientSettings, Config, ControllerSet, Error, FeatureGates, Flags, LeaderElectionSettings, LoggingSettings, Result,
    SimSettings, format_go_duration, level_for_verbosity,
};

impl Flags {
    /// Derives the [`Config`] (stage two).
    ///
    /// # Errors
    ///
    /// [`Error`] when the flags are individually well-formed but do not make a
    /// runnable configuration together. `implemented` are the controllers
    /// kcm-rs implements (the controller table's rows), whose settings are
    /// checked.
    pub fn into_config(self, implemented: &[&dyn Implemented]) -> Result<Config> {
        Config::from_flags(self, implemented)
    }
}

impl Config {
    /// Stage two: see the module documentation.
    ///
    /// # Errors
    ///
    /// See [`Error`].
    pub fn from_flags(flags: Flags, implemented: &[&dyn Implemented]) -> Result<Config> {
        let names: Vec<&'static str> = implemented.iter().map(|c| c.name()).collect();
        let mut controllers = ControllerSet::resolve(&flags.controllers, &names)?;

        let feature_gates = FeatureGates::resolve(&flags.feature_gates)?;

        let burst = u32::try_from(flags.kube_api_burst)
            .map_err(|_| Error::Negative { flag: "kube-api-burst", value: flags.kube_api_burst.to_string() })?;
        if flags.kube_api_qps > 0.0 && burst == 0 {
            return Err(Error::Burst);
        }

        if flags.use_service_account_credentials && flags.tail.sim {
            return Err(Error::SimServiceAccounts);
        }

        let leader_election = if flags.leader_elect { Some(leader_election(&flags)?) } else { None };

        let serving = flags.serving.settings(feature_gates.enabled("RemoteRequestHeaderUID"))?;

        for controller in implemented {
            // Upstream's start-up returns "not started" for a controller
            // its settings switch off (`--enable-garbage-collector=false`).
            if !controller.check(&flags.matches)? {
                controllers.remove(controller.name());
            }
        }

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
            use_service_account_credentials: flags.use_service_account_credentials,
            min_resync_period: flags.min_resync_period.0,
            leader_election,
            serving,
            logging: LoggingSettings {
                verbosity: flags.tail.verbosity,
                level: level_for_verbosity(flags.tail.verbosity),
                format: flags.tail.logging_format,
            },
            sim: flags.tail.sim.then_some(SimSettings { nodes: flags.tail.sim_nodes }),
            controller_flags: flags.matches,
        })
    }
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
