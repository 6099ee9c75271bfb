//! Event handlers and their delivery.
//!
//! A controller registers an [`EventHandler`] on an informer; the informer
//! hands each handler its own copy of every [`Notification`] (`Arc`
//! clones: the objects themselves are shared) through an unbounded channel
//! drained by a task of its own. So, as client-go's `processorListener`:
//! calls to one handler are sequential and in the informer's order,
//! handlers are independent of each other, and a slow handler only grows
//! its own backlog.
//!
//! Handlers should be quick and level-based (typically: compute a key,
//! add it to a workqueue). A relist may replay a state the handler has
//! seen before as an update whose old and new objects differ, and a
//! periodic resync re-delivers `update(obj, obj)`.
//!
//! This module owns delivery; what is delivered, and when, is decided by
//! the informer (`informer.rs`) and the reflector (`reflector.rs`).

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{mpsc, watch};

use super::synced::{HasSynced, SyncSignal};

/// Shortest resync period honoured: shorter ones are raised to it, as
/// client-go's `minimumResyncPeriod`.
pub const MIN_RESYNC_PERIOD: Duration = Duration::from_secs(1);

/// Receives an informer's changes (client-go's `ResourceEventHandler`).
///
/// Every method has an empty default, so a handler implements only what it
/// needs. Calls to one handler never overlap.
#[doc(alias = "ResourceEventHandler")]
pub trait EventHandler<K>: Send + Sync + 'static {
    /// An object appeared in the cache (or, for a handler added after the
    /// informer started, was already there).
    fn on_add(&self, obj: &Arc<K>) {
        let _ = obj;
    }

    /// An object changed: `old` is the state last delivered for it, `new`
    /// the state now cached. On a periodic resync both are the same object.
    fn on_update(&self, old: &Arc<K>, new: &Arc<K>) {
        let _ = (old, new);
    }

    /// An object left the cache. `last_known` is its final state when the
    /// watch reported the deletion, or the last cached state when a relist
    /// found it gone (client-go wraps that case in a
    /// `DeletedFinalStateUnknown`; here it is the object itself).
    fn on_delete(&self, last_known: &Arc<K>) {
        let _ = last_known;
    }
}

/// One change, as delivered to a handler (client-go's `addNotification`,
/// `updateNotification`, `deleteNotification`).
pub(crate) enum Notification<K> {
    /// `on_add`.
    Add(Arc<K>),
    /// `on_update`.
    Update {
        /// Previous state.
        old: Arc<K>,
        /// Current state.
        new: Arc<K>,
    },
    /// `on_delete`.
    Delete(Arc<K>),
    /// Not a change: every notification of the informer's initial list (or
    /// the synthetic adds of a late handler) has been queued before this
    /// marker, so once it is reached the handler has synced.
    InitialListDelivered,
}

impl<K> Clone for Notification<K> {
    fn clone(&self) -> Self {
        match self {
            Notification::Add(obj) => Notification::Add(obj.clone()),
            Notification::Update { old, new } => Notification::Update { old: old.clone(), new: new.clone() },
            Notification::Delete(obj) => Notification::Delete(obj.clone()),
            Notification::InitialListDelivered => Notification::InitialListDelivered,
        }
    }
}

impl<K> fmt::Debug for Notification<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Notification::Add(_) => "Add",
            Notification::Update { .. } => "Update",
            Notification::Delete(_) => "Delete",
            Notification::InitialListDelivered => "InitialListDelivered",
        })
    }
}

/// The resync period honoured for a requested one: `None` or zero means no
/// resync, anything below [`MIN_RESYNC_PERIOD`] is raised to it.
pub(crate) fn effective_resync(requested: Option<Duration>) -> Option<Duration> {
    requested.filter(|p| !p.is_zero()).map(|p| p.max(MIN_RESYNC_PERIOD))
}

/// The informer's side of one registered handler.
pub(crate) struct Listener<K> {
    /// Identifies the registration (for its resync task).
    pub(crate) id: u64,
    /// Feeds the handler's delivery task. Unbounded so that the informer
    /// never waits on a handler.
    tx: mpsc::UnboundedSender<Notification<K>>,
    /// Resync period, if the handler asked for one.
    pub(crate) resync: Option<Duration>,
    /// Whether the [`Notification::InitialListDelivered`] marker is still
    /// to be queued (the informer has not listed yet).
    pub(crate) awaiting_initial_list: bool,
    /// What the delivery task needs, until the informer starts and spawns
    /// it (so handlers can be registered outside a runtime).
    pending: Option<Delivery<K>>,
}

/// A handler's delivery task, before it is spawned.
struct Delivery<K> {
    handler: Arc<dyn EventHandler<K>>,
    rx: mpsc::UnboundedReceiver<Notification<K>>,
    synced: watch::Sender<bool>,
}

impl<K: Send + Sync + 'static> Listener<K> {
    /// A listener for `handler`, and the registration handed to its owner.
    pub(crate) fn new(
        id: u64,
        handler: Arc<dyn EventHandler<K>>,
        resync: Option<Duration>,
    ) -> (Listener<K>, HandlerRegistration) {
        let (tx, rx) = mpsc::unbounded_channel();
        let (synced, synced_rx) = watch::channel(false);
        let listener = Listener {
            id,
            tx,
            resync: effective_resync(resync),
            awaiting_initial_list: true,
            pending: Some(Delivery { handler, rx, synced }),
        };
        (listener, HandlerRegistration { synced: SyncSignal::new(synced_rx) })
    }

    /// Queues a notification. A handler whose task has ended (shutdown)
    /// simply gets nothing more.
    pub(crate) fn send(&self, notification: Notification<K>) {
        let _ = self.tx.send(notification);
    }

    /// Queues the end-of-initial-list marker, once.
    pub(crate) fn initial_list_delivered(&mut self) {
        if std::mem::take(&mut self.awaiting_initial_list) {
            self.send(Notification::InitialListDelivered);
        }
    }

    /// Spawns the delivery task, unless it runs already.
    pub(crate) fn spawn(&mut self, shutdown: watch::Receiver<bool>) {
        if let Some(delivery) = self.pending.take() {
            tokio::spawn(deliver(delivery, shutdown));
        }
    }
}

/// Calls the handler for each queued notification, in order, until
/// shutdown.
async fn deliver<K: Send + Sync + 'static>(delivery: Delivery<K>, mut shutdown: watch::Receiver<bool>) {
    let Delivery { handler, mut rx, synced } = delivery;
    let stopped = shutdown.wait_for(|&stop| stop);
    tokio::pin!(stopped);
    loop {
        let notification = tokio::select! {
            biased;
            _ = &mut stopped => return,
            n = rx.recv() => match n {
                Some(n) => n,
                None => return,
            },
        };
        match notification {
            Notification::Add(obj) => handler.on_add(&obj),
            Notification::Update { old, new } => handler.on_update(&old, &new),
            Notification::Delete(obj) => handler.on_delete(&obj),
            Notification::InitialListDelivered => {
                synced.send_replace(true);
            }
        }
    }
}

/// A handler's registration on an informer (client-go's
/// `ResourceEventHandlerRegistration`): tells when the handler has synced,
/// that is when every add of the informer's initial list (or, for a handler
/// added later, of the cache as it was) has been delivered to it.
#[derive(Debug, Clone)]
pub struct HandlerRegistration {
    synced: SyncSignal,
}

impl HandlerRegistration {
    /// Whether the handler has received its initial adds.
    pub fn handler_synced(&self) -> bool {
        self.synced.is_synced()
    }
}

impl HasSynced for HandlerRegistration {
    fn sync_signal(&self) -> SyncSignal {
        self.synced.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resync_periods_are_clamped_as_upstream() {
        assert_eq!(effective_resync(None), None);
        assert_eq!(effective_resync(Some(Duration::ZERO)), None);
        assert_eq!(effective_resync(Some(Duration::from_millis(10))), Some(MIN_RESYNC_PERIOD));
        assert_eq!(effective_resync(Some(Duration::from_secs(300))), Some(Duration::from_secs(300)));
    }
}
