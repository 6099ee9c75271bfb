//! Pod `/status` rules, part of `ValidatePodStatusUpdate`: custom condition
//! types, the nominated node's name, the QoS class fixed at creation, no
//! terminated container brought back unless the restart policy allows it,
//! and `hostIPs[0]` agreeing with `hostIP`.

use serde_json::Value;

use super::access::{at, int, list, text};
use super::errors::{Errors, IMMUTABLE};
use super::render::go_quote;
use super::syntax::{dns1123_subdomain, qualified_name};

/// Condition types the system owns; any other must be a qualified name.
const SYSTEM_CONDITIONS: [&str; 3] = ["PodScheduled", "Ready", "Initialized"];

/// `ValidatePodStatusUpdate` (the parts kube-sim checks).
pub(super) fn pod_status_update(errs: &mut Errors, old: &Value, new: &Value) {
    let (old_status, status) = (at(old, "status"), at(new, "status"));
    for (i, condition) in list(status, "conditions").iter().enumerate() {
        let kind = text(condition, "type");
        if !SYSTEM_CONDITIONS.contains(&kind) {
            // Upstream's field path starts at `metadata`.
            for msg in qualified_name(kind) {
                errs.invalid(&format!("metadata.conditions[{i}].Type"), go_quote(kind), &msg);
            }
        }
    }
    let nominated = text(status, "nominatedNodeName");
    if !nominated.is_empty() && nominated != text(old_status, "nominatedNodeName") {
        for msg in dns1123_subdomain(nominated) {
            errs.invalid("status.nominatedNodeName", go_quote(nominated), &msg);
        }
    }
    let qos = text(status, "qosClass");
    if qos != text(old_status, "qosClass") {
        errs.invalid("status.qosClass", go_quote(qos), IMMUTABLE);
    }
    let restart_policy = text(at(old, "spec"), "restartPolicy");
    for field in ["containerStatuses", "initContainerStatuses"] {
        let restartable = restartable_init_containers(old, field);
        state_transitions(errs, list(old_status, field), list(status, field), restart_policy, &restartable, field);
    }
    state_transitions(
        errs,
        list(old_status, "ephemeralContainerStatuses"),
        list(status, "ephemeralContainerStatuses"),
        "Never",
        &[],
        "ephemeralContainerStatuses",
    );
    let host_ips = list(status, "hostIPs");
    if let Some(first) = host_ips.first()
        && text(first, "ip") != text(status, "hostIP")
    {
        errs.invalid("status.hostIPs[0].ip", go_quote(text(first, "ip")), "must be equal to `hostIP`");
    }
}

/// The init containers (sidecars, `restartPolicy: Always`) that may
/// restart whatever the pod's policy; none for other status lists.
fn restartable_init_containers<'a>(pod: &'a Value, field: &str) -> Vec<&'a str> {
    if field != "initContainerStatuses" {
        return Vec::new();
    }
    list(at(pod, "spec"), "initContainers")
        .iter()
        .filter(|c| text(c, "restartPolicy") == "Always")
        .map(|c| text(c, "name"))
        .collect()
}

/// `ValidateContainerStateTransition`: under `Never` (or `OnFailure`, for a
/// container that exited 0), a terminated container stays terminated.
fn state_transitions(
    errs: &mut Errors,
    old: &[Value],
    new: &[Value],
    restart_policy: &str,
    restartable: &[&str],
    field: &str,
) {
    if restart_policy == "Always" {
        return;
    }
    for (i, old_status) in old.iter().enumerate() {
        let terminated = at(at(old_status, "state"), "terminated");
        if terminated.is_null() {
            continue;
        }
        let failed = int(terminated, "exitCode").unwrap_or(0) != 0;
        let name = text(old_status, "name");
        if (failed && restart_policy == "OnFailure") || restartable.contains(&name) {
            continue;
        }
        let revived = new.iter().any(|s| text(s, "name") == name && at(at(s, "state"), "terminated").is_null());
        if revived {
            errs.forbidden(&format!("status.{field}[{i}].state"), "may not be transitioned to non-terminated state");
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn lines(old: &Value, new: &Value) -> Vec<String> {
        let mut errs = Errors::default();
        pod_status_update(&mut errs, old, new);
        errs.finish().iter().map(ToString::to_string).collect()
    }

    #[test]
    fn kubelet_like_updates_pass() {
        let old =
            json!({"spec": {"restartPolicy": "Always"}, "status": {"phase": "Pending", "qosClass": "BestEffort"}});
        let new = json!({"status": {"phase": "Running", "qosClass": "BestEffort", "hostIP": "10.0.0.1",
            "hostIPs": [{"ip": "10.0.0.1"}], "conditions": [{"type": "Ready"}, {"type": "example.com/gate"}]}});
        assert!(lines(&old, &new).is_empty());
    }

    #[test]
    fn status_rules() {
        let exited = json!([{"name": "c", "state": {"terminated": {"exitCode": 0}}}]);
        let old = json!({"spec": {"restartPolicy": "OnFailure"},
            "status": {"qosClass": "BestEffort", "containerStatuses": exited}});
        let new = json!({"status": {"qosClass": "Burstable", "nominatedNodeName": "Node_1", "hostIP": "10.0.0.1",
            "hostIPs": [{"ip": "10.0.0.2"}], "conditions": [{"type": "bad type"}],
            "containerStatuses": [{"name": "c", "state": {"running": {}}}]}});
        let causes = lines(&old, &new);
        assert_eq!(causes.len(), 5, "{causes:#?}");
        assert!(causes[0].starts_with("metadata.conditions[0].Type: Invalid value: \"bad type\": name part must"));
        assert!(
            causes[1]
                .starts_with("status.nominatedNodeName: Invalid value: \"Node_1\": a lowercase RFC 1123 subdomain")
        );
        assert_eq!(
            causes[2..],
            [
                "status.qosClass: Invalid value: \"Burstable\": field is immutable",
                "status.containerStatuses[0].state: Forbidden: may not be transitioned to non-terminated state",
                "status.hostIPs[0].ip: Invalid value: \"10.0.0.2\": must be equal to `hostIP`",
            ]
        );
    }
}
