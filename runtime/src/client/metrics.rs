//! Request metrics with client-go's names, labels and buckets:
//! [`RestClientMetrics`] and the [`RequestMetrics`] layer that records
//! them, the outermost layer of every client's stack.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use http::{Request, Response};
use prometheus::{HistogramOpts, HistogramVec, IntCounterVec, Opts, Registry};
use tokio::time::Instant;
use tower::{Layer, Service};

use super::limiter::ThrottleWait;

/// client-go's latency buckets for `rest_client_request_duration_seconds`
/// and `rest_client_rate_limiter_duration_seconds`.
pub const LATENCY_BUCKETS: [f64; 12] = [0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0];

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
