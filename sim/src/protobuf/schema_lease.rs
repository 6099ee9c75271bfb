//! Tables for `coordination/v1` Lease.
//!
//! One static per message, from upstream's generated.proto (numbers, JSON
//! names) and types.go (pointers and omitempty). `omit` scalars drop their
//! zero value; `keep` scalars print it.

use super::message::Ty::{Int, MicroTime, Msg, Str};
use super::message::{Message, keep, one};
use super::schema_meta::OBJECT_META;

/// `Lease`.
pub(super) static LEASE: Message =
    Message { name: "Lease", fields: &[one(1, "metadata", Msg(&OBJECT_META)), one(2, "spec", Msg(&LEASE_SPEC))] };

/// `LeaseSpec`.
static LEASE_SPEC: Message = Message {
    name: "LeaseSpec",
    fields: &[
        keep(1, "holderIdentity", Str),
        keep(2, "leaseDurationSeconds", Int),
        one(3, "acquireTime", MicroTime),
        one(4, "renewTime", MicroTime),
        keep(5, "leaseTransitions", Int),
        keep(6, "strategy", Str),
        keep(7, "preferredHolder", Str),
    ],
};
