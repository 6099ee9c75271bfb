//! The process-wide informer factory (client-go's `sharedInformerFactory`,
//! `informers/factory.go`).
//!
//! One informer per resource type for the whole process: every controller
//! asking for `Pod` gets the same informer, so the API server sees one
//! list+watch on pods whatever the number of controllers. Informers are
//! created on first request and run from the next [`start`]; workers wait
//! on [`wait_for_cache_sync`] before they read the caches; [`shutdown`]
//! (or dropping the last clone of the factory) stops everything.
//!
//! [`start`]: SharedInformerFactory::start
//! [`wait_for_cache_sync`]: SharedInformerFactory::wait_for_cache_sync
//! [`shutdown`]: SharedInformerFactory::shutdown

use std::any::TypeId;
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use kcm_gotime::Jitter;
use kube::Client;
use kube::runtime::watcher;
use tokio::sync::watch;
use tracing::{info, warn};

use super::handler::HandlerRegistration;
use super::metadata::{MetadataHandler, ResourceId};
use kcm_objects::Cached;

use super::shared_informer::{ErasedInformer, SharedInformer};
use super::synced::{HasSynced, SyncSignal};

/// How the factory's informers list and watch.
#[derive(Debug, Clone, PartialEq)]
pub struct FactoryConfig {
    /// Objects per list page (client-go's pager default, 500). `None`
    /// lists everything in one response.
    pub page_size: Option<u32>,
    /// Lower bound of the random default resync period
    /// (`--min-resync-period`, 12 h): see
    /// [`SharedInformerFactory::default_resync`].
    pub min_resync_period: Duration,
    /// Range of the server-side watch timeout, picked at random per
    /// informer so that watches do not all restart at once (client-go:
    /// 5 to 10 minutes).
    pub watch_timeout: std::ops::Range<Duration>,
}

impl Default for FactoryConfig {
    fn default() -> Self {
        FactoryConfig {
            page_size: Some(500),
            min_resync_period: Duration::from_secs(12 * 60 * 60),
            watch_timeout: Duration::from_secs(300)..Duration::from_secs(600),
        }
    }
}

/// Hands out one [`SharedInformer`] per resource type for the whole
/// process. Cheap to clone: clones share the informers.
#[derive(Clone)]
pub struct SharedInformerFactory {
    inner: Arc<Inner>,
}

/// The factory's shared state.
struct Inner {
    /// Client every informer lists and watches with.
    client: Client,
    /// Listing and watching parameters.
    config: FactoryConfig,
    /// Drawn once: kcm's `ResyncPeriod(s)()`.
    default_resync: Duration,
    /// Informers by resource type, created on first request.
    informers: Mutex<HashMap<TypeId, Box<dyn ErasedInformer>>>,
    /// Set to true to stop every informer and handler task.
    shutdown: watch::Sender<bool>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        // Nobody can ask for an informer any more: stop the running ones.
        self.shutdown.send_replace(true);
    }
}

impl fmt::Debug for SharedInformerFactory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedInformerFactory")
            .field("config", &self.inner.config)
            .field("default_resync", &self.inner.default_resync)
            .finish_non_exhaustive()
    }
}

impl SharedInformerFactory {
    /// A factory with the default configuration.
    pub fn new(client: Client) -> Self {
        Self::with_config(client, FactoryConfig::default())
    }

    /// A factory with `config`.
    pub fn with_config(client: Client, config: FactoryConfig) -> Self {
        let default_resync = Jitter::from_entropy().jitter(config.min_resync_period, 1.0);
        SharedInformerFactory {
            inner: Arc::new(Inner {
                client,
                config,
                default_resync,
                informers: Mutex::new(HashMap::new()),
                shutdown: watch::channel(false).0,
            }),
        }
    }

    /// The informer of `K`, created (not started) on first request.
    /// Indexes and handlers can be added to it before [`start`](Self::start).
    pub fn informer<K: Cached>(&self) -> SharedInformer<K> {
        let mut informers = self.inner.informers.lock().unwrap_or_else(PoisonError::into_inner);
        let resource = ResourceId::of::<K>();
        if !informers.contains_key(&TypeId::of::<K>()) && informers.values().any(|i| i.resource() == resource) {
            warn!(
                resource = %resource.plural,
                cached_as = std::any::type_name::<K>(),
                "a second informer watches {} (cached as another type): the API server serves two watches", resource.plural,
            );
        }
        let informer = informers.entry(TypeId::of::<K>()).or_insert_with(|| {
            Box::new(SharedInformer::<K>::new(
                self.inner.client.clone(),
                self.watcher_config(),
                self.inner.shutdown.subscribe(),
            ))
        });
        informer
            .as_any()
            .downcast_ref::<SharedInformer<K>>()
            .cloned()
            .unwrap_or_else(|| unreachable!("the informer under TypeId::of::<K>() is a SharedInformer<K>"))
    }

    /// Registers `handler` on the informer of `resource` if some
    /// controller asked for one (so one watch serves both), returning its
    /// registration; `None` when no informer of the factory watches
    /// `resource` (none is created).
    pub fn add_metadata_handler(
        &self,
        resource: &ResourceId,
        handler: Arc<dyn MetadataHandler>,
    ) -> Option<HandlerRegistration> {
        let informers = self.inner.informers.lock().unwrap_or_else(PoisonError::into_inner);
        let informer = informers.values().find(|i| i.resource() == *resource)?;
        Some(informer.add_metadata_handler(handler))
    }

    /// The watcher configuration of a new informer: bookmarks on, the
    /// configured page size, a random watch timeout.
    fn watcher_config(&self) -> watcher::Config {
        let range = &self.inner.config.watch_timeout;
        let spread = range.end.saturating_sub(range.start);
        let timeout = range.start + spread.mul_f64(Jitter::from_entropy().unit());
        let config = watcher::Config { page_size: self.inner.config.page_size, ..watcher::Config::default() };
        config.timeout(u32::try_from(timeout.as_secs().max(1)).unwrap_or(u32::MAX))
    }

    /// Starts every informer not yet started (informers requested later
    /// are started by the next call). Needs a tokio runtime. Does nothing
    /// after [`shutdown`](Self::shutdown).
    pub fn start(&self) {
        let informers = self.inner.informers.lock().unwrap_or_else(PoisonError::into_inner);
        for informer in informers.values() {
            informer.start();
        }
    }

    /// Stops every informer and every handler's delivery.
    pub fn shutdown(&self) {
        self.inner.shutdown.send_replace(true);
    }

    /// Whether [`shutdown`](Self::shutdown) has been called.
    pub fn is_shut_down(&self) -> bool {
        *self.inner.shutdown.borrow()
    }

    /// The default resync period, drawn once per factory as kcm does:
    /// `min_resync_period × (1 + rand[0,1))`, so 12 to 24 hours by default.
    /// Pass it to [`SharedInformer::add_handler`] for upstream's
    /// `AddEventHandler` behaviour.
    pub fn default_resync(&self) -> Duration {
        self.inner.default_resync
    }

    /// Waits until every informer requested so far has synced (what the
    /// daemon's `/readyz` reports once the controllers are registered).
    /// Returns false if the factory shuts down first.
    pub async fn wait_for_all_caches_sync(&self, waiter: &str) -> bool {
        let informers: Vec<SyncSignal> = {
            let informers = self.inner.informers.lock().unwrap_or_else(PoisonError::into_inner);
            informers.values().map(|informer| informer.synced().sync_signal()).collect()
        };
        self.wait_for_signals(waiter, informers).await
    }

    /// Waits until everything in `synced` has synced (client-go's
    /// `WaitForNamedCacheSync`); `controller` names the waiter in the logs.
    /// Returns false if the factory shuts down first.
    pub async fn wait_for_cache_sync(&self, controller: &str, synced: &[&(dyn HasSynced + Sync)]) -> bool {
        self.wait_for_signals(controller, synced.iter().map(|s| s.sync_signal()).collect()).await
    }

    /// Waits until every signal reports synced, logging as client-go.
    async fn wait_for_signals(&self, controller: &str, signals: Vec<SyncSignal>) -> bool {
        if signals.iter().all(|s| s.is_synced()) {
            info!("Caches are synced for {controller}");
            return true;
        }
        info!("Waiting for caches to sync for {controller}");
        let mut shutdown = self.inner.shutdown.subscribe();
        let all = futures::future::join_all(signals.into_iter().map(|s| s.synced()));
        let synced = tokio::select! {
            _ = shutdown.wait_for(|&stop| stop) => false,
            results = all => results.into_iter().all(|ok| ok),
        };
        if synced {
            info!("Caches are synced for {controller}");
        } else {
            info!("Unable to sync caches for {controller}");
        }
        synced
    }
}
