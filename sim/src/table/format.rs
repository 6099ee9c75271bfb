//! Cell formatting shared by the printers: container names and images,
//! labels, label selectors, ages (kubectl's human durations) and `<none>`.

use std::collections::BTreeMap;

use jiff::{SignedDuration, Timestamp};
use serde_json::Value;

use super::access::{get, list, strings, text};

/// CONTAINERS and IMAGES cells: names and images, comma-separated.
pub(super) fn container_cells(containers: &[Value]) -> (String, String) {
    let names: Vec<&str> = containers.iter().map(|c| text(c, &["name"])).collect();
    let images: Vec<&str> = containers.iter().map(|c| text(c, &["image"])).collect();
    (names.join(","), images.join(","))
}

/// `labels.FormatLabels`: "k=v,k2=v2" sorted by key, or `<none>`.
pub(super) fn format_labels(labels: Option<&Value>) -> String {
    let pairs: BTreeMap<&str, &str> = labels
        .and_then(Value::as_object)
        .map(|m| m.iter().map(|(k, v)| (k.as_str(), v.as_str().unwrap_or(""))).collect())
        .unwrap_or_default();
    if pairs.is_empty() {
        return "<none>".to_owned();
    }
    pairs.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(",")
}

/// `metav1.FormatLabelSelector`: the selector string, `<none>` when it
/// selects everything or nothing, `<error>` when it is malformed.
pub(super) fn format_label_selector(selector: Option<&Value>) -> String {
    match selector_string(selector) {
        Ok(s) if s.is_empty() => "<none>".to_owned(),
        Ok(s) => s,
        Err(()) => "<error>".to_owned(),
    }
}

/// A `LabelSelector` rendered as a label query ("app=web,tier in (a,b)"),
/// requirements sorted by key. Err when an expression is malformed.
pub(super) fn selector_string(selector: Option<&Value>) -> Result<String, ()> {
    let Some(selector) = selector.filter(|s| s.is_object()) else {
        return Ok(String::new());
    };
    let mut requirements: Vec<(&str, String)> = Vec::new();
    if let Some(labels) = get(selector, &["matchLabels"]).and_then(Value::as_object) {
        for (key, value) in labels {
            requirements.push((key, format!("{key}={}", value.as_str().unwrap_or(""))));
        }
    }
    for expr in list(selector, &["matchExpressions"]) {
        let key = text(expr, &["key"]);
        let mut values = strings(list(expr, &["values"]));
        values.sort_unstable();
        let rendered = match (text(expr, &["operator"]), values.is_empty()) {
            ("In", false) => format!("{key} in ({})", values.join(",")),
            ("NotIn", false) => format!("{key} notin ({})", values.join(",")),
            ("Exists", true) => key.to_owned(),
            ("DoesNotExist", true) => format!("!{key}"),
            _ => return Err(()),
        };
        requirements.push((key, rendered));
    }
    requirements.sort_by(|a, b| a.0.cmp(b.0));
    Ok(requirements.into_iter().map(|(_, r)| r).collect::<Vec<_>>().join(","))
}

/// Elapsed time since `t`, or `<unknown>` when there is no time.
pub(super) fn since(now: Timestamp, t: Option<Timestamp>) -> String {
    match t {
        Some(t) => human_duration(now.duration_since(t)),
        None => "<unknown>".to_owned(),
    }
}

/// `<none>` for an empty string.
pub(super) fn or_none(s: &str) -> String {
    if s.is_empty() { "<none>".to_owned() } else { s.to_owned() }
}

/// Formats a duration the way `kubectl get` shows ages: about two or three
/// significant figures ("45s", "3m4s", "5h", "2d3h", "400d", "3y20d").
///
/// A port of apimachinery's `duration.HumanDuration`: up to one second in
/// the future counts as "0s" (clock skew), anything further is `<invalid>`.
pub fn human_duration(d: SignedDuration) -> String {
    let seconds = d.as_secs();
    if seconds < -1 {
        return "<invalid>".to_owned();
    }
    if seconds < 0 {
        return "0s".to_owned();
    }
    if seconds < 60 * 2 {
        return format!("{seconds}s");
    }
    let minutes = seconds / 60;
    if minutes < 10 {
        return with_remainder(minutes, "m", seconds % 60, "s");
    }
    if minutes < 60 * 3 {
        return format!("{minutes}m");
    }
    let hours = seconds / 3600;
    if hours < 8 {
        return with_remainder(hours, "h", minutes % 60, "m");
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    let days = hours / 24;
    if hours < 24 * 8 {
        return with_remainder(days, "d", hours % 24, "h");
    }
    if hours < 24 * 365 * 2 {
        return format!("{days}d");
    }
    if hours < 24 * 365 * 8 {
        return with_remainder(days / 365, "y", days % 365, "d");
    }
    format!("{}y", days / 365)
}

/// "3m" or "3m4s": the second unit only when it is not zero.
fn with_remainder(big: i64, big_unit: &str, small: i64, small_unit: &str) -> String {
    if small == 0 { format!("{big}{big_unit}") } else { format!("{big}{big_unit}{small}{small_unit}") }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_duration_matches_upstream_boundaries() {
        let cases = [
            (-3, "<invalid>"),
            (-1, "0s"),
            (0, "0s"),
            (59, "59s"),
            (119, "119s"),
            (120, "2m"),
            (184, "3m4s"),
            (599, "9m59s"),
            (600, "10m"),
            (179 * 60, "179m"),
            (3 * 3600, "3h"),
            (3 * 3600 + 5 * 60, "3h5m"),
            (8 * 3600, "8h"),
            (47 * 3600, "47h"),
            (48 * 3600, "2d"),
            (5 * 86400, "5d"),
            (5 * 86400 + 3 * 3600, "5d3h"),
            (8 * 86400, "8d"),
            (729 * 86400, "729d"),
            (730 * 86400, "2y"),
            (745 * 86400, "2y15d"),
            (8 * 365 * 86400, "8y"),
            (9 * 365 * 86400 + 40 * 86400, "9y"),
        ];
        for (secs, want) in cases {
            assert_eq!(human_duration(SignedDuration::from_secs(secs)), want, "{secs}s");
        }
        assert_eq!(human_duration(SignedDuration::from_millis(-1500)), "0s");
    }
}
