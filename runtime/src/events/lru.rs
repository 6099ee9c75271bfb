//! A map that forgets its least recently used entry beyond a capacity, so
//! that the correlator's memory stays bounded however many objects events
//! are about.

use std::collections::{BTreeMap, HashMap};

/// A map that forgets its least recently used entry beyond a capacity
/// (upstream uses groupcache's `lru.Cache`).
#[derive(Debug)]
pub(super) struct Lru<V> {
    capacity: usize,
    /// Value and last use of each key.
    entries: HashMap<String, (V, u64)>,
    /// Keys by last use, oldest first.
    order: BTreeMap<u64, String>,
    /// Use counter.
    tick: u64,
}

impl<V> Lru<V> {
    pub(super) fn new(capacity: usize) -> Self {
        Lru { capacity: capacity.max(1), entries: HashMap::new(), order: BTreeMap::new(), tick: 0 }
    }

    /// Marks `key` used now; `None` if it is absent.
    fn touch(&mut self, key: &str) -> Option<()> {
        let (_, used) = self.entries.get_mut(key)?;
        self.tick += 1;
        let previous = std::mem::replace(used, self.tick);
        if let Some(k) = self.order.remove(&previous) {
            self.order.insert(self.tick, k);
        }
        Some(())
    }

    pub(super) fn get(&mut self, key: &str) -> Option<&V> {
        self.touch(key)?;
        self.entries.get(key).map(|(v, _)| v)
    }

    pub(super) fn get_or_insert_with(&mut self, key: String, make: impl FnOnce() -> V) -> &mut V {
        if self.touch(&key).is_none() {
            self.make_room();
            self.tick += 1;
            self.order.insert(self.tick, key.clone());
        }
        let tick = self.tick;
        &mut self.entries.entry(key).or_insert_with(|| (make(), tick)).0
    }

    pub(super) fn insert(&mut self, key: String, value: V) {
        if self.touch(&key).is_some() {
            if let Some(slot) = self.entries.get_mut(&key) {
                slot.0 = value;
            }
            return;
        }
        self.make_room();
        self.tick += 1;
        self.order.insert(self.tick, key.clone());
        self.entries.insert(key, (value, self.tick));
    }

    /// Forgets the least recently used entries until one more fits.
    fn make_room(&mut self) {
        while self.entries.len() >= self.capacity {
            let Some((_, oldest)) = self.order.pop_first() else { break };
            self.entries.remove(&oldest);
        }
    }

    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.entries.len()
    }
}
