//! What controllers hold: [`EventRecorder`], which only queues (never
//! blocks), its [`Builder`], which spawns the writer task, and
//! [`EventWriter`], the handle to await that task. The task itself is
//! `writer.rs`'s.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{EventSource, ObjectReference};
use kcm_gotime::Jitter;
use kube::Client;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

use super::writer::{Pending, Stop, Writer, object_key};
use super::{
    Correlator, DEFAULT_FLUSH_TIMEOUT, DEFAULT_MAX_TRIES, DEFAULT_QUEUE_CAPACITY, DEFAULT_RETRY_SLEEP, EventType,
};

/// Records Events about objects on behalf of one component.
///
/// Cheap to clone; clones share one queue and one writer task. Dropping the
/// last clone stops the writer (after it has flushed the queue).
#[doc(alias = "EventBroadcaster")]
#[derive(Clone)]
pub struct EventRecorder {
    shared: Arc<Shared>,
}

/// What every clone of a recorder shares.
struct Shared {
    /// The queue to the writer task. Bounded so that a stalled API server
    /// costs dropped events, not memory or blocked callers.
    queue: mpsc::Sender<Pending>,
    /// Held only so that the writer learns, through
    /// `watch::Sender::closed`, that the last recorder is gone, even while
    /// it is sleeping between retries.
    _alive: watch::Receiver<()>,
    /// The component, for log lines.
    component: String,
    /// Events dropped so far by this recorder's clones.
    dropped: AtomicU64,
    /// The same, exported, if the builder was given a counter.
    dropped_counter: Option<prometheus::IntCounter>,
}

impl EventRecorder {
    /// A recorder with the default settings for `component` (the Events'
    /// `source.component`, e.g. `deployment-controller`), whose writer runs
    /// until every clone is dropped.
    ///
    /// # Panics
    /// Outside a tokio runtime, as [`tokio::spawn`].
    pub fn new(client: Client, component: impl Into<String>) -> Self {
        Self::builder(client, component).spawn().0
    }

    /// A builder, to set the host, the shutdown signal, the retry timing or
    /// a dropped-events counter.
    pub fn builder(client: Client, component: impl Into<String>) -> Builder {
        Builder {
            client,
            component: component.into(),
            host: None,
            queue_capacity: DEFAULT_QUEUE_CAPACITY,
            max_tries: DEFAULT_MAX_TRIES,
            retry_sleep: DEFAULT_RETRY_SLEEP,
            flush_timeout: DEFAULT_FLUSH_TIMEOUT,
            shutdown: None,
            dropped_counter: None,
        }
    }

    /// Records an event about the object `regarding` refers to.
    ///
    /// Never blocks and never fails: the event is queued for the writer
    /// task, or dropped (counted and logged) if the queue is full or the
    /// writer has stopped. `reason` should be UpperCamelCase and short
    /// (upstream reasons such as `ScalingReplicaSet`); `message` is for
    /// humans.
    pub fn event(&self, regarding: &ObjectReference, kind: EventType, reason: &str, message: impl Into<String>) {
        let pending = Pending {
            regarding: regarding.clone(),
            kind,
            reason: reason.to_owned(),
            message: message.into(),
            at: Timestamp::now(),
        };
        if let Err(err) = self.shared.queue.try_send(pending) {
            let (why, pending) = match err {
                mpsc::error::TrySendError::Full(p) => ("too many queued events", p),
                mpsc::error::TrySendError::Closed(p) => ("the event writer has stopped", p),
            };
            self.shared.dropped.fetch_add(1, Ordering::Relaxed);
            if let Some(counter) = &self.shared.dropped_counter {
                counter.inc();
            }
            tracing::error!(
                component = %self.shared.component,
                object = %object_key(&pending.regarding),
                kind = %pending.kind,
                reason = %pending.reason,
                message = %pending.message,
                "unable to record event: {why}, dropped event",
            );
        }
    }

    /// Events dropped so far because the queue was full or closed.
    pub fn dropped(&self) -> u64 {
        self.shared.dropped.load(Ordering::Relaxed)
    }
}

impl fmt::Debug for EventRecorder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EventRecorder")
            .field("component", &self.shared.component)
            .field("dropped", &self.dropped())
            .finish_non_exhaustive()
    }
}

// === Builder ===

/// Settings of an [`EventRecorder`] and its writer task.
#[must_use]
pub struct Builder {
    client: Client,
    component: String,
    host: Option<String>,
    queue_capacity: usize,
    max_tries: u32,
    retry_sleep: Duration,
    flush_timeout: Duration,
    shutdown: Option<Pin<Box<dyn Future<Output = ()> + Send>>>,
    dropped_counter: Option<prometheus::IntCounter>,
}

impl Builder {
    /// Sets `source.host` (and `reportingInstance`). kube-controller-manager
    /// leaves it empty.
    pub fn host(mut self, host: impl Into<String>) -> Self {
        self.host = Some(host.into());
        self
    }

    /// Sets how many events may wait for the writer before new ones are
    /// dropped (default [`DEFAULT_QUEUE_CAPACITY`]; at least 1).
    pub fn queue_capacity(mut self, capacity: usize) -> Self {
        self.queue_capacity = capacity.max(1);
        self
    }

    /// Sets the attempts per event (default [`DEFAULT_MAX_TRIES`]; at least 1).
    pub fn max_tries(mut self, tries: u32) -> Self {
        self.max_tries = tries.max(1);
        self
    }

    /// Sets the sleep between attempts (default [`DEFAULT_RETRY_SLEEP`]).
    pub fn retry_sleep(mut self, sleep: Duration) -> Self {
        self.retry_sleep = sleep;
        self
    }

    /// Sets how long a stopping writer spends on the events still queued
    /// (default [`DEFAULT_FLUSH_TIMEOUT`]).
    pub fn flush_timeout(mut self, timeout: Duration) -> Self {
        self.flush_timeout = timeout;
        self
    }

    /// Stops the writer when `signal` completes (as upstream's
    /// `WithContext` cancellation), even while recorders remain.
    pub fn shutdown(mut self, signal: impl Future<Output = ()> + Send + 'static) -> Self {
        self.shutdown = Some(Box::pin(signal));
        self
    }

    /// Counts dropped events in `counter` too (see [`dropped_events_counter`](super::dropped_events_counter)).
    pub fn dropped_counter(mut self, counter: prometheus::IntCounter) -> Self {
        self.dropped_counter = Some(counter);
        self
    }

    /// Spawns the writer task and returns the recorder and the writer's
    /// handle. Dropping the handle detaches the writer; it still stops as
    /// described in the module docs.
    ///
    /// # Panics
    /// Outside a tokio runtime, as [`tokio::spawn`].
    pub fn spawn(self) -> (EventRecorder, EventWriter) {
        let (queue, rx) = mpsc::channel(self.queue_capacity);
        let (alive_tx, alive_rx) = watch::channel(());
        let source = EventSource { component: Some(self.component.clone()), host: self.host };
        let writer = Writer {
            client: self.client,
            source,
            rx,
            stop: Stop { shutdown: self.shutdown, alive: alive_tx, fired: false },
            correlator: Correlator::default(),
            max_tries: self.max_tries,
            retry_sleep: self.retry_sleep,
            flush_timeout: self.flush_timeout,
            jitter: Jitter::from_entropy(),
        };
        let task = tokio::spawn(writer.run());
        let shared = Shared {
            queue,
            _alive: alive_rx,
            component: self.component,
            dropped: AtomicU64::new(0),
            dropped_counter: self.dropped_counter,
        };
        (EventRecorder { shared: Arc::new(shared) }, EventWriter { task })
    }
}

impl fmt::Debug for Builder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Builder")
            .field("component", &self.component)
            .field("host", &self.host)
            .field("queue_capacity", &self.queue_capacity)
            .field("max_tries", &self.max_tries)
            .field("retry_sleep", &self.retry_sleep)
            .field("flush_timeout", &self.flush_timeout)
            .finish_non_exhaustive()
    }
}

// === EventWriter ===

/// Handle on a recorder's writer task.
#[derive(Debug)]
pub struct EventWriter {
    task: JoinHandle<()>,
}

impl EventWriter {
    /// Waits until the writer has stopped and flushed (see the module docs
    /// for what stops it).
    pub async fn join(self) {
        if let Err(err) = self.task.await
            && err.is_panic()
        {
            tracing::error!(error = %err, "event writer panicked");
        }
    }
}
