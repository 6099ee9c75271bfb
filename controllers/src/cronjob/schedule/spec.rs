//! `next` of a five-field schedule, step for step as robfig/cron v3's
//! `SpecSchedule.Next` (`spec.go`) computes it with Go's `time` package,
//! so that kcm-rs fires when kube-controller-manager would, across
//! daylight-saving changes too:
//! - a wall time inside a spring-forward gap never matches (the hour is
//!   stepped over in absolute hours): `30 2 * * *` in `America/New_York`
//!   does not run on the day clocks jump from 2:00 to 3:00;
//! - a wall time inside a fall-back fold matches twice (once per offset);
//! - midnight that does not exist is corrected as robfig corrects it.
//!
//! Go's `time.Date` is reproduced too ([`go_date`]): it reads a wall time
//! with the offset found at that wall time read as UTC, then with the
//! offset in force at the instant that gives, which is how a wall time in
//! a gap or fold resolves in Go.

use jiff::civil::{Date, DateTime};
use jiff::tz::TimeZone;
use jiff::{SignedDuration, Span, Timestamp};

use super::fields::Fields;

/// Go's zero `time.Time` (0001-01-01 00:00:00 UTC): what `Next` answers
/// when nothing matches within five years.
pub const GO_ZERO: Timestamp = Timestamp::constant(-62_135_596_800, 0);

/// A five-field schedule and the zone its wall times are read in.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Spec {
    pub(super) fields: Fields,
    pub(super) location: TimeZone,
}

impl Spec {
    /// The first time after `t` (at least a second later, on a whole
    /// second) the schedule matches, or [`GO_ZERO`].
    pub(super) fn next(&self, t: Timestamp) -> Timestamp {
        let loc = &self.location;
        // The upcoming whole second.
        let mut t = add(t, SignedDuration::from_secs(1) - SignedDuration::from_nanos(i64::from(t.subsec_nanosecond())));
        let mut added = false;
        let year_limit = wall(t, loc).year() + 5;
        'wrap: loop {
            if wall(t, loc).year() > year_limit {
                return GO_ZERO;
            }
            while !bit(self.fields.month.bits, wall(t, loc).month()) {
                if !added {
                    added = true;
                    let w = wall(t, loc);
                    t = go_date(loc, i64::from(w.year()), i64::from(w.month()), 1, 0);
                }
                t = add_date(loc, t, 1, 0);
                if wall(t, loc).month() == 1 {
                    continue 'wrap;
                }
            }
            while !self.day_matches(wall(t, loc)) {
                if !added {
                    added = true;
                    let w = wall(t, loc);
                    t = go_date(loc, i64::from(w.year()), i64::from(w.month()), i64::from(w.day()), 0);
                }
                t = add_date(loc, t, 0, 1);
                // Midnight that does not exist: back or on to an hour 0.
                let hour = i64::from(wall(t, loc).hour());
                if hour != 0 {
                    let shift = if hour > 12 { 24 - hour } else { -hour };
                    t = add(t, SignedDuration::from_hours(shift));
                }
                if wall(t, loc).day() == 1 {
                    continue 'wrap;
                }
            }
            while !bit(self.fields.hour.bits, wall(t, loc).hour()) {
                if !added {
                    added = true;
                    let w = wall(t, loc);
                    t = go_date(
                        loc,
                        i64::from(w.year()),
                        i64::from(w.month()),
                        i64::from(w.day()),
                        i64::from(w.hour()) * 3600,
                    );
                }
                t = add(t, SignedDuration::from_hours(1));
                if wall(t, loc).hour() == 0 {
                    continue 'wrap;
                }
            }
            while !bit(self.fields.minute.bits, wall(t, loc).minute()) {
                if !added {
                    added = true;
                    t = truncate(t, 60);
                }
                t = add(t, SignedDuration::from_mins(1));
                if wall(t, loc).minute() == 0 {
                    continue 'wrap;
                }
            }
            // The standard parser's seconds field is `0`.
            while wall(t, loc).second() != 0 {
                if !added {
                    added = true;
                    t = truncate(t, 1);
                }
                t = add(t, SignedDuration::from_secs(1));
                if wall(t, loc).second() == 0 {
                    continue 'wrap;
                }
            }
            return t;
        }
    }

    /// robfig `dayMatches`: day of month and day of week OR'd, AND'd when
    /// either is unrestricted.
    fn day_matches(&self, w: DateTime) -> bool {
        let dom = bit(self.fields.dom.bits, w.day());
        let dow = bit(self.fields.dow.bits, w.weekday().to_sunday_zero_offset());
        if self.fields.dom.star || self.fields.dow.star { dom && dow } else { dom || dow }
    }
}

fn bit(bits: u64, value: i8) -> bool {
    u32::try_from(value).is_ok_and(|v| v < 64 && bits & (1 << v) != 0)
}

/// `t`'s wall clock in `loc`.
fn wall(t: Timestamp, loc: &TimeZone) -> DateTime {
    loc.to_datetime(t)
}

/// `t.Add(d)`, saturating at the ends of time (never reached by a
/// schedule, which stops five years on).
fn add(t: Timestamp, d: SignedDuration) -> Timestamp {
    t.checked_add(d).unwrap_or(if d.is_negative() { Timestamp::MIN } else { Timestamp::MAX })
}

/// `t.Truncate(unit seconds)`: down to a multiple of the unit since Go's
/// zero time, which is a whole minute.
fn truncate(t: Timestamp, unit: i64) -> Timestamp {
    Timestamp::new(t.as_second().div_euclid(unit) * unit, 0).unwrap_or(t)
}

/// `t.AddDate(0, months, days)` in `loc`: the wall clock moved, then
/// normalised and resolved as `time.Date` does.
fn add_date(loc: &TimeZone, t: Timestamp, months: i64, days: i64) -> Timestamp {
    let w = wall(t, loc);
    let day = i64::from(w.day()) + days;
    go_date(loc, i64::from(w.year()), i64::from(w.month()) + months, day, clock(w))
}

/// Seconds since midnight of a wall clock (nanoseconds are dropped: the
/// schedule's times are whole seconds).
fn clock(w: DateTime) -> i64 {
    i64::from(w.hour()) * 3600 + i64::from(w.minute()) * 60 + i64::from(w.second())
}

/// Go's `time.Date(year, month, day, 0, 0, seconds, 0, loc)`: month and day
/// normalised (month 13 is January of the next year, 31 April is 1 May),
/// then the wall time resolved with Go's offset lookup.
pub(super) fn go_date(loc: &TimeZone, year: i64, month: i64, day: i64, seconds: i64) -> Timestamp {
    let months = year * 12 + (month - 1);
    let (year, month) = (months.div_euclid(12), months.rem_euclid(12) + 1);
    let first = i16::try_from(year).ok().and_then(|y| Date::new(y, i8::try_from(month).ok()?, 1).ok());
    let Some(first) = first else { return GO_ZERO };
    let Ok(date) = first.checked_add(Span::new().days(day - 1)) else { return GO_ZERO };
    let as_utc = date.to_datetime(jiff::civil::Time::midnight()).to_zoned(TimeZone::UTC).map(|z| z.timestamp());
    let Ok(as_utc) = as_utc else { return GO_ZERO };
    let wall_seconds = as_utc.as_second() + seconds;
    let guess = loc.to_offset(Timestamp::new(wall_seconds, 0).unwrap_or(as_utc)).seconds();
    let utc = wall_seconds - i64::from(guess);
    let offset = loc.to_offset(Timestamp::new(utc, 0).unwrap_or(as_utc)).seconds();
    Timestamp::new(wall_seconds - i64::from(offset), 0).unwrap_or(GO_ZERO)
}
