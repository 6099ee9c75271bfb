//! Durations written in Go's syntax (`time.ParseDuration`,
//! `time.Duration.String()`), as kube-controller-manager's flags and
//! kube-sim's annotations take them.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

/// A duration written in Go's syntax (`300ms`, `15s`, `1m0s`, `1h30m`,
/// `12h0m0s`); displays as Go's `time.Duration.String()` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct GoDuration(pub Duration);

impl FromStr for GoDuration {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse_go_duration(s).map(GoDuration)
    }
}

impl fmt::Display for GoDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&format_go_duration(self.0))
    }
}

/// Parses a duration as Go's `time.ParseDuration` does: a sequence of
/// decimal numbers, each with an optional fraction and a unit suffix (`ns`,
/// `us`/`µs`, `ms`, `s`, `m`, `h`); `0` alone needs no unit. Negative
/// durations are refused (no kcm flag means anything by them).
///
/// # Errors
///
/// A message naming the input, in Go's words where Go has some.
pub fn parse_go_duration(input: &str) -> Result<Duration, String> {
    let invalid = || format!("time: invalid duration {input:?}");
    let mut s = input;
    if let Some(rest) = s.strip_prefix('+') {
        s = rest;
    } else if let Some(rest) = s.strip_prefix('-') {
        if rest == "0" {
            return Ok(Duration::ZERO);
        }
        return Err(format!("invalid duration {input:?}: must not be negative"));
    }
    if s == "0" {
        return Ok(Duration::ZERO);
    }
    if s.is_empty() {
        return Err(invalid());
    }
    let mut total: u128 = 0;
    while !s.is_empty() {
        let int_len = s.bytes().take_while(u8::is_ascii_digit).count();
        let (int_part, rest) = s.split_at(int_len);
        let (frac_part, rest) = match rest.strip_prefix('.') {
            Some(after) => {
                let n = after.bytes().take_while(u8::is_ascii_digit).count();
                after.split_at(n)
            }
            None => ("", rest),
        };
        if int_part.is_empty() && frac_part.is_empty() {
            return Err(invalid());
        }
        let unit_len = rest.find(|c: char| c.is_ascii_digit() || c == '.').unwrap_or(rest.len());
        let (unit, rest) = rest.split_at(unit_len);
        let nanos_per_unit: u128 = match unit {
            "ns" => 1,
            "us" | "\u{b5}s" | "\u{3bc}s" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            "" => return Err(format!("time: missing unit in duration {input:?}")),
            _ => return Err(format!("time: unknown unit {unit:?} in duration {input:?}")),
        };
        let whole: u128 = if int_part.is_empty() { 0 } else { int_part.parse().map_err(|_| invalid())? };
        let mut value = whole.checked_mul(nanos_per_unit).ok_or_else(invalid)?;
        // Fraction: digits beyond nanosecond precision are dropped, as Go does.
        let mut scale = nanos_per_unit;
        for digit in frac_part.bytes() {
            scale /= 10;
            if scale == 0 {
                break;
            }
            value += u128::from(digit - b'0') * scale;
        }
        total = total.checked_add(value).ok_or_else(invalid)?;
        s = rest;
    }
    // Go's Duration is an int64 of nanoseconds.
    if total > i64::MAX as u128 {
        return Err(invalid());
    }
    let secs = u64::try_from(total / 1_000_000_000).map_err(|_| invalid())?;
    let nanos = u32::try_from(total % 1_000_000_000).map_err(|_| invalid())?;
    Ok(Duration::new(secs, nanos))
}

/// Formats a duration as Go's `time.Duration.String()`: `0s`, `1.5µs`,
/// `300ms`, `15s`, `1m0s`, `12h0m0s`.
pub fn format_go_duration(d: Duration) -> String {
    fn trim(frac: u128, width: usize) -> String {
        let s = format!("{frac:0width$}");
        let s = s.trim_end_matches('0');
        if s.is_empty() { String::new() } else { format!(".{s}") }
    }
    let nanos = d.as_nanos();
    if nanos == 0 {
        return "0s".to_owned();
    }
    if nanos < 1_000 {
        return format!("{nanos}ns");
    }
    if nanos < 1_000_000 {
        return format!("{}{}\u{b5}s", nanos / 1_000, trim(nanos % 1_000, 3));
    }
    if nanos < 1_000_000_000 {
        return format!("{}{}ms", nanos / 1_000_000, trim(nanos % 1_000_000, 6));
    }
    let secs = nanos / 1_000_000_000;
    let frac = trim(nanos % 1_000_000_000, 9);
    let (h, m, s) = (secs / 3600, (secs % 3600) / 60, secs % 60);
    match (h, m) {
        (0, 0) => format!("{s}{frac}s"),
        (0, _) => format!("{m}m{s}{frac}s"),
        _ => format!("{h}h{m}m{s}{frac}s"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_spellings_parse_and_print_back() {
        for (text, want, printed) in [
            ("500ms", Duration::from_millis(500), "500ms"),
            ("1m30s", Duration::from_secs(90), "1m30s"),
            ("2h", Duration::from_secs(7200), "2h0m0s"),
            ("1.5h", Duration::from_secs(5400), "1h30m0s"),
        ] {
            assert_eq!(parse_go_duration(text), Ok(want), "{text}");
            assert_eq!(GoDuration(want).to_string(), printed);
        }
        assert_eq!(parse_go_duration("1m").map(GoDuration), "1m".parse::<GoDuration>());
        for bad in ["soon", "", "5", "-3s"] {
            assert!(parse_go_duration(bad).is_err(), "{bad:?}");
        }
    }
}
