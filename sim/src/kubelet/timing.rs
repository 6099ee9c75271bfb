//! When a pod's timed steps are due: the durations its `kube-sim.io`
//! annotations give (start-up delay, failure, containers' exit), written as
//! Go durations, the exit code its containers end with, the end of a
//! graceful deletion's grace period, capped so tests stay fast, and the
//! loop's wait for the next step.

use std::time::Duration;

use serde_json::Value;
use tokio::time::Instant;

/// Annotation: a duration overriding the start-up delay.
pub const START_DELAY_ANNOTATION: &str = "kube-sim.io/start-delay";
/// Annotation: a duration after which a running pod fails.
pub const FAIL_AFTER_ANNOTATION: &str = "kube-sim.io/fail-after";

/// Annotation: a duration after which the pod's containers exit, counted
/// from each start (a restarted container exits again that long after).
pub const EXIT_AFTER_ANNOTATION: &str = "kube-sim.io/exit-after";
/// Annotation: the code the pod's containers exit with (0 when absent or
/// not an integer).
pub const EXIT_CODE_ANNOTATION: &str = "kube-sim.io/exit-code";

/// The exit code the pod's containers end with.
pub(super) fn exit_code(pod: &Value) -> i64 {
    pod.pointer("/metadata/annotations")
        .and_then(|a| a.get(EXIT_CODE_ANNOTATION))
        .and_then(Value::as_str)
        .and_then(|code| code.trim().parse::<i32>().ok())
        .map_or(0, i64::from)
}

/// Waits until `at`, or forever when there is no step to wait for.
pub(super) async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// When the kubelet removes a gracefully deleted pod: at its
/// deletionTimestamp, but no later than `max_grace` from now.
pub(super) fn deletion_due(pod: &Value, max_grace: Duration) -> Instant {
    let cap = Instant::now() + max_grace;
    let remaining = pod
        .pointer("/metadata/deletionTimestamp")
        .and_then(Value::as_str)
        .and_then(|t| t.parse::<jiff::Timestamp>().ok())
        .map(|t| t.duration_since(jiff::Timestamp::now()))
        .map(|d| Duration::try_from(d).unwrap_or(Duration::ZERO));
    match remaining {
        Some(r) => (Instant::now() + r).min(cap),
        None => cap,
    }
}

/// The duration an annotation of the pod gives, if it parses.
pub(super) fn annotation_duration(pod: &Value, annotation: &str) -> Option<Duration> {
    pod.pointer("/metadata/annotations")
        .and_then(|a| a.get(annotation))
        .and_then(Value::as_str)
        .and_then(|text| kcm_gotime::parse_go_duration(text).ok())
}
