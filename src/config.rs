//! Command-line flags, spelled as kube-controller-manager spells them.
//!
//! Only the flags whose behaviour exists are accepted; the rest of
//! kube-controller-manager's flags arrive with the runtime pieces they
//! configure.

use std::path::PathBuf;

use clap::Parser;

/// kcm-rs command line.
#[derive(Debug, Parser)]
#[command(name = "kcm-rs", version, about = "A standalone replacement for kube-controller-manager")]
pub struct Flags {
    /// Path to a kubeconfig file. Empty means in-cluster configuration, then
    /// `KUBECONFIG`, then `~/.kube/config`.
    #[arg(long, env = "KUBECONFIG", default_value = "")]
    pub kubeconfig: PathBuf,
}
