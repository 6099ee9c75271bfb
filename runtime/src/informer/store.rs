//! The informer's cache: objects by key, behind `Arc`, with indexes.
//!
//! [`Cache`] is the writer half, owned by one informer (its watch loop is
//! the only writer); [`Store`] is the read-only half handed to controllers,
//! a cheap clone over the same lock. This is client-go's `threadSafeStore`
//! and `Indexer` (`thread_safe_store.go`, `index.go`) with the same key
//! format (`namespace/name`, or `name` for cluster-scoped objects) and the
//! same built-in `namespace` index.
//!
//! The cache holds each object once, in a [`Slab`], which finds an object
//! by the namespace and name it holds: no copy of its key is kept. The
//! index sets hold its 4-byte slot id, not its key: a pod indexed seven
//! ways (namespace, node, owner, labels) costs seven ids in hash sets,
//! where keys behind `Arc<str>` cost four times that.
//!
//! What the store returns can be stale: it is the informer's view, which
//! trails the API server. Objects are shared (`Arc<K>`): clone before
//! mutating (upstream's DeepCopy rule).

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::{Arc, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use super::synced::{HasSynced, SyncSignal};
pub use kcm_objects::object_key;
use kcm_objects::{Cached, Slab, SlotId};

/// Name of the index every store has: objects by namespace (client-go's
/// `cache.NamespaceIndex`). Cluster-scoped objects are indexed under `""`.
pub const NAMESPACE_INDEX: &str = "namespace";

/// An index function: the values an object is indexed under (none, one or
/// several), as client-go's `IndexFunc`.
pub type IndexFn<K> = Arc<dyn Fn(&K) -> Vec<String> + Send + Sync>;

/// Why a store operation was refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum Error {
    /// `by_index` named an index that was never registered.
    #[error("index {0:?} does not exist")]
    NoSuchIndex(String),
    /// `add_index` named an index that already exists (client-go's
    /// "indexer conflict").
    #[error("index {0:?} already exists")]
    IndexConflict(String),
    /// `add_index` was called after the informer started: the objects
    /// already cached would be missing from the index.
    #[error("index {0:?} cannot be added after the informer has started")]
    AlreadyStarted(String),
}

/// The cache key of an object: `namespace/name`, or `name` when it has no
/// namespace (client-go's `MetaNamespaceKeyFunc`).
pub fn key_of<K: Cached>(obj: &K) -> String {
    object_key(obj.namespace(), obj.name())
}

/// One index: index value -> the objects indexed under it.
type Index = HashMap<String, HashSet<SlotId>>;

/// The writer half: the objects and their indexes. Only the informer's
/// watch loop writes; everything else reads through [`Store`].
pub(crate) struct Cache<K> {
    /// The objects by key, once each.
    items: Slab<Arc<K>>,
    /// Index functions by index name (the namespace index included).
    indexers: HashMap<String, IndexFn<K>>,
    /// Index contents by index name.
    indices: HashMap<String, Index>,
}

impl<K: Cached> Cache<K> {
    /// An empty cache with the namespace index.
    pub(crate) fn new() -> Self {
        let namespace: IndexFn<K> = Arc::new(|obj: &K| vec![obj.namespace().unwrap_or_default().to_owned()]);
        Cache {
            items: Slab::new(),
            indexers: HashMap::from([(NAMESPACE_INDEX.to_owned(), namespace)]),
            indices: HashMap::from([(NAMESPACE_INDEX.to_owned(), Index::new())]),
        }
    }

    /// Registers an index. The cache must still be empty.
    pub(crate) fn add_index(&mut self, name: &str, f: IndexFn<K>) -> Result<(), Error> {
        if self.indexers.contains_key(name) {
            return Err(Error::IndexConflict(name.to_owned()));
        }
        let mut index = Index::new();
        for (id, obj) in self.items.iter() {
            for value in f(obj) {
                index.entry(value).or_default().insert(id);
            }
        }
        self.indexers.insert(name.to_owned(), f);
        self.indices.insert(name.to_owned(), index);
        Ok(())
    }

    /// The object under `key`.
    pub(crate) fn get(&self, key: &str) -> Option<&Arc<K>> {
        self.items.get(key)
    }

    /// Every object.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &Arc<K>> {
        self.items.iter().map(|(_, obj)| obj)
    }

    /// Stores `obj` under its key, returning what it replaces.
    pub(crate) fn insert(&mut self, obj: Arc<K>) -> Option<Arc<K>> {
        let (id, old) = self.items.insert(obj.clone());
        self.reindex(id, old.as_deref(), Some(&obj));
        old
    }

    /// Removes the object under `key`, returning it.
    pub(crate) fn remove(&mut self, key: &str) -> Option<Arc<K>> {
        let (id, old) = self.items.remove(key)?;
        self.reindex(id, Some(&old), None);
        Some(old)
    }

    /// Moves `id` from the index values of `old` to those of `new`.
    fn reindex(&mut self, id: SlotId, old: Option<&K>, new: Option<&K>) {
        for (name, f) in &self.indexers {
            let before = old.map(|o| f(o)).unwrap_or_default();
            let after = new.map(|n| f(n)).unwrap_or_default();
            if before == after {
                continue;
            }
            let index = self.indices.entry(name.clone()).or_default();
            for value in before.iter().filter(|v| !after.contains(v)) {
                if let Some(ids) = index.get_mut(value) {
                    ids.remove(&id);
                    // Empty sets are dropped so that churn does not leak
                    // memory (as client-go's index.go does).
                    if ids.is_empty() {
                        index.remove(value);
                    }
                }
            }
            for value in after {
                index.entry(value).or_default().insert(id);
            }
        }
    }

    /// The objects under `value` of the index `name`.
    fn indexed(&self, name: &str, value: &str) -> Result<impl Iterator<Item = &Arc<K>>, Error> {
        let index = self.indices.get(name).ok_or_else(|| Error::NoSuchIndex(name.to_owned()))?;
        Ok(index.get(value).into_iter().flatten().filter_map(|id| self.items.at(*id)))
    }

    /// Number of objects.
    pub(crate) fn len(&self) -> usize {
        self.items.len()
    }
}

/// A read-only view of an informer's cache. Cheap to clone; every clone
/// sees the same, live cache.
#[doc(alias = "lister")]
#[doc(alias = "indexer")]
pub struct Store<K> {
    /// The cache, written by the informer's watch loop only.
    cache: Arc<RwLock<Cache<K>>>,
    /// Whether the informer's first list has been applied.
    synced: SyncSignal,
}

impl<K> Clone for Store<K> {
    fn clone(&self) -> Self {
        Store { cache: self.cache.clone(), synced: self.synced.clone() }
    }
}

impl<K> fmt::Debug for Store<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Store").field("synced", &self.synced.is_synced()).finish_non_exhaustive()
    }
}

impl<K: Cached> Store<K> {
    pub(crate) fn new(cache: Arc<RwLock<Cache<K>>>, synced: SyncSignal) -> Self {
        Store { cache, synced }
    }

    fn read(&self) -> RwLockReadGuard<'_, Cache<K>> {
        read(&self.cache)
    }

    /// The object under `key` (`namespace/name`, or `name`).
    pub fn get(&self, key: &str) -> Option<Arc<K>> {
        self.read().get(key).cloned()
    }

    /// The object `name` in `namespace` (`None` for cluster-scoped objects).
    pub fn get_namespaced(&self, namespace: Option<&str>, name: &str) -> Option<Arc<K>> {
        self.get(&object_key(namespace, name))
    }

    /// Every cached object, in no particular order.
    pub fn list(&self) -> Vec<Arc<K>> {
        self.read().iter().cloned().collect()
    }

    /// Every cached key, in no particular order.
    pub fn keys(&self) -> Vec<String> {
        self.read().iter().map(|obj| key_of(&**obj)).collect()
    }

    /// The cached objects of one namespace.
    pub fn list_namespace(&self, namespace: &str) -> Vec<Arc<K>> {
        self.by_index(NAMESPACE_INDEX, namespace).unwrap_or_default()
    }

    /// The objects indexed under `value` by the index `index` (client-go's
    /// `ByIndex`).
    ///
    /// # Errors
    /// [`Error::NoSuchIndex`] when no index of that name was registered.
    pub fn by_index(&self, index: &str, value: &str) -> Result<Vec<Arc<K>>, Error> {
        let cache = self.read();
        Ok(cache.indexed(index, value)?.cloned().collect())
    }

    /// The keys indexed under `value` by the index `index` (client-go's
    /// `IndexKeys`).
    ///
    /// # Errors
    /// [`Error::NoSuchIndex`] when no index of that name was registered.
    pub fn index_keys(&self, index: &str, value: &str) -> Result<Vec<String>, Error> {
        let cache = self.read();
        Ok(cache.indexed(index, value)?.map(|obj| key_of(&**obj)).collect())
    }

    /// Number of cached objects.
    pub fn len(&self) -> usize {
        self.read().len()
    }

    /// Whether the cache holds no object.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the informer's first full list has been applied: before
    /// that, the store is incomplete and must not be trusted.
    pub fn has_synced(&self) -> bool {
        self.synced.is_synced()
    }
}

impl<K: Cached> HasSynced for Store<K> {
    fn sync_signal(&self) -> SyncSignal {
        self.synced.clone()
    }
}

/// Reads the cache. A panic elsewhere cannot leave the cache half-written
/// in a way readers could not cope with (every write is one map update), so
/// a poisoned lock is still used.
pub(crate) fn read<K>(cache: &RwLock<Cache<K>>) -> RwLockReadGuard<'_, Cache<K>> {
    cache.read().unwrap_or_else(PoisonError::into_inner)
}

/// Writes the cache (see [`read`] on poisoning).
pub(crate) fn write<K>(cache: &RwLock<Cache<K>>) -> RwLockWriteGuard<'_, Cache<K>> {
    cache.write().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{Pod, PodSpec};
    use kube::api::ObjectMeta;

    fn pod(ns: &str, name: &str, node: &str) -> Arc<Pod> {
        Arc::new(Pod {
            metadata: ObjectMeta { namespace: Some(ns.into()), name: Some(name.into()), ..ObjectMeta::default() },
            spec: Some(PodSpec { node_name: Some(node.into()), ..PodSpec::default() }),
            ..Pod::default()
        })
    }

    fn store(cache: Cache<Pod>) -> Store<Pod> {
        Store::new(Arc::new(RwLock::new(cache)), SyncSignal::new(tokio::sync::watch::channel(true).1))
    }

    fn names(mut pods: Vec<Arc<Pod>>) -> Vec<String> {
        let mut names: Vec<String> = pods.drain(..).map(|p| key_of(&*p)).collect();
        names.sort();
        names
    }

    #[test]
    fn keys_are_namespace_slash_name_or_name() {
        assert_eq!(object_key(Some("ns"), "a"), "ns/a");
        assert_eq!(object_key(Some(""), "a"), "a");
        assert_eq!(object_key(None, "a"), "a");
        assert_eq!(key_of(&*pod("ns", "a", "n")), "ns/a");
    }

    #[test]
    fn indexes_follow_inserts_updates_and_removes() {
        let mut cache = Cache::<Pod>::new();
        let by_node: IndexFn<Pod> =
            Arc::new(|p: &Pod| p.spec.as_ref().and_then(|s| s.node_name.clone()).into_iter().collect());
        cache.add_index("node", by_node.clone()).unwrap();
        assert_eq!(cache.add_index("node", by_node), Err(Error::IndexConflict("node".into())));
        cache.insert(pod("a", "p1", "n1"));
        cache.insert(pod("a", "p2", "n1"));
        cache.insert(pod("b", "p3", "n2"));
        let store = store(cache);
        assert_eq!(names(store.by_index("node", "n1").unwrap()), ["a/p1", "a/p2"]);
        assert_eq!(names(store.list_namespace("b")), ["b/p3"]);
        assert_eq!(store.by_index("nope", "x"), Err(Error::NoSuchIndex("nope".into())));

        // Move p2 to n2, remove p1: n1 disappears from the index.
        write(&store.cache).insert(pod("a", "p2", "n2"));
        write(&store.cache).remove("a/p1");
        assert_eq!(names(store.by_index("node", "n2").unwrap()), ["a/p2", "b/p3"]);
        assert!(store.by_index("node", "n1").unwrap().is_empty());
        assert!(!read(&store.cache).indices["node"].contains_key("n1"));
        assert_eq!(names(store.list_namespace("a")), ["a/p2"]);
        assert_eq!(store.len(), 2);
    }

    #[test]
    fn an_index_added_late_covers_what_is_cached() {
        let mut cache = Cache::<Pod>::new();
        cache.insert(pod("a", "p1", "n1"));
        cache
            .add_index(
                "node",
                Arc::new(|p: &Pod| p.spec.as_ref().and_then(|s| s.node_name.clone()).into_iter().collect()),
            )
            .unwrap();
        assert_eq!(names(store(cache).by_index("node", "n1").unwrap()), ["a/p1"]);
    }

    /// What the cache must answer after any sequence of writes: the
    /// model's, a map of key to node.
    fn assert_matches(store: &Store<Pod>, model: &std::collections::BTreeMap<String, String>) {
        let mut keys = store.keys();
        keys.sort();
        assert_eq!(keys, model.keys().cloned().collect::<Vec<_>>());
        assert_eq!(store.len(), model.len());
        for (key, node) in model {
            let obj = store.get(key).expect("a cached object");
            assert_eq!(obj.spec.as_ref().and_then(|s| s.node_name.as_deref()), Some(node.as_str()));
        }
        for node in ["n0", "n1", "n2"] {
            let want: Vec<String> = model.iter().filter(|(_, n)| *n == node).map(|(k, _)| k.clone()).collect();
            assert_eq!(names(store.by_index("node", node).unwrap()), want, "objects on {node}");
            let mut keys = store.index_keys("node", node).unwrap();
            keys.sort();
            assert_eq!(keys, want, "keys on {node}");
        }
    }

    proptest::proptest! {
        /// Slots freed by removals are reused: whatever the order of
        /// inserts, updates and removes, lookups and indexes name the
        /// objects now under each key, never a slot's former occupant.
        #[test]
        fn slots_reused_after_removals_answer_for_their_new_object(
            ops in proptest::collection::vec((0..12usize, proptest::option::of(0..3usize)), 1..120),
        ) {
            let mut cache = Cache::<Pod>::new();
            cache
                .add_index("node", Arc::new(|p: &Pod| p.spec.as_ref().and_then(|s| s.node_name.clone()).into_iter().collect()))
                .unwrap();
            let store = store(cache);
            let mut model = std::collections::BTreeMap::new();
            for (name, node) in ops {
                let key = format!("a/p{name}");
                match node {
                    Some(n) => {
                        let node = format!("n{n}");
                        let old = write(&store.cache).insert(pod("a", &format!("p{name}"), &node));
                        proptest::prop_assert_eq!(old.is_some(), model.insert(key, node).is_some());
                    }
                    None => {
                        let old = write(&store.cache).remove(&key);
                        proptest::prop_assert_eq!(old.is_some(), model.remove(&key).is_some());
                    }
                }
                assert_matches(&store, &model);
            }
        }
    }
}
