//! Validation of pod specs, as in Pods, PodTemplates and workload
//! templates: containers, ports, policies, tolerations (`taints.rs`) and the
//! pod-level fields listed in the module doc of `validation`, with the small
//! enumerated and numeric rules they share with Services.

use std::collections::BTreeSet;

use serde_json::Value;

use super::access::{at, int, list, text};
use super::errors::Errors;
use super::meta::{labels, meta_maps};
use super::render::go_quote;
use super::syntax::{dns1123_label, dns1123_subdomain, port_name_messages};
use super::taints::tolerations;

/// `ValidatePodTemplateSpec`: template labels and annotations, then the spec.
pub(super) fn pod_template_spec(errs: &mut Errors, template: &Value, path: &str) {
    meta_maps(errs, at(template, "metadata"), &format!("{path}.metadata"));
    pod_spec(errs, at(template, "spec"), &format!("{path}.spec"));
}

/// Part of `ValidatePodSpec`, in upstream order.
pub(super) fn pod_spec(errs: &mut Errors, spec: &Value, path: &str) {
    let mut volume_names = BTreeSet::new();
    for (i, volume) in list(spec, "volumes").iter().enumerate() {
        let name_path = format!("{path}.volumes[{i}].name");
        let name = text(volume, "name");
        if name.is_empty() {
            errs.required(&name_path, "");
        } else {
            for msg in dns1123_label(name) {
                errs.invalid(&name_path, go_quote(name), &msg);
            }
        }
        if !volume_names.insert(name) && !name.is_empty() {
            errs.duplicate(&name_path, go_quote(name));
        }
    }

    let containers = list(spec, "containers");
    let mut names = BTreeSet::new();
    if containers.is_empty() {
        errs.required(&format!("{path}.containers"), "");
    }
    for (i, container) in containers.iter().enumerate() {
        let container_path = format!("{path}.containers[{i}]");
        container_common(errs, container, &container_path);
        let name = text(container, "name");
        if !names.insert(name) {
            errs.duplicate(&format!("{container_path}.name"), go_quote(name));
        }
    }
    for (i, container) in list(spec, "initContainers").iter().enumerate() {
        let container_path = format!("{path}.initContainers[{i}]");
        let name = text(container, "name");
        if !names.insert(name) {
            errs.duplicate(&format!("{container_path}.name"), go_quote(name));
        }
        container_common(errs, container, &container_path);
    }

    enumerated(errs, spec, "restartPolicy", path, &["Always", "OnFailure", "Never"]);
    let dns_policies = ["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"];
    enumerated(errs, spec, "dnsPolicy", path, &dns_policies);
    labels(errs, at(spec, "nodeSelector"), &format!("{path}.nodeSelector"));
    for field in ["serviceAccountName", "nodeName"] {
        let value = text(spec, field);
        if !value.is_empty() {
            for msg in dns1123_subdomain(value) {
                errs.invalid(&format!("{path}.{field}"), go_quote(value), &msg);
            }
        }
    }
    if let Some(deadline) = int(spec, "activeDeadlineSeconds")
        && !(1..=i64::from(i32::MAX)).contains(&deadline)
    {
        errs.invalid(
            &format!("{path}.activeDeadlineSeconds"),
            deadline.to_string(),
            "must be between 1 and 2147483647, inclusive",
        );
    }
    let hostname = text(spec, "hostname");
    if !hostname.is_empty() {
        for msg in dns1123_label(hostname) {
            errs.invalid(&format!("{path}.hostname"), go_quote(hostname), &msg);
        }
    }
    tolerations(errs, list(spec, "tolerations"), &format!("{path}.tolerations"));
}

/// `validateContainerCommon`: name, image, termination message policy,
/// ports and pull policy.
fn container_common(errs: &mut Errors, container: &Value, path: &str) {
    let name = text(container, "name");
    if name.is_empty() {
        errs.required(&format!("{path}.name"), "");
    } else {
        for msg in dns1123_label(name) {
            errs.invalid(&format!("{path}.name"), go_quote(name), &msg);
        }
    }
    if text(container, "image").is_empty() {
        errs.required(&format!("{path}.image"), "");
    }
    enumerated(errs, container, "terminationMessagePolicy", path, &["File", "FallbackToLogsOnError"]);
    let mut port_names = BTreeSet::new();
    for (i, port) in list(container, "ports").iter().enumerate() {
        let port_path = format!("{path}.ports[{i}]");
        let port_name = text(port, "name");
        if !port_name.is_empty() {
            let msgs = port_name_messages(port_name);
            for msg in &msgs {
                errs.invalid(&format!("{port_path}.name"), go_quote(port_name), msg);
            }
            if msgs.is_empty() && !port_names.insert(port_name) {
                errs.duplicate(&format!("{port_path}.name"), go_quote(port_name));
            }
        }
        match int(port, "containerPort").unwrap_or(0) {
            0 => errs.required(&format!("{port_path}.containerPort"), ""),
            number => port_number(errs, number, &format!("{port_path}.containerPort")),
        }
        if let Some(host_port) = int(port, "hostPort").filter(|p| *p != 0) {
            port_number(errs, host_port, &format!("{port_path}.hostPort"));
        }
        protocol(errs, port, &port_path);
    }
    enumerated(errs, container, "imagePullPolicy", path, &["Always", "IfNotPresent", "Never"]);
}

/// An enumerated string field: Required when empty, NotSupported when
/// outside `allowed`.
fn enumerated(errs: &mut Errors, object: &Value, field: &str, path: &str, allowed: &[&str]) {
    let value = text(object, field);
    if value.is_empty() {
        errs.required(&format!("{path}.{field}"), "");
    } else if !allowed.contains(&value) {
        errs.not_supported(&format!("{path}.{field}"), go_quote(value), allowed);
    }
}

/// A port's `protocol`.
pub(super) fn protocol(errs: &mut Errors, port: &Value, path: &str) {
    enumerated(errs, port, "protocol", path, &["SCTP", "TCP", "UDP"]);
}

/// `IsValidPortNum`.
pub(super) fn port_number(errs: &mut Errors, number: i64, path: &str) {
    if !(1..=65535).contains(&number) {
        errs.invalid(path, number.to_string(), "must be between 1 and 65535, inclusive");
    }
}
