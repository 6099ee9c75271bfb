//! The CronJob controller's settings (upstream's
//! `options/cronjobcontroller.go`): `--concurrent-cron-job-syncs`.

use super::{ControllerFlags, Workers};
use crate::config::Result;

/// The CronJob controller's flags.
#[derive(Debug, Clone, clap::Args)]
pub struct CronJobFlags {
    /// The number of cron job objects that are allowed to sync concurrently. Larger number = more responsive jobs,
    /// but more CPU (and network) load
    #[arg(long, value_name = "int32", default_value = "5", help_heading = "Cronjob controller flags")]
    pub concurrent_cron_job_syncs: i32,
}

impl ControllerFlags for CronJobFlags {
    type Settings = Workers;

    const HELP_WITHOUT_PERIOD: &'static [&'static str] = &["concurrent_cron_job_syncs"];

    fn settings(self) -> Result<Workers> {
        Workers::from_flag("concurrent-cron-job-syncs", self.concurrent_cron_job_syncs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::settings::testing::assert_workers_flag;

    #[test]
    fn defaults_are_upstreams_and_workers_must_be_positive() {
        assert_workers_flag::<CronJobFlags>("concurrent-cron-job-syncs", 5, 0, 2);
    }
}
