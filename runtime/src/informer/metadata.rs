//! Metadata views of the shared typed informers, for consumers that read
//! only `metadata` of any type (the garbage collector).
//!
//! Such a consumer watches most types itself, metadata only; but where a
//! controller already runs a typed informer for a type, a second
//! (metadata) watch of it would double the API server's load for nothing.
//! [`SharedInformerFactory::add_metadata_handler`](super::SharedInformerFactory::add_metadata_handler)
//! lets it subscribe to that informer instead, receiving each object's
//! [`ObjectMeta`] (the typed objects stay the informer's: nothing more is
//! kept).

use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kcm_objects::Cached;
use kube::Resource;

use super::handler::EventHandler;

/// The resource a typed informer watches: group (empty for core),
/// version, plural.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ResourceId {
    /// API group, empty for the core group.
    pub group: String,
    /// Version.
    pub version: String,
    /// Plural resource name.
    pub plural: String,
}

impl ResourceId {
    /// The resource of `K`.
    pub fn of<K: Cached>() -> Self {
        let (group, version, plural) = (K::Wire::group(&()), K::Wire::version(&()), K::Wire::plural(&()));
        ResourceId { group: group.into(), version: version.into(), plural: plural.into() }
    }
}

/// Receives the metadata of a typed informer's changes (see
/// [`EventHandler`] for the delivery guarantees, which are the same).
pub trait MetadataHandler: Send + Sync + 'static {
    /// An object appeared.
    fn on_add(&self, meta: &ObjectMeta);
    /// An object changed.
    fn on_update(&self, old: &ObjectMeta, new: &ObjectMeta);
    /// An object left (its last known state).
    fn on_delete(&self, meta: &ObjectMeta);
}

/// A typed handler forwarding metadata.
pub(crate) struct MetadataAdapter(pub(crate) Arc<dyn MetadataHandler>);

impl<K: Cached> EventHandler<K> for MetadataAdapter {
    fn on_add(&self, obj: &Arc<K>) {
        self.0.on_add(&obj.object_meta());
    }

    fn on_update(&self, old: &Arc<K>, new: &Arc<K>) {
        self.0.on_update(&old.object_meta(), &new.object_meta());
    }

    fn on_delete(&self, last_known: &Arc<K>) {
        self.0.on_delete(&last_known.object_meta());
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use k8s_openapi::api::core::v1::{ConfigMap, Node};
    use kube_sim::{Sim, SimConfig};

    use super::*;
    use crate::informer::SharedInformerFactory;

    /// Names of the objects added.
    #[derive(Default)]
    struct Names(Mutex<Vec<String>>);

    impl MetadataHandler for Names {
        fn on_add(&self, meta: &ObjectMeta) {
            self.0.lock().unwrap().push(meta.name.clone().unwrap_or_default());
        }
        fn on_update(&self, _old: &ObjectMeta, _new: &ObjectMeta) {}
        fn on_delete(&self, _meta: &ObjectMeta) {}
    }

    #[tokio::test]
    async fn a_metadata_handler_joins_an_informer_some_controller_asked_for_and_only_that() {
        let sim = Sim::start(SimConfig::default()).await.unwrap();
        let factory = SharedInformerFactory::new(sim.client().unwrap());
        let nodes = factory.informer::<Node>();
        let names = Arc::new(Names::default());
        assert!(factory.add_metadata_handler(&ResourceId::of::<ConfigMap>(), names.clone()).is_none());
        let registration = factory.add_metadata_handler(&ResourceId::of::<Node>(), names.clone()).unwrap();
        factory.start();
        assert!(factory.wait_for_cache_sync("test", &[&registration]).await);
        let mut seen = names.0.lock().unwrap().clone();
        seen.sort();
        let mut cached: Vec<String> = nodes.store().list().iter().filter_map(|n| n.metadata.name.clone()).collect();
        cached.sort();
        assert!(!cached.is_empty());
        assert_eq!(seen, cached);
        factory.shutdown();
    }
}
