//! The service account token controller's decisions (upstream
//! `pkg/controller/serviceaccount/tokens_controller.go`): a Secret of type
//! `kubernetes.io/service-account-token` naming a ServiceAccount (by the
//! `kubernetes.io/service-account.name` and `.uid` annotations) is filled
//! with `token`, `ca.crt` and `namespace`; one whose ServiceAccount is gone
//! (or is another of the same name) is deleted, and so are a deleted
//! ServiceAccount's token Secrets.
//!
//! A core of small answers rather than a [`Plan`](crate::plan::Plan):
//! upstream's two syncs read live objects between decisions (the
//! ServiceAccount on a cache miss, the Secret before it is filled), so the
//! driver asks [`sync_secret`] what a Secret needs, [`populate`] how to
//! fill the live copy and [`tokens_of`] which Secrets go with a deleted
//! ServiceAccount, and makes the calls itself. The token's claims are
//! [`legacy_claims`]; signing them is the driver's.
//!
//! Upstream's queue keys are structs; here they are strings:
//! [`ServiceAccountKey`] is `<namespace>/<name>/<uid>`, [`SecretKey`] a
//! JSON array of the Secret's and its ServiceAccount's identity.

use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::{Secret, ServiceAccount};

use crate::common::token_secret::{
    NAMESPACE_KEY, ROOT_CA_KEY, SECRET_TYPE, SERVICE_ACCOUNT_NAME_KEY, SERVICE_ACCOUNT_UID_KEY, TOKEN_KEY,
};

/// The issuer of legacy tokens (`serviceaccount.LegacyIssuer`).
pub const LEGACY_ISSUER: &str = "kubernetes/serviceaccount";
/// How often a failed sync is retried before the key is dropped (upstream's
/// default `MaxRetries`).
pub const MAX_RETRIES: u32 = 10;

/// Whether `secret` is a service account token of the ServiceAccount
/// `name` with `uid` (upstream `IsServiceAccountToken`): the type, the
/// name annotation, and the uid annotation when it is set.
pub fn is_service_account_token(secret: &Secret, name: &str, uid: &str) -> bool {
    if secret.type_.as_deref() != Some(SECRET_TYPE) {
        return false;
    }
    let annotation = |key| secret.metadata.annotations.as_ref().and_then(|a| a.get(key)).map_or("", String::as_str);
    let secret_uid = annotation(SERVICE_ACCOUNT_UID_KEY);
    annotation(SERVICE_ACCOUNT_NAME_KEY) == name && (secret_uid.is_empty() || secret_uid == uid)
}

/// Whether `account` is the one a key names: `uid` empty, or its uid.
pub fn same_uid(account: &ServiceAccount, uid: &str) -> bool {
    uid.is_empty() || account.metadata.uid.as_deref() == Some(uid)
}

// === keys ===

/// The ServiceAccount queue's key (upstream `makeServiceAccountKey`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServiceAccountKey {
    /// Its namespace.
    pub namespace: String,
    /// Its name.
    pub name: String,
    /// Its uid when the event was seen.
    pub uid: String,
}

impl ServiceAccountKey {
    /// The key of `account`.
    pub fn of(account: &ServiceAccount) -> Self {
        let m = &account.metadata;
        Self { namespace: field(&m.namespace), name: field(&m.name), uid: field(&m.uid) }
    }

    /// `<namespace>/<name>/<uid>`.
    pub fn encode(&self) -> String {
        format!("{}/{}/{}", self.namespace, self.name, self.uid)
    }

    /// The key `encode` wrote (`None`: not one).
    pub fn parse(key: &str) -> Option<Self> {
        let mut parts = key.splitn(3, '/').map(str::to_owned);
        Some(Self { namespace: parts.next()?, name: parts.next()?, uid: parts.next()? })
    }
}

/// The Secret queue's key (upstream `secretQueueKey`): the Secret and the
/// ServiceAccount its annotations name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SecretKey {
    /// Its namespace.
    pub namespace: String,
    /// Its name.
    pub name: String,
    /// Its uid.
    pub uid: String,
    /// The `kubernetes.io/service-account.name` annotation.
    pub sa_name: String,
    /// The `kubernetes.io/service-account.uid` annotation.
    pub sa_uid: String,
}

impl SecretKey {
    /// The key of `secret`.
    pub fn of(secret: &Secret) -> Self {
        let m = &secret.metadata;
        let annotation = |key| m.annotations.as_ref().and_then(|a| a.get(key)).cloned().unwrap_or_default();
        Self {
            namespace: field(&m.namespace),
            name: field(&m.name),
            uid: field(&m.uid),
            sa_name: annotation(SERVICE_ACCOUNT_NAME_KEY),
            sa_uid: annotation(SERVICE_ACCOUNT_UID_KEY),
        }
    }

    /// A JSON array of the five fields (annotations may hold any text).
    pub fn encode(&self) -> String {
        serde_json::json!([self.namespace, self.name, self.uid, self.sa_name, self.sa_uid]).to_string()
    }

    /// The key `encode` wrote (`None`: not one).
    pub fn parse(key: &str) -> Option<Self> {
        let [namespace, name, uid, sa_name, sa_uid]: [String; 5] = serde_json::from_str(key).ok()?;
        Some(Self { namespace, name, uid, sa_name, sa_uid })
    }
}

/// A metadata field, empty when unset.
fn field(f: &Option<String>) -> String {
    f.clone().unwrap_or_default()
}

// === syncs ===

/// What one sync of a Secret key does (upstream `syncSecret`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SecretSync {
    /// Nothing.
    None,
    /// The Secret is gone but its ServiceAccount is not: drop the Secret
    /// from the ServiceAccount's `secrets` ([`remove_secret_reference`]).
    RemoveReference,
    /// Its ServiceAccount is gone: delete the Secret (uid precondition).
    DeleteToken,
    /// Fill it if it lacks anything ([`secret_update_needed`] on the live
    /// copy, then [`populate`]).
    Populate,
}

/// What the sync of `key` does, given the cached Secret of that uid and
/// the ServiceAccount of the key's name and uid (`None`: gone; when the
/// Secret exists the driver looks the ServiceAccount up live on a cache
/// miss, as upstream's `fetchOnCacheMiss`).
pub fn sync_secret(secret: Option<&Secret>, account: Option<&ServiceAccount>) -> SecretSync {
    match (secret, account) {
        (None, Some(_)) => SecretSync::RemoveReference,
        (None, None) => SecretSync::None,
        (Some(_), None) => SecretSync::DeleteToken,
        (Some(_), Some(_)) => SecretSync::Populate,
    }
}

/// The token Secrets of a deleted ServiceAccount, as (name, uid), from the
/// cached Secrets of its namespace (upstream `deleteTokens`).
pub fn tokens_of<'a>(secrets: impl IntoIterator<Item = &'a Secret>, key: &ServiceAccountKey) -> Vec<(String, String)> {
    secrets
        .into_iter()
        .filter(|s| is_service_account_token(s, &key.name, &key.uid))
        .map(|s| (s.metadata.name.clone().unwrap_or_default(), s.metadata.uid.clone().unwrap_or_default()))
        .collect()
}

/// `account` without `secret` in its `secrets` (`None`: it was not there;
/// upstream `removeSecretReference`).
pub fn remove_secret_reference(account: &ServiceAccount, secret: &str) -> Option<ServiceAccount> {
    let refs = account.secrets.as_ref()?;
    let kept: Vec<_> = refs.iter().filter(|r| r.name.as_deref() != Some(secret)).cloned().collect();
    if kept.len() == refs.len() {
        return None;
    }
    Some(ServiceAccount { secrets: Some(kept), ..account.clone() })
}

/// What a token Secret lacks (upstream `secretUpdateNeeded`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Needs {
    /// `ca.crt` differs from the bundle (never when the bundle is empty).
    pub ca: bool,
    /// `namespace` is empty (a different one is left alone).
    pub namespace: bool,
    /// `token` is empty.
    pub token: bool,
}

impl Needs {
    /// Anything at all.
    pub fn any(self) -> bool {
        self.ca || self.namespace || self.token
    }
}

/// What `secret` lacks, `root_ca` being the bundle published as `ca.crt`.
pub fn secret_update_needed(secret: &Secret, root_ca: &[u8]) -> Needs {
    let data = |key| secret.data.as_ref().and_then(|d| d.get(key)).map_or(&[][..], |b: &ByteString| &b.0);
    Needs {
        ca: !root_ca.is_empty() && data(ROOT_CA_KEY) != root_ca,
        namespace: data(NAMESPACE_KEY).is_empty(),
        token: data(TOKEN_KEY).is_empty(),
    }
}

/// The claims of a legacy token for `account` held in the Secret `secret`
/// (upstream `LegacyClaims` plus the generator's issuer).
pub fn legacy_claims(account: &ServiceAccount, secret: &str) -> serde_json::Value {
    let m = &account.metadata;
    let (namespace, name) = (m.namespace.as_deref().unwrap_or_default(), m.name.as_deref().unwrap_or_default());
    serde_json::json!({
        "iss": LEGACY_ISSUER,
        "sub": format!("system:serviceaccount:{namespace}:{name}"),
        "kubernetes.io/serviceaccount/namespace": namespace,
        "kubernetes.io/serviceaccount/secret.name": secret,
        "kubernetes.io/serviceaccount/service-account.name": name,
        "kubernetes.io/serviceaccount/service-account.uid": m.uid.as_deref().unwrap_or_default(),
    })
}

/// The live Secret `live` filled for `account` (upstream
/// `generateTokenIfNeeded` after its re-read): `ca.crt`, `namespace` and a
/// token from `sign` (given [`legacy_claims`]) where they are lacking, and
/// the two annotations set. `None` when nothing is lacking.
///
/// # Errors
/// `sign`'s.
pub fn populate<E>(
    live: &Secret,
    account: &ServiceAccount,
    root_ca: &[u8],
    sign: impl FnOnce(&serde_json::Value) -> Result<String, E>,
) -> Result<Option<Secret>, E> {
    let needs = secret_update_needed(live, root_ca);
    if !needs.any() {
        return Ok(None);
    }
    let mut secret = live.clone();
    let data = secret.data.get_or_insert_with(BTreeMap::new);
    if needs.ca {
        data.insert(ROOT_CA_KEY.to_owned(), ByteString(root_ca.to_vec()));
    }
    if needs.namespace {
        let namespace = live.metadata.namespace.clone().unwrap_or_default();
        data.insert(NAMESPACE_KEY.to_owned(), ByteString(namespace.into_bytes()));
    }
    if needs.token {
        let name = live.metadata.name.as_deref().unwrap_or_default();
        data.insert(TOKEN_KEY.to_owned(), ByteString(sign(&legacy_claims(account, name))?.into_bytes()));
    }
    let annotations = secret.metadata.annotations.get_or_insert_with(BTreeMap::new);
    annotations.insert(SERVICE_ACCOUNT_NAME_KEY.to_owned(), account.metadata.name.clone().unwrap_or_default());
    annotations.insert(SERVICE_ACCOUNT_UID_KEY.to_owned(), account.metadata.uid.clone().unwrap_or_default());
    Ok(Some(secret))
}

#[cfg(test)]
mod tests;
