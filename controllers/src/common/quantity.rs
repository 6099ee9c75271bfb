//! Storage quantities as whole bytes, rounded up as upstream's
//! `Quantity.Value()` rounds them: `1Gi` and `1073741824` are equal, `1.5Ki`
//! is 1536, `100m` is 1. Exact for every size a volume can have (an `i128`
//! holds exabytes times the largest mantissa a quantity may carry).

/// Binary suffixes and their powers of 1024.
const BINARY: [(&str, u32); 6] = [("Ki", 1), ("Mi", 2), ("Gi", 3), ("Ti", 4), ("Pi", 5), ("Ei", 6)];
/// Decimal suffixes and their powers of 10.
const DECIMAL: [(&str, i32); 9] =
    [("n", -9), ("u", -6), ("m", -3), ("k", 3), ("M", 6), ("G", 9), ("T", 12), ("P", 15), ("E", 18)];

/// The quantity in bytes, rounded up; `None` when it does not parse.
pub fn value(quantity: &str) -> Option<i128> {
    let split =
        quantity.find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | '+' | '-'))).unwrap_or(quantity.len());
    let (number, suffix) = quantity.split_at(split);
    let (negative, number) = match number.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, number.strip_prefix('+').unwrap_or(number)),
    };
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    if whole.is_empty() && fraction.is_empty() || !(whole.chars().chain(fraction.chars())).all(|c| c.is_ascii_digit()) {
        return None;
    }
    let digits: i128 = format!("{whole}{fraction}").parse().ok()?;
    let mut exponent = -i32::try_from(fraction.len()).ok()?;
    let mut factor: i128 = 1;
    if let Some((_, power)) = BINARY.iter().find(|(s, _)| *s == suffix) {
        factor = 1024i128.checked_pow(*power)?;
    } else if let Some((_, power)) = DECIMAL.iter().find(|(s, _)| *s == suffix) {
        exponent += power;
    } else if !suffix.is_empty() {
        exponent += suffix.strip_prefix(['e', 'E'])?.parse::<i32>().ok()?;
    }
    let scaled = digits.checked_mul(factor)?;
    let magnitude = if exponent >= 0 {
        scaled.checked_mul(10i128.checked_pow(exponent.unsigned_abs())?)?
    } else {
        let divisor = 10i128.checked_pow(exponent.unsigned_abs())?;
        (scaled + divisor - 1) / divisor
    };
    Some(if negative { -magnitude } else { magnitude })
}

#[cfg(test)]
mod tests {
    use super::value;

    #[test]
    fn suffixes_scale_to_whole_bytes_rounded_up() {
        assert_eq!(value("1Gi"), Some(1 << 30));
        assert_eq!(value("1073741824"), Some(1 << 30));
        assert_eq!(value("10G"), Some(10_000_000_000));
        assert_eq!(value("1.5Ki"), Some(1536));
        assert_eq!(value("100m"), Some(1));
        assert_eq!(value("1e3"), Some(1000));
        assert_eq!(value("2E"), Some(2_000_000_000_000_000_000));
        assert_eq!(value("0"), Some(0));
        assert_eq!(value("1Gb"), None);
        assert_eq!(value("."), None);
        assert_eq!(value("lots"), None);
    }
}
