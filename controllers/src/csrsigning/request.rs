//! A CSR's `spec.request` read as upstream's `capihelper.ParseCSR` reads
//! it: the first PEM block, which must be a `CERTIFICATE REQUEST`, parsed
//! as PKCS #10 ([`Request::parse_pem`]); its signature is checked when it
//! is signed, as upstream's authority checks it ([`Request::check_signature`]).

use std::net::IpAddr;

use x509_parser::certification_request::X509CertificationRequest;
use x509_parser::extensions::{GeneralName, ParsedExtension};
use x509_parser::prelude::FromDer;

/// The parts of a certificate request the signer reads and copies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// The whole request, DER.
    pub der: Vec<u8>,
    /// The subject, DER as requested.
    pub subject: Vec<u8>,
    /// The subject's common name (the last one, as Go keeps it; `""`
    /// without one).
    pub common_name: String,
    /// The subject's organizations, in order.
    pub organizations: Vec<String>,
    /// The SubjectPublicKeyInfo, DER.
    pub public_key_info: Vec<u8>,
    /// DNS subjectAltNames.
    pub dns_names: Vec<String>,
    /// Email subjectAltNames.
    pub email_addresses: Vec<String>,
    /// IP subjectAltNames.
    pub ip_addresses: Vec<IpAddr>,
    /// URI subjectAltNames.
    pub uris: Vec<String>,
}

impl Request {
    /// Parses `spec.request`.
    ///
    /// # Errors
    /// Upstream's `PEM block type must be CERTIFICATE REQUEST` when the
    /// first PEM block is missing or of another type; the parser's error
    /// when the request is malformed.
    pub fn parse_pem(pem_bytes: &[u8]) -> Result<Request, String> {
        let block = pem::parse(pem_bytes).ok().filter(|b| b.tag() == "CERTIFICATE REQUEST");
        let block = block.ok_or_else(|| "PEM block type must be CERTIFICATE REQUEST".to_owned())?;
        Request::parse_der(block.contents())
    }

    /// Parses a PKCS #10 request.
    ///
    /// # Errors
    /// The request or one of its strings or subjectAltNames is malformed.
    pub fn parse_der(der: &[u8]) -> Result<Request, String> {
        let (_, csr) = X509CertificationRequest::from_der(der).map_err(|e| format!("x509: {e}"))?;
        let info = &csr.certification_request_info;
        let strings = |values: Vec<&x509_parser::x509::AttributeTypeAndValue<'_>>| {
            values.iter().map(|v| v.as_str().map(str::to_owned)).collect::<Result<Vec<_>, _>>()
        };
        let malformed_subject = |e| format!("x509: malformed subject: {e}");
        let organizations = strings(info.subject.iter_organization().collect()).map_err(malformed_subject)?;
        let common_names = strings(info.subject.iter_common_name().collect()).map_err(malformed_subject)?;
        let mut request = Request {
            der: der.to_vec(),
            subject: info.subject.as_raw().to_vec(),
            common_name: common_names.last().cloned().unwrap_or_default(),
            organizations,
            public_key_info: info.subject_pki.raw.to_vec(),
            dns_names: Vec::new(),
            email_addresses: Vec::new(),
            ip_addresses: Vec::new(),
            uris: Vec::new(),
        };
        for extension in csr.requested_extensions().into_iter().flatten() {
            if let ParsedExtension::SubjectAlternativeName(san) = extension {
                for name in &san.general_names {
                    request.add_alt_name(name)?;
                }
            }
        }
        Ok(request)
    }

    fn add_alt_name(&mut self, name: &GeneralName<'_>) -> Result<(), String> {
        match name {
            GeneralName::DNSName(dns) => self.dns_names.push((*dns).to_owned()),
            GeneralName::RFC822Name(email) => self.email_addresses.push((*email).to_owned()),
            GeneralName::URI(uri) => self.uris.push((*uri).to_owned()),
            GeneralName::IPAddress(bytes) => {
                let ip = match bytes.len() {
                    4 => IpAddr::from(<[u8; 4]>::try_from(*bytes).unwrap_or_default()),
                    16 => IpAddr::from(<[u8; 16]>::try_from(*bytes).unwrap_or_default()),
                    n => return Err(format!("x509: cannot parse IP address of length {n}")),
                };
                self.ip_addresses.push(ip);
            }
            GeneralName::Invalid(..) => return Err("x509: SAN is malformed".to_owned()),
            // Go keeps only these four kinds.
            _ => {}
        }
        Ok(())
    }

    /// Checks the request's self-signature (upstream's
    /// `cr.CheckSignature`).
    ///
    /// # Errors
    /// The signature does not verify, or its algorithm is unsupported.
    pub fn check_signature(&self) -> Result<(), String> {
        let (_, csr) = X509CertificationRequest::from_der(&self.der).map_err(|e| format!("x509: {e}"))?;
        csr.verify_signature().map_err(|e| format!("x509: {e}"))
    }
}
