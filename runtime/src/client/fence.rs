//! Fencing by the local clock: a [`WriteFence`] says until when this
//! process provably holds its leader lease, and the [`Fenced`] layer refuses
//! every write attempted after that, locally, before it is sent.
//!
//! Leader election (`crate::leader`) opens the fence after each successful
//! write of its Lease, until the renewal's *send* time plus a window shorter
//! than the lease (`LeaderElectionConfig` documents the window), and closes
//! it the moment leading ends. A standby takes the lease over only after the
//! record has stayed the same for a whole lease duration *from when it
//! observed it*, which is after the leader sent it: so while the fence is
//! open, no other replica leads (as long as clock rates differ by less
//! than the window's margin allows).
//!
//! The check reads the monotonic clock when the request is about to go out
//! (the first poll of its future), not when a controller queued it. A
//! process that was paused (SIGSTOP, a starved CPU) resumes with every timer
//! overdue and tokio wakes the waiting tasks in no particular order: the
//! elector may run after a controller's queued write. That does not matter,
//! because the write compares `Instant::now()` with the fence's deadline
//! itself. What it cannot stop is a request already being written to the
//! socket when the process froze.
//!
//! Writes are `POST`, `PUT`, `PATCH` and `DELETE` (create, update, patch,
//! delete, deletecollection); reads and watches always pass, so a fenced
//! process keeps its caches warm.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use http::{Method, Request};
use tokio::time::Instant;
use tower::{BoxError, Layer, Service};

/// Until when this process may write: a lease-validity handle shared by
/// the elector (which opens and closes it) and every fenced client (which
/// checks it). Starts closed. Cheap to clone.
#[derive(Clone)]
pub struct WriteFence {
    inner: Arc<Inner>,
}

struct Inner {
    /// `<namespace>/<name>` of the lease, for the refusal's message.
    lease: String,
    /// Writes are allowed strictly before this instant; `None`: closed.
    open_until: Mutex<Option<Instant>>,
}

/// A write refused because the fence was closed when it was about to be
/// sent. Nothing reached the API server.
#[derive(Debug, thiserror::Error)]
#[error(
    "refusing {method} {path}: this process does not provably hold the leader lease {lease} \
     (fenced: its last renewal is too old, or leading ended)"
)]
pub struct Refused {
    /// The request's method.
    pub method: Method,
    /// The request's path.
    pub path: String,
    /// The lease, `<namespace>/<name>`.
    pub lease: String,
}

impl WriteFence {
    /// A closed fence for the lease `<namespace>/<name>`.
    pub fn new(lease: impl Into<String>) -> WriteFence {
        WriteFence { inner: Arc::new(Inner { lease: lease.into(), open_until: Mutex::new(None) }) }
    }

    /// Allows writes until `deadline` (exclusive).
    pub fn open_until(&self, deadline: Instant) {
        *self.lock() = Some(deadline);
    }

    /// Refuses writes from now on, until opened again.
    pub fn close(&self) {
        *self.lock() = None;
    }

    /// Whether a write sent now would pass.
    pub fn is_open(&self) -> bool {
        self.lock().is_some_and(|deadline| Instant::now() < deadline)
    }

    /// Passes a request (`method`, `path`) sent now, or says why it may
    /// not be.
    ///
    /// # Errors
    ///
    /// [`Refused`] for a write while the fence is closed.
    pub fn check(&self, method: &Method, path: &str) -> Result<(), Refused> {
        if !is_write(method) || self.is_open() {
            return Ok(());
        }
        Err(Refused { method: method.clone(), path: path.to_owned(), lease: self.inner.lease.clone() })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Instant>> {
        self.inner.open_until.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl fmt::Debug for WriteFence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WriteFence").field("lease", &self.inner.lease).field("open_until", &*self.lock()).finish()
    }
}

/// The methods that change state on the API server.
fn is_write(method: &Method) -> bool {
    matches!(*method, Method::POST | Method::PUT | Method::PATCH | Method::DELETE)
}

// === impl FenceLayer ===

/// Tower layer checking each write against a [`WriteFence`]; a `None`
/// fence (no leader election, or the election's own client) passes
/// everything.
#[derive(Clone, Debug)]
pub struct FenceLayer {
    fence: Option<WriteFence>,
}

impl FenceLayer {
    /// Checks writes against `fence`.
    pub fn new(fence: Option<WriteFence>) -> Self {
        FenceLayer { fence }
    }
}

impl<S> Layer<S> for FenceLayer {
    type Service = Fenced<S>;

    fn layer(&self, inner: S) -> Self::Service {
        Fenced { inner, fence: self.fence.clone() }
    }
}

/// Service made by [`FenceLayer`]: a refused write ends in [`Refused`]
/// (boxed) and its inner future is dropped unpolled, so nothing is sent.
#[derive(Clone, Debug)]
pub struct Fenced<S> {
    inner: S,
    fence: Option<WriteFence>,
}

impl<S, B> Service<Request<B>> for Fenced<S>
where
    S: Service<Request<B>>,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
{
    type Response = S::Response;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, req: Request<B>) -> Self::Future {
        // Checked at the first poll, when the request is about to be sent
        // (a queued request's future is created before it waits its turn).
        let check = self
            .fence
            .clone()
            .filter(|_| is_write(req.method()))
            .map(|fence| (fence, req.method().clone(), req.uri().path().to_owned()));
        let fut = self.inner.call(req);
        Box::pin(async move {
            if let Some((fence, method, path)) = check {
                fence.check(&method, &path)?;
            }
            fut.await.map_err(Into::into)
        })
    }
}

#[cfg(test)]
mod tests {
    //! The fence on paused time (the clock alone closes it; a write is
    //! judged when it is sent), then a whole client built on it against
    //! kube-sim (writes refused locally, reads served, retries checked
    //! again).

    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use http::{Request, Response};
    use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
    use kube::api::{Api, ObjectMeta, PostParams};
    use kube_sim::faults::{FaultRule, FaultSpec};
    use kube_sim::testing::{Patience, wait_for};
    use kube_sim::{Sim, SimConfig};
    use prometheus::Registry;
    use tower::{ServiceExt, service_fn};

    use super::*;
    use crate::client::{ClientConfig, build};

    // === utils ===

    const LEASE: &str = "kube-system/kube-controller-manager";

    /// A stand-in API server behind `fence`, counting the requests that
    /// reach it. As with hyper, a request is sent when its future is
    /// polled, not when it is created.
    fn server(
        fence: Option<WriteFence>,
    ) -> (impl Service<Request<()>, Response = Response<()>, Error = BoxError> + Clone, Arc<AtomicUsize>) {
        let reached = Arc::new(AtomicUsize::new(0));
        let counter = reached.clone();
        let inner = service_fn(move |_req: Request<()>| {
            let counter = counter.clone();
            async move {
                counter.fetch_add(1, Ordering::SeqCst);
                Ok::<_, BoxError>(Response::new(()))
            }
        });
        (FenceLayer::new(fence).layer(inner), reached)
    }

    fn request(method: Method) -> Request<()> {
        Request::builder().method(method).uri("/api/v1/namespaces/default/pods").body(()).expect("a request")
    }

    fn config_map(name: &str) -> ConfigMap {
        ConfigMap { metadata: ObjectMeta { name: Some(name.into()), ..ObjectMeta::default() }, ..ConfigMap::default() }
    }

    /// Requests from `user_agent` with this verb on `resource` that reached
    /// kube-sim, by response code.
    fn reached(sim: &Sim, user_agent: &str, verb: &str, resource: &str) -> Vec<(u16, u64)> {
        let stats = sim.controls().stats();
        let lines = stats.iter().filter(|l| l.user_agent == user_agent && l.verb == verb && l.resource == resource);
        lines.map(|l| (l.code, l.count)).collect()
    }

    // === tests: the fence ===

    #[tokio::test(start_paused = true)]
    async fn a_new_fence_refuses_writes_and_passes_reads() {
        let fence = WriteFence::new(LEASE);
        assert!(!fence.is_open());
        for method in [Method::POST, Method::PUT, Method::PATCH, Method::DELETE] {
            let refused = fence.check(&method, "/api/v1/pods").expect_err("a write");
            assert_eq!((refused.method, refused.lease.as_str()), (method, LEASE));
        }
        for method in [Method::GET, Method::HEAD, Method::OPTIONS] {
            assert!(fence.check(&method, "/api/v1/pods").is_ok(), "{method}");
        }
        let message = fence.check(&Method::POST, "/api/v1/namespaces/default/pods").expect_err("closed").to_string();
        assert!(message.starts_with("refusing POST /api/v1/namespaces/default/pods: "), "{message}");
        assert!(message.contains(LEASE), "{message}");
    }

    #[tokio::test(start_paused = true)]
    async fn the_clock_alone_closes_an_open_fence() {
        let fence = WriteFence::new(LEASE);
        let opened = Instant::now();
        fence.open_until(opened + Duration::from_secs(10));
        assert!(fence.is_open());
        tokio::time::advance(Duration::from_secs(10) - Duration::from_nanos(1)).await;
        assert!(fence.is_open());
        // The deadline itself is outside the window.
        tokio::time::advance(Duration::from_nanos(1)).await;
        assert!(!fence.is_open());
        assert!(fence.check(&Method::PUT, "/x").is_err());
        // A renewal opens it again; leading's end closes it at once.
        fence.open_until(Instant::now() + Duration::from_secs(10));
        assert!(fence.is_open());
        fence.close();
        assert!(!fence.is_open());
    }

    #[tokio::test(start_paused = true)]
    async fn a_write_is_judged_when_sent_not_when_queued() {
        let fence = WriteFence::new(LEASE);
        fence.open_until(Instant::now() + Duration::from_secs(1));
        let (mut svc, reached) = server(Some(fence.clone()));
        // Queued while the fence is open (the future exists), then the
        // process freezes past the window before it is sent.
        let write = svc.ready().await.expect("ready").call(request(Method::POST));
        let read = svc.ready().await.expect("ready").call(request(Method::GET));
        tokio::time::advance(Duration::from_secs(2)).await;
        let refused = write.await.expect_err("refused");
        assert!(refused.downcast_ref::<Refused>().is_some(), "{refused}");
        assert_eq!(reached.load(Ordering::SeqCst), 0, "the refused write never reached the server");
        read.await.expect("reads always pass");
        assert_eq!(reached.load(Ordering::SeqCst), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn without_a_fence_everything_passes() {
        let (svc, reached) = server(None);
        for method in [Method::POST, Method::PUT, Method::PATCH, Method::DELETE, Method::GET] {
            svc.clone().oneshot(request(method)).await.expect("passed");
        }
        assert_eq!(reached.load(Ordering::SeqCst), 5);
    }

    // === tests: a fenced client against kube-sim ===

    #[tokio::test]
    async fn a_fenced_client_refuses_writes_locally_and_still_reads() {
        let sim = Sim::start(SimConfig { nodes: 0, ..SimConfig::default() }).await.expect("kube-sim");
        let fence = WriteFence::new(LEASE);
        let config = ClientConfig::from_url(&sim.url(), 0.0, 0).expect("config").fenced(fence.clone());
        let client = build(&config, &Registry::new(), Some("fenced")).expect("client");
        let agent = crate::client::user_agent(Some("fenced"));
        let config_maps: Api<ConfigMap> = Api::namespaced(client.clone(), "default");

        let err = config_maps.create(&PostParams::default(), &config_map("a")).await.expect_err("fenced");
        assert!(err.to_string().contains("refusing POST /api/v1/namespaces/default/configmaps"), "{err}");
        assert!(reached(&sim, &agent, "create", "configmaps").is_empty(), "nothing was sent");
        let _: Namespace = Api::all(client.clone()).get("default").await.expect("reads pass");

        fence.open_until(Instant::now() + Duration::from_secs(3600));
        config_maps.create(&PostParams::default(), &config_map("a")).await.expect("open: written");
        assert_eq!(reached(&sim, &agent, "create", "configmaps"), vec![(201, 1)]);
    }

    #[tokio::test]
    async fn a_retried_write_is_judged_again() {
        let sim = Sim::start(SimConfig { nodes: 0, ..SimConfig::default() }).await.expect("kube-sim");
        let fence = WriteFence::new(LEASE);
        fence.open_until(Instant::now() + Duration::from_secs(3600));
        let config = ClientConfig::from_url(&sim.url(), 0.0, 0).expect("config").fenced(fence.clone());
        let client = build(&config, &Registry::new(), Some("retried")).expect("client");
        let agent = crate::client::user_agent(Some("retried"));
        // Every create is throttled: kube's retry waits Retry-After (2 s)
        // and sends it again, up to 15 times.
        let throttle = FaultRule {
            verb: Some("create".into()),
            resource: Some("configmaps".into()),
            throttle_rate: 1.0,
            retry_after_seconds: 2,
            ..FaultRule::default()
        };
        sim.controls().set_faults(FaultSpec { rules: vec![throttle] }).expect("faults");
        let config_maps: Api<ConfigMap> = Api::namespaced(client, "default");
        let create = tokio::spawn(async move { config_maps.create(&PostParams::default(), &config_map("r")).await });
        let patience = Patience { deadline: Duration::from_secs(30), recheck: Duration::from_millis(20) };
        wait_for(&sim, patience, "a throttled create", || async {
            let seen = reached(&sim, &agent, "create", "configmaps");
            if seen.iter().any(|(code, _)| *code == 429) { Ok(()) } else { Err(format!("{seen:?}")) }
        })
        .await;
        // Leading ends while the write waits for its retry.
        fence.close();
        let err = create.await.expect("task").expect_err("the retry is refused");
        assert!(err.to_string().contains("refusing POST"), "{err}");
        sim.controls().clear_faults();
        let api: Api<ConfigMap> = Api::namespaced(sim.client().expect("client"), "default");
        assert!(api.get_opt("r").await.expect("read").is_none(), "never created");
    }
}
