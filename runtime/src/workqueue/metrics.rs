//! Prometheus metrics for named work queues, with client-go's names, help texts and buckets.
//!
//! [`QueueMetrics`] owns the seven metric vectors (component-base's
//! `metrics/prometheus/workqueue` provider); create it once per process with
//! [`QueueMetrics::register`] and hand it to every [`WorkQueue`](super::WorkQueue). Each queue
//! takes the children for its `name` label. The per-queue bookkeeping (when each key was first
//! added and when its processing started) lives in `QueueMetricsState`, which the queue keeps
//! under its own lock, as client-go's `defaultQueueMetrics` does. The 500 ms refresh of the
//! unfinished-work gauges is `unfinished_work_loop`.

use std::collections::HashMap;
use std::hash::Hash;
use std::time::Duration;

use prometheus::{Counter, CounterVec, Gauge, GaugeVec, Histogram, HistogramOpts, HistogramVec, Opts, Registry};
use tokio::time::{Instant, MissedTickBehavior};

/// Errors raised while creating or registering the workqueue metrics.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A metric vector could not be built (invalid name, labels or buckets).
    #[error("failed to create workqueue metric {name}")]
    Create {
        /// Full metric name, e.g. `workqueue_depth`.
        name: &'static str,
        /// The prometheus error.
        #[source]
        source: prometheus::Error,
    },
    /// The registry refused a metric, typically because it is already registered.
    #[error("failed to register workqueue metric {name}")]
    Register {
        /// Full metric name, e.g. `workqueue_depth`.
        name: &'static str,
        /// The prometheus error.
        #[source]
        source: prometheus::Error,
    },
}

/// Result type of this module.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// How often `workqueue_unfinished_work_seconds` and `workqueue_longest_running_processor_seconds`
/// are refreshed (client-go's `defaultUnfinishedWorkUpdatePeriod`).
pub const UNFINISHED_WORK_UPDATE_PERIOD: Duration = Duration::from_millis(500);

/// The label every workqueue metric carries: the queue's name.
const NAME_LABEL: &str = "name";

/// Upstream metric names (subsystem `workqueue`).
const DEPTH: &str = "workqueue_depth";
const ADDS: &str = "workqueue_adds_total";
const QUEUE_DURATION: &str = "workqueue_queue_duration_seconds";
const WORK_DURATION: &str = "workqueue_work_duration_seconds";
const UNFINISHED_WORK: &str = "workqueue_unfinished_work_seconds";
const LONGEST_RUNNING: &str = "workqueue_longest_running_processor_seconds";
const RETRIES: &str = "workqueue_retries_total";

/// The process-wide workqueue metric vectors, labelled by queue `name`.
///
/// Cheap to clone (the vectors are reference-counted). Create it once: registering a second
/// instance on the same [`Registry`] fails with [`Error::Register`].
#[derive(Clone, Debug)]
pub struct QueueMetrics {
    /// `workqueue_depth`: current depth of each queue.
    depth: GaugeVec,
    /// `workqueue_adds_total`: adds that were not collapsed into an already-queued key.
    adds: CounterVec,
    /// `workqueue_queue_duration_seconds`: first add → get.
    latency: HistogramVec,
    /// `workqueue_work_duration_seconds`: get → done.
    work_duration: HistogramVec,
    /// `workqueue_unfinished_work_seconds`: sum of the ages of in-flight keys.
    unfinished_work: GaugeVec,
    /// `workqueue_longest_running_processor_seconds`: age of the oldest in-flight key.
    longest_running: GaugeVec,
    /// `workqueue_retries_total`: `add_after` / `add_rate_limited` calls.
    retries: CounterVec,
}

// === impl QueueMetrics ===

impl QueueMetrics {
    /// Creates the metric vectors without registering them anywhere.
    ///
    /// # Errors
    ///
    /// [`Error::Create`] if prometheus rejects a definition (it does not for these constants).
    pub fn new() -> Result<Self> {
        let gauge = |name: &'static str, help: &str| {
            GaugeVec::new(Opts::new(name, help), &[NAME_LABEL]).map_err(|source| Error::Create { name, source })
        };
        let counter = |name: &'static str, help: &str| {
            CounterVec::new(Opts::new(name, help), &[NAME_LABEL]).map_err(|source| Error::Create { name, source })
        };
        let histogram = |name: &'static str, help: &str| {
            // ExponentialBuckets(10e-7, 10, 10): 1 µs .. 1000 s.
            let buckets =
                prometheus::exponential_buckets(10e-7, 10.0, 10).map_err(|source| Error::Create { name, source })?;
            HistogramVec::new(HistogramOpts::new(name, help).buckets(buckets), &[NAME_LABEL])
                .map_err(|source| Error::Create { name, source })
        };
        Ok(Self {
            depth: gauge(DEPTH, "Current depth of workqueue")?,
            adds: counter(ADDS, "Total number of adds handled by workqueue")?,
            latency: histogram(
                QUEUE_DURATION,
                "How long in seconds an item stays in workqueue before being requested.",
            )?,
            work_duration: histogram(WORK_DURATION, "How long in seconds processing an item from workqueue takes.")?,
            unfinished_work: gauge(
                UNFINISHED_WORK,
                "How many seconds of work has done that is in progress and hasn't been observed by work_duration. \
                 Large values indicate stuck threads. One can deduce the number of stuck threads by observing the \
                 rate at which this increases.",
            )?,
            longest_running: gauge(
                LONGEST_RUNNING,
                "How many seconds has the longest running processor for workqueue been running.",
            )?,
            retries: counter(RETRIES, "Total number of retries handled by workqueue")?,
        })
    }

    /// Creates the metric vectors and registers them on `registry`.
    ///
    /// # Errors
    ///
    /// [`Error::Register`] if one of the names is already registered there.
    pub fn register(registry: &Registry) -> Result<Self> {
        let metrics = Self::new()?;
        let register = |name: &'static str, collector: Box<dyn prometheus::core::Collector>| {
            registry.register(collector).map_err(|source| Error::Register { name, source })
        };
        register(DEPTH, Box::new(metrics.depth.clone()))?;
        register(ADDS, Box::new(metrics.adds.clone()))?;
        register(QUEUE_DURATION, Box::new(metrics.latency.clone()))?;
        register(WORK_DURATION, Box::new(metrics.work_duration.clone()))?;
        register(UNFINISHED_WORK, Box::new(metrics.unfinished_work.clone()))?;
        register(LONGEST_RUNNING, Box::new(metrics.longest_running.clone()))?;
        register(RETRIES, Box::new(metrics.retries.clone()))?;
        Ok(metrics)
    }

    /// The keys waiting in all the queues together (`workqueue_depth`
    /// summed over every `name`).
    pub fn queued(&self) -> f64 {
        use prometheus::core::Collector as _;
        let families = self.depth.collect();
        families.iter().flat_map(|family| family.get_metric()).map(|metric| metric.get_gauge().get_value()).sum()
    }

    /// The children for one queue (the provider's `New*Metric(name)` calls).
    pub(super) fn for_queue(&self, name: &str) -> NamedQueueMetrics {
        let labels = [name];
        NamedQueueMetrics {
            depth: self.depth.with_label_values(&labels),
            adds: self.adds.with_label_values(&labels),
            latency: self.latency.with_label_values(&labels),
            work_duration: self.work_duration.with_label_values(&labels),
            unfinished_work: self.unfinished_work.with_label_values(&labels),
            longest_running: self.longest_running.with_label_values(&labels),
            retries: self.retries.with_label_values(&labels),
        }
    }
}

/// One queue's metric children (label `name` fixed).
pub(super) struct NamedQueueMetrics {
    depth: Gauge,
    adds: Counter,
    latency: Histogram,
    work_duration: Histogram,
    unfinished_work: Gauge,
    longest_running: Gauge,
    /// Handed to the queue itself: retries are counted outside the state lock.
    pub(super) retries: Counter,
}

/// Per-queue metric bookkeeping, kept under the queue's lock (client-go's `defaultQueueMetrics`).
pub(super) struct QueueMetricsState<K> {
    depth: Gauge,
    adds: Counter,
    latency: Histogram,
    work_duration: Histogram,
    unfinished_work: Gauge,
    longest_running: Gauge,
    /// When each queued key was first added since it was last handed out.
    add_times: HashMap<K, Instant>,
    /// When each in-flight key was handed out.
    processing_start_times: HashMap<K, Instant>,
}

// === impl QueueMetricsState ===

impl<K: Clone + Eq + Hash> QueueMetricsState<K> {
    /// Takes the gauges, counters and histograms of `metrics`, leaving the retries counter there.
    pub(super) fn new(metrics: &NamedQueueMetrics) -> Self {
        Self {
            depth: metrics.depth.clone(),
            adds: metrics.adds.clone(),
            latency: metrics.latency.clone(),
            work_duration: metrics.work_duration.clone(),
            unfinished_work: metrics.unfinished_work.clone(),
            longest_running: metrics.longest_running.clone(),
            add_times: HashMap::new(),
            processing_start_times: HashMap::new(),
        }
    }

    /// A counted add: the key was not dirty yet.
    pub(super) fn add(&mut self, key: &K, now: Instant) {
        self.adds.inc();
        self.depth.inc();
        self.add_times.entry(key.clone()).or_insert(now);
    }

    /// The key was handed to a worker.
    pub(super) fn get(&mut self, key: &K, now: Instant) {
        self.depth.dec();
        self.processing_start_times.insert(key.clone(), now);
        if let Some(added) = self.add_times.remove(key) {
            self.latency.observe(seconds_since(added, now));
        }
    }

    /// The worker finished the key.
    pub(super) fn done(&mut self, key: &K, now: Instant) {
        if let Some(started) = self.processing_start_times.remove(key) {
            self.work_duration.observe(seconds_since(started, now));
        }
    }

    /// Gives back the capacity of the key tables beyond `capacity`.
    pub(super) fn shrink_to(&mut self, capacity: usize) {
        self.add_times.shrink_to(capacity);
        self.processing_start_times.shrink_to(capacity);
    }

    /// Refreshes the unfinished-work and longest-running gauges from the in-flight keys.
    pub(super) fn update_unfinished_work(&self, now: Instant) {
        let (total, oldest) = self.processing_start_times.values().fold((0.0, 0.0_f64), |(total, oldest), started| {
            let age = seconds_since(*started, now);
            (total + age, oldest.max(age))
        });
        self.unfinished_work.set(total);
        self.longest_running.set(oldest);
    }
}

fn seconds_since(start: Instant, now: Instant) -> f64 {
    now.saturating_duration_since(start).as_secs_f64()
}

/// Has the queue refresh its unfinished-work gauges every [`UNFINISHED_WORK_UPDATE_PERIOD`]
/// until `refresh` answers false: the queue shut down or was dropped (client-go's
/// `updateUnfinishedWorkLoop`; the queue hands it a weak reference, so the loop never keeps the
/// queue alive).
pub(super) async fn unfinished_work_loop(mut refresh: impl FnMut(Instant) -> bool) {
    let mut ticker =
        tokio::time::interval_at(Instant::now() + UNFINISHED_WORK_UPDATE_PERIOD, UNFINISHED_WORK_UPDATE_PERIOD);
    ticker.set_missed_tick_behavior(MissedTickBehavior::Skip);
    loop {
        ticker.tick().await;
        if !refresh(Instant::now()) {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_help_and_buckets_match_upstream() {
        let registry = Registry::new();
        let metrics = QueueMetrics::register(&registry).unwrap();
        let named = metrics.for_queue("deployment");
        named.retries.inc();
        let state = QueueMetricsState::<String>::new(&named);
        state.latency.observe(0.5);
        state.work_duration.observe(0.5);
        let families = registry.gather();
        let mut names: Vec<_> = families.iter().map(|f| f.name().to_owned()).collect();
        names.sort();
        assert_eq!(names, [ADDS, DEPTH, LONGEST_RUNNING, QUEUE_DURATION, RETRIES, UNFINISHED_WORK, WORK_DURATION]);
        let latency = families.iter().find(|f| f.name() == QUEUE_DURATION).unwrap();
        assert_eq!(latency.help(), "How long in seconds an item stays in workqueue before being requested.");
        let metric = &latency.get_metric()[0];
        assert_eq!(metric.get_label()[0].name(), "name");
        assert_eq!(metric.get_label()[0].value(), "deployment");
        let bounds: Vec<f64> = metric.get_histogram().get_bucket().iter().map(|b| b.upper_bound()).collect();
        assert_eq!(bounds.len(), 10);
        for (i, bound) in bounds.iter().enumerate() {
            let expected = 1e-6 * 10f64.powi(i as i32);
            assert!((bound - expected).abs() <= expected * 1e-9, "bucket {i}: {bound} != {expected}");
        }
    }

    #[test]
    fn queued_sums_every_queue_s_depth() {
        let metrics = QueueMetrics::new().unwrap();
        assert_eq!(metrics.queued(), 0.0);
        metrics.for_queue("deployment").depth.set(3.0);
        metrics.for_queue("replicaset").depth.set(2.0);
        assert_eq!(metrics.queued(), 5.0);
        metrics.for_queue("deployment").depth.set(0.0);
        assert_eq!(metrics.queued(), 2.0);
    }

    // === utils ===

    /// The sample `name{name="<queue>"}` gathered from `registry`.
    fn metric(registry: &Registry, name: &str, queue: &str) -> prometheus::proto::Metric {
        let families = registry.gather();
        let family = families.iter().find(|f| f.name() == name).unwrap_or_else(|| panic!("{name} not gathered"));
        family
            .get_metric()
            .iter()
            .find(|m| m.get_label().iter().any(|l| l.name() == "name" && l.value() == queue))
            .unwrap_or_else(|| panic!("{name}{{name={queue}}} not gathered"))
            .clone()
    }

    fn gauge(registry: &Registry, name: &str, queue: &str) -> f64 {
        metric(registry, name, queue).get_gauge().get_value()
    }

    fn counter(registry: &Registry, name: &str, queue: &str) -> f64 {
        metric(registry, name, queue).get_counter().get_value()
    }

    fn histogram(registry: &Registry, name: &str, queue: &str) -> (u64, f64) {
        let metric = metric(registry, name, queue);
        let histogram = metric.get_histogram();
        (histogram.get_sample_count(), histogram.get_sample_sum())
    }

    fn assert_close(actual: f64, expected: f64) {
        assert!((actual - expected).abs() < 1e-6, "{actual} != {expected}");
    }

    // === tests ===

    #[tokio::test(start_paused = true)]
    async fn scripted_sequence_sets_every_metric() {
        use crate::workqueue::{WorkQueue, rate_limiter::MaxOfRateLimiter};
        let registry = Registry::new();
        let metrics = QueueMetrics::register(&registry).unwrap();
        let q = WorkQueue::new("deployment", MaxOfRateLimiter::new(Vec::new()), Some(&metrics));
        let other = WorkQueue::new("replicaset", MaxOfRateLimiter::new(Vec::new()), Some(&metrics));
        other.add("x");

        // t = 0: a, b, a (collapsed) → two counted adds.
        q.add("a");
        q.add("b");
        q.add("a");
        assert_close(counter(&registry, ADDS, "deployment"), 2.0);
        assert_close(gauge(&registry, DEPTH, "deployment"), 2.0);

        // t = 1 s: a is handed out after 1 s in the queue.
        tokio::time::advance(Duration::from_secs(1)).await;
        assert_eq!(q.get().await, Some("a"));
        assert_close(gauge(&registry, DEPTH, "deployment"), 1.0);
        assert_eq!(histogram(&registry, QUEUE_DURATION, "deployment"), (1, 1.0));

        // Re-added while processing: counted, and its queue time starts now.
        q.add("a");
        assert_close(counter(&registry, ADDS, "deployment"), 3.0);
        assert_close(gauge(&registry, DEPTH, "deployment"), 2.0);

        // t = 2.2 s: the refresher last ran at 2.0 s, when a had run for 1 s.
        tokio::time::sleep(Duration::from_millis(1200)).await;
        assert_close(gauge(&registry, UNFINISHED_WORK, "deployment"), 1.0);
        assert_close(gauge(&registry, LONGEST_RUNNING, "deployment"), 1.0);

        // t = 3 s: a done after 2 s of work, queued again; b handed out after 3 s.
        tokio::time::advance(Duration::from_millis(800)).await;
        q.done(&"a");
        assert_eq!(histogram(&registry, WORK_DURATION, "deployment"), (1, 2.0));
        assert_eq!(q.get().await, Some("b"));
        assert_eq!(q.get().await, Some("a"));
        assert_close(gauge(&registry, DEPTH, "deployment"), 0.0);
        let (count, sum) = histogram(&registry, QUEUE_DURATION, "deployment");
        assert_eq!(count, 3);
        assert_close(sum, 1.0 + 3.0 + 2.0);

        // t = 4.6 s: two in flight since 3 s; refreshed at 4.5 s → 1.5 + 1.5, oldest 1.5.
        tokio::time::sleep(Duration::from_millis(1600)).await;
        assert_close(gauge(&registry, UNFINISHED_WORK, "deployment"), 3.0);
        assert_close(gauge(&registry, LONGEST_RUNNING, "deployment"), 1.5);

        // Retries: every add_after / add_rate_limited call, including zero delays.
        q.add_after("c", Duration::ZERO);
        q.add_after("d", Duration::from_secs(1));
        q.add_rate_limited("e");
        assert_close(counter(&registry, RETRIES, "deployment"), 3.0);

        // After shutdown nothing is counted and the refresher stops.
        q.done(&"a");
        q.done(&"b");
        q.shut_down();
        q.add("z");
        q.add_after("z", Duration::from_secs(1));
        assert_close(counter(&registry, RETRIES, "deployment"), 3.0);
        assert_close(counter(&registry, ADDS, "deployment"), 5.0);
        tokio::time::sleep(Duration::from_secs(2)).await;
        assert_close(gauge(&registry, UNFINISHED_WORK, "deployment"), 3.0);

        // The other queue has its own children.
        assert_close(counter(&registry, ADDS, "replicaset"), 1.0);
        assert_close(gauge(&registry, DEPTH, "replicaset"), 1.0);
    }

    #[tokio::test(start_paused = true)]
    async fn unnamed_queue_reports_nothing() {
        use crate::workqueue::{WorkQueue, rate_limiter::MaxOfRateLimiter};
        let registry = Registry::new();
        let metrics = QueueMetrics::register(&registry).unwrap();
        let q = WorkQueue::new("", MaxOfRateLimiter::new(Vec::new()), Some(&metrics));
        q.add("a");
        q.add_after("b", Duration::ZERO);
        assert!(registry.gather().iter().all(|f| f.get_metric().is_empty()));
    }

    #[test]
    fn registering_twice_is_an_error() {
        let registry = Registry::new();
        QueueMetrics::register(&registry).unwrap();
        let err = QueueMetrics::register(&registry).unwrap_err();
        assert!(matches!(err, Error::Register { name: DEPTH, .. }), "{err:?}");
    }
}
