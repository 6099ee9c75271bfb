//! [`Correlator`]: upstream's `EventCorrelator`, sans-IO. It aggregates
//! similar events, turns repeats into patches of the Event written before,
//! and drops spam, keeping its state in bounded LRU maps (`lru.rs`).
//! Writing is the writer task's job.

use std::collections::HashSet;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{Event, ObjectReference};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use kcm_gotime::TokenBucket;
use tokio::time::Instant;

use super::lru::Lru;
use super::{AGGREGATE_INTERVAL, AGGREGATE_MAX_EVENTS, AGGREGATE_MESSAGE_PREFIX, CACHE_ENTRIES, SPAM_BURST, SPAM_QPS};

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
    pub(super) aggregates: Lru<AggregateRecord>,
    /// Events written (or about to be), by their full key.
    pub(super) logs: Lru<EventLog>,
    /// Token buckets, by source+object.
    pub(super) spam: Lru<TokenBucket<std::time::Instant>>,
    /// Last nanosecond used in a name, so that names stay unique.
    last_name_nanos: i128,
}

/// One aggregation group (upstream `aggregateRecord`).
#[derive(Debug)]
pub(super) struct AggregateRecord {
    /// The distinct messages seen, never more than the threshold.
    messages: HashSet<String>,
    /// When the group last saw an event.
    last: Instant,
}

/// An Event as last written (upstream `eventLog`).
#[derive(Debug, Clone)]
pub(super) struct EventLog {
    count: i32,
    first_timestamp: Option<Time>,
    name: String,
    resource_version: Option<String>,
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
    /// [`EventRecorder::event`](super::EventRecorder::event) makes them), or `None` if the spam filter
    /// drops it. `now` measures the windows; `wall` names and stamps an
    /// aggregated event.
    pub fn correlate(&mut self, event: Event, now: Instant, wall: Timestamp) -> Option<Correlated> {
        let (event, key) = self.aggregate(event, now, wall);
        let (event, patch) = self.observe(event, &key);
        let spam_key = spam_key(&event);
        let bucket = self.spam.get_or_insert_with(spam_key, || TokenBucket::new(SPAM_QPS, SPAM_BURST));
        if !bucket.try_take(now.into_std()) {
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
    pub(super) fn unique_name(&mut self, regarding: &ObjectReference, at: Timestamp) -> String {
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
