//! Marking a pod not ready (upstream `MarkPodsNotReady`): the monitor pass
//! does it for every pod of a node that stopped being ready, the pod worker
//! for a pod newly bound to such a node.

use jiff::Timestamp;
use k8s_openapi::api::core::v1::Pod;
use kcm_controllers::node::{self as core, taints};
use kube::api::{Api, PostParams};
use kube::{Resource, ResourceExt};

use super::shared::Inner;
use crate::drivers::api_errors::code;
use kcm_runtime::events::EventType;

impl Inner {
    /// Upstream `MarkPodsNotReady` for one pod: Ready False through the
    /// status subresource (NotFound ignored; one retry on a fresh read
    /// after a conflict), then a Warning `NodeNotReady` on the pod.
    pub(super) async fn mark_pod_not_ready(&self, pod: &Pod, node_name: &str) -> Result<(), kube::Error> {
        let (namespace, name) = (pod.namespace().unwrap_or_default(), pod.name_any());
        let api: Api<Pod> = Api::namespaced(self.client.clone(), &namespace);
        let mut current = pod.clone();
        for attempt in 1..=2 {
            let Some(status) = taints::pod_not_ready_status(&current, node_name, Timestamp::now()) else {
                return Ok(());
            };
            current.status = Some(status);
            match api.replace_status(&name, &PostParams::default(), &current).await {
                Ok(_) => {
                    tracing::info!(pod = %format!("{namespace}/{name}"), node = node_name, "updated ready status of pod to false");
                    self.recorder.event(
                        &pod.object_ref(&()),
                        EventType::Warning,
                        core::EVENT_NODE_NOT_READY,
                        core::POD_NODE_NOT_READY_MESSAGE,
                    );
                    return Ok(());
                }
                Err(e) if code(&e) == Some(404) => return Ok(()),
                Err(e) if code(&e) == Some(409) && attempt == 1 => match api.get_opt(&name).await? {
                    Some(fresh) => current = fresh,
                    None => return Ok(()),
                },
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}
