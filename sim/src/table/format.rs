//! Cell formatting shared by the printers: container names and images,
//! labels, label selectors, ages and `<none>`.

use std::collections::BTreeMap;

use jiff::Timestamp;
use serde_json::Value;

use super::{get, human_duration, list, strings, text};

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
