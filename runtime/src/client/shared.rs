//! kube's HTTP stack (TLS, credentials, base URI, hyper's connection
//! pool), built once per configuration and shared by every client built
//! from it, as client-go's transport cache shares one transport among the
//! clientsets of one rest config.
//!
//! kube builds a rustls configuration, with its root certificates, and a
//! connection pool for each `kube::Client` it makes from a `Config`. With
//! a client per controller, that was 3 of the 5.3 MB on an idle kcm-rs's
//! heap (heaptrack), and a pool of idle connections per controller. Each
//! client still has its own user agent and its own layers above the stack
//! (`build`); below them, requests go through this one stack, whose buffer
//! only hands each to hyper.

use std::sync::{Mutex, PoisonError};

use http::{HeaderValue, Request, header};
use kube::client::Body;

/// The shared stack of one configuration, made on first use.
#[derive(Default)]
pub(super) struct SharedStack {
    client: Mutex<Option<kube::Client>>,
}

impl SharedStack {
    /// The stack, built by the first call from the configuration `kube`
    /// gives (the one this stack belongs to).
    pub(super) fn get(&self, kube: impl FnOnce() -> kube::Config) -> Result<kube::Client, kube::Error> {
        let mut slot = self.client.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(client) = slot.as_ref() {
            return Ok(client.clone());
        }
        let client = kube::client::ClientBuilder::try_from(kube())?.build();
        *slot = Some(client.clone());
        Ok(client)
    }
}

/// A service sending each request through `stack` as `user_agent`.
pub(super) fn sending_as(
    stack: kube::Client,
    user_agent: HeaderValue,
) -> impl tower::Service<
    Request<Body>,
    Response = http::Response<Body>,
    Error = kube::Error,
    Future = impl Future<Output = Result<http::Response<Body>, kube::Error>> + Send + 'static,
> + Clone
+ Send
+ 'static {
    tower::service_fn(move |mut request: Request<Body>| {
        request.headers_mut().insert(header::USER_AGENT, user_agent.clone());
        let stack = stack.clone();
        async move { stack.send(request).await }
    })
}
