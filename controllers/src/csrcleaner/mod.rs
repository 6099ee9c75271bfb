//! The CSR cleaner's decisions (upstream
//! `pkg/controller/certificates/cleaner/cleaner.go`): which
//! CertificateSigningRequests are old enough to delete.
//!
//! Upstream's checks, in its order, the first that holds naming the
//! [`Reason`] (and so the log line):
//! 1. issued, and approved more than [`APPROVED_EXPIRATION`] (1 h) ago;
//! 2. denied more than [`DENIED_EXPIRATION`] (1 h) ago;
//! 3. failed more than [`DENIED_EXPIRATION`] ago (upstream reuses it);
//! 4. no condition at all, and created more than [`PENDING_EXPIRATION`]
//!    (24 h) ago;
//! 5. approved, issued, and the issued certificate's `notAfter` passed;
//! 6. approved more than [`PENDING_EXPIRATION`] ago but never issued.
//!
//! Ages are measured from a condition's `lastUpdateTime` (a condition
//! without one never ages) or the request's `creationTimestamp`, strictly
//! longer than the limit. An issued certificate that does not parse is
//! not expired. The driver runs [`cleanable`] over every cached request
//! each [`POLLING_INTERVAL`].

use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::api::certificates::v1::CertificateSigningRequest;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use x509_parser::prelude::FromDer;

use crate::common::csr::{APPROVED, DENIED, FAILED, conditions, is_issued};

/// How often every request is looked at (upstream `pollingInterval`).
pub const POLLING_INTERVAL: Duration = Duration::from_secs(60 * 60);
/// How long an issued request is kept after its approval
/// (`approvedExpiration`).
pub const APPROVED_EXPIRATION: SignedDuration = SignedDuration::from_hours(1);
/// How long a denied (or failed) request is kept (`deniedExpiration`).
pub const DENIED_EXPIRATION: SignedDuration = SignedDuration::from_hours(1);
/// How long a request is kept pending, or approved and not issued
/// (`pendingExpiration`).
pub const PENDING_EXPIRATION: SignedDuration = SignedDuration::from_hours(24);

/// Why a request is deleted: upstream's log line and the deadline it
/// names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    /// Issued, approved more than [`APPROVED_EXPIRATION`] ago.
    IssuedPastDeadline,
    /// Denied more than [`DENIED_EXPIRATION`] ago.
    DeniedPastDeadline,
    /// Failed more than [`DENIED_EXPIRATION`] ago.
    FailedPastDeadline,
    /// Without a condition, created more than [`PENDING_EXPIRATION`] ago.
    PendingPastDeadline,
    /// Approved, and its certificate has expired.
    IssuedExpired,
    /// Approved more than [`PENDING_EXPIRATION`] ago and not issued.
    ApprovedUnissuedPastDeadline,
}

impl Reason {
    /// Upstream's log message.
    pub fn message(self) -> &'static str {
        match self {
            Reason::IssuedPastDeadline => {
                "Cleaning CSR as it is more than approvedExpiration duration old and approved."
            }
            Reason::DeniedPastDeadline => "Cleaning CSR as it is more than deniedExpiration duration old and denied.",
            Reason::FailedPastDeadline => "Cleaning CSR as it is more than deniedExpiration duration old and failed.",
            Reason::PendingPastDeadline => {
                "Cleaning CSR as it is more than pendingExpiration duration old and unhandled."
            }
            Reason::IssuedExpired => "Cleaning CSR as the associated certificate is expired.",
            Reason::ApprovedUnissuedPastDeadline => {
                "Cleaning CSR as it is approved but unissued for more than pendingExpiration duration."
            }
        }
    }

    /// The deadline the log line names, as upstream's key and value.
    pub fn deadline(self) -> Option<(&'static str, SignedDuration)> {
        match self {
            Reason::IssuedPastDeadline => Some(("approvedExpiration", APPROVED_EXPIRATION)),
            Reason::DeniedPastDeadline | Reason::FailedPastDeadline => Some(("deniedExpiration", DENIED_EXPIRATION)),
            Reason::PendingPastDeadline | Reason::ApprovedUnissuedPastDeadline => {
                Some(("pendingExpiration", PENDING_EXPIRATION))
            }
            Reason::IssuedExpired => None,
        }
    }
}

/// Upstream `handle`'s test: why `csr` is deleted at `now`, if it is.
pub fn cleanable(csr: &CertificateSigningRequest, now: Timestamp) -> Option<Reason> {
    let older = |t: Option<&Time>, limit: SignedDuration| t.is_some_and(|t| now.duration_since(t.0) > limit);
    let condition_older =
        |type_: &str, limit| conditions(csr).any(|c| c.type_ == type_ && older(c.last_update_time.as_ref(), limit));
    let approved = conditions(csr).any(|c| c.type_ == APPROVED);
    let issued = is_issued(csr);
    if issued && condition_older(APPROVED, APPROVED_EXPIRATION) {
        Some(Reason::IssuedPastDeadline)
    } else if condition_older(DENIED, DENIED_EXPIRATION) {
        Some(Reason::DeniedPastDeadline)
    } else if condition_older(FAILED, DENIED_EXPIRATION) {
        Some(Reason::FailedPastDeadline)
    } else if conditions(csr).next().is_none() && older(csr.metadata.creation_timestamp.as_ref(), PENDING_EXPIRATION) {
        Some(Reason::PendingPastDeadline)
    } else if approved && issued && is_expired(csr, now) {
        Some(Reason::IssuedExpired)
    } else if !issued && condition_older(APPROVED, PENDING_EXPIRATION) {
        Some(Reason::ApprovedUnissuedPastDeadline)
    } else {
        None
    }
}

/// Upstream `isExpired`: the first certificate of the first PEM block of
/// `status.certificate` ends before `now`. No block, or DER that is not a
/// sequence of certificates, is not expired.
fn is_expired(csr: &CertificateSigningRequest, now: Timestamp) -> bool {
    let Some(pem) = csr.status.as_ref().and_then(|s| s.certificate.as_ref()) else { return false };
    let Ok((_, block)) = x509_parser::pem::parse_x509_pem(&pem.0) else { return false };
    let mut rest = block.contents.as_slice();
    let mut first = None;
    while !rest.is_empty() {
        let Ok((next, certificate)) = x509_parser::certificate::X509Certificate::from_der(rest) else { return false };
        first.get_or_insert(certificate.validity().not_after.timestamp());
        rest = next;
    }
    first.is_some_and(|not_after| Timestamp::from_second(not_after).is_ok_and(|t| now > t))
}

#[cfg(test)]
mod tests;
