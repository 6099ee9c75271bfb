//! The ServiceCIDR controller end to end, on the testbed only: kube-sim
//! does not serve networking.k8s.io (docs/kube-sim.md), the testbed's real
//! kube-apiserver does, with its own ServiceCIDR `kubernetes` for
//! `--service-cluster-ip-range` and the allocator that records each
//! Service's cluster IP as an IPAddress.
//!
//! kcm-rs runs only `service-cidr-controller`. The `kubernetes` ServiceCIDR
//! gets the finalizer and upstream's `Ready` `True`; so does a second one
//! (its condition server-side applied to the status by the field manager
//! `service-cidr-controller`, as upstream's). A Service takes a cluster IP from the second; the
//! second, deleted, stays with its finalizer and `Ready` `False`
//! `Terminating` while the IP is in use, and goes once the Service is
//! deleted (after upstream's 10 s grace period).

use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::networking::v1::{IPAddress, ServiceCIDR};
use kcm_controllers::servicecidrs::{FINALIZER, IP_ALLOCATOR, LABEL_MANAGED_BY, READY_MESSAGE, TERMINATING_MESSAGE};
use kube::Api;
use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use kube_sim::testing::wait_for;
use serde_json::json;

use crate::common::{Backend, Env, PATIENCE, run_on, start_on_testbed};

/// The controller alone, as upstream names it.
const CONTROLLERS: &str = "--controllers=service-cidr-controller";

/// The second ServiceCIDR: outside the testbed's `10.96.0.0/16`.
const SECONDARY: &str = "10.97.0.0/24";

/// The cluster IP the Service asks for, in [`SECONDARY`].
const CLUSTER_IP: &str = "10.97.0.10";

// === utils ===

/// `(finalizer held, Ready status, reason, message)` of a ServiceCIDR.
fn state(cidr: &ServiceCIDR) -> (bool, String, String, String) {
    let held = cidr.metadata.finalizers.iter().flatten().any(|f| f == FINALIZER);
    let ready =
        cidr.status.as_ref().and_then(|s| s.conditions.as_ref()).into_iter().flatten().find(|c| c.type_ == "Ready");
    let (status, reason, message) =
        ready.map(|c| (c.status.clone(), c.reason.clone(), c.message.clone())).unwrap_or_default();
    (held, status, reason, message)
}

/// Waits until ServiceCIDR `name` holds the finalizer and says `Ready`
/// `status` with this reason and message.
async fn wait_for_state(env: &Env, name: &str, status: &str, reason: &str, message: &str) -> ServiceCIDR {
    let cidrs: Api<ServiceCIDR> = Api::all(env.client.clone());
    let want = (true, status.to_owned(), reason.to_owned(), message.to_owned());
    wait_for(&env.cluster, PATIENCE, &format!("{name}: finalizer and Ready {status} {reason}"), || async {
        let cidr = cidrs.get(name).await.map_err(|e| e.to_string())?;
        if state(&cidr) == want { Ok(cidr) } else { Err(format!("{:?}", state(&cidr))) }
    })
    .await
}

/// Deletes the test's ServiceCIDR when it drops, finalizer and all, should
/// the test fail before it is gone (the testbed is shared).
struct Cleanup {
    client: kube::Client,
    name: String,
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        let (client, name) = (self.client.clone(), self.name.clone());
        let handle = tokio::runtime::Handle::current();
        tokio::task::block_in_place(|| {
            handle.block_on(async move {
                let cidrs: Api<ServiceCIDR> = Api::all(client);
                let release = json!({"metadata": {"finalizers": null}});
                let _ = cidrs.patch(&name, &PatchParams::default(), &Patch::Merge(&release)).await;
                let _ = cidrs.delete(&name, &DeleteParams::default()).await;
            });
        });
    }
}

// === tests ===

mod a_deleted_service_cidr_stays_while_an_ip_of_it_is_in_use {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn testbed() {
        super::run_on(super::Backend::Testbed, super::a_deleted_service_cidr_stays_while_an_ip_of_it_is_in_use()).await;
    }
}

async fn a_deleted_service_cidr_stays_while_an_ip_of_it_is_in_use() {
    let env = start_on_testbed(&[CONTROLLERS]).await;
    wait_for_state(&env, "kubernetes", "True", "", READY_MESSAGE).await;

    let name = format!("{}-secondary", env.ns);
    let _cleanup = Cleanup { client: env.client.clone(), name: name.clone() };
    let cidrs: Api<ServiceCIDR> = Api::all(env.client.clone());
    let cidr = serde_json::from_value(json!({"metadata": {"name": name}, "spec": {"cidrs": [SECONDARY]}}))
        .expect("a ServiceCIDR");
    cidrs.create(&PostParams::default(), &cidr).await.expect("ServiceCIDR created");
    let ready = wait_for_state(&env, &name, "True", "", READY_MESSAGE).await;
    // The condition is server-side applied to the status, as upstream's
    // ApplyStatus, by its field manager.
    let applied = ready.metadata.managed_fields.iter().flatten().any(|m| {
        m.manager.as_deref() == Some("service-cidr-controller")
            && m.operation.as_deref() == Some("Apply")
            && m.subresource.as_deref() == Some("status")
    });
    assert!(applied, "{:?}", ready.metadata.managed_fields);

    let services: Api<Service> = Api::namespaced(env.client.clone(), &env.ns);
    let service = serde_json::from_value(json!({"metadata": {"name": "web"},
        "spec": {"clusterIP": CLUSTER_IP, "ports": [{"port": 80}]}}))
    .expect("a Service");
    services.create(&PostParams::default(), &service).await.expect("Service created in the second ServiceCIDR");
    let ips: Api<IPAddress> = Api::all(env.client.clone());
    let ip = ips.get(CLUSTER_IP).await.expect("the allocator's IPAddress");
    let managed = ip.metadata.labels.unwrap_or_default().remove(LABEL_MANAGED_BY);
    assert_eq!(managed.as_deref(), Some(IP_ALLOCATOR));

    cidrs.delete(&name, &DeleteParams::default()).await.expect("deletion asked");
    let held = wait_for_state(&env, &name, "False", "Terminating", TERMINATING_MESSAGE).await;
    assert!(held.metadata.deletion_timestamp.is_some(), "{:?}", held.metadata);

    services.delete("web", &DeleteParams::default()).await.expect("Service deleted");
    wait_for(&env.cluster, PATIENCE, "the ServiceCIDR gone once its IP is free", || async {
        match cidrs.get_opt(&name).await.map_err(|e| e.to_string())? {
            None => Ok(()),
            Some(cidr) => Err(format!("{:?}", state(&cidr))),
        }
    })
    .await;
}
