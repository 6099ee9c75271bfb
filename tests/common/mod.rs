//! Fixtures shared by the end-to-end tests of the `kcm-rs` binary.

use std::future::Future;
use std::time::Duration;

use kube_sim::Sim;

/// Generous deadline for any condition.
const DEADLINE: Duration = Duration::from_secs(90);

/// Longest a probe may wait for something outside the API to catch up
/// (a daemon's metrics, an informer's handler) before it is asked again.
const RECHECK: Duration = Duration::from_secs(1);

/// Waits until `probe` holds, failing with what it last saw after
/// [`DEADLINE`]. The probe runs again at every change kube-sim stores (what
/// the daemons under test react to), and at the latest every second for
/// state that follows a change with a delay.
pub async fn wait_until<F, Fut>(sim: &Sim, what: &str, mut probe: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<(), String>>,
{
    let api = sim.controls().api();
    let store = &api.store;
    let key = kube_sim::api::Api::type_key(&api.registry.builtin(kube_sim::resources::Builtin::Namespace));
    let (_, mut changes) = store.watch(&key, Some(store.current_rv())).expect("the current version is resumable");
    let start = tokio::time::Instant::now();
    let mut last = String::new();
    while start.elapsed() < DEADLINE {
        match probe().await {
            Ok(()) => return,
            Err(seen) => last = seen,
        }
        // Any change (or a closed or lagging feed) is a reason to look again.
        let _ = tokio::time::timeout(RECHECK, changes.recv()).await;
    }
    panic!("timed out waiting for {what}; last seen: {last}");
}
