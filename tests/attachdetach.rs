//! The attach/detach controller end to end: the real `kcm-rs` binary
//! against kube-sim and against the testbed, as a kubelet, an external
//! attacher and a user see it.
//!
//! kcm-rs runs `persistentvolume-attach-detach-controller` and the binder
//! (which binds the tests' pre-bound claims and volumes). No kubelet or
//! CSI driver runs: the test plays them through the API, as upstream's
//! e2e does with its mock driver. It makes its own nodes (named after its
//! namespace, so that tests never share one), with the annotation by
//! which a kubelet hands attaching to the controller; it binds pods to
//! them by `spec.nodeName`; it writes a node's `status.volumesInUse` as
//! the kubelet would while a volume is mounted; and it answers the
//! controller's `VolumeAttachment`s as the external attacher would,
//! through their `status`.

use k8s_openapi::api::core::v1::Node;
use k8s_openapi::api::storage::v1::VolumeAttachment;
use kube::Api;
use kube::api::{Patch, PatchParams};
use kube_sim::testing::{kubectl_ok, wait_for};
use serde_json::{Value, json};

use crate::common::storage::apply;
use crate::common::{Env, PATIENCE, events, on_both, start_provisioned};

const CONTROLLERS: &str = "--controllers=persistentvolume-attach-detach-controller,persistentvolume-binder-controller";
const MANAGED: &str = "volumes.kubernetes.io/controller-managed-attach-detach";

// === the test's cluster objects ===

/// A node of this test's own, handed to the controller, `Ready`.
async fn create_node(env: &Env, suffix: &str) -> String {
    let name = format!("{}-{suffix}", env.ns);
    let node = json!({"apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "annotations": {MANAGED: "true"}}});
    apply(env, &node).await;
    node_status(env, &name, json!({"conditions": [{"type": "Ready", "status": "True"}]})).await;
    name
}

async fn node_status(env: &Env, name: &str, status: Value) {
    let nodes: Api<Node> = Api::all(env.client.clone());
    nodes
        .patch_status(name, &PatchParams::default(), &Patch::Merge(json!({"status": status})))
        .await
        .expect("node status");
}

/// The CSI driver of this test.
fn driver(env: &Env) -> String {
    format!("{}.csi.example.com", env.ns)
}

/// Volume `<ns>-<name>` of the test's driver (handle `<name>`), pre-bound
/// to claim `name` of `modes`, and the claim naming it; the volume's name.
async fn create_bound_claim(env: &Env, name: &str, modes: &[&str]) -> String {
    let volume = format!("{}-{name}", env.ns);
    apply(
        env,
        &json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": volume},
            "spec": {"capacity": {"storage": "1Gi"}, "accessModes": modes, "storageClassName": "",
                "persistentVolumeReclaimPolicy": "Retain", "csi": {"driver": driver(env), "volumeHandle": name},
                "claimRef": {"namespace": env.ns, "name": name}}}),
    )
    .await;
    apply(
        env,
        &json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name},
            "spec": {"accessModes": modes, "storageClassName": "", "volumeName": volume,
                "resources": {"requests": {"storage": "1Gi"}}}}),
    )
    .await;
    volume
}

/// Pod `name` on `node`, mounting `claims`.
async fn create_pod(env: &Env, name: &str, node: &str, claims: &[&str]) {
    let volumes: Vec<Value> =
        claims.iter().map(|c| json!({"name": c, "persistentVolumeClaim": {"claimName": c}})).collect();
    apply(
        env,
        &json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"nodeName": node, "containers": [{"name": "c", "image": "busybox"}], "volumes": volumes}}),
    )
    .await;
}

/// Deletes pod `name` at once, as a kubelet confirming it stopped would.
async fn delete_pod(env: &Env, name: &str) {
    kubectl_ok(&env.kubeconfig, &["delete", "pod", name, "-n", &env.ns, "--grace-period=0", "--force"]).await;
}

/// The unique name a node reports the test's volume `handle` by.
fn unique(env: &Env, handle: &str) -> String {
    format!("kubernetes.io/csi/{}^{handle}", driver(env))
}

fn attachments(env: &Env) -> Api<VolumeAttachment> {
    Api::all(env.client.clone())
}

/// The attachment of `volume` on `node`, once the controller made it.
async fn attachment(env: &Env, volume: &str, node: &str) -> VolumeAttachment {
    wait_for(&env.cluster, PATIENCE, &format!("an attachment of {volume} on {node}"), || async {
        let list = attachments(env).list(&Default::default()).await.map_err(|e| e.to_string())?;
        list.items
            .into_iter()
            .find(|va| va.spec.node_name == node && va.spec.source.persistent_volume_name.as_deref() == Some(volume))
            .ok_or_else(|| "none yet".to_owned())
    })
    .await
}

/// Plays the external attacher: `status` of attachment `name`.
async fn answer(env: &Env, name: &str, status: Value) {
    let patch = Patch::Merge(json!({"status": status}));
    attachments(env).patch_status(name, &PatchParams::default(), &patch).await.expect("attachment status");
}

/// Waits until `node` reports exactly `volumes` attached (sorted).
async fn reported(env: &Env, node: &str, volumes: &[String]) {
    let nodes: Api<Node> = Api::all(env.client.clone());
    wait_for(&env.cluster, PATIENCE, &format!("{node} reporting {volumes:?}"), || async {
        let node = nodes.get(node).await.map_err(|e| e.to_string())?;
        let mut now: Vec<String> =
            node.status.and_then(|s| s.volumes_attached).unwrap_or_default().into_iter().map(|v| v.name).collect();
        now.sort();
        if now == volumes { Ok(()) } else { Err(format!("reports {now:?}")) }
    })
    .await;
}

/// Waits until attachment `name` is gone or being deleted.
async fn detached(env: &Env, name: &str) {
    wait_for(&env.cluster, PATIENCE, &format!("attachment {name} deleted"), || async {
        match attachments(env).get_opt(name).await.map_err(|e| e.to_string())? {
            Some(va) if va.metadata.deletion_timestamp.is_none() => Err("still there".to_owned()),
            _ => Ok(()),
        }
    })
    .await;
}

/// The message of the first `reason` event about pod `pod`.
async fn event(env: &Env, pod: &str, reason: &str) -> String {
    wait_for(&env.cluster, PATIENCE, &format!("a {reason} event about {pod}"), || async {
        let found = events(env, &env.ns, pod, reason).await;
        found.first().and_then(|e| e.message.clone()).ok_or_else(|| "none yet".to_owned())
    })
    .await
}

/// The value of the series `series` (name and labels, as /metrics spells
/// them) on kcm-rs's /metrics.
async fn gauge(env: &Env, series: &str) -> Option<i64> {
    let (_, metrics) = env.scrape("/metrics").await;
    metrics.lines().find_map(|l| l.strip_prefix(series)?.trim().parse().ok())
}

async fn delete_nodes(env: &Env, nodes: &[&str]) {
    for node in nodes {
        kubectl_ok(&env.kubeconfig, &["delete", "node", node, "--wait=false"]).await;
    }
}

// === tests ===

on_both!(
    a_scheduled_pods_volume_is_attached_reported_and_detached_once_unmounted,
    a_single_node_volume_waits_for_its_detach_from_the_other_node,
    an_attach_error_is_told_to_the_pod_and_a_driver_needing_no_attach_gets_none,
);

/// A pod's CSI volume gets its `VolumeAttachment` (upstream's name, the
/// driver, the node, the volume); once the attacher says attached, the
/// node reports it and the pod has upstream's event. The pod deleted while
/// the kubelet still lists the volume in use, the volume stays; once it
/// leaves `volumesInUse`, the node stops reporting it and the attachment
/// is deleted.
async fn a_scheduled_pods_volume_is_attached_reported_and_detached_once_unmounted() {
    let env = start_provisioned(&[CONTROLLERS]).await;
    let node = create_node(&env, "node").await;
    let volume = create_bound_claim(&env, "data", &["ReadWriteOnce"]).await;
    create_pod(&env, "web", &node, &["data"]).await;

    let va = attachment(&env, &volume, &node).await;
    assert_eq!(va.spec.attacher, driver(&env));
    let name = va.metadata.name.clone().expect("name");
    assert!(name.starts_with("csi-") && name.len() == 68, "upstream's csi-<sha256> name: {name}");
    answer(&env, &name, json!({"attached": true})).await;
    reported(&env, &node, &[unique(&env, "data")]).await;
    let message = event(&env, "web", "SuccessfulAttachVolume").await;
    assert_eq!(message, format!("AttachVolume.Attach succeeded for volume {volume:?} "));
    let plugin = format!("kubernetes.io/csi:{}", driver(&env));
    let in_use = format!("storage_count_attachable_volumes_in_use{{node=\"{node}\",volume_plugin=\"{plugin}\"}}");
    let wanted =
        format!("attachdetach_controller_total_volumes{{plugin_name=\"{plugin}\",state=\"desired_state_of_world\"}}");
    let attached =
        format!("attachdetach_controller_total_volumes{{plugin_name=\"{plugin}\",state=\"actual_state_of_world\"}}");
    for series in [in_use, wanted, attached] {
        assert_eq!(gauge(&env, &series).await, Some(1), "{series}");
    }

    node_status(&env, &node, json!({"volumesInUse": [unique(&env, "data")]})).await;
    delete_pod(&env, "web").await;
    // A second pod's volume on the node: once it is attached, the sync that
    // attached it had seen the first pod gone and the volume still in use.
    let marker = create_bound_claim(&env, "marker", &["ReadWriteOnce"]).await;
    create_pod(&env, "marker", &node, &["marker"]).await;
    let marker_va = attachment(&env, &marker, &node).await;
    answer(&env, marker_va.metadata.name.as_deref().expect("name"), json!({"attached": true})).await;
    reported(&env, &node, &[unique(&env, "data"), unique(&env, "marker")]).await;
    let kept = attachments(&env).get(&name).await.expect("the mounted volume's attachment");
    assert!(kept.metadata.deletion_timestamp.is_none(), "a mounted volume is not detached");

    node_status(&env, &node, json!({"volumesInUse": []})).await;
    detached(&env, &name).await;
    reported(&env, &node, &[unique(&env, "marker")]).await;
    delete_pod(&env, "marker").await;
    detached(&env, marker_va.metadata.name.as_deref().expect("name")).await;
    delete_nodes(&env, &[&node]).await;
}

/// A ReadWriteOnce volume attached to one node is not attached to a second
/// node whose pod wants it: the second pod is told who holds it, with
/// upstream's words. Once the first pod goes and the volume is detached
/// there, the second node gets it.
async fn a_single_node_volume_waits_for_its_detach_from_the_other_node() {
    let env = start_provisioned(&[CONTROLLERS]).await;
    let first = create_node(&env, "first").await;
    let second = create_node(&env, "second").await;
    let volume = create_bound_claim(&env, "data", &["ReadWriteOnce"]).await;
    create_pod(&env, "holder", &first, &["data"]).await;
    let held = attachment(&env, &volume, &first).await;
    let held_name = held.metadata.name.clone().expect("name");
    answer(&env, &held_name, json!({"attached": true})).await;
    reported(&env, &first, &[unique(&env, "data")]).await;

    create_pod(&env, "waiter", &second, &["data"]).await;
    let message = event(&env, "waiter", "FailedAttachVolume").await;
    assert_eq!(message, format!("Waiting for detach for volume {volume:?} Volume is already used by pod(s) holder"));

    delete_pod(&env, "holder").await;
    detached(&env, &held_name).await;
    // The attacher's part: the detached attachment goes.
    kubectl_ok(&env.kubeconfig, &["delete", "volumeattachment", &held_name, "--ignore-not-found"]).await;
    let moved = attachment(&env, &volume, &second).await;
    answer(&env, moved.metadata.name.as_deref().expect("name"), json!({"attached": true})).await;
    reported(&env, &second, &[unique(&env, "data")]).await;
    delete_pod(&env, "waiter").await;
    detached(&env, moved.metadata.name.as_deref().expect("name")).await;
    delete_nodes(&env, &[&first, &second]).await;
}

/// The attacher's error reaches the pod as upstream words it; a volume of
/// a CSI driver whose `CSIDriver` says `attachRequired: false` gets no
/// attachment (seen once the same sync made the other volume's).
async fn an_attach_error_is_told_to_the_pod_and_a_driver_needing_no_attach_gets_none() {
    let env = start_provisioned(&[CONTROLLERS]).await;
    let node = create_node(&env, "node").await;
    let no_attach = format!("{}.noattach.example.com", env.ns);
    apply(
        &env,
        &json!({"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": no_attach},
            "spec": {"attachRequired": false}}),
    )
    .await;
    let local = format!("{}-local", env.ns);
    apply(
        &env,
        &json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": local},
            "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "storageClassName": "",
                "csi": {"driver": no_attach, "volumeHandle": "local"},
                "claimRef": {"namespace": env.ns, "name": "local"}}}),
    )
    .await;
    apply(
        &env,
        &json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "local"},
            "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "", "volumeName": local,
                "resources": {"requests": {"storage": "1Gi"}}}}),
    )
    .await;
    let volume = create_bound_claim(&env, "data", &["ReadWriteOnce"]).await;
    create_pod(&env, "web", &node, &["local", "data"]).await;

    let va = attachment(&env, &volume, &node).await;
    let all = attachments(&env).list(&Default::default()).await.expect("attachments");
    let for_local = all.items.iter().filter(|a| a.spec.source.persistent_volume_name.as_deref() == Some(&local));
    assert_eq!(for_local.count(), 0, "attachRequired: false");

    let name = va.metadata.name.clone().expect("name");
    answer(&env, &name, json!({"attached": false, "attachError": {"message": "disk vol-7 not found"}})).await;
    let message = event(&env, "web", "FailedAttachVolume").await;
    assert_eq!(message, format!("AttachVolume.Attach failed for volume {volume:?} : disk vol-7 not found"));

    delete_pod(&env, "web").await;
    detached(&env, &name).await;
    kubectl_ok(&env.kubeconfig, &["delete", "csidriver", &no_attach]).await;
    delete_nodes(&env, &[&node]).await;
}
