//! Marking a pod not ready (upstream `MarkPodsNotReady`): the monitor pass
//! does it for every pod of a node that stopped being ready, the pod worker
//! for a pod newly bound to such a node.

use jiff::Timestamp;
use k8s_openapi::api::core::v1::Pod;
use kcm_controllers::node::{self as core, taints};
use kube::Resource;
use kube::api::{Api, PostParams};

use super::shared::Inner;
use crate::drivers::api_errors::code;
use kcm_runtime::events::EventType;

impl Inner {
    /// Upstream `MarkPodsNotReady` for one pod: Ready False through the
    /// status subresource, then a Warning `NodeNotReady` on the pod.
    ///
    /// The cache holds slim pods, so the status written starts from a live
    /// read of the pod (upstream starts from its cached full pod), and only
    /// when the cached pod shows there is something to write. NotFound is
    /// ignored; a conflict gets one retry on a fresh read.
    pub(super) async fn mark_pod_not_ready(
        &self,
        cached: &kcm_objects::Pod,
        node_name: &str,
    ) -> Result<(), kube::Error> {
        if !taints::needs_not_ready_mark(cached, node_name) {
            return Ok(());
        }
        let (namespace, name) = (cached.metadata.namespace.as_str(), &*cached.metadata.name);
        let api: Api<Pod> = Api::namespaced(self.client.clone(), namespace);
        let Some(mut current) = api.get_opt(name).await? else { return Ok(()) };
        for attempt in 1..=2 {
            let Some(status) = taints::pod_not_ready_status(&current, node_name, Timestamp::now()) else {
                return Ok(());
            };
            current.status = Some(status);
            match api.replace_status(name, &PostParams::default(), &current).await {
                Ok(_) => {
                    tracing::info!(pod = %format!("{namespace}/{name}"), node = node_name, "updated ready status of pod to false");
                    self.recorder.event(
                        &current.object_ref(&()),
                        EventType::Warning,
                        core::EVENT_NODE_NOT_READY,
                        core::POD_NODE_NOT_READY_MESSAGE,
                    );
                    return Ok(());
                }
                Err(e) if code(&e) == Some(404) => return Ok(()),
                Err(e) if code(&e) == Some(409) && attempt == 1 => match api.get_opt(name).await? {
                    Some(fresh) => current = fresh,
                    None => return Ok(()),
                },
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}
