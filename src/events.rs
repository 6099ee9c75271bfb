//! Event recording: core/v1 Events, as kube-controller-manager writes them.
//!
//! kube-controller-manager records Events through client-go's legacy
//! broadcaster (`tools/record`): a controller calls `Event(object, type,
//! reason, message)`, which never blocks; a background loop correlates the
//! event (spam filter, aggregation, de-duplication) and writes it to the API
//! server with a few retries. `kubectl describe` then lists the Events whose
//! `involvedObject` is the object described. This module is that machinery:
//!
//! - [`EventRecorder`]: what controllers hold. [`EventRecorder::event`] only
//!   puts the event on a bounded queue; when the queue is full the event is
//!   dropped, counted and logged, never waited for.
//! - the writer task (spawned by [`Builder::spawn`], awaited through
//!   [`EventWriter`]): takes events off the queue one at a time, runs them
//!   through the [`Correlator`] and writes what it says: a create, or a
//!   strategic merge patch of `count`/`lastTimestamp`/`message` on an Event
//!   written before (falling back to a create when that Event is gone).
//!   Failed writes are retried as upstream does: up to [`DEFAULT_MAX_TRIES`]
//!   attempts, [`DEFAULT_RETRY_SLEEP`] apart, the first sleep jittered.
//! - [`Correlator`]: upstream's `EventCorrelator`, sans-IO: event in, the
//!   write to make (or nothing) out, `now` passed in. Three bounded LRU
//!   caches of [`CACHE_ENTRIES`] entries each hold its state, so memory stays
//!   bounded however many objects events are about.
//!
//! The writer stops when its shutdown signal fires or when every recorder
//! is dropped. It then stops accepting events, and writes what is left on
//! the queue with one attempt each, for at most the flush timeout.
//!
//! Events are written as upstream writes them: named `<object>.<hex unix
//! nanoseconds>`, in the object's namespace (`default` for cluster-scoped
//! objects), with `source.component` (and `source.host`), and
//! `reportingComponent`/`reportingInstance` copied from the source. Each
//! upstream controller has its own broadcaster and component
//! (`deployment-controller`, `replicaset-controller`, `node-controller`,
//! `namespace-controller`, ...); the process-wide one is
//! `kube-controller-manager`. Build one recorder per component likewise.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::future::Future;
use std::hash::{BuildHasher, Hasher};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{Event, EventSource, ObjectReference};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use kube::Client;
use kube::api::{Api, Patch, PatchParams, PostParams};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;
use tokio::time::Instant;

/// Events the queue between recorders and writer holds before new ones are
/// dropped (upstream `maxQueuedEvents`).
pub const DEFAULT_QUEUE_CAPACITY: usize = 1000;

/// Attempts made to write one event before giving up (upstream
/// `maxTriesPerEvent`).
pub const DEFAULT_MAX_TRIES: u32 = 12;

/// Sleep between two attempts to write an event; the first sleep is a random
/// share of it, so that clients do not retry in step (upstream
/// `defaultSleepDuration`).
pub const DEFAULT_RETRY_SLEEP: Duration = Duration::from_secs(10);

/// How long a stopping writer spends writing the events still queued.
pub const DEFAULT_FLUSH_TIMEOUT: Duration = Duration::from_secs(5);

/// Entries in each of the correlator's LRU caches (upstream
/// `maxLruCacheEntries`).
pub const CACHE_ENTRIES: usize = 4096;

/// Distinct messages of similar events (same source, object, type and
/// reason) within [`AGGREGATE_INTERVAL`] from which on they are written as
/// one aggregated event (upstream `defaultAggregateMaxEvents`).
pub const AGGREGATE_MAX_EVENTS: usize = 10;

/// Window of aggregation: similar events further apart than this start a
/// new group (upstream `defaultAggregateIntervalInSeconds`).
pub const AGGREGATE_INTERVAL: Duration = Duration::from_secs(600);

/// Prefix of an aggregated event's message (upstream
/// `EventAggregatorByReasonMessageFunc`).
pub const AGGREGATE_MESSAGE_PREFIX: &str = "(combined from similar events): ";

/// Events one source may write about one object in a burst (upstream
/// `defaultSpamBurst`).
pub const SPAM_BURST: f64 = 25.0;

/// Refill rate of the per source+object token bucket, in events per second:
/// one every five minutes (upstream `defaultSpamQPS`).
pub const SPAM_QPS: f64 = 1.0 / 300.0;

/// Name of the counter made by [`dropped_events_counter`]. Upstream has no
/// such metric (it only logs), hence the project prefix.
pub const DROPPED_METRIC_NAME: &str = "kcm_events_dropped_total";

/// Builds the counter of events dropped because the recorder's queue was
/// full or closed, for [`Builder::dropped_counter`]. The caller registers it
/// (once, however many recorders share it).
pub fn dropped_events_counter() -> prometheus::Result<prometheus::IntCounter> {
    prometheus::IntCounter::new(
        DROPPED_METRIC_NAME,
        "Events dropped before reaching the API server because the event recorder's queue was full or closed.",
    )
}

// === EventType ===

/// The type of an Event, as `kubectl describe` shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventType {
    /// Something expected happened (`Normal`).
    Normal,
    /// Something may need attention (`Warning`).
    Warning,
}

impl EventType {
    /// The spelling in `Event.type`.
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Normal => "Normal",
            EventType::Warning => "Warning",
        }
    }
}

impl fmt::Display for EventType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

// === EventRecorder ===

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

/// An event as the caller described it, before correlation.
#[derive(Debug, Clone)]
struct Pending {
    regarding: ObjectReference,
    kind: EventType,
    reason: String,
    message: String,
    /// When [`EventRecorder::event`] was called (first/lastTimestamp).
    at: Timestamp,
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

    /// Counts dropped events in `counter` too (see [`dropped_events_counter`]).
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
            jitter: SplitMix64::from_entropy(),
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

// === the writer task ===

/// The background task: queue -> correlator -> API server.
struct Writer {
    client: Client,
    source: EventSource,
    rx: mpsc::Receiver<Pending>,
    stop: Stop,
    correlator: Correlator,
    max_tries: u32,
    retry_sleep: Duration,
    flush_timeout: Duration,
    /// Jitter of the first retry sleep.
    jitter: SplitMix64,
}

/// Why the writer should stop: its shutdown signal, or every recorder gone.
struct Stop {
    shutdown: Option<Pin<Box<dyn Future<Output = ()> + Send>>>,
    /// Its receiver lives in the recorders' shared state; `closed()`
    /// resolves once the last recorder is dropped.
    alive: watch::Sender<()>,
    /// Set once either has happened, so that waiting again returns at once.
    fired: bool,
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
    async fn run(mut self) {
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
            let delay = if tries == 1 { self.retry_sleep.mul_f64(self.jitter.next_f64()) } else { self.retry_sleep };
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
enum Failure {
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
fn classify(err: &kube::Error) -> Failure {
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
fn make_event(source: &EventSource, pending: Pending, name: String) -> Event {
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
fn object_key(r: &ObjectReference) -> String {
    let name = r.name.as_deref().unwrap_or_default();
    match r.namespace.as_deref() {
        Some(ns) if !ns.is_empty() => format!("{ns}/{name}"),
        _ => name.to_owned(),
    }
}

/// A one-line description of an event for log lines.
fn describe(event: &Event) -> String {
    format!(
        "{} {} {}: {} {}",
        event.involved_object.kind.as_deref().unwrap_or_default(),
        object_key(&event.involved_object),
        event.type_.as_deref().unwrap_or_default(),
        event.reason.as_deref().unwrap_or_default(),
        event.message.as_deref().unwrap_or_default(),
    )
}

// === Correlator ===

/// The write the correlator asks for.
#[derive(Debug, Clone)]
pub struct Correlated {
    /// The Event to create (or, with a patch, the one patched).
    pub event: Event,
    /// A strategic merge patch for the Event of the same name written
    /// before: new `count`, `lastTimestamp` and `message`.
    pub patch: Option<serde_json::Value>,
    /// The correlator's key for this event, for [`Correlator::update_state`].
    pub key: String,
}

/// Filters, aggregates and de-duplicates events before they are written
/// (upstream `EventCorrelator`), without I/O: callers pass `now`.
///
/// In the order it applies them:
/// 1. aggregation: events alike but for their message (same source, object,
///    type, reason) are grouped; from the [`AGGREGATE_MAX_EVENTS`]th distinct
///    message seen within [`AGGREGATE_INTERVAL`] of the previous one on, the
///    group is written as one event whose message is
///    [`AGGREGATE_MESSAGE_PREFIX`] + the latest message;
/// 2. de-duplication: an event identical to one written before (or the
///    aggregate of its group) becomes a patch of that Event, raising
///    `count` and `lastTimestamp`;
/// 3. spam filter: each source+object has a token bucket ([`SPAM_BURST`],
///    refilled at [`SPAM_QPS`]); without a token the event is dropped. As
///    upstream, the count of step 2 has advanced even so, so the next write
///    reports every occurrence.
#[doc(alias = "EventCorrelator")]
#[derive(Debug)]
pub struct Correlator {
    /// Aggregation groups, by everything but the message.
    aggregates: Lru<AggregateRecord>,
    /// Events written (or about to be), by their full key.
    logs: Lru<EventLog>,
    /// Token buckets, by source+object.
    spam: Lru<TokenBucket>,
    /// Last nanosecond used in a name, so that names stay unique.
    last_name_nanos: i128,
}

/// One aggregation group (upstream `aggregateRecord`).
#[derive(Debug)]
struct AggregateRecord {
    /// The distinct messages seen, never more than the threshold.
    messages: HashSet<String>,
    /// When the group last saw an event.
    last: Instant,
}

/// An Event as last written (upstream `eventLog`).
#[derive(Debug, Clone)]
struct EventLog {
    count: i32,
    first_timestamp: Option<Time>,
    name: String,
    resource_version: Option<String>,
}

/// A token bucket (upstream `flowcontrol.NewTokenBucketRateLimiter`).
#[derive(Debug)]
struct TokenBucket {
    tokens: f64,
    last: Instant,
}

impl TokenBucket {
    fn try_accept(&mut self, now: Instant) -> bool {
        let elapsed = now.saturating_duration_since(self.last).as_secs_f64();
        self.tokens = (self.tokens + elapsed * SPAM_QPS).min(SPAM_BURST);
        self.last = now;
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

impl Default for Correlator {
    fn default() -> Self {
        Correlator {
            aggregates: Lru::new(CACHE_ENTRIES),
            logs: Lru::new(CACHE_ENTRIES),
            spam: Lru::new(CACHE_ENTRIES),
            last_name_nanos: 0,
        }
    }
}

impl Correlator {
    /// Decides the write for `event` (a fresh one, count 1, as
    /// [`EventRecorder::event`] makes them), or `None` if the spam filter
    /// drops it. `now` measures the windows; `wall` names and stamps an
    /// aggregated event.
    pub fn correlate(&mut self, event: Event, now: Instant, wall: Timestamp) -> Option<Correlated> {
        let (event, key) = self.aggregate(event, now, wall);
        let (event, patch) = self.observe(event, &key);
        let spam_key = spam_key(&event);
        let bucket = self.spam.get_or_insert_with(spam_key, || TokenBucket { tokens: SPAM_BURST, last: now });
        if !bucket.try_accept(now) {
            return None;
        }
        Some(Correlated { event, patch, key })
    }

    /// Records the server's copy of an Event written for `key`, so that the
    /// next patch names it (upstream `UpdateState`).
    pub fn update_state(&mut self, key: &str, server: &Event) {
        let log = EventLog {
            count: server.count.unwrap_or(1),
            first_timestamp: server.first_timestamp.clone(),
            name: server.metadata.name.clone().unwrap_or_default(),
            resource_version: server.metadata.resource_version.clone(),
        };
        self.logs.insert(key.to_owned(), log);
    }

    /// Upstream `EventAggregate`: the event, or the aggregate that stands
    /// for it, and the key to de-duplicate it by.
    fn aggregate(&mut self, event: Event, now: Instant, wall: Timestamp) -> (Event, String) {
        let event_key = event_key(&event);
        let message = event.message.clone().unwrap_or_default();
        let record = self
            .aggregates
            .get_or_insert_with(aggregate_key(&event), || AggregateRecord { messages: HashSet::new(), last: now });
        if now.saturating_duration_since(record.last) > AGGREGATE_INTERVAL {
            record.messages.clear();
        }
        record.last = now;
        let fresh = record.messages.insert(message.clone());
        if record.messages.len() < AGGREGATE_MAX_EVENTS {
            return (event, event_key);
        }
        // Keep the group at the threshold: every further new message is
        // aggregated, the messages seen before it keep their own Events.
        // (Upstream drops an arbitrary member instead.)
        if fresh {
            record.messages.remove(&message);
        }
        let name = self.unique_name(&event.involved_object, wall);
        let aggregate = Event {
            metadata: ObjectMeta {
                name: Some(name),
                namespace: event.metadata.namespace.clone(),
                ..ObjectMeta::default()
            },
            involved_object: event.involved_object.clone(),
            reason: event.reason.clone(),
            message: Some(format!("{AGGREGATE_MESSAGE_PREFIX}{message}")),
            first_timestamp: Some(Time(wall)),
            last_timestamp: Some(Time(wall)),
            count: Some(1),
            type_: event.type_.clone(),
            source: event.source.clone(),
            reporting_component: event.reporting_component.clone(),
            reporting_instance: event.reporting_instance.clone(),
            ..Event::default()
        };
        (aggregate, aggregate_key(&event))
    }

    /// Upstream `eventObserve`: if an Event was written for `key`, turn this
    /// one into its next occurrence and the patch that says so.
    fn observe(&mut self, mut event: Event, key: &str) -> (Event, Option<serde_json::Value>) {
        let mut patch = None;
        if let Some(last) = self.logs.get(key).filter(|l| l.count > 0) {
            event.metadata.name = Some(last.name.clone());
            event.metadata.resource_version = last.resource_version.clone();
            event.first_timestamp = last.first_timestamp.clone();
            let count = last.count.saturating_add(1);
            event.count = Some(count);
            // Upstream diffs the event against a copy with count, message and
            // lastTimestamp blanked: these three fields are the patch.
            let mut body = serde_json::Map::new();
            body.insert("count".into(), count.into());
            if let Some(Time(last_timestamp)) = &event.last_timestamp {
                body.insert("lastTimestamp".into(), serde_json::to_value(Time(*last_timestamp)).unwrap_or_default());
            }
            if let Some(message) = event.message.as_ref().filter(|m| !m.is_empty()) {
                body.insert("message".into(), message.clone().into());
            }
            patch = Some(serde_json::Value::Object(body));
        }
        let log = EventLog {
            count: event.count.unwrap_or(1),
            first_timestamp: event.first_timestamp.clone(),
            name: event.metadata.name.clone().unwrap_or_default(),
            resource_version: event.metadata.resource_version.clone(),
        };
        self.logs.insert(key.to_owned(), log);
        (event, patch)
    }

    /// `<object name>.<hex unix nanoseconds>`, nanoseconds bumped past the
    /// last name's if the clock has not moved, so two events never share a
    /// name.
    fn unique_name(&mut self, regarding: &ObjectReference, at: Timestamp) -> String {
        let nanos = at.as_nanosecond().max(self.last_name_nanos + 1);
        self.last_name_nanos = nanos;
        format!("{}.{:x}", regarding.name.as_deref().unwrap_or_default(), nanos)
    }
}

/// Joins key parts with a separator no Kubernetes name contains.
fn join_key<'a>(parts: impl IntoIterator<Item = Option<&'a str>>) -> String {
    let mut key = String::new();
    for part in parts {
        key.push_str(part.unwrap_or_default());
        key.push('\u{1f}');
    }
    key
}

/// Source, object and the event's source-side identity: the part of every key.
fn source_object_parts(event: &Event) -> [Option<&str>; 7] {
    let source = event.source.as_ref();
    let object = &event.involved_object;
    [
        source.and_then(|s| s.component.as_deref()),
        source.and_then(|s| s.host.as_deref()),
        object.kind.as_deref(),
        object.namespace.as_deref(),
        object.name.as_deref(),
        object.uid.as_deref(),
        object.api_version.as_deref(),
    ]
}

/// Identical events share this key (upstream `getEventKey`).
fn event_key(event: &Event) -> String {
    let extra = [
        event.involved_object.field_path.as_deref(),
        event.type_.as_deref(),
        event.reason.as_deref(),
        event.message.as_deref(),
    ];
    join_key(source_object_parts(event).into_iter().chain(extra))
}

/// Similar events share this key (upstream `EventAggregatorByReasonFunc`).
fn aggregate_key(event: &Event) -> String {
    let extra = [
        event.type_.as_deref(),
        event.reason.as_deref(),
        event.reporting_component.as_deref(),
        event.reporting_instance.as_deref(),
    ];
    join_key(source_object_parts(event).into_iter().chain(extra))
}

/// Events of one source about one object share this key (upstream
/// `getSpamKey`).
fn spam_key(event: &Event) -> String {
    join_key(source_object_parts(event))
}

// === Lru ===

/// A map that forgets its least recently used entry beyond a capacity
/// (upstream uses groupcache's `lru.Cache`).
#[derive(Debug)]
struct Lru<V> {
    capacity: usize,
    /// Value and last use of each key.
    entries: HashMap<String, (V, u64)>,
    /// Keys by last use, oldest first.
    order: BTreeMap<u64, String>,
    /// Use counter.
    tick: u64,
}

impl<V> Lru<V> {
    fn new(capacity: usize) -> Self {
        Lru { capacity: capacity.max(1), entries: HashMap::new(), order: BTreeMap::new(), tick: 0 }
    }

    /// Marks `key` used now; `None` if it is absent.
    fn touch(&mut self, key: &str) -> Option<()> {
        let (_, used) = self.entries.get_mut(key)?;
        self.tick += 1;
        let previous = std::mem::replace(used, self.tick);
        if let Some(k) = self.order.remove(&previous) {
            self.order.insert(self.tick, k);
        }
        Some(())
    }

    fn get(&mut self, key: &str) -> Option<&V> {
        self.touch(key)?;
        self.entries.get(key).map(|(v, _)| v)
    }

    fn get_or_insert_with(&mut self, key: String, make: impl FnOnce() -> V) -> &mut V {
        if self.touch(&key).is_none() {
            self.make_room();
            self.tick += 1;
            self.order.insert(self.tick, key.clone());
        }
        let tick = self.tick;
        &mut self.entries.entry(key).or_insert_with(|| (make(), tick)).0
    }

    fn insert(&mut self, key: String, value: V) {
        if self.touch(&key).is_some() {
            if let Some(slot) = self.entries.get_mut(&key) {
                slot.0 = value;
            }
            return;
        }
        self.make_room();
        self.tick += 1;
        self.order.insert(self.tick, key.clone());
        self.entries.insert(key, (value, self.tick));
    }

    /// Forgets the least recently used entries until one more fits.
    fn make_room(&mut self) {
        while self.entries.len() >= self.capacity {
            let Some((_, oldest)) = self.order.pop_first() else { break };
            self.entries.remove(&oldest);
        }
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.entries.len()
    }
}

// === jitter ===

/// A small PRNG for retry jitter (SplitMix64), seeded per writer.
#[derive(Debug)]
struct SplitMix64(u64);

impl SplitMix64 {
    fn from_entropy() -> Self {
        // RandomState is seeded from the OS per process and varies per instance.
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u64(0x6b63_6d2d_7273);
        SplitMix64(hasher.finish())
    }

    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use kube::api::{DeleteParams, ListParams};
    use kube_sim::faults::{FaultRule, FaultSpec};
    use kube_sim::{Sim, SimConfig};

    // === utils ===

    fn pod_ref(name: &str) -> ObjectReference {
        ObjectReference {
            api_version: Some("v1".into()),
            kind: Some("Pod".into()),
            namespace: Some("default".into()),
            name: Some(name.into()),
            uid: Some(format!("uid-{name}")),
            ..ObjectReference::default()
        }
    }

    /// A fresh event as the writer makes it, for the correlator tests.
    fn fresh(c: &mut Correlator, object: &str, reason: &str, message: &str) -> Event {
        let source = EventSource { component: Some("deployment-controller".into()), host: None };
        let pending = Pending {
            regarding: pod_ref(object),
            kind: EventType::Normal,
            reason: reason.into(),
            message: message.into(),
            at: Timestamp::now(),
        };
        let name = c.unique_name(&pending.regarding, pending.at);
        make_event(&source, pending, name)
    }

    async fn start() -> (Sim, Client) {
        let sim = Sim::start(SimConfig::default()).await.expect("sim starts");
        let client = sim.client().expect("client");
        (sim, client)
    }

    /// The Events about the object named `name`, as `kubectl describe` finds them.
    async fn events_about(client: &Client, name: &str) -> Vec<Event> {
        let api: Api<Event> = Api::namespaced(client.clone(), "default");
        let lp = ListParams::default().fields(&format!("involvedObject.name={name}"));
        api.list(&lp).await.expect("list events").items
    }

    /// Requests on `events` with this verb (and code, if given).
    fn requests(sim: &Sim, verb: &str, code: Option<u16>) -> u64 {
        let stats = sim.controls().stats();
        let lines = stats.iter().filter(|l| l.resource == "events" && l.verb == verb);
        lines.filter(|l| code.is_none_or(|c| c == l.code)).map(|l| l.count).sum()
    }

    /// Polls `probe` until it succeeds; fails with the last state it saw.
    async fn eventually<T>(what: &str, mut probe: impl AsyncFnMut() -> Result<T, String>) -> T {
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        loop {
            match probe().await {
                Ok(value) => return value,
                Err(seen) if std::time::Instant::now() > deadline => panic!("timed out waiting for {what}; saw {seen}"),
                Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
            }
        }
    }

    fn summary(events: &[Event]) -> String {
        let lines: Vec<String> =
            events.iter().map(|e| format!("{} x{}", describe(e), e.count.unwrap_or_default())).collect();
        format!("{lines:?}")
    }

    fn fault_on_event_creates(latency_ms: u64) -> FaultSpec {
        FaultSpec {
            rules: vec![FaultRule {
                verb: Some("create".into()),
                resource: Some("events".into()),
                error_rate: 1.0,
                latency_ms,
                ..FaultRule::default()
            }],
        }
    }

    // === correlator ===

    #[test]
    fn identical_events_become_patches_of_the_first() {
        let mut c = Correlator::default();
        let now = Instant::now();
        let first = fresh(&mut c, "web", "Killing", "stopping container");
        let first = c.correlate(first, now, Timestamp::now()).expect("not spam");
        assert!(first.patch.is_none());
        assert_eq!(first.event.count, Some(1));
        let name = first.event.metadata.name.clone();
        assert!(name.as_deref().is_some_and(|n| n.starts_with("web.")), "{name:?}");

        for count in 2..=4 {
            let again = fresh(&mut c, "web", "Killing", "stopping container");
            let again = c.correlate(again, now, Timestamp::now()).expect("not spam");
            assert_eq!(again.event.metadata.name, name);
            assert_eq!(again.event.count, Some(count));
            assert_eq!(again.event.first_timestamp, first.event.first_timestamp);
            let patch = again.patch.expect("a patch");
            assert_eq!(patch["count"], count);
            assert_eq!(patch["message"], "stopping container");
            assert!(patch["lastTimestamp"].is_string(), "{patch}");
            assert_eq!(patch.as_object().map(|o| o.len()), Some(3), "{patch}");
        }
    }

    #[test]
    fn similar_events_aggregate_from_the_tenth_distinct_message() {
        let mut c = Correlator::default();
        let now = Instant::now();
        let mut names = HashSet::new();
        for i in 1..AGGREGATE_MAX_EVENTS {
            let e = fresh(&mut c, "web", "FailedCreate", &format!("error {i}"));
            let e = c.correlate(e, now, Timestamp::now()).expect("not spam");
            assert_eq!(e.event.message.as_deref(), Some(format!("error {i}").as_str()));
            assert!(e.patch.is_none());
            names.insert(e.event.metadata.name.clone());
        }
        let tenth = fresh(&mut c, "web", "FailedCreate", "error 10");
        let tenth = c.correlate(tenth, now, Timestamp::now()).expect("not spam");
        assert_eq!(tenth.event.message.as_deref(), Some("(combined from similar events): error 10"));
        assert!(tenth.patch.is_none());
        assert!(names.insert(tenth.event.metadata.name.clone()), "a new Event");

        let eleventh = fresh(&mut c, "web", "FailedCreate", "error 11");
        let eleventh = c.correlate(eleventh, now, Timestamp::now()).expect("not spam");
        assert_eq!(eleventh.event.metadata.name, tenth.event.metadata.name);
        assert_eq!(eleventh.event.count, Some(2));
        let patch = eleventh.patch.expect("a patch of the aggregate");
        assert_eq!(patch["message"], "(combined from similar events): error 11");

        // A message seen before the threshold still counts on its own Event.
        let again = fresh(&mut c, "web", "FailedCreate", "error 1");
        let again = c.correlate(again, now, Timestamp::now()).expect("not spam");
        assert_eq!(again.event.message.as_deref(), Some("error 1"));
        assert_eq!(again.event.count, Some(2));

        // Another reason is another group.
        let other = fresh(&mut c, "web", "SuccessfulCreate", "created pod");
        let other = c.correlate(other, now, Timestamp::now()).expect("not spam");
        assert_eq!(other.event.message.as_deref(), Some("created pod"));
    }

    #[test]
    fn aggregation_window_restarts_after_ten_quiet_minutes() {
        let mut c = Correlator::default();
        let start = Instant::now();
        for i in 1..AGGREGATE_MAX_EVENTS {
            let e = fresh(&mut c, "web", "FailedCreate", &format!("error {i}"));
            c.correlate(e, start, Timestamp::now()).expect("not spam");
        }
        let later = start + AGGREGATE_INTERVAL + Duration::from_secs(1);
        let e = fresh(&mut c, "web", "FailedCreate", "error 10");
        let e = c.correlate(e, later, Timestamp::now()).expect("not spam");
        assert_eq!(e.event.message.as_deref(), Some("error 10"));
    }

    #[test]
    fn spam_filter_allows_a_burst_then_one_event_per_five_minutes() {
        let mut c = Correlator::default();
        let start = Instant::now();
        let mut passed = 0;
        for i in 0..40 {
            // Distinct reasons, so that aggregation does not merge them.
            let e = fresh(&mut c, "web", &format!("Reason{i}"), "message");
            passed += usize::from(c.correlate(e, start, Timestamp::now()).is_some());
        }
        assert_eq!(passed, 25);

        let other = fresh(&mut c, "db", "Reason0", "message");
        assert!(c.correlate(other, start, Timestamp::now()).is_some(), "buckets are per object");

        let refilled = start + Duration::from_secs(300);
        let e = fresh(&mut c, "web", "Late1", "message");
        assert!(c.correlate(e, refilled, Timestamp::now()).is_some());
        let e = fresh(&mut c, "web", "Late2", "message");
        assert!(c.correlate(e, refilled, Timestamp::now()).is_none());
    }

    #[test]
    fn lru_forgets_the_least_recently_used_entry() {
        let mut lru = Lru::new(2);
        lru.insert("a".into(), 1);
        lru.insert("b".into(), 2);
        assert_eq!(lru.get("a"), Some(&1));
        lru.insert("c".into(), 3);
        assert_eq!(lru.len(), 2);
        assert_eq!(lru.get("b"), None, "b was least recently used");
        assert_eq!(lru.get("a"), Some(&1));
        *lru.get_or_insert_with("c".into(), || 0) += 10;
        assert_eq!(lru.get("c"), Some(&13));
        lru.insert("a".into(), 5);
        assert_eq!(lru.get("a"), Some(&5));
        assert_eq!(lru.len(), 2);
    }

    #[test]
    fn caches_stay_bounded() {
        let mut c = Correlator::default();
        let now = Instant::now();
        for i in 0..(CACHE_ENTRIES + 100) {
            let e = fresh(&mut c, &format!("pod-{i}"), "Scheduled", "assigned");
            c.correlate(e, now, Timestamp::now());
        }
        assert_eq!(c.logs.len(), CACHE_ENTRIES);
        assert_eq!(c.aggregates.len(), CACHE_ENTRIES);
        assert_eq!(c.spam.len(), CACHE_ENTRIES);
    }

    #[test]
    fn names_stay_unique_when_the_clock_does_not_move() {
        let mut c = Correlator::default();
        let at = Timestamp::now();
        let a = c.unique_name(&pod_ref("web"), at);
        let b = c.unique_name(&pod_ref("web"), at);
        assert_ne!(a, b);
        assert_eq!(a, format!("web.{:x}", at.as_nanosecond()));
    }

    #[test]
    fn only_transient_failures_are_retried() {
        let api = |code: u16, reason: &str| {
            kube::Error::Api(kube::core::Status::failure("no", reason).with_code(code).boxed())
        };
        assert_eq!(classify(&api(500, "InternalError")), Failure::Transient);
        assert_eq!(classify(&api(429, "TooManyRequests")), Failure::Transient);
        assert_eq!(classify(&api(409, "AlreadyExists")), Failure::Expected);
        assert_eq!(classify(&api(422, "Invalid")), Failure::Rejected);
        assert_eq!(classify(&api(403, "Forbidden")), Failure::Rejected);
    }

    // === against kube-sim ===

    #[tokio::test]
    async fn an_event_is_written_as_kubectl_describe_finds_it() {
        let (_sim, client) = start().await;
        let recorder = EventRecorder::new(client.clone(), "deployment-controller");
        let deploy = ObjectReference {
            api_version: Some("apps/v1".into()),
            kind: Some("Deployment".into()),
            namespace: Some("default".into()),
            name: Some("web".into()),
            uid: Some("uid-web".into()),
            ..ObjectReference::default()
        };
        recorder.event(&deploy, EventType::Normal, "ScalingReplicaSet", "Scaled up replica set web-5d4f to 3");

        let events = eventually("the event", async || {
            let events = events_about(&client, "web").await;
            if events.len() == 1 { Ok(events) } else { Err(summary(&events)) }
        })
        .await;
        let e = &events[0];
        assert_eq!(e.involved_object, deploy);
        assert_eq!(e.reason.as_deref(), Some("ScalingReplicaSet"));
        assert_eq!(e.type_.as_deref(), Some("Normal"));
        assert_eq!(e.message.as_deref(), Some("Scaled up replica set web-5d4f to 3"));
        assert_eq!(e.source.as_ref().and_then(|s| s.component.as_deref()), Some("deployment-controller"));
        assert_eq!(e.reporting_component.as_deref(), Some("deployment-controller"));
        assert_eq!(e.count, Some(1));
        assert_eq!(e.metadata.namespace.as_deref(), Some("default"));
        assert!(e.metadata.name.as_deref().is_some_and(|n| n.starts_with("web.")), "{:?}", e.metadata.name);
        assert!(e.first_timestamp.is_some());
        assert_eq!(e.first_timestamp, e.last_timestamp);

        // A cluster-scoped object's events go to `default`.
        let node = ObjectReference {
            kind: Some("Node".into()),
            name: Some("node-1".into()),
            uid: Some("node-1".into()),
            ..ObjectReference::default()
        };
        recorder.event(&node, EventType::Warning, "NodeNotReady", "Node is not ready");
        let events = eventually("the node event", async || {
            let events = events_about(&client, "node-1").await;
            let found = events.iter().find(|e| e.reason.as_deref() == Some("NodeNotReady")).cloned();
            found.ok_or_else(|| summary(&events))
        })
        .await;
        assert_eq!(events.type_.as_deref(), Some("Warning"));
        assert_eq!(events.metadata.namespace.as_deref(), Some("default"));
    }

    #[tokio::test]
    async fn identical_events_are_counted_on_one_event_by_patches() {
        let (sim, client) = start().await;
        let recorder = EventRecorder::new(client.clone(), "replicaset-controller");
        for _ in 0..5 {
            recorder.event(&pod_ref("web-1"), EventType::Normal, "SuccessfulDelete", "Deleted pod: web-1");
        }
        let events = eventually("one event with count 5", async || {
            let events = events_about(&client, "web-1").await;
            if events.first().and_then(|e| e.count) == Some(5) { Ok(events) } else { Err(summary(&events)) }
        })
        .await;
        assert_eq!(events.len(), 1, "{}", summary(&events));
        assert_eq!(requests(&sim, "create", None), 1);
        assert_eq!(requests(&sim, "patch", Some(200)), 4);
    }

    #[tokio::test]
    async fn similar_events_are_aggregated() {
        let (_sim, client) = start().await;
        let recorder = EventRecorder::new(client.clone(), "replicaset-controller");
        for i in 1..=12 {
            recorder.event(&pod_ref("web"), EventType::Warning, "FailedCreate", format!("quota exceeded ({i})"));
        }
        let events = eventually("the aggregated event, count 3", async || {
            let events = events_about(&client, "web").await;
            let aggregated = events.iter().find(|e| {
                e.message.as_deref() == Some("(combined from similar events): quota exceeded (12)")
                    && e.count == Some(3)
            });
            if aggregated.is_some() { Ok(events) } else { Err(summary(&events)) }
        })
        .await;
        // Nine events of their own, then one aggregate.
        assert_eq!(events.len(), AGGREGATE_MAX_EVENTS, "{}", summary(&events));
    }

    #[tokio::test]
    async fn a_flood_of_events_about_one_object_is_cut_by_the_spam_filter() {
        let (sim, client) = start().await;
        let (recorder, writer) = EventRecorder::builder(client.clone(), "node-controller").spawn();
        for i in 0..100 {
            recorder.event(&pod_ref("web"), EventType::Warning, "Unhealthy", format!("probe failed ({i})"));
        }
        drop(recorder);
        writer.join().await;

        let writes = requests(&sim, "create", None) + requests(&sim, "patch", None);
        assert!(writes <= 25, "{writes} writes reached the API server");
        let events = events_about(&client, "web").await;
        assert!(events.len() <= AGGREGATE_MAX_EVENTS, "{}", summary(&events));
        assert!(
            events.iter().any(|e| e.message.as_deref().is_some_and(|m| m.starts_with(AGGREGATE_MESSAGE_PREFIX))),
            "{}",
            summary(&events)
        );
    }

    #[tokio::test]
    async fn the_caller_never_blocks_even_when_the_writer_is_stalled() {
        let (sim, client) = start().await;
        sim.controls().set_faults(fault_on_event_creates(500)).expect("faults");
        let counter = dropped_events_counter().expect("counter");
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let (recorder, writer) = EventRecorder::builder(client.clone(), "deployment-controller")
            .queue_capacity(100)
            .retry_sleep(Duration::from_millis(50))
            .flush_timeout(Duration::from_millis(200))
            .dropped_counter(counter.clone())
            .shutdown(async move {
                let _ = stop_rx.await;
            })
            .spawn();

        // No await between these calls: were `event` to wait for the writer,
        // this loop would never end.
        for i in 0..1000 {
            recorder.event(&pod_ref(&format!("web-{i}")), EventType::Normal, "Started", "started");
        }
        assert!(recorder.dropped() >= 1000 - 100 - 1, "dropped {}", recorder.dropped());
        assert_eq!(counter.get(), recorder.dropped());

        // The stalled writer still stops, bounded by its flush timeout.
        stop_tx.send(()).expect("writer listening");
        writer.join().await;
        let before = recorder.dropped();
        recorder.event(&pod_ref("late"), EventType::Normal, "Started", "started");
        assert_eq!(recorder.dropped(), before + 1, "a stopped writer takes no events");
    }

    #[tokio::test]
    async fn failed_writes_are_retried() {
        let (sim, client) = start().await;
        sim.controls().set_faults(fault_on_event_creates(0)).expect("faults");
        let (recorder, _writer) = EventRecorder::builder(client.clone(), "namespace-controller")
            .retry_sleep(Duration::from_millis(20))
            .spawn();
        recorder.event(&pod_ref("web"), EventType::Warning, "FailedDelete", "try again");
        eventually("two failed creates", async || {
            let failed = requests(&sim, "create", Some(500));
            if failed >= 2 { Ok(()) } else { Err(format!("{failed} failed creates")) }
        })
        .await;
        sim.controls().clear_faults();
        let events = eventually("the event", async || {
            let events = events_about(&client, "web").await;
            if events.len() == 1 { Ok(events) } else { Err(summary(&events)) }
        })
        .await;
        assert_eq!(events[0].count, Some(1));
    }

    #[tokio::test]
    async fn a_patch_of_a_deleted_event_falls_back_to_create() {
        let (sim, client) = start().await;
        let recorder = EventRecorder::new(client.clone(), "deployment-controller");
        recorder.event(&pod_ref("web"), EventType::Normal, "Pulled", "image pulled");
        let first = eventually("the event", async || {
            let events = events_about(&client, "web").await;
            events.first().cloned().ok_or_else(|| summary(&events))
        })
        .await;
        let name = first.metadata.name.clone().expect("named");
        let api: Api<Event> = Api::namespaced(client.clone(), "default");
        api.delete(&name, &DeleteParams::default()).await.expect("delete");

        recorder.event(&pod_ref("web"), EventType::Normal, "Pulled", "image pulled");
        let again = eventually("the event again, count 2", async || {
            let events = events_about(&client, "web").await;
            let found = events.iter().find(|e| e.count == Some(2)).cloned();
            found.ok_or_else(|| summary(&events))
        })
        .await;
        assert_eq!(again.metadata.name.as_deref(), Some(name.as_str()));
        assert_eq!(requests(&sim, "patch", Some(404)), 1);
        assert_eq!(requests(&sim, "create", Some(201)), 2);
    }

    #[tokio::test]
    async fn stopping_flushes_the_queued_events() {
        let (_sim, client) = start().await;
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let (recorder, writer) = EventRecorder::builder(client.clone(), "deployment-controller")
            .shutdown(async move {
                let _ = stop_rx.await;
            })
            .spawn();
        for reason in ["One", "Two", "Three"] {
            recorder.event(&pod_ref("web"), EventType::Normal, reason, "queued");
        }
        stop_tx.send(()).expect("writer listening");
        writer.join().await;
        let events = events_about(&client, "web").await;
        assert_eq!(events.len(), 3, "{}", summary(&events));
    }

    #[tokio::test]
    async fn dropping_every_recorder_stops_the_writer_after_flushing() {
        let (_sim, client) = start().await;
        let (recorder, writer) = EventRecorder::builder(client.clone(), "deployment-controller").spawn();
        let clone = recorder.clone();
        recorder.event(&pod_ref("web"), EventType::Normal, "One", "from the original");
        clone.event(&pod_ref("web"), EventType::Normal, "Two", "from the clone");
        drop(recorder);
        drop(clone);
        writer.join().await;
        let events = events_about(&client, "web").await;
        assert_eq!(events.len(), 2, "{}", summary(&events));
    }
}
