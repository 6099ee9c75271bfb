//! One shared informer: one list+watch of a resource type, one cache, any
//! number of handlers (client-go's `sharedIndexInformer`).
//!
//! Its watch loop is the cache's only writer. For each event of
//! `kube::runtime::watcher` (turned into what the cache keeps by
//! [`Cached::from_wire`] on arrival), it
//! asks the reflector (`reflector.rs`) what changed and queues the
//! resulting notifications to every handler, all under one lock (the
//! listener list). Registering a handler and a handler's periodic resync
//! take the same lock, so each handler's queue is a consistent history:
//! a late handler's synthetic adds are exactly the cache at the moment it
//! joined, and a resync re-delivers the cache exactly as the handler has
//! been told it is.
//!
//! Lock order: listener list, then cache. Nothing awaits while holding
//! either.

use std::fmt;
use std::fmt::Debug;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, RwLock};
use std::time::Duration;

use futures::{StreamExt, TryStreamExt};
use kcm_objects::Cached;
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Client, Resource};
use tokio::sync::watch;
use tracing::{debug, warn};

use super::handler::{EventHandler, HandlerRegistration, Listener};
use super::reflector::State;
use super::store::{self, Cache, Error, IndexFn, Store};
use super::synced::{HasSynced, SyncSignal};

/// An informer shared by every controller of the process that reads `K`.
/// Cheap to clone: clones are the same informer.
///
/// Get one from [`SharedInformerFactory::informer`](super::SharedInformerFactory::informer).
#[doc(alias = "SharedIndexInformer")]
pub struct SharedInformer<K: Cached> {
    inner: Arc<Inner<K>>,
}

impl<K: Cached> Clone for SharedInformer<K> {
    fn clone(&self) -> Self {
        SharedInformer { inner: self.inner.clone() }
    }
}

impl<K: Cached> Debug for SharedInformer<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedInformer")
            .field("type", &std::any::type_name::<K>())
            .field("synced", &*self.inner.synced.borrow())
            .finish_non_exhaustive()
    }
}

/// The shared state of one informer.
struct Inner<K: Cached> {
    /// Lists and watches `K` in every namespace.
    api: Api<K::Wire>,
    /// How the watcher lists and watches.
    config: watcher::Config,
    /// The objects; written only by the watch loop (and `add_index` before
    /// start).
    cache: Arc<RwLock<Cache<K>>>,
    /// The registered handlers. Also the lock that orders every handler's
    /// queue against cache changes (see the module doc).
    listeners: Mutex<Listeners<K>>,
    /// Set once the first full list is in the cache.
    synced: watch::Sender<bool>,
    /// Becomes true when the factory shuts down: every task of this
    /// informer ends.
    shutdown: watch::Receiver<bool>,
    /// The highest resourceVersion the cache is known to have reached
    /// (0: unknown). See [`SharedInformer::last_resource_version`].
    reached_rv: AtomicU64,
    /// The highest resourceVersion of the list in progress, published to
    /// `reached_rv` when the list completes.
    listing_rv: AtomicU64,
}

/// The handlers, and whether the informer runs.
struct Listeners<K> {
    /// Every registered handler.
    all: Vec<Listener<K>>,
    /// Id of the next registration.
    next_id: u64,
    /// Whether `start` has run (the watch loop and delivery tasks exist).
    started: bool,
}

impl<K: Cached> SharedInformer<K> {
    /// An informer over `client`, not started.
    pub(crate) fn new(client: Client, config: watcher::Config, shutdown: watch::Receiver<bool>) -> Self {
        SharedInformer {
            inner: Arc::new(Inner {
                api: Api::all(client),
                config,
                cache: Arc::new(RwLock::new(Cache::new())),
                listeners: Mutex::new(Listeners { all: Vec::new(), next_id: 0, started: false }),
                synced: watch::channel(false).0,
                shutdown,
                reached_rv: AtomicU64::new(0),
                listing_rv: AtomicU64::new(0),
            }),
        }
    }

    /// The read-only view of the cache.
    pub fn store(&self) -> Store<K> {
        Store::new(self.inner.cache.clone(), self.sync_signal())
    }

    /// Whether the first full list is in the store (client-go's
    /// `HasSynced`).
    pub fn has_synced(&self) -> bool {
        *self.inner.synced.borrow()
    }

    /// A lower bound of the resourceVersion the cache has reached: the
    /// highest resourceVersion of an object delivered by the watch, or of
    /// an object of a list once that list completed. Every change up to it
    /// is in the cache (so an object created at or below it and absent from
    /// the cache has been deleted since). `None` until known, or when the
    /// server's resourceVersions are not numbers.
    ///
    /// Controllers use it to stop waiting for objects they created and
    /// never saw (the ReplicaSet controller's expectations). Read it
    /// *before* reading the store: the store is then at least as recent.
    pub fn last_resource_version(&self) -> Option<u64> {
        Some(self.inner.reached_rv.load(Ordering::Acquire)).filter(|&rv| rv > 0)
    }

    /// Adds an index to the store: `f` gives the values an object is
    /// indexed under, [`Store::by_index`] finds the objects under a value.
    /// Typical: pods by `spec.nodeName`, objects by controller owner UID.
    ///
    /// # Errors
    /// [`Error::AlreadyStarted`] once the informer runs (as client-go:
    /// indexes are declared before start); [`Error::IndexConflict`] if the
    /// name is taken.
    pub fn add_index(&self, name: &str, f: impl Fn(&K) -> Vec<String> + Send + Sync + 'static) -> Result<(), Error> {
        let listeners = self.inner.lock_listeners();
        if listeners.started {
            return Err(Error::AlreadyStarted(name.to_owned()));
        }
        let f: IndexFn<K> = Arc::new(f);
        store::write(&self.inner.cache).add_index(name, f)
    }

    /// Registers a handler (client-go's `AddEventHandlerWithResyncPeriod`).
    ///
    /// The handler gets every change from now on; if the cache already
    /// holds objects (the informer runs), it first gets an add for each.
    /// With `resync`, every cached object is re-delivered to this handler
    /// only as `on_update(obj, obj)` every period (`None` or zero: never;
    /// below one second: one second).
    pub fn add_handler(&self, handler: impl EventHandler<K>, resync: Option<Duration>) -> HandlerRegistration {
        let mut listeners = self.inner.lock_listeners();
        let id = listeners.next_id;
        listeners.next_id += 1;
        let (mut listener, registration) = Listener::new(id, Arc::new(handler), resync);
        {
            let cache = store::read(&self.inner.cache);
            for obj in cache.iter() {
                listener.send(super::handler::Notification::Add(obj.clone()));
            }
        }
        if self.has_synced() {
            listener.initial_list_delivered();
        }
        if listeners.started {
            self.start_listener(&mut listener);
        }
        listeners.all.push(listener);
        registration
    }

    /// Starts the watch loop and the handlers' tasks, unless they run
    /// already or the factory has shut down. Needs a tokio runtime.
    pub(crate) fn start(&self) {
        let mut listeners = self.inner.lock_listeners();
        if listeners.started || *self.inner.shutdown.borrow() {
            return;
        }
        listeners.started = true;
        for listener in &mut listeners.all {
            self.start_listener(listener);
        }
        tokio::spawn(self.clone().run());
    }

    /// Spawns a listener's delivery task, and its resync task if it asked
    /// for resyncs.
    fn start_listener(&self, listener: &mut Listener<K>) {
        listener.spawn(self.inner.shutdown.clone());
        if let Some(period) = listener.resync {
            tokio::spawn(self.clone().resync(listener.id, period));
        }
    }

    /// The watch loop: until shutdown, feed every watcher event to the
    /// reflector and queue what it reports to the handlers. Watcher errors
    /// are logged; the watcher recovers by itself after a backoff.
    async fn run(self) {
        let stream =
            watcher(self.inner.api.clone(), self.inner.config.clone()).map_ok(from_wire::<K>).default_backoff();
        tokio::pin!(stream);
        let mut shutdown = self.inner.shutdown.clone();
        let stopped = shutdown.wait_for(|&stop| stop);
        tokio::pin!(stopped);
        let mut state = State::default();
        loop {
            let next = tokio::select! {
                biased;
                _ = &mut stopped => break,
                next = stream.next() => next,
            };
            match next {
                Some(Ok(event)) => state = self.apply(state, event),
                Some(Err(error)) => warn!(
                    resource = %K::Wire::plural(&()),
                    %error,
                    "watch of {} failed; retrying after a backoff", K::Wire::plural(&()),
                ),
                None => break,
            }
        }
        debug!(resource = %K::Wire::plural(&()), "informer stopped");
    }

    /// Applies one event to the cache and queues its notifications.
    fn apply(&self, state: State, event: watcher::Event<K>) -> State {
        let mut listeners = self.inner.lock_listeners();
        // A list's objects come in any order and the cache drops missing
        // ones only at its end: its versions count once it is complete.
        let (watched, listing, list_done) = match &event {
            watcher::Event::Apply(obj) | watcher::Event::Delete(obj) => (resource_version(obj), 0, false),
            watcher::Event::InitApply(obj) => (0, resource_version(obj), false),
            watcher::Event::Init => {
                self.inner.listing_rv.store(0, Ordering::Release);
                (0, 0, false)
            }
            watcher::Event::InitDone => (0, 0, true),
        };
        self.inner.listing_rv.fetch_max(listing, Ordering::AcqRel);
        let (step, next) = state.step(&mut store::write(&self.inner.cache), event);
        let reached = if list_done { self.inner.listing_rv.swap(0, Ordering::AcqRel) } else { watched };
        self.inner.reached_rv.fetch_max(reached, Ordering::AcqRel);
        for notification in step.notifications {
            for listener in &listeners.all {
                listener.send(notification.clone());
            }
        }
        if step.listed && !*self.inner.synced.borrow() {
            self.inner.synced.send_replace(true);
            for listener in &mut listeners.all {
                listener.initial_list_delivered();
            }
        }
        next
    }

    /// One handler's periodic resync: every `period`, once synced, queue
    /// `update(obj, obj)` for every cached object to that handler only.
    async fn resync(self, id: u64, period: Duration) {
        let mut ticker = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut shutdown = self.inner.shutdown.clone();
        let stopped = shutdown.wait_for(|&stop| stop);
        tokio::pin!(stopped);
        loop {
            tokio::select! {
                biased;
                _ = &mut stopped => return,
                _ = ticker.tick() => {}
            }
            if !self.has_synced() {
                continue;
            }
            let listeners = self.inner.lock_listeners();
            let Some(listener) = listeners.all.iter().find(|l| l.id == id) else { return };
            let cache = store::read(&self.inner.cache);
            for obj in cache.iter() {
                listener.send(super::handler::Notification::Update { old: obj.clone(), new: obj.clone() });
            }
        }
    }
}

impl<K: Cached> Inner<K> {
    /// Locks the listener list. Every critical section leaves it whole, so
    /// a poisoned lock is still used.
    fn lock_listeners(&self) -> MutexGuard<'_, Listeners<K>> {
        self.listeners.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl<K: Cached> HasSynced for SharedInformer<K> {
    fn sync_signal(&self) -> SyncSignal {
        SyncSignal::new(self.inner.synced.subscribe())
    }
}

/// An object's resourceVersion as a number (0 when absent or not a number).
fn resource_version<K: Cached>(obj: &K) -> u64 {
    obj.resource_version().and_then(|rv| rv.parse().ok()).unwrap_or(0)
}

/// A watcher event with its object turned into what the cache keeps.
fn from_wire<K: Cached>(event: watcher::Event<K::Wire>) -> watcher::Event<K> {
    match event {
        watcher::Event::Apply(obj) => watcher::Event::Apply(K::from_wire(obj)),
        watcher::Event::Delete(obj) => watcher::Event::Delete(K::from_wire(obj)),
        watcher::Event::Init => watcher::Event::Init,
        watcher::Event::InitApply(obj) => watcher::Event::InitApply(K::from_wire(obj)),
        watcher::Event::InitDone => watcher::Event::InitDone,
    }
}

/// The factory's type-erased handle on an informer.
pub(crate) trait ErasedInformer: Send + Sync {
    /// Starts it (idempotent).
    fn start(&self);
    /// The informer, for downcasting to `SharedInformer<K>`.
    fn as_any(&self) -> &dyn std::any::Any;
    /// Its sync state, without the type.
    fn synced(&self) -> &(dyn HasSynced + Sync);
    /// The resource it watches.
    fn resource(&self) -> super::metadata::ResourceId;
    /// Registers a metadata handler (no resync).
    fn add_metadata_handler(&self, handler: Arc<dyn super::metadata::MetadataHandler>) -> HandlerRegistration;
}

impl<K: Cached> ErasedInformer for SharedInformer<K> {
    fn start(&self) {
        SharedInformer::start(self);
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn synced(&self) -> &(dyn HasSynced + Sync) {
        self
    }

    fn resource(&self) -> super::metadata::ResourceId {
        super::metadata::ResourceId::of::<K>()
    }

    fn add_metadata_handler(&self, handler: Arc<dyn super::metadata::MetadataHandler>) -> HandlerRegistration {
        self.add_handler(super::metadata::MetadataAdapter(handler), None)
    }
}
