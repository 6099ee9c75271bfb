//! The certificate authority (upstream's `authority/authority.go` and the
//! `PermissiveSigningPolicy` of `policies.go`): a CA certificate and key
//! read from PEM, and the certificate it issues for a [`Request`], written
//! as Go's `x509.CreateCertificate` writes it from upstream's template.
//!
//! The certificate: version 3; a 128-bit random serial; the CA's subject
//! as issuer; not before `now - backdate`; not after `now + ttl` (less the
//! backdate when the TTL is at least `short`), never past the CA's; the
//! request's subject (as Go re-encodes it: [`Request::subject`]) and
//! public key; then the extensions in Go's
//! order: key usage (critical), extended key usage, basic constraints
//! `CA:FALSE` (critical), the authority key id (the CA's subject key id,
//! when it has one) and the request's DNS, email, IP and URI
//! subjectAltNames (critical when the subject is empty). The request's
//! other extensions are dropped, as upstream's policy drops them.

use std::time::Duration;

use jiff::Timestamp;
use x509_parser::extensions::ParsedExtension;
use x509_parser::prelude::FromDer;
use yasna::models::ObjectIdentifier;
use yasna::{DERWriter, Tag};

use super::key::CaKey;
use super::request::Request;
use super::usages::{key_usage_bit_string, key_usages};

/// A CA certificate and the key it signs with.
#[derive(Debug)]
pub struct Authority {
    /// The certificate's subject, DER (the issuer of what it signs).
    subject: Vec<u8>,
    /// Its subject key identifier, when it has one.
    subject_key_id: Option<Vec<u8>>,
    /// Its notAfter.
    not_after: Timestamp,
    /// The key.
    key: CaKey,
}

/// Upstream's `PermissiveSigningPolicy`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    /// How long the certificate lasts.
    pub ttl: Duration,
    /// `spec.usages`.
    pub usages: Vec<String>,
    /// How far notBefore is set back.
    pub backdate: Duration,
    /// A TTL shorter than this is not shortened by the backdate.
    pub short: Duration,
}

impl Authority {
    /// Reads the CA: `cert_pem` must hold exactly one certificate, and
    /// `key_pem` its private key.
    ///
    /// # Errors
    /// What is wrong with either (Go's `tls.X509KeyPair` and upstream's
    /// `caProvider` messages, past their file names).
    pub fn from_pem(cert_pem: &[u8], key_pem: &[u8]) -> Result<Authority, String> {
        if cert_pem.is_empty() || key_pem.is_empty() {
            return Err("missing content for serving cert".to_owned());
        }
        let blocks = pem::parse_many(cert_pem).map_err(|e| e.to_string())?;
        let certs: Vec<&pem::Pem> = blocks.iter().filter(|b| b.tag() == "CERTIFICATE").collect();
        let [cert] = certs[..] else {
            if certs.is_empty() {
                return Err("tls: failed to find any PEM data in certificate input".to_owned());
            }
            return Err(format!("expected 1 certificate, found {}", certs.len()));
        };
        let key = CaKey::from_pem(key_pem)?;
        let (_, parsed) =
            x509_parser::certificate::X509Certificate::from_der(cert.contents()).map_err(|e| format!("x509: {e}"))?;
        if parsed.public_key().subject_public_key.data.as_ref() != key.public_key() {
            return Err("tls: private key does not match public key".to_owned());
        }
        let subject_key_id = parsed.extensions().iter().find_map(|e| match e.parsed_extension() {
            ParsedExtension::SubjectKeyIdentifier(id) => Some(id.0.to_vec()),
            _ => None,
        });
        let not_after = Timestamp::from_second(parsed.validity().not_after.timestamp())
            .map_err(|e| format!("x509: notAfter out of range: {e}"))?;
        Ok(Authority { subject: parsed.subject().as_raw().to_vec(), subject_key_id, not_after, key })
    }

    /// The CA certificate's notAfter.
    pub fn not_after(&self) -> Timestamp {
        self.not_after
    }

    /// Issues the certificate for `request` under `policy` at `now`, with
    /// `serial` (16 random bytes, read as an unsigned integer), as DER.
    ///
    /// # Errors
    /// Upstream's messages: the request's signature does not verify, a
    /// usage is unrecognized, the CA has expired.
    pub fn sign(
        &self,
        request: &Request,
        policy: &Policy,
        now: Timestamp,
        serial: [u8; 16],
    ) -> Result<Vec<u8>, String> {
        request.check_signature().map_err(|e| format!("unable to verify certificate request signature: {e}"))?;
        let usages = key_usages(&policy.usages)?;
        let (not_before, not_after) = self.validity(policy, now)?;
        let tbs = yasna::construct_der(|w| {
            w.write_sequence(|w| {
                w.next().write_tagged(Tag::context(0), |w| w.write_u8(2));
                w.next().write_bigint_bytes(&serial, true);
                self.key.write_algorithm(w.next());
                w.next().write_der(&self.subject);
                w.next().write_sequence(|w| {
                    write_time(w.next(), not_before);
                    write_time(w.next(), not_after);
                });
                w.next().write_der(&request.subject);
                w.next().write_der(&request.public_key_info);
                w.next().write_tagged(Tag::context(3), |w| {
                    w.write_sequence(|w| self.write_extensions(w, request, usages.bits, &usages.extended));
                });
            });
        });
        let signature = self.key.sign(&tbs)?;
        Ok(yasna::construct_der(|w| {
            w.write_sequence(|w| {
                w.next().write_der(&tbs);
                self.key.write_algorithm(w.next());
                w.next().write_bitvec_bytes(&signature, signature.len() * 8);
            });
        }))
    }

    /// Upstream `PermissiveSigningPolicy.apply`'s times.
    fn validity(&self, policy: &Policy, now: Timestamp) -> Result<(Timestamp, Timestamp), String> {
        let add = |t: Timestamp, d: Duration| t.checked_add(d).unwrap_or(Timestamp::MAX);
        let not_before = now.checked_sub(policy.backdate).unwrap_or(Timestamp::MIN);
        let mut not_after = if policy.ttl < policy.short {
            add(now, policy.ttl)
        } else {
            add(now, policy.ttl.saturating_sub(policy.backdate))
        };
        if not_after >= self.not_after {
            not_after = self.not_after;
        }
        let signer_not_after = go_time(self.not_after);
        if not_before >= self.not_after {
            return Err(format!("the signer has expired: NotAfter={signer_not_after}"));
        }
        if now >= self.not_after {
            return Err(format!(
                "refusing to sign a certificate that expired in the past: NotAfter={signer_not_after}"
            ));
        }
        Ok((not_before, not_after))
    }

    fn write_extensions(&self, w: &mut yasna::DERWriterSeq<'_>, request: &Request, bits: u16, ekus: &[&[u64]]) {
        if bits != 0 {
            let (bytes, len) = key_usage_bit_string(bits);
            write_extension(
                w.next(),
                &[2, 5, 29, 15],
                true,
                &yasna::construct_der(|w| w.write_bitvec_bytes(&bytes, len)),
            );
        }
        if !ekus.is_empty() {
            let value = yasna::construct_der(|w| {
                w.write_sequence(|w| {
                    for oid in ekus {
                        w.next().write_oid(&ObjectIdentifier::from_slice(oid));
                    }
                });
            });
            write_extension(w.next(), &[2, 5, 29, 37], false, &value);
        }
        write_extension(w.next(), &[2, 5, 29, 19], true, &yasna::construct_der(|w| w.write_sequence(|_| {})));
        if let Some(id) = self.subject_key_id.as_ref().filter(|_| self.subject != request.subject) {
            let value = yasna::construct_der(|w| {
                w.write_sequence(|w| w.next().write_tagged_implicit(Tag::context(0), |w| w.write_bytes(id)));
            });
            write_extension(w.next(), &[2, 5, 29, 35], false, &value);
        }
        let alt_names =
            request.dns_names.len() + request.email_addresses.len() + request.ip_addresses.len() + request.uris.len();
        if alt_names > 0 {
            // An empty subject is `SEQUENCE {}`.
            let critical = request.subject == [0x30, 0x00];
            write_extension(w.next(), &[2, 5, 29, 17], critical, &alt_names_der(request));
        }
    }
}

/// subjectAltNames in Go's order: DNS names, emails, IPs, URIs.
fn alt_names_der(request: &Request) -> Vec<u8> {
    yasna::construct_der(|w| {
        w.write_sequence(|w| {
            for dns in &request.dns_names {
                w.next().write_tagged_implicit(Tag::context(2), |w| w.write_ia5_string(dns));
            }
            for email in &request.email_addresses {
                w.next().write_tagged_implicit(Tag::context(1), |w| w.write_ia5_string(email));
            }
            for ip in &request.ip_addresses {
                let bytes = match ip {
                    std::net::IpAddr::V4(v4) => v4.octets().to_vec(),
                    std::net::IpAddr::V6(v6) => {
                        v6.to_ipv4_mapped().map_or(v6.octets().to_vec(), |v4| v4.octets().to_vec())
                    }
                };
                w.next().write_tagged_implicit(Tag::context(7), |w| w.write_bytes(&bytes));
            }
            for uri in &request.uris {
                w.next().write_tagged_implicit(Tag::context(6), |w| w.write_ia5_string(uri));
            }
        });
    })
}

fn write_extension(w: DERWriter<'_>, oid: &[u64], critical: bool, value: &[u8]) {
    w.write_sequence(|w| {
        w.next().write_oid(&ObjectIdentifier::from_slice(oid));
        if critical {
            w.next().write_bool(true);
        }
        w.next().write_bytes(value);
    });
}

/// RFC 5280's encoding: UTCTime through 2049, GeneralizedTime after.
fn write_time(w: DERWriter<'_>, at: Timestamp) {
    let utc = at.to_zoned(jiff::tz::TimeZone::UTC);
    let (tag, text) = if (1950..2050).contains(&utc.year()) {
        (0x17, utc.strftime("%y%m%d%H%M%SZ").to_string())
    } else {
        (0x18, utc.strftime("%Y%m%d%H%M%SZ").to_string())
    };
    let mut der = vec![tag, text.len() as u8];
    der.extend_from_slice(text.as_bytes());
    w.write_der(&der);
}

/// A time as Go's `%v` prints a UTC `time.Time`.
fn go_time(at: Timestamp) -> String {
    at.to_zoned(jiff::tz::TimeZone::UTC).strftime("%Y-%m-%d %H:%M:%S +0000 UTC").to_string()
}
