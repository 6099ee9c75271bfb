//! Owners verified absent (upstream `ReferenceCache`, the
//! `absentOwnerCache`): a bounded least-recently-used set, so that many
//! dependents of one deleted owner cost one live lookup, not one each.

use std::collections::HashMap;

use super::Identity;

/// Upstream's size of the absent-owner cache.
pub const ABSENT_OWNER_CACHE_SIZE: usize = 500;

/// A least-recently-used set of identities.
#[derive(Debug)]
pub struct AbsentOwnerCache {
    /// Entry -> when it was last added or found.
    entries: HashMap<Identity, u64>,
    /// Bumped on every use.
    clock: u64,
    /// Most entries kept.
    capacity: usize,
}

impl Default for AbsentOwnerCache {
    fn default() -> Self {
        Self::new(ABSENT_OWNER_CACHE_SIZE)
    }
}

impl AbsentOwnerCache {
    /// An empty cache of at most `capacity` entries.
    pub fn new(capacity: usize) -> Self {
        AbsentOwnerCache { entries: HashMap::new(), clock: 0, capacity: capacity.max(1) }
    }

    /// Records `identity` as absent, evicting the least recently used
    /// entry if full.
    pub fn add(&mut self, identity: Identity) {
        self.clock += 1;
        if !self.entries.contains_key(&identity)
            && self.entries.len() >= self.capacity
            && let Some(oldest) = self.entries.iter().min_by_key(|(_, used)| **used).map(|(k, _)| k.clone())
        {
            self.entries.remove(&oldest);
        }
        self.entries.insert(identity, self.clock);
    }

    /// Whether `identity` is recorded absent (a hit counts as a use).
    pub fn contains(&mut self, identity: &Identity) -> bool {
        self.clock += 1;
        match self.entries.get_mut(identity) {
            Some(used) => {
                *used = self.clock;
                true
            }
            None => false,
        }
    }

    /// Entries held.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(name: &str) -> Identity {
        Identity { name: name.into(), ..Identity::default() }
    }

    #[test]
    fn the_least_recently_used_entry_goes_first() {
        let mut cache = AbsentOwnerCache::new(2);
        cache.add(id("a"));
        cache.add(id("b"));
        assert!(cache.contains(&id("a")));
        cache.add(id("c"));
        assert!(cache.contains(&id("a")));
        assert!(!cache.contains(&id("b")));
        assert!(cache.contains(&id("c")));
        assert_eq!(cache.len(), 2);
    }
}
