//! The deletion itself, when a scheduled deletion fires: the
//! `TaintManagerEviction` Event, a live read of the pod, the
//! `DisruptionTarget` condition patched onto its status, then the delete
//! (the pod's own grace period) with the pod's uid as precondition; a pod
//! already gone counts as done. A failed deletion is retried with the
//! queue's backoff.

use jiff::Timestamp;
use k8s_openapi::api::core::v1::Pod;
use kcm_controllers::node::eviction::{self as core, Scheduled};
use kube::api::{Api, DeleteParams, Patch, PatchParams, Preconditions};
use serde_json::json;

use super::IDENTITY;
use super::evictor::{Evictor, pod_reference, split, until};
use crate::drivers::api_errors::code;
use kcm_runtime::events::EventType;
use kcm_runtime::informer::object_key;
use kcm_runtime::runner::{Next, SyncError};

/// Why a deletion failed; it is retried with backoff.
#[derive(Debug, thiserror::Error)]
#[error("cannot {action} pod {key}")]
struct DeletionError {
    key: String,
    action: &'static str,
    #[source]
    source: kube::Error,
}

impl Evictor {
    /// Carries out the deletion of `key` if it is (still) scheduled and due.
    pub(super) async fn fire(&self, key: &str) -> Result<Next, SyncError> {
        let now = Timestamp::now();
        let (namespace, name) = split(key);
        let target = {
            let mut scheduled = self.lock();
            let Some(entry) = scheduled.get_mut(key) else { return Ok(Next::Done) };
            if entry.scheduled.fire_at > now {
                // Rescheduled later since this key was queued.
                return Ok(Next::After(until(entry.scheduled.fire_at, now)));
            }
            entry.in_flight = true;
            if !entry.announced {
                entry.announced = true;
                tracing::info!(controller = IDENTITY.name, pod = key, "Deleting pod");
                self.recorder.event(
                    &pod_reference(namespace, name),
                    EventType::Normal,
                    core::EVENT_REASON,
                    core::marking_message(namespace, name),
                );
            }
            entry.scheduled.clone()
        };
        let result = self.delete(namespace, name, &target).await;
        let mut scheduled = self.lock();
        let ours = scheduled.get(key).is_some_and(|e| e.scheduled == target);
        match result {
            Ok(deleted) => {
                if ours {
                    scheduled.remove(key);
                }
                if deleted && let Some(metrics) = &self.metrics {
                    metrics.deletions.inc();
                    let late = Timestamp::now().duration_since(target.fire_at);
                    metrics.latency.observe(late.as_secs_f64().max(0.0));
                }
                Ok(Next::Done)
            }
            Err(error) => {
                if let Some(entry) = scheduled.get_mut(key).filter(|_| ours) {
                    // Decisions may cancel it again until the retry.
                    entry.in_flight = false;
                }
                Err(Box::new(error))
            }
        }
    }

    /// Upstream `addConditionAndDeletePod`, on the pod with `target.uid`
    /// only. Returns whether this call deleted the pod (false: it was gone
    /// or replaced already).
    async fn delete(&self, namespace: &str, name: &str, target: &Scheduled) -> Result<bool, DeletionError> {
        let key = &object_key(Some(namespace), name);
        let err = |action| move |source| DeletionError { key: key.clone(), action, source };
        let api: Api<Pod> = Api::namespaced(self.client.clone(), namespace);
        let Some(pod) = api.get_opt(name).await.map_err(err("get"))? else { return Ok(false) };
        if pod.metadata.uid.as_deref() != Some(target.uid.as_str()) {
            return Ok(false);
        }
        let conditions = pod.status.as_ref().and_then(|s| s.conditions.as_deref()).unwrap_or_default();
        if let Some(condition) = core::disruption_condition(conditions, Timestamp::now()) {
            let patch = json!({"metadata": {"uid": target.uid}, "status": {"conditions": [condition]}});
            match api.patch_status(name, &PatchParams::default(), &Patch::Strategic(patch)).await {
                Ok(_) => {}
                Err(e) if gone(&e) => return Ok(false),
                Err(e) => return Err(err("add the DisruptionTarget condition to")(e)),
            }
        }
        let params = DeleteParams {
            preconditions: Some(Preconditions { uid: Some(target.uid.clone()), resource_version: None }),
            ..DeleteParams::default()
        };
        match api.delete(name, &params).await {
            Ok(_) => Ok(true),
            Err(e) if gone(&e) => Ok(false),
            Err(e) => Err(err("delete")(e)),
        }
    }
}

/// NotFound, or a uid precondition that failed: the pod meant is gone.
fn gone(error: &kube::Error) -> bool {
    matches!(code(error), Some(404 | 409))
}
