//! The token cleaner's decision (upstream
//! `pkg/controller/bootstrap/tokencleaner.go`): a bootstrap token Secret
//! whose `expiration` has passed is deleted, on the condition of its uid;
//! one not yet expired is looked at again when it expires.
//!
//! A Secret without an `expiration` never expires and is left alone; one
//! whose `expiration` is no RFC 3339 time counts as expired, as upstream
//! counts it, and is deleted. Nothing else of the Secret is read, so a
//! Secret missing any other field is no error.

use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::Secret;

use super::{Expiration, SECRET_TYPE, expiration};

/// What one token Secret's sync does (upstream `evalSecret`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Nothing: not a token Secret, or one that never expires.
    None,
    /// Delete the expired Secret, preconditioned on `uid` when it has one.
    /// A conflict or NotFound is expected (it changed or is gone); any
    /// other failure is logged and not retried, as upstream.
    Delete {
        /// Its namespace.
        namespace: String,
        /// Its name.
        name: String,
        /// Its uid, the delete's precondition.
        uid: Option<String>,
    },
    /// Sync it again once it has expired, after this long.
    RequeueAfter(Duration),
}

/// What to do with the cached `secret` at `now`.
pub fn evaluate(secret: &Secret, now: Timestamp) -> Action {
    if secret.type_.as_deref() != Some(SECRET_TYPE) {
        return Action::None;
    }
    match expiration(secret, now) {
        Expiration::Never => Action::None,
        Expiration::In(left) => Action::RequeueAfter(left),
        Expiration::Expired => Action::Delete {
            namespace: secret.metadata.namespace.clone().unwrap_or_default(),
            name: secret.metadata.name.clone().unwrap_or_default(),
            uid: secret.metadata.uid.clone().filter(|uid| !uid.is_empty()),
        },
    }
}

#[cfg(test)]
mod tests {
    //! Upstream's `tokencleaner_test.go`: `TestCleanerNoExpiration`,
    //! `TestCleanerExpired`, `TestCleanerNotExpired`,
    //! `TestCleanerExpiredAt` (the requeue, then the delete once due).

    use jiff::SignedDuration;

    use super::super::testing::{now, time_string, token_secret, with_expiration};
    use super::*;

    fn delete_of(secret: &Secret) -> Action {
        Action::Delete {
            namespace: "kube-system".into(),
            name: secret.metadata.name.clone().expect("named"),
            uid: Some("uidtokenID".into()),
        }
    }

    #[test]
    fn cleaner_no_expiration() {
        assert_eq!(evaluate(&token_secret("tokenID", "tokenSecret"), now()), Action::None);
    }

    #[test]
    fn cleaner_expired() {
        let secret =
            with_expiration(token_secret("tokenID", "tokenSecret"), &time_string(-SignedDuration::from_hours(1)));
        assert_eq!(evaluate(&secret, now()), delete_of(&secret));
    }

    #[test]
    fn cleaner_not_expired() {
        let secret =
            with_expiration(token_secret("tokenID", "tokenSecret"), &time_string(SignedDuration::from_hours(1)));
        assert_eq!(evaluate(&secret, now()), Action::RequeueAfter(Duration::from_secs(3600)));
    }

    #[test]
    fn cleaner_expired_at() {
        let secret =
            with_expiration(token_secret("tokenID", "tokenSecret"), &time_string(SignedDuration::from_secs(2)));
        let Action::RequeueAfter(left) = evaluate(&secret, now()) else { panic!("not requeued") };
        assert_eq!(left, Duration::from_secs(2));
        let later = now().checked_add(left).expect("in range");
        assert_eq!(evaluate(&secret, later), delete_of(&secret), "synced again when due: deleted");
    }

    #[test]
    fn an_unparseable_expiration_is_expired_and_a_secret_without_uid_deleted_unconditionally() {
        let mut secret = with_expiration(token_secret("tokenID", "tokenSecret"), "tomorrow");
        secret.metadata.uid = None;
        let Action::Delete { uid, .. } = evaluate(&secret, now()) else { panic!("not deleted") };
        assert_eq!(uid, None);
    }

    #[test]
    fn a_secret_of_another_type_or_without_data_is_left_alone() {
        let mut other = with_expiration(token_secret("tokenID", "tokenSecret"), "garbage");
        other.type_ = Some("Opaque".into());
        assert_eq!(evaluate(&other, now()), Action::None);
        let empty = Secret { type_: Some(SECRET_TYPE.into()), ..Secret::default() };
        assert_eq!(evaluate(&empty, now()), Action::None);
    }
}
