//! Keys as upstream reads them, tokens as upstream signs them; the keys
//! are fixtures made with openssl (`testdata/`).

use std::path::PathBuf;

use jsonwebtoken::{DecodingKey, Validation};

use super::*;

// === utils ===

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src/drivers/serviceaccounttoken/testdata").join(name)
}

/// The token `key` signs verified with `public` (PEM), and its header.
fn verified(key: &str, public: &str, alg: Algorithm) -> (serde_json::Value, Header) {
    let signer = Signer::from_file(&fixture(key)).expect("key read");
    let claims = serde_json::json!({"iss": "kubernetes/serviceaccount", "sub": "system:serviceaccount:ns:sa"});
    let token = signer.sign(&claims).expect("signed");
    let pem = std::fs::read(fixture(public)).expect("public key");
    let decoding = match alg {
        Algorithm::RS256 => DecodingKey::from_rsa_pem(&pem),
        _ => DecodingKey::from_ec_pem(&pem),
    }
    .expect("public key parsed");
    let mut validation = Validation::new(alg);
    validation.required_spec_claims.clear();
    validation.validate_exp = false;
    let data = jsonwebtoken::decode::<serde_json::Value>(&token, &decoding, &validation).expect("verified");
    assert_eq!(data.claims, claims);
    // upstream's kid: the SHA-256 of the public key's PKIX DER.
    let spki = pem::parse(&pem).expect("PEM").into_contents();
    let kid = URL_SAFE_NO_PAD.encode(ring::digest::digest(&ring::digest::SHA256, &spki));
    assert_eq!(data.header.kid.as_deref(), Some(kid.as_str()), "{key}");
    (data.claims, data.header)
}

// === tests ===

#[test]
fn rsa_keys_sign_rs256_in_pkcs1_and_pkcs8() {
    for key in ["rsa-pkcs1.key", "rsa-pkcs8.key"] {
        let (_, header) = verified(key, "rsa.pub", Algorithm::RS256);
        assert_eq!(header.typ, None, "no typ, as go-jose's header");
    }
}

#[test]
fn ecdsa_keys_sign_es256_and_es384_in_sec1_and_pkcs8() {
    verified("p256-sec1.key", "p256.pub", Algorithm::ES256);
    verified("p384-pkcs8.key", "p384.pub", Algorithm::ES384);
}

#[test]
fn an_unreadable_or_keyless_file_is_refused_in_upstreams_words() {
    let missing = fixture("missing.key");
    let error = Signer::from_file(&missing).expect_err("missing").to_string();
    let prefix = format!("error reading key for service account token controller: open {}: ", missing.display());
    assert!(error.starts_with(&prefix), "{error}");

    let public = fixture("rsa.pub");
    let error = Signer::from_file(&public).expect_err("no private key").to_string();
    assert_eq!(
        error,
        format!(
            "error reading key for service account token controller: error reading private key file {}: \
             data does not contain a valid RSA or ECDSA private key",
            public.display()
        )
    );
    assert!(matches!(Signer::from_file(&fixture("p521-sec1.key")), Err(Error::P521 { .. })));
}
