//! The key of `--service-account-private-key-file` and the tokens signed
//! with it (upstream `keyutil.PrivateKeyFromFile` and
//! `serviceaccount.JWTTokenGenerator`).
//!
//! The file's first PEM block that holds an RSA or ECDSA private key is
//! the key, as upstream's `ParsePrivateKeyPEM` reads it: `RSA PRIVATE KEY`
//! (PKCS #1), `EC PRIVATE KEY` (SEC 1) or `PRIVATE KEY` (PKCS #8). RSA
//! keys sign RS256, P-256 keys ES256 and P-384 keys ES384, as upstream;
//! a P-521 key (upstream's ES512) is refused, since neither `jsonwebtoken`
//! nor `ring` signs ES512. The header's `kid` is upstream's: the unpadded
//! base64url SHA-256 of the public key's PKIX (SubjectPublicKeyInfo) DER.

use std::path::Path;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use ring::rand::SystemRandom;
use ring::signature::{
    ECDSA_P256_SHA256_FIXED_SIGNING, ECDSA_P384_SHA384_FIXED_SIGNING, EcdsaKeyPair, EcdsaSigningAlgorithm, KeyPair,
    RsaKeyPair,
};

/// Why the key cannot be used (upstream's messages).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The file cannot be read.
    #[error("error reading key for service account token controller: open {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The file holds no RSA or ECDSA private key.
    #[error(
        "error reading key for service account token controller: error reading private key file {path}: \
         data does not contain a valid RSA or ECDSA private key"
    )]
    NoKey {
        /// The file.
        path: String,
    },
    /// A P-521 key, which kcm-rs cannot sign with.
    #[error("failed to build token generator: {path}: P-521 (ES512) keys are not supported by kcm-rs")]
    P521 {
        /// The file.
        path: String,
    },
}

/// Signs legacy service account tokens.
pub struct Signer {
    /// The private key.
    key: EncodingKey,
    /// `alg` and `kid` (no `typ`, as upstream's go-jose header).
    header: Header,
}

impl std::fmt::Debug for Signer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Signer").field("header", &self.header).finish_non_exhaustive()
    }
}

/// DER object identifiers (content octets) of the PKIX algorithms.
const RSA_ENCRYPTION: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01];
const EC_PUBLIC_KEY: &[u8] = &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01];
const P256: &[u8] = &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07];
const P384: &[u8] = &[0x2b, 0x81, 0x04, 0x00, 0x22];
const P521: &[u8] = &[0x2b, 0x81, 0x04, 0x00, 0x23];

impl Signer {
    /// The key in the PEM file at `path`.
    ///
    /// # Errors
    /// The file cannot be read, holds no RSA or ECDSA private key, or a
    /// P-521 one.
    pub fn from_file(path: &Path) -> Result<Self, Error> {
        let display = path.display().to_string();
        let text = std::fs::read(path).map_err(|source| Error::Read { path: display.clone(), source })?;
        let blocks = pem::parse_many(&text).unwrap_or_default();
        if blocks.iter().any(|b| b.tag().ends_with("PRIVATE KEY") && contains(b.contents(), &der(0x06, P521))) {
            return Err(Error::P521 { path: display });
        }
        blocks.iter().find_map(key_of).ok_or(Error::NoKey { path: display })
    }

    /// `claims` signed.
    ///
    /// # Errors
    /// Signing failed (`jsonwebtoken`'s error).
    pub fn sign(&self, claims: &serde_json::Value) -> jsonwebtoken::errors::Result<String> {
        jsonwebtoken::encode(&self.header, claims, &self.key)
    }
}

/// The signer of one PEM block, when it is an RSA or a P-256 or P-384 key.
fn key_of(block: &pem::Pem) -> Option<Signer> {
    let der = block.contents();
    match block.tag() {
        "RSA PRIVATE KEY" => rsa(RsaKeyPair::from_der(der).ok()?, EncodingKey::from_rsa_der(der)),
        "PRIVATE KEY" => match RsaKeyPair::from_pkcs8(der) {
            Ok(pair) => rsa(pair, EncodingKey::from_rsa_pem(pem::encode(block).as_bytes()).ok()?),
            Err(_) => ecdsa(der.to_vec()),
        },
        "EC PRIVATE KEY" => [P256, P384].iter().find_map(|curve| ecdsa(sec1_to_pkcs8(der, curve))),
        _ => None,
    }
}

fn rsa(pair: RsaKeyPair, key: EncodingKey) -> Option<Signer> {
    let spki = der(0x30, &[algorithm(RSA_ENCRYPTION, &[0x05, 0x00]), bit_string(pair.public_key().as_ref())].concat());
    Some(signer(Algorithm::RS256, key, &spki))
}

fn ecdsa(pkcs8: Vec<u8>) -> Option<Signer> {
    let curves: [(&EcdsaSigningAlgorithm, &[u8], Algorithm); 2] = [
        (&ECDSA_P256_SHA256_FIXED_SIGNING, P256, Algorithm::ES256),
        (&ECDSA_P384_SHA384_FIXED_SIGNING, P384, Algorithm::ES384),
    ];
    curves.into_iter().find_map(|(signing, curve, alg)| {
        let pair = EcdsaKeyPair::from_pkcs8(signing, &pkcs8, &SystemRandom::new()).ok()?;
        let params = der(0x06, curve);
        let spki = der(0x30, &[algorithm(EC_PUBLIC_KEY, &params), bit_string(pair.public_key().as_ref())].concat());
        Some(signer(alg, EncodingKey::from_ec_der(&pkcs8), &spki))
    })
}

fn signer(alg: Algorithm, key: EncodingKey, spki: &[u8]) -> Signer {
    let kid = URL_SAFE_NO_PAD.encode(ring::digest::digest(&ring::digest::SHA256, spki));
    Signer { key, header: Header { typ: None, kid: Some(kid), ..Header::new(alg) } }
}

// === DER ===

/// A SEC 1 `ECPrivateKey` as the PKCS #8 document of `curve` that wraps it.
fn sec1_to_pkcs8(sec1: &[u8], curve: &[u8]) -> Vec<u8> {
    let version = [0x02, 0x01, 0x00];
    der(0x30, &[&version[..], &algorithm(EC_PUBLIC_KEY, &der(0x06, curve)), &der(0x04, sec1)].concat())
}

/// An `AlgorithmIdentifier` of `oid` with `params` (DER, as written).
fn algorithm(oid: &[u8], params: &[u8]) -> Vec<u8> {
    der(0x30, &[der(0x06, oid), params.to_vec()].concat())
}

/// A BIT STRING of whole bytes.
fn bit_string(bytes: &[u8]) -> Vec<u8> {
    der(0x03, &[&[0x00], bytes].concat())
}

/// One DER element: `tag`, the definite length, `content`.
fn der(tag: u8, content: &[u8]) -> Vec<u8> {
    let len = content.len();
    let mut out = vec![tag];
    if len < 0x80 {
        out.push(len as u8);
    } else {
        let bytes: Vec<u8> = len.to_be_bytes().into_iter().skip_while(|b| *b == 0).collect();
        out.push(0x80 | bytes.len() as u8);
        out.extend(bytes);
    }
    out.extend_from_slice(content);
    out
}

/// Whether `needle` occurs in `haystack`.
fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

#[cfg(test)]
mod tests;
