//! The EndpointSlice controller's settings (upstream's
//! `options/endpointslicecontroller.go`, its
//! EndpointSliceControllerConfiguration), each within upstream's bounds.

use super::{ControllerFlags, within};
use crate::config::{GoDuration, Result};
use crate::drivers::endpointslice::Settings;

/// The EndpointSlice controller's flags.
#[derive(Debug, Clone, clap::Args)]
pub struct EndpointSliceFlags {
    /// The number of service endpoint syncing operations that will be done concurrently. Larger number = faster
    /// endpoint slice updating, but more CPU (and network) load. Defaults to 5.
    #[arg(long, value_name = "int32", default_value = "5", help_heading = "Endpointslice controller flags")]
    pub concurrent_service_endpoint_syncs: i32,

    /// The maximum number of endpoints that will be added to an EndpointSlice. More endpoints per slice will
    /// result in less endpoint slices, but larger resources. Defaults to 100.
    #[arg(long, value_name = "int32", default_value = "100", help_heading = "Endpointslice controller flags")]
    pub max_endpoints_per_slice: i32,

    /// The length of endpoint slice updates batching period. Processing of pod changes will be delayed by this
    /// duration to join them with potential upcoming updates and reduce the overall number of endpoints updates.
    /// Larger number = higher endpoint programming latency, but lower number of endpoints revision generated
    #[arg(long, value_name = "duration", default_value = "0s", help_heading = "Endpointslice controller flags")]
    pub endpointslice_updates_batch_period: GoDuration,
}

/// The EndpointSlice controller's settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EndpointSliceSettings {
    /// `--concurrent-service-endpoint-syncs`, 1 to 50.
    pub concurrent_syncs: usize,
    /// What the driver is built with: `--max-endpoints-per-slice` (1 to
    /// 1000) and `--endpointslice-updates-batch-period` (how long a pod
    /// change waits before its Services are synced).
    pub driver: Settings,
}

impl ControllerFlags for EndpointSliceFlags {
    type Settings = EndpointSliceSettings;

    fn settings(self) -> Result<EndpointSliceSettings> {
        Ok(EndpointSliceSettings {
            concurrent_syncs: within(
                "concurrent-service-endpoint-syncs",
                self.concurrent_service_endpoint_syncs,
                1..=50,
            )?,
            driver: Settings {
                max_endpoints_per_slice: within("max-endpoints-per-slice", self.max_endpoints_per_slice, 1..=1000)?,
                updates_batch_period: self.endpointslice_updates_batch_period.0,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::config::settings::testing::{assert_defaults, flags, settings};

    #[test]
    fn defaults_are_upstreams() {
        assert_defaults::<EndpointSliceFlags>(&[
            ("concurrent-service-endpoint-syncs", "5"),
            ("max-endpoints-per-slice", "100"),
            ("endpointslice-updates-batch-period", "0s"),
        ]);
        let f = flags::<EndpointSliceFlags>(&[]).unwrap();
        assert_eq!(f.concurrent_service_endpoint_syncs.to_string(), "5");
        assert_eq!(f.max_endpoints_per_slice.to_string(), "100");
        assert_eq!(f.endpointslice_updates_batch_period.to_string(), "0s");
    }

    #[test]
    fn endpoint_slice_flags_within_upstreams_bounds() {
        let c = settings::<EndpointSliceFlags>(&[
            "--max-endpoints-per-slice=1000",
            "--endpointslice-updates-batch-period=1s",
        ])
        .unwrap();
        assert_eq!(c.driver.max_endpoints_per_slice, 1000);
        assert_eq!(c.driver.updates_batch_period, Duration::from_secs(1));
        assert_eq!(c.concurrent_syncs, 5);
        let err = |args: &[&str]| settings::<EndpointSliceFlags>(args).unwrap_err().to_string();
        assert_eq!(err(&["--max-endpoints-per-slice=0"]), "max-endpoints-per-slice must not be less than 1, but got 0");
        assert_eq!(
            err(&["--max-endpoints-per-slice=1001"]),
            "max-endpoints-per-slice must not be more than 1000, but got 1001"
        );
        assert_eq!(
            err(&["--concurrent-service-endpoint-syncs=51"]),
            "concurrent-service-endpoint-syncs must not be more than 50, but got 51"
        );
    }
}
