//! The leader election record: the fields of a Lease spec the algorithm
//! reads and writes, and their conversion to and from `LeaseSpec`.

use jiff::Timestamp;
use k8s_openapi::api::coordination::v1::LeaseSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;

/// The leader election record: the Lease spec fields the algorithm uses
/// (client-go's `LeaderElectionRecord`). Missing fields read as empty/zero.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Record {
    pub(super) holder: String,
    pub(super) lease_duration_seconds: i32,
    pub(super) acquire_time: Option<Timestamp>,
    pub(super) renew_time: Option<Timestamp>,
    pub(super) transitions: i32,
}

impl Record {
    pub(super) fn from_spec(spec: Option<&LeaseSpec>) -> Record {
        let Some(spec) = spec else { return Record::default() };
        Record {
            holder: spec.holder_identity.clone().unwrap_or_default(),
            lease_duration_seconds: spec.lease_duration_seconds.unwrap_or(0),
            acquire_time: spec.acquire_time.as_ref().map(|t| t.0),
            renew_time: spec.renew_time.as_ref().map(|t| t.0),
            transitions: spec.lease_transitions.unwrap_or(0),
        }
    }

    /// The whole spec written: other fields (`strategy`, `preferredHolder`)
    /// are dropped, as client-go does.
    pub(super) fn to_spec(&self) -> LeaseSpec {
        LeaseSpec {
            holder_identity: Some(self.holder.clone()),
            lease_duration_seconds: Some(self.lease_duration_seconds),
            acquire_time: self.acquire_time.map(MicroTime),
            renew_time: self.renew_time.map(MicroTime),
            lease_transitions: Some(self.transitions),
            ..LeaseSpec::default()
        }
    }
}
