//! Shared informers: one list+watch per resource type for the whole
//! process, a cache every controller reads, and change notifications to
//! every controller that registered, as client-go's shared informers are
//! used by kube-controller-manager.
//!
//! # Layout
//! - `factory`: [`SharedInformerFactory`], one informer per type, start,
//!   shutdown, [`wait_for_cache_sync`](SharedInformerFactory::wait_for_cache_sync);
//! - `shared_informer`: [`SharedInformer`], the watch loop over
//!   `kube::runtime::watcher`, handler registration, periodic resync;
//! - `reflector`: the state machine turning watcher events into cache
//!   changes and notifications (relists deliver exactly the differences);
//! - `store`: the cache ([`Store`], read-only, with the namespace index
//!   and custom indexes);
//! - `handler`: [`EventHandler`] and per-handler delivery;
//! - `enqueue`: [`Enqueue`], the handler that only queues the object's key;
//! - `controller_ref`: [`Store::resolve_controller_ref`], a dependent's
//!   controller found in a cache (upstream `resolveControllerRef`);
//! - `synced`: [`HasSynced`] signals;
//! - `metadata`: [`MetadataHandler`], metadata views of the typed
//!   informers for consumers reading any type's metadata.
//!
//! # Example
//! ```no_run
//! # async fn demo(client: kube::Client) {
//! use std::sync::Arc;
//! use k8s_openapi::api::core::v1::Pod;
//! use kcm_runtime::informer::{EventHandler, SharedInformerFactory};
//!
//! struct Enqueue;
//! impl EventHandler<Pod> for Enqueue {
//!     fn on_add(&self, pod: &Arc<Pod>) { /* queue.add(key) */ }
//! }
//!
//! let factory = SharedInformerFactory::new(client);
//! let pods = factory.informer::<Pod>();
//! pods.add_index("nodeName", |p: &Pod| p.spec.as_ref().and_then(|s| s.node_name.clone()).into_iter().collect())
//!     .expect("added before start");
//! let registration = pods.add_handler(Enqueue, None);
//! factory.start();
//! if factory.wait_for_cache_sync("example", &[&pods, &registration]).await {
//!     let on_node_1 = pods.store().by_index("nodeName", "node-1");
//! #   let _ = on_node_1;
//! }
//! # }
//! ```
//!
//! # Differences from client-go
//! - Deletions found by a relist are delivered as the last cached object,
//!   not wrapped in a `DeletedFinalStateUnknown` tombstone.
//! - A watch event repeating the cached resourceVersion, and a deletion of
//!   an object never cached, are not delivered.
//! - Each handler's resync runs on its own timer (client-go checks all
//!   handlers every `resyncCheckPeriod`, the shortest period asked before
//!   start); a relist's unchanged objects are not re-delivered as resyncs.

mod controller_ref;
mod enqueue;
mod factory;
mod handler;
mod metadata;
mod reflector;
mod shared_informer;
mod store;
mod synced;

pub use controller_ref::ControllerRef;
pub use enqueue::Enqueue;
pub use factory::{FactoryConfig, SharedInformerFactory};
pub use handler::{EventHandler, HandlerRegistration, MIN_RESYNC_PERIOD};
pub use kcm_objects::Cached;
pub use metadata::{MetadataHandler, ResourceId};
pub use shared_informer::SharedInformer;
pub use store::{Error, IndexFn, NAMESPACE_INDEX, Store, key_of, object_key};
pub use synced::{HasSynced, SyncSignal};
