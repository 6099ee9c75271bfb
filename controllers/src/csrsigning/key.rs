//! The CA's private key, read as upstream's `keyutil.ParsePrivateKeyPEM`
//! reads it (the first `RSA PRIVATE KEY`, `PRIVATE KEY` or
//! `EC PRIVATE KEY` block), and the signature Go's `x509.CreateCertificate`
//! makes with it: SHA-256 with RSA (PKCS #1 v1.5), ECDSA with SHA-256 on
//! P-256 and SHA-384 on P-384, Ed25519. (ring signs; P-521 keys, which Go
//! also signs with, are refused.)

use ring::rand::SystemRandom;
use ring::signature::{self, EcdsaKeyPair, Ed25519KeyPair, KeyPair, RsaKeyPair};

/// A private key the CA signs with.
pub enum CaKey {
    /// RSA.
    Rsa(RsaKeyPair),
    /// ECDSA on P-256 (`p384: false`) or P-384.
    Ecdsa {
        /// The key.
        key: EcdsaKeyPair,
        /// Whether it is on P-384.
        p384: bool,
    },
    /// Ed25519.
    Ed25519(Ed25519KeyPair),
}

impl std::fmt::Debug for CaKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            CaKey::Rsa(_) => "CaKey::Rsa",
            CaKey::Ecdsa { .. } => "CaKey::Ecdsa",
            CaKey::Ed25519(_) => "CaKey::Ed25519",
        })
    }
}

// OIDs (RFC 3279, RFC 5758, RFC 8410).
const SHA256_WITH_RSA: &[u64] = &[1, 2, 840, 113549, 1, 1, 11];
const ECDSA_WITH_SHA256: &[u64] = &[1, 2, 840, 10045, 4, 3, 2];
const ECDSA_WITH_SHA384: &[u64] = &[1, 2, 840, 10045, 4, 3, 3];
const ED25519: &[u64] = &[1, 3, 101, 112];
const EC_PUBLIC_KEY: &[u64] = &[1, 2, 840, 10045, 2, 1];
const P256: &[u64] = &[1, 2, 840, 10045, 3, 1, 7];
const P384: &[u64] = &[1, 3, 132, 0, 34];

impl CaKey {
    /// Reads the first private key block of `pem_text`.
    ///
    /// # Errors
    /// No private key block, or a key ring cannot sign with.
    pub fn from_pem(pem_text: &[u8]) -> Result<CaKey, String> {
        let blocks = pem::parse_many(pem_text).map_err(|e| e.to_string())?;
        for block in blocks {
            let der = block.contents();
            let key = match block.tag() {
                "RSA PRIVATE KEY" => RsaKeyPair::from_der(der).map(CaKey::Rsa).map_err(|e| e.to_string()),
                "PRIVATE KEY" => CaKey::from_pkcs8(der),
                "EC PRIVATE KEY" => CaKey::from_sec1(der),
                _ => continue,
            };
            return key;
        }
        Err("data does not contain a valid RSA or ECDSA private key".to_owned())
    }

    fn from_pkcs8(der: &[u8]) -> Result<CaKey, String> {
        let rng = SystemRandom::new();
        if let Ok(key) = Ed25519KeyPair::from_pkcs8_maybe_unchecked(der) {
            return Ok(CaKey::Ed25519(key));
        }
        if let Ok(key) = EcdsaKeyPair::from_pkcs8(&signature::ECDSA_P256_SHA256_ASN1_SIGNING, der, &rng) {
            return Ok(CaKey::Ecdsa { key, p384: false });
        }
        if let Ok(key) = EcdsaKeyPair::from_pkcs8(&signature::ECDSA_P384_SHA384_ASN1_SIGNING, der, &rng) {
            return Ok(CaKey::Ecdsa { key, p384: true });
        }
        RsaKeyPair::from_pkcs8(der).map(CaKey::Rsa).map_err(|e| format!("unsupported private key: {e}"))
    }

    /// An SEC 1 key wrapped as PKCS #8 for each curve ring knows, the
    /// first that ring accepts.
    fn from_sec1(der: &[u8]) -> Result<CaKey, String> {
        for curve in [P256, P384] {
            let pkcs8 = yasna::construct_der(|w| {
                w.write_sequence(|w| {
                    w.next().write_u8(0);
                    w.next().write_sequence(|w| {
                        w.next().write_oid(&yasna::models::ObjectIdentifier::from_slice(EC_PUBLIC_KEY));
                        w.next().write_oid(&yasna::models::ObjectIdentifier::from_slice(curve));
                    });
                    w.next().write_bytes(der);
                });
            });
            if let Ok(key @ CaKey::Ecdsa { .. }) = CaKey::from_pkcs8(&pkcs8) {
                return Ok(key);
            }
        }
        Err("unsupported EC private key".to_owned())
    }

    /// The public key, as a SubjectPublicKeyInfo's BIT STRING holds it.
    pub fn public_key(&self) -> &[u8] {
        match self {
            CaKey::Rsa(key) => key.public().as_ref(),
            CaKey::Ecdsa { key, .. } => key.public_key().as_ref(),
            CaKey::Ed25519(key) => key.public_key().as_ref(),
        }
    }

    /// Writes the signature's AlgorithmIdentifier.
    pub fn write_algorithm(&self, w: yasna::DERWriter<'_>) {
        let (oid, null) = match self {
            CaKey::Rsa(_) => (SHA256_WITH_RSA, true),
            CaKey::Ecdsa { p384: false, .. } => (ECDSA_WITH_SHA256, false),
            CaKey::Ecdsa { p384: true, .. } => (ECDSA_WITH_SHA384, false),
            CaKey::Ed25519(_) => (ED25519, false),
        };
        w.write_sequence(|w| {
            w.next().write_oid(&yasna::models::ObjectIdentifier::from_slice(oid));
            if null {
                w.next().write_null();
            }
        });
    }

    /// Signs `message`.
    ///
    /// # Errors
    /// ring failed to sign.
    pub fn sign(&self, message: &[u8]) -> Result<Vec<u8>, String> {
        let rng = SystemRandom::new();
        let failed = |_| "failed to sign certificate".to_owned();
        match self {
            CaKey::Rsa(key) => {
                let mut signature = vec![0; key.public().modulus_len()];
                key.sign(&signature::RSA_PKCS1_SHA256, &rng, message, &mut signature).map_err(failed)?;
                Ok(signature)
            }
            CaKey::Ecdsa { key, .. } => key.sign(&rng, message).map(|s| s.as_ref().to_vec()).map_err(failed),
            CaKey::Ed25519(key) => Ok(key.sign(message).as_ref().to_vec()),
        }
    }
}
