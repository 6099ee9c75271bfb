//! Upstream's `common_test.go` fixtures, shared by the bootstrap tests.

use std::collections::BTreeMap;

use jiff::{SignedDuration, Timestamp};
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::{EXPIRATION_KEY, SECRET_PREFIX, SECRET_TYPE, TOKEN_ID_KEY, TOKEN_SECRET_KEY, USAGE_SIGNING_KEY};

/// The test clock.
pub fn now() -> Timestamp {
    "2026-01-02T03:04:05Z".parse().expect("a time")
}

/// `now` moved by `delta`, in RFC 3339 (upstream `timeString`).
pub fn time_string(delta: SignedDuration) -> String {
    now().checked_add(delta).expect("in range").to_string()
}

/// Upstream `newTokenSecret`.
pub fn token_secret(id: &str, secret: &str) -> Secret {
    Secret {
        metadata: ObjectMeta {
            namespace: Some("kube-system".into()),
            name: Some(format!("{SECRET_PREFIX}{id}")),
            resource_version: Some("1".into()),
            uid: Some(format!("uid{id}")),
            ..ObjectMeta::default()
        },
        type_: Some(SECRET_TYPE.into()),
        data: Some(BTreeMap::from([
            (TOKEN_ID_KEY.to_owned(), ByteString(id.into())),
            (TOKEN_SECRET_KEY.to_owned(), ByteString(secret.into())),
        ])),
        ..Secret::default()
    }
}

/// Upstream `addSecretExpiration`.
pub fn with_expiration(mut secret: Secret, expiration: &str) -> Secret {
    secret.data.get_or_insert_default().insert(EXPIRATION_KEY.into(), ByteString(expiration.into()));
    secret
}

/// Upstream `addSecretSigningUsage`.
pub fn with_signing_usage(mut secret: Secret, value: &str) -> Secret {
    secret.data.get_or_insert_default().insert(USAGE_SIGNING_KEY.into(), ByteString(value.into()));
    secret
}
