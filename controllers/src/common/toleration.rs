//! Whether a toleration tolerates a taint, as the API defines it
//! (`v1.Toleration.ToleratesTaint`): read by taint-based eviction and by the
//! DaemonSet controller's placement.

use k8s_openapi::api::core::v1::Taint;
use kcm_objects::Toleration;

/// Whether `toleration` tolerates `taint` (`v1.Toleration.ToleratesTaint`):
/// an empty effect matches every effect, an empty key every key (only
/// meaningful with `Exists`); `Exists` ignores the value, `Equal` (the
/// default) compares it. Unknown operators tolerate nothing.
pub fn tolerates(toleration: &Toleration, taint: &Taint) -> bool {
    let effect = toleration.effect.as_deref().unwrap_or("");
    if !effect.is_empty() && effect != taint.effect {
        return false;
    }
    let key = toleration.key.as_deref().unwrap_or("");
    if !key.is_empty() && key != taint.key {
        return false;
    }
    match toleration.operator.as_deref().unwrap_or("") {
        "Exists" => true,
        "Equal" | "" => toleration.value.as_deref().unwrap_or("") == taint.value.as_deref().unwrap_or(""),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tolerations_match_as_the_api_defines() {
        let t = Taint { key: "k".into(), value: Some("v".into()), effect: "NoExecute".into(), time_added: None };
        let tol = |key: Option<&str>, op: Option<&str>, value: Option<&str>, effect: Option<&str>| Toleration {
            key: key.map(Into::into),
            operator: op.map(Into::into),
            value: value.map(Into::into),
            effect: effect.map(Into::into),
            toleration_seconds: None,
        };
        let cases = [
            ("Equal with the value", tol(Some("k"), Some("Equal"), Some("v"), Some("NoExecute")), true),
            ("Equal is the default operator", tol(Some("k"), None, Some("v"), None), true),
            ("Equal with another value", tol(Some("k"), Some("Equal"), Some("w"), None), false),
            ("Exists ignores the value", tol(Some("k"), Some("Exists"), None, None), true),
            ("another key", tol(Some("j"), Some("Exists"), None, None), false),
            ("another effect", tol(Some("k"), Some("Exists"), None, Some("NoSchedule")), false),
            ("empty key with Exists", tol(None, Some("Exists"), None, None), true),
            ("unknown operator", tol(Some("k"), Some("Lt"), Some("v"), None), false),
        ];
        for (what, toleration, want) in cases {
            assert_eq!(tolerates(&toleration, &t), want, "{what}");
        }
    }
}
