//! "Has synced" signals, and waiting on them.
//!
//! An informer has synced once its first full list is in its store; a
//! handler registration has synced once that list's adds have been
//! delivered to it. Controllers start their workers only when everything
//! they read has synced (client-go's `WaitForCacheSync`); see
//! [`SharedInformerFactory::wait_for_cache_sync`](super::SharedInformerFactory::wait_for_cache_sync).

use std::fmt;

use tokio::sync::watch;

/// A cheap, cloneable view of one "has synced" flag. It only ever goes
/// from false to true.
#[derive(Clone)]
pub struct SyncSignal(watch::Receiver<bool>);

impl fmt::Debug for SyncSignal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("SyncSignal").field(&self.is_synced()).finish()
    }
}

impl SyncSignal {
    /// A signal that reads `true` once whoever holds the sender has synced.
    pub fn new(rx: watch::Receiver<bool>) -> Self {
        SyncSignal(rx)
    }

    /// Whether it has synced.
    pub fn is_synced(&self) -> bool {
        *self.0.borrow()
    }

    /// Waits until it has synced. Returns false if it never can (its
    /// informer is gone).
    pub async fn synced(mut self) -> bool {
        self.0.wait_for(|&synced| synced).await.is_ok()
    }
}

/// Something that syncs: an informer, its store, or a handler
/// registration (client-go's `InformerSynced` functions).
#[doc(alias = "InformerSynced")]
pub trait HasSynced {
    /// Its sync signal.
    fn sync_signal(&self) -> SyncSignal;

    /// Whether it has synced.
    fn has_synced(&self) -> bool {
        self.sync_signal().is_synced()
    }
}

impl HasSynced for SyncSignal {
    fn sync_signal(&self) -> SyncSignal {
        self.clone()
    }
}
