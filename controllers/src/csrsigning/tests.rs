//! Upstream's `signer_test.go` cases in our words: which CSRs a signer
//! leaves, fails or signs, the TTL from `spec.expirationSeconds`, and the
//! certificate the authority issues (read back with x509-parser and checked
//! against the CA's key).

use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::ByteString;
use k8s_openapi::api::certificates::v1::{
    CertificateSigningRequest, CertificateSigningRequestCondition, CertificateSigningRequestSpec,
    CertificateSigningRequestStatus,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use rcgen::{CertificateParams, DnType, IsCa, KeyPair};
use x509_parser::extensions::{GeneralName, ParsedExtension};
use x509_parser::prelude::{FromDer, X509Certificate};

use super::usages::key_usage_bit_string;
use super::*;

// === utils ===

const YEAR: Duration = Duration::from_secs(365 * 24 * 3600);

fn now() -> Timestamp {
    "2026-01-01T00:00:00Z".parse().expect("time")
}

/// A CSR's PEM with subject `cn`, organizations `orgs` and DNS `sans`.
fn request_pem(cn: &str, org: Option<&str>, sans: &[&str]) -> String {
    let mut params = CertificateParams::new(sans.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>()).expect("params");
    params.distinguished_name.push(DnType::CommonName, cn);
    if let Some(org) = org {
        params.distinguished_name.push(DnType::OrganizationName, org);
    }
    let key = KeyPair::generate().expect("key");
    params.serialize_request(&key).expect("csr").pem().expect("pem")
}

fn csr(signer: &str, pem: &str, usages: &[&str], conditions: &[(&str, &str)]) -> CertificateSigningRequest {
    let conditions = conditions
        .iter()
        .map(|(t, s)| CertificateSigningRequestCondition {
            type_: (*t).to_owned(),
            status: (*s).to_owned(),
            ..Default::default()
        })
        .collect();
    CertificateSigningRequest {
        metadata: ObjectMeta { name: Some("csr-1".to_owned()), ..Default::default() },
        spec: CertificateSigningRequestSpec {
            signer_name: signer.to_owned(),
            request: ByteString(pem.as_bytes().to_vec()),
            usages: Some(usages.iter().map(|u| (*u).to_owned()).collect()),
            ..Default::default()
        },
        status: Some(CertificateSigningRequestStatus { conditions: Some(conditions), certificate: None }),
    }
}

fn approved(signer: &str, pem: &str, usages: &[&str]) -> CertificateSigningRequest {
    csr(signer, pem, usages, &[("Approved", "True")])
}

fn decide_now(csr: &CertificateSigningRequest, signer: Signer) -> Result<Decision, String> {
    decide(csr, signer, YEAR, Time(now()))
}

fn failure(decision: Decision) -> String {
    match decision {
        Decision::Fail(condition) => {
            assert_eq!((condition.type_.as_str(), condition.status.as_str()), ("Failed", "True"));
            assert_eq!(condition.reason.as_deref(), Some(SIGNER_VALIDATION_FAILURE));
            condition.message.unwrap_or_default()
        }
        other => panic!("expected a failure, got {other:?}"),
    }
}

/// A CA valid until `not_after` (year), with its PEM pair.
fn ca(not_after_year: i32) -> (String, String) {
    let mut params = CertificateParams::new(Vec::<String>::new()).expect("params");
    params.distinguished_name.push(DnType::CommonName, "kubernetes");
    params.is_ca = IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    params.not_before = rcgen::date_time_ymd(2020, 1, 1);
    params.not_after = rcgen::date_time_ymd(not_after_year, 1, 1);
    let key = KeyPair::generate().expect("key");
    let cert = params.self_signed(&key).expect("ca");
    (cert.pem(), key.serialize_pem())
}

fn policy(ttl: Duration, usages: &[&str]) -> Policy {
    Policy { ttl, usages: usages.iter().map(|u| (*u).to_owned()).collect(), backdate: BACKDATE, short: SHORT }
}

fn issue(ca_pem: &(String, String), request: &str, policy: &Policy) -> Result<Vec<u8>, String> {
    let authority = Authority::from_pem(ca_pem.0.as_bytes(), ca_pem.1.as_bytes()).expect("ca");
    let request = Request::parse_pem(request.as_bytes()).expect("request");
    authority.sign(&request, policy, now(), [0xff; 16])
}

// === tests ===

#[test]
fn only_approved_unfailed_uncertified_csrs_of_its_own_signer_are_handled() {
    let pem = request_pem("system:node:a", Some("system:nodes"), &["a.example"]);
    let usages = ["digital signature", "key encipherment", "client auth"];
    let skipped = [
        csr(KUBE_APISERVER_CLIENT, &pem, &usages, &[]),
        csr(KUBE_APISERVER_CLIENT, &pem, &usages, &[("Approved", "True"), ("Denied", "True")]),
        csr(KUBE_APISERVER_CLIENT, &pem, &usages, &[("Approved", "True"), ("Failed", "True")]),
        csr(KUBE_APISERVER_CLIENT, &pem, &usages, &[("Approved", "True"), ("Failed", "")]),
        approved(KUBELET_SERVING, &pem, &usages),
        approved("example.com/other", &pem, &usages),
    ];
    for csr in &skipped {
        assert_eq!(decide_now(csr, Signer::KubeApiServerClient), Ok(Decision::Skip), "{:?}", csr.status);
    }
    let mut certified = approved(KUBE_APISERVER_CLIENT, &pem, &usages);
    certified.status.as_mut().expect("status").certificate = Some(ByteString(b"cert".to_vec()));
    assert_eq!(decide_now(&certified, Signer::KubeApiServerClient), Ok(Decision::Skip));
    // A Failed condition whose status is False does not stop it.
    let retried = csr(KUBE_APISERVER_CLIENT, &pem, &usages, &[("Approved", "True"), ("Failed", "False")]);
    assert!(matches!(decide_now(&retried, Signer::KubeApiServerClient), Ok(Decision::Sign { .. })));
}

#[test]
fn a_request_that_is_not_a_pem_csr_is_an_error_to_retry() {
    let not_pem = approved(LEGACY_UNKNOWN, "not a request", &["client auth"]);
    assert_eq!(
        decide_now(&not_pem, Signer::LegacyUnknown),
        Err(r#"unable to parse csr "csr-1": PEM block type must be CERTIFICATE REQUEST"#.to_owned())
    );
    let certificate = approved(LEGACY_UNKNOWN, &ca(2030).0, &["client auth"]);
    assert!(decide_now(&certificate, Signer::LegacyUnknown).expect_err("wrong type").contains("PEM block type"));
    let garbage = "-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----\n";
    let malformed = approved(LEGACY_UNKNOWN, garbage, &["client auth"]);
    assert!(decide_now(&malformed, Signer::LegacyUnknown).expect_err("malformed").starts_with("unable to parse csr"));
}

#[test]
fn kubelet_serving_requests_fail_with_upstreams_messages() {
    let serving = ["digital signature", "key encipherment", "server auth"];
    let cases = [
        (request_pem("system:node:a", Some("other"), &["a"]), &serving[..], "subject organization is not system:nodes"),
        (request_pem("system:node:a", Some("system:nodes"), &[]), &serving[..], "DNS or IP subjectAltName is required"),
        (
            request_pem("system:node:a", Some("system:nodes"), &["a"]),
            &["digital signature", "client auth"][..],
            "usages did not match [digital signature key encipherment server auth]",
        ),
        (
            request_pem("a", Some("system:nodes"), &["a"]),
            &serving[..],
            "subject common name does not begin with system:node:",
        ),
    ];
    for (pem, usages, message) in cases {
        assert_eq!(
            failure(decide_now(&approved(KUBELET_SERVING, &pem, usages), Signer::KubeletServing).unwrap()),
            message
        );
    }
    let without_rsa = approved(
        KUBELET_SERVING,
        &request_pem("system:node:a", Some("system:nodes"), &["a", "10.0.0.1"]),
        &["digital signature", "server auth"],
    );
    assert!(matches!(decide_now(&without_rsa, Signer::KubeletServing), Ok(Decision::Sign { .. })));
}

#[test]
fn kubelet_client_and_api_server_client_requests_fail_with_upstreams_messages() {
    let client = ["digital signature", "key encipherment", "client auth"];
    let with_dns = request_pem("system:node:a", Some("system:nodes"), &["a"]);
    let kubelet = |pem: &str, usages: &[&str]| {
        decide_now(&approved(KUBE_APISERVER_CLIENT_KUBELET, pem, usages), Signer::KubeletClient)
    };
    assert_eq!(failure(kubelet(&with_dns, &client).unwrap()), "DNS subjectAltNames are not allowed");
    let node = request_pem("system:node:a", Some("system:nodes"), &[]);
    assert_eq!(
        failure(kubelet(&node, &["client auth"]).unwrap()),
        "usages did not match [client auth digital signature key encipherment]"
    );
    assert!(matches!(kubelet(&node, &client), Ok(Decision::Sign { .. })));

    let user = request_pem("alice", Some("team"), &[]);
    let api =
        |usages: &[&str]| decide_now(&approved(KUBE_APISERVER_CLIENT, &user, usages), Signer::KubeApiServerClient);
    assert_eq!(
        failure(api(&["client auth", "server auth"]).unwrap()),
        "invalid usage for client certificate: server auth"
    );
    assert_eq!(
        failure(api(&["digital signature"]).unwrap()),
        "missing required usage for client certificate: client auth"
    );
    assert!(matches!(api(&["client auth"]), Ok(Decision::Sign { .. })));
    // legacy-unknown accepts anything parsable.
    let legacy = approved(LEGACY_UNKNOWN, &user, &["server auth", "code signing"]);
    assert!(matches!(decide_now(&legacy, Signer::LegacyUnknown), Ok(Decision::Sign { .. })));
}

#[test]
fn expiration_seconds_is_capped_by_the_flag_and_raised_to_ten_minutes() {
    let hour = Duration::from_secs(3600);
    assert_eq!(duration(YEAR, None), YEAR);
    assert_eq!(duration(YEAR, Some(3600)), hour);
    assert_eq!(duration(hour, Some(7200)), hour);
    assert_eq!(duration(YEAR, Some(60)), MIN_DURATION);
    assert_eq!(duration(YEAR, Some(-5)), MIN_DURATION);
    // A flag under ten minutes still caps a longer request.
    assert_eq!(duration(Duration::from_secs(300), Some(420)), Duration::from_secs(300));
    assert_eq!(duration(Duration::from_secs(300), Some(60)), MIN_DURATION);
}

#[test]
fn the_certificate_carries_upstreams_fields() {
    let ca_pem = ca(2030);
    let request = request_pem("system:node:a", Some("system:nodes"), &["a.example", "10.0.0.1"]);
    let der = issue(&ca_pem, &request, &policy(YEAR, &["server auth", "key encipherment", "digital signature"]))
        .expect("signed");
    let (_, cert) = X509Certificate::from_der(&der).expect("parses");
    let ca_der = pem::parse(&ca_pem.0).expect("pem").into_contents();
    let (_, ca_cert) = X509Certificate::from_der(&ca_der).expect("ca");
    assert_eq!(cert.issuer().as_raw(), ca_cert.subject().as_raw());
    assert_eq!(cert.subject().to_string(), "O=system:nodes, CN=system:node:a", "in Go's order");
    assert_eq!(cert.raw_serial(), [&[0][..], &[0xff; 16]].concat(), "16 random bytes, a positive integer");
    let (not_before, not_after) = (cert.validity().not_before.timestamp(), cert.validity().not_after.timestamp());
    assert_eq!(not_before, now().as_second() - 300, "backdated five minutes");
    assert_eq!(not_after, now().as_second() + YEAR.as_secs() as i64 - 300, "a long TTL loses the backdate");
    let key_usage = cert.key_usage().expect("ok").expect("present");
    assert!(key_usage.critical && key_usage.value.digital_signature() && key_usage.value.key_encipherment());
    let eku = cert.extended_key_usage().expect("ok").expect("present");
    assert!(eku.value.server_auth && !eku.value.client_auth);
    let constraints = cert.basic_constraints().expect("ok").expect("present");
    assert!(constraints.critical && !constraints.value.ca);
    let sans = cert.subject_alternative_name().expect("ok").expect("present");
    assert_eq!(sans.value.general_names, [GeneralName::DNSName("a.example"), GeneralName::IPAddress(&[10, 0, 0, 1])]);
    cert.verify_signature(Some(ca_cert.public_key())).expect("signed by the CA");
    let authority_key_id = cert.extensions().iter().find_map(|e| match e.parsed_extension() {
        ParsedExtension::AuthorityKeyIdentifier(aki) => aki.key_identifier.as_ref().map(|k| k.0.to_vec()),
        _ => None,
    });
    let subject_key_id = ca_cert.extensions().iter().find_map(|e| match e.parsed_extension() {
        ParsedExtension::SubjectKeyIdentifier(ski) => Some(ski.0.to_vec()),
        _ => None,
    });
    assert!(subject_key_id.is_some());
    assert_eq!(authority_key_id, subject_key_id, "the authority key id is the CA's subject key id");
}

#[test]
fn short_certificates_keep_their_full_ttl_and_none_outlives_the_ca() {
    let request = request_pem("alice", None, &[]);
    let hour = Duration::from_secs(3600);
    let der = issue(&ca(2030), &request, &policy(hour, &["client auth"])).expect("signed");
    let (_, cert) = X509Certificate::from_der(&der).expect("parses");
    assert_eq!(cert.validity().not_after.timestamp(), now().as_second() + 3600);
    let der = issue(&ca(2027), &request, &policy(Duration::from_secs(10 * 365 * 24 * 3600), &["client auth"]))
        .expect("signed");
    let (_, cert) = X509Certificate::from_der(&der).expect("parses");
    assert_eq!(cert.validity().not_after.to_datetime().year(), 2027, "capped at the CA's notAfter");
    assert_eq!(
        issue(&ca(2025), &request, &policy(hour, &["client auth"])),
        Err("the signer has expired: NotAfter=2025-01-01 00:00:00 +0000 UTC".to_owned())
    );
    assert_eq!(
        issue(&ca(2030), &request, &policy(hour, &["client auth", "flying"])),
        Err(r#"unrecognized usage values: ["flying"]"#.to_owned())
    );
}

#[test]
fn a_ca_pair_that_does_not_match_or_holds_two_certificates_is_refused() {
    let (cert, _) = ca(2030);
    let (other_cert, other_key) = ca(2030);
    assert_eq!(
        Authority::from_pem(cert.as_bytes(), other_key.as_bytes()).expect_err("mismatch"),
        "tls: private key does not match public key"
    );
    let bundle = format!("{other_cert}{cert}");
    assert_eq!(
        Authority::from_pem(bundle.as_bytes(), other_key.as_bytes()).expect_err("two"),
        "expected 1 certificate, found 2"
    );
    assert!(Authority::from_pem(b"", other_key.as_bytes()).is_err());
    assert!(Authority::from_pem(other_cert.as_bytes(), b"no key").is_err());
}

#[test]
fn key_usage_bits_are_written_as_go_writes_them() {
    // digital signature: bit 0 only, one significant bit.
    assert_eq!(key_usage_bit_string(1), (vec![0x80], 1));
    // digital signature + key encipherment: 101.
    assert_eq!(key_usage_bit_string(0b101), (vec![0xa0], 3));
    // decipher only needs the second byte.
    assert_eq!(key_usage_bit_string(1 << 8), (vec![0x00, 0x80], 9));
}

#[test]
fn a_tampered_request_is_refused_when_signed() {
    let pem = request_pem("alice", None, &[]);
    let mut request = Request::parse_pem(pem.as_bytes()).expect("parses");
    let last = request.der.len() - 1;
    request.der[last] ^= 1;
    let (cert, key) = ca(2030);
    let authority = Authority::from_pem(cert.as_bytes(), key.as_bytes()).expect("ca");
    let error = authority.sign(&request, &policy(YEAR, &["client auth"]), now(), [1; 16]).expect_err("refused");
    assert!(error.starts_with("unable to verify certificate request signature: "), "{error}");
}
