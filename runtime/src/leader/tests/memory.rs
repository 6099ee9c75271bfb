//! An API server in memory, for the elector on paused time: one Lease
//! (get, create, replace guarded by `resourceVersion`, each answered after
//! a latency the test sets) and a stand-in for every other write (`201`),
//! each request logged as it arrives. Nothing crosses a socket, so tokio's
//! paused clock moves only when every task waits, and a test can jump it
//! as a frozen process sees it jump.

use std::future::Future;

use http::{Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use serde_json::{Value, json};
use tower::BoxError;

use super::*;

/// What one request was and how it was answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Logged {
    pub(super) method: Method,
    /// `lease` for the Lease, else the last path segment (the resource).
    pub(super) target: String,
    /// The answer's code; 0 while (or if never) answered.
    pub(super) status: u16,
    /// When it arrived (its future was first polled).
    pub(super) at: Instant,
}

#[derive(Default)]
struct State {
    lease: Option<Value>,
    version: u64,
    /// How long a Lease request takes to be answered.
    lease_latency: Duration,
    log: Vec<Logged>,
}

/// The server; clones share it.
#[derive(Clone, Default)]
pub(super) struct Memory {
    state: Arc<Mutex<State>>,
}

impl Memory {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().expect("not poisoned")
    }

    /// A client talking to this server, through `layer`.
    pub(super) fn client<L>(&self, layer: L) -> kube::Client
    where
        L: tower::Layer<MemoryService>,
        L::Service: tower::Service<Request<kube::client::Body>, Response = Response<Full<Bytes>>> + Send + 'static,
        <L::Service as tower::Service<Request<kube::client::Body>>>::Future: Send + 'static,
        <L::Service as tower::Service<Request<kube::client::Body>>>::Error: Into<BoxError>,
    {
        kube::Client::new(layer.layer(MemoryService(self.clone())), "default")
    }

    /// Lease requests are answered after `latency` from now on.
    pub(super) fn set_lease_latency(&self, latency: Duration) {
        self.state().lease_latency = latency;
    }

    /// Every request so far.
    pub(super) fn log(&self) -> Vec<Logged> {
        self.state().log.clone()
    }

    /// Another replica writes the Lease as its own, with a 60 s lease.
    pub(super) fn take_over(&self, holder: &str) {
        let now = Timestamp::now();
        let record = Record {
            holder: holder.to_owned(),
            lease_duration_seconds: 60,
            acquire_time: Some(now),
            renew_time: Some(now),
            transitions: 1,
        };
        let mut state = self.state();
        let mut lease = state.lease.clone().expect("a Lease to take over");
        lease["spec"] = serde_json::to_value(record.to_spec()).expect("a spec");
        state.version += 1;
        lease["metadata"]["resourceVersion"] = json!(state.version.to_string());
        state.lease = Some(lease);
    }

    async fn answer(&self, method: Method, path: String, body: Bytes) -> (StatusCode, Value) {
        let is_lease = path.contains("/leases");
        if is_lease {
            let latency = self.state().lease_latency;
            tokio::time::sleep(latency).await;
        }
        let mut state = self.state();
        match (is_lease, method) {
            (true, Method::GET) => match &state.lease {
                Some(lease) => (StatusCode::OK, lease.clone()),
                None => failure(StatusCode::NOT_FOUND, "NotFound"),
            },
            (true, Method::POST) if state.lease.is_some() => failure(StatusCode::CONFLICT, "AlreadyExists"),
            (true, Method::POST | Method::PUT) => {
                let mut lease: Value = serde_json::from_slice(&body).expect("a Lease");
                let sent = lease["metadata"]["resourceVersion"].as_str().map(str::to_owned);
                let current = state.lease.as_ref().map(|l| l["metadata"]["resourceVersion"].clone());
                if let Some(current) = current
                    && current.as_str() != sent.as_deref()
                {
                    return failure(StatusCode::CONFLICT, "Conflict");
                }
                state.version += 1;
                lease["metadata"]["resourceVersion"] = json!(state.version.to_string());
                state.lease = Some(lease.clone());
                (StatusCode::OK, lease)
            }
            (_, Method::GET) => failure(StatusCode::NOT_FOUND, "NotFound"),
            (_, _) => (StatusCode::CREATED, serde_json::from_slice(&body).unwrap_or(Value::Null)),
        }
    }
}

fn failure(code: StatusCode, reason: &str) -> (StatusCode, Value) {
    let status = json!({"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": reason,
        "message": reason, "code": code.as_u16()});
    (code, status)
}

/// The server as a tower service (what a kube client's stack ends in).
#[derive(Clone)]
pub(super) struct MemoryService(Memory);

impl tower::Service<Request<kube::client::Body>> for MemoryService {
    type Response = Response<Full<Bytes>>;
    type Error = BoxError;
    type Future = std::pin::Pin<Box<dyn Future<Output = Result<Self::Response, BoxError>> + Send>>;

    fn poll_ready(&mut self, _: &mut std::task::Context<'_>) -> std::task::Poll<Result<(), BoxError>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request<kube::client::Body>) -> Self::Future {
        let memory = self.0.clone();
        Box::pin(async move {
            let (parts, body) = req.into_parts();
            let path = parts.uri.path().to_owned();
            let target = if path.contains("/leases") { "lease".to_owned() } else { resource(&path) };
            let entry = {
                let mut state = memory.state();
                let logged = Logged { method: parts.method.clone(), target, status: 0, at: Instant::now() };
                state.log.push(logged);
                state.log.len() - 1
            };
            let body = body.collect().await?.to_bytes();
            let (status, answer) = memory.answer(parts.method, path, body).await;
            memory.state().log[entry].status = status.as_u16();
            let body = Full::new(Bytes::from(serde_json::to_vec(&answer)?));
            Ok(Response::builder().status(status).header("content-type", "application/json").body(body)?)
        })
    }
}

/// The last segment of a path: the resource, for a create.
fn resource(path: &str) -> String {
    path.rsplit('/').next().unwrap_or_default().to_owned()
}
