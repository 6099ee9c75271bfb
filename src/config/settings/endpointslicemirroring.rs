//! The EndpointSlice mirroring controller's settings (upstream's
//! `options/endpointslicemirroringcontroller.go`), each within upstream's
//! bounds.

use super::{ControllerFlags, within};
use crate::config::{GoDuration, Result};
use crate::drivers::endpointslicemirroring::Settings;

/// The EndpointSlice mirroring controller's flags.
#[derive(Debug, Clone, clap::Args)]
pub struct EndpointSliceMirroringFlags {
    /// The number of service endpoint syncing operations that will be done concurrently by the
    /// endpointslice-mirroring-controller. Larger number = faster endpoint slice updating, but more CPU (and network)
    /// load. Defaults to 5.
    #[arg(long, value_name = "int32", default_value = "5", help_heading = "Endpointslicemirroring controller flags")]
    pub mirroring_concurrent_service_endpoint_syncs: i32,

    /// The length of EndpointSlice updates batching period for endpointslice-mirroring-controller. Processing of
    /// EndpointSlice changes will be delayed by this duration to join them with potential upcoming updates and
    /// reduce the overall number of EndpointSlice updates. Larger number = higher endpoint programming latency, but
    /// lower number of endpoints revision generated
    #[arg(
        long,
        value_name = "duration",
        default_value = "0s",
        help_heading = "Endpointslicemirroring controller flags"
    )]
    pub mirroring_endpointslice_updates_batch_period: GoDuration,

    /// The maximum number of endpoints that will be added to an EndpointSlice by the
    /// endpointslice-mirroring-controller. More endpoints per slice will result in less endpoint slices, but larger
    /// resources. Defaults to 100.
    #[arg(
        long,
        value_name = "int32",
        default_value = "1000",
        help_heading = "Endpointslicemirroring controller flags"
    )]
    pub mirroring_max_endpoints_per_subset: i32,
}

/// The EndpointSlice mirroring controller's settings.
#[derive(Debug, Clone, Copy)]
pub struct EndpointSliceMirroringSettings {
    /// `--mirroring-concurrent-service-endpoint-syncs` (1 to 50).
    pub workers: usize,
    /// What the driver is built with: `--mirroring-max-endpoints-per-subset`
    /// (1 to 1000) and `--mirroring-endpointslice-updates-batch-period`.
    pub driver: Settings,
}

impl ControllerFlags for EndpointSliceMirroringFlags {
    type Settings = EndpointSliceMirroringSettings;

    fn settings(self) -> Result<EndpointSliceMirroringSettings> {
        Ok(EndpointSliceMirroringSettings {
            workers: within(
                "mirroring-concurrent-service-endpoint-syncs",
                self.mirroring_concurrent_service_endpoint_syncs,
                1..=50,
            )?,
            driver: Settings {
                max_endpoints_per_subset: within(
                    "mirroring-max-endpoints-per-subset",
                    self.mirroring_max_endpoints_per_subset,
                    1..=1000,
                )?,
                batch_period: self.mirroring_endpointslice_updates_batch_period.0,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::settings::testing::{assert_defaults, flags, settings};

    #[test]
    fn defaults_are_upstreams() {
        assert_defaults::<EndpointSliceMirroringFlags>(&[
            ("mirroring-concurrent-service-endpoint-syncs", "5"),
            ("mirroring-endpointslice-updates-batch-period", "0s"),
            ("mirroring-max-endpoints-per-subset", "1000"),
        ]);
        let f = flags::<EndpointSliceMirroringFlags>(&[]).unwrap();
        assert_eq!(f.mirroring_concurrent_service_endpoint_syncs.to_string(), "5");
        assert_eq!(f.mirroring_endpointslice_updates_batch_period.to_string(), "0s");
        assert_eq!(f.mirroring_max_endpoints_per_subset.to_string(), "1000");
    }

    #[test]
    fn within_upstreams_bounds() {
        let mirroring = |args: &[&str]| settings::<EndpointSliceMirroringFlags>(args);
        assert_eq!(
            mirroring(&["--mirroring-max-endpoints-per-subset=0"]).unwrap_err().to_string(),
            "mirroring-max-endpoints-per-subset must not be less than 1, but got 0"
        );
        assert_eq!(
            mirroring(&["--mirroring-concurrent-service-endpoint-syncs=51"]).unwrap_err().to_string(),
            "mirroring-concurrent-service-endpoint-syncs must not be more than 50, but got 51"
        );
        assert_eq!(
            mirroring(&["--mirroring-max-endpoints-per-subset=1000"]).unwrap().driver.max_endpoints_per_subset,
            1000
        );
    }
}
