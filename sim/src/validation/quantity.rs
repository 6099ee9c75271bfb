//! Resource quantities (`resource.Quantity`) as numbers, for the rules that
//! compare them: `2Gi` is 2 x 2^30, `500M` is 5 x 10^8, `1.5e3` is 1500,
//! `100m` is 0.1. Precision is an `f64`'s, which orders every quantity a
//! claim asks for; the canonical string form is not computed.

/// Binary suffixes and their powers of 1024.
const BINARY: [(&str, i32); 6] = [("Ki", 1), ("Mi", 2), ("Gi", 3), ("Ti", 4), ("Pi", 5), ("Ei", 6)];
/// Decimal suffixes and their powers of 10.
const DECIMAL: [(&str, i32); 9] =
    [("n", -9), ("u", -6), ("m", -3), ("k", 3), ("M", 6), ("G", 9), ("T", 12), ("P", 15), ("E", 18)];

/// The value of a quantity, or `None` when it does not parse.
pub(super) fn value(quantity: &str) -> Option<f64> {
    let split =
        quantity.find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | '+' | '-'))).unwrap_or(quantity.len());
    let (number, suffix) = quantity.split_at(split);
    let number: f64 = number.parse().ok()?;
    let scale = if suffix.is_empty() {
        1.0
    } else if let Some((_, power)) = BINARY.iter().find(|(s, _)| *s == suffix) {
        1024f64.powi(*power)
    } else if let Some((_, power)) = DECIMAL.iter().find(|(s, _)| *s == suffix) {
        10f64.powi(*power)
    } else {
        let exponent = suffix.strip_prefix(['e', 'E'])?;
        10f64.powi(exponent.parse().ok()?)
    };
    Some(number * scale)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suffixes_scale_the_number() {
        assert_eq!(value("2Gi"), Some(2.0 * 1024.0 * 1024.0 * 1024.0));
        assert_eq!(value("500M"), Some(5e8));
        assert_eq!(value("1.5e3"), Some(1500.0));
        assert_eq!(value("100m"), Some(0.1));
        assert_eq!(value("0"), Some(0.0));
        assert_eq!(value("-1"), Some(-1.0));
        assert_eq!(value("1Gb"), None);
        assert_eq!(value("lots"), None);
    }
}
