//! When a pod's timed steps are due: the durations its `kube-sim.io`
//! annotations give (start-up delay, failure), written as Go durations, and
//! the end of a graceful deletion's grace period, capped so tests stay fast.

use std::time::Duration;

use serde_json::Value;
use tokio::time::Instant;

/// Annotation: a duration overriding the start-up delay.
pub const START_DELAY_ANNOTATION: &str = "kube-sim.io/start-delay";
/// Annotation: a duration after which a running pod fails.
pub const FAIL_AFTER_ANNOTATION: &str = "kube-sim.io/fail-after";

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

/// A Go-style duration (`500ms`, `2s`, `1m30s`).
pub fn parse_duration(text: &str) -> Option<Duration> {
    let mut total = Duration::ZERO;
    let mut rest = text.trim();
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let digits = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(rest.len());
        let number: f64 = rest[..digits].parse().ok()?;
        rest = &rest[digits..];
        let unit_len = rest.find(|c: char| c.is_ascii_digit()).unwrap_or(rest.len());
        let seconds = match &rest[..unit_len] {
            "ns" => 1e-9,
            "us" | "µs" => 1e-6,
            "ms" => 1e-3,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            _ => return None,
        };
        rest = &rest[unit_len..];
        total += Duration::from_secs_f64(number * seconds);
    }
    Some(total)
}

/// The duration an annotation of the pod gives, if it parses.
pub(super) fn annotation_duration(pod: &Value, annotation: &str) -> Option<Duration> {
    pod.pointer("/metadata/annotations")
        .and_then(|a| a.get(annotation))
        .and_then(Value::as_str)
        .and_then(parse_duration)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_durations_parse() {
        assert_eq!(parse_duration("500ms"), Some(Duration::from_millis(500)));
        assert_eq!(parse_duration("1m30s"), Some(Duration::from_secs(90)));
        assert_eq!(parse_duration("2h"), Some(Duration::from_secs(7200)));
        assert_eq!(parse_duration("soon"), None);
        assert_eq!(parse_duration(""), None);
    }
}
