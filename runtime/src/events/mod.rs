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
//!
//! The parts: the recorder handles ([`EventRecorder`], [`Builder`],
//! [`EventWriter`]) are `recorder.rs`; the writer task and its retries are
//! `writer.rs`; the [`Correlator`] is `correlator.rs`, over the bounded LRU
//! map of `lru.rs`. This module holds the tunables and [`EventType`].

use std::time::Duration;

mod correlator;
mod lru;
mod recorder;
#[cfg(test)]
mod tests;
mod writer;

pub use correlator::{Correlated, Correlator};
pub use recorder::{Builder, EventRecorder, EventWriter};

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
pub const SPAM_BURST: u32 = 25;

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

/// `Normal` or `Warning`, as `core/v1` Event `type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EventType {
    /// Routine.
    Normal,
    /// Something needs attention.
    Warning,
}

impl EventType {
    /// The spelling the API uses.
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Normal => "Normal",
            EventType::Warning => "Warning",
        }
    }
}

impl std::fmt::Display for EventType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
