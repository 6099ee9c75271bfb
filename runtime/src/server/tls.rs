//! The serving certificate and the TLS parameters, as upstream's
//! `SecureServingOptions` set them:
//!
//! - the certificate: `--tls-cert-file`/`--tls-private-key-file`; else the
//!   pair `kube-controller-manager.crt`/`.key` in `--cert-dir`, generated
//!   self-signed and written there when absent; else a self-signed pair
//!   kept in memory;
//! - `--tls-min-version` (Go's names; TLS 1.2 when unset, as Go's server
//!   default) and `--tls-cipher-suites` (Go's names; as in Go, the list
//!   chooses TLS 1.2 suites only, TLS 1.3's are always offered);
//! - client certificates are asked for, not required, when some client CA
//!   is configured (Go's `RequestClientCert`): the handshake checks that
//!   the client holds the key, and each request's authentication verifies
//!   the chain against the CA it needs (`x509.rs`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::crypto::{CryptoProvider, WebPkiSupportedAlgorithms, ring};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, UnixTime};
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::{DigitallySignedStruct, DistinguishedName, SignatureScheme, SupportedCipherSuite};

use super::{Error, Result};

/// The certificate pair's file names in `--cert-dir` (upstream's `PairName`).
pub const PAIR_NAME: &str = "kube-controller-manager";

/// Where the serving certificate comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TlsSource {
    /// Generated at start for `localhost` and the host name; kept in
    /// `cert_dir` (`--cert-dir`) when given, in memory otherwise.
    SelfSigned {
        /// `--cert-dir`.
        cert_dir: Option<PathBuf>,
    },
    /// PEM files (`--tls-cert-file`, `--tls-private-key-file`).
    Files {
        /// Certificate chain.
        cert: PathBuf,
        /// Private key.
        key: PathBuf,
    },
}

/// The serving TLS settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsSettings {
    /// The certificate.
    pub source: TlsSource,
    /// `--tls-cipher-suites` (empty: rustls's defaults).
    pub cipher_suites: Vec<String>,
    /// `--tls-min-version` (`None`: TLS 1.2).
    pub min_version: Option<String>,
}

/// Go's TLS cipher suite names and the rustls suites they are. `None`:
/// a suite Go knows that rustls does not implement (CBC, RC4, 3DES, RSA
/// key exchange), refused by name.
const SUITES: &[(&str, Option<SupportedCipherSuite>)] = &[
    ("TLS_AES_128_GCM_SHA256", Some(ring::cipher_suite::TLS13_AES_128_GCM_SHA256)),
    ("TLS_AES_256_GCM_SHA384", Some(ring::cipher_suite::TLS13_AES_256_GCM_SHA384)),
    ("TLS_CHACHA20_POLY1305_SHA256", Some(ring::cipher_suite::TLS13_CHACHA20_POLY1305_SHA256)),
    ("TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", Some(ring::cipher_suite::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256)),
    ("TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", Some(ring::cipher_suite::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384)),
    ("TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305", Some(ring::cipher_suite::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256)),
    (
        "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
        Some(ring::cipher_suite::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256),
    ),
    ("TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", Some(ring::cipher_suite::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256)),
    ("TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", Some(ring::cipher_suite::TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384)),
    ("TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305", Some(ring::cipher_suite::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256)),
    (
        "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
        Some(ring::cipher_suite::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256),
    ),
    ("TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA", None),
    ("TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA", None),
    ("TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA", None),
    ("TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA", None),
    ("TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256", None),
    ("TLS_ECDHE_ECDSA_WITH_RC4_128_SHA", None),
    ("TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA", None),
    ("TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256", None),
    ("TLS_ECDHE_RSA_WITH_RC4_128_SHA", None),
    ("TLS_RSA_WITH_3DES_EDE_CBC_SHA", None),
    ("TLS_RSA_WITH_AES_128_CBC_SHA", None),
    ("TLS_RSA_WITH_AES_128_CBC_SHA256", None),
    ("TLS_RSA_WITH_AES_128_GCM_SHA256", None),
    ("TLS_RSA_WITH_AES_256_CBC_SHA", None),
    ("TLS_RSA_WITH_AES_256_GCM_SHA384", None),
    ("TLS_RSA_WITH_RC4_128_SHA", None),
];

/// Builds the rustls server configuration; asks for client certificates
/// when `request_client_certs`.
///
/// # Errors
///
/// [`Error::CipherSuite`], [`Error::TlsVersion`], and those of reading or
/// generating the certificate.
pub fn tls_config(settings: &TlsSettings, request_client_certs: bool) -> Result<Arc<rustls::ServerConfig>> {
    let provider = Arc::new(provider(&settings.cipher_suites)?);
    let versions = versions(settings.min_version.as_deref(), &provider)?;
    let (certs, key) = certificate(&settings.source)?;
    let builder = rustls::ServerConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&versions)
        .map_err(Error::Tls)?;
    let builder = if request_client_certs {
        builder.with_client_cert_verifier(Arc::new(RequestClientCert {
            algorithms: provider.signature_verification_algorithms,
        }))
    } else {
        builder.with_no_client_auth()
    };
    Ok(Arc::new(builder.with_single_cert(certs, key).map_err(Error::Tls)?))
}

/// ring's provider, its TLS 1.2 suites narrowed to `names` when given.
fn provider(names: &[String]) -> Result<CryptoProvider> {
    let mut provider = ring::default_provider();
    if names.is_empty() {
        return Ok(provider);
    }
    let mut tls12 = Vec::new();
    for name in names {
        match SUITES.iter().find(|(n, _)| n == name) {
            None => return Err(Error::CipherSuite(format!("Cipher suite {name} not supported or doesn't exist"))),
            Some((_, None)) => {
                return Err(Error::CipherSuite(format!(
                    "cipher suite {name} is not implemented by kcm-rs (rustls offers the ECDHE suites with AES-GCM or \
                     ChaCha20-Poly1305 only)"
                )));
            }
            Some((_, Some(suite))) if suite.tls13().is_none() && !tls12.contains(suite) => tls12.push(*suite),
            Some(_) => {}
        }
    }
    provider.cipher_suites.retain(|s| s.tls13().is_some());
    provider.cipher_suites.extend(tls12);
    Ok(provider)
}

/// The protocol versions `--tls-min-version` allows (rustls has no TLS
/// 1.0 or 1.1, so their names allow what 1.2 allows).
fn versions(min: Option<&str>, provider: &CryptoProvider) -> Result<Vec<&'static rustls::SupportedProtocolVersion>> {
    let tls13_only = match min.unwrap_or("") {
        "" | "VersionTLS10" | "VersionTLS11" | "VersionTLS12" => false,
        "VersionTLS13" => true,
        other => return Err(Error::TlsVersion(format!("unknown tls version {other:?}"))),
    };
    let has_tls12 = provider.cipher_suites.iter().any(|s| s.tls13().is_none());
    Ok(if tls13_only || !has_tls12 { vec![&rustls::version::TLS13] } else { rustls::DEFAULT_VERSIONS.to_vec() })
}

type Pair = (Vec<CertificateDer<'static>>, PrivateKeyDer<'static>);

fn certificate(source: &TlsSource) -> Result<Pair> {
    match source {
        TlsSource::Files { cert, key } => read_pair(cert, key),
        TlsSource::SelfSigned { cert_dir: Some(dir) } => {
            let cert = dir.join(format!("{PAIR_NAME}.crt"));
            let key = dir.join(format!("{PAIR_NAME}.key"));
            if std::fs::File::open(&cert).is_ok() && std::fs::File::open(&key).is_ok() {
                return read_pair(&cert, &key);
            }
            let (cert_pem, key_pem) = self_signed()?;
            let write = |path: &Path, text: &str, mode: u32| -> std::io::Result<()> {
                use std::io::Write as _;
                use std::os::unix::fs::OpenOptionsExt as _;
                std::fs::create_dir_all(dir)?;
                std::fs::OpenOptions::new()
                    .create(true)
                    .write(true)
                    .truncate(true)
                    .mode(mode)
                    .open(path)?
                    .write_all(text.as_bytes())
            };
            write(&cert, &cert_pem, 0o644).map_err(|source| Error::CertDir { path: cert.clone(), source })?;
            write(&key, &key_pem, 0o600).map_err(|source| Error::CertDir { path: key.clone(), source })?;
            tracing::info!(cert = %cert.display(), key = %key.display(), "generated self-signed cert");
            read_pair(&cert, &key)
        }
        TlsSource::SelfSigned { cert_dir: None } => {
            let (cert, key) = self_signed()?;
            let certs = vec![CertificateDer::from_pem_slice(cert.as_bytes()).map_err(Error::SelfSignedPem)?];
            let key = PrivateKeyDer::from_pem_slice(key.as_bytes()).map_err(Error::SelfSignedPem)?;
            Ok((certs, key))
        }
    }
}

/// A self-signed pair for `localhost`, `127.0.0.1` and the host name, as
/// PEM (certificate, key).
fn self_signed() -> Result<(String, String)> {
    let mut names = vec!["localhost".to_owned(), "127.0.0.1".to_owned()];
    if let Ok(host) = std::fs::read_to_string("/proc/sys/kernel/hostname") {
        names.push(host.trim().to_owned());
    }
    let generated = rcgen::generate_simple_self_signed(names).map_err(Error::SelfSigned)?;
    Ok((generated.cert.pem(), generated.signing_key.serialize_pem()))
}

fn read_pair(cert: &Path, key: &Path) -> Result<Pair> {
    let certs = CertificateDer::pem_file_iter(cert)
        .and_then(|it| it.collect::<std::result::Result<Vec<_>, _>>())
        .map_err(|source| Error::ReadPem { path: cert.to_owned(), source })?;
    let key = PrivateKeyDer::from_pem_file(key).map_err(|source| Error::ReadPem { path: key.to_owned(), source })?;
    Ok((certs, key))
}

/// Asks for a client certificate without requiring one and without
/// judging its chain (that is per request: `x509.rs`); checks only that
/// the client holds the certificate's key.
#[derive(Debug)]
struct RequestClientCert {
    algorithms: WebPkiSupportedAlgorithms,
}

impl ClientCertVerifier for RequestClientCert {
    fn client_auth_mandatory(&self) -> bool {
        false
    }

    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        &[]
    }

    fn verify_client_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _now: UnixTime,
    ) -> std::result::Result<ClientCertVerified, rustls::Error> {
        Ok(ClientCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(source: TlsSource) -> TlsSettings {
        TlsSettings { source, cipher_suites: Vec::new(), min_version: None }
    }

    #[test]
    fn a_self_signed_certificate_makes_a_tls_configuration() {
        assert!(tls_config(&settings(TlsSource::SelfSigned { cert_dir: None }), true).is_ok());
        let missing = TlsSource::Files { cert: "/nonexistent.crt".into(), key: "/nonexistent.key".into() };
        assert!(matches!(tls_config(&settings(missing), false), Err(Error::ReadPem { .. })));
    }

    #[test]
    fn cert_dir_keeps_the_generated_pair() {
        let dir = tempfile::tempdir().unwrap();
        let source = TlsSource::SelfSigned { cert_dir: Some(dir.path().join("certs")) };
        tls_config(&settings(source.clone()), false).unwrap();
        let cert = dir.path().join("certs/kube-controller-manager.crt");
        let first = std::fs::read(&cert).unwrap();
        tls_config(&settings(source), false).unwrap();
        assert_eq!(std::fs::read(&cert).unwrap(), first, "the kept pair is reused");
    }

    #[test]
    fn cipher_suites_and_versions_by_go_name() {
        let tls12 = provider(&["TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256".to_owned()]).unwrap();
        let names: Vec<String> = tls12.cipher_suites.iter().map(|s| format!("{:?}", s.suite())).collect();
        assert!(names.contains(&"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256".to_owned()), "{names:?}");
        assert!(!names.contains(&"TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384".to_owned()), "{names:?}");
        assert!(names.iter().any(|n| n.starts_with("TLS13_")), "TLS 1.3 suites stay: {names:?}");
        let unknown = provider(&["TLS_NONESUCH".to_owned()]).unwrap_err().to_string();
        assert!(unknown.contains("Cipher suite TLS_NONESUCH not supported or doesn't exist"), "{unknown}");
        assert!(provider(&["TLS_RSA_WITH_AES_128_CBC_SHA".to_owned()]).is_err());
        let all = ring::default_provider();
        assert_eq!(versions(Some("VersionTLS13"), &all).unwrap().len(), 1);
        assert_eq!(versions(Some("VersionTLS10"), &all).unwrap().len(), 2);
        let bad = versions(Some("TLS12"), &all).unwrap_err().to_string();
        assert!(bad.contains("unknown tls version \"TLS12\""), "{bad}");
    }
}
