//! The kcm-rs daemon: parse flags, then run.

use clap::Parser;
use kcm_rs::config::Flags;

fn main() -> anyhow::Result<()> {
    let _flags = Flags::parse();
    anyhow::bail!(
        "kcm-rs runs no controller yet: the runtime and controllers are still being built \
         (see README.md); use `kube-sim` to run the simulated cluster on its own"
    )
}
