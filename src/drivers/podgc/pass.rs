//! One pass (upstream `gc`): the caches read once, then the four parts in
//! upstream's order, each waiting for its deletions before the next:
//! terminated pods beyond the threshold and terminating pods of
//! out-of-service nodes are deleted all at once (upstream starts one
//! goroutine per pod; the client's QPS limiter paces them), orphaned and
//! unscheduled terminating pods one after another. A failure is logged and
//! counted; the next pass finds whatever is left.

use std::collections::BTreeSet;

use futures::future::join_all;
use jiff::Timestamp;
use k8s_openapi::api::core::v1::Pod as WirePod;
use kcm_controllers::podgc::{self as core, ForceDelete, Quarantine, Snapshot};
use kcm_objects::{Node, Wire};
use kube::api::{Api, DeleteParams, Patch, PatchParams, Preconditions};

use super::{CONTROLLER_NAME, PodGcController};

impl PodGcController {
    /// One pass at the caches' current state.
    pub(super) async fn gc(&self, quarantine: &mut Quarantine) {
        let pods = self.pods.store().list();
        let nodes = self.nodes.store().list();
        let snapshot = Snapshot::new(pods.iter().map(AsRef::as_ref), nodes.iter().map(AsRef::as_ref));
        let now = Timestamp::now();
        let terminated = core::gc_terminated(&snapshot, self.threshold, now);
        if !terminated.is_empty() {
            tracing::info!(controller = CONTROLLER_NAME, num_pods = terminated.len(), "Garbage collecting pods");
        }
        join_all(terminated.iter().map(|d| self.force_delete(d))).await;
        let terminating = core::gc_terminating(&snapshot, Timestamp::now());
        join_all(terminating.iter().map(|d| self.force_delete(d))).await;
        let gone = self.deleted_nodes(quarantine.observe(&snapshot, Timestamp::now())).await;
        for orphan in core::gc_orphaned(&snapshot, &gone, Timestamp::now()) {
            tracing::info!(pod = %key(&orphan), node = %orphan.node, "Found orphaned Pod assigned to the Node, deleting");
            if self.force_delete(&orphan).await {
                tracing::info!(pod = %key(&orphan), "Forced deletion of orphaned Pod succeeded");
            }
        }
        for pod in core::gc_unscheduled_terminating(&snapshot, Timestamp::now()) {
            tracing::info!(pod = %key(&pod), "Found unscheduled terminating Pod not assigned to any Node, deleting");
            if self.force_delete(&pod).await {
                tracing::info!(pod = %key(&pod), "Forced deletion of unscheduled terminating Pod succeeded");
            }
        }
    }

    /// The quarantined nodes a live read finds gone (upstream
    /// `discoverDeletedNodes`); a failed read is logged and decides nothing.
    async fn deleted_nodes(&self, names: Vec<String>) -> BTreeSet<String> {
        // Decoded as the cache holds nodes: only whether it exists matters.
        let api: Api<Wire<Node>> = Api::all(self.client.clone());
        let mut gone = BTreeSet::new();
        for name in names {
            match api.get_opt(&name).await {
                Ok(Some(_)) => {}
                Ok(None) => {
                    gone.insert(name);
                }
                Err(error) => tracing::error!(node = %name, %error, "Error while getting node"),
            }
        }
        gone
    }

    /// Upstream `markFailedAndDeletePodWithCondition`: the status patch if
    /// any, then the delete with grace period 0, both on the pod's uid.
    /// Counted in the metrics; returns whether both succeeded.
    async fn force_delete(&self, pod: &ForceDelete) -> bool {
        tracing::info!(pod = %key(pod), "PodGC is force deleting Pod");
        let api: Api<WirePod> = Api::namespaced(self.client.clone(), &pod.namespace);
        let patched = match &pod.status_patch {
            Some(patch) => {
                api.patch_status(&pod.name, &PatchParams::default(), &Patch::Strategic(patch)).await.map(drop)
            }
            None => Ok(()),
        };
        let params = DeleteParams {
            grace_period_seconds: Some(0),
            preconditions: Some(Preconditions { uid: Some(pod.uid.clone()), resource_version: None }),
            ..DeleteParams::default()
        };
        let result = match patched {
            Ok(()) => api.delete(&pod.name, &params).await.map(drop),
            Err(error) => Err(error),
        };
        if let Err(error) = &result {
            tracing::error!(pod = %key(pod), reason = pod.reason.label(), %error, "failed to force delete pod");
        }
        if let Some(metrics) = &self.metrics {
            metrics.observe(&pod.namespace, pod.reason, result.is_err());
        }
        result.is_ok()
    }
}

/// `namespace/name`.
fn key(pod: &ForceDelete) -> String {
    kcm_objects::object_key(Some(&pod.namespace), &pod.name)
}
