//! The [`Bearer`] layer: every request of a client acting as a
//! ServiceAccount carries that account's token (`token.rs`), set as it goes
//! out, as client-go's token-source transport sets it; a 401 answer drops
//! the token the request carried, so that the next request gets a new one.
//! A request whose token cannot be had fails with the
//! [`TokenError`](super::TokenError) naming the account.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use http::{Request, Response, StatusCode, header::AUTHORIZATION};
use tokio::time::Instant;
use tower::{BoxError, Layer, Service};

use super::token::TokenSource;

/// Wraps a service in [`Bearer`] with one account's token source.
#[derive(Debug, Clone)]
pub struct BearerLayer {
    source: Arc<TokenSource>,
}

impl BearerLayer {
    /// Requests through the layer carry `source`'s token.
    pub fn new(source: Arc<TokenSource>) -> BearerLayer {
        BearerLayer { source }
    }
}

impl<S> Layer<S> for BearerLayer {
    type Service = Bearer<S>;

    fn layer(&self, inner: S) -> Bearer<S> {
        Bearer { inner, source: self.source.clone() }
    }
}

/// Sets `Authorization: Bearer <token>` on each request; see the module
/// doc. The inner service must be cloneable (the fence over the shared
/// stack is), since the token is awaited before the request is handed on.
#[derive(Debug, Clone)]
pub struct Bearer<S> {
    inner: S,
    source: Arc<TokenSource>,
}

impl<S, B, RB> Service<Request<B>> for Bearer<S>
where
    S: Service<Request<B>, Response = Response<RB>> + Clone + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Into<BoxError>,
    B: Send + 'static,
    RB: Send + 'static,
{
    type Response = S::Response;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, mut req: Request<B>) -> Self::Future {
        // The clone polled ready goes with this request; the fresh clone
        // stays for the next poll_ready.
        let fresh = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, fresh);
        let source = self.source.clone();
        Box::pin(async move {
            // Taken before the token, as client-go does: a token obtained
            // for this very request is not dropped by its 401; the next
            // request's 401 drops it.
            let sent = Instant::now();
            let authorization = source.authorization().await?;
            req.headers_mut().insert(AUTHORIZATION, authorization);
            let response = inner.call(req).await.map_err(Into::into)?;
            if response.status() == StatusCode::UNAUTHORIZED {
                source.reset_older_than(sent).await;
            }
            Ok(response)
        })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;
    use std::time::Duration;

    use tower::ServiceExt as _;

    use super::*;
    use crate::client::token::{Fetch, Issued};

    /// A source handing out `t0`, `t1`, ... each an hour long.
    fn counting_source() -> Arc<TokenSource> {
        let n = Arc::new(Mutex::new(0));
        let fetch: Fetch = Arc::new(move || {
            let mut n = n.lock().unwrap();
            let token = format!("t{n}");
            *n += 1;
            Box::pin(async move { Ok(Issued { token, lifetime: Duration::from_secs(3600) }) })
        });
        Arc::new(TokenSource::new("kube-system/job-controller".into(), fetch))
    }

    /// A server answering 401 to `t0` and 200 to anything else, echoing
    /// the header it got.
    fn server() -> impl Service<Request<()>, Response = Response<String>, Error = BoxError, Future: Send + 'static>
    + Clone
    + Send
    + 'static {
        tower::service_fn(|req: Request<()>| async move {
            let auth = req.headers().get(AUTHORIZATION).and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
            let status = if auth == "Bearer t0" { StatusCode::UNAUTHORIZED } else { StatusCode::OK };
            Ok::<_, BoxError>(Response::builder().status(status).body(auth).unwrap())
        })
    }

    #[tokio::test(start_paused = true)]
    async fn requests_carry_the_token_and_a_401_to_an_older_one_brings_a_new_one() {
        let svc = BearerLayer::new(counting_source()).layer(server());
        let answers = async |svc: &Bearer<_>| {
            let response: Response<String> = svc.clone().oneshot(Request::new(())).await.unwrap();
            (response.status(), response.into_body())
        };
        // Obtained for this request: its 401 does not drop it.
        assert_eq!(answers(&svc).await, (StatusCode::UNAUTHORIZED, "Bearer t0".to_owned()));
        tokio::time::advance(Duration::from_millis(1)).await;
        assert_eq!(answers(&svc).await, (StatusCode::UNAUTHORIZED, "Bearer t0".to_owned()));
        assert_eq!(answers(&svc).await, (StatusCode::OK, "Bearer t1".to_owned()));
        assert_eq!(answers(&svc).await, (StatusCode::OK, "Bearer t1".to_owned()), "kept while accepted");
    }
}
