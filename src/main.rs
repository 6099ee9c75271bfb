//! The kcm-rs daemon: flags -> configuration -> run, and how it ended ->
//! exit code (nothing else).

use std::process::ExitCode;

use kcm_rs::config::{Flags, LogFormat};
use kcm_rs::controllers;
use kcm_rs::daemon::{self, Exit};

/// mimalloc, not the C library's allocator: glibc's malloc and free took
/// a fifth of kcm-rs's CPU in a rollout and a third at start-up at
/// 100,000 pods, and the image's static musl build would otherwise get
/// musl's much slower allocator (docs/benchmarks.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> anyhow::Result<ExitCode> {
    let implemented = controllers::flags();
    let config = Flags::from_env_args(&implemented).into_config(&implemented)?;
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(config.logging.level.as_str().to_lowercase()));
    let logs = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr);
    match config.logging.format {
        LogFormat::Text => logs.init(),
        LogFormat::Json => logs.json().init(),
    }
    let runtime = tokio::runtime::Runtime::new()?;
    let exit = runtime.block_on(daemon::run(config, Box::pin(termination())))?;
    Ok(match exit {
        Exit::Stopped => ExitCode::SUCCESS,
        Exit::LeaderLost | Exit::ControllersFailed => ExitCode::FAILURE,
    })
}

/// Completes on SIGTERM or SIGINT.
async fn termination() {
    use tokio::signal::unix::{SignalKind, signal};
    match signal(SignalKind::terminate()) {
        Ok(mut term) => {
            tokio::select! {
                _ = term.recv() => tracing::info!("SIGTERM received, shutting down"),
                _ = tokio::signal::ctrl_c() => tracing::info!("SIGINT received, shutting down"),
            }
        }
        Err(e) => {
            tracing::warn!(error = %e, "cannot watch SIGTERM; only SIGINT stops the daemon");
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}
