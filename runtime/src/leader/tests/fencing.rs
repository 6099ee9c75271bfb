//! The write fence the elector keeps, on paused time against an API server
//! in memory: it counts from when the winning write was sent, it closes by
//! the clock alone before the elector gives up, a renewal that reads
//! another holder ends the term at once, and after a freeze past the lease
//! no queued write goes out.

use http::Method;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::ObjectMeta;
use tower::layer::util::Identity;

use super::memory::{Logged, Memory};
use super::*;
use crate::client::FenceLayer;

// === utils ===

/// A leader whose `leading` future only waits to be stopped.
fn contender(memory: &Memory, identity: &str) -> Contender {
    Contender::start(&memory.client(Identity::new()), config(identity, "fenced"), &Arc::new(Leaders::default()))
}

/// What reached the server after the first `from` requests: (method,
/// target, code).
fn since(memory: &Memory, from: usize) -> Vec<(Method, String, u16)> {
    memory.log()[from..].iter().map(|l| (l.method.clone(), l.target.clone(), l.status)).collect()
}

// === tests ===

#[tokio::test(start_paused = true)]
async fn the_fence_counts_from_when_the_winning_write_was_sent() {
    let memory = Memory::default();
    // Each Lease request is answered 500 ms after it arrives.
    memory.set_lease_latency(Duration::from_millis(500));
    let mut a = contender(&memory, "a");
    a.wait_leading().await;
    // From now on no renewal is answered (each times out).
    memory.set_lease_latency(Duration::from_secs(3600));
    let won = memory.log().into_iter().find(|l| l.target == "lease" && l.method == Method::POST);
    let Some(Logged { at: sent, status: 200, .. }) = won else { panic!("the Lease was created: {won:?}") };
    assert!(a.fence.is_open());
    assert_eq!(a.master_status(), 1);

    // config(): lease 2 s, renew deadline 1.5 s: a window of 1.5 s from
    // the send, though the answer came 500 ms later.
    let window = Duration::from_millis(1500);
    tokio::time::sleep_until(sent + window - Duration::from_millis(1)).await;
    assert!(a.fence.is_open());
    tokio::time::sleep_until(sent + window).await;
    assert!(!a.fence.is_open());
    assert_eq!(a.master_status(), 0);
    // The elector has not given up yet (its round ends 2.5 s after the
    // send): the clock alone closed the fence.
    assert!(a.leading());
    assert_eq!(a.outcome().await, Outcome::Lost);
}

#[tokio::test(start_paused = true)]
async fn a_renewal_that_reads_another_holder_ends_the_term_at_once() {
    let memory = Memory::default();
    let mut a = contender(&memory, "a");
    a.wait_leading().await;
    memory.take_over("b");
    let from = memory.log().len();
    let (fence, registry, reason) = (a.fence.clone(), a.registry.clone(), a.stop_reason.clone());
    assert_eq!(a.outcome().await, Outcome::Lost);
    // The renewal from the cached Lease is refused, the read names b: the
    // term ends there, with no further attempt (client-go would retry
    // until the renew deadline, leading meanwhile).
    assert_eq!(since(&memory, from), [(Method::PUT, "lease".to_owned(), 409), (Method::GET, "lease".to_owned(), 200)]);
    assert!(!fence.is_open());
    assert_eq!(master_status(&registry), 0);
    wait_until(|| reason.lock().unwrap().is_some()).await;
    assert_eq!(*reason.lock().unwrap(), Some(StopReason::Lost));
}

#[tokio::test(start_paused = true)]
async fn after_a_freeze_past_the_lease_no_queued_write_goes_out() {
    let memory = Memory::default();
    // Lease requests take 100 ms: after the freeze, the elector cannot
    // learn that it lost before the controller's overdue write is tried.
    memory.set_lease_latency(Duration::from_millis(100));
    let registry = Registry::new();
    let metrics = LeaderMetrics::register(&registry).unwrap();
    let elector = LeaderElector::new(memory.client(Identity::new()), config("a", "frozen"), &metrics).unwrap();
    let mut status = elector.subscribe();
    let controllers = memory.client(FenceLayer::new(Some(elector.fence())));
    // A controller writing every 300 ms while leading, recording how each
    // write ended.
    let writes = Arc::new(Mutex::new(Vec::<Result<(), String>>::new()));
    let seen = writes.clone();
    let leading = move |_stop: StopSignal| async move {
        let config_maps: Api<ConfigMap> = Api::namespaced(controllers, "default");
        let cm = ConfigMap {
            metadata: ObjectMeta { name: Some("c".into()), ..ObjectMeta::default() },
            ..ConfigMap::default()
        };
        loop {
            tokio::time::sleep(Duration::from_millis(300)).await;
            let written = config_maps.create(&PostParams::default(), &cm).await;
            seen.lock().unwrap().push(written.map(drop).map_err(|e| e.to_string()));
        }
    };
    let run = tokio::spawn(elector.run(leading, std::future::pending()));
    wait_status(&mut status, |s| s.leading).await;
    wait_until(|| writes.lock().unwrap().iter().filter(|w| w.is_ok()).count() >= 2).await;

    // Frozen (SIGSTOP) for 10 s, five leases: meanwhile b took the Lease
    // over. On SIGCONT every timer is overdue at once.
    memory.take_over("b");
    let (from, tried) = (memory.log().len(), writes.lock().unwrap().len());
    tokio::time::advance(Duration::from_secs(10)).await;
    assert_eq!(master_status(&registry), 0, "not leader, before the elector has run again");
    let outcome = tokio::time::timeout(PATIENCE, run).await.expect("run ends").unwrap().unwrap();
    assert_eq!(outcome, Outcome::Lost);

    // Nothing but the read that showed b reached the server; the write that
    // was waiting across the freeze was tried and refused locally.
    assert_eq!(since(&memory, from), [(Method::GET, "lease".to_owned(), 200)]);
    let after = writes.lock().unwrap()[tried..].to_vec();
    assert!(!after.is_empty() && after.iter().all(Result::is_err), "{after:?}");
    assert!(after[0].as_ref().unwrap_err().contains("refusing POST"), "{after:?}");
}
