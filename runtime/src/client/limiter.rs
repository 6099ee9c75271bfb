//! Client-side rate limiting as client-go does it: a [`RequestLimiter`]
//! (`--kube-api-qps`, `--kube-api-burst`) and the [`ClientRateLimit`] layer
//! that makes each request wait for a token. The wait is handed to the
//! metrics layer (`metrics.rs`) on the response.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, ready};
use std::time::Duration;

use http::{Request, Response};
use tokio::time::{Instant, Sleep};
use tower::{Layer, Service};

/// client-go logs a request's client-side throttling wait above this.
const LONG_THROTTLE_LATENCY: Duration = Duration::from_secs(1);

/// Response extension: how long the request waited for a limiter token. Set
/// by [`ClientRateLimit`], read by [`RequestMetrics`] (which knows the host).
#[derive(Clone, Copy, Debug)]
pub(super) struct ThrottleWait(pub(super) Duration);

/// The client's token bucket (client-go's
/// `flowcontrol.NewTokenBucketRateLimiter(qps, burst)`): it starts full with
/// `burst` tokens and refills at `qps` tokens per second. Taking a token
/// never fails: it reserves the next one, possibly in the future, and says
/// how long to wait, so waiters are served in the order they asked.
#[derive(Debug)]
pub struct RequestLimiter(Mutex<kcm_gotime::TokenBucket<std::time::Instant>>);

impl RequestLimiter {
    /// A full bucket; `None` when `qps <= 0` (no limit).
    pub fn new(qps: f32, burst: u32) -> Option<RequestLimiter> {
        if qps <= 0.0 || qps.is_nan() {
            return None;
        }
        Some(RequestLimiter(Mutex::new(kcm_gotime::TokenBucket::new(f64::from(qps), burst))))
    }

    /// Takes a token and returns how long to wait before using it (zero when
    /// one was available).
    pub fn reserve(&self) -> Duration {
        let now = Instant::now().into_std();
        self.0.lock().unwrap_or_else(|p| p.into_inner()).reserve(now)
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

/// Tower layer holding each request until the client's [`RequestLimiter`]
/// grants it a token; a `None` bucket (qps <= 0) passes everything.
#[derive(Clone, Debug)]
pub struct ClientRateLimitLayer {
    bucket: Option<Arc<RequestLimiter>>,
}

impl ClientRateLimitLayer {
    /// Limits with `bucket`.
    pub fn new(bucket: Option<Arc<RequestLimiter>>) -> Self {
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
    bucket: Option<Arc<RequestLimiter>>,
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
