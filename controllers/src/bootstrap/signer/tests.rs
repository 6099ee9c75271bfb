//! Upstream's `bootstrapsigner_test.go`: `TestNoConfigMap` (the driver's
//! case: no ConfigMap cached, no sync), `TestSimpleSign`,
//! `TestNoSignNeeded`, `TestUpdateSignature`, `TestRemoveSignature`, with
//! upstream's signature of `payload` by `abc123`.

use jiff::SignedDuration;
use k8s_openapi::ByteString;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::super::TOKEN_SECRET_KEY;
use super::super::testing::{now, time_string, token_secret, with_expiration, with_signing_usage};
use super::*;

// === utils ===

const TEST_TOKEN_ID: &str = "abc123";
const SIGNATURE: &str = "eyJhbGciOiJIUzI1NiIsImtpZCI6ImFiYzEyMyJ9..QSxpUG7Q542CirTI2ECPSZjvBOJURUW5a7XqFpNI958";

/// Upstream `newConfigMap`.
fn config_map(token_id: &str, signature: &str) -> ConfigMap {
    let mut data = BTreeMap::from([(KUBECONFIG_KEY.to_owned(), "payload".to_owned())]);
    if !token_id.is_empty() {
        data.insert(format!("{SIGNATURE_KEY_PREFIX}{token_id}"), signature.to_owned());
    }
    ConfigMap {
        metadata: ObjectMeta {
            namespace: Some(CONFIG_MAP_NAMESPACE.into()),
            name: Some(CONFIG_MAP_NAME.into()),
            resource_version: Some("1".into()),
            ..ObjectMeta::default()
        },
        data: Some(data),
        ..ConfigMap::default()
    }
}

fn signing_secret() -> Secret {
    with_signing_usage(token_secret(TEST_TOKEN_ID, "tokenSecret"), "true")
}

fn tokens(secrets: &[Secret]) -> BTreeMap<String, String> {
    signing_tokens(secrets, now()).tokens
}

// === tests ===

#[test]
fn simple_sign() {
    let signed = sign(&config_map("", ""), &tokens(&[signing_secret()]));
    assert_eq!(signed, Signed::Update(Box::new(config_map(TEST_TOKEN_ID, SIGNATURE))));
}

#[test]
fn no_sign_needed() {
    assert_eq!(sign(&config_map(TEST_TOKEN_ID, SIGNATURE), &tokens(&[signing_secret()])), Signed::Unchanged);
}

#[test]
fn update_signature() {
    let signed = sign(&config_map(TEST_TOKEN_ID, "old signature"), &tokens(&[signing_secret()]));
    assert_eq!(signed, Signed::Update(Box::new(config_map(TEST_TOKEN_ID, SIGNATURE))));
}

#[test]
fn remove_signature() {
    let signed = sign(&config_map(TEST_TOKEN_ID, "old signature"), &tokens(&[]));
    assert_eq!(signed, Signed::Update(Box::new(config_map("", ""))));
}

#[test]
fn a_config_map_without_kubeconfig_is_not_signed() {
    let mut cm = config_map(TEST_TOKEN_ID, "old signature");
    cm.data.as_mut().expect("data").remove(KUBECONFIG_KEY);
    assert_eq!(sign(&cm, &tokens(&[signing_secret()])), Signed::NoKubeconfig);
}

#[test]
fn expired_non_signing_and_duplicate_tokens_do_not_sign() {
    let expired = with_expiration(signing_secret(), &time_string(-SignedDuration::from_hours(1)));
    let not_signing = with_signing_usage(token_secret("def456", "other"), "false");
    let chosen = signing_tokens(&[expired, not_signing], now());
    assert!(chosen.tokens.is_empty());
    assert_eq!(
        chosen.rejected,
        [
            ("bootstrap-token-abc123".to_owned(), NotSigning::Expired),
            ("bootstrap-token-def456".to_owned(), NotSigning::NotForSigning)
        ]
    );
    let mut second = signing_secret();
    second.data.as_mut().expect("data").insert(TOKEN_SECRET_KEY.into(), ByteString(b"x".to_vec()));
    let chosen = signing_tokens(&[signing_secret(), second], now());
    assert_eq!(chosen.tokens, BTreeMap::from([(TEST_TOKEN_ID.to_owned(), "tokenSecret".to_owned())]));
    assert_eq!(chosen.duplicates, [(TEST_TOKEN_ID.to_owned(), "bootstrap-token-abc123".to_owned())]);
}

#[test]
fn other_keys_are_kept_when_signing() {
    let mut cm = config_map("", "");
    cm.data.as_mut().expect("data").insert("other".into(), "kept".into());
    let Signed::Update(updated) = sign(&cm, &tokens(&[signing_secret()])) else { panic!("not signed") };
    assert_eq!(updated.data.expect("data").get("other").map(String::as_str), Some("kept"));
}
