//! Upstream's names in the paths of a document: operation ids
//! (kube-openapi's `ToValidOperationID`), tags, and the article before a
//! kind in descriptions.

/// `a `, `an ` or nothing (for plurals such as `Endpoints`) before a kind.
pub(super) fn article(kind: &str) -> &'static str {
    if kind.ends_with('s') && !kind.ends_with("ss") {
        ""
    } else if kind.starts_with(['A', 'E', 'I', 'O', 'U', 'a', 'e', 'i', 'o', 'u']) {
        "an "
    } else {
        "a "
    }
}

/// The group-version part of operation ids: `CoreV1`, `AppsV1`,
/// `CoordinationV1`, `StableExampleComV1`.
pub(super) fn operation_gv(group: &str, version: &str) -> String {
    let group = if group.is_empty() { "core" } else { group.trim_end_matches(".k8s.io") };
    format!("{}{}", to_operation_id(group, true), to_operation_id(version, true))
}

/// The operation tag: `core_v1`, `apps_v1`, `coordination_v1`.
pub(super) fn tag(group: &str, version: &str) -> String {
    let group = if group.is_empty() { "core" } else { group.trim_end_matches(".k8s.io") };
    format!("{}_{}", to_operation_id(group, false), to_operation_id(version, false))
}

/// kube-openapi's `ToValidOperationID`: drops characters other than letters,
/// `_` and (not leading) digits, capitalising the letter after each dropped
/// one.
pub(super) fn to_operation_id(s: &str, capitalize_first: bool) -> String {
    let mut out = String::with_capacity(s.len());
    let mut capitalize = capitalize_first;
    for (i, c) in s.chars().enumerate() {
        if c.is_alphabetic() || c == '_' || (i != 0 && c.is_ascii_digit()) {
            if capitalize {
                out.extend(c.to_uppercase());
                capitalize = false;
            } else {
                out.push(c);
            }
        } else {
            capitalize = true;
        }
    }
    out
}
