//! Upstream's `TestTokenCreation`, with its case names (those of the
//! Secret and ServiceAccount events the controller still handles since it
//! stopped creating token Secrets): the cached ServiceAccount and Secrets,
//! the API's live objects, one event, and the API calls upstream's fake
//! client records, produced here by the driver's sequence of the core's
//! answers.

use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::{Secret, ServiceAccount};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::*;
use crate::testing::service_account;

// === utils ===

const ROOT_CA: &[u8] = b"CA Data";

fn token_secrets() -> ServiceAccount {
    service_account(&["token-secret-1"])
}

/// `serviceAccountTokenSecret`, with the data keys of `data`.
fn token_secret_with(data: &[(&str, &[u8])]) -> Secret {
    let annotations = [(SERVICE_ACCOUNT_NAME_KEY, "default"), (SERVICE_ACCOUNT_UID_KEY, "12345")];
    Secret {
        metadata: ObjectMeta {
            name: Some("token-secret-1".into()),
            namespace: Some("default".into()),
            uid: Some("23456".into()),
            resource_version: Some("1".into()),
            annotations: Some(annotations.iter().map(|(k, v)| ((*k).into(), (*v).into())).collect()),
            ..ObjectMeta::default()
        },
        type_: Some(SECRET_TYPE.into()),
        data: Some(data.iter().map(|(k, v)| ((*k).into(), ByteString(v.to_vec()))).collect()),
        ..Secret::default()
    }
}

fn token_secret() -> Secret {
    token_secret_with(&[(TOKEN_KEY, b"ABC"), (ROOT_CA_KEY, ROOT_CA), (NAMESPACE_KEY, b"default")])
}

fn opaque_secret() -> Secret {
    let mut secret = token_secret();
    secret.metadata.name = Some("regular-secret-1".into());
    secret.type_ = Some("Opaque".into());
    secret
}

/// One case: the cache, the API's objects, one event.
#[derive(Default)]
struct Case {
    cached_account: Option<ServiceAccount>,
    cached_secrets: Vec<Secret>,
    live_accounts: Vec<ServiceAccount>,
    live_secrets: Vec<Secret>,
    event: Option<Event>,
}

enum Event {
    ServiceAccountDeleted(ServiceAccount),
    SecretSeen(Secret),
    SecretDeleted(Secret),
}

/// The API calls of one sync of the event's key, as upstream's fake
/// client lists them (`verb resource name`).
fn actions(case: Case) -> Vec<String> {
    let mut calls = Vec::new();
    let live_account = |calls: &mut Vec<String>| {
        calls.push("get serviceaccounts default".to_owned());
        case.live_accounts.first().cloned()
    };
    match case.event.expect("an event") {
        Event::ServiceAccountDeleted(account) => {
            let key = ServiceAccountKey::of(&account);
            for (name, _) in tokens_of(&case.cached_secrets, &key) {
                calls.push(format!("delete secrets {name}"));
            }
        }
        Event::SecretDeleted(secret) => {
            let key = SecretKey::of(&secret);
            let account = case.cached_account.filter(|a| same_uid(a, &key.sa_uid));
            if sync_secret(None, account.as_ref()) == SecretSync::RemoveReference {
                let live = live_account(&mut calls).expect("live ServiceAccount");
                if let Some(updated) = remove_secret_reference(&live, &key.name) {
                    calls.push(format!("update serviceaccounts {}", updated.metadata.name.unwrap_or_default()));
                }
            }
        }
        Event::SecretSeen(secret) => {
            let key = SecretKey::of(&secret);
            let account = match case.cached_account {
                Some(a) => Some(a),
                None => live_account(&mut calls),
            }
            .filter(|a| same_uid(a, &key.sa_uid));
            match sync_secret(Some(&secret), account.as_ref()) {
                SecretSync::DeleteToken => calls.push(format!("delete secrets {}", key.name)),
                SecretSync::Populate if secret_update_needed(&secret, ROOT_CA).any() => {
                    calls.push(format!("get secrets {}", key.name));
                    let live = case.live_secrets.first().expect("live Secret");
                    let account = account.expect("account");
                    let filled = populate(live, &account, ROOT_CA, |_| Ok::<_, ()>("ABC".to_owned()));
                    if let Some(filled) = filled.expect("signed") {
                        assert_eq!(filled, token_secret(), "the Secret written");
                        calls.push(format!("update secrets {}", key.name));
                    }
                }
                _ => {}
            }
        }
    }
    calls
}

fn added_or_updated(live: Secret) -> Case {
    Case {
        cached_account: Some(token_secrets()),
        live_secrets: vec![live.clone()],
        event: Some(Event::SecretSeen(live)),
        ..Case::default()
    }
}

const FILL: [&str; 2] = ["get secrets token-secret-1", "update secrets token-secret-1"];

// === tests ===

#[test]
fn token_creation() {
    let without = |key: &str| {
        let all: [(&str, &[u8]); 3] = [(TOKEN_KEY, b"ABC"), (ROOT_CA_KEY, ROOT_CA), (NAMESPACE_KEY, b"default")];
        token_secret_with(&all.into_iter().filter(|(k, _)| *k != key).collect::<Vec<_>>())
    };
    let with = |key: &'static str, value: &'static [u8]| {
        let mut secret = token_secret();
        secret.data.get_or_insert_with(BTreeMap::new).insert(key.into(), ByteString(value.to_vec()));
        secret
    };
    let cases: Vec<(&str, Case, Vec<&str>)> = vec![
        (
            "deleted serviceaccount with no secrets",
            Case { event: Some(Event::ServiceAccountDeleted(service_account(&[]))), ..Case::default() },
            vec![],
        ),
        (
            "deleted serviceaccount with non-token secrets",
            Case {
                cached_secrets: vec![opaque_secret()],
                event: Some(Event::ServiceAccountDeleted(service_account(&["regular-secret-1"]))),
                ..Case::default()
            },
            vec![],
        ),
        (
            "deleted serviceaccount with token secrets",
            Case {
                cached_secrets: vec![token_secret()],
                event: Some(Event::ServiceAccountDeleted(token_secrets())),
                ..Case::default()
            },
            vec!["delete secrets token-secret-1"],
        ),
        (
            "added secret without serviceaccount",
            Case { event: Some(Event::SecretSeen(token_secret())), ..Case::default() },
            vec!["get serviceaccounts default", "delete secrets token-secret-1"],
        ),
        ("added secret with serviceaccount", added_or_updated(token_secret()), vec![]),
        ("added token secret without token data", added_or_updated(without(TOKEN_KEY)), FILL.to_vec()),
        ("added token secret without ca data", added_or_updated(without(ROOT_CA_KEY)), FILL.to_vec()),
        (
            "added token secret with mismatched ca data",
            added_or_updated(with(ROOT_CA_KEY, b"mismatched")),
            FILL.to_vec(),
        ),
        ("added token secret without namespace data", added_or_updated(without(NAMESPACE_KEY)), FILL.to_vec()),
        ("added token secret with custom namespace data", added_or_updated(with(NAMESPACE_KEY, b"custom")), vec![]),
        (
            "deleted secret without serviceaccount",
            Case { event: Some(Event::SecretDeleted(token_secret())), ..Case::default() },
            vec![],
        ),
        (
            "deleted secret with serviceaccount with reference",
            Case {
                cached_account: Some(token_secrets()),
                live_accounts: vec![token_secrets()],
                event: Some(Event::SecretDeleted(token_secret())),
                ..Case::default()
            },
            vec!["get serviceaccounts default", "update serviceaccounts default"],
        ),
        (
            "deleted secret with serviceaccount without reference",
            Case {
                cached_account: Some(service_account(&[])),
                live_accounts: vec![service_account(&[])],
                event: Some(Event::SecretDeleted(token_secret())),
                ..Case::default()
            },
            vec!["get serviceaccounts default"],
        ),
    ];
    for (name, case, want) in cases {
        assert_eq!(actions(case), want, "{name}");
    }
}

#[test]
fn a_secret_of_another_service_account_uid_is_not_its_token() {
    let secret = token_secret();
    assert!(is_service_account_token(&secret, "default", "12345"));
    assert!(!is_service_account_token(&secret, "default", "99999"), "uid annotation set and different");
    assert!(!is_service_account_token(&secret, "other", "12345"));
    let mut no_uid = secret.clone();
    no_uid.metadata.annotations.as_mut().map(|a| a.remove(SERVICE_ACCOUNT_UID_KEY));
    assert!(is_service_account_token(&no_uid, "default", "99999"), "no uid annotation: the name decides");
    assert!(!is_service_account_token(&opaque_secret(), "default", "12345"));
}

#[test]
fn keys_round_trip() {
    let secret = SecretKey::of(&token_secret());
    assert_eq!(SecretKey::parse(&secret.encode()), Some(secret));
    let account = ServiceAccountKey::of(&token_secrets());
    assert_eq!(account.encode(), "default/default/12345");
    assert_eq!(ServiceAccountKey::parse(&account.encode()), Some(account));
}

#[test]
fn legacy_claims_are_upstreams() {
    let claims = legacy_claims(&token_secrets(), "token-secret-1");
    assert_eq!(
        claims,
        serde_json::json!({
            "iss": "kubernetes/serviceaccount",
            "sub": "system:serviceaccount:default:default",
            "kubernetes.io/serviceaccount/namespace": "default",
            "kubernetes.io/serviceaccount/secret.name": "token-secret-1",
            "kubernetes.io/serviceaccount/service-account.name": "default",
            "kubernetes.io/serviceaccount/service-account.uid": "12345",
        })
    );
}

#[test]
fn an_empty_bundle_is_never_needed() {
    let needs = secret_update_needed(&token_secret_with(&[(TOKEN_KEY, b"ABC"), (NAMESPACE_KEY, b"default")]), b"");
    assert!(!needs.any());
}
