//! A small map whose entries expire: the decision caches of delegated
//! authentication and authorization (upstream's token cache and the
//! webhook authorizer's cache, each entry kept for its own TTL). Time is
//! `tokio::time`, so tests run it on a paused clock.
//!
//! Expired entries are dropped when met, and all of them whenever the map
//! has grown past [`SWEEP_AT`] entries since the last sweep, so a flood of
//! distinct tokens cannot grow it without bound between sweeps.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

/// Entries held before expired ones are swept out.
const SWEEP_AT: usize = 4096;

/// A map of values, each valid until its own deadline.
#[derive(Debug)]
pub struct TtlCache<K, V> {
    entries: Mutex<HashMap<K, (V, Instant)>>,
}

impl<K: Eq + Hash, V: Clone> Default for TtlCache<K, V> {
    fn default() -> Self {
        TtlCache { entries: Mutex::new(HashMap::new()) }
    }
}

impl<K: Eq + Hash, V: Clone> TtlCache<K, V> {
    /// The value for `key`, unless absent or expired.
    pub fn get(&self, key: &K) -> Option<V> {
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        match entries.get(key) {
            Some((value, until)) if Instant::now() < *until => Some(value.clone()),
            Some(_) => {
                entries.remove(key);
                None
            }
            None => None,
        }
    }

    /// Keeps `value` for `ttl` (a zero TTL keeps nothing).
    pub fn insert(&self, key: K, value: V, ttl: Duration) {
        if ttl.is_zero() {
            return;
        }
        let now = Instant::now();
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        if entries.len() >= SWEEP_AT {
            entries.retain(|_, (_, until)| now < *until);
        }
        entries.insert(key, (value, now + ttl));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn an_entry_lives_for_its_ttl() {
        let cache = TtlCache::default();
        cache.insert("allowed", true, Duration::from_secs(10));
        cache.insert("denied", false, Duration::from_secs(2));
        cache.insert("never", true, Duration::ZERO);
        assert_eq!(cache.get(&"allowed"), Some(true));
        assert_eq!(cache.get(&"denied"), Some(false));
        assert_eq!(cache.get(&"never"), None);
        tokio::time::advance(Duration::from_secs(2)).await;
        assert_eq!(cache.get(&"denied"), None, "expired at its own TTL");
        assert_eq!(cache.get(&"allowed"), Some(true));
        tokio::time::advance(Duration::from_secs(8)).await;
        assert_eq!(cache.get(&"allowed"), None);
    }
}
