//! The CSR signing controller's decisions (upstream
//! `pkg/controller/certificates/signer/signer.go`, with the shared
//! certificate controller's `syncFunc` of `certificate_controller.go`):
//! one certificate controller per built-in [`Signer`] whose CA is
//! configured, each signing the CSRs addressed to it.
//!
//! [`decide`] answers what one cached CSR needs from one signer: nothing
//! (it has a certificate, is not approved, is denied or failed, or is for
//! another signer), a `Failed` condition with reason
//! `SignerValidationFailure` (the signer refuses the request), or a
//! certificate; a `spec.request` that is not a PEM certificate request is
//! an error the driver logs and retries with backoff, as upstream.
//! [`Authority::sign`] issues the certificate; the driver performs the
//! status update.

use std::time::Duration;

use k8s_openapi::api::certificates::v1::{CertificateSigningRequest, CertificateSigningRequestCondition};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

mod authority;
mod key;
mod request;
mod signers;
mod usages;

#[cfg(test)]
mod tests;

pub use authority::{Authority, Policy};
pub use request::Request;
pub use signers::{KUBE_APISERVER_CLIENT, KUBE_APISERVER_CLIENT_KUBELET, KUBELET_SERVING, LEGACY_UNKNOWN, Signer};

/// The `Failed` condition's reason when a signer refuses a request.
pub const SIGNER_VALIDATION_FAILURE: &str = "SignerValidationFailure";

/// How far a certificate's notBefore is set back (upstream's `Backdate`).
pub const BACKDATE: Duration = Duration::from_secs(5 * 60);

/// Below this TTL the backdate is not taken off notAfter (upstream's `Short`).
pub const SHORT: Duration = Duration::from_secs(8 * 3600);

/// The shortest certificate a CSR's `spec.expirationSeconds` may ask for.
pub const MIN_DURATION: Duration = Duration::from_secs(10 * 60);

/// What one CSR needs from one signer.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// Nothing.
    Skip,
    /// The signer refuses it: append this `Failed` condition.
    Fail(CertificateSigningRequestCondition),
    /// Issue a certificate for `request` under `policy`.
    Sign {
        /// The parsed `spec.request`.
        request: Box<Request>,
        /// The TTL and usages.
        policy: Policy,
    },
}

/// Upstream's `handle` up to the signing: approved and not failed, for
/// `signer`, parsed, and accepted by the signer; `max` is
/// `--cluster-signing-duration`.
///
/// # Errors
/// Upstream's `unable to parse csr "<name>": …` when `spec.request` is not
/// a PEM certificate request.
pub fn decide(csr: &CertificateSigningRequest, signer: Signer, max: Duration, now: Time) -> Result<Decision, String> {
    let status = csr.status.as_ref();
    if status.and_then(|s| s.certificate.as_ref()).is_some_and(|c| !c.0.is_empty()) {
        return Ok(Decision::Skip);
    }
    if !is_approved(csr) || has_true_condition(csr, "Failed") || csr.spec.signer_name != signer.name() {
        return Ok(Decision::Skip);
    }
    let name = csr.metadata.name.as_deref().unwrap_or_default();
    let request = Request::parse_pem(&csr.spec.request.0).map_err(|e| format!("unable to parse csr {name:?}: {e}"))?;
    let usages = csr.spec.usages.clone().unwrap_or_default();
    if let Err(message) = signer.validate(&request, &usages) {
        return Ok(Decision::Fail(CertificateSigningRequestCondition {
            type_: "Failed".to_owned(),
            status: "True".to_owned(),
            reason: Some(SIGNER_VALIDATION_FAILURE.to_owned()),
            message: Some(message),
            last_update_time: Some(now),
            last_transition_time: None,
        }));
    }
    let ttl = duration(max, csr.spec.expiration_seconds);
    Ok(Decision::Sign { request: Box::new(request), policy: Policy { ttl, usages, backdate: BACKDATE, short: SHORT } })
}

/// Upstream's `duration`: `max` without `spec.expirationSeconds`; else
/// the request, cut to `max`, or raised to [`MIN_DURATION`] (checked in
/// that order, so a `max` under ten minutes still caps a longer request).
pub fn duration(max: Duration, expiration_seconds: Option<i32>) -> Duration {
    let Some(seconds) = expiration_seconds else { return max };
    let requested = Duration::from_secs(u64::try_from(seconds).unwrap_or(0));
    if requested > max {
        max
    } else if requested < MIN_DURATION {
        MIN_DURATION
    } else {
        requested
    }
}

/// Upstream `IsCertificateRequestApproved`: an `Approved` condition and no
/// `Denied` one, whatever their status.
pub fn is_approved(csr: &CertificateSigningRequest) -> bool {
    let conditions = csr.status.as_ref().and_then(|s| s.conditions.as_deref()).unwrap_or_default();
    conditions.iter().any(|c| c.type_ == "Approved") && !conditions.iter().any(|c| c.type_ == "Denied")
}

/// Upstream `HasTrueCondition`: a condition of `type_` whose status is
/// `True` or empty.
pub fn has_true_condition(csr: &CertificateSigningRequest, type_: &str) -> bool {
    let conditions = csr.status.as_ref().and_then(|s| s.conditions.as_deref()).unwrap_or_default();
    conditions.iter().any(|c| c.type_ == type_ && (c.status.is_empty() || c.status == "True"))
}
