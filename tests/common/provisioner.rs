//! On the testbed, the external provisioner that kube-sim plays for every
//! claim (`kube_sim::kubelet::provisioner`): the testbed has none, so a
//! claim would stay Pending and the scheduler would leave its pods
//! unscheduled ("pod has unbound immediate PersistentVolumeClaims"). A
//! test whose pods use claims starts this beside its kcm-rs: each claim of
//! the test's namespace gets a PersistentVolume `pvc-<uid>` with the claim
//! as its `claimRef`, as an external provisioner makes one, unless
//! `kube-sim.io/provision: "pending"` holds it; kcm-rs's
//! persistentvolume-binder-controller then binds the claim to it. When the
//! test is done, it takes the claims' `kubernetes.io/pvc-protection`
//! finalizer off and removes the volumes it made, so that the test's
//! namespace goes whatever controllers ran. On kube-sim it does nothing:
//! kube-sim provisions the claims itself.

use std::sync::{Arc, Mutex};

use futures::TryStreamExt;
use k8s_openapi::api::core::v1::{PersistentVolume, PersistentVolumeClaim};
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::runtime::{WatchStreamExt, watcher};
use serde_json::json;

use super::{Cluster, Env};

/// The annotation that keeps a claim Pending, as on kube-sim.
const PENDING: &str = "kube-sim.io/provision";

/// Provisions the claims of a test's namespace on the testbed.
pub struct Provisioner {
    client: kube::Client,
    claims: Api<PersistentVolumeClaim>,
    /// The PersistentVolumes made (cluster-scoped: removed by [`finish`]).
    ///
    /// [`finish`]: Provisioner::finish
    volumes: Arc<Mutex<Vec<String>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Provisioner {
    /// Starts provisioning the claims of `env.ns` on the testbed; `None`
    /// on kube-sim.
    pub fn start(env: &Env) -> Option<Self> {
        if let Cluster::Sim(_) = env.cluster {
            return None;
        }
        let claims: Api<PersistentVolumeClaim> = Api::namespaced(env.client.clone(), &env.ns);
        let claims_of_test = claims.clone();
        let client = env.client.clone();
        let volumes = Arc::new(Mutex::new(Vec::new()));
        let made = volumes.clone();
        let task = tokio::spawn(async move {
            let stream = watcher(claims.clone(), watcher::Config::default()).default_backoff().applied_objects();
            futures::pin_mut!(stream);
            loop {
                match stream.try_next().await {
                    Ok(Some(claim)) => provision(&client, &claim, &made).await,
                    Ok(None) => return,
                    Err(_) => {}
                }
            }
        });
        Some(Provisioner { client: env.client.clone(), claims: claims_of_test, volumes, task })
    }

    /// Stops provisioning, takes the `kubernetes.io/pvc-protection` finalizer
    /// off the namespace's claims (their pods are done with, or go with the
    /// namespace), and removes the PersistentVolumes made (with their
    /// `kubernetes.io/pv-protection` finalizer): no controller of the
    /// testbed removes either finalizer.
    pub async fn finish(self) {
        self.task.abort();
        for claim in self.claims.list(&Default::default()).await.expect("claims listed") {
            let name = claim.metadata.name.unwrap_or_default();
            let unprotected = json!({"metadata": {"finalizers": null}});
            match self.claims.patch(&name, &PatchParams::default(), &Patch::Merge(unprotected)).await {
                Ok(_) => {}
                Err(kube::Error::Api(e)) if e.code == 404 => {}
                Err(e) => panic!("claim {name} not unprotected: {e}"),
            }
        }
        let volumes: Api<PersistentVolume> = Api::all(self.client.clone());
        let made = self.volumes.lock().expect("lock").clone();
        for name in made {
            let unprotected = json!({"metadata": {"finalizers": null}});
            volumes.patch(&name, &PatchParams::default(), &Patch::Merge(unprotected)).await.expect("PV unprotected");
            volumes.delete(&name, &Default::default()).await.expect("PV deleted");
        }
    }
}

/// Whether `claim` has no volume yet, is not being deleted, and is not
/// held Pending.
fn waits_for_volume(claim: &PersistentVolumeClaim) -> bool {
    let spec = claim.spec.as_ref();
    let unnamed = spec.and_then(|s| s.volume_name.as_deref()).is_none_or(str::is_empty);
    let held = claim.metadata.annotations.as_ref().and_then(|a| a.get(PENDING)).is_some_and(|v| v == "pending");
    unnamed && !held && claim.metadata.deletion_timestamp.is_none()
}

/// Makes `claim` a volume of its own, bound to it, if it waits for one.
async fn provision(client: &kube::Client, claim: &PersistentVolumeClaim, made: &Mutex<Vec<String>>) {
    if !waits_for_volume(claim) {
        return;
    }
    let (Some(name), Some(namespace), Some(uid)) =
        (claim.metadata.name.as_deref(), claim.metadata.namespace.as_deref(), claim.metadata.uid.as_deref())
    else {
        return;
    };
    let spec = claim.spec.clone().unwrap_or_default();
    let storage = spec.resources.as_ref().and_then(|r| r.requests.as_ref()).and_then(|r| r.get("storage")).cloned();
    let volume_name = format!("pvc-{uid}");
    let volume: PersistentVolume = serde_json::from_value(json!({
        "metadata": {"name": volume_name},
        "spec": {
            "capacity": {"storage": storage},
            "accessModes": spec.access_modes.clone().unwrap_or_default(),
            "storageClassName": spec.storage_class_name.clone().unwrap_or_default(),
            "persistentVolumeReclaimPolicy": "Delete",
            "hostPath": {"path": format!("/tmp/testbed-volumes/{volume_name}")},
            "claimRef": {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                "namespace": namespace, "name": name, "uid": uid},
        },
    }))
    .expect("a PersistentVolume");
    let volumes: Api<PersistentVolume> = Api::all(client.clone());
    match volumes.create(&PostParams::default(), &volume).await {
        Ok(_) => made.lock().expect("lock").push(volume_name.clone()),
        Err(kube::Error::Api(e)) if e.code == 409 => {}
        Err(e) => panic!("PersistentVolume {volume_name} not created: {e}"),
    }
}
