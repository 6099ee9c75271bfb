//! Which resource types feed the graph, and the feeds (upstream
//! `GraphBuilder.syncMonitors`, `GarbageCollector.Sync` and
//! `GetDeletableResources`).
//!
//! Discovery runs at start, every [`RESOURCE_SYNC_PERIOD`] and, at most
//! once per [`MIN_REDISCOVERY_INTERVAL`], when a worker meets an
//! ownerReference to a kind it does not know (a custom resource type
//! registered since the last pass), so new types join and gone ones
//! leave without a restart. A pass whose discovery fails changes nothing
//! (and counts in `garbagecollector_controller_resources_sync_error_total`).
//!
//! Each deletable type (preferred version, verbs `delete`, `list` and
//! `watch`; events excepted, as upstream) gets one feed: a metadata handler
//! on the shared informer when one exists, else a metadata-only watch of
//! its own. The feed turns adds, updates and deletes into graph changes; a
//! relist of an own watch also removes what it no longer lists.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, PoisonError};
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Client;
use kube::api::{Api, ApiResource, DynamicObject, PartialObjectMeta};
use kube::discovery::{Discovery, Scope, verbs};
use kube::runtime::{WatchStreamExt, watcher};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::shared::{Mapper, Mapping, Shared};
use kcm_runtime::informer::{
    HandlerRegistration, HasSynced, MetadataHandler, ResourceId, SharedInformerFactory, SyncSignal,
};

/// How often the resource types are rediscovered (upstream: kcm calls
/// `garbageCollector.Sync` with 30 s).
pub const RESOURCE_SYNC_PERIOD: Duration = Duration::from_secs(30);

/// Shortest time between two discoveries asked by the workers.
pub const MIN_REDISCOVERY_INTERVAL: Duration = Duration::from_secs(1);

/// Resources the collector never watches (upstream
/// `DefaultIgnoredResources`: core and `events.k8s.io` events).
pub fn ignored(group: &str, plural: &str) -> bool {
    plural == "events" && (group.is_empty() || group == "events.k8s.io")
}

/// One discovery pass.
struct Discovered {
    /// Every served kind.
    mapper: Mapper,
    /// The types to feed the graph.
    deletable: HashMap<ResourceId, ApiResource>,
}

async fn discover(client: &Client) -> Result<Discovered, kube::Error> {
    let discovery = Discovery::new(client.clone()).run().await?;
    let mut mapper = Mapper::new();
    let mut deletable = HashMap::new();
    for group in discovery.groups() {
        for version in group.versions() {
            for (resource, caps) in group.versioned_resources(version) {
                let namespaced = caps.scope == Scope::Namespaced;
                mapper
                    .entry((resource.api_version.clone(), resource.kind.clone()))
                    .or_insert(Mapping { resource, namespaced });
            }
        }
        for (resource, caps) in group.recommended_resources() {
            let usable = [verbs::DELETE, verbs::LIST, verbs::WATCH].iter().all(|v| caps.supports_operation(v));
            if !usable || ignored(&resource.group, &resource.plural) {
                continue;
            }
            let id = ResourceId {
                group: resource.group.clone(),
                version: resource.version.clone(),
                plural: resource.plural.clone(),
            };
            deletable.insert(id, resource);
        }
    }
    Ok(Discovered { mapper, deletable })
}

/// One type's feed.
enum Feed {
    /// A handler on the shared informer (stays registered: built-in
    /// types do not go away while the process runs).
    Shared(HandlerRegistration),
    /// The collector's own metadata watch, and its "listed once" flag.
    Own(JoinHandle<()>, SyncSignal),
}

impl Feed {
    fn synced(&self) -> SyncSignal {
        match self {
            Feed::Shared(registration) => registration.sync_signal(),
            Feed::Own(_, synced) => synced.clone(),
        }
    }
}

/// The feeds by type (upstream `GraphBuilder.monitors`).
pub(super) struct Monitors {
    shared: Arc<Shared>,
    client: Client,
    factory: SharedInformerFactory,
    feeds: HashMap<ResourceId, Feed>,
}

impl Drop for Monitors {
    fn drop(&mut self) {
        for feed in self.feeds.values() {
            if let Feed::Own(task, _) = feed {
                task.abort();
            }
        }
    }
}

impl Monitors {
    pub(super) fn new(shared: Arc<Shared>, client: Client, factory: SharedInformerFactory) -> Self {
        Monitors { shared, client, factory, feeds: HashMap::new() }
    }

    /// The first pass, retried until discovery answers; returns the feeds'
    /// sync signals.
    pub(super) async fn start(&mut self) -> Option<Vec<SyncSignal>> {
        loop {
            if self.sync().await {
                return Some(self.feeds.values().map(Feed::synced).collect());
            }
            tokio::time::sleep(MIN_REDISCOVERY_INTERVAL).await;
        }
    }

    /// Rediscovers every period, or when asked, until `stop`.
    pub(super) async fn run(mut self, stop: impl Future<Output = ()>) {
        tokio::pin!(stop);
        let mut ticker = tokio::time::interval(RESOURCE_SYNC_PERIOD);
        ticker.tick().await;
        loop {
            tokio::select! {
                () = &mut stop => return,
                _ = ticker.tick() => {}
                () = self.shared.rediscover.notified() => {}
            }
            self.sync().await;
            tokio::select! {
                () = &mut stop => return,
                () = tokio::time::sleep(MIN_REDISCOVERY_INTERVAL) => {}
            }
        }
    }

    /// One pass: discover, then start and stop feeds; whether discovery
    /// answered.
    async fn sync(&mut self) -> bool {
        let discovered = match discover(&self.client).await {
            Ok(discovered) => discovered,
            Err(error) => {
                tracing::warn!(%error, "failed to discover resources; keeping the monitors as they are");
                self.shared.metrics.resources_sync_errors.inc();
                return false;
            }
        };
        *self.shared.mapper.write().unwrap_or_else(PoisonError::into_inner) = discovered.mapper;
        let gone: Vec<ResourceId> =
            self.feeds.keys().filter(|id| !discovered.deletable.contains_key(*id)).cloned().collect();
        for id in gone {
            if let Some(Feed::Own(task, _)) = self.feeds.remove(&id) {
                tracing::info!(resource = ?id, "resource type gone: stopping its monitor");
                task.abort();
            }
        }
        for (id, resource) in discovered.deletable {
            if self.feeds.contains_key(&id) {
                continue;
            }
            tracing::debug!(resource = ?id, "starting a monitor");
            let feed = self.feed(&id, resource);
            self.feeds.insert(id, feed);
        }
        self.shared.metrics.monitored_resources.set(i64::try_from(self.feeds.len()).unwrap_or(i64::MAX));
        true
    }

    fn feed(&self, id: &ResourceId, resource: ApiResource) -> Feed {
        let handler = Arc::new(GraphFeed {
            shared: self.shared.clone(),
            api_version: resource.api_version.clone(),
            kind: resource.kind.clone(),
        });
        if let Some(registration) = self.factory.add_metadata_handler(id, handler.clone()) {
            return Feed::Shared(registration);
        }
        let (synced, signal) = watch::channel(false);
        let task = tokio::spawn(own_watch(self.client.clone(), resource, handler, synced));
        Feed::Own(task, SyncSignal::new(signal))
    }
}

/// Graph changes from one type's objects.
struct GraphFeed {
    shared: Arc<Shared>,
    api_version: String,
    kind: String,
}

impl GraphFeed {
    fn observe(&self, meta: &ObjectMeta) {
        self.shared.change(|graph| match graph.observe(&self.api_version, &self.kind, meta) {
            Ok(effects) => effects,
            Err(error) => {
                tracing::warn!(%error, "skipping malformed object");
                Vec::new()
            }
        });
    }
}

impl MetadataHandler for GraphFeed {
    fn on_add(&self, meta: &ObjectMeta) {
        self.observe(meta);
    }

    fn on_update(&self, _old: &ObjectMeta, new: &ObjectMeta) {
        self.observe(new);
    }

    fn on_delete(&self, meta: &ObjectMeta) {
        self.shared.change(|graph| graph.observe_delete(&self.api_version, &self.kind, meta).unwrap_or_default());
    }
}

/// A metadata-only list+watch of one type into the graph, until aborted.
/// A completed (re)list removes the nodes it no longer names and marks
/// the feed synced.
async fn own_watch(client: Client, resource: ApiResource, feed: Arc<GraphFeed>, synced: watch::Sender<bool>) {
    let api: Api<PartialObjectMeta<DynamicObject>> = Api::all_with(client, &resource);
    let stream = watcher(api, watcher::Config::default()).default_backoff();
    futures::pin_mut!(stream);
    let mut listing: Option<HashSet<String>> = None;
    while let Some(event) = stream.next().await {
        match event {
            Err(error) => tracing::info!(kind = %resource.kind, %error, "metadata watch failed; retrying"),
            Ok(watcher::Event::Init) => listing = Some(HashSet::new()),
            Ok(watcher::Event::InitApply(obj)) => {
                if let (Some(listed), Some(uid)) = (&mut listing, &obj.metadata.uid) {
                    listed.insert(uid.clone());
                }
                feed.observe(&obj.metadata);
            }
            Ok(watcher::Event::InitDone) => {
                if let Some(listed) = listing.take() {
                    feed.shared.change(|graph| graph.remove_unlisted(&feed.api_version, &feed.kind, &listed));
                }
                synced.send_replace(true);
            }
            Ok(watcher::Event::Apply(obj)) => feed.observe(&obj.metadata),
            Ok(watcher::Event::Delete(obj)) => feed.on_delete(&obj.metadata),
        }
    }
}
