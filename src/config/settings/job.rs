//! The Job controller's settings (upstream's `options/jobcontroller.go`):
//! `--concurrent-job-syncs`.

use super::{ControllerFlags, workers};
use crate::config::Result;

/// The Job controller's flags.
#[derive(Debug, Clone, clap::Args)]
pub struct JobFlags {
    /// The number of job objects that are allowed to sync concurrently. Larger number = more responsive jobs, but
    /// more CPU (and network) load
    #[arg(long, value_name = "int32", default_value = "5", help_heading = "Job controller flags")]
    pub concurrent_job_syncs: i32,
}

/// The Job controller's settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JobSettings {
    /// `--concurrent-job-syncs`.
    pub workers: usize,
}

impl ControllerFlags for JobFlags {
    type Settings = JobSettings;

    const HELP_WITHOUT_PERIOD: &'static [&'static str] = &["concurrent_job_syncs"];

    fn settings(self) -> Result<JobSettings> {
        Ok(JobSettings { workers: workers("concurrent-job-syncs", self.concurrent_job_syncs)? })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Error;
    use crate::config::settings::testing::{assert_defaults, flags, settings};

    #[test]
    fn defaults_are_upstreams() {
        assert_defaults::<JobFlags>(&[("concurrent-job-syncs", "5")]);
        assert_eq!(flags::<JobFlags>(&[]).unwrap().concurrent_job_syncs.to_string(), "5");
    }

    #[test]
    fn workers_must_be_positive() {
        assert_eq!(
            settings::<JobFlags>(&["--concurrent-job-syncs=0"]).unwrap_err(),
            Error::NonPositiveWorkers { flag: "concurrent-job-syncs", value: 0 }
        );
        assert_eq!(settings::<JobFlags>(&["--concurrent-job-syncs=7"]).unwrap().workers, 7);
    }
}
