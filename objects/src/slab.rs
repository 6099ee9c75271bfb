//! [`Slab`]: a hash table whose entries sit in a dense slab, each named by
//! a 4-byte [`SlotId`]; [`SlabMap`], a map on one.
//!
//! The caches with an entry per object (the informer stores, the garbage
//! collector's graph) hold over a hundred thousand entries. A std
//! `HashMap` keeps its entries in its buckets, about half of which are
//! empty at any moment, each as large as an entry. Here the buckets hold
//! ids (4 bytes) and the entries a vector, so an empty bucket costs 4
//! bytes; and what must name an entry from elsewhere (an index set) can
//! hold its id instead of a copy of the key.
//!
//! An entry finds its own key ([`Keyed`]): an informer's object is looked
//! up by its `namespace/name`, which it holds in pieces, so the slab keeps
//! no copy of the key beside it.

use std::fmt;
use std::hash::{BuildHasher, Hash, Hasher, RandomState};

use hashbrown::HashTable;

/// Where an entry sits in a [`Slab`]. Stable while the entry stays; a
/// removed entry's id is given to a later one.
pub type SlotId = u32;

/// An entry of a [`Slab`], which knows its own key.
pub trait Keyed {
    /// What an entry is looked up by.
    type Key: ?Sized;
    /// Feeds the entry's key to `state`, exactly as [`Keyed::hash_key`]
    /// feeds an equal key.
    fn hash_own_key<H: Hasher>(&self, state: &mut H);
    /// Feeds `key` to `state`.
    fn hash_key<H: Hasher>(key: &Self::Key, state: &mut H);
    /// Whether the entry's key is `key`.
    fn has_key(&self, key: &Self::Key) -> bool;
    /// Whether `other` is under the same key.
    fn same_key(&self, other: &Self) -> bool;
}

/// A `(key, value)` pair is under its key.
impl<K: Hash + Eq, V> Keyed for (K, V) {
    type Key = K;
    fn hash_own_key<H: Hasher>(&self, state: &mut H) {
        self.0.hash(state);
    }
    fn hash_key<H: Hasher>(key: &K, state: &mut H) {
        key.hash(state);
    }
    fn has_key(&self, key: &K) -> bool {
        self.0 == *key
    }
    fn same_key(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}

/// Entries `E`, each under its own key, in a slab (see the module).
pub struct Slab<E> {
    /// The entries; `None` where one was removed.
    slots: Vec<Option<E>>,
    /// Ids of the empty slots, filled before the slab grows.
    free: Vec<SlotId>,
    /// The ids of the occupied slots, hashed and compared by their key.
    ids: HashTable<SlotId>,
    /// The hasher of the keys.
    hasher: RandomState,
}

impl<E> Default for Slab<E> {
    fn default() -> Self {
        Slab { slots: Vec::new(), free: Vec::new(), ids: HashTable::new(), hasher: RandomState::new() }
    }
}

/// The entry in `slot`, if any.
fn occupant<E>(slots: &[Option<E>], id: SlotId) -> Option<&E> {
    slots.get(id as usize)?.as_ref()
}

impl<E> Slab<E> {
    /// An empty slab.
    pub fn new() -> Self {
        Self::default()
    }

    /// Entries held.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether no entry is held.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// The entry `id` names.
    pub fn at(&self, id: SlotId) -> Option<&E> {
        occupant(&self.slots, id)
    }

    /// The entry `id` names, to change (its key must stay the same).
    fn at_mut(&mut self, id: SlotId) -> Option<&mut E> {
        self.slots.get_mut(id as usize)?.as_mut()
    }

    /// Every entry with its id, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (SlotId, &E)> {
        self.slots.iter().zip(0..).filter_map(|(slot, id)| slot.as_ref().map(|e| (id, e)))
    }
}

/// The hash of `entry`'s own key.
fn entry_hash<E: Keyed>(hasher: &RandomState, entry: &E) -> u64 {
    let mut state = hasher.build_hasher();
    entry.hash_own_key(&mut state);
    state.finish()
}

impl<E: Keyed> Slab<E> {
    fn hash_of_key(&self, key: &E::Key) -> u64 {
        let mut state = self.hasher.build_hasher();
        E::hash_key(key, &mut state);
        state.finish()
    }

    /// The id of the entry under `key`.
    pub fn id(&self, key: &E::Key) -> Option<SlotId> {
        let holds = |id: &SlotId| occupant(&self.slots, *id).is_some_and(|e| e.has_key(key));
        self.ids.find(self.hash_of_key(key), holds).copied()
    }

    /// The entry under `key`.
    pub fn get(&self, key: &E::Key) -> Option<&E> {
        self.at(self.id(key)?)
    }

    /// Puts `entry` under its key: its id, and the entry it replaces (the
    /// id stays the same when there was one).
    pub fn insert(&mut self, entry: E) -> (SlotId, Option<E>) {
        let hash = entry_hash(&self.hasher, &entry);
        let slots = &self.slots;
        let held = self.ids.find(hash, |id| occupant(slots, *id).is_some_and(|e| e.same_key(&entry))).copied();
        if let Some(id) = held
            && let Some(slot) = self.at_mut(id)
        {
            return (id, Some(std::mem::replace(slot, entry)));
        }
        let id = match self.free.pop() {
            Some(id) => {
                self.slots[id as usize] = Some(entry);
                id
            }
            None => {
                let id = SlotId::try_from(self.slots.len()).expect("fewer than 2^32 entries");
                self.slots.push(Some(entry));
                id
            }
        };
        let (slots, hasher) = (&self.slots, &self.hasher);
        let rehash = |id: &SlotId| occupant(slots, *id).map_or(0, |e| entry_hash(hasher, e));
        self.ids.insert_unique(hash, id, rehash);
        (id, None)
    }

    /// Takes the entry under `key` out: its former id, and the entry.
    pub fn remove(&mut self, key: &E::Key) -> Option<(SlotId, E)> {
        let hash = self.hash_of_key(key);
        let slots = &self.slots;
        let holds = |id: &SlotId| occupant(slots, *id).is_some_and(|e| e.has_key(key));
        let (id, _) = self.ids.find_entry(hash, holds).ok()?.remove();
        let entry = self.slots.get_mut(id as usize)?.take()?;
        self.free.push(id);
        Some((id, entry))
    }
}

/// A map of `K` to `V` on a [`Slab`] of pairs.
pub struct SlabMap<K, V>(Slab<(K, V)>);

impl<K, V> Default for SlabMap<K, V> {
    fn default() -> Self {
        SlabMap(Slab::default())
    }
}

impl<K: fmt::Debug, V: fmt::Debug> fmt::Debug for SlabMap<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter().map(|(_, k, v)| (k, v))).finish()
    }
}

impl<K, V> SlabMap<K, V> {
    /// An empty map.
    pub fn new() -> Self {
        Self::default()
    }

    /// Entries held.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether no entry is held.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The entry `id` names.
    pub fn at(&self, id: SlotId) -> Option<(&K, &V)> {
        self.0.at(id).map(|(k, v)| (k, v))
    }

    /// The value of the entry `id` names, to change.
    pub fn at_mut(&mut self, id: SlotId) -> Option<&mut V> {
        self.0.at_mut(id).map(|(_, v)| v)
    }

    /// Every entry with its id, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (SlotId, &K, &V)> {
        self.0.iter().map(|(id, (k, v))| (id, k, v))
    }
}

impl<K: Hash + Eq, V> SlabMap<K, V> {
    /// The id of the entry under `key`.
    pub fn id(&self, key: &K) -> Option<SlotId> {
        self.0.id(key)
    }

    /// Whether an entry is under `key`.
    pub fn contains_key(&self, key: &K) -> bool {
        self.id(key).is_some()
    }

    /// The value under `key`.
    pub fn get(&self, key: &K) -> Option<&V> {
        self.0.get(key).map(|(_, v)| v)
    }

    /// The value under `key`, to change.
    pub fn get_mut(&mut self, key: &K) -> Option<&mut V> {
        let id = self.id(key)?;
        self.at_mut(id)
    }

    /// Puts `value` under `key`: the entry's id, and the value it replaces
    /// (the id stays the same when there was one).
    pub fn insert(&mut self, key: K, value: V) -> (SlotId, Option<V>) {
        let (id, old) = self.0.insert((key, value));
        (id, old.map(|(_, v)| v))
    }

    /// Takes the entry under `key` out: its former id and value.
    pub fn remove(&mut self, key: &K) -> Option<(SlotId, V)> {
        self.0.remove(key).map(|(id, (_, v))| (id, v))
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    #[test]
    fn an_entry_keeps_its_id_until_removed_and_its_slot_is_reused() {
        let mut map = SlabMap::<&str, u32>::new();
        let (a, none) = map.insert("a", 1);
        assert_eq!(none, None);
        let (b, _) = map.insert("b", 2);
        assert_eq!(map.insert("a", 3), (a, Some(1)), "an update keeps the id");
        assert_eq!((map.get(&"a"), map.at(b)), (Some(&3), Some((&"b", &2))));
        assert_eq!(map.remove(&"a"), Some((a, 3)));
        assert_eq!((map.get(&"a"), map.at(a), map.len()), (None, None, 1));
        let (c, _) = map.insert("c", 4);
        assert_eq!(c, a, "the freed slot is filled first");
        assert_eq!((map.get(&"c"), map.get(&"a")), (Some(&4), None));
        assert_eq!(map.remove(&"a"), None);
    }

    proptest::proptest! {
        /// Whatever the order of inserts, updates and removes, the map
        /// answers as a `BTreeMap` does, and ids name their key's entry.
        #[test]
        fn answers_as_a_map_does(ops in proptest::collection::vec((0..40u32, proptest::option::of(0..1000u32)), 1..300)) {
            let mut map = SlabMap::<u32, u32>::new();
            let mut model = BTreeMap::new();
            for (key, value) in ops {
                match value {
                    Some(v) => proptest::prop_assert_eq!(map.insert(key, v).1, model.insert(key, v)),
                    None => proptest::prop_assert_eq!(map.remove(&key).map(|(_, v)| v), model.remove(&key)),
                }
                let mut held: Vec<(u32, u32)> = map.iter().map(|(_, k, v)| (*k, *v)).collect();
                held.sort();
                proptest::prop_assert_eq!(&held, &model.iter().map(|(k, v)| (*k, *v)).collect::<Vec<_>>());
                proptest::prop_assert_eq!(map.len(), model.len());
                for (k, v) in &model {
                    let id = map.id(k).expect("an id");
                    proptest::prop_assert_eq!(map.at(id), Some((k, v)));
                }
            }
        }
    }
}
