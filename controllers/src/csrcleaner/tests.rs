//! Upstream's `TestCleanerWithApprovedExpiredCSR`, case by case and with
//! its names: a request created and conditioned at the ages given, issued
//! a certificate valid until 2117 (`unexpiredCert`), one that expired in
//! 2017 (`expiredCert`), garbage, or none, is deleted or kept.

use k8s_openapi::ByteString;
use k8s_openapi::api::certificates::v1::{CertificateSigningRequestCondition, CertificateSigningRequestStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::*;
use crate::testing::ts;

// === utils ===

/// A fixed "now": 2024-06-01T00:00:00Z.
fn now() -> Timestamp {
    ts(1_717_200_000)
}

fn ago(minutes: i64) -> Time {
    Time(now() - SignedDuration::from_mins(minutes))
}

/// A self-signed certificate valid from 2017-10-02 until `until_year`-10-03.
fn certificate(until_year: i32) -> Vec<u8> {
    let mut params = rcgen::CertificateParams::new(vec!["*".to_owned()]).expect("params");
    params.not_before = rcgen::date_time_ymd(2017, 10, 2);
    params.not_after = rcgen::date_time_ymd(until_year, 10, 3);
    let key = rcgen::KeyPair::generate().expect("key");
    params.self_signed(&key).expect("signed").pem().into_bytes()
}

fn expired_cert() -> Vec<u8> {
    certificate(2017)
}

fn unexpired_cert() -> Vec<u8> {
    certificate(2117)
}

/// A condition of `type_` last updated `minutes` ago.
fn condition(type_: &str, minutes: i64) -> CertificateSigningRequestCondition {
    CertificateSigningRequestCondition {
        type_: type_.into(),
        last_update_time: Some(ago(minutes)),
        ..CertificateSigningRequestCondition::default()
    }
}

/// Whether upstream's test expects a delete for a request created
/// `created` minutes ago, issued `certificate`, with `conditions`.
fn deleted(created: i64, certificate: Option<Vec<u8>>, conditions: Vec<CertificateSigningRequestCondition>) -> bool {
    let csr = CertificateSigningRequest {
        metadata: ObjectMeta {
            name: Some("fake-csr".into()),
            creation_timestamp: Some(ago(created)),
            ..ObjectMeta::default()
        },
        status: Some(CertificateSigningRequestStatus {
            certificate: certificate.map(ByteString),
            conditions: (!conditions.is_empty()).then_some(conditions),
        }),
        ..CertificateSigningRequest::default()
    };
    cleanable(&csr, now()).is_some()
}

const HOUR: i64 = 60;

// === tests ===

#[test]
fn no_delete_approved_not_passed_deadline() {
    assert!(!deleted(1, Some(unexpired_cert()), vec![condition(APPROVED, 50)]));
}

#[test]
fn no_delete_approved_passed_deadline_not_issued() {
    assert!(!deleted(1, None, vec![condition(APPROVED, 50)]));
}

#[test]
fn delete_approved_passed_deadline() {
    assert!(deleted(1, Some(unexpired_cert()), vec![condition(APPROVED, 2 * HOUR)]));
}

#[test]
fn no_delete_denied_not_passed_deadline() {
    assert!(!deleted(1, None, vec![condition(DENIED, 50)]));
}

#[test]
fn delete_denied_passed_deadline() {
    assert!(deleted(1, None, vec![condition(DENIED, 2 * HOUR)]));
}

#[test]
fn no_delete_failed_not_passed_deadline() {
    assert!(!deleted(1, None, vec![condition(APPROVED, 2 * HOUR), condition(FAILED, 50)]));
}

#[test]
fn delete_failed_passed_deadline() {
    assert!(deleted(1, None, vec![condition(APPROVED, 2 * HOUR), condition(FAILED, 2 * HOUR)]));
}

#[test]
fn no_delete_pending_not_passed_deadline() {
    assert!(!deleted(5 * HOUR, None, vec![]));
}

#[test]
fn delete_pending_passed_deadline() {
    assert!(deleted(25 * HOUR, None, vec![]));
}

#[test]
fn delete_approved_unissued_past_deadline() {
    assert!(deleted(1, None, vec![condition(APPROVED, 25 * HOUR)]));
}

#[test]
fn no_delete_approved_unissued_not_past_deadline() {
    assert!(!deleted(1, None, vec![condition(APPROVED, 5 * HOUR)]));
}

#[test]
fn no_delete_approved_not_passed_deadline_unexpired() {
    assert!(!deleted(1, Some(unexpired_cert()), vec![condition(APPROVED, 50)]));
}

#[test]
fn delete_approved_not_passed_deadline_expired() {
    assert!(deleted(1, Some(expired_cert()), vec![condition(APPROVED, 50)]));
}

#[test]
fn delete_approved_passed_deadline_unparseable() {
    assert!(deleted(1, Some(b"garbage".to_vec()), vec![condition(APPROVED, 2 * HOUR)]));
}

// === beyond upstream's table ===

#[test]
fn each_deletion_names_upstreams_reason_and_deadline() {
    let csr = |created, certificate: Option<Vec<u8>>, conditions| CertificateSigningRequest {
        metadata: ObjectMeta { creation_timestamp: Some(ago(created)), ..ObjectMeta::default() },
        status: Some(CertificateSigningRequestStatus { certificate: certificate.map(ByteString), conditions }),
        ..CertificateSigningRequest::default()
    };
    let cases = [
        (csr(1, Some(unexpired_cert()), Some(vec![condition(APPROVED, 2 * HOUR)])), Reason::IssuedPastDeadline),
        (csr(1, None, Some(vec![condition(DENIED, 2 * HOUR)])), Reason::DeniedPastDeadline),
        (csr(1, None, Some(vec![condition(FAILED, 2 * HOUR)])), Reason::FailedPastDeadline),
        (csr(25 * HOUR, None, None), Reason::PendingPastDeadline),
        (csr(1, Some(expired_cert()), Some(vec![condition(APPROVED, 50)])), Reason::IssuedExpired),
        (csr(1, None, Some(vec![condition(APPROVED, 25 * HOUR)])), Reason::ApprovedUnissuedPastDeadline),
    ];
    for (csr, reason) in cases {
        assert_eq!(cleanable(&csr, now()), Some(reason));
    }
    assert_eq!(Reason::PendingPastDeadline.deadline(), Some(("pendingExpiration", SignedDuration::from_hours(24))));
    assert_eq!(Reason::IssuedExpired.deadline(), None);
    assert_eq!(Reason::IssuedExpired.message(), "Cleaning CSR as the associated certificate is expired.");
}

#[test]
fn ages_are_strictly_past_the_limit_and_need_a_time() {
    assert!(!deleted(1, None, vec![condition(DENIED, HOUR)]), "exactly an hour is not more than an hour");
    let untimed =
        CertificateSigningRequestCondition { type_: DENIED.into(), ..CertificateSigningRequestCondition::default() };
    assert!(!deleted(1, None, vec![untimed]), "a condition without lastUpdateTime never ages");
    assert!(!deleted(24 * HOUR, None, vec![]));
}

#[test]
fn an_expired_certificate_without_approval_is_not_deleted_for_expiry() {
    assert!(!deleted(1, Some(expired_cert()), vec![condition(DENIED, 50)]));
}
