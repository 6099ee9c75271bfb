//! An int-or-percent field (maxSurge, maxUnavailable) as a number of pods
//! (upstream `intstr.GetScaledValueFromIntOrPercent`), read by the
//! Deployment, DaemonSet and StatefulSet controllers.

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

/// An int-or-percent value that is neither an integer nor a percentage.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid value for IntOrString: {0}")]
pub struct InvalidIntOrPercent(String);

/// `value` as a number of pods out of `total` (upstream
/// `GetScaledValueFromIntOrPercent`): an integer as is, `"x%"` as x% of
/// `total` rounded up or down.
pub fn scaled_value(value: &IntOrString, total: i32, round_up: bool) -> Result<i32, InvalidIntOrPercent> {
    match value {
        IntOrString::Int(n) => Ok(*n),
        IntOrString::String(s) => {
            let percent = s
                .strip_suffix('%')
                .ok_or_else(|| InvalidIntOrPercent(format!("invalid type: string is not a percentage: {s:?}")))?
                .parse::<i64>()
                .map_err(|e| InvalidIntOrPercent(format!("invalid percentage {s:?}: {e}")))?;
            let product = percent * i64::from(total);
            let scaled = if round_up {
                product.div_euclid(100) + i64::from(product.rem_euclid(100) != 0)
            } else {
                product.div_euclid(100)
            };
            Ok(i32::try_from(scaled).unwrap_or(if scaled < 0 { i32::MIN } else { i32::MAX }))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pct(s: &str) -> IntOrString {
        IntOrString::String(s.into())
    }

    #[test]
    fn integers_as_is_percentages_rounded_as_asked() {
        assert_eq!(scaled_value(&IntOrString::Int(3), 10, true), Ok(3));
        assert_eq!(scaled_value(&pct("25%"), 10, true), Ok(3));
        assert_eq!(scaled_value(&pct("25%"), 10, false), Ok(2));
        assert_eq!(scaled_value(&pct("100%"), 5, false), Ok(5));
    }

    #[test]
    fn anything_else_is_an_error_in_upstreams_words() {
        let err = scaled_value(&pct("5"), 10, true).unwrap_err();
        assert_eq!(err.to_string(), "invalid value for IntOrString: invalid type: string is not a percentage: \"5\"");
        assert!(scaled_value(&pct("x%"), 10, true).is_err());
    }
}
