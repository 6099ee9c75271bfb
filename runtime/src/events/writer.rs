//! The writer task: takes events off the recorders' queue, runs them
//! through the [`Correlator`], and writes what it says (a create, or a patch
//! of an Event written before), retrying transient failures as upstream
//! does with a jittered first sleep; on stopping, flushes the queue with one
//! attempt per event. What to write is the correlator's decision, not this
//! module's.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{Event, EventSource, ObjectReference};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use kcm_gotime::Jitter;
use kube::Client;
use kube::api::{Api, Patch, PatchParams, PostParams};
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

use super::{Correlated, Correlator, EventType};

/// An event as the caller described it, before correlation.
#[derive(Debug, Clone)]
pub(super) struct Pending {
    pub(super) regarding: ObjectReference,
    pub(super) kind: EventType,
    pub(super) reason: String,
    pub(super) message: String,
    /// When [`EventRecorder::event`] was called (first/lastTimestamp).
    pub(super) at: Timestamp,
}

/// The background task: queue -> correlator -> API server.
pub(super) struct Writer {
    pub(super) client: Client,
    pub(super) source: EventSource,
    pub(super) rx: mpsc::Receiver<Pending>,
    pub(super) stop: Stop,
    pub(super) correlator: Correlator,
    pub(super) max_tries: u32,
    pub(super) retry_sleep: Duration,
    pub(super) flush_timeout: Duration,
    /// Jitter of the first retry sleep.
    pub(super) jitter: Jitter,
}

/// Why the writer should stop: its shutdown signal, or every recorder gone.
pub(super) struct Stop {
    pub(super) shutdown: Option<Pin<Box<dyn Future<Output = ()> + Send>>>,
    /// Its receiver lives in the recorders' shared state; `closed()`
    /// resolves once the last recorder is dropped.
    pub(super) alive: watch::Sender<()>,
    /// Set once either has happened, so that waiting again returns at once.
    pub(super) fired: bool,
}

impl Stop {
    /// Resolves when the writer should stop (at once if it already should).
    async fn wait(&mut self) {
        if self.fired {
            return;
        }
        let Stop { shutdown, alive, .. } = self;
        let signal = async {
            match shutdown {
                Some(signal) => signal.await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            () = signal => {}
            () = alive.closed() => {}
        }
        self.fired = true;
    }
}

/// What became of one attempt to write an event.
enum Attempt {
    /// Written; the server's copy.
    Recorded(Box<Event>),
    /// Not written, and never will be: the server refused it.
    Abandoned,
    /// Not written; worth another attempt.
    Retry,
}

impl Writer {
    pub(super) async fn run(mut self) {
        loop {
            let pending = tokio::select! {
                biased;
                () = self.stop.wait() => break,
                pending = self.rx.recv() => match pending {
                    Some(pending) => pending,
                    None => break,
                },
            };
            self.record(pending).await;
        }
        self.flush().await;
    }

    /// Stops taking events, then writes those queued, one attempt each,
    /// for at most the flush timeout.
    async fn flush(&mut self) {
        self.rx.close();
        let queued = self.rx.len();
        let flushed = tokio::time::timeout(self.flush_timeout, async {
            while let Some(pending) = self.rx.recv().await {
                self.record(pending).await;
            }
        })
        .await;
        if flushed.is_err() {
            tracing::warn!(
                component = ?self.source.component,
                queued,
                left = self.rx.len(),
                "event writer stopped before flushing every queued event",
            );
        }
    }

    /// Correlates one event and writes it, retrying as upstream does.
    async fn record(&mut self, pending: Pending) {
        let name = self.correlator.unique_name(&pending.regarding, pending.at);
        let event = make_event(&self.source, pending, name);
        let Some(correlated) = self.correlator.correlate(event, Instant::now(), Timestamp::now()) else {
            tracing::debug!("event dropped by the spam filter");
            return;
        };
        let mut tries = 0;
        loop {
            match write(&self.client, &correlated).await {
                Attempt::Recorded(server) => {
                    self.correlator.update_state(&correlated.key, &server);
                    return;
                }
                Attempt::Abandoned => return,
                Attempt::Retry => {}
            }
            tries += 1;
            if tries >= self.max_tries {
                tracing::error!(event = %describe(&correlated.event), "unable to write event (retry limit exceeded)");
                return;
            }
            if self.stop.fired {
                tracing::error!(event = %describe(&correlated.event), "unable to write event (recorder is stopping)");
                return;
            }
            let delay = if tries == 1 { self.retry_sleep.mul_f64(self.jitter.unit()) } else { self.retry_sleep };
            tokio::select! {
                () = tokio::time::sleep(delay) => {}
                () = self.stop.wait() => {
                    tracing::error!(event = %describe(&correlated.event), "unable to write event (recorder is stopping)");
                    return;
                }
            }
        }
    }
}

/// One attempt: patch the Event written before (create it if it has gone),
/// or create a new one.
async fn write(client: &Client, correlated: &Correlated) -> Attempt {
    let event = &correlated.event;
    let namespace = event.metadata.namespace.as_deref().unwrap_or("default");
    let name = event.metadata.name.as_deref().unwrap_or_default();
    let api: Api<Event> = Api::namespaced(client.clone(), namespace);
    if let Some(patch) = &correlated.patch {
        match api.patch(name, &PatchParams::default(), &Patch::Strategic(patch)).await {
            Ok(server) => return Attempt::Recorded(Box::new(server)),
            // Deleted (or expired) since: write it anew, count and all.
            Err(kube::Error::Api(status)) if status.is_not_found() => {}
            Err(err) => return failed(event, &err),
        }
    }
    let mut fresh = event.clone();
    fresh.metadata.resource_version = None;
    match api.create(&PostParams::default(), &fresh).await {
        Ok(server) => Attempt::Recorded(Box::new(server)),
        Err(err) => failed(event, &err),
    }
}

/// Logs a failed attempt and says whether to try again.
fn failed(event: &Event, err: &kube::Error) -> Attempt {
    match classify(err) {
        Failure::Transient => {
            tracing::warn!(event = %describe(event), error = %err, "unable to write event (may retry after sleeping)");
            Attempt::Retry
        }
        Failure::Expected => {
            tracing::debug!(event = %describe(event), error = %err, "server rejected event (will not retry)");
            Attempt::Abandoned
        }
        Failure::Rejected => {
            tracing::error!(event = %describe(event), error = %err, "server rejected event (will not retry)");
            Attempt::Abandoned
        }
    }
}

/// How a failed write is handled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Failure {
    /// The server could not be reached or was overloaded: retry.
    Transient,
    /// Refused for a reason that is no news (the Event exists already, its
    /// namespace is going away): drop quietly.
    Expected,
    /// Refused, or the request cannot be built: drop and log an error.
    Rejected,
}

/// The one place that decides whether a failed write is retried.
///
/// Upstream retries transport errors and unexpected answers, and gives up
/// on any API status error; but client-go's REST client has already retried
/// 429s and 5xx answers carrying `Retry-After` by then, which kube's client
/// does not, so those are retried here.
pub(super) fn classify(err: &kube::Error) -> Failure {
    match err {
        kube::Error::Api(status) => {
            let terminating =
                status.details.as_ref().is_some_and(|d| d.causes.iter().any(|c| c.reason == "NamespaceTerminating"));
            if status.code == 429 || status.code >= 500 {
                Failure::Transient
            } else if status.is_already_exists() || terminating {
                Failure::Expected
            } else {
                Failure::Rejected
            }
        }
        kube::Error::BuildRequest(_) | kube::Error::HttpError(_) => Failure::Rejected,
        _ => Failure::Transient,
    }
}

/// The Event for a freshly recorded occurrence (upstream `makeEvent` plus
/// the source fields `generateEvent` sets).
pub(super) fn make_event(source: &EventSource, pending: Pending, name: String) -> Event {
    let namespace = match pending.regarding.namespace.as_deref() {
        Some(ns) if !ns.is_empty() => ns.to_owned(),
        _ => "default".to_owned(),
    };
    Event {
        metadata: ObjectMeta { name: Some(name), namespace: Some(namespace), ..ObjectMeta::default() },
        involved_object: pending.regarding,
        reason: Some(pending.reason),
        message: Some(pending.message),
        first_timestamp: Some(Time(pending.at)),
        last_timestamp: Some(Time(pending.at)),
        count: Some(1),
        type_: Some(pending.kind.as_str().to_owned()),
        source: Some(source.clone()),
        reporting_component: Some(source.component.clone().unwrap_or_default()),
        reporting_instance: Some(source.host.clone().unwrap_or_default()),
        ..Event::default()
    }
}

/// `namespace/name` (or `name`) of the object a reference points at.
pub(super) fn object_key(r: &ObjectReference) -> String {
    kcm_objects::object_key(r.namespace.as_deref(), r.name.as_deref().unwrap_or_default())
}

/// A one-line description of an event for log lines.
pub(super) fn describe(event: &Event) -> String {
    format!(
        "{} {} {}: {} {}",
        event.involved_object.kind.as_deref().unwrap_or_default(),
        object_key(&event.involved_object),
        event.type_.as_deref().unwrap_or_default(),
        event.reason.as_deref().unwrap_or_default(),
        event.message.as_deref().unwrap_or_default(),
    )
}
