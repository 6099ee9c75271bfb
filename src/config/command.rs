//! The full command line of [`Flags`]: the derived process-wide flags, then
//! each implemented controller's flags (in the order of the controllers'
//! names, each settings type once), then the logging and kcm-rs flags
//! ([`TailFlags`]), with upstream's help texts restored and the
//! `--controllers` help filled in, and a hidden argument for each upstream
//! flag kcm-rs lacks, consumed and then refused with an error naming it
//! (their table is `refused.rs`).

use clap::{Arg, ArgAction, CommandFactory, FromArgMatches};

use super::feature_gates::feature_gates_help;
use super::flags::{Flags, TailFlags};
use super::settings::{Implemented, augment};
use super::{CONTROLLERS, FlagKind, Result, UNIMPLEMENTED_UPSTREAM_FLAGS, UpstreamDefault};

impl Flags {
    /// The full command: the derived flags, the `--controllers` help listing
    /// every upstream controller, and a hidden argument for each upstream flag
    /// kcm-rs refuses (so that its value, if any, is consumed and the refusal
    /// names the flag rather than a stray value).
    /// `implemented` are the controllers kcm-rs runs (the daemon's
    /// controller table): their flags, and their names for the
    /// `--controllers` help.
    pub fn command(implemented: &[&dyn Implemented]) -> clap::Command {
        let names: Vec<&str> = implemented.iter().map(|c| c.name()).collect();
        let help = controllers_help(&names);
        let mut by_name = implemented.to_vec();
        by_name.sort_by_key(|c| c.name());
        let mut cmd = <Flags as CommandFactory>::command();
        let mut added = Vec::new();
        let mut without_period = HELP_WITHOUT_PERIOD.to_vec();
        for controller in by_name {
            if !added.contains(&controller.flags_type()) {
                added.push(controller.flags_type());
                cmd = controller.augment(cmd);
                without_period.extend(controller.help_without_period());
            }
        }
        let mut cmd = augment::<TailFlags>(cmd)
            .mut_args(|arg| restore_final_period(arg, &without_period))
            .mut_arg("controllers", |arg| arg.help(help.clone()).long_help(help))
            .mut_arg("feature_gates", |arg| arg.long_help(feature_gates_help()));
        for flag in UNIMPLEMENTED_UPSTREAM_FLAGS {
            let arg = Arg::new(flag.name).long(flag.name).hide(true).action(ArgAction::Append);
            let arg = match flag.kind {
                FlagKind::Bool => arg.num_args(0..=1).require_equals(true).default_missing_value("true"),
                FlagKind::Value => arg.num_args(1).allow_hyphen_values(true),
            };
            cmd = cmd.arg(arg);
        }
        cmd.after_long_help(
            "kube-controller-manager flags that kcm-rs does not implement (for example --cloud-provider, \
             --profiling) are refused with an error naming them, never silently ignored.",
        )
    }

    /// Parses the process's arguments, printing help, version or an error
    /// and exiting as clap does.
    pub fn from_env_args(implemented: &[&dyn Implemented]) -> Flags {
        Flags::try_from_args(std::env::args_os(), implemented).unwrap_or_else(|e| e.exit())
    }

    /// Parses `args` (the first item is the program name).
    ///
    /// # Errors
    ///
    /// clap's error for malformed or unknown flags, and for any
    /// [`UNIMPLEMENTED_UPSTREAM_FLAGS`] present.
    pub fn try_from_args<I, T>(args: I, implemented: &[&dyn Implemented]) -> Result<Flags, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        let mut cmd = Flags::command(implemented);
        let matches = cmd.try_get_matches_from_mut(args)?;
        let refused: Vec<&str> =
            UNIMPLEMENTED_UPSTREAM_FLAGS.iter().filter(|f| matches.contains_id(f.name)).map(|f| f.name).collect();
        if !refused.is_empty() {
            let listed = refused.iter().map(|n| format!("--{n}")).collect::<Vec<_>>().join(", ");
            let (noun, verb) = if refused.len() == 1 { ("flag", "is") } else { ("flags", "are") };
            let msg = format!(
                "kube-controller-manager {noun} {listed} {verb} not implemented by kcm-rs; remove {} to run \
                 kcm-rs\n",
                if refused.len() == 1 { "it" } else { "them" }
            );
            return Err(clap::Error::raw(clap::error::ErrorKind::ArgumentConflict, msg).with_cmd(&cmd));
        }
        let mut flags = Flags::from_arg_matches(&matches).map_err(|e| e.with_cmd(&cmd))?;
        flags.tail = TailFlags::from_arg_matches(&matches).map_err(|e| e.with_cmd(&cmd))?;
        flags.matches = matches;
        Ok(flags)
    }
}

/// Upstream help texts of process-wide flags whose last sentence has no
/// final period (each controller's are its settings').
const HELP_WITHOUT_PERIOD: &[&str] = &["verbosity"];

/// clap's derive drops the final period of a one-paragraph doc comment;
/// upstream's help keeps it, and so do we, except for the flags in
/// `without_period`.
fn restore_final_period(arg: Arg, without_period: &[&str]) -> Arg {
    let id = arg.get_id().as_str().to_owned();
    match arg.get_help().map(ToString::to_string) {
        Some(help) if !help.ends_with(['.', ')']) && !without_period.contains(&id.as_str()) => {
            arg.help(format!("{help}."))
        }
        _ => arg,
    }
}

/// Help text of `--controllers`: upstream's sentence plus its two lists, then
/// which of them kcm-rs runs.
fn controllers_help(implemented: &[&str]) -> String {
    let all: Vec<&str> = CONTROLLERS.iter().map(|c| c.name).collect();
    let off: Vec<&str> =
        CONTROLLERS.iter().filter(|c| c.upstream_default == UpstreamDefault::Off).map(|c| c.name).collect();
    let ours: Vec<&str> = CONTROLLERS.iter().filter(|c| implemented.contains(&c.name)).map(|c| c.name).collect();
    format!(
        "A list of controllers to enable. '*' enables all on-by-default controllers, 'foo' enables the controller \
         named 'foo', '-foo' disables the controller named 'foo'.\nAll controllers: {}\nDisabled-by-default \
         controllers: {}\nkcm-rs's controllers: {} ('*' selects those of them that are on by default; any other \
         controller the list selects does not run, and kcm-rs says so when it starts).",
        all.join(", "),
        off.join(", "),
        ours.join(", ")
    )
}
