//! How a binder sync talks to the world without doing I/O: it is written
//! straight through, as upstream's is, and asks for each request's answer
//! through a [`Cx`]. The driver runs the sync; when it stops at a request
//! with no answer yet ([`Flow::Need`]), the driver performs the request,
//! appends the answer, and runs the sync again from the start, which
//! replays the answers it has and goes one request further. The sync must
//! read a fixed [`View`](crate::pvbinder::View) for this to hold: the same
//! inputs and answers give the same requests.

use k8s_openapi::api::core::v1::{PersistentVolume, PersistentVolumeClaim};

use crate::plan::Event;
use crate::pvbinder::metrics::Metric;

/// What a sync asks the driver to do.
#[derive(Debug, Clone, PartialEq)]
pub enum Request {
    /// Update (PUT) the volume; answered with the volume written.
    UpdateVolume(Box<PersistentVolume>),
    /// Update the volume's status; answered with the volume written.
    UpdateVolumeStatus(Box<PersistentVolume>),
    /// Update (PUT) the claim; answered with the claim written.
    UpdateClaim(Box<PersistentVolumeClaim>),
    /// Update the claim's status; answered with the claim written.
    UpdateClaimStatus(Box<PersistentVolumeClaim>),
    /// Read the claim from the API server; answered with it or
    /// [`Reply::NotFound`].
    GetClaim {
        /// Its namespace.
        namespace: String,
        /// Its name.
        name: String,
    },
    /// Read the volume from the API server; answered with it or
    /// [`Reply::NotFound`].
    GetVolume(String),
    /// Record the event; answered [`Reply::Done`].
    Event(Event),
    /// Queue the claim (`namespace/name`) for a sync of its own; answered
    /// [`Reply::Done`].
    QueueClaim(String),
    /// Record the metric; answered [`Reply::Done`].
    Metric(Metric),
}

/// The answer to a [`Request`].
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// The volume as written or read.
    Volume(Box<PersistentVolume>),
    /// The claim as written or read.
    Claim(Box<PersistentVolumeClaim>),
    /// The object is not there (404).
    NotFound,
    /// Done.
    Done,
    /// The request failed with this message.
    Failed(String),
}

/// Why a sync stopped before its end.
#[derive(Debug, Clone, PartialEq)]
pub enum Flow {
    /// It needs this request's answer to go on.
    Need(Box<Request>),
    /// It failed with this message: retried with the queue's backoff.
    Fail(String),
}

/// A sync's result so far.
pub type Step<T> = Result<T, Flow>;

/// The answers a sync replays.
#[derive(Debug)]
pub struct Cx<'a> {
    replies: &'a [Reply],
    used: usize,
}

impl<'a> Cx<'a> {
    /// A context replaying `replies`, the answers to the sync's requests
    /// so far, in order.
    pub fn new(replies: &'a [Reply]) -> Self {
        Self { replies, used: 0 }
    }

    /// The answer to `request`, if it has been given.
    pub fn call(&mut self, request: Request) -> Step<Reply> {
        let reply = self.replies.get(self.used).cloned().ok_or_else(|| Flow::Need(Box::new(request)))?;
        self.used += 1;
        Ok(reply)
    }

    /// Records an event.
    pub fn event(&mut self, event: Event) -> Step<()> {
        self.call(Request::Event(event)).map(drop)
    }

    /// Records a metric.
    pub fn record(&mut self, metric: Metric) -> Step<()> {
        self.call(Request::Metric(metric)).map(drop)
    }

    /// A write or read answered with a volume; a failure fails the sync.
    pub fn volume(&mut self, request: Request) -> Step<PersistentVolume> {
        match self.call(request)? {
            Reply::Volume(volume) => Ok(*volume),
            other => Err(failure(other)),
        }
    }

    /// A write or read answered with a claim; a failure fails the sync.
    pub fn claim(&mut self, request: Request) -> Step<PersistentVolumeClaim> {
        match self.call(request)? {
            Reply::Claim(claim) => Ok(*claim),
            other => Err(failure(other)),
        }
    }
}

/// The failure an unexpected answer is.
fn failure(reply: Reply) -> Flow {
    match reply {
        Reply::Failed(message) => Flow::Fail(message),
        Reply::NotFound => Flow::Fail("not found".to_owned()),
        other => Flow::Fail(format!("unexpected answer {other:?}")),
    }
}
