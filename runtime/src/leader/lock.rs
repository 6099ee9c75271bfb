//! The Lease as a lock (client-go's `resourcelock.LeaseLock`): reading,
//! creating and replacing the one Lease the election is about, each request
//! bounded by the request timeout and a caller's deadline. The Lease last
//! read or written is kept: its `resourceVersion` is the optimistic lock of
//! the next replace. Which record to write, and when, is the elector's.

use std::future::Future;
use std::time::Duration;

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Api, PostParams};
use tokio::time::Instant;

use super::record::Record;

/// The election's Lease, and the requests on it.
pub(super) struct LeaseLock {
    api: Api<Lease>,
    name: String,
    namespace: String,
    /// Longest one request may take.
    request_timeout: Duration,
    /// The Lease as last read or written (client-go `LeaseLock.lease`).
    lease: Option<Lease>,
}

/// What a Lease request ends in when it does not succeed.
pub(super) enum Read {
    /// The Lease was read (and is now the cached one).
    Found(Record),
    /// There is no such Lease.
    Missing,
    /// The request failed.
    Failed(CallError),
}

/// A failed Lease request (logged, then retried: never surfaced).
#[derive(Debug, thiserror::Error)]
pub(super) enum CallError {
    /// The API server answered with an error.
    #[error(transparent)]
    Kube(kube::Error),
    /// No answer within the request's bound.
    #[error("request timed out")]
    TimedOut,
    /// Nothing has been read yet to replace.
    #[error("no Lease read yet")]
    NothingRead,
}

impl LeaseLock {
    /// The lock on `namespace/name`, through `client`.
    pub(super) fn new(client: kube::Client, namespace: &str, name: &str, request_timeout: Duration) -> Self {
        LeaseLock {
            api: Api::namespaced(client, namespace),
            name: name.to_owned(),
            namespace: namespace.to_owned(),
            request_timeout,
            lease: None,
        }
    }

    /// Whether a Lease has been read or written (the renew fast path
    /// replaces it without reading again).
    pub(super) fn has_cached(&self) -> bool {
        self.lease.is_some()
    }

    /// Reads the Lease.
    pub(super) async fn get(&mut self, deadline: Option<Instant>) -> Read {
        match self.bounded(deadline, self.api.get(&self.name)).await {
            Ok(lease) => {
                let record = Record::from_spec(lease.spec.as_ref());
                self.lease = Some(lease);
                Read::Found(record)
            }
            Err(CallError::Kube(kube::Error::Api(status))) if status.is_not_found() => Read::Missing,
            Err(err) => Read::Failed(err),
        }
    }

    /// Creates the Lease holding `record`; answers when the request was
    /// sent (what the write fence counts from).
    pub(super) async fn create(&mut self, record: &Record, deadline: Option<Instant>) -> Result<Instant, CallError> {
        let lease = Lease {
            metadata: ObjectMeta {
                name: Some(self.name.clone()),
                namespace: Some(self.namespace.clone()),
                ..ObjectMeta::default()
            },
            spec: Some(record.to_spec()),
        };
        let sent = Instant::now();
        let created = self.bounded(deadline, self.api.create(&PostParams::default(), &lease)).await?;
        self.lease = Some(created);
        Ok(sent)
    }

    /// Replaces the cached Lease's spec with `record`, guarded by its
    /// `resourceVersion`; on success the answer becomes the cached Lease.
    /// Answers when the request was sent.
    pub(super) async fn update(&mut self, record: &Record, deadline: Option<Instant>) -> Result<Instant, CallError> {
        let Some(mut lease) = self.lease.clone() else {
            return Err(CallError::NothingRead);
        };
        lease.spec = Some(record.to_spec());
        let sent = Instant::now();
        let updated = self.bounded(deadline, self.api.replace(&self.name, &PostParams::default(), &lease)).await?;
        self.lease = Some(updated);
        Ok(sent)
    }

    /// Runs one request within the request timeout and `deadline`.
    async fn bounded<T>(
        &self,
        deadline: Option<Instant>,
        call: impl Future<Output = kube::Result<T>>,
    ) -> Result<T, CallError> {
        let mut until = Instant::now() + self.request_timeout;
        if let Some(deadline) = deadline {
            until = until.min(deadline);
        }
        match tokio::time::timeout_at(until, call).await {
            Ok(result) => result.map_err(CallError::Kube),
            Err(_) => Err(CallError::TimedOut),
        }
    }
}
