//! Watches that record every state of the objects they see, to check an
//! order of events after the fact (resourceVersions, not wall time).

use std::sync::{Arc, Mutex};

use futures::TryStreamExt;
use kube::Api;
use kube::api::{ApiResource, DynamicObject};
use kube::runtime::watcher;
use kube_sim::testing::wait_for;
use serde::de::DeserializeOwned;

use super::{Env, PATIENCE};

/// One state a watch reported.
#[derive(Debug, Clone)]
pub struct Seen {
    /// The resourceVersion of this state.
    pub rv: u64,
    /// This is the object's deletion.
    pub deleted: bool,
    /// The object as reported.
    pub object: DynamicObject,
}

impl Seen {
    /// The object's uid.
    pub fn uid(&self) -> &str {
        self.object.metadata.uid.as_deref().unwrap_or_default()
    }

    /// The object as `K`.
    pub fn typed<K: DeserializeOwned>(&self) -> K {
        serde_json::to_value(&self.object).and_then(serde_json::from_value).expect("a valid object")
    }
}

/// Every state the watches of some resource types report, in the order
/// each watch reports them (kube-sim's resourceVersions are global, as
/// etcd's revisions: they order states across types).
pub struct Recorder {
    seen: Arc<Mutex<Vec<Seen>>>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Recorder {
    /// Starts watching `resources` in every namespace; returns once each
    /// has listed.
    pub async fn start(env: &Env, resources: &[ApiResource]) -> Self {
        let apis = resources.iter().map(|r| Api::all_with(env.client.clone(), r)).collect();
        Self::watch(apis).await
    }

    /// Starts watching `apis`; returns once each has listed.
    pub async fn watch(apis: Vec<Api<DynamicObject>>) -> Self {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let mut tasks = Vec::new();
        for api in apis {
            let (out, (listed_tx, listed_rx)) = (seen.clone(), tokio::sync::oneshot::channel());
            tasks.push(tokio::spawn(async move {
                let stream = watcher(api, watcher::Config::default());
                futures::pin_mut!(stream);
                let mut listed = Some(listed_tx);
                while let Ok(Some(event)) = stream.try_next().await {
                    let (object, deleted) = match event {
                        watcher::Event::InitApply(o) | watcher::Event::Apply(o) => (o, false),
                        watcher::Event::Delete(o) => (o, true),
                        watcher::Event::InitDone => {
                            if let Some(tx) = listed.take() {
                                let _ = tx.send(());
                            }
                            continue;
                        }
                        watcher::Event::Init => continue,
                    };
                    let rv = object.metadata.resource_version.as_deref().and_then(|v| v.parse().ok()).unwrap_or(0);
                    out.lock().expect("lock").push(Seen { rv, deleted, object });
                }
            }));
            listed_rx.await.expect("the watch lists");
        }
        Recorder { seen, tasks }
    }

    /// Every state seen so far.
    pub fn all(&self) -> Vec<Seen> {
        self.seen.lock().expect("lock").clone()
    }

    /// The states of the object `uid` seen so far, deletion included.
    pub fn states(&self, uid: &str) -> Vec<Seen> {
        self.seen.lock().expect("lock").iter().filter(|s| s.uid() == uid).cloned().collect()
    }

    /// The version `uid` was deleted at.
    pub fn deleted_at(&self, uid: &str) -> Option<u64> {
        self.states(uid).iter().find(|s| s.deleted).map(|s| s.rv)
    }

    /// Waits until the watches reported the deletion of every one of `uids`
    /// (they may lag the reads of the test).
    pub async fn deletions(&self, env: &Env, uids: &[String]) {
        wait_for(&env.cluster, PATIENCE, "the watches to report the deletions", || async {
            let missing = uids.iter().filter(|u| self.deleted_at(u).is_none()).count();
            if missing == 0 { Ok(()) } else { Err(format!("{missing} deletions not reported yet")) }
        })
        .await;
    }

    /// Every state of the objects named `name` (any uid).
    pub fn named<K: DeserializeOwned>(&self, name: &str) -> Vec<(u64, K)> {
        let seen = self.seen.lock().expect("lock");
        seen.iter().filter(|s| s.object.metadata.name.as_deref() == Some(name)).map(|s| (s.rv, s.typed())).collect()
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        self.tasks.iter().for_each(|t| t.abort());
    }
}

/// Asserts the foreground contract: `owner` was held with a
/// deletionTimestamp and `foregroundDeletion` before the first of
/// `dependents` went, and went only after every one of them.
pub fn assert_foreground(recorder: &Recorder, owner: &str, dependents: &[String]) {
    let owner_gone = recorder.deleted_at(owner).expect("the owner's deletion was seen");
    let mut first_gone = u64::MAX;
    for d in dependents {
        let at = recorder.deleted_at(d).unwrap_or_else(|| panic!("the deletion of dependent {d} was seen"));
        assert!(at < owner_gone, "dependent {d} went at {at}, after its owner {owner} (at {owner_gone})");
        first_gone = first_gone.min(at);
    }
    let held = recorder.states(owner).iter().any(|s| {
        let m = &s.object.metadata;
        s.rv < first_gone
            && m.deletion_timestamp.is_some()
            && m.finalizers.iter().flatten().any(|f| f == "foregroundDeletion")
    });
    assert!(held, "{owner} was never seen held by foregroundDeletion before its dependents went");
}
