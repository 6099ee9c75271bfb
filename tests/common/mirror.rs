//! A watch mirrored into a checker's state: the objects of one kind by
//! name, kept as the watch (and its relists) shows them, with the
//! checker's judgement run after every event once the list is complete.
//! The rollout checkers of the Deployment and DaemonSet scenarios follow
//! their watches with it.

use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, Mutex};

use futures::TryStreamExt;
use kube::api::Api;
use kube::runtime::{WatchStreamExt, watcher};
use tokio::sync::oneshot;

/// A checker state holding the mirrored objects of kind `K`.
pub trait Holds<K> {
    /// The objects, by name.
    fn held(&mut self) -> &mut BTreeMap<String, K>;
    /// Judges the state after the event described by `what`.
    fn judge(&mut self, what: &str);
}

/// Follows `api`'s watch into `state` until the stream ends; `listed`
/// fires once the first list is complete.
pub async fn follow<K, S>(api: Api<K>, config: watcher::Config, state: Arc<Mutex<S>>, listed: oneshot::Sender<()>)
where
    K: kube::Resource<DynamicType = ()> + Clone + std::fmt::Debug + serde::de::DeserializeOwned + Send + 'static,
    S: Holds<K>,
{
    let stream = watcher(api, config).default_backoff();
    futures::pin_mut!(stream);
    let mut listed = Some(listed);
    let mut listing: Option<HashSet<String>> = None;
    let kind = K::kind(&());
    loop {
        // A failed watch is resumed (or relisted) by the watcher itself.
        let event = match stream.try_next().await {
            Ok(Some(event)) => event,
            Ok(None) => return,
            Err(_) => continue,
        };
        let mut s = state.lock().expect("lock");
        let what = match event {
            watcher::Event::Init => {
                listing = Some(HashSet::new());
                continue;
            }
            watcher::Event::InitApply(o) => {
                let name = o.meta().name.clone().unwrap_or_default();
                if let Some(names) = &mut listing {
                    names.insert(name.clone());
                }
                s.held().insert(name, o);
                continue;
            }
            watcher::Event::InitDone => {
                if let Some(names) = listing.take() {
                    s.held().retain(|n, _| names.contains(n));
                }
                if let Some(tx) = listed.take() {
                    let _ = tx.send(());
                }
                format!("{kind}s relisted")
            }
            watcher::Event::Apply(o) => {
                let what = describe(&kind, "changed", &o);
                s.held().insert(o.meta().name.clone().unwrap_or_default(), o);
                what
            }
            watcher::Event::Delete(o) => {
                let what = describe(&kind, "deleted", &o);
                s.held().remove(o.meta().name.as_deref().unwrap_or_default());
                what
            }
        };
        s.judge(&what);
    }
}

fn describe<K: kube::Resource>(kind: &str, how: &str, o: &K) -> String {
    let meta = o.meta();
    format!(
        "{kind} {} {how} (resourceVersion {})",
        meta.name.as_deref().unwrap_or_default(),
        meta.resource_version.as_deref().unwrap_or_default()
    )
}
