//! Bootstrap tokens (upstream `pkg/controller/bootstrap/` and
//! `k8s.io/cluster-bootstrap`): the Secrets of type [`SECRET_TYPE`] in
//! `kube-system` named `bootstrap-token-<id>` that kubeadm creates for
//! joining nodes, and the two controllers that keep them.
//!
//! This module reads a token Secret as `cluster-bootstrap`'s
//! `util/secrets` and the controllers' `util.go` read it: its data keys
//! ([`data`]), its name ([`parse_name`]), its `expiration`
//! ([`expiration`]), and whether it may sign ([`validate_for_signing`]).
//!
//! # Layout
//! - [`jws`]: the detached JWS signature of `cluster-info`'s kubeconfig
//!   (`token/jws`);
//! - [`tokencleaner`]: expired token Secrets deleted (`tokencleaner.go`);
//! - [`signer`]: `kube-public/cluster-info` signed by every signing token
//!   (`bootstrapsigner.go`).

use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::Secret;

pub mod jws;
pub mod signer;
pub mod tokencleaner;

/// The type of a bootstrap token Secret (`SecretTypeBootstrapToken`).
pub const SECRET_TYPE: &str = kcm_objects::BOOTSTRAP_TOKEN_TYPE;
/// The namespace holding the token Secrets (`api.NamespaceSystem`).
pub const TOKEN_SECRET_NAMESPACE: &str = "kube-system";
/// The prefix of a token Secret's name (`BootstrapTokenSecretPrefix`).
pub const SECRET_PREFIX: &str = "bootstrap-token-";
/// The data key of the token's id (`BootstrapTokenIDKey`).
pub const TOKEN_ID_KEY: &str = "token-id";
/// The data key of the token's secret (`BootstrapTokenSecretKey`).
pub const TOKEN_SECRET_KEY: &str = "token-secret";
/// The data key of the RFC 3339 time the token expires
/// (`BootstrapTokenExpirationKey`).
pub const EXPIRATION_KEY: &str = "expiration";
/// The data key that is `true` when the token may sign `cluster-info`
/// (`BootstrapTokenUsageSigningKey`).
pub const USAGE_SIGNING_KEY: &str = "usage-bootstrap-signing";

/// Whether `secret` is a bootstrap token Secret in `kube-system`, the
/// Secrets both controllers' handlers let through.
pub fn is_token_secret(secret: &Secret) -> bool {
    secret.type_.as_deref() == Some(SECRET_TYPE) && secret.metadata.namespace.as_deref() == Some(TOKEN_SECRET_NAMESPACE)
}

/// The value of the data key `key`, empty when absent (upstream `GetData`;
/// bytes that are not UTF-8 are read lossily, as Go's `string` conversion
/// keeps them and no valid value has any).
pub fn data(secret: &Secret, key: &str) -> String {
    secret
        .data
        .as_ref()
        .and_then(|d| d.get(key))
        .map(|v| String::from_utf8_lossy(&v.0).into_owned())
        .unwrap_or_default()
}

/// The token id a Secret's name carries: `bootstrap-token-` and six
/// characters of `[a-z0-9]` (upstream `ParseName`).
pub fn parse_name(name: &str) -> Option<&str> {
    let id = name.strip_prefix(SECRET_PREFIX)?;
    (id.len() == 6 && id.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())).then_some(id)
}

/// When a token expires, as upstream's `GetExpiration` answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expiration {
    /// No `expiration` key, or an empty one: the token never expires.
    Never,
    /// It expires after this long.
    In(Duration),
    /// It has expired, or its `expiration` is no RFC 3339 time (upstream
    /// treats an unparseable time as expired).
    Expired,
}

/// When `secret` expires, seen at `now` (upstream `GetExpiration`).
pub fn expiration(secret: &Secret, now: Timestamp) -> Expiration {
    let text = data(secret, EXPIRATION_KEY);
    if text.is_empty() {
        return Expiration::Never;
    }
    let Some(at) = parse_rfc3339(&text) else { return Expiration::Expired };
    match Duration::try_from(at.duration_since(now)) {
        Ok(left) if !left.is_zero() => Expiration::In(left),
        _ => Expiration::Expired,
    }
}

/// `text` read as Go's `time.Parse(time.RFC3339, text)` reads it:
/// `YYYY-MM-DDTHH:MM:SS`, an optional fraction of a second, then `Z` or
/// `±HH:MM`. Forms jiff alone would take and Go refuses (a space or `t`
/// for `T`, no seconds, `z`, `±HHMM`) are refused.
fn parse_rfc3339(text: &str) -> Option<Timestamp> {
    let b = text.as_bytes();
    let date_time = b.len() > 19 && b[4] == b'-' && b[7] == b'-' && b[10] == b'T' && b[13] == b':' && b[16] == b':';
    let rest = text.get(19..)?;
    let offset = match rest.strip_prefix(['.', ',']) {
        Some(fraction) => fraction.trim_start_matches(|c: char| c.is_ascii_digit()),
        None => rest,
    };
    let zone = offset == "Z" || (offset.len() == 6 && offset.starts_with(['+', '-']) && offset.as_bytes()[3] == b':');
    if !(date_time && zone) {
        return None;
    }
    text.parse().ok()
}

/// Why a token Secret does not sign (upstream `validateSecretForSigning`,
/// whose log lines these are).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotSigning {
    /// The name is not `bootstrap-token-<id>`.
    #[error("Invalid secret name, must be of the form {SECRET_PREFIX}<secret-id>")]
    InvalidName,
    /// A data key is missing or empty.
    #[error("No key in Secret")]
    MissingKey(&'static str),
    /// The `token-id` is not the id of the name.
    #[error("Token ID doesn't match secret name")]
    MismatchedId,
    /// The token has expired.
    #[error("expired")]
    Expired,
    /// `usage-bootstrap-signing` is not `true`.
    #[error("not for signing")]
    NotForSigning,
}

/// The token id and secret of `secret` when it may sign at `now`: a valid
/// name whose id is the `token-id`, a non-empty `token-secret`, not
/// expired, and `usage-bootstrap-signing` `true`.
///
/// # Errors
/// The first check that fails, in upstream's order.
pub fn validate_for_signing(secret: &Secret, now: Timestamp) -> Result<(String, String), NotSigning> {
    let name_id = parse_name(secret.metadata.name.as_deref().unwrap_or_default()).ok_or(NotSigning::InvalidName)?;
    let id = data(secret, TOKEN_ID_KEY);
    if id.is_empty() {
        return Err(NotSigning::MissingKey(TOKEN_ID_KEY));
    }
    if id != name_id {
        return Err(NotSigning::MismatchedId);
    }
    let token_secret = data(secret, TOKEN_SECRET_KEY);
    if token_secret.is_empty() {
        return Err(NotSigning::MissingKey(TOKEN_SECRET_KEY));
    }
    if expiration(secret, now) == Expiration::Expired {
        return Err(NotSigning::Expired);
    }
    if data(secret, USAGE_SIGNING_KEY) != "true" {
        return Err(NotSigning::NotForSigning);
    }
    Ok((id, token_secret))
}

#[cfg(test)]
mod testing;
#[cfg(test)]
mod tests;
