//! The bootstrap signer's decision (upstream
//! `pkg/controller/bootstrap/bootstrapsigner.go`): the ConfigMap
//! `kube-public/cluster-info` carries, beside its `kubeconfig`, one key
//! `jws-kubeconfig-<token id>` per token that may sign, holding the
//! detached signature of the kubeconfig by that token ([`super::jws`]);
//! the signature of a token gone, expired or no longer signing is removed.
//!
//! [`signing_tokens`] picks the tokens from the cached Secrets; [`sign`]
//! answers the ConfigMap to write, only when a signature was added,
//! changed or removed. The write is an update of the cached ConfigMap
//! (its other keys, labels and resourceVersion kept), as upstream's.

use std::collections::BTreeMap;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};

use super::jws::compute_detached_signature;
use super::{NotSigning, SECRET_TYPE, validate_for_signing};

/// The signed ConfigMap's namespace (`api.NamespacePublic`).
pub const CONFIG_MAP_NAMESPACE: &str = kcm_objects::CLUSTER_INFO.0;
/// The signed ConfigMap's name (`ConfigMapClusterInfo`).
pub const CONFIG_MAP_NAME: &str = kcm_objects::CLUSTER_INFO.1;
/// The data key of the signed kubeconfig (`KubeConfigKey`).
pub const KUBECONFIG_KEY: &str = "kubeconfig";
/// The prefix of a signature's data key (`JWSSignatureKeyPrefix`).
pub const SIGNATURE_KEY_PREFIX: &str = "jws-kubeconfig-";

/// The tokens that sign, and what the others were told.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SigningTokens {
    /// Token secret by token id.
    pub tokens: BTreeMap<String, String>,
    /// Secrets that do not sign, by name, with why (upstream logs each).
    pub rejected: Vec<(String, NotSigning)>,
    /// Secrets ignored because an earlier one has their token id
    /// (`Duplicate bootstrap tokens found for id, ignoring on the duplicate
    /// secret`), as (token id, Secret name).
    pub duplicates: Vec<(String, String)>,
}

/// The signing tokens among `secrets` (the cached Secrets of
/// `kube-system`) at `now` (upstream `getTokens`): each bootstrap token
/// Secret that [`validate_for_signing`] accepts, the first of a token id
/// winning.
pub fn signing_tokens<'a>(secrets: impl IntoIterator<Item = &'a Secret>, now: Timestamp) -> SigningTokens {
    let mut out = SigningTokens::default();
    for secret in secrets.into_iter().filter(|s| s.type_.as_deref() == Some(SECRET_TYPE)) {
        let name = secret.metadata.name.clone().unwrap_or_default();
        match validate_for_signing(secret, now) {
            Err(why) => out.rejected.push((name, why)),
            Ok((id, _)) if out.tokens.contains_key(&id) => out.duplicates.push((id, name)),
            Ok((id, token_secret)) => {
                out.tokens.insert(id, token_secret);
            }
        }
    }
    out
}

/// What signing `cluster-info` writes.
#[derive(Debug, Clone, PartialEq)]
pub enum Signed {
    /// The ConfigMap has no `kubeconfig` key: nothing is signed (upstream
    /// logs `No key in ConfigMap`).
    NoKubeconfig,
    /// Every signature is in place, none stale: no write.
    Unchanged,
    /// Update the ConfigMap to this.
    Update(Box<ConfigMap>),
}

/// The signatures `config_map` should carry for `tokens` (upstream
/// `signConfigMap`).
pub fn sign(config_map: &ConfigMap, tokens: &BTreeMap<String, String>) -> Signed {
    let Some(content) = config_map.data.as_ref().and_then(|d| d.get(KUBECONFIG_KEY)) else {
        return Signed::NoKubeconfig;
    };
    let mut data = config_map.data.clone().unwrap_or_default();
    let mut stale: BTreeMap<String, String> = BTreeMap::new();
    data.retain(|key, value| match key.strip_prefix(SIGNATURE_KEY_PREFIX) {
        Some(id) => {
            stale.insert(id.to_owned(), std::mem::take(value));
            false
        }
        None => true,
    });
    let mut changed = false;
    for (id, token_secret) in tokens {
        let signature = compute_detached_signature(content, id, token_secret);
        changed |= stale.remove(id).as_ref() != Some(&signature);
        data.insert(format!("{SIGNATURE_KEY_PREFIX}{id}"), signature);
    }
    if !changed && stale.is_empty() {
        return Signed::Unchanged;
    }
    let mut updated = config_map.clone();
    updated.data = Some(data);
    Signed::Update(Box::new(updated))
}

#[cfg(test)]
mod tests;
