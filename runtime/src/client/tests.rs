//! Tests of the client: the token bucket and limiter, user agents, requests
//! through the whole stack against kube-sim (counted and limited), and
//! kubeconfig loading.

use std::time::Duration;

use http::{Request, Response};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::api::{Api, ListParams, ObjectMeta, PostParams};
use kube_sim::{Sim, SimConfig};
use tower::{Layer, Service};

use super::limiter::ThrottleWait;
use super::*;

// === utils ===

fn counter(registry: &Registry, name: &str) -> Vec<(Vec<(String, String)>, f64)> {
    registry
        .gather()
        .into_iter()
        .filter(|f| f.name() == name)
        .flat_map(|f| f.get_metric().to_vec())
        .map(|m| {
            let labels = m.get_label().iter().map(|l| (l.name().to_owned(), l.value().to_owned())).collect();
            let value = if name.ends_with("_total") {
                m.get_counter().get_value()
            } else {
                m.get_histogram().get_sample_count() as f64
            };
            (labels, value)
        })
        .collect()
}

fn sum(series: &[(Vec<(String, String)>, f64)]) -> f64 {
    series.iter().map(|(_, v)| v).sum()
}

// === limiter ===

#[tokio::test(start_paused = true)]
async fn bucket_grants_burst_then_qps() {
    let bucket = TokenBucket::new(10.0, 5).unwrap();
    let waits: Vec<Duration> = (0..8).map(|_| bucket.reserve()).collect();
    assert!(waits[..5].iter().all(Duration::is_zero), "{waits:?}");
    // Tokens 6, 7, 8 are reserved 100ms apart.
    for (i, w) in waits[5..].iter().enumerate() {
        let want = Duration::from_millis(100 * (i as u64 + 1));
        assert!(w.abs_diff(want) < Duration::from_micros(10), "{i}: {w:?}");
    }
    // After a full second (paused clock) the bucket is full again: debt 3, +10, capped at 5.
    tokio::time::advance(Duration::from_secs(2)).await;
    assert!((0..5).all(|_| bucket.reserve().is_zero()));
    assert!(!bucket.reserve().is_zero());
}

#[tokio::test(start_paused = true)]
async fn limiter_holds_requests_beyond_the_burst() {
    let burst = 5u32;
    let bucket = Arc::new(TokenBucket::new(10.0, burst).unwrap());
    let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let inner = {
        let calls = calls.clone();
        tower::service_fn(move |_req: Request<()>| {
            calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            async { Ok::<_, std::convert::Infallible>(Response::new(())) }
        })
    };
    let svc = tower::buffer::Buffer::new(ClientRateLimitLayer::new(Some(bucket)).layer(inner), 64);
    let n = burst as usize + 10;
    let mut tasks = Vec::new();
    for _ in 0..n {
        let mut svc = svc.clone();
        tasks.push(tokio::spawn(async move {
            use tower::ServiceExt as _;
            let resp = svc.ready().await.unwrap().call(Request::new(())).await.unwrap();
            resp.extensions().get::<ThrottleWait>().map(|w| w.0)
        }));
    }
    // Let every request reach the limiter without the clock moving.
    for _ in 0..50 {
        tokio::task::yield_now().await;
    }
    assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), burst as usize, "only the burst passes at once");
    let mut waited = 0;
    for t in tasks {
        if t.await.unwrap().is_some_and(|w| !w.is_zero()) {
            waited += 1;
        }
    }
    assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), n);
    assert!(waited >= n - burst as usize, "{waited} requests waited for a token");
}

#[test]
fn no_bucket_without_qps() {
    assert!(TokenBucket::new(0.0, 30).is_none());
    assert!(TokenBucket::new(-1.0, 30).is_none());
}

#[test]
fn user_agents() {
    assert_eq!(user_agent(None), format!("kcm-rs/{}", env!("CARGO_PKG_VERSION")));
    assert_eq!(user_agent(Some("leader-election")), format!("kcm-rs/{}/leader-election", env!("CARGO_PKG_VERSION")));
}

// === against kube-sim ===

#[tokio::test]
async fn requests_succeed_through_the_stack_and_are_counted() {
    let sim = Sim::start(SimConfig::default()).await.unwrap();
    let registry = Registry::new();
    let client = for_url(&sim.url(), 1000.0, 1000, &registry, None).unwrap();

    let nodes: Api<k8s_openapi::api::core::v1::Node> = Api::all(client.clone());
    assert_eq!(nodes.list(&ListParams::default()).await.unwrap().items.len(), 3);
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let cm = ConfigMap { metadata: ObjectMeta { name: Some("c".into()), ..Default::default() }, ..Default::default() };
    cms.create(&PostParams::default(), &cm).await.unwrap();
    assert!(cms.get("missing").await.is_err());

    let host = sim.url().trim_start_matches("http://").trim_end_matches('/').to_owned();
    let requests = counter(&registry, "rest_client_requests_total");
    let find = |code: &str, method: &str| {
        requests.iter().find(|(labels, _)| {
            labels.contains(&("code".into(), code.into()))
                && labels.contains(&("method".into(), method.into()))
                && labels.contains(&("host".into(), host.clone()))
        })
    };
    assert_eq!(find("200", "GET").map(|s| s.1), Some(1.0), "{requests:?}");
    assert_eq!(find("201", "POST").map(|s| s.1), Some(1.0), "{requests:?}");
    assert_eq!(find("404", "GET").map(|s| s.1), Some(1.0), "{requests:?}");
    let durations = counter(&registry, "rest_client_request_duration_seconds");
    assert_eq!(sum(&durations), 3.0);
    assert!(durations.iter().all(|(l, _)| l.iter().any(|(k, _)| k == "verb")), "{durations:?}");
    assert_eq!(sum(&counter(&registry, "rest_client_rate_limiter_duration_seconds")), 3.0);

    // A second client from the same config shares the metrics (no double registration).
    let config = ClientConfig::from_url(&sim.url(), 1000.0, 1000).unwrap();
    let a = build(&config, &registry, Some("leader-election"));
    assert!(matches!(a, Err(Error::Metrics(_))), "this registry already has another config's metrics");
    let other = Registry::new();
    let a = build(&config, &other, None).unwrap();
    let b = build(&config, &other, Some("leader-election")).unwrap();
    let _: Namespace = Api::all(a).get("default").await.unwrap();
    let _: Namespace = Api::all(b).get("default").await.unwrap();
    assert_eq!(sum(&counter(&other, "rest_client_requests_total")), 2.0);
}

#[tokio::test]
async fn limiter_holds_a_burst_against_the_server() {
    let sim = Sim::start(SimConfig::default()).await.unwrap();
    let registry = Registry::new();
    let (qps, burst) = (10.0, 5usize);
    let client = for_url(&sim.url(), qps, burst as u32, &registry, None).unwrap();
    let before = sim.controls().stats().iter().filter(|l| l.verb == "get").map(|l| l.count).sum::<u64>();

    let n = burst + 10;
    let gets = (0..n).map(|_| {
        let api: Api<Namespace> = Api::all(client.clone());
        async move { api.get("default").await }
    });
    for r in futures_join_all(gets).await {
        r.unwrap();
    }

    let after = sim.controls().stats().iter().filter(|l| l.verb == "get").map(|l| l.count).sum::<u64>();
    assert_eq!(after - before, n as u64, "every request reached the server once");
    // Everything past the burst waited for a token: those observations are non-zero.
    let waited = registry
        .gather()
        .into_iter()
        .filter(|f| f.name() == "rest_client_rate_limiter_duration_seconds")
        .flat_map(|f| f.get_metric().to_vec())
        .map(|m| {
            let h = m.get_histogram();
            // Observations in the first bucket (<= 5ms) include the zero waits.
            h.get_sample_count() - h.get_bucket().first().map(|b| b.cumulative_count()).unwrap_or(0)
        })
        .sum::<u64>();
    let total = sum(&counter(&registry, "rest_client_rate_limiter_duration_seconds"));
    assert_eq!(total, n as f64);
    // At 10 qps each request past the burst waits about 100ms for its token (the buffer serialises them):
    // far above the first bucket's 5ms unless the machine stalls for 95ms between two requests.
    assert!(waited as usize >= n - burst, "{waited} of {n} requests waited more than 5ms");
}

/// Runs futures concurrently on the current task (no extra dependency).
async fn futures_join_all<F>(futs: impl Iterator<Item = F>) -> Vec<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    let handles: Vec<_> = futs.map(tokio::spawn).collect();
    let mut out = Vec::new();
    for h in handles {
        out.push(h.await.expect("task"));
    }
    out
}

#[tokio::test]
async fn load_prefers_kubeconfig_and_master_override() {
    let sim = Sim::start(SimConfig::default()).await.unwrap();
    let dir = std::env::temp_dir().join(format!("kcm-rs-client-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("kubeconfig");
    sim.write_kubeconfig(&path).unwrap();
    let settings = ClientSettings {
        kubeconfig: Some(path.clone()),
        master: None,
        qps: 20.0,
        burst: 30,
        content_type: String::new(),
    };
    let config = ClientConfig::load(&settings).await.unwrap();
    let client = build(&config, &Registry::new(), None).unwrap();
    let _: Namespace = Api::all(client).get("default").await.unwrap();

    let overridden =
        ClientConfig::load(&ClientSettings { master: Some("http://10.9.8.7:1234".into()), ..settings }).await.unwrap();
    assert_eq!(overridden.host(), "10.9.8.7:1234");

    let missing = ClientSettings {
        kubeconfig: Some(dir.join("absent")),
        master: None,
        qps: 20.0,
        burst: 30,
        content_type: String::new(),
    };
    assert!(matches!(ClientConfig::load(&missing).await, Err(Error::Kubeconfig { .. })));
    let _ = std::fs::remove_dir_all(&dir);
}
