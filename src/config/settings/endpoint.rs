//! The Endpoints controller's settings (upstream's
//! `options/endpointcontroller.go`): `--concurrent-endpoint-syncs` and
//! `--endpoint-updates-batch-period`.

use std::time::Duration;

use super::{ControllerFlags, workers};
use crate::config::{GoDuration, Result};

/// The Endpoints controller's flags.
#[derive(Debug, Clone, clap::Args)]
pub struct EndpointFlags {
    /// The number of endpoint syncing operations that will be done concurrently. Larger number = faster endpoint
    /// updating, but more CPU (and network) load
    #[arg(long, value_name = "int32", default_value = "5", help_heading = "Endpoint controller flags")]
    pub concurrent_endpoint_syncs: i32,

    /// The length of endpoint updates batching period. Processing of pod changes will be delayed by this duration
    /// to join them with potential upcoming updates and reduce the overall number of endpoints updates. Larger
    /// number = higher endpoint programming latency, but lower number of endpoints revision generated
    #[arg(long, value_name = "duration", default_value = "0s", help_heading = "Endpoint controller flags")]
    pub endpoint_updates_batch_period: GoDuration,
}

/// The Endpoints controller's settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EndpointSettings {
    /// `--concurrent-endpoint-syncs`.
    pub workers: usize,
    /// `--endpoint-updates-batch-period`: how long pod changes wait to be
    /// written together.
    pub batch_period: Duration,
}

impl ControllerFlags for EndpointFlags {
    type Settings = EndpointSettings;

    fn settings(self) -> Result<EndpointSettings> {
        Ok(EndpointSettings {
            workers: workers("concurrent-endpoint-syncs", self.concurrent_endpoint_syncs)?,
            batch_period: self.endpoint_updates_batch_period.0,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::settings::testing::{assert_defaults, flags};

    #[test]
    fn defaults_are_upstreams() {
        assert_defaults::<EndpointFlags>(&[
            ("concurrent-endpoint-syncs", "5"),
            ("endpoint-updates-batch-period", "0s"),
        ]);
        let f = flags::<EndpointFlags>(&[]).unwrap();
        assert_eq!(f.concurrent_endpoint_syncs.to_string(), "5");
        assert_eq!(f.endpoint_updates_batch_period.to_string(), "0s");
    }
}
