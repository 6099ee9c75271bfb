//! Name and value syntax, as in `k8s.io/apimachinery/pkg/util/validation`:
//! DNS labels and subdomains, qualified names, label values, percentages,
//! port names and ConfigMap keys, with upstream's messages.

/// Upstream `RegexError`: the message, examples and regular expression.
pub(super) fn regex_error(message: &str, regex: &str, examples: &[&str]) -> String {
    if examples.is_empty() {
        return format!("{message} (regex used for validation is '{regex}')");
    }
    let examples: Vec<String> = examples.iter().map(|e| format!("'{e}', ")).collect();
    format!("{message} (e.g. {}regex used for validation is '{regex}')", examples.join(" or "))
}

/// Upstream `MaxLenError`.
fn max_len_error(length: usize) -> String {
    format!("must be no more than {length} characters")
}

/// Whether `s` matches `[a-z0-9]([-a-z0-9]*[a-z0-9])?` (with `first` as the
/// class of the first character).
fn is_label_like(s: &str, first: fn(char) -> bool) -> bool {
    let bytes: Vec<char> = s.chars().collect();
    let (Some(&head), Some(&tail)) = (bytes.first(), bytes.last()) else {
        return false;
    };
    let lower_alnum = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    first(head) && lower_alnum(tail) && bytes.iter().all(|c| lower_alnum(*c) || *c == '-')
}

/// `IsDNS1123Label`.
pub(super) fn dns1123_label(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    if s.len() > 63 {
        out.push(max_len_error(63));
    }
    if !is_label_like(s, |c| c.is_ascii_lowercase() || c.is_ascii_digit()) {
        out.push(regex_error(
            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
            "[a-z0-9]([-a-z0-9]*[a-z0-9])?",
            &["my-name", "123-abc"],
        ));
    }
    out
}

/// `IsDNS1123Subdomain`.
pub(super) fn dns1123_subdomain(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    if s.len() > 253 {
        out.push(max_len_error(253));
    }
    if !s.split('.').all(|part| is_label_like(part, |c| c.is_ascii_lowercase() || c.is_ascii_digit())) {
        out.push(regex_error(
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
            r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*",
            &["example.com"],
        ));
    }
    out
}

/// `IsDNS1035Label`.
pub(super) fn dns1035_label(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    if s.len() > 63 {
        out.push(max_len_error(63));
    }
    if !is_label_like(s, |c| c.is_ascii_lowercase()) {
        out.push(regex_error(
            "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character",
            "[a-z]([-a-z0-9]*[a-z0-9])?",
            &["my-name", "abc-123"],
        ));
    }
    out
}

/// `IsValidPathSegmentName`: the names of RBAC objects (`system:controller:x`
/// is fine; a name is only refused where it would break a URL path).
pub(super) fn path_segment_name(s: &str) -> Vec<String> {
    match s {
        "." | ".." => vec![format!("may not be '{s}'")],
        _ => ["/", "%"].iter().filter(|bad| s.contains(**bad)).map(|bad| format!("may not contain '{bad}'")).collect(),
    }
}

/// Upstream `maskTrailingDash`: a generateName prefix may end in '-'.
pub(super) fn mask_trailing_dash(name: &str) -> String {
    match name.strip_suffix('-') {
        Some(rest) if !rest.is_empty() => format!("{rest}a"),
        _ => name.to_owned(),
    }
}

/// Whether `s` matches `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`.
fn is_qualified_name_part(s: &str) -> bool {
    let chars: Vec<char> = s.chars().collect();
    let (Some(&head), Some(&tail)) = (chars.first(), chars.last()) else {
        return false;
    };
    head.is_ascii_alphanumeric()
        && tail.is_ascii_alphanumeric()
        && chars.iter().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// The regex message of a qualified name part.
fn qualified_name_regex_error() -> String {
    regex_error(
        "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
        "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]",
        &["MyName", "my.name", "123-abc"],
    )
}

/// `IsQualifiedName`: an optional DNS subdomain prefix and '/', then a name.
pub(super) fn qualified_name(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let parts: Vec<&str> = s.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                out.push("prefix part must be non-empty".to_owned());
            } else {
                out.extend(dns1123_subdomain(prefix).into_iter().map(|m| format!("prefix part {m}")));
            }
            *name
        }
        _ => {
            out.push(format!(
                "a qualified name {} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                qualified_name_regex_error()
            ));
            return out;
        }
    };
    if name.is_empty() {
        out.push("name part must be non-empty".to_owned());
    } else if name.len() > 63 {
        out.push(format!("name part {}", max_len_error(63)));
    }
    if !is_qualified_name_part(name) {
        out.push(format!("name part {}", qualified_name_regex_error()));
    }
    out
}

/// `IsValidLabelValue`.
pub(super) fn label_value(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    if s.len() > 63 {
        out.push(max_len_error(63));
    }
    if !s.is_empty() && !is_qualified_name_part(s) {
        out.push(regex_error(
            "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
            "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?",
            &["MyValue", "my_value", "12345"],
        ));
    }
    out
}

/// `IsValidPercent`.
pub(super) fn percent_messages(s: &str) -> Vec<String> {
    let valid =
        s.strip_suffix('%').is_some_and(|digits| !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit()));
    if valid {
        return Vec::new();
    }
    vec![regex_error(
        "a valid percent string must be a numeric string followed by an ending '%'",
        "[0-9]+%",
        &["1%", "93%"],
    )]
}

/// `IsValidPortName`.
pub(super) fn port_name_messages(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    if s.len() > 15 {
        out.push(max_len_error(15));
    }
    if s.is_empty() || !s.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-') {
        out.push("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)".to_owned());
    }
    if !s.chars().any(|c| c.is_ascii_lowercase()) {
        out.push("must contain at least one letter (a-z)".to_owned());
    }
    if s.contains("--") {
        out.push("must not contain consecutive hyphens".to_owned());
    }
    if s.starts_with('-') || s.ends_with('-') {
        out.push("must not begin or end with a hyphen".to_owned());
    }
    out
}

/// `IsConfigMapKey`.
pub(super) fn config_map_key(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    if s.len() > 253 {
        out.push(max_len_error(253));
    }
    if s.is_empty() || !s.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_')) {
        out.push(regex_error(
            "a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
            "[-._a-zA-Z0-9]+",
            &["key.name", "KEY_NAME", "key-name"],
        ));
    }
    if s == "." {
        out.push("must not be '.'".to_owned());
    } else if s == ".." {
        out.push("must not be '..'".to_owned());
    } else if s.starts_with("..") {
        out.push("must not start with '..'".to_owned());
    }
    out
}
