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
mod writer;

pub use correlator::{Correlated, Correlator};
pub use kcm_objects::EventType;
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

#[cfg(test)]
mod tests {
    //! Tests of event recording: the correlator's aggregation, de-duplication
    //! and spam filter, the LRU bound, and recorders writing to kube-sim
    //! through retries, faults and shutdown.

    use std::collections::HashSet;

    use jiff::Timestamp;
    use k8s_openapi::api::core::v1::{Event, EventSource, ObjectReference};
    use kube::Client;
    use kube::api::{Api, DeleteParams, ListParams};
    use kube_sim::faults::{FaultRule, FaultSpec};
    use kube_sim::{Sim, SimConfig};
    use tokio::time::Instant;

    use super::lru::Lru;
    use super::writer::Pending;
    use super::writer::{Failure, classify, describe, make_event};
    use super::*;

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
