//! What the two controllers keeping an object in every namespace share
//! (the ServiceAccounts controller and the root CA publisher): the handler
//! on the shared Namespace informer that queues a namespace by name, on
//! every add and, as each controller's upstream does, on the updates its
//! filter lets through.

use std::sync::Arc;

use k8s_openapi::api::core::v1::Namespace;
use kcm_runtime::informer::EventHandler;
use kcm_runtime::workqueue::WorkQueue;
use kube::ResourceExt;

/// Queues namespaces by name: every add, the updates `on_update` accepts.
pub(super) struct NamespaceHandler {
    /// The controller's queue of namespace names.
    pub(super) queue: WorkQueue<String>,
    /// Whether an updated namespace is queued.
    pub(super) on_update: fn(&Namespace) -> bool,
}

impl EventHandler<Namespace> for NamespaceHandler {
    fn on_add(&self, ns: &Arc<Namespace>) {
        self.queue.add(ns.name_any());
    }

    fn on_update(&self, _old: &Arc<Namespace>, new: &Arc<Namespace>) {
        if (self.on_update)(new) {
            self.queue.add(new.name_any());
        }
    }

    fn on_delete(&self, _ns: &Arc<Namespace>) {}
}
