//! The CronJob controller's settings (upstream's
//! `options/cronjobcontroller.go`): `--concurrent-cron-job-syncs`.

use super::{ControllerFlags, workers};
use crate::config::Result;

/// The CronJob controller's flags.
#[derive(Debug, Clone, clap::Args)]
pub struct CronJobFlags {
    /// The number of cron job objects that are allowed to sync concurrently. Larger number = more responsive jobs,
    /// but more CPU (and network) load
    #[arg(long, value_name = "int32", default_value = "5", help_heading = "Cronjob controller flags")]
    pub concurrent_cron_job_syncs: i32,
}

/// The CronJob controller's settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CronJobSettings {
    /// `--concurrent-cron-job-syncs`.
    pub workers: usize,
}

impl ControllerFlags for CronJobFlags {
    type Settings = CronJobSettings;

    const HELP_WITHOUT_PERIOD: &'static [&'static str] = &["concurrent_cron_job_syncs"];

    fn settings(self) -> Result<CronJobSettings> {
        Ok(CronJobSettings { workers: workers("concurrent-cron-job-syncs", self.concurrent_cron_job_syncs)? })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Error;
    use crate::config::settings::testing::{assert_defaults, flags, settings};

    #[test]
    fn defaults_are_upstreams() {
        assert_defaults::<CronJobFlags>(&[("concurrent-cron-job-syncs", "5")]);
        assert_eq!(flags::<CronJobFlags>(&[]).unwrap().concurrent_cron_job_syncs.to_string(), "5");
    }

    #[test]
    fn workers_must_be_positive() {
        assert_eq!(
            settings::<CronJobFlags>(&["--concurrent-cron-job-syncs=0"]).unwrap_err(),
            Error::NonPositiveWorkers { flag: "concurrent-cron-job-syncs", value: 0 }
        );
        assert_eq!(settings::<CronJobFlags>(&["--concurrent-cron-job-syncs=2"]).unwrap().workers, 2);
    }
}
