//! The EndpointSlice mirroring controller end to end, as upstream's e2e
//! (`test/e2e/network/endpointslicemirroring.go`) drives a cluster, with
//! kubectl: a custom Endpoints of a selector-less Service is mirrored into
//! an EndpointSlice (labels, ports, addresses), the slice follows an
//! update and goes with the Endpoints; one with several subsets sharing an
//! IP is mirrored once per port set; an Endpoints labelled
//! `endpointslice.kubernetes.io/skip-mirror: "true"` is not mirrored.
//! Every test waits on conditions, never on timings.

use k8s_openapi::api::discovery::v1::EndpointSlice;
use kube::Api;
use kube::api::ListParams;
use kube_sim::testing::{kubectl_ok, kubectl_ok_with_stdin, wait_for};

use crate::common::{Env, PATIENCE, on_both, start};

// === utils ===

/// A selector-less Service `name` and its Endpoints at `ip`, port 80
/// named `example` (the e2e's `example-custom-endpoints`).
fn custom(name: &str, ip: &str, labels: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: {name}\nspec:\n  ports:\n  - {{name: example, port: 80, \
         protocol: TCP}}\n---\napiVersion: v1\nkind: Endpoints\nmetadata:\n  name: {name}\n  labels: {{{labels}}}\n\
         subsets:\n- addresses: [{{ip: {ip}}}]\n  ports: [{{name: example, port: 80, protocol: TCP}}]\n"
    )
}

/// The slices mirrored for `name`, as (addresses, ports) sorted, once
/// `done` accepts them.
async fn wait_for_slices(
    env: &Env,
    name: &str,
    what: &str,
    done: impl Fn(&[EndpointSlice]) -> bool,
) -> Vec<EndpointSlice> {
    let slices: Api<EndpointSlice> = Api::namespaced(env.client.clone(), &env.ns);
    let selector = format!(
        "kubernetes.io/service-name={name},endpointslice.kubernetes.io/managed-by=endpointslicemirroring-controller.k8s.io"
    );
    wait_for(&env.cluster, PATIENCE, what, || async {
        let list = slices.list(&ListParams::default().labels(&selector)).await.map_err(|e| e.to_string())?;
        if done(&list.items) { Ok(list.items) } else { Err(format!("slices {:?}", summary(&list.items))) }
    })
    .await
}

/// Each slice's (addresses, port numbers), sorted.
fn summary(slices: &[EndpointSlice]) -> Vec<(Vec<String>, Vec<i32>)> {
    let mut out: Vec<_> = slices
        .iter()
        .map(|s| {
            let mut addresses: Vec<String> = s.endpoints.iter().flatten().flat_map(|e| e.addresses.clone()).collect();
            addresses.sort();
            let mut ports: Vec<i32> = s.ports.iter().flatten().filter_map(|p| p.port).collect();
            ports.sort_unstable();
            (addresses, ports)
        })
        .collect();
    out.sort();
    out
}

fn is(want: &[(&[&str], &[i32])]) -> impl Fn(&[EndpointSlice]) -> bool {
    let want: Vec<(Vec<String>, Vec<i32>)> =
        want.iter().map(|(a, p)| (a.iter().map(|s| (*s).to_owned()).collect(), p.to_vec())).collect();
    move |slices| summary(slices) == want
}

// === tests ===

on_both!(
    a_custom_endpoints_is_mirrored_through_create_update_and_delete,
    subsets_sharing_an_ip_are_mirrored_per_port_set_and_skip_mirror_is_honoured,
);

async fn a_custom_endpoints_is_mirrored_through_create_update_and_delete() {
    let env = start().await;
    let name = "example-custom-endpoints";
    kubectl_ok_with_stdin(&env.kubeconfig, &["apply", "-f", "-"], &custom(name, "10.1.2.3", "team: a")).await;
    let slices = wait_for_slices(&env, name, "the Endpoints mirrored", is(&[(&["10.1.2.3"], &[80])])).await;
    let slice = &slices[0];
    assert_eq!(slice.address_type, "IPv4");
    let labels = slice.metadata.labels.clone().unwrap_or_default();
    assert_eq!(labels.get("team").map(String::as_str), Some("a"), "the Endpoints' labels: {labels:?}");
    let port = &slice.ports.as_ref().expect("ports")[0];
    assert_eq!((port.name.as_deref(), port.protocol.as_deref()), (Some("example"), Some("TCP")));
    let owner = &slice.metadata.owner_references.clone().unwrap_or_default()[0];
    assert_eq!((owner.kind.as_str(), owner.name.as_str(), owner.controller), ("Endpoints", name, Some(true)));
    let ready = slice.endpoints.as_ref().expect("endpoints")[0].conditions.as_ref().and_then(|c| c.ready);
    assert_eq!(ready, Some(true));

    kubectl_ok_with_stdin(&env.kubeconfig, &["apply", "-f", "-"], &custom(name, "10.2.3.4", "team: a")).await;
    let updated = wait_for_slices(&env, name, "the update mirrored", is(&[(&["10.2.3.4"], &[80])])).await;
    assert_eq!(updated[0].metadata.name, slice.metadata.name, "the slice is updated in place");

    kubectl_ok(&env.kubeconfig, &["delete", "endpoints", name]).await;
    wait_for_slices(&env, name, "the slice deleted with the Endpoints", <[EndpointSlice]>::is_empty).await;

    let (_, metrics) = env.scrape("/metrics").await;
    for needle in [
        "endpoint_slice_mirroring_controller_changes{operation=\"create\"} 1",
        "endpoint_slice_mirroring_controller_changes{operation=\"update\"}",
        "endpoint_slice_mirroring_controller_endpoints_added_per_sync_count",
        "endpoint_slice_mirroring_controller_endpoints_sync_duration_bucket",
        "endpoint_slice_mirroring_controller_endpoints_desired 0",
        "workqueue_adds_total{name=\"endpoint_slice_mirroring\"}",
    ] {
        assert!(metrics.contains(needle), "{needle} not in\n{metrics}");
    }
}

async fn subsets_sharing_an_ip_are_mirrored_per_port_set_and_skip_mirror_is_honoured() {
    let env = start().await;
    let multi = "apiVersion: v1\nkind: Service\nmetadata:\n  name: multi\nspec:\n  ports:\n  - {name: a, port: 80}\n---\n\
                 apiVersion: v1\nkind: Endpoints\nmetadata:\n  name: multi\nsubsets:\n- addresses: [{ip: 10.1.2.3}, {ip: \
                 10.1.2.4}]\n  ports: [{name: a, port: 80}]\n- addresses: [{ip: 10.1.2.3}]\n  ports: [{name: b, port: \
                 8080}]\n";
    kubectl_ok_with_stdin(&env.kubeconfig, &["apply", "-f", "-"], multi).await;
    let skipped = custom("skipped", "10.9.9.9", "endpointslice.kubernetes.io/skip-mirror: \"true\"");
    kubectl_ok_with_stdin(&env.kubeconfig, &["apply", "-f", "-"], &skipped).await;
    let want: &[(&[&str], &[i32])] = &[(&["10.1.2.3"], &[8080]), (&["10.1.2.3", "10.1.2.4"], &[80])];
    wait_for_slices(&env, "multi", "one slice per port set", is(want)).await;
    // Synced before or with `multi`, and mirrored nothing.
    let none = wait_for_slices(&env, "skipped", "no slice for a skip-mirror Endpoints", |_| true).await;
    assert!(none.is_empty(), "{:?}", summary(&none));
    let listed =
        kubectl_ok(&env.kubeconfig, &["get", "endpointslices", "-l", "kubernetes.io/service-name=multi", "-o", "name"])
            .await;
    assert_eq!(listed.lines().count(), 2, "{listed}");
}
