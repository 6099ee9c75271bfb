//! A CSR's `spec.request` read as upstream's `capihelper.ParseCSR` reads
//! it: the first PEM block, which must be a `CERTIFICATE REQUEST`, parsed
//! as PKCS #10 ([`Request::parse_pem`]); its signature is checked when it
//! is signed, as upstream's authority checks it ([`Request::check_signature`]).

use std::net::IpAddr;

use x509_parser::certification_request::X509CertificationRequest;
use x509_parser::extensions::{GeneralName, ParsedExtension};
use x509_parser::prelude::FromDer;
use x509_parser::x509::X509Name;
use yasna::models::ObjectIdentifier;

// The attributes Go's `pkix.Name` keeps, in the order it writes them.
const OID_COUNTRY: &[u64] = &[2, 5, 4, 6];
const OID_PROVINCE: &[u64] = &[2, 5, 4, 8];
const OID_LOCALITY: &[u64] = &[2, 5, 4, 7];
const OID_STREET_ADDRESS: &[u64] = &[2, 5, 4, 9];
const OID_POSTAL_CODE: &[u64] = &[2, 5, 4, 17];
const OID_ORGANIZATION: &[u64] = &[2, 5, 4, 10];
const OID_ORGANIZATIONAL_UNIT: &[u64] = &[2, 5, 4, 11];
const OID_COMMON_NAME: &[u64] = &[2, 5, 4, 3];
const OID_SERIAL_NUMBER: &[u64] = &[2, 5, 4, 5];
const MULTI_VALUED: [&[u64]; 7] = [
    OID_COUNTRY,
    OID_PROVINCE,
    OID_LOCALITY,
    OID_STREET_ADDRESS,
    OID_POSTAL_CODE,
    OID_ORGANIZATION,
    OID_ORGANIZATIONAL_UNIT,
];

/// A subject as Go's `pkix.Name` reads it (`FillFromRDNSequence`: the
/// string values of the attributes it knows, the last common name and
/// serial number) and writes it again (`ToRDNSequence`): country,
/// province, locality, street, postal code, organization, unit (all values
/// of one attribute in one RDN), then common name and serial number;
/// other attributes are dropped. Strings are PrintableStrings where every
/// character allows it, else UTF8Strings.
#[derive(Debug, Default)]
struct GoName {
    /// The multi-valued attributes' values, with their OID.
    values: Vec<(&'static [u64], String)>,
    common_name: Option<String>,
    serial_number: Option<String>,
}

impl GoName {
    fn read(name: &X509Name<'_>) -> GoName {
        let mut go = GoName::default();
        for attribute in name.iter_attributes() {
            let Ok(value) = attribute.as_str() else { continue };
            let Some(oid) = attribute.attr_type().iter().map(Iterator::collect::<Vec<u64>>) else { continue };
            if oid == OID_COMMON_NAME {
                go.common_name = Some(value.to_owned());
            } else if oid == OID_SERIAL_NUMBER {
                go.serial_number = Some(value.to_owned());
            } else if let Some(known) = MULTI_VALUED.iter().find(|k| **k == oid) {
                go.values.push((known, value.to_owned()));
            }
        }
        go
    }

    fn values(&self, oid: &'static [u64]) -> impl Iterator<Item = &str> {
        self.values.iter().filter(move |(o, _)| *o == oid).map(|(_, v)| v.as_str())
    }

    fn to_der(&self) -> Vec<u8> {
        let singles = [(OID_COMMON_NAME, &self.common_name), (OID_SERIAL_NUMBER, &self.serial_number)];
        let rdns: Vec<(&[u64], Vec<&str>)> = MULTI_VALUED
            .iter()
            .map(|oid| (*oid, self.values(oid).collect::<Vec<_>>()))
            .filter(|(_, values)| !values.is_empty())
            .chain(singles.iter().filter_map(|(oid, value)| value.as_deref().map(|v| (*oid, vec![v]))))
            .collect();
        yasna::construct_der(|w| {
            w.write_sequence(|w| {
                for (oid, values) in &rdns {
                    w.next().write_set_of(|w| {
                        for value in values {
                            w.next().write_sequence(|w| {
                                w.next().write_oid(&ObjectIdentifier::from_slice(oid));
                                if value.bytes().all(go_printable) {
                                    // Go allows `?`, which yasna's PrintableString refuses.
                                    w.next().write_tagged_implicit(yasna::tags::TAG_PRINTABLESTRING, |w| {
                                        w.write_bytes(value.as_bytes());
                                    });
                                } else {
                                    w.next().write_utf8_string(value);
                                }
                            });
                        }
                    });
                }
            });
        })
    }
}

/// Go's `isPrintable` as its marshaller calls it (no `*`, no `&`).
fn go_printable(b: u8) -> bool {
    b.is_ascii_alphanumeric()
        || matches!(b, b' ' | b'\'' | b'(' | b')' | b'+' | b',' | b'-' | b'.' | b'/' | b':' | b'=' | b'?')
}

/// The parts of a certificate request the signer reads and copies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// The whole request, DER.
    pub der: Vec<u8>,
    /// The subject, DER as Go re-encodes it ([`GoName`]).
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
        let subject = GoName::read(&info.subject);
        let mut request = Request {
            der: der.to_vec(),
            subject: subject.to_der(),
            common_name: subject.common_name.clone().unwrap_or_default(),
            organizations: subject.values(OID_ORGANIZATION).map(str::to_owned).collect(),
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

#[cfg(test)]
mod tests {
    //! The subject as Go re-encodes it.

    use x509_parser::prelude::FromDer;

    use super::*;

    /// A Name of one attribute per RDN, in this order.
    fn name(attributes: &[(&[u64], &str)]) -> Vec<u8> {
        yasna::construct_der(|w| {
            w.write_sequence(|w| {
                for (oid, value) in attributes {
                    w.next().write_set_of(|w| {
                        w.next().write_sequence(|w| {
                            w.next().write_oid(&ObjectIdentifier::from_slice(oid));
                            w.next().write_utf8_string(value);
                        });
                    });
                }
            });
        })
    }

    #[test]
    fn the_subject_is_written_in_gos_order_with_its_string_types() {
        const EMAIL: &[u64] = &[1, 2, 840, 113549, 1, 9, 1];
        let requested = name(&[
            (OID_COMMON_NAME, "first"),
            (OID_ORGANIZATION, "system:masters"),
            (EMAIL, "a@example.com"),
            (OID_COMMON_NAME, "alice"),
            (OID_ORGANIZATION, "team_a"),
            (OID_COUNTRY, "DE"),
        ]);
        let (_, parsed) = X509Name::from_der(&requested).expect("a name");
        let go = GoName::read(&parsed);
        assert_eq!(go.common_name.as_deref(), Some("alice"), "the last common name, as Go keeps it");
        assert_eq!(go.values(OID_ORGANIZATION).collect::<Vec<_>>(), ["system:masters", "team_a"]);
        let written = go.to_der();
        let (_, rewritten) = X509Name::from_der(&written).expect("a name");
        let rdns: Vec<Vec<(String, u8)>> = rewritten
            .iter()
            .map(|rdn| {
                rdn.iter().map(|a| (a.as_str().expect("a string").to_owned(), a.attr_value().tag().0 as u8)).collect()
            })
            .collect();
        // Country, then both organizations in one RDN (DER-sorted: the
        // shorter first), then the common name; the email is dropped.
        // PrintableString is 19, UTF8String 12 (`_` is not printable).
        assert_eq!(
            rdns,
            [
                vec![("DE".to_owned(), 19)],
                vec![("team_a".to_owned(), 12), ("system:masters".to_owned(), 19)],
                vec![("alice".to_owned(), 19)],
            ]
        );
        assert_eq!(GoName::default().to_der(), [0x30, 0x00], "no attributes: an empty sequence");
    }
}
