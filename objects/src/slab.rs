//! [`SlabMap`]: a hash map whose entries sit in a dense slab, each named by
//! a 4-byte [`SlotId`].
//!
//! The caches with an entry per object (the informer stores, the garbage
//! collector's graph) hold over a hundred thousand entries. A std
//! `HashMap` keeps its entries in its buckets, about half of which are
//! empty at any moment, each as large as an entry. Here the buckets hold
//! ids (4 bytes) and the entries a vector, so an empty bucket costs 4
//! bytes; and what must name an entry from elsewhere (an index set) can
//! hold its id instead of a copy of the key.

use std::borrow::Borrow;
use std::fmt;
use std::hash::{BuildHasher, Hash, RandomState};

use hashbrown::HashTable;

/// Where an entry sits in a [`SlabMap`]. Stable while the entry stays; a
/// removed entry's id is given to a later one.
pub type SlotId = u32;

/// A map of `K` to `V`, entries in a slab (see the module).
pub struct SlabMap<K, V> {
    /// The entries; `None` where one was removed.
    slots: Vec<Option<(K, V)>>,
    /// Ids of the empty slots, filled before the slab grows.
    free: Vec<SlotId>,
    /// The ids of the occupied slots, hashed and compared by their key.
    ids: HashTable<SlotId>,
    /// The hasher of the keys.
    hasher: RandomState,
}

impl<K, V> Default for SlabMap<K, V> {
    fn default() -> Self {
        SlabMap { slots: Vec::new(), free: Vec::new(), ids: HashTable::new(), hasher: RandomState::new() }
    }
}

impl<K: fmt::Debug, V: fmt::Debug> fmt::Debug for SlabMap<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter().map(|(_, k, v)| (k, v))).finish()
    }
}

/// The entry in `slot`, if any.
fn occupant<K, V>(slots: &[Option<(K, V)>], id: SlotId) -> Option<&(K, V)> {
    slots.get(id as usize)?.as_ref()
}

impl<K, V> SlabMap<K, V> {
    /// An empty map.
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
    pub fn at(&self, id: SlotId) -> Option<(&K, &V)> {
        occupant(&self.slots, id).map(|(k, v)| (k, v))
    }

    /// The value of the entry `id` names, to change.
    pub fn at_mut(&mut self, id: SlotId) -> Option<&mut V> {
        Some(&mut self.slots.get_mut(id as usize)?.as_mut()?.1)
    }

    /// Every entry with its id, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (SlotId, &K, &V)> {
        self.slots.iter().zip(0..).filter_map(|(slot, id)| slot.as_ref().map(|(k, v)| (id, k, v)))
    }
}

impl<K: Hash + Eq, V> SlabMap<K, V> {
    /// The id of the entry under `key`.
    pub fn id<Q: Hash + Eq + ?Sized>(&self, key: &Q) -> Option<SlotId>
    where
        K: Borrow<Q>,
    {
        let holds = |id: &SlotId| occupant(&self.slots, *id).is_some_and(|(k, _)| k.borrow() == key);
        self.ids.find(self.hasher.hash_one(key), holds).copied()
    }

    /// Whether an entry is under `key`.
    pub fn contains_key<Q: Hash + Eq + ?Sized>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
    {
        self.id(key).is_some()
    }

    /// The value under `key`.
    pub fn get<Q: Hash + Eq + ?Sized>(&self, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
    {
        Some(self.at(self.id(key)?)?.1)
    }

    /// The value under `key`, to change.
    pub fn get_mut<Q: Hash + Eq + ?Sized>(&mut self, key: &Q) -> Option<&mut V>
    where
        K: Borrow<Q>,
    {
        let id = self.id(key)?;
        self.at_mut(id)
    }

    /// Puts `value` under `key`: the entry's id, and the value it replaces
    /// (the id stays the same when there was one).
    pub fn insert(&mut self, key: K, value: V) -> (SlotId, Option<V>) {
        if let Some(id) = self.id(&key)
            && let Some(held) = self.at_mut(id)
        {
            return (id, Some(std::mem::replace(held, value)));
        }
        let hash = self.hasher.hash_one(&key);
        let id = match self.free.pop() {
            Some(id) => {
                self.slots[id as usize] = Some((key, value));
                id
            }
            None => {
                let id = SlotId::try_from(self.slots.len()).expect("fewer than 2^32 entries");
                self.slots.push(Some((key, value)));
                id
            }
        };
        let (slots, hasher) = (&self.slots, &self.hasher);
        let rehash = |id: &SlotId| occupant(slots, *id).map_or(0, |(k, _)| hasher.hash_one(k));
        self.ids.insert_unique(hash, id, rehash);
        (id, None)
    }

    /// Takes the entry under `key` out: its former id and value.
    pub fn remove<Q: Hash + Eq + ?Sized>(&mut self, key: &Q) -> Option<(SlotId, V)>
    where
        K: Borrow<Q>,
    {
        let slots = &self.slots;
        let holds = |id: &SlotId| occupant(slots, *id).is_some_and(|(k, _)| k.borrow() == key);
        let (id, _) = self.ids.find_entry(self.hasher.hash_one(key), holds).ok()?.remove();
        let (_, value) = self.slots.get_mut(id as usize)?.take()?;
        self.free.push(id);
        Some((id, value))
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    #[test]
    fn an_entry_keeps_its_id_until_removed_and_its_slot_is_reused() {
        let mut map = SlabMap::<Box<str>, u32>::new();
        let (a, none) = map.insert("a".into(), 1);
        assert_eq!(none, None);
        let (b, _) = map.insert("b".into(), 2);
        assert_eq!(map.insert("a".into(), 3), (a, Some(1)), "an update keeps the id");
        assert_eq!((map.get("a"), map.at(b)), (Some(&3), Some((&"b".into(), &2))));
        assert_eq!(map.remove("a"), Some((a, 3)));
        assert_eq!((map.get("a"), map.at(a), map.len()), (None, None, 1));
        let (c, _) = map.insert("c".into(), 4);
        assert_eq!(c, a, "the freed slot is filled first");
        assert_eq!((map.get("c"), map.get("a")), (Some(&4), None));
        assert_eq!(map.remove("a"), None);
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
