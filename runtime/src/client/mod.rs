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
//! kube's stack     base URI, retries on 429/503/504, auth, headers (User-Agent), tracing, hyper
//! ```
//!
//! Metric names, labels and buckets are client-go's
//! (component-base/metrics/prometheus/restclient). Two differences: a request
//! kube retries is counted once, with its final status, and its duration runs
//! until the response head arrives (client-go counts every attempt and, for
//! non-streaming calls, includes reading the body).
//!
//! This module owns [`ClientConfig`] and [`build`]; the two layers are
//! `metrics.rs` ([`RequestMetrics`]) and `limiter.rs` ([`ClientRateLimit`]
//! over a [`TokenBucket`]).

use std::fmt;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use http::{HeaderName, HeaderValue};
use kube::config::{KubeConfigOptions, Kubeconfig};
use prometheus::Registry;

mod limiter;
mod metrics;
#[cfg(test)]
mod tests;

pub use limiter::{ClientRateLimit, ClientRateLimitLayer, TokenBucket};
pub use metrics::{RequestMetrics, RequestMetricsLayer, RestClientMetrics};

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

/// client-go's latency buckets for `rest_client_request_duration_seconds`
/// and `rest_client_rate_limiter_duration_seconds`.
pub const LATENCY_BUCKETS: [f64; 12] = [0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0];

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
