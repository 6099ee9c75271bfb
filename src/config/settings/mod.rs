//! Each controller's settings, one module per controller, as upstream keeps
//! one `cmd/kube-controller-manager/app/options/<x>controller.go` per
//! controller with its `AddFlags`, `Validate` and `ApplyTo`.
//!
//! A controller's module holds its flags (a clap `Args` struct: upstream's
//! names, defaults, help text and help section), the check of their values
//! and their conversion into what its driver and core are built with
//! ([`ControllerFlags::settings`]). The controller table names a settings
//! type per row (`crate::controllers`), and [`Flags::command`] adds every
//! row's flags to the command line, so adding a controller adds its flags
//! without touching a shared list (only its `mod` line below). Several
//! rows may share one settings type (`--root-ca-file` is the
//! service-account token controller's and the root CA publisher's, as
//! upstream's `SAControllerOptions` is both theirs); its flags are added
//! once.
//!
//! Process-wide flags (kubeconfig, `--controllers`, feature gates, leader
//! election, serving, logging) are [`Flags`]' own.
//!
//! [`Flags`]: super::Flags
//! [`Flags::command`]: super::Flags::command

use std::any::TypeId;
use std::fmt::Debug;

use clap::{ArgMatches, Command};

use super::error::{Error, Result};

pub mod attachdetach;
pub mod cronjob;
pub mod csrsigning;
pub mod daemonset;
pub mod deployment;
pub mod endpoint;
pub mod endpointslice;
pub mod endpointslicemirroring;
pub mod ephemeralvolume;
pub mod garbagecollector;
pub mod job;
pub mod legacytokencleaner;
pub mod namespace;
pub mod nodeipam;
pub mod nodelifecycle;
pub mod podgc;
pub mod pvbinder;
pub mod replicaset;
pub mod serviceaccounttoken;
pub mod statefulset;
pub mod ttlafterfinished;

// === the protocol ===

/// One controller's flags (stage one) and the settings checked from them
/// (stage two): upstream's `AddFlags` is the derive, `Validate` and `ApplyTo`
/// are [`ControllerFlags::settings`].
pub trait ControllerFlags: clap::Args + Debug + Send + Sync + 'static {
    /// The checked values, converted into what the controller is built
    /// with.
    type Settings: Debug + Send + Sync;

    /// Ids of the flags whose upstream help has no final period (the rest
    /// get back the period clap's derive drops).
    const HELP_WITHOUT_PERIOD: &'static [&'static str] = &[];

    /// Checks the values against each other and upstream's bounds, and
    /// converts them.
    ///
    /// # Errors
    ///
    /// [`Error`] naming the first flag out of bounds.
    fn settings(self) -> Result<Self::Settings>;

    /// Whether these settings let the controller run at all
    /// (`--enable-garbage-collector=false` does not).
    fn enabled(_settings: &Self::Settings) -> bool {
        true
    }

    /// Reads and checks these flags from the parsed command line.
    ///
    /// # Errors
    ///
    /// [`Error::Unread`] when the command line lacks these flags (it was not
    /// built by [`Flags::command`](super::Flags::command) with them), else
    /// what [`ControllerFlags::settings`] finds.
    fn read(matches: &ArgMatches) -> Result<Self::Settings> {
        Self::from_arg_matches(matches)
            .map_err(|e| Error::Unread { flags: std::any::type_name::<Self>(), message: e.to_string() })?
            .settings()
    }
}

/// A controller kcm-rs implements, as configuration sees it: its canonical
/// name and its flags, whatever their type. The controller table's rows are
/// these.
pub trait Implemented: Sync {
    /// Upstream's canonical name.
    fn name(&self) -> &'static str;

    /// Its [`ControllerFlags`] type, so that a type two controllers share
    /// is added to the command line once.
    fn flags_type(&self) -> TypeId;

    /// Adds its flags to `cmd`.
    fn augment(&self, cmd: Command) -> Command;

    /// [`ControllerFlags::HELP_WITHOUT_PERIOD`] of its flags.
    fn help_without_period(&self) -> &'static [&'static str];

    /// Checks its settings in the parsed command line; whether they let it
    /// run.
    ///
    /// # Errors
    ///
    /// See [`ControllerFlags::read`].
    fn check(&self, matches: &ArgMatches) -> Result<bool>;
}

/// `cmd` with the flags of `F` (as [`Implemented::augment`] adds a
/// controller's), keeping the command's own description (a derived `Args`
/// struct's doc comment would otherwise replace it).
pub fn augment<F: clap::Args>(cmd: Command) -> Command {
    let about = cmd.get_about().cloned();
    let long_about = cmd.get_long_about().cloned();
    let cmd = F::augment_args(cmd);
    let cmd = match about {
        Some(about) => cmd.about(about),
        None => cmd.about(None::<&str>),
    };
    match long_about {
        Some(long_about) => cmd.long_about(long_about),
        None => cmd.long_about(None::<&str>),
    }
}

/// The flags of a controller that has none (its worker count is upstream's
/// fixed one).
#[derive(Debug, Clone, Copy, clap::Args)]
pub struct NoFlags {}

impl ControllerFlags for NoFlags {
    type Settings = ();

    fn settings(self) -> Result<()> {
        Ok(())
    }
}

/// The settings of a controller whose one flag is its worker count
/// (`--concurrent-*-syncs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Workers {
    /// Workers per queue.
    pub workers: usize,
}

impl Workers {
    /// The worker count `value` of `flag`.
    ///
    /// # Errors
    ///
    /// [`Error::NonPositiveWorkers`].
    pub fn from_flag(flag: &'static str, value: i32) -> Result<Workers> {
        Ok(Workers { workers: workers(flag, value)? })
    }
}

// === checks ===

/// A `--concurrent-*-syncs` value: a worker count, refused when not
/// positive.
///
/// # Errors
///
/// [`Error::NonPositiveWorkers`].
pub fn workers(flag: &'static str, value: i32) -> Result<usize> {
    usize::try_from(value).ok().filter(|n| *n > 0).ok_or(Error::NonPositiveWorkers { flag, value })
}

/// `value` of `flag`, refused outside `range` with upstream's messages
/// (`... must not be less than 1, but got 0`).
///
/// # Errors
///
/// [`Error::OutOfRange`].
pub fn within(flag: &'static str, value: i32, range: std::ops::RangeInclusive<i32>) -> Result<usize> {
    if value < *range.start() {
        return Err(Error::OutOfRange { flag, bound: "less", limit: *range.start(), value });
    }
    if value > *range.end() {
        return Err(Error::OutOfRange { flag, bound: "more", limit: *range.end(), value });
    }
    // Not negative: the range starts at 1.
    Ok(value.unsigned_abs() as usize)
}

#[cfg(test)]
pub(crate) mod testing {
    //! What the settings modules' tests share: parsing one controller's
    //! flags alone, and its declared defaults.

    use clap::Command;

    use super::{ControllerFlags, Workers, augment};
    use crate::config::{Error, Result};

    /// The command line of `F`'s flags alone.
    pub(crate) fn command<F: ControllerFlags>() -> Command {
        augment::<F>(Command::new("kcm-rs").args_override_self(true))
    }

    /// `F`'s flags parsed from `args` (the program name is added).
    pub(crate) fn flags<F: ControllerFlags>(args: &[&str]) -> Result<F, clap::Error> {
        let matches = command::<F>().try_get_matches_from(std::iter::once("kcm-rs").chain(args.iter().copied()))?;
        F::from_arg_matches(&matches)
    }

    /// `F`'s settings from `args`, which must parse.
    pub(crate) fn settings<F: ControllerFlags>(args: &[&str]) -> Result<F::Settings> {
        flags::<F>(args).expect("flags parse").settings()
    }

    /// The declared default of each flag of `F`, by long name; asserts they
    /// are `want`.
    pub(crate) fn assert_defaults<F: ControllerFlags>(want: &[(&str, &str)]) {
        let cmd = command::<F>();
        for (name, want) in want {
            let arg = cmd.get_arguments().find(|a| a.get_long() == Some(name)).unwrap_or_else(|| panic!("--{name}"));
            let got: Vec<_> = arg.get_default_values().iter().map(|v| v.to_string_lossy().into_owned()).collect();
            assert_eq!(got, [*want], "--{name}");
        }
    }

    /// Asserts that `F`'s one flag, the worker count `flag`, defaults to
    /// `default`, refuses `bad` and takes `good`.
    pub(crate) fn assert_workers_flag<F: ControllerFlags<Settings = Workers>>(
        flag: &'static str,
        default: i32,
        bad: i32,
        good: i32,
    ) {
        assert_defaults::<F>(&[(flag, &default.to_string())]);
        assert_eq!(settings::<F>(&[]).unwrap().workers.to_string(), default.to_string(), "--{flag}");
        let bad_arg = format!("--{flag}={bad}");
        assert_eq!(settings::<F>(&[&bad_arg]).unwrap_err(), Error::NonPositiveWorkers { flag, value: bad });
        let good_arg = format!("--{flag}={good}");
        assert_eq!(settings::<F>(&[&good_arg]).unwrap().workers.to_string(), good.to_string(), "--{flag}");
    }
}
