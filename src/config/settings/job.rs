//! The Job controller's settings (upstream's `options/jobcontroller.go`):
//! `--concurrent-job-syncs`.

use super::{ControllerFlags, Workers};
use crate::config::Result;

/// The Job controller's flags.
#[derive(Debug, Clone, clap::Args)]
pub struct JobFlags {
    /// The number of job objects that are allowed to sync concurrently. Larger number = more responsive jobs, but
    /// more CPU (and network) load
    #[arg(long, value_name = "int32", default_value = "5", help_heading = "Job controller flags")]
    pub concurrent_job_syncs: i32,
}

impl ControllerFlags for JobFlags {
    type Settings = Workers;

    const HELP_WITHOUT_PERIOD: &'static [&'static str] = &["concurrent_job_syncs"];

    fn settings(self) -> Result<Workers> {
        Workers::from_flag("concurrent-job-syncs", self.concurrent_job_syncs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::settings::testing::assert_workers_flag;

    #[test]
    fn defaults_are_upstreams_and_workers_must_be_positive() {
        assert_workers_flag::<JobFlags>("concurrent-job-syncs", 5, 0, 7);
    }
}
