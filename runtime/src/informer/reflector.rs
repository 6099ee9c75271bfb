//! Watcher events in, cache changes and handler notifications out.
//!
//! `kube::runtime::watcher` does the API calls (paginated list, watch from
//! a resourceVersion, resume after a dropped connection, relist after
//! `410 Gone`) and reports them as `Init`, `InitApply`, `InitDone`,
//! `Apply` and `Delete` events. This module turns each event into changes
//! of the [`Cache`] and the notifications handlers must see, as client-go's
//! `DeltaFIFO.Replace` + `processDeltas` do together:
//!
//! - an object not cached -> stored, `Add`;
//! - an object cached with another resourceVersion -> replaced,
//!   `Update(old, new)`;
//! - an object cached with the same resourceVersion -> nothing (a relist or
//!   a replayed event repeating what the cache holds);
//! - a watch deletion of a cached object -> removed, `Delete(final state)`;
//! - at the end of a (re)list, every cached object the list did not name ->
//!   removed, `Delete(last cached state)`.
//!
//! So a relist delivers exactly the differences between the cache and the
//! server. It is a plain synchronous state machine with no I/O: the
//! informer (`informer.rs`) feeds it and distributes what it returns.

use std::collections::HashSet;
use std::sync::Arc;

use kcm_objects::Cached;
use kube::runtime::watcher;

use super::handler::Notification;
use super::store::{Cache, key_of};

/// Where the reflector stands in the watcher's protocol.
#[derive(Debug, Default)]
pub(crate) enum State {
    /// No list in progress: the next `Apply` or `Delete` is applied as it
    /// comes; the next `Init` starts a list (`Listing`).
    #[default]
    Watching,
    /// A (re)list is in progress: each `InitApply` is applied as it comes
    /// (so the first list fills the cache progressively, as upstream) and
    /// its key remembered. `InitDone` deletes every cached key not listed
    /// and returns to `Watching`; another `Init` (the watcher restarted the
    /// list after an error) starts over with no key remembered.
    Listing {
        /// Keys named by the list so far.
        listed: HashSet<String>,
    },
}

/// What one event did.
pub(crate) struct Step<K> {
    /// Notifications for every handler, in order.
    pub(crate) notifications: Vec<Notification<K>>,
    /// Whether a list completed (the cache now matches a full list).
    pub(crate) listed: bool,
}

impl State {
    /// Applies one watcher event to `cache`, returning what changed and the
    /// next state.
    pub(crate) fn step<K: Cached>(self, cache: &mut Cache<K>, event: watcher::Event<K>) -> (Step<K>, State) {
        let mut notifications = Vec::new();
        let mut listed = false;
        let next = match (self, event) {
            (_, watcher::Event::Init) => State::Listing { listed: HashSet::new() },
            (State::Listing { mut listed }, watcher::Event::InitApply(obj) | watcher::Event::Apply(obj)) => {
                let key = key_of(&obj);
                notifications.extend(upsert(cache, &key, obj));
                listed.insert(key);
                State::Listing { listed }
            }
            (State::Watching, watcher::Event::InitApply(obj) | watcher::Event::Apply(obj)) => {
                notifications.extend(upsert(cache, &key_of(&obj), obj));
                State::Watching
            }
            (State::Listing { mut listed }, watcher::Event::Delete(obj)) => {
                let key = key_of(&obj);
                notifications.extend(remove(cache, &key, obj));
                listed.remove(&key);
                State::Listing { listed }
            }
            (State::Watching, watcher::Event::Delete(obj)) => {
                notifications.extend(remove(cache, &key_of(&obj), obj));
                State::Watching
            }
            (State::Listing { listed: seen }, watcher::Event::InitDone) => {
                let gone: Vec<String> =
                    cache.iter().map(|obj| key_of(&**obj)).filter(|key| !seen.contains(key)).collect();
                notifications.extend(gone.iter().filter_map(|key| cache.remove(key)).map(Notification::Delete));
                listed = true;
                State::Watching
            }
            // The watcher sends InitDone only after Init; tolerate a stray one.
            (State::Watching, watcher::Event::InitDone) => State::Watching,
        };
        (Step { notifications, listed }, next)
    }
}

/// Stores `obj` under `key` unless the cache holds that very version.
fn upsert<K: Cached>(cache: &mut Cache<K>, key: &str, obj: K) -> Option<Notification<K>> {
    if let Some(cached) = cache.get(key)
        && cached.resource_version() == obj.resource_version()
    {
        return None;
    }
    let new = Arc::new(obj);
    Some(match cache.insert(new.clone()) {
        Some(old) => Notification::Update { old, new },
        None => Notification::Add(new),
    })
}

/// Removes `key`, reporting `last` (the deletion's final state) if it was
/// cached. A deletion of an object never cached is not reported: handlers
/// never saw it.
fn remove<K: Cached>(cache: &mut Cache<K>, key: &str, last: K) -> Option<Notification<K>> {
    cache.remove(key).map(|_| Notification::Delete(Arc::new(last)))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::api::ObjectMeta;
    use proptest::prelude::*;

    use super::*;

    fn cm(name: &str, rv: u32) -> ConfigMap {
        ConfigMap {
            metadata: ObjectMeta {
                namespace: Some("ns".into()),
                name: Some(name.into()),
                resource_version: Some(rv.to_string()),
                ..ObjectMeta::default()
            },
            ..ConfigMap::default()
        }
    }

    fn rv(obj: &ConfigMap) -> u32 {
        obj.metadata.resource_version.as_deref().unwrap_or_default().parse().unwrap()
    }

    /// A notification as (kind, key, old rv, new rv).
    type Seen = (&'static str, String, u32, u32);

    /// Feeds events, returning the notifications, the next state and
    /// whether a list completed.
    fn run(
        state: State,
        cache: &mut Cache<ConfigMap>,
        events: Vec<watcher::Event<ConfigMap>>,
    ) -> (Vec<Seen>, State, bool) {
        let mut out = Vec::new();
        let mut state = state;
        let mut listed = false;
        for event in events {
            let (step, next) = state.step(cache, event);
            state = next;
            listed |= step.listed;
            for n in step.notifications {
                out.push(match n {
                    Notification::Add(o) => ("add", key_of(&*o), 0, rv(&o)),
                    Notification::Update { old, new } => ("update", key_of(&*new), rv(&old), rv(&new)),
                    Notification::Delete(o) => ("delete", key_of(&*o), rv(&o), 0),
                    Notification::InitialListDelivered => unreachable!(),
                });
            }
        }
        (out, state, listed)
    }

    fn relist(objects: Vec<ConfigMap>) -> Vec<watcher::Event<ConfigMap>> {
        let mut events = vec![watcher::Event::Init];
        events.extend(objects.into_iter().map(watcher::Event::InitApply));
        events.push(watcher::Event::InitDone);
        events
    }

    #[test]
    fn a_relist_delivers_only_the_differences() {
        let mut cache = Cache::new();
        let (out, state, listed) = run(State::default(), &mut cache, relist(vec![cm("a", 1), cm("b", 2), cm("c", 3)]));
        assert!(listed);
        assert_eq!(out.len(), 3);
        let (out, _, _) = run(state, &mut cache, relist(vec![cm("a", 1), cm("b", 5), cm("d", 6)]));
        assert_eq!(
            out,
            [("update", "ns/b".into(), 2, 5), ("add", "ns/d".into(), 0, 6), ("delete", "ns/c".into(), 3, 0)]
        );
    }

    #[test]
    fn a_restarted_list_forgets_what_the_aborted_one_named() {
        let mut cache = Cache::new();
        let (_, state, _) = run(State::default(), &mut cache, relist(vec![cm("a", 1), cm("b", 2)]));
        // The list is cut after "a", restarted, and "a" is gone by then.
        let events = vec![
            watcher::Event::Init,
            watcher::Event::InitApply(cm("a", 1)),
            watcher::Event::Init,
            watcher::Event::InitApply(cm("b", 2)),
            watcher::Event::InitDone,
        ];
        let (out, _, _) = run(state, &mut cache, events);
        assert_eq!(out, [("delete", "ns/a".into(), 1, 0)]);
    }

    #[test]
    fn watch_events_repeating_the_cache_are_dropped_and_unknown_deletes_ignored() {
        let mut cache = Cache::new();
        let events = vec![
            watcher::Event::Apply(cm("a", 1)),
            watcher::Event::Apply(cm("a", 1)),
            watcher::Event::Apply(cm("a", 2)),
            watcher::Event::Delete(cm("a", 3)),
            watcher::Event::Delete(cm("a", 3)),
            watcher::Event::Delete(cm("z", 4)),
        ];
        let (out, _, listed) = run(State::Watching, &mut cache, events);
        assert!(!listed);
        assert_eq!(
            out,
            [("add", "ns/a".into(), 0, 1), ("update", "ns/a".into(), 1, 2), ("delete", "ns/a".into(), 3, 0)]
        );
    }

    proptest! {
        /// Whatever the cache held, a relist brings it to exactly the listed
        /// state, and the notifications, applied to what handlers had seen,
        /// give that same state, with nothing said about unchanged objects.
        #[test]
        fn relists_deliver_exactly_the_differences(
            before in proptest::collection::btree_map(0u8..20, 1u32..4, 0..15),
            after in proptest::collection::btree_map(0u8..20, 1u32..4, 0..15),
        ) {
            let name = |n: &u8| format!("o{n}");
            let mut cache = Cache::new();
            let (_, state, _) = run(State::default(), &mut cache, relist(before.iter().map(|(n, v)| cm(&name(n), *v)).collect()));
            let mut seen: BTreeMap<String, u32> = before.iter().map(|(n, v)| (format!("ns/{}", name(n)), *v)).collect();
            let (out, _, listed) = run(state, &mut cache, relist(after.iter().map(|(n, v)| cm(&name(n), *v)).collect()));
            prop_assert!(listed);
            for (kind, key, old, new) in out {
                match kind {
                    "add" => prop_assert!(seen.insert(key, new).is_none()),
                    "update" => {
                        prop_assert_ne!(old, new);
                        prop_assert_eq!(seen.insert(key, new), Some(old));
                    }
                    _ => prop_assert_eq!(seen.remove(&key), Some(old)),
                }
            }
            let want: BTreeMap<String, u32> = after.iter().map(|(n, v)| (format!("ns/{}", name(n)), *v)).collect();
            prop_assert_eq!(&seen, &want);
            let cached: BTreeMap<String, u32> = cache.iter().map(|o| (key_of(&**o), rv(o))).collect();
            prop_assert_eq!(&cached, &want);
        }
    }
}
