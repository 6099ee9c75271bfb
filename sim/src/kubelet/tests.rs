//! Tests of the kubelet stand-in's pure parts: Go durations, where a pod
//! fits, and what a heartbeat does to a node's conditions.

use super::nodes::heartbeat_conditions;
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

#[test]
fn a_heartbeat_after_silence_restores_the_conditions_the_controller_set_unknown() {
    let unknown = |kind: &str| {
        json!({"type": kind, "status": "Unknown", "reason": "NodeStatusUnknown",
            "message": "Kubelet stopped posting node status.", "lastHeartbeatTime": "t0", "lastTransitionTime": "t1"})
    };
    let mut conditions = vec![
        unknown("MemoryPressure"),
        json!({"type": "DiskPressure", "status": "True", "reason": "Set", "lastTransitionTime": "t0"}),
        unknown("PIDPressure"),
        unknown("Ready"),
        json!({"type": "NetworkUnavailable", "status": "False", "lastTransitionTime": "t0"}),
    ];
    heartbeat_conditions(&mut conditions, "t2");
    let seen: Vec<(&str, &str, &str, &str)> = conditions
        .iter()
        .map(|c| {
            let s = |k: &str| c[k].as_str().unwrap_or("");
            (s("type"), s("status"), s("lastHeartbeatTime"), s("lastTransitionTime"))
        })
        .collect();
    assert_eq!(
        seen,
        [
            ("MemoryPressure", "False", "t2", "t2"),
            ("DiskPressure", "True", "t2", "t0"),
            ("PIDPressure", "False", "t2", "t2"),
            ("Ready", "True", "t2", "t2"),
            ("NetworkUnavailable", "False", "t2", "t0"),
        ]
    );
    assert_eq!(conditions[3]["reason"], "KubeletReady");
    assert_eq!(conditions[0]["message"], "kubelet has sufficient memory available");
}
