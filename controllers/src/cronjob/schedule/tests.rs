//! The calendar: robfig/cron's `spec_test.go` tables (`TestActivation`,
//! `TestNext` in five-field form, `TestNextWithTz`, `TestErrors`,
//! `TestSlash0NoHang`), then month ends, leap years, daylight-saving
//! changes in other zones and the descriptors.

use jiff::tz::{self, Offset, TimeZone};
use jiff::{SignedDuration, Timestamp};

use super::*;

fn at(text: &str) -> Timestamp {
    text.parse().unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn zone(name: &str) -> TimeZone {
    tz::db().get(name).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn parse(spec: &str, local: &TimeZone) -> Schedule {
    parse_standard(spec, local, tz::db()).unwrap_or_else(|e| panic!("{spec}: {e}"))
}

/// `Next` of `spec` from `from`, `None` for Go's zero time.
fn next_in(spec: &str, local: &TimeZone, from: &str) -> Option<Timestamp> {
    let next = parse(spec, local).next(at(from));
    (next != GO_ZERO).then_some(next)
}

fn next(spec: &str, from: &str) -> Option<Timestamp> {
    next_in(spec, &TimeZone::UTC, from)
}

#[test]
fn activation() {
    // robfig TestActivation (local time UTC): does `spec` fire at `time`?
    let cases = [
        ("2012-07-09T15:00:00Z", "0/15 * * * *", true),
        ("2012-07-09T15:45:00Z", "0/15 * * * *", true),
        ("2012-07-09T15:40:00Z", "0/15 * * * *", false),
        ("2012-07-09T15:05:00Z", "5/15 * * * *", true),
        ("2012-07-09T15:20:00Z", "5/15 * * * *", true),
        ("2012-07-09T15:50:00Z", "5/15 * * * *", true),
        ("2012-07-15T15:00:00Z", "0/15 * * Jul *", true),
        ("2012-07-15T15:00:00Z", "0/15 * * Jun *", false),
        ("2012-07-15T08:30:00Z", "30 08 ? Jul Sun", true),
        ("2012-07-15T08:30:00Z", "30 08 15 Jul ?", true),
        ("2012-07-16T08:30:00Z", "30 08 ? Jul Sun", false),
        ("2012-07-16T08:30:00Z", "30 08 15 Jul ?", false),
        ("2012-07-09T15:00:00Z", "@hourly", true),
        ("2012-07-09T15:04:00Z", "@hourly", false),
        ("2012-07-09T15:00:00Z", "@daily", false),
        ("2012-07-09T00:00:00Z", "@daily", true),
        ("2012-07-09T00:00:00Z", "@weekly", false),
        ("2012-07-08T00:00:00Z", "@weekly", true),
        ("2012-07-08T01:00:00Z", "@weekly", false),
        ("2012-07-08T00:00:00Z", "@monthly", false),
        ("2012-07-01T00:00:00Z", "@monthly", true),
        // Both day fields restricted: either matches.
        ("2012-07-15T00:00:00Z", "* * 1,15 * Sun", true),
        ("2012-06-15T00:00:00Z", "* * 1,15 * Sun", true),
        ("2012-08-01T00:00:00Z", "* * 1,15 * Sun", true),
        ("2012-07-15T00:00:00Z", "* * */10 * Sun", true),
        // One unrestricted: both must.
        ("2012-07-15T00:00:00Z", "* * * * Mon", false),
        ("2012-07-09T00:00:00Z", "* * 1,15 * *", false),
        ("2012-07-15T00:00:00Z", "* * 1,15 * *", true),
        ("2012-07-15T00:00:00Z", "* * */2 * Sun", true),
    ];
    for (time, spec, fires) in cases {
        let from = at(time) - SignedDuration::from_secs(1);
        let fired = parse(spec, &TimeZone::UTC).next(from) == at(time);
        assert_eq!(fired, fires, "{spec} at {time}");
    }
}

#[test]
fn next_as_robfig() {
    // robfig TestNext, the cases whose seconds field is 0, in five-field
    // form; `local` is the zone of a schedule naming none.
    let ny = zone("America/New_York");
    let utc = TimeZone::UTC;
    let cases: &[(&TimeZone, &str, &str, Option<&str>)] = &[
        (&utc, "2012-07-09T14:45:00Z", "0/15 * * * *", Some("2012-07-09T15:00:00Z")),
        (&utc, "2012-07-09T14:59:00Z", "0/15 * * * *", Some("2012-07-09T15:00:00Z")),
        (&utc, "2012-07-09T14:59:59Z", "0/15 * * * *", Some("2012-07-09T15:00:00Z")),
        (&utc, "2012-07-09T15:45:00Z", "20-35/15 * * * *", Some("2012-07-09T16:20:00Z")),
        (&utc, "2012-07-09T23:46:00Z", "*/15 * * * *", Some("2012-07-10T00:00:00Z")),
        (&utc, "2012-07-09T23:45:00Z", "20-35/15 * * * *", Some("2012-07-10T00:20:00Z")),
        (&utc, "2012-07-09T23:35:00Z", "0 0 9 Apr-Oct ?", Some("2012-08-09T00:00:00Z")),
        (&utc, "2012-07-09T23:35:00Z", "0 0 */5 Apr,Aug,Oct Mon", Some("2012-08-01T00:00:00Z")),
        (&utc, "2012-07-09T23:35:00Z", "0 0 */5 Oct Mon", Some("2012-10-01T00:00:00Z")),
        (&utc, "2012-07-09T23:35:00Z", "0 0 * Feb Mon", Some("2013-02-04T00:00:00Z")),
        (&utc, "2012-07-09T23:35:00Z", "0 0 * Feb Mon/2", Some("2013-02-01T00:00:00Z")),
        (&utc, "2012-12-31T23:59:45Z", "* * * * *", Some("2013-01-01T00:00:00Z")),
        // Leap year.
        (&utc, "2012-07-09T23:35:00Z", "0 0 29 Feb ?", Some("2016-02-29T00:00:00Z")),
        // 2am EST (-5) -> 3am EDT (-4).
        (&utc, "2012-03-11T00:00:00-05:00", "TZ=America/New_York 30 2 11 Mar ?", Some("2013-03-11T02:30:00-04:00")),
        (&utc, "2012-03-11T00:00:00-05:00", "TZ=America/New_York 0 * * * ?", Some("2012-03-11T01:00:00-05:00")),
        (&utc, "2012-03-11T01:00:00-05:00", "TZ=America/New_York 0 * * * ?", Some("2012-03-11T03:00:00-04:00")),
        (&utc, "2012-03-11T03:00:00-04:00", "TZ=America/New_York 0 * * * ?", Some("2012-03-11T04:00:00-04:00")),
        (&utc, "2012-03-11T04:00:00-04:00", "TZ=America/New_York 0 * * * ?", Some("2012-03-11T05:00:00-04:00")),
        (&utc, "2012-03-11T00:00:00-05:00", "CRON_TZ=America/New_York 0 * * * ?", Some("2012-03-11T01:00:00-05:00")),
        (&utc, "2012-03-11T01:00:00-05:00", "CRON_TZ=America/New_York 0 * * * ?", Some("2012-03-11T03:00:00-04:00")),
        (&utc, "2012-03-11T00:00:00-05:00", "TZ=America/New_York 0 1 * * ?", Some("2012-03-11T01:00:00-05:00")),
        (&utc, "2012-03-11T01:00:00-05:00", "TZ=America/New_York 0 1 * * ?", Some("2012-03-12T01:00:00-04:00")),
        // 2am nightly is skipped on the day of the gap.
        (&utc, "2012-03-11T00:00:00-05:00", "TZ=America/New_York 0 2 * * ?", Some("2012-03-12T02:00:00-04:00")),
        // 2am EDT (-4) -> 1am EST (-5).
        (&utc, "2012-11-04T00:00:00-04:00", "TZ=America/New_York 30 2 04 Nov ?", Some("2012-11-04T02:30:00-05:00")),
        (&utc, "2012-11-04T01:45:00-04:00", "TZ=America/New_York 30 1 04 Nov ?", Some("2012-11-04T01:30:00-05:00")),
        (&utc, "2012-11-04T00:00:00-04:00", "TZ=America/New_York 0 * * * ?", Some("2012-11-04T01:00:00-04:00")),
        (&utc, "2012-11-04T01:00:00-04:00", "TZ=America/New_York 0 * * * ?", Some("2012-11-04T01:00:00-05:00")),
        (&utc, "2012-11-04T01:00:00-05:00", "TZ=America/New_York 0 * * * ?", Some("2012-11-04T02:00:00-05:00")),
        // 1am nightly runs twice on the day of the fold.
        (&utc, "2012-11-04T00:00:00-04:00", "TZ=America/New_York 0 1 * * ?", Some("2012-11-04T01:00:00-04:00")),
        (&utc, "2012-11-04T01:00:00-04:00", "TZ=America/New_York 0 1 * * ?", Some("2012-11-04T01:00:00-05:00")),
        (&utc, "2012-11-04T01:00:00-05:00", "TZ=America/New_York 0 1 * * ?", Some("2012-11-05T01:00:00-05:00")),
        (&utc, "2012-11-04T00:00:00-04:00", "TZ=America/New_York 0 2 * * ?", Some("2012-11-04T02:00:00-05:00")),
        (&utc, "2012-11-04T02:00:00-05:00", "TZ=America/New_York 0 2 * * ?", Some("2012-11-05T02:00:00-05:00")),
        (&utc, "2012-11-04T00:00:00-04:00", "TZ=America/New_York 0 3 * * ?", Some("2012-11-04T03:00:00-05:00")),
        (&utc, "2012-11-04T03:00:00-05:00", "TZ=America/New_York 0 3 * * ?", Some("2012-11-05T03:00:00-05:00")),
        // The same, the zone being the local one.
        (&ny, "2012-11-04T00:00:00-04:00", "0 * * * ?", Some("2012-11-04T01:00:00-04:00")),
        (&ny, "2012-11-04T01:00:00-04:00", "0 * * * ?", Some("2012-11-04T01:00:00-05:00")),
        (&ny, "2012-11-04T01:00:00-05:00", "0 * * * ?", Some("2012-11-04T02:00:00-05:00")),
        (&ny, "2012-11-04T00:00:00-04:00", "0 1 * * ?", Some("2012-11-04T01:00:00-04:00")),
        (&ny, "2012-11-04T01:00:00-04:00", "0 1 * * ?", Some("2012-11-04T01:00:00-05:00")),
        (&ny, "2012-11-04T01:00:00-05:00", "0 1 * * ?", Some("2012-11-05T01:00:00-05:00")),
        (&ny, "2012-11-04T00:00:00-04:00", "0 2 * * ?", Some("2012-11-04T02:00:00-05:00")),
        (&ny, "2012-11-04T02:00:00-05:00", "0 2 * * ?", Some("2012-11-05T02:00:00-05:00")),
        (&ny, "2012-11-04T00:00:00-04:00", "0 3 * * ?", Some("2012-11-04T03:00:00-05:00")),
        (&ny, "2012-11-04T03:00:00-05:00", "0 3 * * ?", Some("2012-11-05T03:00:00-05:00")),
        // Unsatisfiable.
        (&utc, "2012-07-09T23:35:00Z", "0 0 30 Feb ?", None),
        (&utc, "2012-07-09T23:35:00Z", "0 0 31 Apr ?", None),
        // Monthly.
        (&ny, "2012-11-04T00:00:00-04:00", "0 3 3 * ?", Some("2012-12-03T03:00:00-05:00")),
        // Midnight that does not exist (robfig issue 157).
        (&utc, "2018-10-17T05:00:00-04:00", "TZ=America/Sao_Paulo 0 9 10 * ?", Some("2018-11-10T06:00:00-05:00")),
        (&utc, "2018-02-14T05:00:00-05:00", "TZ=America/Sao_Paulo 0 9 22 * ?", Some("2018-02-22T07:00:00-05:00")),
    ];
    for (local, from, spec, expected) in cases {
        assert_eq!(next_in(spec, local, from), expected.map(at), "{spec} from {from}");
    }
}

#[test]
fn next_with_a_fixed_local_offset() {
    // robfig TestNextWithTz: the local zone is +05:30.
    let local = TimeZone::fixed(Offset::from_seconds(5 * 3600 + 30 * 60).unwrap_or(Offset::UTC));
    let cases = [
        ("2016-01-03T13:09:03+05:30", "14 14 * * *", "2016-01-03T14:14:00+05:30"),
        ("2016-01-03T04:09:03+05:30", "14 14 * * ?", "2016-01-03T14:14:00+05:30"),
        ("2016-01-03T14:09:03+05:30", "14 14 * * *", "2016-01-03T14:14:00+05:30"),
        ("2016-01-03T14:00:00+05:30", "14 14 * * ?", "2016-01-03T14:14:00+05:30"),
    ];
    for (from, spec, expected) in cases {
        assert_eq!(next_in(spec, &local, from), Some(at(expected)), "{spec} from {from}");
    }
}

#[test]
fn errors() {
    // robfig TestErrors and TestSlash0NoHang.
    for spec in ["xyz", "60 0 * * *", "0 60 * * *", "0 0 * * XYZ", "TZ=America/New_York 15/0 * * * *", ""] {
        assert!(parse_standard(spec, &TimeZone::UTC, tz::db()).is_err(), "{spec}");
    }
}

#[test]
fn month_ends_and_leap_years() {
    let cases = [
        // The 31st: months without one are skipped.
        ("0 0 31 * *", "2023-04-01T00:00:00Z", Some("2023-05-31T00:00:00Z")),
        ("0 0 31 * *", "2023-05-31T00:00:00Z", Some("2023-07-31T00:00:00Z")),
        ("0 0 30 * *", "2023-01-31T00:00:00Z", Some("2023-03-30T00:00:00Z")),
        // February 29: leap years only, and 2100 is none.
        ("0 0 29 2 *", "2023-03-01T00:00:00Z", Some("2024-02-29T00:00:00Z")),
        ("0 0 29 2 *", "2024-02-29T00:00:00Z", Some("2028-02-29T00:00:00Z")),
        ("0 0 29 2 *", "2096-03-01T00:00:00Z", None),
        // OR'd with a weekday, February 29 or any Monday of February.
        ("0 0 29 2 MON", "2023-02-06T00:00:00Z", Some("2023-02-13T00:00:00Z")),
        // The last minute of a year.
        ("59 23 31 12 *", "2023-12-31T23:59:00Z", Some("2024-12-31T23:59:00Z")),
        ("@yearly", "2023-12-31T23:59:59Z", Some("2024-01-01T00:00:00Z")),
        ("@annually", "2024-01-01T00:00:00Z", Some("2025-01-01T00:00:00Z")),
        ("@monthly", "2024-01-31T12:00:00Z", Some("2024-02-01T00:00:00Z")),
        ("@weekly", "2024-03-06T12:00:00Z", Some("2024-03-10T00:00:00Z")),
        ("@midnight", "2024-02-28T12:00:00Z", Some("2024-02-29T00:00:00Z")),
        ("@hourly", "2024-02-28T23:00:00Z", Some("2024-02-29T00:00:00Z")),
    ];
    for (spec, from, expected) in cases {
        assert_eq!(next(spec, from), expected.map(at), "{spec} from {from}");
    }
}

#[test]
fn daylight_saving_in_other_zones() {
    let cases = [
        // Europe/Berlin springs forward 2:00 -> 3:00 on 2024-03-31: 2:30
        // does not exist that day.
        ("TZ=Europe/Berlin 30 2 * * *", "2024-03-30T03:00:00+01:00", "2024-04-01T02:30:00+02:00"),
        // And falls back 3:00 -> 2:00 on 2024-10-27: 2:30 runs twice.
        ("TZ=Europe/Berlin 30 2 * * *", "2024-10-27T00:00:00+02:00", "2024-10-27T02:30:00+02:00"),
        ("TZ=Europe/Berlin 30 2 * * *", "2024-10-27T02:30:00+02:00", "2024-10-27T02:30:00+01:00"),
        ("TZ=Europe/Berlin 30 2 * * *", "2024-10-27T02:30:00+01:00", "2024-10-28T02:30:00+01:00"),
        // Every 15 minutes across the gap: 1:45 then 3:00.
        ("TZ=Europe/Berlin */15 * * * *", "2024-03-31T01:45:00+01:00", "2024-03-31T03:00:00+02:00"),
        // Australia/Lord_Howe moves by half an hour (2:00 -> 2:30).
        ("TZ=Australia/Lord_Howe 15 2 * * *", "2024-10-05T12:00:00+10:30", "2024-10-07T02:15:00+11:00"),
        // Midnight in a zone whose DST starts at midnight (America/Santiago,
        // 2024-09-08 00:00 -> 01:00): robfig steps hours from noon, never
        // sees an hour 0 that day, and the daily job skips it.
        ("TZ=America/Santiago 0 0 * * *", "2024-09-07T12:00:00-04:00", "2024-09-09T00:00:00-03:00"),
    ];
    for (spec, from, expected) in cases {
        assert_eq!(next(spec, from), Some(at(expected)), "{spec} from {from}");
    }
}

#[test]
fn every() {
    let cases = [
        ("@every 1h", "2024-01-01T00:00:10.5Z", "2024-01-01T01:00:10Z"),
        ("@every 90m", "2024-01-01T00:00:00Z", "2024-01-01T01:30:00Z"),
        ("@every 1.5s", "2024-01-01T00:00:00Z", "2024-01-01T00:00:01Z"),
        ("@every 100ms", "2024-01-01T00:00:00Z", "2024-01-01T00:00:01Z"),
        ("@every -1h", "2024-01-01T00:00:00Z", "2024-01-01T00:00:01Z"),
    ];
    for (spec, from, expected) in cases {
        assert_eq!(next(spec, from), Some(at(expected)), "{spec} from {from}");
    }
    assert_eq!(
        parse_standard("@every 1x", &TimeZone::UTC, tz::db()).err().as_deref(),
        Some("failed to parse duration @every 1x: time: unknown unit \"x\" in duration \"1x\"")
    );
}

#[test]
fn descriptors_are_spelled_exactly() {
    for spec in ["@YEARLY", "@Daily", "@reboot", "@daily ", "@every"] {
        assert!(parse_standard(spec, &TimeZone::UTC, tz::db()).is_err(), "{spec}");
    }
}

#[test]
fn time_zone_prefixes() {
    let ny = zone("America/New_York");
    assert_eq!(parse("TZ=America/New_York 0 * * * *", &TimeZone::UTC), parse("0 * * * *", &ny));
    assert_eq!(parse("TZ=Local 0 * * * *", &ny), parse("0 * * * *", &ny));
    assert_eq!(parse("TZ=UTC @daily", &ny), parse("@daily", &TimeZone::UTC));
    assert_eq!(
        parse_standard("TZ=Mars/Olympus 0 * * * *", &TimeZone::UTC, tz::db()).err().as_deref(),
        Some("provided bad location Mars/Olympus: unknown time zone Mars/Olympus")
    );
    assert!(parse_standard("TZ=America/New_York", &TimeZone::UTC, tz::db()).is_err());
}

#[test]
fn locations_load_as_go_loads_them() {
    let local = zone("Asia/Tokyo");
    assert_eq!(load_location("", &local, tz::db()), Ok(TimeZone::UTC));
    assert_eq!(load_location("UTC", &local, tz::db()), Ok(TimeZone::UTC));
    assert_eq!(load_location("Local", &local, tz::db()), Ok(local.clone()));
    assert_eq!(load_location("Europe/Rome", &local, tz::db()), Ok(zone("Europe/Rome")));
    assert_eq!(load_location("../etc/passwd", &local, tz::db()), Err("time: invalid location name".to_owned()));
    assert_eq!(load_location("/etc/localtime", &local, tz::db()), Err("time: invalid location name".to_owned()));
    // Go reads file names: the case counts.
    assert_eq!(load_location("europe/rome", &local, tz::db()), Err("unknown time zone europe/rome".to_owned()));
    assert_eq!(load_location("bad timezone", &local, tz::db()), Err("unknown time zone bad timezone".to_owned()));
}

#[test]
fn the_bundled_database_knows_the_zones() {
    // The image has no /usr/share/zoneinfo: the compiled-in copy answers.
    let bundled = jiff::tz::TimeZoneDatabase::bundled();
    for name in ["America/New_York", "Europe/Rome", "Asia/Kolkata", "Australia/Lord_Howe", "Etc/UTC"] {
        assert!(load_location(name, &TimeZone::UTC, &bundled).is_ok(), "{name}");
    }
}
