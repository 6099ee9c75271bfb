//! Booleans written in Go's syntax (`strconv.ParseBool`), as
//! kube-controller-manager's flags take them; durations are
//! `kcm_gotime::duration`'s. Which flag takes which is `flags.rs`'s
//! business.

/// Parses a boolean as Go's `strconv.ParseBool` (and so pflag) does.
///
/// # Errors
///
/// A message naming the input.
pub fn parse_go_bool(s: &str) -> Result<bool, String> {
    match s {
        "1" | "t" | "T" | "true" | "TRUE" | "True" => Ok(true),
        "0" | "f" | "F" | "false" | "FALSE" | "False" => Ok(false),
        _ => Err(format!("strconv.ParseBool: parsing {s:?}: invalid syntax")),
    }
}
