//! Versioned object storage with a bounded change history, as etcd is to the
//! API server.
//!
//! Objects are kept as their serialised JSON bytes (what goes on the wire),
//! plus the few attributes selectors read, so that reads and watch events are
//! served without re-encoding and 100,000 pods fit in a few hundred MiB. Every
//! write takes the next resourceVersion from one counter, records a
//! [`Change`] in the history and broadcasts it to open watches; history
//! older than the retained window is gone ("compacted"), and a watch that
//! asks for it gets `410 Gone` from the API layer.
//!
//! This module knows nothing of API semantics (generation, finalizers,
//! validation): it stores what it is given, with compare-and-swap on the
//! resourceVersion. The API layer in `api/` builds on it.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};

use bytes::Bytes;
use serde_json::Value;
use tokio::sync::broadcast;

use crate::selectors::Attrs;
use crate::writer::Writer;

/// Identifies a resource type in the store: `group/plural`.
pub type TypeKey = Arc<str>;

/// An object's key within its type: (namespace, name); the namespace is ""
/// for cluster-scoped objects.
pub type ObjectKey = (String, String);

/// Default number of changes kept for watches to resume from.
pub const DEFAULT_HISTORY: usize = 20_000;

/// Capacity of the broadcast channel feeding open watches; a watch that
/// falls further behind is closed and must resume from its last version.
const BROADCAST_CAPACITY: usize = 65_536;

/// One stored object.
#[derive(Debug, Clone)]
pub struct Stored {
    /// Its resourceVersion.
    pub rv: u64,
    /// Its JSON encoding, `metadata.resourceVersion` included.
    pub bytes: Bytes,
    /// What label and field selectors read.
    pub attrs: Arc<Attrs>,
}

impl Stored {
    /// Parses the stored bytes.
    pub fn value(&self) -> Value {
        serde_json::from_slice(&self.bytes)
            .unwrap_or_else(|e| unreachable!("the store only holds bytes it serialised itself: {e}"))
    }
}

/// What happened to an object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    /// Created.
    Added,
    /// Updated.
    Modified,
    /// Removed.
    Deleted,
}

impl ChangeKind {
    /// The watch event type.
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeKind::Added => "ADDED",
            ChangeKind::Modified => "MODIFIED",
            ChangeKind::Deleted => "DELETED",
        }
    }
}

/// One entry of the change history, shared by every watch that sends it.
#[derive(Debug)]
pub struct Change {
    /// Type of the changed object.
    pub type_key: TypeKey,
    /// Its namespace (empty for cluster-scoped objects).
    pub namespace: String,
    /// Its name.
    pub name: String,
    /// What happened.
    pub kind: ChangeKind,
    /// The object after the change (for deletes: its last state, carrying
    /// the deletion's resourceVersion).
    pub object: Stored,
    /// Selector attributes before the change, for watches with selectors
    /// (an object that stops matching is sent as DELETED).
    pub previous: Option<Arc<Attrs>>,
    /// The client whose request made the change; `None` for changes kube-sim
    /// makes itself (its kubelets, its garbage collection, its controls).
    pub writer: Option<Arc<Writer>>,
}

impl Change {
    /// The resourceVersion of the change.
    pub fn rv(&self) -> u64 {
        self.object.rv
    }
}

/// Why a store operation was refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum StoreError {
    /// Nothing is stored under that key.
    #[error("not found")]
    NotFound,
    /// Something is already stored under that key.
    #[error("already exists")]
    AlreadyExists,
    /// The caller's precondition names another resourceVersion.
    #[error("resourceVersion {expected} is not the current {current}")]
    Conflict {
        /// What the caller expected.
        expected: u64,
        /// What is stored.
        current: u64,
    },
    /// The requested history has been compacted away.
    #[error("too old resource version: {requested} ({oldest})")]
    Expired {
        /// The version asked for.
        requested: u64,
        /// The oldest version still resumable.
        oldest: u64,
    },
}

type Result<T, E = StoreError> = std::result::Result<T, E>;

/// Where a watch starts.
pub enum WatchStart {
    /// With every current object as ADDED, then changes.
    Snapshot(Vec<(String, Stored)>, u64),
    /// With the retained changes after the requested version, then live ones.
    History(Vec<Arc<Change>>),
}

/// The data behind the lock.
#[derive(Default)]
struct State {
    /// Last resourceVersion handed out.
    rv: u64,
    /// Objects by type, then by (namespace, name), ordered for stable
    /// listing and `continue` tokens.
    objects: HashMap<TypeKey, BTreeMap<ObjectKey, Stored>>,
    /// Retained changes, oldest first.
    history: VecDeque<Arc<Change>>,
    /// Watches may resume from any version >= this one.
    oldest_resumable: u64,
}

/// The object store. Cheap to clone; every clone is the same store.
#[derive(Clone)]
pub struct Store {
    state: Arc<Mutex<State>>,
    /// Fans changes out to open watches. Sent under the state lock, so a
    /// subscriber taken under the lock sees every change after its snapshot.
    changes: broadcast::Sender<Arc<Change>>,
    /// How many changes `history` keeps.
    history_limit: usize,
}

impl Default for Store {
    fn default() -> Self {
        Store::new(DEFAULT_HISTORY)
    }
}

impl Store {
    /// An empty store keeping `history_limit` changes for watches to resume
    /// from.
    pub fn new(history_limit: usize) -> Self {
        let (changes, _) = broadcast::channel(BROADCAST_CAPACITY);
        Store { state: Arc::new(Mutex::new(State::default())), changes, history_limit: history_limit.max(1) }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The current resourceVersion of the whole store.
    pub fn current_rv(&self) -> u64 {
        self.lock().rv
    }

    /// One object.
    pub fn get(&self, ty: &TypeKey, namespace: &str, name: &str) -> Option<Stored> {
        self.lock().objects.get(ty).and_then(|m| m.get(&(namespace.to_owned(), name.to_owned())).cloned())
    }

    /// Objects of a type (in one namespace, or all when `None`), ordered by
    /// namespace then name, with the store's version at the time of reading.
    pub fn list(&self, ty: &TypeKey, namespace: Option<&str>) -> (Vec<(ObjectKey, Stored)>, u64) {
        use std::ops::Bound::{Included, Unbounded};
        let state = self.lock();
        let Some(objects) = state.objects.get(ty) else {
            return (Vec::new(), state.rv);
        };
        let lower = match namespace {
            Some(ns) => Included((ns.to_owned(), String::new())),
            None => Unbounded,
        };
        let items = objects
            .range((lower, Unbounded))
            .take_while(|((ns, _), _)| namespace.is_none_or(|want| ns == want))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        (items, state.rv)
    }

    /// Number of objects of a type.
    pub fn count(&self, ty: &TypeKey) -> usize {
        self.lock().objects.get(ty).map_or(0, BTreeMap::len)
    }

    /// Stores a new object, setting its resourceVersion.
    pub fn create(&self, ty: &TypeKey, namespace: &str, name: &str, object: Value) -> Result<Stored> {
        let mut state = self.lock();
        let key = (namespace.to_owned(), name.to_owned());
        if state.objects.get(ty).is_some_and(|m| m.contains_key(&key)) {
            return Err(StoreError::AlreadyExists);
        }
        let stored = self.encode(&mut state, object);
        state.objects.entry(ty.clone()).or_default().insert(key, stored.clone());
        self.record(&mut state, ty, namespace, name, ChangeKind::Added, stored.clone(), None);
        Ok(stored)
    }

    /// Runs `f` on the current object and stores what it returns, atomically.
    /// `f` returns `Ok(None)` to leave the object unchanged (no new version,
    /// no event), or an error to abort.
    pub fn update<E>(
        &self,
        ty: &TypeKey,
        namespace: &str,
        name: &str,
        f: impl FnOnce(&Stored) -> std::result::Result<Option<Value>, E>,
    ) -> std::result::Result<Stored, UpdateError<E>> {
        let mut state = self.lock();
        let key = (namespace.to_owned(), name.to_owned());
        let current =
            state.objects.get(ty).and_then(|m| m.get(&key)).cloned().ok_or(UpdateError::Store(StoreError::NotFound))?;
        let Some(next) = f(&current).map_err(UpdateError::Rejected)? else {
            return Ok(current);
        };
        let stored = self.encode(&mut state, next);
        if let Some(m) = state.objects.get_mut(ty) {
            m.insert(key, stored.clone());
        }
        let previous = Some(current.attrs.clone());
        self.record(&mut state, ty, namespace, name, ChangeKind::Modified, stored.clone(), previous);
        Ok(stored)
    }

    /// Removes an object, if its version is `expected_rv` (when given). The
    /// returned last state carries the deletion's resourceVersion.
    pub fn delete(&self, ty: &TypeKey, namespace: &str, name: &str, expected_rv: Option<u64>) -> Result<Stored> {
        let mut state = self.lock();
        let key = (namespace.to_owned(), name.to_owned());
        let current = state.objects.get(ty).and_then(|m| m.get(&key)).cloned().ok_or(StoreError::NotFound)?;
        if let Some(expected) = expected_rv
            && expected != current.rv
        {
            return Err(StoreError::Conflict { expected, current: current.rv });
        }
        if let Some(m) = state.objects.get_mut(ty) {
            m.remove(&key);
        }
        let last = self.encode(&mut state, current.value());
        let previous = Some(current.attrs.clone());
        self.record(&mut state, ty, namespace, name, ChangeKind::Deleted, last.clone(), previous);
        Ok(last)
    }

    /// Starts a watch on every type: from a snapshot of `ty`'s objects when
    /// `from` is `None`, else from the retained history after `from`.
    pub fn watch(&self, ty: &TypeKey, from: Option<u64>) -> Result<(WatchStart, broadcast::Receiver<Arc<Change>>)> {
        let state = self.lock();
        let start = match from {
            None => {
                let objects = state
                    .objects
                    .get(ty)
                    .map(|m| m.iter().map(|((ns, _), s)| (ns.clone(), s.clone())).collect())
                    .unwrap_or_default();
                WatchStart::Snapshot(objects, state.rv)
            }
            Some(rv) if rv < state.oldest_resumable => {
                return Err(StoreError::Expired { requested: rv, oldest: state.oldest_resumable });
            }
            Some(rv) => {
                let skip = state.history.partition_point(|c| c.rv() <= rv);
                WatchStart::History(state.history.iter().skip(skip).cloned().collect())
            }
        };
        Ok((start, self.changes.subscribe()))
    }

    /// Every change made from now on, of every type (what tests waiting on
    /// a condition wake up on).
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<Change>> {
        self.changes.subscribe()
    }

    /// Whether a watch may still resume from `rv`.
    pub fn resumable(&self, rv: u64) -> bool {
        rv >= self.lock().oldest_resumable
    }

    /// Forgets the whole history: watches from any version before now get
    /// `Expired`.
    pub fn compact(&self) {
        let mut state = self.lock();
        state.history.clear();
        state.oldest_resumable = state.rv;
    }

    /// Assigns the next version to `object` and encodes it.
    fn encode(&self, state: &mut State, mut object: Value) -> Stored {
        state.rv += 1;
        let rv = state.rv;
        if let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.insert("resourceVersion".into(), Value::String(rv.to_string()));
        }
        let attrs = Arc::new(Attrs::of(&object));
        let bytes = Bytes::from(
            serde_json::to_vec(&object).unwrap_or_else(|e| unreachable!("a serde_json::Value always serialises: {e}")),
        );
        Stored { rv, bytes, attrs }
    }

    #[allow(clippy::too_many_arguments)]
    fn record(
        &self,
        state: &mut State,
        ty: &TypeKey,
        namespace: &str,
        name: &str,
        kind: ChangeKind,
        object: Stored,
        previous: Option<Arc<Attrs>>,
    ) {
        let change = Arc::new(Change {
            type_key: ty.clone(),
            namespace: namespace.to_owned(),
            name: name.to_owned(),
            kind,
            object,
            previous,
            writer: crate::writer::current(),
        });
        if state.history.len() >= self.history_limit
            && let Some(dropped) = state.history.pop_front()
        {
            state.oldest_resumable = dropped.rv();
        }
        state.history.push_back(change.clone());
        // No receiver is not an error: nobody is watching.
        let _ = self.changes.send(change);
    }
}

/// Why [`Store::update`] stored nothing.
#[derive(Debug, thiserror::Error)]
pub enum UpdateError<E> {
    /// The store refused.
    #[error(transparent)]
    Store(StoreError),
    /// The update function refused.
    #[error("update rejected")]
    Rejected(E),
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn pods() -> TypeKey {
        Arc::from("/pods")
    }

    fn pod(name: &str) -> Value {
        json!({"metadata": {"name": name, "namespace": "default"}})
    }

    #[test]
    fn every_write_takes_the_next_version_and_stores_it_in_the_object() {
        let store = Store::default();
        let a = store.create(&pods(), "default", "a", pod("a")).unwrap();
        let b = store.create(&pods(), "default", "b", pod("b")).unwrap();
        assert_eq!((a.rv, b.rv), (1, 2));
        assert_eq!(b.value()["metadata"]["resourceVersion"], "2");
        let a2 = store
            .update::<()>(&pods(), "default", "a", |s| {
                let mut v = s.value();
                v["spec"] = json!({"x": 1});
                Ok(Some(v))
            })
            .unwrap();
        assert_eq!(a2.rv, 3);
        assert_eq!(store.create(&pods(), "default", "a", pod("a")).unwrap_err(), StoreError::AlreadyExists);
    }

    #[test]
    fn an_update_that_changes_nothing_keeps_the_version() {
        let store = Store::default();
        store.create(&pods(), "default", "a", pod("a")).unwrap();
        let same = store.update::<()>(&pods(), "default", "a", |_| Ok(None)).unwrap();
        assert_eq!(same.rv, 1);
        assert_eq!(store.current_rv(), 1);
    }

    #[test]
    fn delete_checks_the_precondition_and_versions_the_last_state() {
        let store = Store::default();
        store.create(&pods(), "default", "a", pod("a")).unwrap();
        assert_eq!(
            store.delete(&pods(), "default", "a", Some(7)).unwrap_err(),
            StoreError::Conflict { expected: 7, current: 1 }
        );
        let last = store.delete(&pods(), "default", "a", Some(1)).unwrap();
        assert_eq!(last.rv, 2);
        assert!(store.get(&pods(), "default", "a").is_none());
    }

    #[test]
    fn list_is_ordered_by_namespace_and_name() {
        let store = Store::default();
        for (ns, name) in [("b", "x"), ("a", "z"), ("a", "y")] {
            store.create(&pods(), ns, name, pod(name)).unwrap();
        }
        let (all, rv) = store.list(&pods(), None);
        let keys: Vec<_> = all.iter().map(|(k, _)| k.clone()).collect();
        assert_eq!(keys, vec![("a".into(), "y".into()), ("a".into(), "z".into()), ("b".into(), "x".into())]);
        assert_eq!(rv, 3);
        let (in_a, _) = store.list(&pods(), Some("a"));
        assert_eq!(in_a.len(), 2);
    }

    #[test]
    fn watch_resumes_from_history_and_expires_once_compacted() {
        let store = Store::new(2);
        for name in ["a", "b", "c"] {
            store.create(&pods(), "default", name, pod(name)).unwrap();
        }
        // History holds versions 2 and 3; resuming after 1 still works.
        let Ok((WatchStart::History(changes), _)) = store.watch(&pods(), Some(1)) else {
            panic!("resuming after 1 must be possible");
        };
        assert_eq!(changes.iter().map(|c| c.rv()).collect::<Vec<_>>(), vec![2, 3]);
        assert!(matches!(store.watch(&pods(), Some(0)), Err(StoreError::Expired { .. })));
        store.compact();
        assert!(matches!(store.watch(&pods(), Some(2)), Err(StoreError::Expired { .. })));
        assert!(store.watch(&pods(), Some(3)).is_ok());
    }

    #[tokio::test]
    async fn a_subscriber_sees_every_change_after_its_snapshot() {
        let store = Store::default();
        store.create(&pods(), "default", "a", pod("a")).unwrap();
        let (start, mut rx) = store.watch(&pods(), None).unwrap();
        let WatchStart::Snapshot(objects, rv) = start else { panic!("no version given") };
        assert_eq!((objects.len(), rv), (1, 1));
        store.delete(&pods(), "default", "a", None).unwrap();
        let change = rx.recv().await.unwrap();
        assert_eq!((change.kind, change.rv()), (ChangeKind::Deleted, 2));
    }
}
