//! The five fields of a standard schedule, read as robfig/cron v3's
//! `ParseStandard` reads them (`parser.go`, `getField` and `getRange`),
//! with the value sets expanded by the `croner` crate.
//!
//! `croner` is a well-kept cron parser (Vixie semantics: day-of-month and
//! day-of-week OR'd when both are restricted, `?`, names, ranges, steps,
//! Sunday as 0), so it expands each field. Its grammar is wider than
//! robfig's and differs from it in places, so every field goes through
//! robfig's grammar here first, with robfig's error messages (they reach
//! users in `UnparseableSchedule` events), and croner is handed only a
//! canonical form both read alike (`start-end/step` elements, numbers
//! only). The differences, each with a test below:
//! - croner accepts `L`, `W`, `#` and a leading `+` (AND) in the day
//!   fields, and `7` for Sunday; robfig refuses them: refused here;
//! - croner replaces `MON`, `JAN`, ... anywhere in the pattern (so `JAN` in
//!   the day-of-week field is Monday, `MON` in the hour field 1); robfig
//!   knows month names in the month field and day names in the day-of-week
//!   field only, as whole tokens: names are resolved here, per field;
//! - croner takes `?` in the day fields only; robfig anywhere, as `*`;
//! - robfig reads `*-5` as `*` (what follows the `*` is ignored) and
//!   `5/15` as `5-59/15`; croner refuses the first and, unless its
//!   `sloppy_ranges` is on, the second: both are written out here;
//! - croner's `sloppy_ranges` reads `/15` as `*/15`; robfig refuses it;
//! - robfig takes a step of any size (`*/100` is the first value alone);
//!   croner's steps are `u16`: a step beyond the field's span is written
//!   as the span, which sets the same values;
//! - robfig treats a day field as unrestricted (its "star bit") when any
//!   element starts with `*` or `?` and has no step above 1 (`*/1`, `1,*`,
//!   `?`); croner only when the field is exactly `*` or `?`: the star is
//!   judged here.

use croner::parser::{CronParser, Seconds, Year};

/// A field's values as a bit set (bit `n` for value `n`), and whether it
/// counts as unrestricted (robfig's star bit).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Field {
    /// Bit `n` set when the field matches value `n`.
    pub(super) bits: u64,
    /// An element started with `*` or `?` with no step above 1.
    pub(super) star: bool,
}

/// A field's range of values and the names it knows (robfig's `bounds`).
struct Bounds {
    min: u64,
    max: u64,
    names: &'static [(&'static str, u64)],
}

const MINUTES: Bounds = Bounds { min: 0, max: 59, names: &[] };
const HOURS: Bounds = Bounds { min: 0, max: 23, names: &[] };
const DOM: Bounds = Bounds { min: 1, max: 31, names: &[] };
const MONTHS: Bounds = Bounds {
    min: 1,
    max: 12,
    names: &[
        ("jan", 1),
        ("feb", 2),
        ("mar", 3),
        ("apr", 4),
        ("may", 5),
        ("jun", 6),
        ("jul", 7),
        ("aug", 8),
        ("sep", 9),
        ("oct", 10),
        ("nov", 11),
        ("dec", 12),
    ],
};
const DOW: Bounds = Bounds {
    min: 0,
    max: 6,
    names: &[("sun", 0), ("mon", 1), ("tue", 2), ("wed", 3), ("thu", 4), ("fri", 5), ("sat", 6)],
};

/// The five fields of a standard spec (minute, hour, day of month, month,
/// day of week).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Fields {
    pub(super) minute: Field,
    pub(super) hour: Field,
    pub(super) dom: Field,
    pub(super) month: Field,
    pub(super) dow: Field,
}

/// One element of a field (`a`, `a-b`, `*`, with an optional `/step`),
/// checked against the field's bounds.
struct Element {
    start: u64,
    end: u64,
    step: u64,
    star: bool,
}

/// Reads the five whitespace-separated fields of `spec` (robfig
/// `normalizeFields` for the standard parser, then `getField` per field).
pub(super) fn parse(spec: &str) -> Result<Fields, String> {
    let fields: Vec<&str> = spec.split_whitespace().collect();
    if fields.len() != 5 {
        return Err(format!("expected exactly 5 fields, found {}: [{}]", fields.len(), fields.join(" ")));
    }
    let bounds = [&MINUTES, &HOURS, &DOM, &MONTHS, &DOW];
    let mut elements = Vec::with_capacity(5);
    for (field, bounds) in fields.iter().zip(bounds) {
        let parsed: Vec<Element> =
            field.split(',').filter(|e| !e.is_empty()).map(|e| element(e, bounds)).collect::<Result<_, _>>()?;
        elements.push(parsed);
    }
    let canonical: Vec<String> = elements.iter().zip(bounds).map(|(e, b)| canonical(e, b)).collect();
    let cron = CronParser::builder()
        .seconds(Seconds::Disallowed)
        .year(Year::Disallowed)
        .sloppy_ranges(true)
        .build()
        .parse(&canonical.join(" "))
        .map_err(|e| e.to_string())?;
    let pattern = &cron.pattern;
    let field = |index: usize, values: Vec<u16>| Field {
        // A field with no element (`,`) matches nothing; croner was given
        // `*` in its place.
        bits: if elements[index].is_empty() { 0 } else { values.iter().fold(0, |bits, v| bits | 1 << v) },
        star: elements[index].iter().any(|e| e.star),
    };
    Ok(Fields {
        minute: field(0, pattern.minutes.values()),
        hour: field(1, pattern.hours.values()),
        dom: field(2, pattern.days.values()),
        month: field(3, pattern.months.values()),
        dow: field(4, pattern.days_of_week.values()),
    })
}

/// The field as croner reads it alike: `start-end/step` elements.
fn canonical(elements: &[Element], bounds: &Bounds) -> String {
    if elements.is_empty() {
        return "*".to_owned();
    }
    let span = bounds.max - bounds.min + 1;
    let written: Vec<String> = elements.iter().map(|e| format!("{}-{}/{}", e.start, e.end, e.step.min(span))).collect();
    written.join(",")
}

/// robfig `getRange`: `number | number "-" number [ "/" number ]`, `*` or
/// `?` standing for the whole range.
fn element(expr: &str, bounds: &Bounds) -> Result<Element, String> {
    let range_and_step: Vec<&str> = expr.split('/').collect();
    let low_and_high: Vec<&str> = range_and_step[0].split('-').collect();
    let single = low_and_high.len() == 1;
    let (start, mut end, mut star) = if low_and_high[0] == "*" || low_and_high[0] == "?" {
        (bounds.min, bounds.max, true)
    } else {
        let start = int_or_name(low_and_high[0], bounds)?;
        let end = match low_and_high.len() {
            1 => start,
            2 => int_or_name(low_and_high[1], bounds)?,
            _ => return Err(format!("too many hyphens: {expr}")),
        };
        (start, end, false)
    };
    let step = match range_and_step.len() {
        1 => 1,
        2 => {
            let step = int(range_and_step[1])?;
            // "N/step" means "N-max/step".
            if single {
                end = bounds.max;
            }
            if step > 1 {
                star = false;
            }
            step
        }
        _ => return Err(format!("too many slashes: {expr}")),
    };
    if start < bounds.min {
        return Err(format!("beginning of range ({start}) below minimum ({}): {expr}", bounds.min));
    }
    if end > bounds.max {
        return Err(format!("end of range ({end}) above maximum ({}): {expr}", bounds.max));
    }
    if start > end {
        return Err(format!("beginning of range ({start}) beyond end of range ({end}): {expr}"));
    }
    if step == 0 {
        return Err(format!("step of range should be a positive number: {expr}"));
    }
    Ok(Element { start, end, step, star })
}

/// robfig `parseIntOrName`: a name of the field (any case), or a number.
fn int_or_name(expr: &str, bounds: &Bounds) -> Result<u64, String> {
    let lower = expr.to_lowercase();
    match bounds.names.iter().find(|(name, _)| *name == lower) {
        Some((_, value)) => Ok(*value),
        None => int(expr),
    }
}

/// robfig `mustParseInt`: Go's `strconv.Atoi`, refusing negatives.
fn int(expr: &str) -> Result<u64, String> {
    let digits = expr.strip_prefix(['+', '-']).unwrap_or(expr);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("failed to parse int from {expr}: strconv.Atoi: parsing {expr:?}: invalid syntax"));
    }
    let Ok(num) = expr.parse::<i64>() else {
        return Err(format!("failed to parse int from {expr}: strconv.Atoi: parsing {expr:?}: value out of range"));
    };
    u64::try_from(num).map_err(|_| format!("negative number ({num}) not allowed: {expr}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bits(values: &[u64]) -> u64 {
        values.iter().fold(0, |b, v| b | 1 << v)
    }

    /// Whether croner's own default parser accepts `spec`.
    fn croner_takes(spec: &str) -> bool {
        spec.parse::<croner::Cron>().is_ok()
    }

    fn field(spec: &str, index: usize) -> Field {
        let fields = parse(spec).unwrap_or_else(|e| panic!("{spec}: {e}"));
        [fields.minute, fields.hour, fields.dom, fields.month, fields.dow][index]
    }

    #[test]
    fn standard_syntax_expands_as_robfig() {
        // (spec, field index, values, star): robfig parser_test.go's TestRange
        // and TestField, in five-field form.
        let cases: &[(&str, usize, &[u64], bool)] = &[
            ("5 * * * *", 0, &[5], false),
            ("0,5,10 * * * *", 0, &[0, 5, 10], false),
            ("1-3 * * * *", 0, &[1, 2, 3], false),
            ("0-59/20 * * * *", 0, &[0, 20, 40], false),
            ("*/20 * * * *", 0, &[0, 20, 40], false),
            ("5/20 * * * *", 0, &[5, 25, 45], false),
            ("*/1 * * * *", 0, &(0..60).collect::<Vec<_>>(), true),
            ("* 9-17/4 * * *", 1, &[9, 13, 17], false),
            ("* * ? * *", 2, &(1..32).collect::<Vec<_>>(), true),
            ("* * * JAN-mar,Dec *", 3, &[1, 2, 3, 12], false),
            ("* * * * MON-FRI", 4, &[1, 2, 3, 4, 5], false),
            ("* * * * sun,sat", 4, &[0, 6], false),
            ("* * * * 1,*", 4, &[0, 1, 2, 3, 4, 5, 6], true),
            ("* * * * */2", 4, &[0, 2, 4, 6], false),
            ("* * 1,,15 * *", 2, &[1, 15], false),
            ("007 * * * *", 0, &[7], false),
        ];
        for (spec, index, values, star) in cases {
            assert_eq!(field(spec, *index), Field { bits: bits(values), star: *star }, "{spec}");
        }
    }

    #[test]
    fn robfig_errors_in_robfigs_words() {
        let cases = [
            ("* * * *", "expected exactly 5 fields, found 4: [* * * *]"),
            ("0 * * * * *", "expected exactly 5 fields, found 6: [0 * * * * *]"),
            ("60 * * * *", "end of range (60) above maximum (59): 60"),
            ("* * 0 * *", "beginning of range (0) below minimum (1): 0"),
            ("5-1 * * * *", "beginning of range (5) beyond end of range (1): 5-1"),
            ("*/0 * * * *", "step of range should be a positive number: */0"),
            ("1-2-3 * * * *", "too many hyphens: 1-2-3"),
            ("1/2/3 * * * *", "too many slashes: 1/2/3"),
            ("x * * * *", "failed to parse int from x: strconv.Atoi: parsing \"x\": invalid syntax"),
            ("*/-5 * * * *", "negative number (-5) not allowed: -5"),
        ];
        for (spec, message) in cases {
            assert_eq!(parse(spec).err().as_deref(), Some(message), "{spec}");
        }
    }

    // === where croner alone would differ from robfig ===

    #[test]
    fn croner_extensions_are_refused_as_robfig_refuses_them() {
        for spec in ["* * L * *", "* * 15W * *", "* * LW * *", "* * * * 5L", "* * * * 1#2", "* * * * +1"] {
            assert!(croner_takes(spec), "croner itself takes {spec}");
        }
        for spec in ["* * L * *", "* * 15W * *", "* * LW * *", "* * * * 5L", "* * * * 1#2"] {
            assert!(parse(spec).is_err(), "{spec} must be refused");
        }
        // A leading `+` is Go's Atoi sign, not croner's AND: Monday OR'd.
        let fields = parse("0 0 1 * +1").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((fields.dow.bits, fields.dow.star), (bits(&[1]), false));
    }

    #[test]
    fn sunday_is_0_only_as_robfig_v3() {
        assert!(croner_takes("* * * * 7"), "croner takes 7 for Sunday");
        assert_eq!(parse("* * * * 7").err().as_deref(), Some("end of range (7) above maximum (6): 7"));
        assert_eq!(parse("* * * * 5-7").err().as_deref(), Some("end of range (7) above maximum (6): 5-7"));
        assert_eq!(field("* * * * 0", 4).bits, bits(&[0]));
    }

    #[test]
    fn names_belong_to_their_field() {
        // croner would read MON in the hour field as 1, JAN in the
        // day-of-week field as Monday.
        assert!(croner_takes("* MON * * *"));
        assert!(parse("* MON * * *").is_err());
        assert!(parse("* * * * JAN").is_err());
        assert!(parse("* * * MON *").is_err());
        assert!(parse("* * * * MONDAY").is_err());
        assert!(parse("*/MON * * * *").is_err());
    }

    #[test]
    fn question_mark_is_a_star_in_every_field() {
        assert_eq!(field("? * * * *", 0), Field { bits: bits(&(0..60).collect::<Vec<_>>()), star: true });
        assert_eq!(field("* ? * * *", 1).bits, bits(&(0..24).collect::<Vec<_>>()));
    }

    #[test]
    fn robfig_quirks_are_kept() {
        // What follows a leading `*` is ignored; `N/step` runs to the max.
        assert_eq!(field("*-5 * * * *", 0), field("* * * * *", 0));
        assert_eq!(field("*-5/30 * * * *", 0), Field { bits: bits(&[0, 30]), star: false });
        assert_eq!(field("50/5 * * * *", 0).bits, bits(&[50, 55]));
        // `/15` is no `*/15`.
        assert!(parse("/15 * * * *").is_err());
        // Any step is a step: past the span, the first value alone.
        assert_eq!(field("*/100 * * * *", 0), Field { bits: bits(&[0]), star: false });
        assert_eq!(field("10/99999 * * * *", 0).bits, bits(&[10]));
        // A field of nothing but commas matches nothing.
        assert_eq!(field(", * * * *", 0).bits, 0);
    }

    #[test]
    fn the_day_star_is_robfigs() {
        // croner's star is the field being exactly `*`; robfig's any
        // element starting with `*` or `?` without a step above 1.
        assert!(field("* * */1 * *", 2).star);
        assert!(field("* * 1,? * *", 2).star);
        assert!(!field("* * */2 * *", 2).star);
        assert!(!field("* * 1-31 * *", 2).star);
    }
}
