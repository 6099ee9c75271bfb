//! Upstream's `TestLegacyServiceAccountTokenCleanUp`, with its case names:
//! the tracking ConfigMap's `since`, one cached Secret, ServiceAccount and
//! pod, a clean-up period reaching back to a date, and the writes upstream's
//! fake client records after its ConfigMap read. Upstream measures the
//! period back from the real clock; here `now` is fixed. "configmap does
//! not exist" is a failed read in the driver, the same answer (nothing) as
//! a ConfigMap without `since`.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::{Secret, ServiceAccount};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};

use super::*;
use crate::testing::service_account;

// === utils ===

/// Upstream's clock in these tests.
fn now() -> Timestamp {
    "2023-06-15T10:30:00Z".parse().unwrap()
}

fn midnight(date: &str) -> Timestamp {
    parse_date(date).unwrap().to_zoned(TimeZone::UTC).unwrap().timestamp()
}

/// `configuredLegacyTokenCleanUpPeriod`: from `start` to now.
fn period_since(start: &str) -> SignedDuration {
    now().duration_since(midnight(start))
}

/// `configuredServiceAccountTokenSecret`.
fn token_secret(
    last_used: &str,
    invalid_since: &str,
    created: &str,
    sa_name: &str,
    sa_uid: &str,
    deleted: bool,
) -> Secret {
    let mut labels = BTreeMap::new();
    if !last_used.is_empty() {
        labels.insert(LAST_USED_LABEL_KEY.to_owned(), last_used.to_owned());
    }
    if !invalid_since.is_empty() {
        labels.insert(INVALID_SINCE_LABEL_KEY.to_owned(), invalid_since.to_owned());
    }
    // Upstream ignores the parse error: an unparsable date is the zero time.
    let created = parse_date(created).map_or(Timestamp::MIN, |d| d.to_zoned(TimeZone::UTC).unwrap().timestamp());
    let annotations = [(SERVICE_ACCOUNT_NAME_KEY, sa_name), (SERVICE_ACCOUNT_UID_KEY, sa_uid)];
    Secret {
        metadata: ObjectMeta {
            name: Some("token-secret-1".into()),
            namespace: Some("default".into()),
            uid: Some("23456".into()),
            resource_version: Some("1".into()),
            labels: Some(labels),
            creation_timestamp: Some(Time(created)),
            deletion_timestamp: deleted.then(|| Time(now())),
            annotations: Some(annotations.iter().map(|(k, v)| ((*k).into(), (*v).into())).collect()),
            ..ObjectMeta::default()
        },
        type_: Some(SECRET_TYPE.into()),
        ..Secret::default()
    }
}

/// `opaqueSecret`.
fn opaque_secret() -> Secret {
    Secret {
        metadata: ObjectMeta {
            name: Some("regular-secret-1".into()),
            namespace: Some("default".into()),
            uid: Some("23456".into()),
            resource_version: Some("1".into()),
            ..ObjectMeta::default()
        },
        type_: Some("Opaque".into()),
        ..Secret::default()
    }
}

/// One namespace's cache: the Secret, the ServiceAccount, and whether the
/// pod mounts `token-secret-1` (`configuredPod(withSecretMount)`).
struct Cache {
    secret: Secret,
    account: Option<ServiceAccount>,
    pod_mounts_secret: bool,
}

impl View for Cache {
    fn secrets(&self) -> Vec<&Secret> {
        vec![&self.secret]
    }

    fn service_account(&self, namespace: &str, name: &str) -> Option<Arc<ServiceAccount>> {
        let named = |a: &&ServiceAccount| {
            a.metadata.namespace.as_deref() == Some(namespace) && a.metadata.name.as_deref() == Some(name)
        };
        self.account.as_ref().filter(named).cloned().map(Arc::new)
    }

    fn pod_secret_names(&self, _: &str) -> BTreeSet<String> {
        if self.pod_mounts_secret { BTreeSet::from(["token-secret-1".to_owned()]) } else { BTreeSet::new() }
    }
}

struct Case {
    name: &'static str,
    /// The ConfigMap's `since`; `None`: no ConfigMap, or no key.
    since: Option<&'static str>,
    secret: Secret,
    account: Option<ServiceAccount>,
    pod_mounts_secret: bool,
    /// The clean-up period reaches back to this date.
    period_from: &'static str,
    expected: Vec<Action>,
}

/// What the driver does with the case: the tracking start, then the
/// evaluation.
fn run(case: &Case) -> Vec<Action> {
    let Ok(tracked_since) = latest_possible_tracked_since(case.since) else { return Vec::new() };
    let cache =
        Cache { secret: case.secret.clone(), account: case.account.clone(), pod_mounts_secret: case.pod_mounts_secret };
    evaluate(&cache, now(), tracked_since, period_since(case.period_from))
}

fn mark_invalid() -> Action {
    Action::MarkInvalid {
        namespace: "default".into(),
        name: "token-secret-1".into(),
        uid: "23456".into(),
        invalid_since: "2023-06-15".into(),
    }
}

fn delete(last_used: &str, invalid_since: &str) -> Action {
    Action::Delete {
        namespace: "default".into(),
        name: "token-secret-1".into(),
        resource_version: "1".into(),
        service_account: "default".into(),
        last_used: last_used.into(),
        invalid_since: invalid_since.into(),
    }
}

// === tests ===

#[test]
fn legacy_service_account_token_clean_up() {
    let refs = || Some(service_account(&["token-secret-1"]));
    let secret =
        |last_used, invalid_since, created| token_secret(last_used, invalid_since, created, "default", "12345", false);
    let case = |name, since, secret, period_from, expected| Case {
        name,
        since,
        secret,
        account: refs(),
        pod_mounts_secret: false,
        period_from,
        expected,
    };
    let cases = vec![
        case("configmap does not exist", None, secret("2022-12-27", "", "2022-12-27"), "2022-12-28", vec![]),
        case(
            "configmap exists, but the configmap does not have tracked-since label",
            None,
            secret("2022-12-27", "", "2022-12-27"),
            "2022-12-28",
            vec![],
        ),
        case(
            "configmap exists, the time period since 'tracked-since' is smaller than the CleanUpPeriod",
            Some("2022-12-29"),
            secret("2022-12-27", "", "2022-12-27"),
            "2022-12-29",
            vec![],
        ),
        case(
            "configmap exists, the 'tracked-since' cannot be parsed",
            Some("2022-12-27-1"),
            secret("2022-12-27", "", "2022-12-27"),
            "2022-12-29",
            vec![],
        ),
        case(
            "secret is not SecretTypeServiceAccountToken type",
            Some("2022-12-28"),
            opaque_secret(),
            "2022-12-29",
            vec![],
        ),
        Case {
            account: Some(service_account(&[])),
            ..case(
                "secret is not referenced by serviceaccount",
                Some("2022-12-27"),
                secret("2022-12-27", "", "2022-12-27"),
                "2022-12-29",
                vec![],
            )
        },
        case(
            "auto-generated secret has a late creation time",
            Some("2022-12-27"),
            secret("2022-12-27", "", "2022-12-30"),
            "2022-12-29",
            vec![],
        ),
        case(
            "auto-generated secret has a deletion time",
            Some("2022-12-27"),
            token_secret("2022-12-27", "", "2022-12-27", "default", "12345", true),
            "2022-12-30",
            vec![],
        ),
        case(
            "auto-generated secret has a late last-used time",
            Some("2022-12-27"),
            secret("2022-12-30", "", "2022-12-27"),
            "2022-12-29",
            vec![],
        ),
        case(
            "auto-generated secret has a last-used label, but it can not be parsed",
            Some("2022-12-27"),
            secret("2022-12-27-1", "", "2022-12-27"),
            "2022-12-29",
            vec![Action::UnparsableLastUsed {
                namespace: "default".into(),
                name: "token-secret-1".into(),
                value: "2022-12-27-1".into(),
            }],
        ),
        Case {
            account: None,
            ..case(
                "secret-referenced service account does not exist",
                Some("2022-12-27"),
                secret("2022-12-27", "", "2022-12-27"),
                "2022-12-29",
                vec![],
            )
        },
        case(
            "secret-referenced service account uid does not match",
            Some("2022-12-27"),
            token_secret("2022-12-27", "", "2022-12-27", "default", "123456", false),
            "2022-12-29",
            vec![],
        ),
        case(
            "secret-referenced service account name is empty",
            Some("2022-12-27"),
            token_secret("2022-12-27", "", "2022-12-27", "", "12345", false),
            "2022-12-29",
            vec![],
        ),
        case(
            "auto-generated secret does not have 'last-used' label, has not been marked as invalid",
            Some("2022-12-28"),
            secret("", "", "2022-12-27"),
            "2022-12-30",
            vec![mark_invalid()],
        ),
        case(
            "auto-generated secret does not have 'last-used' label, has been marked as invalid, invalid_since label can not be parsed",
            Some("2022-12-28"),
            secret("", "2022-12-29-1", "2022-12-27"),
            "2022-12-30",
            vec![mark_invalid()],
        ),
        case(
            "auto-generated secret does not have 'last-used' label, has been marked as invalid, time period since invalid is less than CleanUpPeriod",
            Some("2022-12-28"),
            secret("", "2023-01-01", "2022-12-27"),
            "2022-12-29",
            vec![],
        ),
        case(
            "auto-generated secret does not have 'last-used' label, has been marked as invalid, time period since invalid is larger than CleanUpPeriod",
            Some("2022-12-28"),
            secret("", "2022-12-29", "2022-12-27"),
            "2023-01-01",
            vec![delete("", "2022-12-29")],
        ),
        Case {
            pod_mounts_secret: true,
            ..case(
                "auto-generated secret is mounted by the pod",
                Some("2022-12-28"),
                secret("2022-12-27", "", "2022-12-27"),
                "2022-12-29",
                vec![],
            )
        },
        case(
            "auto-generated secret has 'last-used' label, the time period since last-used is larger than CleanUpPeriod, secret has not been marked as invalid",
            Some("2022-12-28"),
            secret("2022-12-27", "", "2022-12-27"),
            "2022-12-30",
            vec![mark_invalid()],
        ),
        case(
            "auto-generated secret has 'last-used' label, the time period since last-used is larger than CleanUpPeriod, secret has been marked as invalid, time peroid since invalid is less than CleanUpPeriod",
            Some("2022-12-28"),
            secret("2022-12-27", "2023-05-01", "2022-12-27"),
            "2022-12-30",
            vec![],
        ),
        case(
            "auto-generated secret has 'last-used' label, the time period since last-used is larger than CleanUpPeriod, secret has been marked as invalid, time peroid since invalid is larger than CleanUpPeriod",
            Some("2022-12-28"),
            secret("2022-12-27", "2023-01-05", "2022-12-27"),
            "2023-05-01",
            vec![delete("2022-12-27", "2023-01-05")],
        ),
    ];
    for case in &cases {
        assert_eq!(run(case), case.expected, "{}", case.name);
    }
}

#[test]
fn tracked_since_is_the_day_after_the_configmap_date() {
    assert_eq!(latest_possible_tracked_since(Some("2022-12-28")), Ok(midnight("2022-12-29")));
    assert_eq!(latest_possible_tracked_since(None), Err(TrackedSinceError::Missing));
    for bad in ["2022-12-27-1", "20221227", "2022-1-27", "2022-13-01"] {
        assert_eq!(latest_possible_tracked_since(Some(bad)), Err(TrackedSinceError::Unparsable(bad.into())), "{bad}");
    }
}
