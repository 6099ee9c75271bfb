//! Upstream's `util_test.go` (`TestValidateSecretForSigning`,
//! `TestValidateSecret`, `TestBadSecretName`, `TestMismatchSecretName`)
//! and `cluster-bootstrap`'s `TestGetSecretString` and
//! `TestParseSecretName`.

use jiff::SignedDuration;

use super::testing::{now, time_string, token_secret, with_expiration, with_signing_usage};
use super::*;

// === utils ===

const GIVEN_TOKEN_ID: &str = "abc123";
const GIVEN_TOKEN_ID2: &str = "def456";
const GIVEN_TOKEN_SECRET: &str = "tokenSecret";

/// A token Secret named for `GIVEN_TOKEN_ID` with these data values.
fn secret(id: &str, token_secret_value: &str, ok_to_sign: &str, expiration: &str) -> Secret {
    let mut s = with_expiration(with_signing_usage(token_secret(id, token_secret_value), ok_to_sign), expiration);
    s.metadata.name = Some(format!("{SECRET_PREFIX}{GIVEN_TOKEN_ID}"));
    s
}

// === tests ===

#[test]
fn validate_secret_for_signing() {
    let hour = SignedDuration::from_hours(1);
    let cases = [
        ("Signing token with no exp", GIVEN_TOKEN_ID, GIVEN_TOKEN_SECRET, "true", String::new(), true),
        ("Signing token with valid exp", GIVEN_TOKEN_ID, GIVEN_TOKEN_SECRET, "true", time_string(hour), true),
        ("Expired signing token", GIVEN_TOKEN_ID, GIVEN_TOKEN_SECRET, "true", time_string(-hour), false),
        ("Signing token with bad exp", GIVEN_TOKEN_ID, GIVEN_TOKEN_SECRET, "true", "garbage".into(), false),
        ("Signing token without signing bit", GIVEN_TOKEN_ID, GIVEN_TOKEN_SECRET, "", "garbage".into(), false),
        ("Signing token with bad signing bit", GIVEN_TOKEN_ID, GIVEN_TOKEN_SECRET, "", String::new(), false),
        ("Signing token with no ID", "", GIVEN_TOKEN_SECRET, "true", String::new(), false),
        ("Signing token with no secret", GIVEN_TOKEN_ID, "", "true", String::new(), false),
    ];
    for (description, id, token, ok_to_sign, expiration, valid) in cases {
        let result = validate_for_signing(&secret(id, token, ok_to_sign, &expiration), now());
        assert_eq!(result.is_ok(), valid, "{description}: {result:?}");
        if let Ok((got_id, got_secret)) = result {
            assert_eq!((got_id.as_str(), got_secret.as_str()), (id, token), "{description}");
        }
    }
}

#[test]
fn validate_secret() {
    let s = with_signing_usage(token_secret(GIVEN_TOKEN_ID, GIVEN_TOKEN_SECRET), "true");
    assert_eq!(validate_for_signing(&s, now()), Ok((GIVEN_TOKEN_ID.to_owned(), GIVEN_TOKEN_SECRET.to_owned())));
}

#[test]
fn bad_secret_name() {
    let mut s = with_signing_usage(token_secret(GIVEN_TOKEN_ID, GIVEN_TOKEN_SECRET), "true");
    s.metadata.name = Some(GIVEN_TOKEN_ID.into());
    assert_eq!(validate_for_signing(&s, now()), Err(NotSigning::InvalidName));
}

#[test]
fn mismatch_secret_name() {
    let mut s = with_signing_usage(token_secret(GIVEN_TOKEN_ID, GIVEN_TOKEN_SECRET), "true");
    s.metadata.name = Some(format!("{SECRET_PREFIX}{GIVEN_TOKEN_ID2}"));
    assert_eq!(validate_for_signing(&s, now()), Err(NotSigning::MismatchedId));
}

#[test]
fn get_secret_string() {
    let s = token_secret("foo123", "bar");
    assert_eq!(data(&s, TOKEN_SECRET_KEY), "bar", "existing key");
    assert_eq!(data(&s, "baz"), "", "non-existing key");
    assert_eq!(data(&Secret::default(), "foo"), "", "no data");
}

#[test]
fn parse_secret_name() {
    assert_eq!(parse_name("bootstrap-token-abc123"), Some("abc123"));
    for rejected in
        ["", "abc123", "bootstrap-token-", "bootstrap-token-abc", "bootstrap-token-abc123ghi", "bootstrap-token-ABC123"]
    {
        assert_eq!(parse_name(rejected), None, "{rejected:?}");
    }
}

#[test]
fn expiration_is_read_as_upstreams_get_expiration() {
    let s = |expiration: &str| with_expiration(token_secret(GIVEN_TOKEN_ID, GIVEN_TOKEN_SECRET), expiration);
    assert_eq!(expiration(&token_secret(GIVEN_TOKEN_ID, GIVEN_TOKEN_SECRET), now()), Expiration::Never);
    assert_eq!(expiration(&s(""), now()), Expiration::Never, "empty: never");
    assert_eq!(
        expiration(&s(&time_string(SignedDuration::from_secs(2))), now()),
        Expiration::In(Duration::from_secs(2))
    );
    assert_eq!(expiration(&s(&time_string(SignedDuration::ZERO)), now()), Expiration::Expired, "due now: expired");
    assert_eq!(expiration(&s("garbage"), now()), Expiration::Expired, "unparseable: expired");
    assert_eq!(expiration(&s("2026-01-02T04:04:05+01:00"), now()), Expiration::Expired, "an offset is honoured");
}

#[test]
fn expiration_takes_what_gos_rfc3339_layout_takes_and_nothing_more() {
    let s = |expiration: &str| with_expiration(token_secret(GIVEN_TOKEN_ID, GIVEN_TOKEN_SECRET), expiration);
    let second = Expiration::In(Duration::from_secs(1));
    for accepted in
        ["2026-01-02T03:04:06Z", "2026-01-02T04:04:06+01:00", "2026-01-02T03:04:06.000Z", "2026-01-02T03:04:06,0Z"]
    {
        assert_eq!(expiration(&s(accepted), now()), second, "{accepted}");
    }
    for refused in [
        "2026-01-02 03:04:06Z",
        "2026-01-02t03:04:06Z",
        "2026-01-02T03:04Z",
        "2026-01-02T03:04:06z",
        "2026-01-02T03:04:06+0100",
        "2026-01-02T03:04:06",
    ] {
        assert_eq!(expiration(&s(refused), now()), Expiration::Expired, "{refused}: unparseable, so expired");
    }
}
