//! The legacy service account token cleaner's settings (upstream's
//! `options/legacyserviceaccounttokencleaner.go`):
//! `--legacy-service-account-token-clean-up-period`.

use std::time::Duration;

use super::ControllerFlags;
use crate::config::{GoDuration, Result};

/// The legacy service account token cleaner's flags.
#[derive(Debug, Clone, clap::Args)]
pub struct LegacyTokenCleanerFlags {
    /// The period of time since the last usage of an legacy service account token before it can be deleted.
    #[arg(
        long,
        value_name = "duration",
        default_value = "8760h0m0s",
        help_heading = "Legacy service account token cleaner flags"
    )]
    pub legacy_service_account_token_clean_up_period: GoDuration,
}

/// The legacy service account token cleaner's settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LegacyTokenCleanerSettings {
    /// `--legacy-service-account-token-clean-up-period`: how long a legacy
    /// token goes unused before it is labelled invalid, and then before it
    /// is deleted.
    pub clean_up_period: Duration,
}

impl ControllerFlags for LegacyTokenCleanerFlags {
    type Settings = LegacyTokenCleanerSettings;

    fn settings(self) -> Result<LegacyTokenCleanerSettings> {
        Ok(LegacyTokenCleanerSettings { clean_up_period: self.legacy_service_account_token_clean_up_period.0 })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::settings::testing::{assert_defaults, flags};

    #[test]
    fn defaults_are_upstreams() {
        assert_defaults::<LegacyTokenCleanerFlags>(&[("legacy-service-account-token-clean-up-period", "8760h0m0s")]);
        let f = flags::<LegacyTokenCleanerFlags>(&[]).unwrap();
        assert_eq!(f.legacy_service_account_token_clean_up_period.to_string(), "8760h0m0s");
    }
}
