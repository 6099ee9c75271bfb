//! One run's triggers: the shutdown future, the stop signal fed to the
//! `leading` task, and that task, which the election loop's waits watch.

use std::future::Future;
use std::pin::Pin;

use tokio::sync::watch;
use tokio::task::{JoinError, JoinHandle};
use tokio::time::Instant;

use super::StopReason;

/// The run's moving parts that the waits watch.
pub(super) struct Term<S> {
    /// The shutdown trigger; `None` once it has fired.
    pub(super) shutdown: Option<Pin<Box<S>>>,
    /// Feeds every [`StopSignal`]; dropping it (with the run) means Lost.
    pub(super) stop: watch::Sender<Option<StopReason>>,
    /// The `leading` task while it runs; aborted if the run is dropped.
    pub(super) task: Option<JoinHandle<()>>,
    /// How the `leading` task failed, reported once the run is done.
    pub(super) task_failure: Option<JoinError>,
}

/// Why a wait ended.
#[derive(Debug)]
pub(super) enum Wake {
    /// The time came.
    Elapsed,
    /// Shutdown was requested (the stop signal has been sent).
    Shutdown,
    /// The `leading` task ended.
    TaskEnded,
}

impl<S: Future<Output = ()>> Term<S> {
    /// Waits until `at`, shutdown or the end of the `leading` task,
    /// whichever comes first, and records the latter two.
    pub(super) async fn wait(&mut self, at: Instant) -> Wake {
        enum Woken {
            Elapsed,
            Shutdown,
            Task(Result<(), JoinError>),
        }
        let woken = {
            let Term { shutdown, task, .. } = self;
            let shutdown = async {
                match shutdown.as_mut() {
                    Some(shutdown) => shutdown.await,
                    None => std::future::pending().await,
                }
            };
            let task = async {
                match task.as_mut() {
                    Some(task) => task.await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                () = tokio::time::sleep_until(at) => Woken::Elapsed,
                () = shutdown => Woken::Shutdown,
                result = task => Woken::Task(result),
            }
        };
        match woken {
            Woken::Elapsed => Wake::Elapsed,
            Woken::Shutdown => {
                self.shutdown = None;
                self.request_stop(StopReason::Shutdown);
                Wake::Shutdown
            }
            Woken::Task(result) => {
                self.task = None;
                if let Err(err) = result {
                    tracing::error!(error = %err, "the leading task failed");
                    self.task_failure = Some(err);
                }
                Wake::TaskEnded
            }
        }
    }
}

impl<S> Term<S> {
    /// Sends a stop reason: the first one, or Lost over Shutdown (the
    /// draining controllers must then stop at once).
    pub(super) fn request_stop(&self, reason: StopReason) {
        self.stop.send_if_modified(|current| {
            let replace = match *current {
                None => true,
                Some(StopReason::Shutdown) => reason == StopReason::Lost,
                Some(StopReason::Lost) => false,
            };
            if replace {
                *current = Some(reason);
            }
            replace
        });
    }
}

impl<S> Drop for Term<S> {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}
