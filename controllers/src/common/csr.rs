//! What the certificate controllers read of a CertificateSigningRequest
//! (upstream `pkg/apis/certificates/helpers.go` and
//! `pkg/controller/certificates/certificate_controller_utils.go`): the
//! PKCS#10 request its `spec.request` PEM holds ([`parse_csr`]), whether
//! it is approved or denied ([`approval_condition`]), issued
//! ([`is_issued`]), and the well-known signer and condition names.
//!
//! The request is read with `x509-parser`, keeping only what upstream's
//! checks look at: the subject's common name and organizations and the
//! subject alternative names the `extensionRequest` attribute asks for.

use k8s_openapi::api::certificates::v1::CertificateSigningRequest;
use x509_parser::certification_request::X509CertificationRequest;
use x509_parser::extensions::{GeneralName, ParsedExtension};
use x509_parser::nom::Err as NomErr;
use x509_parser::prelude::FromDer;

/// The signer of kubelet client certificates
/// (`KubeAPIServerClientKubeletSignerName`).
pub const KUBE_APISERVER_CLIENT_KUBELET_SIGNER: &str = "kubernetes.io/kube-apiserver-client-kubelet";

/// The condition type of an approved request (`CertificateApproved`).
pub const APPROVED: &str = "Approved";
/// The condition type of a denied request (`CertificateDenied`).
pub const DENIED: &str = "Denied";
/// The condition type of a request the signer failed (`CertificateFailed`).
pub const FAILED: &str = "Failed";

/// The PEM block label a request must have.
const CERTIFICATE_REQUEST_LABEL: &str = "CERTIFICATE REQUEST";

/// Why `spec.request` is not a certificate request (upstream `ParseCSR`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseCsrError {
    /// No PEM block, or one of another type (upstream's message).
    #[error("PEM block type must be CERTIFICATE REQUEST")]
    NotCertificateRequest,
    /// The block's DER is not a PKCS#10 request.
    #[error("x509: malformed certificate request: {0}")]
    Malformed(String),
}

/// What upstream's checks read of a parsed request
/// (`x509.CertificateRequest`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CertificateRequest {
    /// The subject's common name (the last one, as Go keeps it; `""`
    /// without one).
    pub common_name: String,
    /// The subject's organizations, in order.
    pub organizations: Vec<String>,
    /// DNS subject alternative names.
    pub dns_names: Vec<String>,
    /// Email subject alternative names.
    pub email_addresses: Vec<String>,
    /// IP subject alternative names, as encoded (4 or 16 bytes).
    pub ip_addresses: Vec<Vec<u8>>,
    /// URI subject alternative names.
    pub uris: Vec<String>,
}

/// Upstream `ParseCSR`: the first PEM block of `pem`, which must be a
/// `CERTIFICATE REQUEST`, parsed as PKCS#10 (no data may follow the DER).
///
/// # Errors
/// No such block, or DER that is not a request.
pub fn parse_csr(pem: &[u8]) -> Result<CertificateRequest, ParseCsrError> {
    let block = match x509_parser::pem::parse_x509_pem(pem) {
        Ok((_, block)) if block.label == CERTIFICATE_REQUEST_LABEL => block,
        _ => return Err(ParseCsrError::NotCertificateRequest),
    };
    let malformed = |e: &dyn std::fmt::Display| ParseCsrError::Malformed(e.to_string());
    let (rest, request) = X509CertificationRequest::from_der(&block.contents).map_err(|e| match e {
        NomErr::Error(e) | NomErr::Failure(e) => malformed(&e),
        NomErr::Incomplete(_) => malformed(&"truncated"),
    })?;
    if !rest.is_empty() {
        return Err(malformed(&"trailing data"));
    }
    let subject = &request.certification_request_info.subject;
    let text =
        |a: &x509_parser::x509::AttributeTypeAndValue<'_>| a.as_str().map(str::to_owned).map_err(|e| malformed(&e));
    let mut parsed = CertificateRequest {
        common_name: subject.iter_common_name().last().map(text).transpose()?.unwrap_or_default(),
        organizations: subject.iter_organization().map(text).collect::<Result<_, _>>()?,
        ..CertificateRequest::default()
    };
    for extension in request.requested_extensions().into_iter().flatten() {
        let ParsedExtension::SubjectAlternativeName(names) = extension else { continue };
        for name in &names.general_names {
            match name {
                GeneralName::DNSName(n) => parsed.dns_names.push((*n).to_owned()),
                GeneralName::RFC822Name(n) => parsed.email_addresses.push((*n).to_owned()),
                GeneralName::IPAddress(ip) => parsed.ip_addresses.push(ip.to_vec()),
                GeneralName::URI(n) => parsed.uris.push((*n).to_owned()),
                _ => {}
            }
        }
    }
    Ok(parsed)
}

/// Upstream `GetCertApprovalCondition`: whether the request carries an
/// `Approved` and whether a `Denied` condition, whatever their status.
pub fn approval_condition(csr: &CertificateSigningRequest) -> (bool, bool) {
    let types = || conditions(csr).map(|c| c.type_.as_str());
    (types().any(|t| t == APPROVED), types().any(|t| t == DENIED))
}

/// Whether the signer has issued the certificate (`status.certificate`
/// is not empty).
pub fn is_issued(csr: &CertificateSigningRequest) -> bool {
    csr.status.as_ref().and_then(|s| s.certificate.as_ref()).is_some_and(|c| !c.0.is_empty())
}

/// The request's status conditions, in order.
pub fn conditions(
    csr: &CertificateSigningRequest,
) -> impl Iterator<Item = &k8s_openapi::api::certificates::v1::CertificateSigningRequestCondition> {
    csr.status.as_ref().and_then(|s| s.conditions.as_ref()).into_iter().flatten()
}

#[cfg(test)]
mod tests {
    //! Upstream's `ParseCSR` on well-formed and malformed PEM, and what a
    //! parsed request holds.

    use super::*;
    use crate::testing::csr_pem;

    #[test]
    fn a_request_is_read_for_its_subject_and_alternative_names() {
        let pem = csr_pem("system:node:foo", &["system:nodes", "b"], &["node.example"], &["10.0.0.1".parse().unwrap()]);
        let parsed = parse_csr(pem.as_bytes()).expect("parsed");
        assert_eq!(parsed.common_name, "system:node:foo");
        assert_eq!(parsed.organizations, ["system:nodes", "b"]);
        assert_eq!(parsed.dns_names, ["node.example"]);
        assert_eq!(parsed.ip_addresses, [vec![10, 0, 0, 1]]);
        assert!(parsed.email_addresses.is_empty() && parsed.uris.is_empty());
    }

    #[test]
    fn text_before_the_block_is_skipped_as_pem_decode_does() {
        let pem = format!("a comment\n{}", csr_pem("system:node:foo", &[], &[], &[]));
        assert_eq!(parse_csr(pem.as_bytes()).expect("parsed").common_name, "system:node:foo");
    }

    #[test]
    fn malformed_pem_is_refused_with_upstreams_message() {
        let certificate = rcgen::generate_simple_self_signed(vec!["a".to_owned()]).expect("certificate").cert.pem();
        for pem in ["", "not pem", "-----BEGIN CERTIFICATE REQUEST-----\n!!!\n", certificate.as_str()] {
            let error = parse_csr(pem.as_bytes()).expect_err(pem);
            assert_eq!(error.to_string(), "PEM block type must be CERTIFICATE REQUEST", "{pem}");
        }
        let not_der = "-----BEGIN CERTIFICATE REQUEST-----\naGVsbG8=\n-----END CERTIFICATE REQUEST-----\n";
        assert!(matches!(parse_csr(not_der.as_bytes()), Err(ParseCsrError::Malformed(_))));
    }
}
