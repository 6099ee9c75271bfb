//! One node's reconcile: its view assembled from the caches, the core's
//! plan, and the plan's writes (upstream's reconciler, node status updater
//! and CSI attacher, for one node).
//!
//! The writes go in the plan's order and stop at the first failure, which
//! retries the node with backoff: the node's `status.volumesAttached`
//! (a strategic-merge patch of the `status` subresource, as upstream's
//! `PatchNodeStatus`), then the detaches (`VolumeAttachment` deletes; gone
//! already is done), then the attaches (creates; there already is done).
//! The events are recorded whatever the writes did.
//!
//! The report just written is read back, instead of the cached node, until
//! the node cache moves past the resourceVersion it was written on: a sync
//! that runs before the node's watch event arrives neither reports the
//! volume again nor records its attach twice.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::core::v1::{Node as FullNode, ObjectReference};
use k8s_openapi::api::storage::v1::{VolumeAttachment, VolumeAttachmentSource, VolumeAttachmentSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kcm_controllers::attachdetach::count::{node_totals, volumes_in_use};
use kcm_controllers::attachdetach::plan::{Memory, Plan, plan};
use kcm_controllers::attachdetach::view::{Attachment, Elsewhere, NodeFacts, NodeView, PodRef, Settings};
use kcm_controllers::attachdetach::volume::{
    Attacher, CSI_PLUGIN, Resolved, attachment_name, bound_volume, csi_parts, resolve,
};
use kcm_controllers::attachdetach::wanted::{Resolutions, counts};
use kcm_controllers::attachdetach::{MANAGED_ANNOTATION, OUT_OF_SERVICE_TAINT};
use kcm_controllers::common::ephemeral::{POD_PVC_INDEX, volume_is_for_pod};
use kcm_controllers::node::POD_NODE_NAME_INDEX;
use kcm_objects::Node;
use kcm_runtime::events::{EventRecorder, EventType};
use kcm_runtime::runner::{Next, Reconcile, SyncError};
use kube::Client;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use serde_json::json;

use super::super::api_errors::code;
use super::metrics::{AttachDetachMetrics, VolumeCounts};
use super::{ATTACHMENT_NODE_INDEX, ATTACHMENT_VOLUME_INDEX, Stores};
use crate::config::settings::attachdetach::AttachDetachSettings;

/// Upstream's fixed longest wait for an unmount
/// (`ReconcilerMaxWaitForUnmountDuration`).
const MAX_WAIT_UNMOUNT: SignedDuration = SignedDuration::from_mins(6);

/// The per-node reconcile.
pub(super) struct Syncer {
    stores: Stores,
    client: Client,
    recorder: EventRecorder,
    settings: Settings,
    metrics: Option<AttachDetachMetrics>,
    /// What each node's syncs remember.
    nodes: Mutex<HashMap<String, NodeState>>,
}

/// What one node's syncs remember.
#[derive(Default)]
struct NodeState {
    memory: Memory,
    resolutions: Resolutions,
    /// The report last written, and the node's resourceVersion it was
    /// written on.
    written: Option<(String, Vec<(String, String)>)>,
    /// The volumes the last sync saw wanted and attached, by plugin.
    totals: (BTreeMap<String, i64>, BTreeMap<String, i64>),
}

impl Syncer {
    pub(super) fn new(
        stores: Stores,
        client: Client,
        recorder: EventRecorder,
        settings: AttachDetachSettings,
        metrics: Option<AttachDetachMetrics>,
    ) -> Self {
        let settings =
            Settings { max_wait_unmount: MAX_WAIT_UNMOUNT, force_detach_on_timeout: settings.force_detach_on_timeout };
        Self { stores, client, recorder, settings, metrics, nodes: Mutex::default() }
    }

    /// The node's view, from the caches and what its syncs remember.
    fn view(&self, name: &str, state: &mut NodeState) -> NodeView {
        let node = self.stores.nodes.get(name);
        let facts = node.as_deref().map(|node| self.facts(node, state));
        let managed = node.as_ref().is_some_and(|n| n.metadata.annotations.get(MANAGED_ANNOTATION).is_some());
        let pods =
            if managed { self.stores.pods.by_index(POD_NODE_NAME_INDEX, name).unwrap_or_default() } else { vec![] };
        let pods: Vec<&kcm_objects::Pod> = pods.iter().map(|p| &**p).collect();
        let gathered = state.resolutions.wanted(&pods, |pod, claim| {
            let key = format!("{}/{}", pod.metadata.namespace, claim.claim);
            let pvc = self.stores.claims.get(&key);
            if let (true, Some(pvc)) = (claim.ephemeral, pvc.as_deref())
                && let Err(why) = volume_is_for_pod(pod, pvc)
            {
                return Resolved::Pending(why);
            }
            resolve(&key, pvc.as_deref(), |pv| self.stores.volumes.get(pv), |driver| self.attach_required(driver))
        });
        for (pod, why) in &gathered.unsupported {
            tracing::warn!(pod = %format!("{}/{}", pod.namespace, pod.name), node = name, "Cannot attach volume: {why}");
        }
        let reported: &[(String, String)] = facts.as_ref().map_or(&[], |f| &f.reported);
        let attachments = (self.stores.attachments.by_index(ATTACHMENT_NODE_INDEX, name).unwrap_or_default().iter())
            .filter_map(|va| self.attachment(va, name, reported))
            .collect();
        let mut elsewhere = std::collections::BTreeMap::new();
        for wanted in gathered.wanted.iter().filter(|w| !w.volume.multi_attach) {
            if let Attacher::Csi { .. } = wanted.volume.attacher {
                elsewhere.insert(wanted.volume.unique.clone(), self.elsewhere(&wanted.volume.pv_name, name));
            }
        }
        NodeView {
            node: name.to_owned(),
            facts,
            wanted: gathered.wanted,
            attachments,
            elsewhere,
            settings: self.settings,
            now: Timestamp::now(),
        }
    }

    fn facts(&self, node: &Node, state: &mut NodeState) -> NodeFacts {
        let cached: Vec<(String, String)> =
            (node.status.volumes_attached.iter()).map(|v| (v.name.clone(), v.device_path.clone())).collect();
        let rv = &*node.metadata.resource_version;
        let reported = match state.written.take() {
            Some((written_on, report)) if written_on == rv => {
                state.written = Some((written_on, report.clone()));
                report
            }
            _ => cached,
        };
        NodeFacts {
            ready: node.condition("Ready").is_some_and(|c| c.status == "True"),
            out_of_service: node.spec.taints.iter().any(|t| t.key == OUT_OF_SERVICE_TAINT),
            in_use: node.status.volumes_in_use.iter().map(|v| v.to_string()).collect(),
            reported,
        }
    }

    /// Whether the CSI driver needs attaching (upstream `skipAttach`: yes
    /// unless its `CSIDriver` says `attachRequired: false`).
    fn attach_required(&self, driver: &str) -> bool {
        self.stores.drivers.get(driver).and_then(|d| d.spec.attach_required) != Some(false)
    }

    /// The attachment with its volume's unique name: from its volume's
    /// CSI source, or, the volume gone, from the reported volume whose
    /// attachment name it carries. Neither known: not the controller's to
    /// judge (upstream skips it too).
    fn attachment(&self, va: &VolumeAttachment, node: &str, reported: &[(String, String)]) -> Option<Attachment> {
        let name = va.metadata.name.clone().unwrap_or_default();
        let from_volume = (va.spec.source.persistent_volume_name.as_deref())
            .and_then(|pv| self.stores.volumes.get(pv))
            .and_then(|pv| pv.spec.as_ref()?.csi.clone())
            .map(|csi| format!("{CSI_PLUGIN}/{}^{}", va.spec.attacher, csi.volume_handle));
        let unique = from_volume.or_else(|| {
            reported
                .iter()
                .map(|(n, _)| n)
                .find(|unique| {
                    csi_parts(unique).is_some_and(|(driver, handle)| attachment_name(handle, driver, node) == name)
                })
                .cloned()
        });
        let Some(unique) = unique else {
            tracing::debug!(node, attachment = name, "Skipping the attachment: its volume is unknown");
            return None;
        };
        let status = va.status.as_ref();
        Some(Attachment {
            name,
            unique,
            attached: status.is_some_and(|s| s.attached),
            error: status.and_then(|s| s.attach_error.as_ref()).and_then(|e| e.message.clone()),
            deleting: va.metadata.deletion_timestamp.is_some(),
        })
    }

    /// The other nodes the volume is attached to, and their pods that use
    /// it.
    fn elsewhere(&self, pv_name: &str, node: &str) -> Elsewhere {
        let mut nodes: Vec<String> =
            (self.stores.attachments.by_index(ATTACHMENT_VOLUME_INDEX, pv_name).unwrap_or_default())
                .iter()
                .filter(|va| va.spec.node_name != node && va.status.as_ref().is_some_and(|s| s.attached))
                .map(|va| va.spec.node_name.clone())
                .collect();
        nodes.sort();
        nodes.dedup();
        let claim = self.stores.volumes.get(pv_name).and_then(|pv| pv.spec.as_ref()?.claim_ref.clone());
        let pods = claim
            .map(|c| format!("{}/{}", c.namespace.unwrap_or_default(), c.name.unwrap_or_default()))
            .map(|key| self.stores.pods.by_index(POD_PVC_INDEX, &key).unwrap_or_default())
            .unwrap_or_default()
            .iter()
            .filter(|p| counts(p) && p.node_name().is_some_and(|n| nodes.iter().any(|m| m == n)))
            .map(|p| PodRef {
                namespace: p.metadata.namespace.to_string(),
                name: p.metadata.name.to_string(),
                uid: p.metadata.uid.to_string(),
            })
            .collect();
        Elsewhere { nodes, pods }
    }

    /// The plan's writes, in order, stopping at the first failure; the
    /// report written is remembered in `state`.
    async fn write(&self, node: &str, plan: &Plan, state: &mut NodeState) -> Result<(), kube::Error> {
        if let (Some(report), Some(cached)) = (&plan.report, self.stores.nodes.get(node)) {
            let entries: Vec<_> = report.iter().map(|(name, path)| json!({"name": name, "devicePath": path})).collect();
            let body = json!({"status": {"volumesAttached": entries}});
            let nodes: Api<FullNode> = Api::all(self.client.clone());
            match nodes.patch_status(node, &PatchParams::default(), &Patch::Strategic(body)).await {
                Ok(_) => state.written = Some((cached.metadata.resource_version.to_string(), report.clone())),
                Err(e) if code(&e) == Some(404) => {
                    tracing::debug!(node, "Could not update node status, node does not exist - skipping")
                }
                Err(e) => return Err(e),
            }
        }
        let attachments: Api<VolumeAttachment> = Api::all(self.client.clone());
        for name in &plan.delete {
            match attachments.delete(name, &DeleteParams::default()).await {
                Ok(_) => tracing::info!(node, attachment = name, "Detach started"),
                Err(e) if code(&e) == Some(404) => {}
                Err(e) => return Err(e),
            }
        }
        for new in &plan.create {
            let va = VolumeAttachment {
                metadata: ObjectMeta { name: Some(new.name.clone()), ..ObjectMeta::default() },
                spec: VolumeAttachmentSpec {
                    attacher: new.driver.clone(),
                    node_name: node.to_owned(),
                    source: VolumeAttachmentSource {
                        persistent_volume_name: Some(new.pv_name.clone()),
                        ..VolumeAttachmentSource::default()
                    },
                },
                status: None,
            };
            match attachments.create(&PostParams::default(), &va).await {
                Ok(_) => tracing::info!(node, attachment = new.name, volume = new.pv_name, "Attach started"),
                Err(e) if code(&e) == Some(409) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    fn record(&self, plan: &Plan) {
        for event in &plan.events {
            let regarding = ObjectReference {
                api_version: Some("v1".into()),
                kind: Some("Pod".into()),
                namespace: Some(event.pod.namespace.clone()),
                name: Some(event.pod.name.clone()),
                uid: (!event.pod.uid.is_empty()).then(|| event.pod.uid.clone()),
                ..ObjectReference::default()
            };
            let kind = if event.warning { EventType::Warning } else { EventType::Normal };
            self.recorder.event(&regarding, kind, event.reason, event.message.clone());
        }
        if let Some(metrics) = &self.metrics {
            plan.forced.iter().for_each(|reason| metrics.forced(reason.label()));
        }
    }
}

/// The gauges' counts.
impl VolumeCounts for Syncer {
    /// Every pod with a node, its bound claims' volumes by plugin.
    fn volumes_in_use(&self) -> BTreeMap<(String, String), i64> {
        let pods = self.stores.pods.list();
        volumes_in_use(pods.iter().map(|p| &**p), |pod, claim| {
            let key = format!("{}/{}", pod.metadata.namespace, claim.claim);
            let pvc = self.stores.claims.get(&key);
            if claim.ephemeral && pvc.as_deref().is_some_and(|pvc| volume_is_for_pod(pod, pvc).is_err()) {
                return None;
            }
            bound_volume(&key, pvc.as_deref(), |pv| self.stores.volumes.get(pv)).ok()
        })
    }

    /// Summed over what each node's last sync saw.
    fn totals(&self) -> BTreeMap<(String, &'static str), i64> {
        let mut totals = BTreeMap::new();
        for state in self.nodes.lock().expect("node states").values() {
            let (desired, actual) = &state.totals;
            let states = [(desired, "desired_state_of_world"), (actual, "actual_state_of_world")];
            for (counts, name) in states {
                for (plugin, count) in counts {
                    *totals.entry((plugin.clone(), name)).or_insert(0) += count;
                }
            }
        }
        totals
    }
}

impl Reconcile for Syncer {
    async fn sync(&self, node: &str) -> Result<Next, SyncError> {
        let mut state = self.nodes.lock().expect("node states").remove(node).unwrap_or_default();
        let view = self.view(node, &mut state);
        let plan = plan(&view, &mut state.memory);
        state.totals = node_totals(&view);
        let written = self.write(node, &plan, &mut state).await;
        self.record(&plan);
        let forget = view.facts.is_none() && view.attachments.is_empty();
        if !forget {
            self.nodes.lock().expect("node states").insert(node.to_owned(), state);
        }
        written?;
        Ok(match plan.recheck_after {
            Some(after) => Next::After(Duration::try_from(after).unwrap_or(Duration::ZERO)),
            None => Next::Done,
        })
    }
}
