//! Client certificates: a CA bundle that verifies a presented chain (as
//! upstream's x509 verifier does, for client authentication at the time of
//! the request) and the subject names read from a certificate: the common
//! name (the user) and the organizations (the groups).
//!
//! The TLS handshake only asks for a certificate and checks the client
//! holds its key (`tls.rs`); which authority a certificate must chain to
//! depends on what the request claims, so the chain is verified here, per
//! request, as upstream's `RequestClientCert` serving does.

use std::sync::Arc;

use rustls::RootCertStore;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, UnixTime};
use rustls::server::WebPkiClientVerifier;
use rustls::server::danger::ClientCertVerifier;

/// The authorities one kind of client certificate must chain to.
#[derive(Clone)]
pub struct ClientCa {
    verifier: Arc<dyn ClientCertVerifier>,
}

impl std::fmt::Debug for ClientCa {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientCa").finish_non_exhaustive()
    }
}

impl ClientCa {
    /// A bundle from PEM text (a file's or a ConfigMap key's).
    ///
    /// # Errors
    ///
    /// Why the text holds no usable certificate.
    pub fn from_pem(pem: &[u8]) -> Result<ClientCa, String> {
        let mut roots = RootCertStore::empty();
        for cert in CertificateDer::pem_slice_iter(pem) {
            let cert = cert.map_err(|e| format!("invalid PEM: {e}"))?;
            roots.add(cert).map_err(|e| format!("invalid certificate: {e}"))?;
        }
        if roots.is_empty() {
            return Err("data does not contain any valid RSA or ECDSA certificates".to_owned());
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
            .build()
            .map_err(|e| e.to_string())?;
        Ok(ClientCa { verifier })
    }

    /// Verifies `chain` (leaf first) for client authentication now.
    ///
    /// # Errors
    ///
    /// Why it does not chain to these authorities (or is expired, or not
    /// for client authentication).
    pub fn verify(&self, chain: &[CertificateDer<'static>]) -> Result<(), String> {
        let Some((leaf, intermediates)) = chain.split_first() else {
            return Err("no client certificate".to_owned());
        };
        self.verifier
            .verify_client_cert(leaf, intermediates, UnixTime::now())
            .map(|_| ())
            .map_err(|e| format!("verifying certificate {} failed: {e}", subject(leaf).common_name))
    }
}

/// A certificate's subject, as far as authentication reads it.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Subject {
    /// The CN (empty when none).
    pub common_name: String,
    /// Each O, in order.
    pub organizations: Vec<String>,
}

const COMMON_NAME: &[u64] = &[2, 5, 4, 3];
const ORGANIZATION: &[u64] = &[2, 5, 4, 10];
/// ASN.1 BMPString: UTF-16BE.
const BMP_STRING: u64 = 30;

/// The subject of a DER certificate (empty when it cannot be read).
pub fn subject(cert: &CertificateDer<'_>) -> Subject {
    let mut subject = Subject::default();
    let parsed = yasna::parse_ber(cert.as_ref(), |r| {
        r.read_sequence(|r| {
            r.next().read_sequence(|r| {
                r.read_optional(|r| r.read_tagged(yasna::Tag::context(0), |r| r.read_der()))?;
                for _ in 0..4 {
                    // serialNumber, signature, issuer, validity
                    r.next().read_der()?;
                }
                r.next().read_sequence_of(|r| {
                    r.read_set_of(|r| {
                        r.read_sequence(|r| {
                            let oid = r.next().read_oid()?;
                            let value = r.next().read_tagged_der()?;
                            let text = if value.tag().tag_number == BMP_STRING {
                                let units: Vec<u16> = value
                                    .value()
                                    .chunks(2)
                                    .map(|c| u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]))
                                    .collect();
                                String::from_utf16_lossy(&units)
                            } else {
                                String::from_utf8_lossy(value.value()).into_owned()
                            };
                            if oid.components().as_slice() == COMMON_NAME {
                                subject.common_name = text;
                            } else if oid.components().as_slice() == ORGANIZATION {
                                subject.organizations.push(text);
                            }
                            Ok(())
                        })
                    })
                })?;
                while r.read_optional(|r| r.read_der())?.is_some() {}
                Ok(())
            })?;
            while r.read_optional(|r| r.read_der())?.is_some() {}
            Ok(())
        })
    });
    if parsed.is_err() {
        return Subject::default();
    }
    subject
}

#[cfg(test)]
pub(super) mod tests {
    use rcgen::{CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair};

    use super::*;

    /// A CA and a client certificate it signed for `cn` in `orgs`: (CA PEM,
    /// client DER).
    pub fn signed_client(cn: &str, orgs: &[&str]) -> (String, CertificateDer<'static>) {
        let ca_key = KeyPair::generate().unwrap();
        let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
        ca.is_ca = IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        ca.distinguished_name.push(DnType::CommonName, "test-ca");
        let ca_cert = ca.self_signed(&ca_key).unwrap();
        let issuer = Issuer::new(ca, ca_key);
        let mut client = CertificateParams::new(Vec::<String>::new()).unwrap();
        client.distinguished_name.push(DnType::CommonName, cn);
        for org in orgs {
            client.distinguished_name.push(DnType::OrganizationName, *org);
        }
        client.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        let client = client.signed_by(&KeyPair::generate().unwrap(), &issuer).unwrap();
        (ca_cert.pem(), client.der().clone())
    }

    #[test]
    fn the_subject_names_the_user_and_groups() {
        let (_, client) = signed_client("kubernetes-admin", &["system:masters"]);
        let subject = subject(&client);
        assert_eq!(subject.common_name, "kubernetes-admin");
        assert_eq!(subject.organizations, ["system:masters"]);
    }

    #[test]
    fn a_chain_verifies_against_its_own_ca_only() {
        let (ca, client) = signed_client("front-proxy-client", &[]);
        let (other_ca, _) = signed_client("x", &[]);
        assert_eq!(ClientCa::from_pem(ca.as_bytes()).unwrap().verify(std::slice::from_ref(&client)), Ok(()));
        let refused = ClientCa::from_pem(other_ca.as_bytes()).unwrap().verify(&[client]).unwrap_err();
        assert!(refused.starts_with("verifying certificate front-proxy-client failed"), "{refused}");
        assert!(ClientCa::from_pem(b"not a certificate").is_err());
    }
}
