//! The daemon's `kube::Client`: where the API server is, who we say we are,
//! how fast we may talk to it, and what we tell Prometheus about it.
//!
//! Two stages, like `config.rs`: [`ClientConfig::load`] resolves the API
//! server and credentials once (async: kubeconfig exec plugins may run), then
//! [`build`] makes as many clients as the process needs, synchronously, each
//! with its own user-agent suffix and its own QPS/burst budget, as client-go
//! gives each clientset its own token bucket (so the leader-election client
//! is never starved by controller traffic).
//!
//! Each client's service stack, outermost first:
//!
//! ```text
//! RequestMetrics   rest_client_requests_total, rest_client_request_duration_seconds,
//!                  rest_client_rate_limiter_duration_seconds
//! ClientRateLimit  token bucket (--kube-api-qps, --kube-api-burst): requests wait for a token
//! kube's stack     base URI, retries on 429/503/504, auth, headers (User-Agent), tracing, hyper
//! ```
//!
//! Metric names, labels and buckets are client-go's
//! (component-base/metrics/prometheus/restclient). Two differences: a request
//! kube retries is counted once, with its final status, and its duration runs
//! until the response head arrives (client-go counts every attempt and, for
//! non-streaming calls, includes reading the body).

use std::fmt;
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, ready};
use std::time::Duration;

use http::{HeaderName, HeaderValue, Request, Response};
use kube::config::{KubeConfigOptions, Kubeconfig};
use prometheus::{HistogramOpts, HistogramVec, IntCounterVec, Opts, Registry};
use tokio::time::{Instant, Sleep};
use tower::{Layer, Service};

use crate::config::ClientSettings;

/// Result of building a client.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The user agent every client sends (before any per-use suffix).
pub const USER_AGENT: &str = concat!("kcm-rs/", env!("CARGO_PKG_VERSION"));

/// client-go's latency buckets for `rest_client_request_duration_seconds`
/// and `rest_client_rate_limiter_duration_seconds`.
pub const LATENCY_BUCKETS: [f64; 12] = [0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0];

/// client-go logs a request's client-side throttling wait above this.
const LONG_THROTTLE_LATENCY: Duration = Duration::from_secs(1);

/// Why a client could not be configured or built.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The file named by `--kubeconfig` could not be read or parsed.
    #[error("cannot read kubeconfig {path}")]
    Kubeconfig {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: kube::config::KubeconfigError,
    },
    /// Neither the in-cluster configuration nor a kubeconfig (`KUBECONFIG`,
    /// `~/.kube/config`) was usable, and neither --kubeconfig nor --master was given.
    #[error(
        "no API server configured: not running in a cluster ({in_cluster}) and no usable kubeconfig; \
         pass --kubeconfig or --master"
    )]
    Infer {
        /// Why the in-cluster configuration failed.
        in_cluster: kube::config::InClusterError,
        /// Why the kubeconfig failed.
        #[source]
        kubeconfig: kube::config::KubeconfigError,
    },
    /// `--master` (or a `for_url` URL) is not a URL.
    #[error("invalid API server URL {url:?}")]
    Url {
        /// The text.
        url: String,
        /// The cause.
        #[source]
        source: http::uri::InvalidUri,
    },
    /// The user agent (with its suffix) is not a valid header value.
    #[error("invalid user agent {0:?}")]
    UserAgent(String),
    /// kube could not build the HTTP stack (TLS, auth, proxy).
    #[error("cannot build the API client")]
    Build(#[source] kube::Error),
    /// The request metrics could not be registered.
    #[error("cannot register rest_client metrics")]
    Metrics(#[source] prometheus::Error),
}

// === config ===

/// A resolved API server connection plus the limiter settings; cheap to clone.
/// Every client built from one `ClientConfig` shares its request metrics.
#[derive(Clone)]
pub struct ClientConfig {
    kube: kube::Config,
    qps: f32,
    burst: u32,
    /// Registered on the first [`build`]'s registry and reused by later
    /// builds: prometheus refuses a second registration of the same names,
    /// and client-go's rest_client metrics are process-wide anyway.
    metrics: Arc<Mutex<Option<RestClientMetrics>>>,
}

impl fmt::Debug for ClientConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientConfig")
            .field("cluster_url", &self.kube.cluster_url)
            .field("qps", &self.qps)
            .field("burst", &self.burst)
            .finish_non_exhaustive()
    }
}

impl ClientConfig {
    /// Resolves where the API server is, as kube-controller-manager does:
    ///
    /// - `--kubeconfig` given: that file's current context; `--master`, if
    ///   also given, replaces its server;
    /// - only `--master`: that URL, with no credentials (upstream's
    ///   `BuildConfigFromFlags`);
    /// - neither: the in-cluster service account, else kube's kubeconfig
    ///   inference (`KUBECONFIG`, then `~/.kube/config`).
    ///
    /// # Errors
    ///
    /// [`Error::Kubeconfig`], [`Error::Infer`] or [`Error::Url`].
    pub async fn load(settings: &ClientSettings) -> Result<ClientConfig> {
        let mut kube = match (&settings.kubeconfig, &settings.master) {
            (Some(path), _) => {
                let kc =
                    Kubeconfig::read_from(path).map_err(|source| Error::Kubeconfig { path: path.clone(), source })?;
                kube::Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default())
                    .await
                    .map_err(|source| Error::Kubeconfig { path: path.clone(), source })?
            }
            (None, Some(master)) => kube::Config::new(parse_url(master)?),
            (None, None) => match kube::Config::incluster() {
                Ok(config) => config,
                Err(in_cluster) => kube::Config::from_kubeconfig(&KubeConfigOptions::default())
                    .await
                    .map_err(|kubeconfig| Error::Infer { in_cluster, kubeconfig })?,
            },
        };
        if let (Some(_), Some(master)) = (&settings.kubeconfig, &settings.master) {
            kube.cluster_url = parse_url(master)?;
        }
        Ok(ClientConfig::from_kube(kube, settings.qps, settings.burst))
    }

    /// A connection to `url` with no credentials (kube-sim, tests).
    ///
    /// # Errors
    ///
    /// [`Error::Url`].
    pub fn from_url(url: &str, qps: f32, burst: u32) -> Result<ClientConfig> {
        Ok(ClientConfig::from_kube(kube::Config::new(parse_url(url)?), qps, burst))
    }

    /// Wraps an already resolved kube configuration.
    pub fn from_kube(kube: kube::Config, qps: f32, burst: u32) -> ClientConfig {
        ClientConfig { kube, qps, burst, metrics: Arc::new(Mutex::new(None)) }
    }

    /// The API server's `host[:port]`: the `host` label of the request metrics.
    pub fn host(&self) -> String {
        self.kube.cluster_url.authority().map(|a| a.to_string()).unwrap_or_default()
    }

    /// The resolved kube configuration.
    pub fn kube_config(&self) -> &kube::Config {
        &self.kube
    }

    fn metrics(&self, registry: &Registry) -> Result<RestClientMetrics> {
        let mut slot = self.metrics.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(m) = slot.as_ref() {
            return Ok(m.clone());
        }
        let m = RestClientMetrics::register(registry).map_err(Error::Metrics)?;
        *slot = Some(m.clone());
        Ok(m)
    }
}

fn parse_url(url: &str) -> Result<http::Uri> {
    url.parse().map_err(|source| Error::Url { url: url.to_owned(), source })
}

/// The user agent for a client: [`USER_AGENT`], then `/suffix` as client-go's
/// `AddUserAgent` appends it (`kcm-rs/0.1.0/leader-election`).
pub fn user_agent(suffix: Option<&str>) -> String {
    match suffix {
        Some(s) if !s.is_empty() => format!("{USER_AGENT}/{s}"),
        _ => USER_AGENT.to_owned(),
    }
}

// === build ===

/// Builds a client: kube's stack for `config`, our user agent (with
/// `user_agent_suffix`), a QPS/burst limiter and request metrics registered on
/// `registry` (once per `config`). Must run inside a tokio runtime.
///
/// # Errors
///
/// [`Error::UserAgent`], [`Error::Build`], [`Error::Metrics`].
pub fn build(config: &ClientConfig, registry: &Registry, user_agent_suffix: Option<&str>) -> Result<kube::Client> {
    let ua = user_agent(user_agent_suffix);
    let ua_value = HeaderValue::from_str(&ua).map_err(|_| Error::UserAgent(ua.clone()))?;
    let mut kube = config.kube.clone();
    kube.headers.retain(|(name, _)| name != http::header::USER_AGENT);
    kube.headers.push((HeaderName::from_static("user-agent"), ua_value));

    let metrics = config.metrics(registry)?;
    let limiter = TokenBucket::new(config.qps, config.burst).map(Arc::new);
    let builder = kube::client::ClientBuilder::try_from(kube).map_err(Error::Build)?;
    Ok(builder
        .with_layer(&ClientRateLimitLayer::new(limiter))
        .with_layer(&RequestMetricsLayer::new(metrics, config.host()))
        .build())
}

/// [`build`] for a server at `url` with no credentials: `--sim` and tests.
///
/// # Errors
///
/// [`Error::Url`] and those of [`build`].
pub fn for_url(
    url: &str,
    qps: f32,
    burst: u32,
    registry: &Registry,
    user_agent_suffix: Option<&str>,
) -> Result<kube::Client> {
    build(&ClientConfig::from_url(url, qps, burst)?, registry, user_agent_suffix)
}

// === metrics ===

/// client-go's request metrics. Cheap to clone (the vectors are shared).
#[derive(Clone, Debug)]
pub struct RestClientMetrics {
    /// `rest_client_requests_total{code,method,host}`.
    pub requests_total: IntCounterVec,
    /// `rest_client_request_duration_seconds{verb,host}`.
    pub request_duration_seconds: HistogramVec,
    /// `rest_client_rate_limiter_duration_seconds{verb,host}`.
    pub rate_limiter_duration_seconds: HistogramVec,
}

impl RestClientMetrics {
    /// Creates the metrics and registers them on `registry`.
    ///
    /// # Errors
    ///
    /// prometheus's, e.g. when they are already registered there.
    pub fn register(registry: &Registry) -> Result<RestClientMetrics, prometheus::Error> {
        let requests_total = IntCounterVec::new(
            Opts::new(
                "rest_client_requests_total",
                "Number of HTTP requests, partitioned by status code, method, and host.",
            ),
            &["code", "method", "host"],
        )?;
        let request_duration_seconds = HistogramVec::new(
            HistogramOpts::new(
                "rest_client_request_duration_seconds",
                "Request latency in seconds. Broken down by verb, and host.",
            )
            .buckets(LATENCY_BUCKETS.to_vec()),
            &["verb", "host"],
        )?;
        let rate_limiter_duration_seconds = HistogramVec::new(
            HistogramOpts::new(
                "rest_client_rate_limiter_duration_seconds",
                "Client side rate limiter latency in seconds. Broken down by verb, and host.",
            )
            .buckets(LATENCY_BUCKETS.to_vec()),
            &["verb", "host"],
        )?;
        registry.register(Box::new(requests_total.clone()))?;
        registry.register(Box::new(request_duration_seconds.clone()))?;
        registry.register(Box::new(rate_limiter_duration_seconds.clone()))?;
        Ok(RestClientMetrics { requests_total, request_duration_seconds, rate_limiter_duration_seconds })
    }
}

/// Tower layer recording [`RestClientMetrics`] for each request.
#[derive(Clone, Debug)]
pub struct RequestMetricsLayer {
    metrics: RestClientMetrics,
    host: Arc<str>,
}

impl RequestMetricsLayer {
    /// Records into `metrics` with the `host` label `host`. (The label comes
    /// from the configuration: at this layer request URIs are still relative.)
    pub fn new(metrics: RestClientMetrics, host: String) -> Self {
        RequestMetricsLayer { metrics, host: host.into() }
    }
}

impl<S> Layer<S> for RequestMetricsLayer {
    type Service = RequestMetrics<S>;

    fn layer(&self, inner: S) -> Self::Service {
        RequestMetrics { inner, metrics: self.metrics.clone(), host: self.host.clone() }
    }
}

/// Service made by [`RequestMetricsLayer`].
#[derive(Clone, Debug)]
pub struct RequestMetrics<S> {
    inner: S,
    metrics: RestClientMetrics,
    host: Arc<str>,
}

impl<S, B, RB> Service<Request<B>> for RequestMetrics<S>
where
    S: Service<Request<B>, Response = Response<RB>>,
    S::Future: Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request<B>) -> Self::Future {
        let method = req.method().as_str().to_owned();
        let metrics = self.metrics.clone();
        let host = self.host.clone();
        let start = Instant::now();
        let fut = self.inner.call(req);
        Box::pin(async move {
            let result = fut.await;
            metrics
                .request_duration_seconds
                .with_label_values(&[method.as_str(), &*host])
                .observe(start.elapsed().as_secs_f64());
            let code = match &result {
                Ok(resp) => resp.status().as_u16().to_string(),
                Err(_) => "<error>".to_owned(),
            };
            metrics.requests_total.with_label_values(&[code.as_str(), method.as_str(), &*host]).inc();
            if let Ok(resp) = &result
                && let Some(waited) = resp.extensions().get::<ThrottleWait>()
            {
                metrics
                    .rate_limiter_duration_seconds
                    .with_label_values(&[method.as_str(), &*host])
                    .observe(waited.0.as_secs_f64());
            }
            result
        })
    }
}

/// Response extension: how long the request waited for a limiter token. Set
/// by [`ClientRateLimit`], read by [`RequestMetrics`] (which knows the host).
#[derive(Clone, Copy, Debug)]
struct ThrottleWait(Duration);

// === rate limiting ===

/// A token bucket like client-go's (`flowcontrol.NewTokenBucketRateLimiter`,
/// i.e. `golang.org/x/time/rate`): it starts full with `burst` tokens and
/// refills at `qps` tokens per second. Taking a token never fails: it
/// reserves the next one, possibly in the future, and says how long to wait,
/// so waiters are served in the order they asked.
#[derive(Debug)]
pub struct TokenBucket {
    qps: f64,
    burst: f64,
    state: Mutex<BucketState>,
}

#[derive(Debug)]
struct BucketState {
    /// Tokens available at `at`; negative when tokens are reserved ahead.
    tokens: f64,
    /// When `tokens` was last brought up to date.
    at: Instant,
}

impl TokenBucket {
    /// A full bucket; `None` when `qps <= 0` (no limit).
    pub fn new(qps: f32, burst: u32) -> Option<TokenBucket> {
        if qps <= 0.0 || qps.is_nan() {
            return None;
        }
        let burst = f64::from(burst.max(1));
        Some(TokenBucket {
            qps: f64::from(qps),
            burst,
            state: Mutex::new(BucketState { tokens: burst, at: Instant::now() }),
        })
    }

    /// Takes a token and returns how long to wait before using it (zero when
    /// one was available).
    pub fn reserve(&self) -> Duration {
        let now = Instant::now();
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let elapsed = now.saturating_duration_since(state.at).as_secs_f64();
        state.tokens = (state.tokens + elapsed * self.qps).min(self.burst);
        state.at = now;
        state.tokens -= 1.0;
        if state.tokens >= 0.0 { Duration::ZERO } else { Duration::from_secs_f64(-state.tokens / self.qps) }
    }

    /// Waits for a token; returns how long that took.
    pub async fn acquire(&self) -> Duration {
        let wait = self.reserve();
        if !wait.is_zero() {
            tokio::time::sleep(wait).await;
        }
        wait
    }
}

/// Tower layer holding each request until the client's [`TokenBucket`]
/// grants it a token; a `None` bucket (qps <= 0) passes everything.
#[derive(Clone, Debug)]
pub struct ClientRateLimitLayer {
    bucket: Option<Arc<TokenBucket>>,
}

impl ClientRateLimitLayer {
    /// Limits with `bucket`.
    pub fn new(bucket: Option<Arc<TokenBucket>>) -> Self {
        ClientRateLimitLayer { bucket }
    }
}

impl<S> Layer<S> for ClientRateLimitLayer {
    type Service = ClientRateLimit<S>;

    fn layer(&self, inner: S) -> Self::Service {
        ClientRateLimit { inner, bucket: self.bucket.clone(), permit: Permit::None }
    }
}

/// Service made by [`ClientRateLimitLayer`].
///
/// The wait happens in `poll_ready`, as in tower's own `RateLimit`: kube's
/// `Client` puts a buffer in front of this service, so requests queue there
/// in order while the head one waits for its token, and the inner service
/// (not `Clone`) is only called once a token is held.
pub struct ClientRateLimit<S> {
    inner: S,
    bucket: Option<Arc<TokenBucket>>,
    permit: Permit,
}

/// Where the next request stands with the bucket.
enum Permit {
    /// No token reserved yet; the next `poll_ready` reserves one.
    None,
    /// A token is reserved for when the sleep ends; `poll_ready` waits on it.
    Waiting { sleep: Pin<Box<Sleep>>, waited: Duration },
    /// The token is ours; the next `call` spends it.
    Ready { waited: Duration },
}

impl<S: fmt::Debug> fmt::Debug for ClientRateLimit<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientRateLimit").field("inner", &self.inner).field("bucket", &self.bucket).finish()
    }
}

impl<S, B, RB> Service<Request<B>> for ClientRateLimit<S>
where
    S: Service<Request<B>, Response = Response<RB>>,
    S::Future: Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        if let Some(bucket) = &self.bucket {
            loop {
                match &mut self.permit {
                    Permit::None => {
                        let wait = bucket.reserve();
                        self.permit = if wait.is_zero() {
                            Permit::Ready { waited: wait }
                        } else {
                            Permit::Waiting { sleep: Box::pin(tokio::time::sleep(wait)), waited: wait }
                        };
                    }
                    Permit::Waiting { sleep, waited } => {
                        ready!(sleep.as_mut().poll(cx));
                        let waited = *waited;
                        if waited > LONG_THROTTLE_LATENCY {
                            tracing::info!(
                                waited = ?waited,
                                "Waited for {waited:?} due to client-side throttling, not priority and fairness"
                            );
                        }
                        self.permit = Permit::Ready { waited };
                    }
                    Permit::Ready { .. } => break,
                }
            }
        }
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request<B>) -> Self::Future {
        let waited = match std::mem::replace(&mut self.permit, Permit::None) {
            Permit::Ready { waited } => Some(waited),
            // Unlimited (no bucket), or called without poll_ready: nothing to record.
            Permit::None | Permit::Waiting { .. } => None,
        };
        let fut = self.inner.call(req);
        Box::pin(async move {
            let mut resp = fut.await?;
            if let Some(waited) = waited {
                resp.extensions_mut().insert(ThrottleWait(waited));
            }
            Ok(resp)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
    use kube::api::{Api, ListParams, ObjectMeta, PostParams};
    use kube_sim::{Sim, SimConfig};

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
        assert_eq!(
            user_agent(Some("leader-election")),
            format!("kcm-rs/{}/leader-election", env!("CARGO_PKG_VERSION"))
        );
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
        let cm =
            ConfigMap { metadata: ObjectMeta { name: Some("c".into()), ..Default::default() }, ..Default::default() };
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
            ClientConfig::load(&ClientSettings { master: Some("http://10.9.8.7:1234".into()), ..settings })
                .await
                .unwrap();
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
}
