//! Shared informers against kube-sim: one list+watch per type, the store
//! and its indexes, handler delivery (late handlers, resync, sync gating),
//! and no lost or duplicated change under watch drops, compaction (410 and
//! relists) and failing requests.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Pod, PodSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kcm_runtime::informer::{Cached, EventHandler, FactoryConfig, SharedInformerFactory, Store, key_of};
use kube::api::{Api, DeleteParams, ListParams, ObjectMeta, Patch, PatchParams, PostParams};
use kube::{Client, Resource, ResourceExt};
use kube_sim::faults::{FaultRule, FaultSpec};
use kube_sim::testing::wait_for;
use kube_sim::{Sim, SimConfig};
use rand::Rng;
use serde_json::json;

use crate::common::PATIENCE;

// === utils ===

async fn sim() -> Sim {
    Sim::start(SimConfig { nodes: 0, ..SimConfig::default() }).await.expect("kube-sim starts")
}

async fn namespace(client: &Client, name: &str) {
    let ns =
        Namespace { metadata: ObjectMeta { name: Some(name.into()), ..ObjectMeta::default() }, ..Namespace::default() };
    Api::<Namespace>::all(client.clone()).create(&PostParams::default(), &ns).await.expect("namespace created");
}

fn rv<K: Cached>(obj: &K) -> String {
    obj.resource_version().unwrap_or_default().to_owned()
}

/// key -> resourceVersion of what the server holds.
async fn server_state<K>(client: &Client) -> Result<BTreeMap<String, String>, String>
where
    K: Cached + Resource<DynamicType = ()> + serde::de::DeserializeOwned,
{
    let list = Api::<K>::all(client.clone()).list(&ListParams::default()).await.map_err(|e| e.to_string())?;
    Ok(list.items.iter().map(|o| (key_of(o), rv(o))).collect())
}

/// key -> resourceVersion of what a store holds.
fn store_state<K: Cached>(store: &Store<K>) -> BTreeMap<String, String> {
    store.list().iter().map(|o| (key_of(&**o), rv(&**o))).collect()
}

fn request_count(sim: &Sim, verb: &str, resource: &str) -> u64 {
    sim.controls().stats().iter().filter(|l| l.verb == verb && l.resource == resource).map(|l| l.count).sum()
}

/// A handler checking level-based delivery as it goes: an add only for a
/// key not live, an update only for a live key, from the state last
/// delivered, to another resourceVersion (or, for a resync, the very
/// object), a delete only for a live key.
#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Record>>);

#[derive(Default, Debug)]
struct Record {
    /// key -> resourceVersion last delivered, for keys added and not deleted.
    live: BTreeMap<String, String>,
    /// Breaches of the contract, described.
    violations: Vec<String>,
    adds: usize,
    updates: usize,
    resyncs: usize,
    deletes: usize,
    /// Whether `update(obj, obj)` (a resync) is expected.
    resync_allowed: bool,
    /// Counts the adds, updates and deletes delivered, for waiting on them.
    delivered: tokio::sync::watch::Sender<u64>,
}

impl Recorder {
    fn resyncing() -> Self {
        let r = Recorder::default();
        r.lock().resync_allowed = true;
        r
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Record> {
        self.0.lock().expect("a handler panicked")
    }

    fn live(&self) -> BTreeMap<String, String> {
        self.lock().live.clone()
    }

    /// How many adds, updates and deletes were delivered so far, as it grows.
    fn deliveries(&self) -> tokio::sync::watch::Receiver<u64> {
        self.lock().delivered.subscribe()
    }
}

impl<K: Cached> EventHandler<K> for Recorder {
    fn on_add(&self, obj: &Arc<K>) {
        let mut r = self.lock();
        r.adds += 1;
        r.delivered.send_modify(|n| *n += 1);
        let key = key_of(&**obj);
        if let Some(prev) = r.live.insert(key.clone(), rv(&**obj)) {
            r.violations.push(format!("add of {key}@{} while live at {prev}", rv(&**obj)));
        }
    }

    fn on_update(&self, old: &Arc<K>, new: &Arc<K>) {
        let mut r = self.lock();
        let key = key_of(&**new);
        let (old_rv, new_rv) = (rv(&**old), rv(&**new));
        let last = r.live.get(&key).cloned();
        if Arc::ptr_eq(old, new) {
            r.resyncs += 1;
            if !r.resync_allowed {
                r.violations.push(format!("resync of {key}@{new_rv} to a handler without resync"));
            }
            if last.as_deref() != Some(new_rv.as_str()) {
                r.violations.push(format!("resync of {key}@{new_rv}, last delivered {last:?}"));
            }
            return;
        }
        r.updates += 1;
        r.delivered.send_modify(|n| *n += 1);
        if last.as_deref() != Some(old_rv.as_str()) {
            r.violations.push(format!("update of {key} from {old_rv}, last delivered {last:?}"));
        }
        if old_rv == new_rv {
            r.violations.push(format!("update of {key} to the same resourceVersion {new_rv}"));
        }
        r.live.insert(key, new_rv);
    }

    fn on_delete(&self, last_known: &Arc<K>) {
        let mut r = self.lock();
        r.deletes += 1;
        r.delivered.send_modify(|n| *n += 1);
        let key = key_of(&**last_known);
        if r.live.remove(&key).is_none() {
            r.violations.push(format!("delete of {key}, not live"));
        }
    }
}

fn pod(ns: &str, name: &str, node: &str, owner: Option<&str>) -> Pod {
    Pod {
        metadata: ObjectMeta {
            namespace: Some(ns.into()),
            name: Some(name.into()),
            owner_references: owner.map(|uid| {
                vec![OwnerReference {
                    api_version: "apps/v1".into(),
                    kind: "ReplicaSet".into(),
                    name: "rs".into(),
                    uid: uid.into(),
                    controller: Some(true),
                    ..OwnerReference::default()
                }]
            }),
            ..ObjectMeta::default()
        },
        spec: Some(PodSpec {
            node_name: Some(node.into()),
            containers: vec![k8s_openapi::api::core::v1::Container {
                name: "c".into(),
                image: Some("nginx".into()),
                ..Default::default()
            }],
            ..PodSpec::default()
        }),
        ..Pod::default()
    }
}

fn by_node(p: &Pod) -> Vec<String> {
    p.spec.as_ref().and_then(|s| s.node_name.clone()).into_iter().collect()
}

fn by_controller_uid(p: &Pod) -> Vec<String> {
    p.owner_references().iter().filter(|o| o.controller == Some(true)).map(|o| o.uid.clone()).collect()
}

fn names<K: Cached>(objects: Vec<Arc<K>>) -> Vec<String> {
    let mut names: Vec<String> = objects.iter().map(|o| key_of(&**o)).collect();
    names.sort();
    names
}

// === tests ===

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_controllers_share_one_list_and_watch() {
    let sim = sim().await;
    let client = sim.client().unwrap();
    // No controller manager runs here: the pods' namespace gets by hand
    // the ServiceAccount the API server requires of them.
    kube_sim::testing::provision_namespace(&sim, "default").await;
    Api::<Pod>::namespaced(client.clone(), "default")
        .create(&PostParams::default(), &pod("default", "p", "n1", None))
        .await
        .unwrap();
    let factory = SharedInformerFactory::new(client.clone());

    // Two "controllers", each asking for pods and registering its handler.
    let (rec1, rec2) = (Recorder::default(), Recorder::default());
    let pods1 = factory.informer::<Pod>();
    let reg1 = pods1.add_handler(rec1.clone(), None);
    let other = factory.clone();
    let pods2 = other.informer::<Pod>();
    let reg2 = pods2.add_handler(rec2.clone(), None);
    factory.start();
    factory.start(); // idempotent
    assert!(factory.wait_for_cache_sync("test", &[&pods1, &pods2, &reg1, &reg2]).await);

    wait_for(&sim, PATIENCE, "both handlers saw the pod", || {
        let (a, b) = (rec1.live(), rec2.live());
        async move { if a.len() == 1 && b.len() == 1 { Ok(()) } else { Err(format!("{a:?} {b:?}")) } }
    })
    .await;
    // The same cache: the very same Arc.
    let (a, b) = (pods1.store().get("default/p").unwrap(), pods2.store().get("default/p").unwrap());
    assert!(Arc::ptr_eq(&a, &b));
    // The watch follows the list: wait for it, then count.
    wait_for(&sim, PATIENCE, "the informer watches", || {
        let n = request_count(&sim, "watch", "pods");
        async move { if n > 0 { Ok(()) } else { Err("no watch yet".into()) } }
    })
    .await;
    assert_eq!(request_count(&sim, "list", "pods"), 1, "{:?}", sim.controls().stats());
    assert_eq!(request_count(&sim, "watch", "pods"), 1, "{:?}", sim.controls().stats());
    factory.shutdown();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_store_mirrors_the_server_with_indexes() {
    let sim = sim().await;
    let client = sim.client().unwrap();
    for ns in ["a", "b"] {
        namespace(&client, ns).await;
        // No controller manager runs here: see above.
        kube_sim::testing::provision_namespace(&sim, ns).await;
    }
    let factory = SharedInformerFactory::new(client.clone());
    let pods = factory.informer::<Pod>();
    pods.add_index("nodeName", by_node).unwrap();
    pods.add_index("controllerUID", by_controller_uid).unwrap();
    assert!(pods.add_index("nodeName", by_node).is_err(), "an index name is taken once");

    let create = |ns: &'static str, name: &'static str, node: &'static str, owner: Option<&'static str>| {
        let api = Api::<Pod>::namespaced(client.clone(), ns);
        async move { api.create(&PostParams::default(), &pod(ns, name, node, owner)).await.unwrap() }
    };
    create("a", "p1", "n1", Some("uid-1")).await;
    create("a", "p2", "n2", Some("uid-1")).await;
    factory.start();
    assert!(pods.add_index("late", by_node).is_err(), "indexes are declared before start");
    assert!(factory.wait_for_cache_sync("test", &[&pods]).await);
    create("b", "p3", "n1", Some("uid-2")).await;
    create("b", "p4", "n1", None).await;
    Api::<Pod>::namespaced(client.clone(), "a").delete("p2", &DeleteParams::default().grace_period(0)).await.unwrap();

    let store = pods.store();
    wait_for(&sim, PATIENCE, "store equals server", || {
        let (client, store) = (client.clone(), store.clone());
        async move {
            let (server, cached) = (server_state::<Pod>(&client).await?, store_state(&store));
            if server == cached && !server.contains_key("a/p2") {
                Ok(())
            } else {
                Err(format!("server {server:?} store {cached:?}"))
            }
        }
    })
    .await;
    assert_eq!(names(store.by_index("nodeName", "n1").unwrap()), ["a/p1", "b/p3", "b/p4"]);
    assert!(store.by_index("nodeName", "n2").unwrap().is_empty());
    assert_eq!(names(store.by_index("controllerUID", "uid-1").unwrap()), ["a/p1"]);
    assert_eq!(names(store.by_index("controllerUID", "uid-2").unwrap()), ["b/p3"]);
    assert_eq!(names(store.list_namespace("b")), ["b/p3", "b/p4"]);
    assert_eq!(names(store.list_namespace("a")), ["a/p1"]);
    assert!(store.by_index("nope", "x").is_err());
    assert!(store.get_namespaced(Some("b"), "p4").is_some());
    // kcm's trim: managedFields are never kept.
    assert!(store.list().iter().all(|p| p.metadata.managed_fields.is_none()));
    factory.shutdown();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sync_gating_late_handlers_and_resync() {
    let sim = sim().await;
    let client = sim.client().unwrap();
    let cms = Api::<ConfigMap>::namespaced(client.clone(), "default");
    // The API server's own ConfigMaps (kube-system's), cached too.
    let own = Api::<ConfigMap>::all(client.clone()).list(&ListParams::default()).await.unwrap().items.len();
    let all = own + 5;
    for i in 0..5 {
        let cm = ConfigMap {
            metadata: ObjectMeta { name: Some(format!("cm-{i}")), ..ObjectMeta::default() },
            ..ConfigMap::default()
        };
        cms.create(&PostParams::default(), &cm).await.unwrap();
    }
    let factory = SharedInformerFactory::new(client.clone());
    let informer = factory.informer::<ConfigMap>();
    let (plain, resyncing) = (Recorder::default(), Recorder::resyncing());
    let reg_plain = informer.add_handler(plain.clone(), None);
    // Below the minimum: raised to one second.
    let reg_resync = informer.add_handler(resyncing.clone(), Some(Duration::from_millis(100)));
    assert!(!informer.has_synced() && !reg_plain.handler_synced() && !informer.store().has_synced());
    factory.start();
    assert!(factory.wait_for_cache_sync("test", &[&informer, &reg_plain, &reg_resync]).await);
    // A handler that has synced has had every add of the initial list.
    assert_eq!(plain.live().len(), all);
    assert_eq!(resyncing.live().len(), all);
    assert_eq!(informer.store().len(), all);

    // A late handler gets synthetic adds for what is cached, then syncs.
    let late = Recorder::default();
    let reg_late = informer.add_handler(late.clone(), None);
    assert!(factory.wait_for_cache_sync("late", &[&reg_late]).await);
    assert_eq!(late.live().len(), all);

    // Resync goes to the resyncing handler only, as update(obj, obj).
    wait_for(&sim, PATIENCE, "two resyncs of every object", || {
        let n = resyncing.lock().resyncs;
        async move { if n >= 10 { Ok(()) } else { Err(format!("{n} resyncs")) } }
    })
    .await;
    for r in [&plain, &late] {
        let r = r.lock();
        assert_eq!((r.resyncs, r.updates, r.deletes), (0, 0, 0), "{r:?}");
    }
    for r in [&plain, &resyncing, &late] {
        assert!(r.lock().violations.is_empty(), "{:?}", r.lock().violations);
    }

    // After shutdown nothing syncs any more.
    let pods = factory.informer::<Pod>();
    factory.shutdown();
    factory.start();
    assert!(!factory.wait_for_cache_sync("after shutdown", &[&pods]).await);
    assert!(!pods.has_synced());
}

/// The "done when": under repeated watch drops, compactions (410 and
/// relists, paginated), connection resets and 20 % failing requests, while
/// a writer creates, updates and deletes, the store ends equal to the
/// server and a handler saw every change level-based, exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn no_change_is_lost_or_duplicated_under_faults() {
    let sim = sim().await;
    let client = sim.client().unwrap();
    let namespaces = ["chaos-a", "chaos-b"];
    for ns in namespaces {
        namespace(&client, ns).await;
    }
    // Small pages, so that relists are paginated and can be cut midway.
    let config = FactoryConfig { page_size: Some(7), ..FactoryConfig::default() };
    let factory = SharedInformerFactory::with_config(client.clone(), config);
    let informer = factory.informer::<ConfigMap>();
    let recorder = Recorder::default();
    let registration = informer.add_handler(recorder.clone(), None);

    // Some objects before start, so the first list has something to page.
    let api = |ns: &str| Api::<ConfigMap>::namespaced(client.clone(), ns);
    for i in 0..20 {
        let cm = ConfigMap {
            metadata: ObjectMeta { name: Some(format!("cm-{i}")), ..ObjectMeta::default() },
            ..ConfigMap::default()
        };
        api(namespaces[i % 2]).create(&PostParams::default(), &cm).await.unwrap();
    }
    factory.start();
    assert!(factory.wait_for_cache_sync("chaos", &[&informer, &registration]).await);
    let lists_before = request_count(&sim, "list", "configmaps");

    let failing = FaultRule { error_rate: 0.2, ..FaultRule::default() };
    sim.controls().set_faults(FaultSpec { rules: vec![failing.clone()] }).unwrap();
    // The writer: random creates, updates and deletes over 2 x 25 names,
    // at least WRITES of them, and the chaos, at least ROUNDS blows, each
    // once CHAOS_EVERY writes were made since the last one and the handler
    // was delivered something since (the informer's watch or relist
    // resumed): paced by the informer, not the clock. The blows, in turn:
    // watches dropped (resumed from their last version); watches dropped
    // and held off (every watch request fails) until a write has moved past
    // the informer's version and history is compacted behind it (the watch
    // then resumes from a version now gone: 410, relist, paginated, cut
    // between pages by the next compaction or a failure); watches dropped;
    // connections reset.
    const WRITES: u32 = 1_000;
    const ROUNDS: u32 = 8;
    const CHAOS_EVERY: u32 = 20;
    let writer = {
        let (client, controls, mut delivered) = (client.clone(), sim.controls().clone(), recorder.deliveries());
        let hold_watches = FaultSpec {
            rules: vec![FaultRule { verb: Some("watch".into()), error_rate: 1.0, ..FaultRule::default() }, failing],
        };
        tokio::spawn(async move {
            let (mut writes, mut rounds, mut since) = (0u32, 0u32, 0u32);
            let mut compact_after_write = false;
            let mut mark = *delivered.borrow_and_update();
            while writes < WRITES || rounds < ROUNDS {
                let (ns, i, op) = {
                    let mut rng = rand::rng();
                    (namespaces[rng.random_range(0..2)], rng.random_range(0..25), rng.random_range(0..10))
                };
                let api = Api::<ConfigMap>::namespaced(client.clone(), ns);
                let name = format!("cm-{i}");
                writes += 1;
                since += 1;
                // Failures (injected 500s, conflicts, not found) are part of the game.
                let written = match op {
                    0..=2 => {
                        let cm = ConfigMap {
                            metadata: ObjectMeta { name: Some(name.clone()), ..ObjectMeta::default() },
                            ..ConfigMap::default()
                        };
                        api.create(&PostParams::default(), &cm).await.map(|_| ())
                    }
                    3..=7 => api
                        .patch(
                            &name,
                            &PatchParams::default(),
                            &Patch::Merge(json!({"data": {"w": writes.to_string()}})),
                        )
                        .await
                        .map(|_| ()),
                    _ => api.delete(&name, &DeleteParams::default()).await.map(|_| ()),
                };
                if compact_after_write && written.is_ok() {
                    controls.compact();
                    controls.set_faults(FaultSpec { rules: hold_watches.rules[1..].to_vec() }).unwrap();
                    compact_after_write = false;
                }
                let now = *delivered.borrow_and_update();
                if since >= CHAOS_EVERY && now > mark && !compact_after_write {
                    match rounds % 4 {
                        1 => {
                            controls.set_faults(hold_watches.clone()).unwrap();
                            controls.drop_watches();
                            compact_after_write = true;
                        }
                        3 => controls.restart(),
                        _ => controls.drop_watches(),
                    }
                    (rounds, since, mark) = (rounds + 1, 0, now);
                }
            }
            writes
        })
    };
    let writes = writer.await.unwrap();
    let watches = request_count(&sim, "watch", "configmaps");
    sim.controls().clear_faults();

    let store = informer.store();
    let calm = std::time::Instant::now();
    // Lists made here, to tell the informer's relists from them.
    let own_lists = Arc::new(std::sync::atomic::AtomicU64::new(0));
    wait_for(&sim, PATIENCE, "store and handler equal the server", || {
        let (client, store, recorder, own_lists) = (client.clone(), store.clone(), recorder.clone(), own_lists.clone());
        async move {
            let server = server_state::<ConfigMap>(&client).await?;
            own_lists.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            // The API server's own ConfigMaps (kube-system's) are not the test's.
            let chaos = |state: BTreeMap<String, String>| -> BTreeMap<String, String> {
                state.into_iter().filter(|(k, _)| k.starts_with("chaos-")).collect()
            };
            let (server, cached, delivered) = (chaos(server), chaos(store_state(&store)), chaos(recorder.live()));
            if server == cached && server == delivered {
                Ok(())
            } else {
                Err(format!("server {server:?}\nstore {cached:?}\nhandler {delivered:?}"))
            }
        }
    })
    .await;
    let converged = calm.elapsed();
    let lists =
        request_count(&sim, "list", "configmaps") - lists_before - own_lists.load(std::sync::atomic::Ordering::Relaxed);
    let record = recorder.lock();
    assert!(record.violations.is_empty(), "violations: {:#?}", record.violations);
    assert_eq!(record.resyncs, 0);
    assert!(lists > 0, "the faults caused no relist (list requests of the informer)");
    assert!(record.deletes > 0 && record.updates > 0, "{record:?}");
    eprintln!(
        "{writes} writes, {lists} list requests (relists, pages), {watches} watch requests; delivered {} adds, {} updates, {} deletes; \
         {} objects at the end; converged {converged:?} after the faults",
        record.adds,
        record.updates,
        record.deletes,
        record.live.len()
    );
    factory.shutdown();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn last_resource_version_follows_lists_and_watch_events() {
    let sim = sim().await;
    let client = sim.client().expect("client");
    namespace(&client, "rv").await;
    let api = Api::<ConfigMap>::namespaced(client.clone(), "rv");
    let cm = |name: &str| ConfigMap {
        metadata: ObjectMeta { name: Some(name.into()), ..ObjectMeta::default() },
        ..ConfigMap::default()
    };
    let listed = api.create(&PostParams::default(), &cm("listed")).await.expect("created");
    let factory = SharedInformerFactory::new(client.clone());
    let informer = factory.informer::<ConfigMap>();
    assert_eq!(informer.last_resource_version(), None, "unknown before the first list");
    factory.start();
    assert!(factory.wait_for_cache_sync("test", &[&informer]).await);
    let after_list = informer.last_resource_version().expect("known once listed");
    assert!(after_list >= rv(&listed).parse::<u64>().expect("numeric"), "the list's objects are counted");

    let watched = api.create(&PostParams::default(), &cm("watched")).await.expect("created");
    let watched_rv: u64 = rv(&watched).parse().expect("numeric");
    let store = informer.store();
    wait_for(&sim, PATIENCE, "the watch event counted", || {
        let (informer, store) = (informer.clone(), store.clone());
        async move {
            let reached = informer.last_resource_version().unwrap_or(0);
            // Never ahead of the cache: once it covers the new object, the
            // store holds it.
            if reached >= watched_rv && store.get("rv/watched").is_some() {
                Ok(())
            } else {
                Err(format!("reached {reached}, cached {}", store.get("rv/watched").is_some()))
            }
        }
    })
    .await;
}
