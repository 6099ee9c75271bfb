//! The daemon's `kube::Client`: where the API server is, who we say we are,
//! how fast we may talk to it, and what we tell Prometheus about it.
//!
//! Two stages, like the `config` module: [`ClientConfig::load`] resolves
//! the API server and credentials once (async: kubeconfig exec plugins may
//! run), then [`build`] makes as many clients as the process needs,
//! synchronously, each with its own user-agent suffix and its own QPS/burst
//! budget, as client-go gives each clientset its own token bucket (so the
//! leader-election client is never starved by controller traffic).
//!
//! Each client's service stack, outermost first:
//!
//! ```text
//! RequestMetrics   rest_client_requests_total, rest_client_request_duration_seconds,
//!                  rest_client_rate_limiter_duration_seconds
//! ClientRateLimit  token bucket (--kube-api-qps, --kube-api-burst): requests wait for a token
//! Retry            kube's own retries on 429/503/504 (moved out of kube's stack, see below)
//! Bearer           with --use-service-account-credentials only: the controller's
//!                  ServiceAccount token (`bearer.rs`, `token.rs`, `account.rs`)
//! Fenced           the leader's write fence (`fence.rs`): a write is refused as it is sent
//! User-Agent       this client's (`shared.rs`)
//! kube's stack     base URI, auth, headers, tracing, hyper: one per configuration,
//!                  shared by all its clients (`shared.rs`)
//! ```
//!
//! The fence sits below every wait a request can make inside the client
//! (a token, a retry's backoff), so that a write which waited past the end
//! of the lease is refused rather than sent. That is why kube's retry layer
//! is taken out of kube's stack (`default_retry` off) and put back above the
//! fence with kube's own policy: a retried write is checked again.
//!
//! Metric names, labels and buckets are client-go's
//! (component-base/metrics/prometheus/restclient). Two differences: a request
//! kube retries is counted once, with its final status, and its duration runs
//! until the response head arrives (client-go counts every attempt and, for
//! non-streaming calls, includes reading the body).
//!
//! A token is awaited above the fence too, so that a write is checked
//! after that wait.
//!
//! With [`ClientConfig::service_accounts`] (`--use-service-account-credentials`),
//! each client built acts as the ServiceAccount `kube-system/<its user-agent
//! suffix>`: the configuration keeps the server and its CA and drops the
//! kubeconfig's own credentials (upstream's `AnonymousClientConfig`), and
//! the Bearer layer sets the account's token on every request.
//!
//! kube's stack is below the fence: besides its credentials (an exec
//! plugin's token may be refreshed there), its only wait is its buffer's
//! worker handing the request to hyper.
//!
//! This module owns [`ClientConfig`] and [`build`]; our layers are
//! `metrics.rs` ([`RequestMetrics`]), `limiter.rs` ([`ClientRateLimit`]
//! over a [`RequestLimiter`]), `bearer.rs` ([`Bearer`] over a
//! [`TokenSource`], `token.rs`, from [`ServiceAccounts`], `account.rs`) and
//! `fence.rs` ([`Fenced`] over a [`WriteFence`]).

use std::fmt;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use http::HeaderValue;
use kube::client::retry::RetryPolicy;
use kube::config::{KubeConfigOptions, Kubeconfig};
use prometheus::Registry;
use tower::retry::RetryLayer;
use tower::util::option_layer;

mod account;
mod bearer;
mod fence;
mod limiter;
mod metrics;
mod shared;
mod token;

pub use account::ServiceAccounts;
pub use bearer::{Bearer, BearerLayer};
pub use fence::{FenceLayer, Fenced, Refused, WriteFence};
pub use limiter::{ClientRateLimit, ClientRateLimitLayer, RequestLimiter};
pub use metrics::{LATENCY_BUCKETS, RequestMetrics, RequestMetricsLayer, RestClientMetrics};
use shared::SharedStack;
pub use token::{Fetch, Issued, TokenError, TokenSource};

/// Where the API server is and how hard to talk to it (kube-controller-manager's
/// `--kubeconfig`, `--master`, `--kube-api-qps`, `--kube-api-burst`,
/// `--kube-api-content-type`).
#[derive(Debug, Clone, PartialEq)]
pub struct ClientSettings {
    /// `--kubeconfig`.
    pub kubeconfig: Option<PathBuf>,
    /// `--master`: overrides the kubeconfig's server.
    pub master: Option<String>,
    /// `--kube-api-qps`; `<= 0` disables the client-side limiter.
    pub qps: f32,
    /// `--kube-api-burst`.
    pub burst: u32,
    /// `--kube-api-content-type`, recorded only: kcm-rs always uses JSON.
    pub content_type: String,
}

/// Result of building a client.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The user agent every client sends (before any per-use suffix).
pub const USER_AGENT: &str = concat!("kcm-rs/", env!("CARGO_PKG_VERSION"));

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
    /// A client acting as a ServiceAccount was built without a name to
    /// act as.
    #[error("a client acting as a ServiceAccount needs its name (the user-agent suffix)")]
    Unnamed,
}

// === config ===

/// A resolved API server connection plus the limiter settings and, for
/// the controllers' clients of a leader, its write fence; cheap to clone.
/// Every client built from one `ClientConfig` shares its request metrics.
#[derive(Clone)]
pub struct ClientConfig {
    kube: kube::Config,
    qps: f32,
    burst: u32,
    /// Checked by every client built from this config; `None`: no fence.
    fence: Option<WriteFence>,
    /// `Some`: each client acts as the ServiceAccount of its name (and
    /// `kube` has no credentials of its own).
    accounts: Option<ServiceAccounts>,
    /// Registered on the first [`build`]'s registry and reused by later
    /// builds: prometheus refuses a second registration of the same names,
    /// and client-go's rest_client metrics are process-wide anyway.
    metrics: Arc<Mutex<Option<RestClientMetrics>>>,
    /// kube's stack for `kube`, shared by every client built from this
    /// config and those made from it with the same `kube`.
    stack: Arc<SharedStack>,
}

impl fmt::Debug for ClientConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientConfig")
            .field("cluster_url", &self.kube.cluster_url)
            .field("qps", &self.qps)
            .field("burst", &self.burst)
            .field("fence", &self.fence)
            .field("service_accounts", &self.accounts.is_some())
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
        let (metrics, stack) = (Arc::new(Mutex::new(None)), Arc::default());
        ClientConfig { kube, qps, burst, fence: None, accounts: None, metrics, stack }
    }

    /// The same server, CA, limits and fence, without the kubeconfig's
    /// credentials (no client certificate, token or exec plugin: upstream's
    /// `AnonymousClientConfig`): each client built from it acts as the
    /// ServiceAccount `kube-system/<its user-agent suffix>`, its tokens
    /// obtained through `root`; request metrics stay shared.
    pub fn service_accounts(&self, root: kube::Client) -> ClientConfig {
        let mut kube = self.kube.clone();
        kube.auth_info = kube::config::AuthInfo::default();
        ClientConfig { kube, accounts: Some(ServiceAccounts::new(root)), stack: Arc::default(), ..self.clone() }
    }

    /// The same connection, its clients' writes checked against `fence`
    /// (the controllers' clients of a process under leader election);
    /// request metrics stay shared.
    pub fn fenced(&self, fence: WriteFence) -> ClientConfig {
        ClientConfig { fence: Some(fence), ..self.clone() }
    }

    /// The same connection with its QPS and burst multiplied (upstream's
    /// namespace controller: ×20 and ×100); request metrics stay shared.
    /// A QPS of 0 (no limit) stays 0.
    pub fn scaled(&self, qps_factor: f32, burst_factor: u32) -> ClientConfig {
        ClientConfig { qps: self.qps * qps_factor, burst: self.burst.saturating_mul(burst_factor), ..self.clone() }
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
/// `user_agent_suffix`), the config's write fence, the ServiceAccount
/// token of `user_agent_suffix` when the config acts as service accounts,
/// kube's retries above them, a QPS/burst limiter and request metrics
/// registered on `registry` (once per `config`). Must run inside a tokio
/// runtime.
///
/// # Errors
///
/// [`Error::UserAgent`], [`Error::Build`], [`Error::Metrics`],
/// [`Error::Unnamed`].
pub fn build(config: &ClientConfig, registry: &Registry, user_agent_suffix: Option<&str>) -> Result<kube::Client> {
    let ua = user_agent(user_agent_suffix);
    let ua_value = HeaderValue::from_str(&ua).map_err(|_| Error::UserAgent(ua.clone()))?;
    let bearer = match (&config.accounts, user_agent_suffix) {
        (None, _) => None,
        (Some(accounts), Some(name)) if !name.is_empty() => Some(BearerLayer::new(accounts.source(name))),
        (Some(_), _) => return Err(Error::Unnamed),
    };
    let metrics = config.metrics(registry)?;
    let limiter = RequestLimiter::new(config.qps, config.burst).map(Arc::new);
    let stack = config.stack.get(|| without_user_agent_or_retries(&config.kube)).map_err(Error::Build)?;
    let builder =
        kube::client::ClientBuilder::new(shared::sending_as(stack, ua_value), config.kube.default_namespace.clone());
    Ok(builder
        .with_layer(&FenceLayer::new(config.fence.clone()))
        .with_layer(&option_layer(bearer))
        .with_layer(&option_layer(config.kube.default_retry.then(|| RetryLayer::new(RetryPolicy::server_retry()))))
        .with_layer(&ClientRateLimitLayer::new(limiter))
        .with_layer(&RequestMetricsLayer::new(metrics, config.host()))
        .build())
}

/// `kube` without a user agent (each client sets its own) and without
/// kube's retries, which [`build`] puts back above the fence, so that each
/// retry is checked again: what the shared stack is built from.
fn without_user_agent_or_retries(kube: &kube::Config) -> kube::Config {
    let mut kube = kube.clone();
    kube.headers.retain(|(name, _)| name != http::header::USER_AGENT);
    kube.default_retry = false;
    kube
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

#[cfg(test)]
mod tests {
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
        let bucket = RequestLimiter::new(10.0, 5).unwrap();
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
        let bucket = Arc::new(RequestLimiter::new(10.0, burst).unwrap());
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
        assert!(RequestLimiter::new(0.0, 30).is_none());
        assert!(RequestLimiter::new(-1.0, 30).is_none());
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
        // They share kube's stack, and each still says who it is.
        let agents = |name: &str| {
            let lines = sim.controls().stats().into_iter();
            lines.filter(|l| l.verb == "get" && l.resource == "namespaces" && l.user_agent == name).count()
        };
        assert_eq!((agents(USER_AGENT), agents(&user_agent(Some("leader-election")))), (1, 1));
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
    async fn acting_as_service_accounts_drops_the_kubeconfigs_credentials_and_needs_a_name() {
        let mut kube = kube::Config::new("https://10.9.8.7:6443".parse().unwrap());
        kube.tls_server_name = Some("kubernetes".to_owned());
        kube.auth_info.token = Some("root's token".to_owned().into());
        let root = ClientConfig::from_kube(kube, 20.0, 30);
        let registry = Registry::new();
        let accounts = root.service_accounts(build(&root, &registry, None).unwrap());
        let anonymous = accounts.kube_config();
        assert!(anonymous.auth_info.token.is_none(), "{:?}", anonymous.auth_info);
        let server = (anonymous.cluster_url.to_string(), anonymous.tls_server_name.as_deref());
        assert_eq!(server, ("https://10.9.8.7:6443/".to_owned(), Some("kubernetes")));
        assert!(matches!(build(&accounts, &registry, None), Err(Error::Unnamed)));
        assert!(build(&accounts, &registry, Some("job-controller")).is_ok());
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
