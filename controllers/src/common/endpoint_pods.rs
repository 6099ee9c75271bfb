//! What the endpoint controllers ask of a pod (upstream
//! `k8s.io/endpointslice/util` and `pkg/api/v1/pod`'s `FindPort`): whether
//! it belongs in a Service's endpoints at all, which of its ports a
//! Service port targets, whether its hostname is published, and which
//! Services a pod event concerns.
//!
//! Shared by the endpoints controller and the EndpointSlice controller;
//! nothing here knows either's output type.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::{Service, ServicePort};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kcm_objects::Pod;

use super::pod::{is_pod_ready, is_pod_terminal};
use super::selector::{LabelSet, contains_all};

/// Whether `pod` is published at all, ready or not (upstream
/// `ShouldPodBeInEndpoints`): it has an IP, has not reached `Succeeded` or
/// `Failed`, and is not being deleted unless `include_terminating` (the
/// endpoints controller passes the Service's `publishNotReadyAddresses`).
pub fn should_pod_be_in_endpoints(pod: &Pod, include_terminating: bool) -> bool {
    if pod.status.pod_ips.is_empty() || is_pod_terminal(pod) {
        return false;
    }
    include_terminating || pod.metadata.deletion_timestamp().is_none()
}

/// Whether the pod's `spec.hostname` is published for `service` (upstream
/// `ShouldSetHostname`): it has one, and its `spec.subdomain` names the
/// Service in the pod's namespace.
pub fn should_set_hostname(pod: &Pod, service: &Service) -> bool {
    let hostname = pod.spec.rare().hostname.as_deref().is_some_and(|h| !h.is_empty());
    hostname
        && pod.spec.rare().subdomain.as_deref() == service.metadata.name.as_deref()
        && service.metadata.namespace.as_deref() == Some(pod.metadata.namespace.as_str())
}

/// The pod's port a Service port targets (upstream `FindPort`): a number
/// is taken as it is (absent: 0); a name is looked up among the pod's named
/// ports (containers', then sidecars') with the Service port's protocol
/// (`TCP` when unset, as the API server defaults it). `None` when the name
/// is not found.
pub fn find_port(pod: &Pod, port: &ServicePort) -> Option<i32> {
    match &port.target_port {
        None => Some(0),
        Some(IntOrString::Int(n)) => Some(*n),
        Some(IntOrString::String(name)) => {
            let protocol = port.protocol.as_deref().unwrap_or("TCP");
            let named = pod.spec.named_ports.iter();
            named.filter(|p| p.name == name.as_str() && p.protocol == protocol).map(|p| p.container_port).next()
        }
    }
}

/// Whether `service` selects pods with `labels`: it has a selector (an
/// absent one selects nothing, an empty one everything) and every pair of
/// it matches.
pub fn selects(service: &Service, labels: &(impl LabelSet + ?Sized)) -> bool {
    let selector: Option<&BTreeMap<String, String>> = service.spec.as_ref().and_then(|s| s.selector.as_ref());
    selector.is_some_and(|sel| contains_all(labels, Some(sel)))
}

/// A Service's queue key, `namespace/name`.
pub fn service_key(service: &Service) -> String {
    super::object::key(&service.metadata)
}

/// The keys (`namespace/name`) of `services` (those of the pod's namespace)
/// whose selector selects `pod` (upstream `GetPodServiceMemberships`).
pub fn pod_service_memberships<'a>(pod: &Pod, services: impl IntoIterator<Item = &'a Service>) -> BTreeSet<String> {
    services
        .into_iter()
        .filter(|s| s.metadata.namespace.as_deref() == Some(pod.metadata.namespace.as_str()))
        .filter(|s| selects(s, &pod.metadata.labels))
        .map(service_key)
        .collect()
}

/// The Services a pod update concerns (upstream
/// `GetServicesToUpdateOnPodChange`): none for a resync (same
/// resourceVersion) or a change no endpoint shows; when only the labels
/// (or hostname, subdomain) changed, the Services it joined or left; when
/// the endpoint itself changed, every Service of the old and new pod.
pub fn services_to_update_on_pod_change(old: &Pod, new: &Pod, services: &[&Service]) -> BTreeSet<String> {
    if old.metadata.resource_version == new.metadata.resource_version {
        return BTreeSet::new();
    }
    let (pod_changed, labels_changed) = pod_endpoints_changed(old, new);
    if !pod_changed && !labels_changed {
        return BTreeSet::new();
    }
    let current = pod_service_memberships(new, services.iter().copied());
    if !labels_changed {
        return current;
    }
    let previous = pod_service_memberships(old, services.iter().copied());
    if pod_changed {
        current.union(&previous).cloned().collect()
    } else {
        current.symmetric_difference(&previous).cloned().collect()
    }
}

/// (whether the pod's endpoint changed, whether its labels, hostname or
/// subdomain changed), as upstream's `podEndpointsChanged`: the endpoint
/// changes with readiness or the IPs, and whenever either version is being
/// deleted (upstream compares the two deletionTimestamp pointers, which
/// differ as soon as one is set).
fn pod_endpoints_changed(old: &Pod, new: &Pod) -> (bool, bool) {
    let labels_changed = old.metadata.labels != new.metadata.labels
        || old.spec.rare().hostname != new.spec.rare().hostname
        || old.spec.rare().subdomain != new.spec.rare().subdomain;
    let deleting = old.metadata.deletion_timestamp().is_some() || new.metadata.deletion_timestamp().is_some();
    let pod_changed = deleting || is_pod_ready(old) != is_pod_ready(new) || old.status.pod_ips != new.status.pod_ips;
    (pod_changed, labels_changed)
}

#[cfg(test)]
mod tests {
    //! Upstream's `TestShouldPodBeInEndpoints`, `TestShouldSetHostname`,
    //! `TestDetermineNeededServiceUpdates` and `TestPodEndpointsChanged`
    //! cases that the slim pod can express.

    use k8s_openapi::api::core::v1::ServiceSpec;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
    use serde_json::json;

    use super::*;

    // === utils ===

    fn pod(value: serde_json::Value) -> Pod {
        let mut base = json!({
            "metadata": {"name": "pod", "namespace": "default", "resourceVersion": "1", "labels": {"app": "a"}},
            "spec": {"containers": [{"name": "c", "ports": [{"name": "http", "containerPort": 8080}]}]},
            "status": {"phase": "Running", "podIPs": [{"ip": "1.2.3.4"}],
                       "conditions": [{"type": "Ready", "status": "True"}]},
        });
        merge(&mut base, value);
        serde_json::from_value(base).expect("pod")
    }

    fn merge(base: &mut serde_json::Value, patch: serde_json::Value) {
        match (base, patch) {
            (serde_json::Value::Object(b), serde_json::Value::Object(p)) => {
                for (k, v) in p {
                    merge(b.entry(k).or_insert(serde_json::Value::Null), v);
                }
            }
            (b, p) => *b = p,
        }
    }

    fn service(name: &str, selector: Option<&[(&str, &str)]>) -> Service {
        Service {
            metadata: ObjectMeta {
                name: Some(name.into()),
                namespace: Some("default".into()),
                ..ObjectMeta::default()
            },
            spec: Some(ServiceSpec {
                selector: selector.map(|s| s.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()),
                ..ServiceSpec::default()
            }),
            ..Service::default()
        }
    }

    // === tests ===

    #[test]
    fn should_pod_be_in_endpoints_cases() {
        let cases = [
            ("Failed pod with Never RestartPolicy", json!({"status": {"phase": "Failed"}}), false, false),
            ("Succeeded pod with Never RestartPolicy", json!({"status": {"phase": "Succeeded"}}), false, false),
            ("Running pod", json!({}), false, true),
            ("Pending pod with no IPs", json!({"status": {"phase": "Pending", "podIPs": []}}), false, false),
            (
                "Terminating pod with includeTerminating = false",
                json!({"metadata": {"deletionTimestamp": "2026-01-01T00:00:00Z"}}),
                false,
                false,
            ),
            (
                "Terminating pod with includeTerminating = true",
                json!({"metadata": {"deletionTimestamp": "2026-01-01T00:00:00Z"}}),
                true,
                true,
            ),
            ("Not ready pod", json!({"status": {"conditions": [{"type": "Ready", "status": "False"}]}}), false, true),
        ];
        for (name, patch, include_terminating, want) in cases {
            assert_eq!(should_pod_be_in_endpoints(&pod(patch), include_terminating), want, "{name}");
        }
    }

    #[test]
    fn should_set_hostname_cases() {
        let svc = service("svc", Some(&[]));
        let with = |h: &str, s: &str| pod(json!({"spec": {"hostname": h, "subdomain": s}}));
        assert!(should_set_hostname(&with("h", "svc"), &svc), "hostname and matching subdomain");
        assert!(!should_set_hostname(&with("", "svc"), &svc), "no hostname");
        assert!(!should_set_hostname(&with("h", "other"), &svc), "another subdomain");
        let mut elsewhere = svc.clone();
        elsewhere.metadata.namespace = Some("other".into());
        assert!(!should_set_hostname(&with("h", "svc"), &elsewhere), "another namespace");
    }

    #[test]
    fn find_port_by_number_and_by_name_and_protocol() {
        let p = pod(json!({}));
        let port = |target: Option<IntOrString>, protocol: Option<&str>| ServicePort {
            port: 80,
            target_port: target,
            protocol: protocol.map(str::to_owned),
            ..ServicePort::default()
        };
        assert_eq!(find_port(&p, &port(Some(IntOrString::Int(9376)), None)), Some(9376));
        assert_eq!(find_port(&p, &port(Some(IntOrString::String("http".into())), None)), Some(8080));
        assert_eq!(find_port(&p, &port(Some(IntOrString::String("http".into())), Some("UDP"))), None);
        assert_eq!(find_port(&p, &port(Some(IntOrString::String("grpc".into())), Some("TCP"))), None);
        assert_eq!(find_port(&p, &port(None, None)), Some(0));
    }

    #[test]
    fn memberships_follow_selectors_and_skip_selectorless_services() {
        let services = [
            service("all", Some(&[])),
            service("a", Some(&[("app", "a")])),
            service("b", Some(&[("app", "b")])),
            service("none", None),
        ];
        let got = pod_service_memberships(&pod(json!({})), services.iter());
        assert_eq!(got.into_iter().collect::<Vec<_>>(), ["default/a", "default/all"]);
    }

    #[test]
    fn determine_needed_service_updates() {
        let services = [service("a", Some(&[("app", "a")])), service("b", Some(&[("app", "b")]))];
        let refs: Vec<&Service> = services.iter().collect();
        let old = pod(json!({}));
        let relabelled = pod(json!({"metadata": {"resourceVersion": "2", "labels": {"app": "b"}}}));
        let keys = |set: BTreeSet<String>| set.into_iter().collect::<Vec<_>>();
        assert_eq!(keys(services_to_update_on_pod_change(&old, &relabelled, &refs)), ["default/a", "default/b"]);
        let resync = old.clone();
        assert!(services_to_update_on_pod_change(&old, &resync, &refs).is_empty(), "same resourceVersion");
        let annotated = pod(json!({"metadata": {"resourceVersion": "2"}}));
        assert!(services_to_update_on_pod_change(&old, &annotated, &refs).is_empty(), "nothing endpoints show");
        let unready = pod(json!({"metadata": {"resourceVersion": "2"},
                                 "status": {"conditions": [{"type": "Ready", "status": "False"}]}}));
        assert_eq!(keys(services_to_update_on_pod_change(&old, &unready, &refs)), ["default/a"]);
        let moved = pod(json!({"metadata": {"resourceVersion": "2"}, "status": {"podIPs": [{"ip": "1.2.3.5"}]}}));
        assert_eq!(keys(services_to_update_on_pod_change(&old, &moved, &refs)), ["default/a"]);
    }

    #[test]
    fn pod_endpoints_changed_cases() {
        let old = pod(json!({}));
        let deleting = pod(json!({"metadata": {"deletionTimestamp": "2026-01-01T00:00:00Z"}}));
        assert_eq!(pod_endpoints_changed(&old, &deleting), (true, false));
        let hostname = pod(json!({"spec": {"hostname": "h"}}));
        assert_eq!(pod_endpoints_changed(&old, &hostname), (false, true));
        let subdomain = pod(json!({"spec": {"subdomain": "s"}}));
        assert_eq!(pod_endpoints_changed(&old, &subdomain), (false, true));
        let second_ip = pod(json!({"status": {"podIPs": [{"ip": "1.2.3.4"}, {"ip": "fd00::4"}]}}));
        assert_eq!(pod_endpoints_changed(&old, &second_ip), (true, false));
    }
}
