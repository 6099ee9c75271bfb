//! The legacy service account token cleaner's decisions (upstream
//! `pkg/controller/serviceaccount/legacy_serviceaccount_token_cleaner.go`):
//! once the API server has tracked legacy token use for longer than the
//! clean-up period, an auto-generated token Secret unused for that long
//! (its `kubernetes.io/legacy-token-last-used` date, or no such label) and
//! mounted by no pod is labelled `kubernetes.io/legacy-token-invalid-since`
//! with today's date; one invalid since before the period began is
//! deleted.
//!
//! A one-pass evaluation rather than a [`Plan`](crate::plan::Plan):
//! upstream's `evaluateSATokens` walks every cached Secret and makes each
//! write on its own, logging (not retrying) a failure, so [`evaluate`]
//! answers a list of [`Action`]s, one per Secret that needs a write or a
//! log line, and the driver performs them in order. The tracking start is
//! [`latest_possible_tracked_since`], from the API server's ConfigMap the
//! driver reads live.
//!
//! Dates are `YYYY-MM-DD` in UTC and compared as strings, as upstream
//! compares them, once they parse.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use jiff::civil::Date;
use jiff::{SignedDuration, Timestamp, tz::TimeZone};
use k8s_openapi::api::core::v1::{Secret, ServiceAccount};

use crate::common::token_secret::{SECRET_TYPE, SERVICE_ACCOUNT_NAME_KEY, SERVICE_ACCOUNT_UID_KEY};

#[cfg(test)]
mod tests;

/// The label the API server sets to the date a legacy token was last used
/// (`serviceaccount.LastUsedLabelKey`).
pub const LAST_USED_LABEL_KEY: &str = "kubernetes.io/legacy-token-last-used";
/// The label this controller sets to the date a token was found unused
/// (`serviceaccount.InvalidSinceLabelKey`).
pub const INVALID_SINCE_LABEL_KEY: &str = "kubernetes.io/legacy-token-invalid-since";
/// The API server's ConfigMap in `kube-system` recording since when legacy
/// token use is tracked (`legacytokentracking.ConfigMapName`).
pub const TRACKING_CONFIG_MAP_NAME: &str = "kube-apiserver-legacy-service-account-token-tracking";
/// Its data key, holding that date (`legacytokentracking.ConfigMapDataKey`).
pub const TRACKING_CONFIG_MAP_DATA_KEY: &str = "since";

/// Why the tracking start is unknown (upstream's errors of
/// `latestPossibleTrackedSinceTime`, past the ConfigMap read).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum TrackedSinceError {
    /// The ConfigMap has no `since` key.
    #[error("configMap does not have since label")]
    Missing,
    /// The `since` value is not a `YYYY-MM-DD` date.
    #[error("error parsing trackedSince time: {0:?} is not a date")]
    Unparsable(String),
}

/// The cached state an evaluation reads.
pub trait View {
    /// Every cached Secret.
    fn secrets(&self) -> Vec<&Secret>;
    /// The cached ServiceAccount `namespace/name`.
    fn service_account(&self, namespace: &str, name: &str) -> Option<Arc<ServiceAccount>>;
    /// The names of the Secrets the pods of `namespace` reference
    /// (upstream `podutil.VisitPodSecretNames` over each pod).
    fn pod_secret_names(&self, namespace: &str) -> BTreeSet<String>;
}

/// What one Secret needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Its `last-used` label does not parse; logged, left alone.
    UnparsableLastUsed {
        /// The Secret's namespace.
        namespace: String,
        /// Its name.
        name: String,
        /// The label's value.
        value: String,
    },
    /// Label it invalid since `invalid_since` (a JSON merge patch carrying
    /// its uid, as upstream's apply configuration).
    MarkInvalid {
        /// The Secret's namespace.
        namespace: String,
        /// Its name.
        name: String,
        /// Its uid.
        uid: String,
        /// Today, `YYYY-MM-DD`.
        invalid_since: String,
    },
    /// Delete it, on the condition of the resourceVersion seen.
    Delete {
        /// The Secret's namespace.
        namespace: String,
        /// Its name.
        name: String,
        /// The resourceVersion cached.
        resource_version: String,
        /// Its ServiceAccount (logged).
        service_account: String,
        /// Its `last-used` label, `""` when absent (logged).
        last_used: String,
        /// Its `invalid-since` label (logged).
        invalid_since: String,
    },
}

/// Upstream's `dateFormat` (`2006-01-02`): exactly four digits, two and
/// two, separated by `-`.
pub fn parse_date(value: &str) -> Option<Date> {
    let bytes = value.as_bytes();
    let shaped = bytes.len() == 10
        && bytes.iter().enumerate().all(|(i, b)| if i == 4 || i == 7 { *b == b'-' } else { b.is_ascii_digit() });
    shaped.then(|| value.parse().ok()).flatten()
}

/// `at`'s UTC date as `YYYY-MM-DD`.
pub fn format_date(at: Timestamp) -> String {
    at.to_zoned(TimeZone::UTC).date().strftime("%Y-%m-%d").to_string()
}

/// Upstream `latestPossibleTrackedSinceTime`: 00:00 UTC on the day after
/// the ConfigMap's `since` date (`since` absent: `None`).
///
/// # Errors
/// `since` missing or not a date.
pub fn latest_possible_tracked_since(since: Option<&str>) -> Result<Timestamp, TrackedSinceError> {
    let since = since.ok_or(TrackedSinceError::Missing)?;
    let date = parse_date(since).ok_or_else(|| TrackedSinceError::Unparsable(since.to_owned()))?;
    let next = date.tomorrow().map_err(|_| TrackedSinceError::Unparsable(since.to_owned()))?;
    next.to_zoned(TimeZone::UTC).map(|z| z.timestamp()).map_err(|_| TrackedSinceError::Unparsable(since.to_owned()))
}

/// Upstream `evaluateSATokens`, past the ConfigMap read: nothing until
/// `now` is `clean_up_period` past `tracked_since`; then, for each
/// legacy token Secret created before `now - clean_up_period`, not being
/// deleted, unused since before that day, naming a cached ServiceAccount
/// (same uid when the annotation has one) that lists it, and referenced by
/// no pod of its namespace: [`Action::MarkInvalid`] when its
/// `invalid-since` label is absent or unparsable, [`Action::Delete`] when
/// that date is before the period's first day.
///
/// With a one-year period at 2024-06-01T08:00Z, a Secret last used
/// 2023-05-31 and never labelled is labelled `invalid-since: 2024-06-01`;
/// at 2025-06-02 it is deleted (2024-06-01 < 2024-06-02).
pub fn evaluate(
    view: &impl View,
    now: Timestamp,
    tracked_since: Timestamp,
    clean_up_period: SignedDuration,
) -> Vec<Action> {
    if tracked_since.checked_add(clean_up_period).is_ok_and(|t| now < t) {
        // Not tracked for long enough.
        return Vec::new();
    }
    let preserve_created_on_or_after = now.checked_sub(clean_up_period).unwrap_or(Timestamp::MIN);
    let preserve_used_on_or_after = format_date(preserve_created_on_or_after);
    let mut mounted: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    let mut actions = Vec::new();
    for secret in view.secrets() {
        let meta = &secret.metadata;
        let created = meta.creation_timestamp.as_ref().map_or(Timestamp::MIN, |t| t.0);
        if secret.type_.as_deref() != Some(SECRET_TYPE)
            || created >= preserve_created_on_or_after
            || meta.deletion_timestamp.is_some()
        {
            continue;
        }
        let namespace = meta.namespace.as_deref().unwrap_or_default();
        let name = meta.name.as_deref().unwrap_or_default();
        // No last-used label: unused since tracking began.
        let last_used = label(secret, LAST_USED_LABEL_KEY);
        if let Some(value) = last_used {
            if parse_date(value).is_none() {
                actions.push(Action::UnparsableLastUsed {
                    namespace: namespace.to_owned(),
                    name: name.to_owned(),
                    value: value.to_owned(),
                });
                continue;
            }
            if value >= preserve_used_on_or_after.as_str() {
                continue;
            }
        }
        let Some(account) = service_account(view, secret) else { continue };
        if !has_secret_reference(&account, name) {
            // Cannot tell it is an auto-generated token.
            continue;
        }
        if mounted.entry(namespace).or_insert_with(|| view.pod_secret_names(namespace)).contains(name) {
            continue;
        }
        let invalid_since = label(secret, INVALID_SINCE_LABEL_KEY).filter(|v| parse_date(v).is_some());
        let Some(invalid_since) = invalid_since else {
            actions.push(Action::MarkInvalid {
                namespace: namespace.to_owned(),
                name: name.to_owned(),
                uid: meta.uid.clone().unwrap_or_default(),
                invalid_since: format_date(now),
            });
            continue;
        };
        if invalid_since >= preserve_used_on_or_after.as_str() {
            continue;
        }
        actions.push(Action::Delete {
            namespace: namespace.to_owned(),
            name: name.to_owned(),
            resource_version: meta.resource_version.clone().unwrap_or_default(),
            service_account: account.metadata.name.clone().unwrap_or_default(),
            last_used: last_used.unwrap_or_default().to_owned(),
            invalid_since: invalid_since.to_owned(),
        });
    }
    actions
}

fn label<'a>(secret: &'a Secret, key: &str) -> Option<&'a str> {
    secret.metadata.labels.as_ref().and_then(|l| l.get(key)).map(String::as_str)
}

/// Upstream `getServiceAccount`: the cached ServiceAccount the Secret's
/// annotations name, when its uid matches a uid annotation.
fn service_account(view: &impl View, secret: &Secret) -> Option<Arc<ServiceAccount>> {
    let annotation = |key| secret.metadata.annotations.as_ref().and_then(|a| a.get(key)).map_or("", String::as_str);
    let name = annotation(SERVICE_ACCOUNT_NAME_KEY);
    if name.is_empty() {
        return None;
    }
    let account = view.service_account(secret.metadata.namespace.as_deref().unwrap_or_default(), name)?;
    let uid = annotation(SERVICE_ACCOUNT_UID_KEY);
    (uid.is_empty() || account.metadata.uid.as_deref() == Some(uid)).then_some(account)
}

/// Upstream `hasSecretReference`.
fn has_secret_reference(account: &ServiceAccount, secret_name: &str) -> bool {
    account.secrets.iter().flatten().any(|s| s.name.as_deref() == Some(secret_name))
}
