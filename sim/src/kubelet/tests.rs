//! Tests of the kubelet stand-in's pure parts: Go durations and where a
//! pod fits.

use super::scheduling::fits;
use super::*;

#[test]
fn go_durations_parse() {
    assert_eq!(parse_duration("500ms"), Some(Duration::from_millis(500)));
    assert_eq!(parse_duration("1m30s"), Some(Duration::from_secs(90)));
    assert_eq!(parse_duration("2h"), Some(Duration::from_secs(7200)));
    assert_eq!(parse_duration("soon"), None);
    assert_eq!(parse_duration(""), None);
}

fn ready_node(taints: Value) -> Value {
    json!({"metadata": {"name": "n", "labels": {"disk": "ssd"}},
        "spec": {"taints": taints},
        "status": {"conditions": [{"type": "Ready", "status": "True"}]}})
}

#[test]
fn pods_fit_only_where_taints_are_tolerated_and_selectors_match() {
    let taint = json!([{"key": "dedicated", "value": "db", "effect": "NoSchedule"}]);
    let plain = json!({"spec": {}});
    let tolerant = json!({"spec": {"tolerations": [{"key": "dedicated", "operator": "Equal", "value": "db"}]}});
    assert!(!fits(&plain, &ready_node(taint.clone())));
    assert!(fits(&tolerant, &ready_node(taint)));
    assert!(fits(&plain, &ready_node(json!([{"key": "x", "effect": "PreferNoSchedule"}]))));
    let wants_hdd = json!({"spec": {"nodeSelector": {"disk": "hdd"}}});
    assert!(!fits(&wants_hdd, &ready_node(json!([]))));
    let mut not_ready = ready_node(json!([]));
    not_ready["status"]["conditions"][0]["status"] = json!("Unknown");
    assert!(!fits(&plain, &not_ready));
}
