//! The attach/detach controller's driver (upstream
//! `pkg/controller/volume/attachdetach/`; the decisions are
//! `kcm_controllers::attachdetach`).
//!
//! Upstream keeps a desired and an actual state of the world in memory and
//! runs a reconciler over both every 100 ms. kcm-rs reconciles one node at
//! a time from its caches, queued by whatever can change the node's
//! volumes:
//! - a pod bound to it (added, changed, deleted);
//! - the node itself (its annotation, readiness, taints, `volumesInUse`);
//! - a claim or volume one of its pods mounts, or a `CSIDriver`;
//! - one of its `VolumeAttachment`s, and any attachment of a volume its
//!   pods want (a single-node volume waits for its detach elsewhere);
//! - every `--attach-detach-reconcile-sync-period`, every node (none with
//!   `--disable-attach-detach-reconcile-sync`).
//!
//! It owns the `attachdetach` workqueue (upstream's default controller
//! rate limiter) with one worker, so that two nodes never attach one
//! single-node volume at once; the sync is in [`sync`], the metrics in
//! [`metrics`]. Its client is `attachdetach-controller`, its events'
//! source `attachdetach-controller`.

mod metrics;
mod sync;

use std::sync::Arc;

use futures::future::BoxFuture;
use k8s_openapi::api::core::v1::{PersistentVolume, PersistentVolumeClaim};
use k8s_openapi::api::storage::v1::{CSIDriver, VolumeAttachment};
use kcm_controllers::common::ephemeral::{POD_PVC_INDEX, pod_pvc_keys};
use kcm_objects::{Node, Pod};
use kcm_runtime::controller::{Controller, Retries, RunContext};
use kcm_runtime::informer::{self, EventHandler, HandlerRegistration, HasSynced, SharedInformer, Store};
use kcm_runtime::workqueue::{WorkQueue, default_controller_rate_limiter};

use super::nodes::register_pod_node_name_index;
use super::parts::{Identity, Parts};
use crate::config::settings::attachdetach::AttachDetachSettings;
pub use metrics::AttachDetachMetrics;
use sync::Syncer;

/// Upstream's names: the controller, its client's user agent, its events'
/// source.
pub const IDENTITY: Identity = Identity {
    name: "persistentvolume-attach-detach-controller",
    client: "attachdetach-controller",
    events: "attachdetach-controller",
};

/// The workqueue's name (the `name` label of the `workqueue_*` metrics).
pub const QUEUE_NAME: &str = "attachdetach";

/// Workers: one, as upstream's single reconciler loop.
pub const WORKERS: usize = 1;

/// The attachment index by `spec.nodeName`.
const ATTACHMENT_NODE_INDEX: &str = "kcm-rs/volumeattachment-node";

/// The attachment index by `spec.source.persistentVolumeName`.
const ATTACHMENT_VOLUME_INDEX: &str = "kcm-rs/volumeattachment-pv";

/// The attach/detach controller, ready to run once its caches sync.
pub struct AttachDetachController {
    /// Names of nodes to reconcile.
    queue: WorkQueue<String>,
    /// The informers it reads, for their sync state.
    informers: Informers,
    /// Its handlers' registrations.
    registrations: Vec<HandlerRegistration>,
    /// What the worker runs.
    syncer: Arc<Syncer>,
}

/// The shared informers the controller reads.
struct Informers {
    pods: SharedInformer<Pod>,
    nodes: SharedInformer<Node>,
    claims: SharedInformer<PersistentVolumeClaim>,
    volumes: SharedInformer<PersistentVolume>,
    drivers: SharedInformer<CSIDriver>,
    attachments: SharedInformer<VolumeAttachment>,
}

/// The stores the handlers and the sync read.
#[derive(Clone)]
struct Stores {
    pods: Store<Pod>,
    nodes: Store<Node>,
    claims: Store<PersistentVolumeClaim>,
    volumes: Store<PersistentVolume>,
    drivers: Store<CSIDriver>,
    attachments: Store<VolumeAttachment>,
}

// === impl AttachDetachController ===

impl AttachDetachController {
    /// Builds the controller on the shared informers, registering its
    /// indexes and handlers (before the informers start).
    ///
    /// # Errors
    /// An index cannot be added (the informers have started).
    ///
    /// # Panics
    /// Outside a tokio runtime (the workqueue spawns its timer task).
    pub fn new(
        parts: Parts<'_>,
        settings: AttachDetachSettings,
        metrics: Option<AttachDetachMetrics>,
    ) -> Result<Self, informer::Error> {
        let factory = parts.factory;
        let queue = WorkQueue::new(QUEUE_NAME, default_controller_rate_limiter(), parts.queue_metrics);
        let informers = Informers {
            pods: factory.informer(),
            nodes: factory.informer(),
            claims: factory.informer(),
            volumes: factory.informer(),
            drivers: factory.informer(),
            attachments: factory.informer(),
        };
        register_pod_node_name_index(&informers.pods)?;
        match informers.pods.add_index(POD_PVC_INDEX, pod_pvc_keys) {
            Ok(()) | Err(informer::Error::IndexConflict(_)) => {}
            Err(e) => return Err(e),
        }
        informers.attachments.add_index(ATTACHMENT_NODE_INDEX, |va| vec![va.spec.node_name.clone()])?;
        informers.attachments.add_index(ATTACHMENT_VOLUME_INDEX, |va| {
            va.spec.source.persistent_volume_name.clone().into_iter().collect()
        })?;
        let stores = Stores {
            pods: informers.pods.store(),
            nodes: informers.nodes.store(),
            claims: informers.claims.store(),
            volumes: informers.volumes.store(),
            drivers: informers.drivers.store(),
            attachments: informers.attachments.store(),
        };
        let h = Handler { queue: queue.clone(), stores: stores.clone() };
        let registrations = vec![
            informers.pods.add_handler(h.clone(), None),
            informers.nodes.add_handler(h.clone(), settings.resync),
            informers.claims.add_handler(h.clone(), None),
            informers.volumes.add_handler(h.clone(), None),
            informers.drivers.add_handler(h.clone(), None),
            informers.attachments.add_handler(h, None),
        ];
        let syncer = Arc::new(Syncer::new(stores, parts.client, parts.recorder, settings, metrics.clone()));
        if let Some(metrics) = metrics {
            metrics.observe(syncer.clone());
        }
        Ok(Self { queue, informers, registrations, syncer })
    }
}

impl Controller for AttachDetachController {
    fn run(self: Box<Self>, cx: RunContext) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            tracing::info!("Starting attach detach controller");
            let i = &self.informers;
            let mut synced: Vec<&(dyn HasSynced + Sync)> =
                vec![&i.pods, &i.nodes, &i.claims, &i.volumes, &i.drivers, &i.attachments];
            synced.extend(self.registrations.iter().map(|r| r as &(dyn HasSynced + Sync)));
            cx.run_when_synced(&synced, self.queue.clone(), self.syncer.clone(), Retries::FOREVER).await;
            tracing::info!("Shutting down attach detach controller");
        })
    }
}

// === handlers ===

/// Queues the nodes an event can concern.
#[derive(Clone)]
struct Handler {
    queue: WorkQueue<String>,
    stores: Stores,
}

impl Handler {
    fn node(&self, name: &str) {
        if !name.is_empty() {
            self.queue.add(name.to_owned());
        }
    }

    /// The nodes of the pods that mount the claim `key` (`namespace/name`).
    fn claim_users(&self, key: &str) {
        for pod in self.stores.pods.by_index(POD_PVC_INDEX, key).unwrap_or_default() {
            self.node(pod.node_name().unwrap_or_default());
        }
    }

    /// The nodes of the pods that mount the volume's claim, and of its
    /// attachments.
    fn volume_users(&self, name: &str) {
        let claim = self.stores.volumes.get(name).and_then(|pv| pv.spec.as_ref()?.claim_ref.clone());
        if let Some(claim) = claim {
            let key = format!("{}/{}", claim.namespace.unwrap_or_default(), claim.name.unwrap_or_default());
            self.claim_users(&key);
        }
        for va in self.stores.attachments.by_index(ATTACHMENT_VOLUME_INDEX, name).unwrap_or_default() {
            self.node(&va.spec.node_name);
        }
    }
}

impl EventHandler<Pod> for Handler {
    fn on_add(&self, pod: &Arc<Pod>) {
        self.node(pod.node_name().unwrap_or_default());
    }

    fn on_update(&self, old: &Arc<Pod>, new: &Arc<Pod>) {
        if old.node_name() != new.node_name() {
            self.node(old.node_name().unwrap_or_default());
        }
        self.node(new.node_name().unwrap_or_default());
    }

    fn on_delete(&self, pod: &Arc<Pod>) {
        self.node(pod.node_name().unwrap_or_default());
    }
}

impl EventHandler<Node> for Handler {
    fn on_add(&self, node: &Arc<Node>) {
        self.node(&node.metadata.name);
    }

    fn on_update(&self, _old: &Arc<Node>, new: &Arc<Node>) {
        self.node(&new.metadata.name);
    }

    fn on_delete(&self, node: &Arc<Node>) {
        self.node(&node.metadata.name);
    }
}

impl EventHandler<PersistentVolumeClaim> for Handler {
    fn on_add(&self, claim: &Arc<PersistentVolumeClaim>) {
        self.claim_users(&informer::key_of(&**claim));
    }

    fn on_update(&self, _old: &Arc<PersistentVolumeClaim>, new: &Arc<PersistentVolumeClaim>) {
        self.claim_users(&informer::key_of(&**new));
    }

    fn on_delete(&self, _claim: &Arc<PersistentVolumeClaim>) {}
}

impl EventHandler<PersistentVolume> for Handler {
    fn on_add(&self, pv: &Arc<PersistentVolume>) {
        self.volume_users(pv.metadata.name.as_deref().unwrap_or_default());
    }

    fn on_update(&self, _old: &Arc<PersistentVolume>, new: &Arc<PersistentVolume>) {
        self.volume_users(new.metadata.name.as_deref().unwrap_or_default());
    }

    fn on_delete(&self, pv: &Arc<PersistentVolume>) {
        for va in self
            .stores
            .attachments
            .by_index(ATTACHMENT_VOLUME_INDEX, pv.metadata.name.as_deref().unwrap_or_default())
            .unwrap_or_default()
        {
            self.node(&va.spec.node_name);
        }
    }
}

impl EventHandler<CSIDriver> for Handler {
    fn on_add(&self, _driver: &Arc<CSIDriver>) {
        self.stores.nodes.keys().iter().for_each(|n| self.node(n));
    }

    fn on_update(&self, _old: &Arc<CSIDriver>, _new: &Arc<CSIDriver>) {
        self.stores.nodes.keys().iter().for_each(|n| self.node(n));
    }

    fn on_delete(&self, _driver: &Arc<CSIDriver>) {
        self.stores.nodes.keys().iter().for_each(|n| self.node(n));
    }
}

impl EventHandler<VolumeAttachment> for Handler {
    fn on_add(&self, va: &Arc<VolumeAttachment>) {
        self.attachment_changed(va);
    }

    fn on_update(&self, _old: &Arc<VolumeAttachment>, new: &Arc<VolumeAttachment>) {
        self.attachment_changed(new);
    }

    fn on_delete(&self, va: &Arc<VolumeAttachment>) {
        self.attachment_changed(va);
    }
}

impl Handler {
    /// Its node, and the nodes whose pods want its volume.
    fn attachment_changed(&self, va: &VolumeAttachment) {
        self.node(&va.spec.node_name);
        if let Some(pv) = &va.spec.source.persistent_volume_name {
            self.volume_users(pv);
        }
    }
}
